package daemon_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// The figure of plan changes (issue 23), rerun with:
//
//	go test ./daemon -run '^$' -bench 'PlanChangeNow' -benchtime 500x
//
// With 16 clients, b.N plan checkouts of Pro (each a new customer: a
// subscription and its first payment), timed; then, untimed, each moves to
// Basic at once; then b.N immediate upgrades back to Pro, timed (each a
// proration charged on the test rail, a payment, the features switched and
// subscription.updated). It reports both rates and their ratio, changes ÷
// checkouts: the machine is shared, so compare within one run.
func BenchmarkPlanChangeNow(b *testing.B) {
	f := setupMoney(b, func(c *daemon.Config) { c.RateLimits = false })
	pro, basic := f.planPair()
	subs := make([]string, b.N)
	run := func(do func(i int) error) time.Duration {
		var next atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := int(next.Add(1)) - 1; i < b.N; i = int(next.Add(1)) - 1 {
					if err := do(i); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		return time.Since(start)
	}
	b.ResetTimer()
	checkouts := run(func(i int) error {
		res, err := f.c.Pay(f.ctx, pro.ID, client.CheckoutParams{Payer: rail.WalletSucceeds, ExternalCustomerID: fmt.Sprintf("bench_%d", i)})
		if err == nil {
			subs[i] = res.Subscription.ID
		}
		return err
	})
	b.StopTimer()
	run(func(i int) error {
		_, err := f.c.ChangeSubscription(f.ctx, subs[i], client.ChangeParams{Plan: basic.ID, At: "now"})
		return err
	})
	b.StartTimer()
	changes := run(func(i int) error {
		_, err := f.c.ChangeSubscription(f.ctx, subs[i], client.ChangeParams{Plan: pro.ID, At: "now"})
		return err
	})
	b.StopTimer()
	cRate, chRate := float64(b.N)/checkouts.Seconds(), float64(b.N)/changes.Seconds()
	b.ReportMetric(cRate, "checkouts/s")
	b.ReportMetric(chRate, "changes/s")
	b.ReportMetric(chRate/cRate, "changes/checkouts")
}
