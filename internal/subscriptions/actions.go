package subscriptions

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	"github.com/tollgatehq/tollgate/internal/entitlements"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wallet"
)

// action is what the engine does to one due subscription: an optional
// charge, and the state, events and entitlement change that follow from
// its outcome.
type action struct {
	x      Subscription // as claimed
	at     time.Time    // when it falls due: the time its writes and events carry
	charge *charge
	// after is the state when the charge succeeds, or when there is none.
	after  Subscription
	events []string // emitted when the charge succeeds, or when there is none
	follow string   // entitlement state to follow, or ""
	// final marks a metered subscription's last period: it ends whatever
	// the charge's outcome.
	final bool

	result  *rail.Settlement
	payment *payments.Payment
	// next is the plan a pending change moves the subscription to as its
	// next period starts (change_apply.go), or nil.
	next *plans.Plan
}

// charge is a rail charge an action makes.
type charge struct {
	key        string
	amount     money.Amount
	lines      json.RawMessage
	start, end time.Time
}

// pendingRecheck is how soon a charge the rail has not settled yet is asked
// about again.
const pendingRecheck = 15 * time.Second

// chargeKey identifies a charge of a period: the subscription, the period's
// start and the attempt (0 for the first, n for the n-th dunning retry).
func chargeKey(x Subscription, start time.Time, attempt int) string {
	return fmt.Sprintf("chg:%s:%d:%d", x.ID, start.UnixMicro(), attempt)
}

// decide plans the action due on x. q is the usage of a metered period;
// next, the plan of a pending change that takes effect with the next
// period, or nil.
func (b *Biller) decide(x Subscription, q *big.Int, next *plans.Plan) (*action, error) {
	t := *x.NextActionAt
	a := &action{x: x, at: t, after: x}
	cancelled := x.CancelAt != nil && !x.CancelAt.After(t)
	switch {
	case !x.Live():
		a.after.NextActionAt = nil
	case x.Status == Active && x.Metered():
		start, end := *x.CurrentPeriodStart, *x.CurrentPeriodEnd
		rated, lines, err := rate(x, q)
		if err != nil {
			return nil, err
		}
		amount, lines, err := a.discount(x.PeriodIndex, rated, lines)
		if err != nil {
			return nil, err
		}
		a.final = x.CancelAt != nil && !x.CancelAt.After(end)
		if a.final {
			a.expire(*x.CancelAt)
		} else {
			a.adopt(next)
			a.roll()
			next := a.after.CurrentPeriodEnd.Add(b.Policy.UsageGrace)
			a.after.NextActionAt = &next
		}
		if amount > 0 {
			a.charge = &charge{key: chargeKey(x, start, 0), amount: amount, lines: lines, start: start, end: end}
		}
		if rated > 0 && !a.final {
			// A charge discounted to zero moves nothing; the period renews
			// all the same.
			a.events = []string{events.SubscriptionRenewed}
		}
	case cancelled:
		a.expire(*x.CancelAt)
	case x.Status == Trialing:
		if err := b.decideTrial(a, next); err != nil {
			return nil, err
		}
	case x.Status == Active:
		a.adopt(next)
		a.roll()
		next := *a.after.CurrentPeriodEnd
		a.after.NextActionAt = &next
		amount, lines, err := a.discount(a.after.PeriodIndex, *a.after.Amount, nil)
		if err != nil {
			return nil, err
		}
		if amount > 0 {
			a.charge = &charge{key: chargeKey(x, *a.after.CurrentPeriodStart, 0), amount: amount, lines: lines,
				start: *a.after.CurrentPeriodStart, end: *a.after.CurrentPeriodEnd}
		}
		a.events = []string{events.SubscriptionRenewed}
	default: // past due: retry the outstanding charge
		a.charge = &charge{key: chargeKey(x, *x.OutstandingStart, x.Retries+1), amount: *x.OutstandingAmount,
			lines: x.OutstandingLines, start: *x.OutstandingStart, end: *x.OutstandingEnd}
		a.after.Status, a.after.FailedAt, a.after.Retries = Active, nil, 0
		a.after.OutstandingAmount, a.after.OutstandingLines, a.after.OutstandingStart, a.after.OutstandingEnd = nil, nil, nil, nil
		next := *x.CurrentPeriodEnd
		if x.Metered() {
			next = next.Add(b.Policy.UsageGrace)
		}
		a.after.NextActionAt = &next
		a.events, a.follow = []string{events.SubscriptionRenewed}, entitlements.FollowActive
	}
	if n := a.after.NextActionAt; n != nil && n.Before(t) {
		// Periods that ended while the subscription was past due are
		// charged one after another at once, each stamped with this
		// time: never before an event already emitted.
		a.after.NextActionAt = &t
	}
	return a, nil
}

// inOrder returns the leading actions (claimed oldest due first) that can
// run now without any event coming out of time order: those due no later
// than the earliest time one of them can make its subscription due again.
// A monthly subscription expiring on the 27th waits while a weekly one
// renews on the 11th, 18th and 25th. The first action is always taken,
// since no action makes its subscription due before its own time.
func (b *Biller) inOrder(actions []*action) []*action {
	horizon := b.nextDue(actions[0])
	for _, a := range actions[1:] {
		if n := b.nextDue(a); n.Before(horizon) {
			horizon = n
		}
	}
	n := 0
	for n < len(actions) && !actions[n].at.After(horizon) {
		n++
	}
	return actions[:n]
}

// nextDue is the earliest the subscription can fall due again after a,
// whatever the charge's outcome (see outcome); far in the future when it
// cannot.
func (b *Biller) nextDue(a *action) time.Time {
	next := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	earlier := func(t time.Time) {
		if t.Before(next) {
			next = t
		}
	}
	if a.after.NextActionAt != nil {
		earlier(*a.after.NextActionAt)
	}
	if a.charge == nil {
		return next
	}
	if rl, ok := b.Rail(a.x.Mode); !ok || !isLocal(rl) {
		// A rail outside the database may answer pending.
		earlier(a.at.Add(pendingRecheck))
	}
	switch {
	case a.final:
	case a.x.Status == Active || a.x.Status == Trialing:
		earlier(a.at.Add(b.Policy.Dunning[0]))
	case a.x.FailedAt != nil && a.x.Retries+1 < len(b.Policy.Dunning):
		earlier(a.x.FailedAt.Add(b.Policy.Dunning[a.x.Retries+1]))
	}
	return next
}

func isLocal(rl rail.Rail) bool {
	_, ok := rl.(rail.Local)
	return ok
}

// roll moves the planned state to the next period.
func (a *action) roll() {
	a.after.PeriodIndex++
	start, end := a.after.period(a.after.PeriodIndex)
	a.after.CurrentPeriodStart, a.after.CurrentPeriodEnd = &start, &end
}

// expire plans the end of the subscription at `at`.
func (a *action) expire(at time.Time) {
	a.after.Status, a.after.EndedAt, a.after.NextActionAt = Expired, &at, nil
	a.events, a.follow = []string{events.SubscriptionExpired}, entitlements.FollowExpired
}

// settle makes the batch's charges on the rail of their mode, retrying
// transient failures with the same keys.
func (b *Biller) settle(ctx context.Context, actions []*action) error {
	byMode := map[string][]*action{}
	for _, a := range actions {
		if a.charge != nil {
			byMode[string(a.x.Mode)] = append(byMode[string(a.x.Mode)], a)
		}
	}
	for _, as := range byMode {
		rl, ok := b.Rail(as[0].x.Mode)
		if !ok {
			return fmt.Errorf("no settlement rail for %s mode", as[0].x.Mode)
		}
		reqs := make([]rail.Request, len(as))
		payees := map[tenant.Scope]string{}
		for i, a := range as {
			s := a.x.Scope()
			payee, ok := payees[s]
			if !ok {
				// The merchant's wallet now: a test-mode renewal pays the
				// wallet on file (or the generated one). A live charge
				// pays the payee its signed plan names, whatever this says.
				w, _, err := wallet.Get(ctx, b.DB, s)
				if err != nil {
					return err
				}
				payee, payees[s] = w.Address, w.Address
			}
			reqs[i] = rail.Request{Scope: s, Kind: rail.Charge, Key: a.charge.key, Nonce: deref(a.x.AuthorizationKey),
				Payer: deref(a.x.Payer), Payee: payee, Amount: a.charge.amount, At: a.at}
		}
		var ss []rail.Settlement
		var err error
		for attempt := 0; attempt < 5; attempt++ {
			if ss, err = rl.Settle(ctx, reqs); err == nil || !rail.IsTransient(err) {
				break
			}
		}
		if err != nil {
			return err
		}
		for i, a := range as {
			st := ss[i]
			a.result = &st
		}
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// outcome applies the charge's result to the planned state.
func (b *Biller) outcome(a *action) {
	if a.charge == nil || a.result == nil {
		return
	}
	st := *a.result
	switch {
	case st.Status == rail.Pending:
		// Not final yet (awaiting confirmations on a chain): nothing
		// changes; the same charge is asked about again shortly, under the
		// same key, until it is final.
		a.after = a.x
		next := a.at.Add(pendingRecheck)
		if now := b.Clock.Now(); next.Before(now) {
			next = now.Add(pendingRecheck)
		}
		a.after.NextActionAt = &next
		a.events, a.follow = nil, ""
	case st.Status == rail.Succeeded:
		p := payments.FromSettlement(a.x.Scope(), st)
		start, end := a.charge.start, a.charge.end
		p.SubscriptionID, p.CustomerID, p.PeriodStart, p.PeriodEnd, p.Lines = &a.x.ID, a.x.CustomerID, &start, &end, a.charge.lines
		a.payment = &p
		a.after.LatestPaymentID = &p.ID
	case st.Reason == rail.AuthorizationRevoked:
		at := a.at
		a.after = a.x
		a.after.Status, a.after.EndedAt, a.after.NextActionAt = Revoked, &at, nil
		a.events, a.follow = []string{events.SubscriptionRevoked}, entitlements.FollowRevoked
	case a.final:
		a.events = []string{events.SubscriptionPaymentFailed, events.SubscriptionExpired}
	case a.x.Status == Active || a.x.Status == Trialing:
		// The renewal (or a trial's first charge) failed: dunning begins.
		// A licensed period stays rolled (it is the one being collected).
		at := a.at
		amount := a.charge.amount
		start, end := a.charge.start, a.charge.end
		a.after.Status, a.after.FailedAt, a.after.Retries = PastDue, &at, 0
		a.after.OutstandingAmount, a.after.OutstandingLines, a.after.OutstandingStart, a.after.OutstandingEnd = &amount, a.charge.lines, &start, &end
		a.after.LatestPaymentID = a.x.LatestPaymentID
		next := at.Add(b.Policy.Dunning[0])
		a.after.NextActionAt = &next
		a.events, a.follow = []string{events.SubscriptionPaymentFailed}, entitlements.FollowGrace
	default:
		// A retry failed: the next one, or the end of dunning.
		a.after = a.x
		k := a.x.Retries + 1
		a.after.Retries = k
		if k >= len(b.Policy.Dunning) {
			at := a.at
			a.after.Status, a.after.EndedAt, a.after.NextActionAt = Canceled, &at, nil
			a.events, a.follow = []string{events.SubscriptionDunningExhausted}, entitlements.FollowRevoked
			return
		}
		next := a.x.FailedAt.Add(b.Policy.Dunning[k])
		a.after.NextActionAt = &next
		a.events, a.follow = nil, ""
	}
}

// graceUntil is when a past-due subscription's entitlements lapse: its last
// retry.
func (b *Biller) graceUntil(x Subscription) time.Time {
	if x.FailedAt == nil {
		return time.Time{}
	}
	return x.FailedAt.Add(b.Policy.Dunning[len(b.Policy.Dunning)-1])
}

// record writes the batch's outcomes: payments, subscriptions, events and
// entitlement changes, each kind in one statement where it matters.
func (b *Biller) record(ctx context.Context, tx *store.Tx, actions []*action) error {
	var pays []payments.Payment
	for _, a := range actions {
		b.outcome(a)
		if a.payment != nil {
			pays = append(pays, *a.payment)
		}
	}
	if err := payments.InsertMany(ctx, tx, pays); err != nil {
		return err
	}
	changed, err := b.applyChanges(ctx, tx, actions)
	if err != nil {
		return err
	}
	saved, err := saveMany(ctx, tx, actions)
	if err != nil {
		return err
	}
	var evs []events.Pending
	for _, a := range actions {
		x := saved[a.x.ID]
		if changed[a.x.ID] {
			evs = append(evs, events.Pending{Scope: x.Scope(), Type: events.SubscriptionUpdated, At: a.at, Data: x.Wire()})
		}
		for _, typ := range a.events {
			evs = append(evs, events.Pending{Scope: x.Scope(), Type: typ, At: a.at, Data: x.Wire()})
		}
		if a.follow != "" {
			at := a.at
			if a.follow == entitlements.FollowExpired && x.EndedAt != nil {
				at = *x.EndedAt
			}
			if err := entitlements.FollowSubscription(ctx, tx, x.Scope(), x.ID, a.follow, at, b.graceUntil(x)); err != nil {
				return err
			}
		}
	}
	return events.EmitMany(ctx, tx, evs)
}
