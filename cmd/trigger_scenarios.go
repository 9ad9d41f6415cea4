package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/rail"
)

// What `trigger` does for each event: the API calls a customer, time and the
// merchant would make for it to happen.

// triggerAmount is what trigger's invoices, plans and credits are for
// (5 USDC).
const triggerAmount = "5000000"

// scenario makes t.event happen.
func (t *trigger) scenario(ctx context.Context) error {
	switch t.event {
	case "invoice.paid":
		return t.payInvoice(ctx)
	case "subscription.active":
		_, err := t.subscribe(ctx, rail.WalletSucceeds)
		return err
	case "subscription.renewed":
		return t.renew(ctx, rail.WalletSucceeds)
	case "subscription.payment_failed":
		return t.renew(ctx, rail.WalletFailsTwiceAfter1)
	case "subscription.revoked":
		return t.renew(ctx, rail.WalletRevokesAfter1st)
	case "subscription.dunning_exhausted":
		return t.exhaustDunning(ctx)
	case "subscription.expired":
		return t.cancelNow(ctx)
	case "subscription.updated":
		return t.changePlan(ctx)
	case "subscription.trial_will_end":
		return t.endTrialSoon(ctx)
	case "credit.granted":
		_, err := t.grantCredits(ctx)
		return err
	case "credit.debited":
		return t.debitCredits(ctx)
	case "entitlement.granted":
		return t.grantEntitlement(ctx)
	case "meter_event.cancelled":
		e, err := t.sendUsage(ctx)
		if err != nil {
			return err
		}
		if e, err = t.c.CancelMeterEvent(ctx, e.ID); err != nil {
			return err
		}
		t.keep("meter_event", e.ID, "cancelled, "+e.Value+" on "+e.Meter, e.Raw, e.CustomerID)
		return nil
	case "alert.triggered":
		return t.crossAlert(ctx)
	}
	return fmt.Errorf("no scenario for %s", t.event)
}

// customer is the run's own external customer id.
func (t *trigger) customer() string { return "trigger_" + t.tag }

func (t *trigger) payInvoice(ctx context.Context) error {
	inv, err := t.c.CreateInvoice(ctx, client.InvoiceParams{Amount: triggerAmount, Description: "tollgate trigger " + t.event})
	if err != nil {
		return err
	}
	t.keep("invoice", inv.ID, inv.Status, inv.Raw)
	res, err := t.c.Pay(ctx, inv.ID, client.CheckoutParams{Payer: rail.WalletSucceeds})
	if err != nil {
		return err
	}
	p := res.Payment
	if inv, err = t.c.GetInvoice(ctx, inv.ID); err != nil {
		return err
	}
	t.keep("invoice", inv.ID, inv.Status+", "+usdc(inv.Amount), inv.Raw)
	t.keep("payment", p.ID, p.Status+", "+usdc(p.Amount)+" from "+deref(p.Payer), p.Raw, p.CustomerID)
	return nil
}

// subscribe makes a licensed plan billed every day (so that time moves as
// little as it can) and subscribes the run's customer with wallet.
func (t *trigger) subscribe(ctx context.Context, wallet string) (*client.Subscription, error) {
	return t.subscribeTo(ctx, wallet, nil)
}

// subscribeTo is subscribe to a plan with trialDays (nil: none).
func (t *trigger) subscribeTo(ctx context.Context, wallet string, trialDays *int) (*client.Subscription, error) {
	days := 1
	plan, err := t.c.CreatePlan(ctx, client.PlanParams{Name: "Trigger " + t.event, Amount: triggerAmount, Interval: "custom",
		IntervalDays: &days, Description: "Made by tollgate trigger", TrialDays: trialDays})
	if err != nil {
		return nil, err
	}
	t.keep("plan", plan.ID, plan.Product.Name+", "+usdc(plan.Amount)+" "+every(plan.Interval, plan.IntervalDays), plan.Raw)
	res, err := t.c.Pay(ctx, plan.ID, client.CheckoutParams{Payer: wallet, ExternalCustomerID: t.customer()})
	if err != nil {
		return nil, err
	}
	x := res.Subscription
	t.keepSubscription(x)
	return x, nil
}

func (t *trigger) keepSubscription(x *client.Subscription) {
	t.keep("subscription", x.ID, x.Status+", customer "+deref(x.CustomerID)+", payer "+deref(x.Payer), x.Raw, x.CustomerID)
}

// renew subscribes with wallet and moves the clock to the end of the first
// period, when the renewal is charged: it succeeds, fails or finds the
// authorization revoked, as the wallet decides.
func (t *trigger) renew(ctx context.Context, wallet string) error {
	x, err := t.subscribe(ctx, wallet)
	if err != nil {
		return err
	}
	if _, err := t.advance(ctx, client.TestClockAdvanceParams{To: x.CurrentPeriodEnd}); err != nil {
		return err
	}
	return t.refresh(ctx, x.ID)
}

// advance moves the test clock and returns its new time.
func (t *trigger) advance(ctx context.Context, p client.TestClockAdvanceParams) (time.Time, error) {
	clock, err := t.c.AdvanceTestClock(ctx, p)
	if err != nil {
		return time.Time{}, err
	}
	t.keep("test_clock", "", "advanced to "+fmtTime(clock.Now)+" UTC", clock.Raw)
	return clock.Now, nil
}

// refresh records the subscription's state now.
func (t *trigger) refresh(ctx context.Context, subID string) error {
	x, err := t.c.GetSubscription(ctx, subID)
	if err != nil {
		return err
	}
	t.keepSubscription(x)
	return nil
}

// exhaustDunning subscribes with the wallet whose every charge after the
// first fails, lets the renewal fail, then advances the clock a day at a
// time until the daemon's dunning schedule (unknown here) has run out.
func (t *trigger) exhaustDunning(ctx context.Context) error {
	x, err := t.subscribe(ctx, rail.WalletFailsAfter1st)
	if err != nil {
		return err
	}
	now, err := t.advance(ctx, client.TestClockAdvanceParams{To: x.CurrentPeriodEnd})
	if err != nil {
		return err
	}
	for {
		if x, err = t.c.GetSubscription(ctx, x.ID); err != nil {
			return err
		}
		t.keepSubscription(x)
		switch x.Status {
		case "canceled":
			return nil
		case "past_due":
		default:
			return fmt.Errorf("subscription %s is %s, not past_due: dunning cannot run out", x.ID, x.Status)
		}
		if now.Sub(t.start) >= triggerDunningMax {
			return fmt.Errorf("subscription %s is still past_due after %d days of test-clock time: gave up waiting for subscription.dunning_exhausted (is the daemon's --dunning-schedule longer than that?)",
				x.ID, triggerDunningMax/(24*time.Hour))
		}
		if now, err = t.advance(ctx, client.TestClockAdvanceParams{By: "1d"}); err != nil {
			return err
		}
	}
}

// endTrialSoon subscribes to a plan with a 4-day trial and moves the clock
// to 3 days before the trial ends, when subscription.trial_will_end fires.
func (t *trigger) endTrialSoon(ctx context.Context) error {
	days := 4
	x, err := t.subscribeTo(ctx, rail.WalletSucceeds, &days)
	if err != nil {
		return err
	}
	if x.TrialEnd == nil {
		return fmt.Errorf("subscription %s is %s with no trial: the customer had one of this plan before", x.ID, x.Status)
	}
	notice := x.TrialEnd.Add(-3 * 24 * time.Hour)
	if _, err := t.advance(ctx, client.TestClockAdvanceParams{To: &notice}); err != nil {
		return err
	}
	return t.refresh(ctx, x.ID)
}

// cancelNow subscribes and cancels at once, which ends the subscription
// now.
func (t *trigger) cancelNow(ctx context.Context) error {
	x, err := t.subscribe(ctx, rail.WalletSucceeds)
	if err != nil {
		return err
	}
	atPeriodEnd := false
	if x, err = t.c.CancelSubscription(ctx, x.ID, client.CancelParams{AtPeriodEnd: &atPeriodEnd}); err != nil {
		return err
	}
	t.keepSubscription(x)
	return nil
}

func (t *trigger) grantCredits(ctx context.Context) (*client.CreditGrant, error) {
	g, err := t.c.GrantCredits(ctx, client.CreditGrantParams{Amount: triggerAmount, ExternalCustomerID: t.customer(),
		Reason: "tollgate trigger " + t.event, IdempotencyKey: "trigger_grant_" + t.tag})
	if err != nil {
		return nil, err
	}
	t.keep("credit_grant", g.EntryID, "granted "+usdc(g.Granted)+" to "+g.CustomerID+", balance "+usdc(g.Balance), g.Raw, &g.CustomerID)
	return g, nil
}

func (t *trigger) debitCredits(ctx context.Context) error {
	g, err := t.grantCredits(ctx)
	if err != nil {
		return err
	}
	d, err := t.c.DebitCredits(ctx, client.CreditDebitParams{Amount: "1000000", CustomerID: g.CustomerID,
		Reason: "tollgate trigger " + t.event, IdempotencyKey: "trigger_debit_" + t.tag})
	if err != nil {
		return err
	}
	t.keep("credit_debit", "", "debited "+usdc(d.Covered)+" from "+d.CustomerID+", balance "+usdc(d.Balance), d.Raw, &d.CustomerID)
	return nil
}

// grantEntitlement grants the boolean feature tollgate_trigger (made on
// first use; creating a feature is idempotent by key).
func (t *trigger) grantEntitlement(ctx context.Context) error {
	feat, err := t.c.CreateFeature(ctx, client.FeatureParams{Key: "tollgate_trigger", Name: "tollgate trigger",
		Description: "Granted by tollgate trigger entitlement.granted"})
	if err != nil {
		return err
	}
	t.keep("feature", feat.ID, feat.Key+" ("+feat.Type+")", feat.Raw)
	g, err := t.c.GrantEntitlement(ctx, client.EntitlementGrantParams{FeatureKey: feat.Key, ExternalCustomerID: t.customer()})
	if err != nil {
		return err
	}
	t.keep("entitlement_grant", g.ID, g.Feature+" to "+g.CustomerID, g.Raw, &g.CustomerID)
	return nil
}

// triggerMeter makes (or finds) the count meter tollgate_trigger.
func (t *trigger) triggerMeter(ctx context.Context) (*client.Meter, error) {
	m, err := t.c.CreateMeter(ctx, client.MeterParams{Key: "tollgate_trigger", DisplayName: "tollgate trigger",
		Aggregation: client.AggregationCount, Description: "Made by tollgate trigger"})
	if err != nil {
		return nil, err
	}
	t.keep("meter", m.ID, m.Key+" ("+m.Aggregation+")", m.Raw)
	return m, nil
}

// sendUsage sends one event on tollgate_trigger for the run's customer.
func (t *trigger) sendUsage(ctx context.Context) (*client.MeterEvent, error) {
	if _, err := t.triggerMeter(ctx); err != nil {
		return nil, err
	}
	e, err := t.c.SendMeterEvent(ctx, client.MeterEventParams{EventName: "tollgate_trigger", ExternalCustomerID: t.customer(),
		IdempotencyKey: "trigger_usage_" + t.tag})
	if err != nil {
		return nil, err
	}
	t.keep("meter_event", e.ID, e.Value+" on "+e.Meter+" for "+deref(e.CustomerID), e.Raw, e.CustomerID)
	return e, nil
}

// crossAlert watches the run's customer's usage of tollgate_trigger with a
// threshold of 1, then sends the event that reaches it.
func (t *trigger) crossAlert(ctx context.Context) error {
	m, err := t.triggerMeter(ctx)
	if err != nil {
		return err
	}
	a, err := t.c.CreateAlert(ctx, client.AlertParams{Type: "usage_threshold", Meter: m.ID, Threshold: "1",
		ExternalCustomerID: t.customer(), Name: "tollgate trigger " + t.event})
	if err != nil {
		return err
	}
	t.keep("alert", a.ID, a.Type+" of 1 on "+m.Key, a.Raw, a.CustomerID)
	_, err = t.sendUsage(ctx)
	return err
}
