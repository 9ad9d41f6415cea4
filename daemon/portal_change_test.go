package daemon_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
)

// A switch in the portal: previewed first (nothing changes), then made
// through the API's change, which emits subscription.updated; only the
// session's plans are offered or accepted; a switch above the payer's
// authorization is sent to the checkout.
func TestPortalChangePlan(t *testing.T) {
	t.Parallel()
	p := setupPortal(t)
	path := p.portalPath(p.session("alice", p.starter.ID, p.otherPlan.ID))
	pg := p.page(path)
	pg.secure(t)
	pg.has(t, []string{"Switch plan", "Starter: 5.00 USDC per month", "Business: 30.00 USDC per month", "Now (prorated)"})
	token := csrf(t, pg.body)
	sub := path + "/subscriptions/" + p.alice.ID
	before := len(p.eventTypes())

	// The preview changes nothing.
	pg = p.page(sub + "/change?plan=" + p.starter.ID + "&at=period_end")
	pg.secure(t)
	pg.has(t, []string{"Switch from Team to Starter", "At the end of this period", "Charged now", "0.00 USDC", "Next charge", "5.00 USDC", "Confirm the switch"})
	if x := p.sub(p.alice.ID); x.PendingPlanID != nil || x.PlanID != p.plan.ID {
		t.Fatalf("the preview changed the subscription: %s", x.Raw)
	}
	// Plans the session does not offer: not found, in a preview and a post.
	if r := p.page(sub + "/change?plan=" + p.mallory.PlanID + "x"); r.status != 404 {
		t.Fatalf("a plan outside the session: %d", r.status)
	}
	outside := p.moneyFixture.plan(client.PlanParams{Name: "Secret", Amount: "1000000", Interval: "month"})
	if r := p.postForm(sub+"/change", url.Values{"csrf_token": {token}, "plan": {outside.ID}}); r.status != 404 {
		t.Fatalf("a post to a plan outside the session: %d\n%s", r.status, r.body)
	}

	// Confirm: the change at the period's end, as the API makes it.
	r := p.postForm(sub+"/change", url.Values{"csrf_token": {token}, "plan": {p.starter.ID}, "at": {"period_end"}})
	if r.status != http.StatusSeeOther || r.header.Get("Location") != path+"?done=scheduled" {
		t.Fatalf("confirm: %d %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	x := p.sub(p.alice.ID)
	if x.PendingPlanID == nil || *x.PendingPlanID != p.starter.ID || x.PlanID != p.plan.ID {
		t.Fatalf("after the switch: %s", x.Raw)
	}
	pg = p.page(path + "?done=scheduled")
	pg.has(t, []string{"will change at the end of the current period", "Pending change", "To Starter on", "Stay on my current plan"})
	if types := p.eventTypes()[before:]; len(types) != 1 || types[0] != "subscription.updated" {
		t.Fatalf("events %v, want subscription.updated once", types)
	}
	// Back to the current plan drops the pending change.
	r = p.postForm(sub+"/change", url.Values{"csrf_token": {token}, "plan": {p.plan.ID}})
	if r.status != http.StatusSeeOther || !strings.HasSuffix(r.header.Get("Location"), "?done=kept") {
		t.Fatalf("keep: %d %q", r.status, r.header.Get("Location"))
	}
	if x := p.sub(p.alice.ID); x.PendingPlanID != nil {
		t.Fatalf("pending change kept: %s", x.Raw)
	}

	// Now, to a cheaper plan: credited at once.
	r = p.postForm(sub+"/change", url.Values{"csrf_token": {token}, "plan": {p.starter.ID}, "at": {"now"}})
	if r.status != http.StatusSeeOther || !strings.HasSuffix(r.header.Get("Location"), "?done=changed") {
		t.Fatalf("now: %d %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	if x := p.sub(p.alice.ID); x.PlanID != p.starter.ID {
		t.Fatalf("after the switch now: %s", x.Raw)
	}
	bal, err := p.c.GetCreditBalance(p.ctx, *p.alice.CustomerID)
	if err != nil || bal.Balance == "0" {
		t.Fatalf("no proration credit: %+v %v", bal, err)
	}

	// Above the authorization: to the checkout, nothing changed.
	r = p.postForm(sub+"/change", url.Values{"csrf_token": {token}, "plan": {p.otherPlan.ID}, "at": {"now"}})
	if r.status != http.StatusSeeOther || !strings.HasPrefix(r.header.Get("Location"), p.url+"/checkout/"+p.alice.ID+"?") ||
		!strings.Contains(r.header.Get("Location"), "plan="+p.otherPlan.ID) {
		t.Fatalf("upgrade: %d %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	if x := p.sub(p.alice.ID); x.PlanID != p.starter.ID {
		t.Fatalf("the refused upgrade changed the plan: %s", x.Raw)
	}
	// Another customer's subscription through this session: not found.
	if r := p.page(path + "/subscriptions/" + p.mallory.ID + "/change?plan=" + p.starter.ID); r.status != 404 {
		t.Fatalf("another customer's preview: %d", r.status)
	}
}
