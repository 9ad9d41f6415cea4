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
	"github.com/tollgatehq/tollgate/internal/wallet"
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
	m.checkout = checkout.Env{DB: s.db, Rail: m.railFor, Now: s.scopeNow, Payee: s.payee, UsageGrace: s.cfg.UsageGrace, BaseURL: s.baseURL}
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

// scopeNow is the time by a merchant's clock, for work that has no request
// (checkout pages are public: no key carries the test clock).
func (s *Server) scopeNow(sc tenant.Scope) time.Time {
	now := s.cfg.Clock.Now()
	if sc.Mode != tenant.Test {
		return now
	}
	ahead, err := testclock.Ahead(context.Background(), s.db, sc.MerchantID)
	if err != nil {
		return now
	}
	return now.Add(ahead)
}

// payee is where a merchant's money settles: the wallet on file, or in test
// mode a generated test wallet no one holds a key for.
func (s *Server) payee(ctx context.Context, sc tenant.Scope) (string, error) {
	return wallet.Payee(ctx, s.db, sc)
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
