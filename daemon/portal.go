package daemon

import (
	"embed"
	"encoding/hex"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tollgatehq/tollgate/daemon/web"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/portal"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// The customer portal's pages, at /portal/{token}: the link is the
// credential (a 256-bit token whose digest opens one session of one
// customer, merchant and mode). Every page goes through openPortal, which
// applies the per-link rate limit and refuses an unknown or expired link
// with a page that says so and nothing else. Reads are portal.go's in
// internal/portal; changes call the API operations' domain functions
// (portal_actions.go). Pages are rendered by the shared web layer
// (daemon/web).

//go:embed pages/portal_*.html
var portalFS embed.FS

// portalPages are the portal's page files (names in portalFS).
const (
	portalOverviewPage = "pages/portal_overview.html"
	portalUsagePage    = "pages/portal_usage.html"
	portalPaymentsPage = "pages/portal_payments.html"
	portalReceiptPage  = "pages/portal_receipt.html"
	portalChangePage   = "pages/portal_change.html"
)

func newPortalPages() *web.Pages {
	return web.NewPages(portalFS, template.FuncMap{}, portalOverviewPage, portalUsagePage, portalPaymentsPage, portalReceiptPage, portalChangePage)
}

// portalRoutes are the portal's rows of the route table.
func (s *Server) portalRoutes() []route {
	return []route{
		{pattern: "GET /portal/{token}", plain: s.portalOverview, missing: s.portalMissing},
		{pattern: "GET /portal/{token}/usage", plain: s.portalUsage, missing: s.portalMissing},
		{pattern: "GET /portal/{token}/payments", plain: s.portalPayments, missing: s.portalMissing},
		{pattern: "GET /portal/{token}/payments/{id}", plain: s.portalReceipt, missing: s.portalMissing},
		{pattern: "GET /portal/{token}/subscriptions/{id}/change", plain: s.portalChangePreview, missing: s.portalMissing},
		{pattern: "POST /portal/{token}/subscriptions/{id}/{action}", plain: s.portalAction, missing: s.portalMissing},
		{pattern: "/portal/", plain: s.portalMissing},
	}
}

// portalRequest is one opened request: the session, its token (which keys
// the form token) and the path prefix of its pages.
type portalRequest struct {
	portal.Open
	token string
	base  string
}

// openPortal opens the session of the request's link, or answers for it:
// 429 over the link's rate limit, 404 for an unknown link, 410 for an
// expired one, 503 or 500 when the session cannot be read.
func (s *Server) openPortal(w http.ResponseWriter, r *http.Request) (portalRequest, bool) {
	token := r.PathValue("token")
	digest := id.HashToken(token)
	if secs, ok := s.webLimit.Allow(r.Context(), hex.EncodeToString(digest[:16])); !ok {
		s.portalTooMany(w, r, secs)
		return portalRequest{}, false
	}
	o, err := portal.Lookup(r.Context(), s.db, token, s.cfg.Clock.Now())
	switch {
	case err == nil:
		return portalRequest{Open: o, token: token, base: s.pathPrefix() + "/portal/" + url.PathEscape(token)}, true
	case err == portal.ErrExpired:
		dropBody(w, r)
		s.portalMessage(w, r, http.StatusGone, web.Message{ID: "expired", Heading: "This link has expired",
			Paragraphs: []string{"Links to your account work for one hour. Ask for a new one where you found this link."}})
	case err == portal.ErrUnknown:
		dropBody(w, r)
		s.portalMissing(w, r)
	default:
		dropBody(w, r)
		s.portalFailure(w, r, err)
	}
	return portalRequest{}, false
}

// portalMissing answers a path under /portal/ that opens nothing.
func (s *Server) portalMissing(w http.ResponseWriter, r *http.Request) {
	s.portalMessage(w, r, http.StatusNotFound, web.Message{ID: "not-found", Heading: "This link is not valid",
		Paragraphs: []string{"There is nothing at this address. Check the link you were sent, or ask for a new one."}})
}

// portalFailure is the page of an error reading or changing something:
// its status from the API's table; a fault of ours gets a reference.
func (s *Server) portalFailure(w http.ResponseWriter, r *http.Request, err error) {
	e, status := s.pageError(r, err)
	m := web.Message{ID: "error", Heading: "Something went wrong", Paragraphs: []string{"Nothing was changed. Please try again in a moment."}}
	switch {
	case e.Code == apperr.ResourceNotFound:
		s.portalMissing(w, r)
		return
	case e.Code == apperr.AlreadySubscribed:
		m.Heading, m.Paragraphs = "You already have this plan", []string{"Another of your subscriptions is on that plan. Nothing was changed."}
	case e.Code == apperr.PaymentFailed:
		m.Heading, m.Paragraphs = "The payment for the switch failed", []string{declineText(e.Message) + " Nothing was changed.",
			"You can switch at the end of the period instead, or pay with another wallet."}
	case e.Code == apperr.InvalidRequest:
		m.Heading = "This change cannot be made"
		m.Paragraphs = []string{"The subscription may have ended or changed meanwhile. Nothing was changed; go back to the overview and reload it."}
	case status == http.StatusServiceUnavailable:
		w.Header().Set("Retry-After", "5")
		m.Heading = "Temporarily unavailable"
	case e.Code == apperr.Internal:
		m.Paragraphs = append(m.Paragraphs, "If it keeps failing, give the merchant this reference: "+requestID(r.Context()))
	}
	s.portalMessage(w, r, status, m)
}

// portalTooMany is the page of a request over a rate limit.
func (s *Server) portalTooMany(w http.ResponseWriter, r *http.Request, secs int) {
	dropBody(w, r)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	s.portalMessage(w, r, http.StatusTooManyRequests, web.Message{ID: "rate-limited", Heading: "Too many requests",
		Paragraphs: []string{"Please wait a minute and reload this page."}})
}

func (s *Server) portalMessage(w http.ResponseWriter, r *http.Request, status int, m web.Message) {
	if err := s.portalPages.RenderMessage(w, status, web.Frame{Title: m.Heading, Product: "customer portal"}, m); err != nil {
		s.log.ErrorContext(r.Context(), "portal page", "err", err)
	}
}

// frame is the layout of one of the session's pages; current is the
// navigation entry shown.
func (pr portalRequest) frame(title, current string) web.Frame {
	f := web.Frame{Title: title, Product: "customer portal", Brand: pr.Merchant, Test: pr.Mode == tenant.Test,
		CSRF: web.CSRFToken(pr.token), Footer: "This page is private to you: do not share its address."}
	for _, l := range []web.Link{{Href: pr.base, Text: "Overview"}, {Href: pr.base + "/usage", Text: "Usage"}, {Href: pr.base + "/payments", Text: "Payments"}} {
		l.Current = l.Text == current
		f.Nav = append(f.Nav, l)
	}
	if pr.ReturnURL != nil {
		f.Nav = append(f.Nav, web.Link{Href: *pr.ReturnURL, Text: "Back to " + merchantOr(pr.Merchant)})
	}
	return f
}

func merchantOr(name string) string {
	if strings.TrimSpace(name) == "" {
		return "the merchant"
	}
	return name
}

// renderPortal writes one of the session's pages with status.
func (s *Server) renderPortal(w http.ResponseWriter, r *http.Request, status int, page string, f web.Frame) {
	if err := s.portalPages.Render(w, status, page, f); err != nil {
		s.log.ErrorContext(r.Context(), "portal page", "err", err, "request_id", requestID(r.Context()))
	}
}

// pathPrefix is the base URL's path, so pages served below a prefix by a
// proxy link and post to the right place.
func (s *Server) pathPrefix() string {
	if u, err := url.Parse(s.baseURL); err == nil {
		return strings.TrimSuffix(u.EscapedPath(), "/")
	}
	return ""
}

// baseOrigin is the base URL's scheme://host, trusted as a form's origin.
func baseOrigin(baseURL string) string {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}
