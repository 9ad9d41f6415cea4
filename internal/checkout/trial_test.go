package checkout

import (
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
)

// shape is what two checkouts of one plan must share whatever path they
// took: everything but ids, keys and the instants themselves.
type shape struct {
	Status, Events                 string
	Period, NextIn, TrialIn, PayIn time.Duration
	Paid                           string
	Payment                        bool
}

func (f *fixture) shapeOf(t *testing.T, x subscriptions.Subscription) shape {
	t.Helper()
	s := shape{Status: x.Status, Period: x.CurrentPeriodEnd.Sub(*x.CurrentPeriodStart), NextIn: x.NextActionAt.Sub(x.CreatedAt),
		Payment: x.LatestPaymentID != nil}
	if x.TrialEnd != nil {
		s.TrialIn = x.TrialEnd.Sub(x.CreatedAt)
	}
	if s.Payment {
		var pay struct {
			Amount string    `db:"amount"`
			Start  time.Time `db:"period_start"`
		}
		if err := f.db.GetContext(f.ctx, &pay, `SELECT amount::text AS amount, period_start FROM payments WHERE id = $1`, *x.LatestPaymentID); err != nil {
			t.Fatal(err)
		}
		s.Paid, s.PayIn = pay.Amount, pay.Start.Sub(x.CreatedAt)
	}
	if err := f.db.GetContext(f.ctx, &s.Events, `SELECT string_agg(type, ',' ORDER BY occurred_at, seq) FROM events
		WHERE merchant_id = $1 AND data->>'id' = $2`, f.s.MerchantID, x.ID); err != nil {
		t.Fatal(err)
	}
	return s
}

// The fast path (two statements, group-committed) and the general locked
// path record the same checkout of a plain plan; a trial plan never takes
// the fast path, and both environments record the same trial.
func TestSubscribePathsAgree(t *testing.T) {
	t.Parallel()
	f := setup(t)
	locked := f.env
	locked.Writers = nil
	days := 10
	plain := f.plan(t)
	trial, err := plans.Create(f.ctx, f.db, f.s, plans.Input{Name: "Trial", Amount: 2000000, Interval: "week", TrialDays: &days}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ext := func(s string) Input { return Input{Payer: rail.WalletSucceeds, ExternalCustomerID: &s} }

	_, fast, done, err := f.env.subscribeFast(f.ctx, plain.ID, ext("fast"))
	if !done || err != nil {
		t.Fatalf("fast path: done %v, %v", done, err)
	}
	slow, err := locked.Subscribe(f.ctx, plain.ID, ext("slow"))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := f.shapeOf(t, fast), f.shapeOf(t, slow); a != b || a.Status != subscriptions.Active || a.Paid != "2000000" {
		t.Fatalf("plain plan: fast %+v, locked %+v", a, b)
	}

	if _, _, done, err := f.env.subscribeFast(f.ctx, trial.ID, ext("t1")); done || err != nil {
		t.Fatalf("a trial took the fast path: done %v, %v", done, err)
	}
	if n := f.count(t, "subscriptions"); n != 2 {
		t.Fatalf("the refused fast path wrote: %d subscriptions", n)
	}
	t1, err := f.env.Subscribe(f.ctx, trial.ID, ext("t1"))
	if err != nil {
		t.Fatal(err)
	}
	t2, err := locked.Subscribe(f.ctx, trial.ID, ext("t2"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := f.shapeOf(t, t1), f.shapeOf(t, t2)
	want := shape{Status: subscriptions.Trialing, Events: "subscription.active", Period: 10 * 24 * time.Hour,
		NextIn: 7 * 24 * time.Hour, TrialIn: 10 * 24 * time.Hour}
	if a != b || a != want {
		t.Fatalf("trial: with writers %+v, locked %+v, want %+v", a, b, want)
	}
}
