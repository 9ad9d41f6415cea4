package chainrail

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/money"
)

// A live plan change above what the payer authorized on chain. A
// PlanManager plan's cap cannot be raised, so the payer signs a new plan
// (the new amount as its cap) and a new bounded permit, exactly as at
// checkout (PlanTerms), and the relayer activates it with the change's
// proration as its first charge (nothing for a change at period end), in
// one transaction: either the new plan is active and the proration paid,
// or nothing happened. Once that activation is confirmed the settlement
// worker records the change (Recorder.Changed): the subscription draws on
// the new plan from then on, and tollgate never charges the old one again
// (the payer may still revoke it; the permit bounds what all their plans
// can draw together).
//
// The new plan's periods are laid on the subscription's: its start is set
// so that a contract period begins shortly before the subscription's next
// renewal (renewalMargin before it) and the proration falls in the contract
// period before that one. The renewal then finds a fresh period with the
// whole cap, and each later renewal, at least one contract period after
// the one before, another. A change in the last two minutes of a period is
// refused (changeWindow): its activation might not land before the
// renewal.

// PlanChange is the subscription change a re-authorization carries: the
// subscription, when the change takes effect (now or period_end), and the
// time its proration (the activation's first charge) was computed at.
type PlanChange struct {
	SubscriptionID string    `json:"subscription_id"`
	At             string    `json:"at"`
	Effective      time.Time `json:"effective"`
}

// renewalMargin is how long before the subscription's renewal the new
// plan's contract period begins: room for the chain's clock and the
// billing engine's to differ.
const renewalMargin = time.Hour

// submitSlack is how long a signed change may take to be mined and still
// have its proration land before the renewal's contract period.
const submitSlack = time.Minute

// changeStart is the start of a changed plan whose subscription renews
// until after head (both in chain seconds): a contract period boundary at
// the renewal less the margin (or a quarter of the time left, when less is
// left), and the latest such start not after head.
func changeStart(head, until, period uint64) uint64 {
	margin := min(uint64(renewalMargin/time.Second), until/4)
	boundary := head + until - margin
	k := max(1, (boundary-head+period-1)/period)
	if boundary < k*period {
		return 0
	}
	return boundary - k*period
}

// ChangeTerms returns what a subscriber signs to move to a plan above what
// they authorized: PlanTerms for the new cap, with the plan's start laid
// on the subscription's periods (untilRenewal is the time left before its
// next renewal).
func (r *Rail) ChangeTerms(ctx context.Context, payer, payee common.Address, capPerPeriod money.Amount, periodSeconds uint64,
	untilRenewal time.Duration) (PlanTerms, error) {
	if err := changeWindow(untilRenewal); err != nil {
		return PlanTerms{}, err
	}
	until := uint64(untilRenewal / time.Second)
	return r.planTerms(ctx, payer, payee, capPerPeriod, periodSeconds, func(head uint64) uint64 {
		return changeStart(head, until, periodSeconds)
	})
}

// CheckChangePlan checks a changed plan posted back by a page against the
// terms ChangeTerms offers: payee, token, cap, period and end exactly, and
// a start by which the proration, mined within submitSlack, falls in an
// earlier contract period than the renewal untilRenewal away. It fails
// with invalid_request naming the field.
func (r *Rail) CheckChangePlan(ctx context.Context, p chain.Plan, payee common.Address, capPerPeriod money.Amount, periodSeconds uint64,
	untilRenewal time.Duration) error {
	if err := changeWindow(untilRenewal); err != nil {
		return err
	}
	if err := r.checkTerms(p, payee, capPerPeriod, periodSeconds); err != nil {
		return err
	}
	head, err := r.b.HeaderByNumber(ctx, nil)
	if err != nil {
		return fmt.Errorf("latest block: %w", err)
	}
	now := new(big.Int).SetUint64(head.Time)
	if !p.Start.IsUint64() || p.Start.Cmp(now) > 0 {
		return apperr.Field("plan.start", "must not be after the latest block's time (%s)", now)
	}
	start, period := p.Start.Uint64(), periodSeconds
	mined := head.Time + uint64(submitSlack/time.Second)
	renewal := head.Time + uint64(untilRenewal/time.Second)
	if (mined-start)/period >= (renewal-start)/period {
		return apperr.Field("plan.start", "must put the renewal in a later contract period than the change: sign the terms again")
	}
	return nil
}

// changeWindow refuses a change whose subscription renews too soon for
// the new plan's activation to land before the renewal.
func changeWindow(untilRenewal time.Duration) error {
	if untilRenewal < 2*submitSlack {
		return apperr.Field("at", "the current period ends in less than %s: authorize the new plan once the subscription has renewed", 2*submitSlack)
	}
	return nil
}

// ChangeKey is the rail key of a re-authorization: the subscription and
// the signed plan's id, so posting the same signed plan again finds its
// first activation.
func (r *Rail) ChangeKey(ctx context.Context, subscriptionID string, p chain.Plan) (string, error) {
	if r.plans == nil {
		return "", noPlanManager()
	}
	d, err := r.plans.Domain(ctx)
	if err != nil {
		return "", err
	}
	id, err := chain.Digest(chain.PlanTypedData(d, p))
	if err != nil {
		return "", apperr.Field("plan", "cannot be hashed: %s", err)
	}
	return "act:" + subscriptionID + ":" + strings.ToLower(id.Hex()), nil
}

// subscriptionOf is the subscription a re-authorization row changes ("" for
// any other row).
func subscriptionOf(w row) string {
	var sub subject
	if json.Unmarshal(w.Subject, &sub) != nil || sub.PlanChange == nil {
		return ""
	}
	return sub.SubscriptionID
}
