package daemon

import (
	"strconv"

	"github.com/tollgatehq/tollgate/internal/checkout"
	"github.com/tollgatehq/tollgate/internal/plans"
)

// trialTerms says a plan's free trial plainly on its checkout page: the
// line under the price ("14-day free trial, then 9.00 USDC per month") and
// the billing fact, which no longer charges at once. A customer who has had
// a trial of the product is charged at once instead; the page says so,
// since it cannot know who will pay before the wallet is chosen.
func trialTerms(v *checkoutView, pg checkout.PlanPage, period string) {
	if pg.TrialDays == nil || pg.Subscription != nil {
		return
	}
	days := strconv.Itoa(*pg.TrialDays) + "-day free trial"
	then := usdc(pg.Amount) + " per " + period
	billing := "Nothing is charged today. When the trial ends, " + usdc(pg.Amount) + " is charged, then every " + period + "."
	if pg.UsageType == plans.Metered {
		then = "your usage, up to " + then
		billing = "Nothing is charged today, and usage during the trial is free. When the trial ends, your usage is billed at the end of every " + period + "."
	}
	v.Trial = days + ", then " + then
	for i := range v.Facts {
		if v.Facts[i].ID == "usage-type" {
			v.Facts[i].Value = billing
		}
	}
	v.Facts = append(v.Facts, fact{Label: "Trial", ID: "trial-terms",
		Value: days + ". One free trial per customer: if you have had one, the first charge is taken when you subscribe."})
}
