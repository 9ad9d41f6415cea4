package daemon_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// Debit and grant throughput through the HTTP API: a daemon on loopback
// with rate limits off, 16 concurrent clients (8 per core at GOMAXPROCS=2)
// sending POST /v1/credit_debits or /v1/credit_grants through client/ over
// kept-alive connections. Run with
//
//	go test -run '^$' -bench 'Credit(Debits|Grants)HTTP' -benchtime 5s ./daemon/
//
// debits/s or grants/s is the figure to read.

func BenchmarkCreditDebitsHTTPSingleAccount(b *testing.B) { benchHTTPCredits(b, 1, false) }

func BenchmarkCreditDebitsHTTP1000Accounts(b *testing.B) { benchHTTPCredits(b, 1000, false) }

// Grants to funded accounts, as above: a grant reads the account and
// writes an entry, a remainder and its event, and draws on nothing.
func BenchmarkCreditGrantsHTTP1000Accounts(b *testing.B) { benchHTTPCredits(b, 1000, true) }

func benchHTTPCredits(b *testing.B, accounts int, grants bool) {
	ctx := context.Background()
	db, err := store.Open(ctx, testdb.New(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	cfg := daemon.Defaults()
	cfg.Listen, cfg.RateLimits = "127.0.0.1:0", false
	d, err := daemon.Start(cfg, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Shutdown(ctx) })
	m, err := auth.CreateMerchant(ctx, db, "bench")
	if err != nil {
		b.Fatal(err)
	}
	_, key, err := auth.CreateKey(ctx, db, m.ID, tenant.Test)
	if err != nil {
		b.Fatal(err)
	}
	scope := tenant.Scope{MerchantID: m.ID, Mode: tenant.Test}
	ids := make([]string, accounts)
	now := time.Now()
	// Accounts are made at the domain level: only the debits are measured.
	err = db.InTx(ctx, func(tx *store.Tx) error {
		for i := range ids {
			ext := fmt.Sprintf("bench-%d", i)
			g, err := credits.GrantTx(ctx, tx, scope, credits.GrantInput{Customer: customers.Ref{ExternalID: &ext}, Amount: 1 << 40}, now)
			if err != nil {
				return err
			}
			ids[i] = g.CustomerID
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	// Fresh tables have no statistics; a deployment's would.
	if _, err := db.Exec(`ANALYZE`); err != nil {
		b.Fatal(err)
	}
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	c := client.New(d.URL, key, client.WithHTTPClient(hc), client.WithMaxRetries(0))
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(rand.Uint64(), 0))
		for pb.Next() {
			var err error
			if grants {
				_, err = c.GrantCredits(ctx, client.CreditGrantParams{Amount: "1000", CustomerID: ids[rng.IntN(len(ids))]})
			} else {
				_, err = c.DebitCredits(ctx, client.CreditDebitParams{Amount: "1000", CustomerID: ids[rng.IntN(len(ids))]})
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	unit := "debits/s"
	if grants {
		unit = "grants/s"
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit)
}
