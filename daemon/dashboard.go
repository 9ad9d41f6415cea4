package daemon

import (
	"context"
	"embed"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tollgatehq/tollgate/daemon/web"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/users"
)

// The merchant dashboard, at /dashboard: a signed-in user of one merchant
// manages its keys, webhook endpoints, wallet and refunds and reads its
// money and audit log. A session is a cookie holding a 256-bit token whose
// SHA-256 is stored (internal/users); every page goes through
// openDashboard, every form is a POST checked for its origin and its
// session-bound token (web.Forms), and every change calls the domain
// function the API or the admin commands call, with its audit entry in the
// same transaction. Pages are rendered by the shared web layer.

//go:embed pages/dashboard_*.html
var dashboardFS embed.FS

const (
	dashSignInPage     = "pages/dashboard_sign_in.html"
	dashSetupPage      = "pages/dashboard_setup.html"
	dashOverviewPage   = "pages/dashboard_overview.html"
	dashSettingsPage   = "pages/dashboard_settings.html"
	dashDevelopersPage = "pages/dashboard_developers.html"
	dashAuditPage      = "pages/dashboard_audit.html"
)

func newDashboardPages() *web.Pages {
	p := web.NewPages(dashboardFS, template.FuncMap{"usdc": usdcAmount, "when": whenText, "dashbar": dashBar},
		dashSignInPage, dashSetupPage, dashOverviewPage, dashSettingsPage, dashDevelopersPage, dashAuditPage, dashWalletPage,
		dashPaymentsPage, dashPaymentPage, dashEventsPage, dashEventPage, dashInvoicesPage, dashInvoicePage,
		dashSubscriptionsPage, dashSubscriptionPage, dashCustomersPage, dashCustomerPage, dashEndpointPage)
	p.AllowScript(dashWalletPage, dashWalletJS)
	p.AllowScript(dashPaymentPage, dashRefundJS)
	return p
}

// whenText is a time as the dashboard shows it.
func whenText(t any) string {
	switch v := t.(type) {
	case time.Time:
		return v.UTC().Format("2006-01-02 15:04 UTC")
	case *time.Time:
		if v == nil {
			return "—"
		}
		return v.UTC().Format("2006-01-02 15:04 UTC")
	}
	return ""
}

// The cookies: the session's, and before sign-in the one the sign-in form's
// token is bound to.
const (
	dashCookie       = "tollgate_dashboard"
	dashSignInCookie = "tollgate_dashboard_signin"
)

// dashboardRoutes are the dashboard's rows of the route table.
func (s *Server) dashboardRoutes() []route {
	page := func(pattern string, h http.HandlerFunc) route {
		return route{pattern: pattern, plain: h, missing: s.dashMissing}
	}
	return []route{
		page("GET /dashboard", s.dashOverview),
		page("GET /dashboard/sign-in", s.dashSignInForm),
		page("POST /dashboard/sign-in", s.dashSignIn),
		page("POST /dashboard/sign-out", s.dashSignOut),
		page("GET /dashboard/setup/{token}", s.dashSetupForm),
		page("POST /dashboard/setup/{token}", s.dashSetup),
		page("POST /dashboard/mode", s.dashMode),
		page("GET /dashboard/settings", s.dashSettings),
		page("POST /dashboard/settings/totp", s.dashTOTPBegin),
		page("POST /dashboard/settings/totp/confirm", s.dashTOTPConfirm),
		page("GET /dashboard/developers", s.dashDevelopers),
		page("POST /dashboard/keys", s.dashKeyCreate),
		page("POST /dashboard/keys/{id}/revoke", s.dashKeyRevoke),
		page("POST /dashboard/webhooks", s.dashEndpointAdd),
		page("POST /dashboard/webhooks/{id}/{action}", s.dashEndpointChange),
		page("GET /dashboard/webhooks/{id}", s.dashEndpoint),
		page("POST /dashboard/webhooks/{id}/deliveries/{delivery}/resend", s.dashDeliveryResend),
		page("GET /dashboard/audit", s.dashAudit),
		page("GET /dashboard/invoices", s.dashInvoices),
		page("GET /dashboard/invoices/{id}", s.dashInvoice),
		page("GET /dashboard/subscriptions", s.dashSubscriptions),
		page("GET /dashboard/subscriptions/{id}", s.dashSubscription),
		page("GET /dashboard/customers", s.dashCustomers),
		page("GET /dashboard/customers/{id}", s.dashCustomer),
		page("GET /dashboard/payments", s.dashPayments),
		page("GET /dashboard/payments/{id}", s.dashPayment),
		page("POST /dashboard/payments/{id}/refund", s.dashRefund),
		page("GET /dashboard/events", s.dashEvents),
		page("GET /dashboard/events/{id}", s.dashEvent),
		page("POST /dashboard/events/{id}/resend", s.dashResend),
		page("GET /dashboard/wallet", s.dashWallet),
		page("POST /dashboard/wallet/challenge", s.dashWalletChallenge),
		page("POST /dashboard/wallet/set", s.dashWalletSet),
		page("/dashboard/", s.dashMissing),
	}
}

// dashRequest is one signed-in request.
type dashRequest struct {
	users.Session
	token    string
	merchant string // the merchant's display name
	ip       string
	now      time.Time // the wall clock: sessions and audit
	base     string    // the dashboard's path
}

// actor is the request's user for the audit log.
func (d dashRequest) actor() audit.Actor { return d.Actor(d.ip) }

// scope is the merchant and mode the request looks at.
func (d dashRequest) scope() *tenant.Scope { s := d.Scope(); return &s }

// dashBase is the dashboard's path under the base URL's.
func (s *Server) dashBase() string { return s.pathPrefix() + "/dashboard" }

// dashIP is the address a request came from, for the audit log.
func dashIP(r *http.Request) string { return peerAddress(r.RemoteAddr) }

// openDashboard opens the request's session, or answers for it: a page to
// sign in for no session, or Settings while the daemon requires TOTP and
// the user has none. A POST must also pass the form check.
func (s *Server) openDashboard(w http.ResponseWriter, r *http.Request) (dashRequest, bool) {
	token := ""
	if c, err := r.Cookie(dashCookie); err == nil {
		token = c.Value
	}
	now := s.cfg.Clock.Now()
	sess, err := users.Authenticate(r.Context(), s.db, token, now)
	if err != nil {
		dropBody(w, r)
		if apperr.CodeOf(err) == apperr.Unauthorized {
			s.clearDashCookie(w, dashCookie)
			http.Redirect(w, r, s.dashBase()+"/sign-in", http.StatusSeeOther)
			return dashRequest{}, false
		}
		s.dashFailure(w, r, err)
		return dashRequest{}, false
	}
	d := dashRequest{Session: sess, token: token, ip: dashIP(r), now: now, base: s.dashBase()}
	if r.Method == http.MethodPost {
		if err := s.forms.Check(w, r, token); err != nil {
			s.dashForbidden(w, r, err)
			return dashRequest{}, false
		}
	}
	if s.cfg.DashboardRequire2FA && !sess.TOTPEnrolled && !strings.HasPrefix(r.URL.Path, d.base+"/settings") && r.URL.Path != d.base+"/sign-out" {
		http.Redirect(w, r, d.base+"/settings?required=1", http.StatusSeeOther)
		return dashRequest{}, false
	}
	if d.merchant, err = auth.MerchantName(r.Context(), s.db, sess.MerchantID); err != nil {
		s.dashFailure(w, r, err)
		return dashRequest{}, false
	}
	return d, true
}

// dashSecure reports whether cookies must be Secure: the base URL is https.
func (s *Server) dashSecure() bool { return strings.HasPrefix(s.baseURL, "https://") }

func (s *Server) setDashCookie(w http.ResponseWriter, name, value string, maxAge time.Duration) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: s.dashBase(), HttpOnly: true, Secure: s.dashSecure(),
		SameSite: http.SameSiteLaxMode, MaxAge: int(maxAge.Seconds())})
}

func (s *Server) clearDashCookie(w http.ResponseWriter, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: s.dashBase(), HttpOnly: true, Secure: s.dashSecure(),
		SameSite: http.SameSiteLaxMode, MaxAge: -1})
}

// frame is the layout of a signed-in page; current is the navigation entry
// shown.
func (d dashRequest) frame(title, current string) web.Frame {
	f := web.Frame{Title: title, Product: "dashboard", Brand: d.merchant, Test: d.Mode == tenant.Test, CSRF: web.CSRFToken(d.token),
		Footer: "Signed in as " + d.Email + "."}
	for _, l := range []web.Link{{Href: d.base, Text: "Overview"}, {Href: d.base + "/invoices", Text: "Invoices"}, {Href: d.base + "/payments", Text: "Payments"},
		{Href: d.base + "/subscriptions", Text: "Subscriptions"}, {Href: d.base + "/customers", Text: "Customers"}, {Href: d.base + "/events", Text: "Events"},
		{Href: d.base + "/developers", Text: "Developers"}, {Href: d.base + "/wallet", Text: "Wallet"},
		{Href: d.base + "/audit", Text: "Audit log"}, {Href: d.base + "/settings", Text: "Settings"}} {
		l.Current = l.Text == current
		f.Nav = append(f.Nav, l)
	}
	return f
}

// dashPage is what every signed-in page's body carries besides its own
// data: the forms of the layout's header (mode switch, sign-out).
type dashPage struct {
	Base string
	Mode tenant.Mode
	CSRF string
	Data any
}

func (d dashRequest) page(data any) dashPage {
	return dashPage{Base: d.base, Mode: d.Mode, CSRF: web.CSRFToken(d.token), Data: data}
}

func (s *Server) renderDash(w http.ResponseWriter, r *http.Request, status int, page string, f web.Frame) {
	if err := s.dashPages.Render(w, status, page, f); err != nil {
		s.log.ErrorContext(r.Context(), "dashboard page", "err", err, "request_id", requestID(r.Context()))
	}
}

func (s *Server) dashMessage(w http.ResponseWriter, r *http.Request, status int, m web.Message) {
	if err := s.dashPages.RenderMessage(w, status, web.Frame{Title: m.Heading, Product: "dashboard"}, m); err != nil {
		s.log.ErrorContext(r.Context(), "dashboard page", "err", err)
	}
}

// dashMissing answers a path under /dashboard/ that names nothing, and an
// id of another merchant's: the same page.
func (s *Server) dashMissing(w http.ResponseWriter, r *http.Request) {
	s.dashMessage(w, r, http.StatusNotFound, web.Message{ID: "not-found", Heading: "Not found",
		Paragraphs: []string{"There is nothing at this address."}, Link: &web.Link{Href: s.dashBase(), Text: "Back to the dashboard"}})
}

// dashForbidden answers a form refused by web.Forms (err), or refused
// before it was read (nil).
func (s *Server) dashForbidden(w http.ResponseWriter, r *http.Request, err error) {
	if err != nil && !web.Forbidden(err) {
		s.dashMessage(w, r, http.StatusBadRequest, web.Message{ID: "bad-form", Heading: "This form could not be read"})
		return
	}
	s.dashMessage(w, r, http.StatusForbidden, web.Message{ID: "forbidden", Heading: "This form was refused",
		Paragraphs: []string{"It came from another site, or from a page older than your session. Nothing was changed; reload the page and try again."},
		Link:       &web.Link{Href: s.dashBase(), Text: "Back to the dashboard"}})
}

// dashFailure is the page of an error reading or changing something.
func (s *Server) dashFailure(w http.ResponseWriter, r *http.Request, err error) {
	e, status := s.pageError(r, err)
	// A customer id in a path that names none of the session's is as
	// missing as any other id.
	if e.Code == apperr.ResourceNotFound || e.Code == apperr.UnknownCustomer {
		s.dashMissing(w, r)
		return
	}
	m := web.Message{ID: "error", Heading: "Something went wrong", Paragraphs: []string{e.Message}, Link: &web.Link{Href: s.dashBase(), Text: "Back to the dashboard"}}
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "5")
	}
	s.dashMessage(w, r, status, m)
}

// dashNotice is the layout's notice for err: its message when it is the
// user's to fix, nil when err is nil.
func dashNotice(err error) *web.Notice {
	if err == nil {
		return nil
	}
	if e, ok := apperr.As(err); ok {
		return &web.Notice{ID: "form-error", Text: e.Message}
	}
	return &web.Notice{ID: "form-error", Text: "That did not work; nothing was changed. Please try again."}
}

// dashDone redirects after a change (post/redirect/get) with a notice of
// what was done.
func (s *Server) dashDone(w http.ResponseWriter, r *http.Request, path, done string) {
	http.Redirect(w, r, path+"?done="+url.QueryEscape(done), http.StatusSeeOther)
}

// doneNotice is the notice of a redirect's ?done=: only the fixed texts
// below, so a crafted link cannot put words on the page.
func doneNotice(r *http.Request) *web.Notice {
	text, ok := map[string]string{
		"revoked": "The key was revoked: requests with it fail from now on.", "disabled": "The endpoint was disabled.",
		"enabled": "The endpoint was enabled.", "mode": "Switched mode.", "totp": "Two-factor sign-in is on.",
		"wallet":         "The settlement wallet was changed: payments settle to it from now on.",
		"refunded":       "Refunded.",
		"refund-pending": "The refund was sent from your settlement wallet: it completes (refund.succeeded) once the chain confirms it.",
		"resent":         "Sent again: the deliveries are due now.",
	}[r.URL.Query().Get("done")]
	if !ok {
		return nil
	}
	return &web.Notice{ID: "done", Text: text, Done: true}
}

// newBrowserToken is a fresh random token for a cookie.
func newBrowserToken() string { return id.Random(43) }

// dashBarHTML is the bar above every signed-in page: the test/live switch
// and sign-out, each a form with the session's token.
var dashBarHTML = template.Must(template.New("bar").Parse(`<div class="card actions" id="dashbar">
<form method="post" action="{{.Base}}/mode" class="inline"><input type="hidden" name="csrf_token" value="{{.CSRF}}">
<input type="hidden" name="mode" value="{{if eq .Mode "test"}}live{{else}}test{{end}}">
<span class="muted">Viewing <strong id="mode">{{.Mode}}</strong> data</span>
<button type="submit" id="switch-mode">Switch to {{if eq .Mode "test"}}live{{else}}test{{end}}</button></form>
<form method="post" action="{{.Base}}/sign-out" class="inline"><input type="hidden" name="csrf_token" value="{{.CSRF}}">
<button type="submit" id="sign-out">Sign out</button></form>
</div>`))

func dashBar(p dashPage) (template.HTML, error) {
	var b strings.Builder
	err := dashBarHTML.Execute(&b, p)
	return template.HTML(b.String()), err // #nosec: html/template escaped it
}

// dashListView is a list page's body: one page of rows, newest first, and
// the link to the older ones.
type dashListView[T any] struct {
	Items []T
	Next  string
}

// dashList answers a cursor-paged list page at path (under the dashboard's
// base), reading the page asked for with list for the session's merchant.
func dashList[T any](s *Server, w http.ResponseWriter, r *http.Request, path, title, tpl string,
	list func(context.Context, dashRequest, page.Params) (page.Result[T], error)) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	p, err := page.ParseQuery(r.URL.Query())
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	res, err := list(r.Context(), d, p)
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	v := dashListView[T]{Items: res.Items}
	if res.Next != nil {
		v.Next = d.base + path + "?before=" + res.Next.String()
	}
	f := d.frame(title, title)
	f.Body = d.page(v)
	s.renderDash(w, r, http.StatusOK, tpl, f)
}
