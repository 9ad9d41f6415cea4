package daemon_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/webhooks/webhookstest"
)

var olderLink = regexp.MustCompile(`href="([^"]+)" id="older"`)

// An endpoint's page lists its deliveries newest first, a page at a time,
// with each one's event type, status, attempts and last answer; a delivery
// is resent from it (and audited). Another merchant's session can neither
// read the endpoint nor resend its deliveries, and a delivery cannot be
// resent through another endpoint's address.
func TestDashboardEndpointDeliveries(t *testing.T) {
	b := setup(t, insecureHooks)
	mA, mB := b.merchant("A"), b.merchant("B")
	b.dashUser(t, mA, "a@example.com")
	b.dashUser(t, mB, "b@example.com")
	rc := webhookstest.NewReceiver(t, nil)
	scope := tenant.Scope{MerchantID: mA, Mode: tenant.Test}
	ep := webhookstest.Endpoint(t, b.db, mA, rc.URL)
	other := webhookstest.Endpoint(t, b.db, mA, rc.URL+"/other", "customer.created")

	var deliveries []string
	for _, typ := range []string{"invoice.created", "invoice.paid", "payment.succeeded"} {
		ev := webhookstest.Emit(t, b.db, scope, typ, map[string]any{"id": "obj_" + typ})
		deliveries = append(deliveries, webhookstest.Settled(t, b.db, ev.ID, 10*time.Second)[0].ID)
	}

	br := b.browser(t)
	br.signIn("a@example.com")
	if a := br.get("/dashboard/developers"); !strings.Contains(a.body, `href="/dashboard/webhooks/`+ep.ID+`"`) {
		t.Fatalf("Developers does not link the endpoint's deliveries:\n%s", a.body)
	}
	a := br.get("/dashboard/webhooks/" + ep.ID + "?limit=2")
	if a.status != 200 || !strings.Contains(a.body, `id="delivery-`+deliveries[2]+`"`) || !strings.Contains(a.body, `id="delivery-`+deliveries[1]+`"`) ||
		strings.Contains(a.body, deliveries[0]) || !strings.Contains(a.body, "payment.succeeded") || !strings.Contains(a.body, `<span class="last-status">200</span>`) {
		t.Fatalf("first page: %d\n%s", a.status, a.body)
	}
	m := olderLink.FindStringSubmatch(a.body)
	if m == nil {
		t.Fatal("no link to the older deliveries")
	}
	a = br.get(strings.ReplaceAll(m[1], "&amp;", "&"))
	if !strings.Contains(a.body, `id="delivery-`+deliveries[0]+`"`) || strings.Contains(a.body, deliveries[2]) || !strings.Contains(a.body, "invoice.created") {
		t.Fatalf("second page:\n%s", a.body)
	}
	if a = br.get("/dashboard/webhooks/" + other.ID); !strings.Contains(a.body, `id="no-deliveries"`) {
		t.Fatalf("the other endpoint shows deliveries:\n%s", a.body)
	}

	brB := b.browser(t)
	brB.signIn("b@example.com")
	if a := brB.get("/dashboard/webhooks/" + ep.ID); a.status != 404 || strings.Contains(a.body, deliveries[0]) {
		t.Fatalf("B reads A's endpoint: %d", a.status)
	}
	brB.get("/dashboard/developers")
	if a := brB.post("/dashboard/webhooks/"+ep.ID+"/deliveries/"+deliveries[0]+"/resend", nil); a.status != 404 {
		t.Fatalf("B resends A's delivery: %d", a.status)
	}
	br.get("/dashboard/webhooks/" + other.ID)
	if a := br.post("/dashboard/webhooks/"+other.ID+"/deliveries/"+deliveries[0]+"/resend", url.Values{}); a.status != 404 {
		t.Fatalf("a delivery resent through another endpoint: %d", a.status)
	}
	if rc.Count() != 3 {
		t.Fatalf("%d hooks after refused resends, want 3", rc.Count())
	}

	br.get("/dashboard/webhooks/" + ep.ID)
	if a := br.post("/dashboard/webhooks/"+ep.ID+"/deliveries/"+deliveries[0]+"/resend", nil); a.status != http.StatusSeeOther {
		t.Fatalf("resend: %d\n%s", a.status, a.body)
	}
	webhookstest.Eventually(t, 10*time.Second, "the resent delivery", func() bool { return rc.Count() == 4 })
	if got := rc.Got()[3].Event(t)["type"]; got != "invoice.created" {
		t.Fatalf("resent %v, want invoice.created", got)
	}
	webhookstest.Eventually(t, 10*time.Second, "two attempts on the page", func() bool {
		a := br.get("/dashboard/webhooks/" + ep.ID)
		row, _, _ := strings.Cut(a.body[strings.Index(a.body, `id="delivery-`+deliveries[0]+`"`):], "</tr>")
		return strings.Contains(row, "</span></td><td>2</td>")
	})
	if a := br.get("/dashboard/audit"); !strings.Contains(a.body, ">"+audit.DeliveryRetry+"<") || !strings.Contains(a.body, deliveries[0]) {
		t.Fatal("the resend is not in the audit log")
	}
}
