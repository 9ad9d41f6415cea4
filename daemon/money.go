package daemon

import (
	"context"
	"time"

	"github.com/tollgatehq/tollgate/internal/checkout"
	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testclock"
)

// moneyPath is the daemon's money path: the rails, the billing engine and
// checkout, built once per server.
type moneyPath struct {
	testRail *rail.Test
	live     rail.Rail
	biller   *subscriptions.Biller
	checkout checkout.Env
}

func (s *Server) newMoney() *moneyPath {
	m := &moneyPath{testRail: rail.NewTest(s.db), live: s.cfg.LiveRail}
	m.biller = &subscriptions.Biller{DB: s.db, Rail: m.railFor, Clock: s.cfg.Clock,
		Policy: subscriptions.Policy{Dunning: s.cfg.DunningSchedule, UsageGrace: s.cfg.UsageGrace}}
	m.checkout = checkout.Env{DB: s.db, Rail: m.railFor, Clock: s.cfg.Clock.Now, UsageGrace: s.cfg.UsageGrace, BaseURL: s.baseURL,
		Writers: checkout.NewWriters(s.db)}
	if s.cfg.Environment != "any" {
		m.checkout.Only = tenant.Mode(s.cfg.Environment)
	}
	return m
}

// railFor is the rail of a mode: the simulated rail in test mode, the
// on-chain rail in live mode once configured.
func (m *moneyPath) railFor(mode tenant.Mode) (rail.Rail, bool) {
	if mode == tenant.Test {
		return m.testRail, true
	}
	return m.live, m.live != nil
}

// billingJob is the subscription billing engine as a job of the runner.
func (s *Server) catchUps() []testclock.CatchUp {
	return []testclock.CatchUp{
		s.money.biller.CatchUp,
		func(ctx context.Context, sc tenant.Scope, upTo time.Time) error {
			_, err := credits.SweepScope(ctx, s.db, sc, upTo)
			return err
		},
	}
}
