package checkout

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// The locked path (a rail that settles in the payment's transaction)
// records the payment with the statement the group commit writes with, a
// batch of one, and leaves what the group path leaves: the invoice paid,
// the payment, one settlement, invoice.paid and its delivery. Each path
// runs on a pool of its own, so the statements traced on it (each is
// traced when first prepared or run) are those the path sent.
func TestLockedPayWritesTheGroupStatement(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testdb.New(t)
	open := func(trace func(string)) *store.DB {
		db, err := store.OpenConfig(ctx, url, store.Config{Trace: trace})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	db := open(nil)
	m, err := auth.CreateMerchant(ctx, db, "locked")
	if err != nil {
		t.Fatal(err)
	}
	s := tenant.Scope{MerchantID: m.ID, Mode: tenant.Test}
	if _, err := db.ExecContext(ctx, `INSERT INTO webhook_endpoints (merchant_id, mode, id, url, secret)
		VALUES ($1, 'test', 'we_locked', 'https://hooks.example.com/a', 's')`, m.ID); err != nil {
		t.Fatal(err)
	}
	// One instant for both, so only ids differ.
	now := time.Date(2026, 5, 1, 12, 0, 0, 123456000, time.UTC)
	env := func(db *store.DB, w *Writers) Env {
		r := rail.NewTest(db)
		return Env{DB: db, Clock: func() time.Time { return now }, BaseURL: "http://pay.test", Writers: w,
			Rail: func(mode tenant.Mode) (rail.Rail, bool) { return r, mode == tenant.Test }}
	}
	var invs [2]invoices.Invoice
	for i := range invs {
		if invs[i], err = invoices.Create(ctx, db, s, invoices.Input{Amount: 7000000, Description: "locked"}, now); err != nil {
			t.Fatal(err)
		}
	}
	var lockedRan, groupRan testdb.Statements
	lockedDB, groupDB := open(lockedRan.Record), open(groupRan.Record)
	in := Input{Payer: rail.WalletSucceeds}
	lp, linv, err := env(lockedDB, nil).PayInvoice(ctx, invs[0].ID, in)
	if err != nil {
		t.Fatal(err)
	}
	_, gp, ginv, done, err := env(groupDB, NewWriters(groupDB)).payInvoiceFast(ctx, invs[1].ID, in)
	if !done || err != nil {
		t.Fatalf("group path: done %v, %v", done, err)
	}

	writes := func(ran *testdb.Statements) []string {
		var out []string
		for _, q := range ran.All() {
			if strings.Contains(q, "INSERT INTO payments") || strings.Contains(q, "UPDATE invoices") || strings.Contains(q, "INSERT INTO events") {
				out = append(out, q)
			}
		}
		return out
	}
	lw, gw := writes(&lockedRan), writes(&groupRan)
	if len(lw) != 1 || len(gw) != 1 || lw[0] != gw[0] {
		t.Fatalf("the locked path wrote with %d statements, the group path with %d; want the same one:\n%s\n---\n%s",
			len(lw), len(gw), strings.Join(lw, "\n---\n"), strings.Join(gw, "\n---\n"))
	}

	// What each path answered and left, ids and row order aside.
	answered := func(p payments.Payment, inv invoices.Invoice) string {
		b, err := json.Marshal([]any{p.Wire(), inv.Wire("http://pay.test")})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if a, b := normalized(answered(lp, linv)), normalized(answered(gp, ginv)); a != b {
		t.Fatalf("answers differ:\nlocked %s\ngroup  %s", a, b)
	}
	if a, b := rowsOf(t, db, s, invs[0].ID), rowsOf(t, db, s, invs[1].ID); a != b {
		t.Fatalf("rows differ:\nlocked %s\ngroup  %s", a, b)
	}
}

// ids matches the ids and tx hashes that differ between two payments.
var ids = regexp.MustCompile(`\b(inv|pay|evt|dlv)_[0-9A-Za-z]+|0x[0-9a-f]{64}`)

func normalized(s string) string {
	return ids.ReplaceAllStringFunc(s, func(id string) string {
		if strings.HasPrefix(id, "0x") {
			return "0x"
		}
		return id[:3]
	})
}

// rowsOf is what paying the invoice wrote, as JSON with ids replaced by
// their kind, and the columns the database fills on insert (seq, and the
// instant a row was written) dropped.
func rowsOf(t *testing.T, db *store.DB, s tenant.Scope, invoiceID string) string {
	t.Helper()
	var out string
	err := db.GetContext(context.Background(), &out, `SELECT jsonb_build_object(
			'invoice', (SELECT to_jsonb(i) - 'seq' FROM invoices i WHERE i.merchant_id = $1 AND i.id = $2),
			'payments', (SELECT jsonb_agg(to_jsonb(p) - 'seq') FROM payments p WHERE p.merchant_id = $1 AND p.invoice_id = $2),
			'settlements', (SELECT jsonb_agg(to_jsonb(r) - 'created_at') FROM rail_settlements r WHERE r.merchant_id = $1 AND r.nonce = $2),
			'events', (SELECT jsonb_agg(to_jsonb(e) - '{seq,created_at}'::text[]) FROM events e WHERE e.merchant_id = $1 AND e.data->>'id' = $2),
			'deliveries', (SELECT jsonb_agg(to_jsonb(d) - '{seq,created_at,updated_at,next_attempt_at,event_created_at}'::text[]) FROM webhook_deliveries d
				JOIN events e ON e.merchant_id = d.merchant_id AND e.id = d.event_id WHERE d.merchant_id = $1 AND e.data->>'id' = $2)
		)::text`, s.MerchantID, invoiceID)
	if err != nil {
		t.Fatal(err)
	}
	return normalized(out)
}
