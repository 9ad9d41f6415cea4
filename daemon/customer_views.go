package daemon

import (
	"context"

	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/portal"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
)

// What the customer portal and the merchant dashboard both show of a
// customer: its subscriptions' facts, its credit ledger and its
// entitlements, read by the portal's reads (internal/portal) and worded
// once.

// ledgerRows are the customer's newest credit ledger entries, as the
// portal and the merchant dashboard show them.
func (s *Server) ledgerRows(ctx context.Context, o portal.Open) ([]ledgerRow, error) {
	ledger, err := portal.Ledger(ctx, s.db, o)
	var rows []ledgerRow
	for _, e := range ledger {
		what := map[string]string{"grant": "Granted", "debit": "Used", "expiry": "Expired"}[e.Kind]
		if e.Reason != nil && *e.Reason != "" {
			what += ": " + *e.Reason
		}
		rows = append(rows, ledgerRow{When: day(e.EffectiveAt), What: what, Amount: creditAmount(e.Amount)})
	}
	return rows, err
}

// featureRows are the customer's entitlements, as the portal and the
// merchant dashboard show them.
func (s *Server) featureRows(ctx context.Context, o portal.Open) ([]featureRow, error) {
	fs, err := portal.Features(ctx, s.db, o)
	var rows []featureRow
	for _, f := range fs {
		row := featureRow{Name: f.Name, Key: f.Key, Status: featureStatus(f)}
		if f.Limit != nil {
			row.Limit = *f.Limit
		}
		rows = append(rows, row)
	}
	return rows, err
}

// creditAmount shows a credit amount: credits are counted in USDC base units.
func creditAmount(a money.Amount) string { return usdc(a) }

func featureStatus(f portal.Feature) string {
	switch {
	case f.Entitled && f.Reason == "grace":
		return "Active (payment overdue)"
	case f.Entitled:
		return "Active"
	case f.Reason == "not_started":
		return "Starts " + day(f.StartsAt)
	}
	return "Ended"
}

// subscriptionFacts is what the portal and the merchant dashboard show of
// a subscription besides its actions: product, price, status, payer,
// period, trial and discount.
func subscriptionFacts(x portal.Subscription) subscriptionView {
	sv := subscriptionView{ID: x.ID, PlanID: x.PlanID, Status: x.Status, StatusText: statusText(x.Status), Live: x.Live(), Product: x.PlanID}
	if x.ProductName != nil {
		sv.Product = *x.ProductName
	}
	if x.Amount != nil && x.Interval != nil {
		sv.Price = usdc(*x.Amount) + " per " + periodText(*x.Interval, x.IntervalDays)
		if x.Metered() {
			sv.Price = "Usage, up to " + sv.Price
		}
	}
	if x.Payer != nil {
		sv.Payer = *x.Payer
	}
	if x.CurrentPeriodStart != nil && x.CurrentPeriodEnd != nil {
		sv.Period = day(*x.CurrentPeriodStart) + " – " + day(*x.CurrentPeriodEnd)
	}
	if x.EndedAt != nil {
		sv.Ended = day(*x.EndedAt)
	}
	if x.TrialEnd != nil && x.Status == subscriptions.Trialing {
		sv.Trial = day(*x.TrialEnd)
	}
	sv.Discount = discountText(x.Subscription)
	return sv
}

// discountText says what x's discount takes off and until when: "20% off
// (coupon LAUNCH), until 1 Mar 2027"; "" without one (or one that cannot
// be read: the charge itself reads it, and fails loudly).
func discountText(x subscriptions.Subscription) string {
	d, err := x.StoredDiscount()
	if err != nil || d == nil {
		return ""
	}
	text := d.Describe()
	switch {
	case d.End != nil:
		text += ", until " + day(*d.End)
	case d.Periods == nil:
		text += ", on every charge"
	}
	return text
}
