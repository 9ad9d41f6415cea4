package daemon_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// Two daemons on one database, both running the billing job, both told to
// advance the clock through 20 trials' notices and then their ends at the
// same moment: each trial gets subscription.trial_will_end once and its
// first charge once, since every action is claimed in the database.
func TestTrialWillEndOnceAcrossReplicas(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	other, err := daemon.Start(func() daemon.Config {
		cfg := daemon.Defaults()
		cfg.Listen = "127.0.0.1:0"
		return cfg
	}(), f.db, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = other.Shutdown(ctx)
	})
	c2 := client.New(other.URL, f.key, client.WithMaxRetries(0))

	p := f.trialPlan(10)
	const n = 20
	var start time.Time
	for i := range n {
		x := f.subscribe(p.ID, rail.WalletSucceeds, fmt.Sprintf("u_%d", i))
		if i == 0 {
			start = x.CreatedAt
		}
	}
	// Both advance by 6h at once, so each round two catch-ups race over
	// the same due trials (and the two billing jobs poll meanwhile).
	for now := start; now.Before(start.Add(11 * 24 * time.Hour)); {
		var wg sync.WaitGroup
		errs := make([]error, 2)
		clocks := make([]*client.TestClock, 2)
		for i, c := range []*client.Client{f.c, c2} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				clocks[i], errs[i] = c.AdvanceTestClock(f.ctx, client.TestClockAdvanceParams{By: "6h"})
			}()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
			if clocks[i].Now.After(now) {
				now = clocks[i].Now
			}
		}
	}
	var notices, actives, pays int
	if err := f.db.Get(&notices, `SELECT count(*) FROM events WHERE merchant_id = $1 AND type = 'subscription.trial_will_end'`, f.m); err != nil {
		t.Fatal(err)
	}
	if err := f.db.Get(&actives, `SELECT count(DISTINCT data->>'id') FROM events WHERE merchant_id = $1 AND type = 'subscription.active'
		AND data->>'status' = 'active'`, f.m); err != nil {
		t.Fatal(err)
	}
	if err := f.db.Get(&pays, `SELECT count(*) FROM payments WHERE merchant_id = $1`, f.m); err != nil {
		t.Fatal(err)
	}
	if notices != n || actives != n || pays != n {
		t.Fatalf("%d notices, %d started, %d first charges; want %d of each", notices, actives, pays, n)
	}
}
