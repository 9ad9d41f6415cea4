package credits_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/credits"
)

// Domain-level debit throughput on a fresh database, 16 concurrent callers
// (8 per core at GOMAXPROCS=2): through the Batcher, as the daemon debits,
// and one by one, each debit its own transaction through credits.Debit.
// Run with
//
//	go test -run '^$' -bench Debit -benchtime 5s ./internal/credits/
//
// debits/s is the figure to read; ns/op is its inverse.

func BenchmarkDebitSingleAccount(b *testing.B) { benchDebits(b, 1, true) }

func BenchmarkDebit1000Accounts(b *testing.B) { benchDebits(b, 1000, true) }

func BenchmarkDebitOneByOneSingleAccount(b *testing.B) { benchDebits(b, 1, false) }

func BenchmarkDebitOneByOne1000Accounts(b *testing.B) { benchDebits(b, 1000, false) }

func benchDebits(b *testing.B, accounts int, batched bool) {
	f := setup(b)
	now := time.Now()
	ids := make([]string, accounts)
	for i := range ids {
		ids[i] = f.customer(fmt.Sprintf("bench-%d", i))
	}
	// Two grants each, one expiring, so a debit may touch two; granted
	// from several goroutines, so the Batcher funds many accounts a commit.
	exp := now.Add(24 * time.Hour)
	var wg sync.WaitGroup
	for w := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(ids); i += 16 {
				for _, e := range []*time.Time{&exp, nil} {
					if _, err := f.grant(credits.GrantInput{Customer: ref(ids[i]), Amount: 1 << 40, ExpiresAt: e}, now); err != nil {
						b.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	// Fresh tables have no statistics; a deployment's would.
	if _, err := f.db.Exec(`ANALYZE`); err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(rand.Uint64(), 0))
		for pb.Next() {
			cus := ids[rng.IntN(len(ids))]
			in, now := credits.DebitInput{Customer: ref(cus), Amount: 1000}, time.Now()
			var err error
			if batched {
				_, err = f.debit(in, now)
			} else {
				_, err = credits.Debit(f.ctx, f.db, f.s, in, now)
			}
			if err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "debits/s")
}
