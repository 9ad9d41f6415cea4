package checkout

import (
	"context"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
)

// A plan checkout the test rail accepts is two statements and no explicit
// transaction, as an invoice payment is (see invoice_fast.go): a read of
// the plan with the customer, the activation index and the terms, then one
// statement that creates the customer if it is new and, only if it then
// has no live subscription to the plan, writes the subscription, the
// activation's settlement, the first payment, subscription.active and its
// deliveries. A customer created meanwhile by another checkout, a live
// subscription (already_subscribed, or this very activation recorded), a
// settlement already in the ledger, a declined wallet, a plan that grants
// features, a live rail: all go the locked way (subscribeTx), nothing
// written. Before: BEGIN, plan, customer read, customer insert, activation
// index, terms, settlement, subscription, payment, event, COMMIT (11 round
// trips); now 2, and under load the write is shared with the checkouts
// that arrived meanwhile (the write and its group commit are the
// subscriptions package's: subscriptions.Activations). A new customer
// of a plan already checked out here is 1: the plan and its merchant's terms
// are cached (planCache), and the write checks that the customer is new and
// the terms current; when not, the checkout reads and writes again.

// planTerms is a plan with what a checkout of it by one customer needs.
type planTerms struct {
	plans.Plan
	// CustomerID is nil when the customer is new.
	CustomerID      *string `db:"customer_id"`
	ActivationIndex int     `db:"activation_index"`
	Wallet          *string `db:"wallet"`
	AheadUS         *int64  `db:"ahead_us"`
}

const planTermsSQL = `SELECT ` + plans.Columns + `, c.id AS customer_id,
		(SELECT count(*) FROM subscriptions x
			WHERE x.merchant_id = p.merchant_id AND x.mode = p.mode AND x.plan_id = p.id AND x.customer_id = c.id) AS activation_index,
		(SELECT w.address FROM settlement_wallets w
			WHERE w.merchant_id = p.merchant_id AND w.mode = p.mode AND w.replaced_at IS NULL) AS wallet,
		(SELECT t.ahead_us FROM test_clocks t WHERE t.merchant_id = p.merchant_id) AS ahead_us
	FROM plans p JOIN products pr ON pr.merchant_id = p.merchant_id AND pr.id = p.product_id
		LEFT JOIN customers c ON c.merchant_id = p.merchant_id AND c.mode = p.mode AND c.external_customer_id = $2
	WHERE p.id = $1`

// subscribeFast checks out a plan in two statements when it can, one when
// the plan and its merchant's terms are cached (see planCache); done=false
// leaves the checkout to the locked path, nothing written.
func (e Env) subscribeFast(ctx context.Context, planID string, in Input) (rail.Settlement, subscriptions.Subscription, bool, error) {
	var res subscriptions.Activated
	var w subscriptions.Activation
	if e.Writers == nil {
		return w.Settlement, w.Sub, false, nil
	}
	for _, cached := range []bool{true, false} {
		var ok bool
		var err error
		if w, ok, err = e.prepareActivation(ctx, planID, in, cached); err != nil || !ok {
			return w.Settlement, w.Sub, err != nil, err
		}
		if res = e.Writers.activations.Write(w); res.Err != nil || res.OK || !w.Guess {
			break
		}
		// The guess was wrong (a known customer, or terms changed):
		// read, and write again.
	}
	if res.Err != nil || !res.OK {
		return w.Settlement, w.Sub, res.Err != nil, res.Err
	}
	return w.Settlement, res.Sub, true, nil
}

// prepareActivation reads what a checkout of the plan needs and decides
// its write; ok=false leaves it to the locked path.
//
// With cached=true and the plan in planCache, nothing is read: the write
// guesses a new customer and the terms last read, and checks both (see
// subscriptions.Activation).
func (e Env) prepareActivation(ctx context.Context, planID string, in Input, cached bool) (w subscriptions.Activation, ok bool, err error) {
	// The payer as both modes normalise it, so the customer can be read
	// with the plan; the plan's mode checks it below.
	ext := externalID(in, strings.ToLower(strings.TrimSpace(in.Payer)))
	if ext == "" || utf8.RuneCountInString(ext) > customers.MaxExternalIDLen {
		return w, false, nil
	}
	cache := e.Writers.plans
	var rows []planTerms
	if t, hit := cache.get(planID); cached && hit {
		rows, w.Guess = []planTerms{t}, true
	} else {
		if err := e.DB.SelectContext(ctx, &rows, planTermsSQL, planID, ext); err != nil {
			return w, false, store.Translate(err)
		}
		if len(rows) == 0 {
			return w, false, nil
		}
		cache.put(rows[0])
	}
	p := rows[0].Plan
	s := p.Scope()
	rl, _ := e.Rail(s.Mode)
	decider, ok := rl.(rail.Deciding)
	if !ok || len(p.Features()) > 0 || p.TrialDays != nil {
		// Features and trials (which look up the customer's history) are
		// the general path's.
		return w, false, nil
	}
	who, err := payer(s, in.Payer)
	if err != nil || externalID(in, who) != ext {
		return w, false, nil
	}
	payee, now, err := e.termsOf(s, nil, rows[0].Wallet, rows[0].AheadUS)
	if err != nil {
		return w, false, nil
	}
	custID, isNew := id.New("cus"), rows[0].CustomerID == nil
	if !isNew {
		custID = *rows[0].CustomerID
	}
	st, ok := decider.Decide(activationOf(s, p, custID, who, rows[0].ActivationIndex, false, payee, now))
	if !ok || st.Status != rail.Succeeded {
		return w, false, nil
	}
	guess := w.Guess
	w, err = subscriptions.PrepareActivation(subscriptions.ActivateInput{Plan: p, CustomerID: custID, Payer: who,
		Activation: st, UsageGrace: e.UsageGrace, Now: st.At})
	w.Settle, w.NewCustomer, w.External = true, isNew, ext
	w.Guess, w.Wallet, w.AheadUS = guess, rows[0].Wallet, rows[0].AheadUS
	return w, err == nil, err
}

// planCache keeps the plans checked out (plans are create-only) with their
// merchant's terms as last read, so a checkout of a known plan by a new
// customer reads nothing: its write checks the terms and the customer
// (subscriptions.Activation's Guess) and, when they were stale, the
// checkout reads and writes again, which refreshes them.
type planCache struct {
	mu    sync.Mutex
	plans map[string]planTerms
}

// maxCachedPlans bounds the cache; past it, it starts again empty.
const maxCachedPlans = 4096

func (c *planCache) get(planID string) (planTerms, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.plans[planID]
	return t, ok
}

// put keeps the plan and its terms from t, not the customer's.
func (c *planCache) put(t planTerms) {
	t.CustomerID, t.ActivationIndex = nil, 0
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.plans) >= maxCachedPlans {
		c.plans = map[string]planTerms{}
	}
	c.plans[t.ID] = t
}
