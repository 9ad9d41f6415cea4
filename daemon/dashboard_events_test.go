package daemon_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/webhooks/webhookstest"
)

// An endpoint added on the dashboard receives an event, whose page shows
// the delivery's attempts; a resend delivers it again. Another merchant's
// session can neither read nor resend it.
func TestDashboardEventsResend(t *testing.T) {
	b := setup(t, insecureHooks, func(c *daemon.Config) { c.WebhookRetrySchedule = []time.Duration{time.Second} })
	mA, mB := b.merchant("A"), b.merchant("B")
	b.dashUser(t, mA, "a@example.com")
	b.dashUser(t, mB, "b@example.com")
	rc := webhookstest.NewReceiver(t, nil)

	br := b.browser(t)
	br.signIn("a@example.com")
	br.get("/dashboard/developers")
	if a := br.post("/dashboard/webhooks", url.Values{"url": {rc.URL}}); a.status != 200 {
		t.Fatalf("add endpoint: %d", a.status)
	}
	ev := webhookstest.Emit(t, b.db, tenant.Scope{MerchantID: mA, Mode: tenant.Test}, "invoice.paid", map[string]any{"id": "inv_x"})
	webhookstest.Eventually(t, 10*time.Second, "the delivery", func() bool { return rc.Count() == 1 })
	webhookstest.Settled(t, b.db, ev.ID, 10*time.Second)

	if a := br.get("/dashboard/events"); !strings.Contains(a.body, ev.ID) {
		t.Fatal("the list lacks the event")
	}
	a := br.get("/dashboard/events/" + ev.ID)
	if a.status != 200 || !strings.Contains(a.body, `data-status="succeeded"`) || !strings.Contains(a.body, "<td>200</td>") || !strings.Contains(a.body, "inv_x") {
		t.Fatalf("event page: %d\n%s", a.status, a.body)
	}

	brB := b.browser(t)
	brB.signIn("b@example.com")
	if a := brB.get("/dashboard/events/" + ev.ID); a.status != 404 {
		t.Fatalf("B reads A's event: %d", a.status)
	}
	brB.get("/dashboard/events")
	if a := brB.post("/dashboard/events/"+ev.ID+"/resend", nil); a.status != 404 {
		t.Fatalf("B resends A's event: %d", a.status)
	}

	br.get("/dashboard/events/" + ev.ID)
	if a := br.post("/dashboard/events/"+ev.ID+"/resend", nil); a.status != http.StatusSeeOther {
		t.Fatalf("resend: %d", a.status)
	}
	webhookstest.Eventually(t, 10*time.Second, "the resent delivery", func() bool { return rc.Count() == 2 })
	if a := br.get("/dashboard/audit"); !strings.Contains(a.body, ">"+audit.DeliveryRetry+"<") {
		t.Fatal("the resend is not in the audit log")
	}
}
