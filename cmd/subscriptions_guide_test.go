package cmd

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestSubscriptionsGuideRunsAsWritten runs the plan-change walkthrough of
// the subscriptions guide with sh, the built binary and jq against a daemon
// in test mode: the downgrade is credited, the upgrade charged with a
// proration line, and the pending downgrade taken by the renewal.
func TestSubscriptionsGuideRunsAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the tollgate binary")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("the guide uses jq")
	}
	t.Parallel()
	text := runGuide(t, startUsageAPI(t), guideScript(t, "subscriptions.md", "### Worked example: upgrade now, downgrade at the period's end"))
	for _, want := range []string{"Credited now", "\nproration\n", "subscription.updated", "subscription.renewed"} {
		if !strings.Contains(text, want) {
			t.Fatalf("output lacks %q:\n%s", want, text)
		}
	}
	if !regexp.MustCompile(`\nprice_\S+ 10000000\n`).MatchString(text) {
		t.Fatalf("the renewal did not move to Basic:\n%s", text)
	}
}

// TestSubscriptionsTrialGuideRunsAsWritten runs the trial walkthrough of
// the subscriptions guide: trialing with nothing charged, then the notice
// and the first charge when the clock passes the trial's end.
func TestSubscriptionsTrialGuideRunsAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the tollgate binary")
	}
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("the guide uses jq")
	}
	t.Parallel()
	text := runGuide(t, startUsageAPI(t), guideScript(t, "subscriptions.md", "### Worked example: a trial that ends in a charge"))
	for _, want := range []string{"trialing until 20", "9.00 USDC", "\nactive\n", "subscription.trial_will_end", "subscription.active"} {
		if !strings.Contains(text, want) {
			t.Fatalf("output lacks %q:\n%s", want, text)
		}
	}
}
