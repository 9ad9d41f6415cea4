package daemon

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/tollgatehq/tollgate/daemon/web"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/checkout"
	"github.com/tollgatehq/tollgate/internal/store"
)

// The hosted checkout pages: server-rendered, no external assets. In test
// mode each magic wallet is a form of its own, so paying works without
// JavaScript; the only style is the page's one <style> element, allowed by
// its hash in the Content-Security-Policy. A live-mode page with a chain
// configured carries one inline script (checkout_live.go), allowed by its
// hash too.

//go:embed pages/checkout.html
var checkoutHTML string

// checkoutPages is the parsed page, the policy that admits exactly its
// style, and rendering buffers kept between requests (a page is rendered
// whole before its status is written).
type checkoutPages struct {
	tmpl *template.Template
	// csp is the policy of a page without script; liveCSP of one with
	// the live section's.
	csp, liveCSP string
	liveScript   template.JS
	buffers      *sync.Pool
}

func parseCheckoutTemplate() *checkoutPages {
	style := web.Hash([]byte(web.InlineStyle(checkoutHTML)))
	script, scriptHash := liveScript()
	return &checkoutPages{
		liveScript: script,
		tmpl:       withLiveSection(template.Must(template.New("checkout").Parse(checkoutHTML))),
		buffers:    &sync.Pool{New: func() any { return new(bytes.Buffer) }},
		csp:        web.Policy(style),
		liveCSP:    web.Policy(style, scriptHash),
	}
}

// checkoutPage serves GET /checkout/{id}: an invoice (with its receipt
// once paid) or a plan (with ?subscription=sub_… the subscription made at
// checkout); 404 with the not-found page for anything else.
func (s *Server) checkoutPage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.renderCheckout(w, r, r.PathValue("id"), firstRunes(q.Get("external_customer_id"), maxReflected), q.Get("coupon"), nil)
}

// maxReflected bounds a query parameter a page shows back, in characters:
// what the pay form accepts as an external_customer_id. A longer one is
// cut, not echoed into a page of megabytes.
const maxReflected = 255

// firstRunes is s cut to its first n characters.
func firstRunes(s string, n int) string {
	i := 0
	for at := range s {
		if i == n {
			return s[:at]
		}
		i++
	}
	return s
}

// renderCheckout renders the page of id: with payErr, the page a failed
// payment returns to, in the status that error calls for. ext is the
// merchant's customer id carried into the forms, coupon the code the page
// offers (?coupon=).
func (s *Server) renderCheckout(w http.ResponseWriter, r *http.Request, id, ext, coupon string, payErr error) {
	var v checkoutView
	var err error
	if reauthorizing(id, r.URL.Query()) {
		v, err = s.reauthorizationView(r.Context(), id, r.URL.Query())
	} else {
		v, err = s.checkoutView(r.Context(), id, r.URL.Query().Get("subscription"), ext)
	}
	if err == nil && v.Kind != "" {
		err = s.liveSection(r, id, &v)
	}
	if err == nil {
		err = s.couponSection(r.Context(), id, coupon, &v)
	}
	status := http.StatusOK
	switch {
	case err != nil:
		v, status = s.failurePage(r, err)
	case v.Kind == "":
		status = http.StatusNotFound
	case payErr != nil:
		var e *apperr.Error
		e, status = s.pageError(r, payErr)
		v.Error = paymentError(e)
	}
	s.writePage(w, status, v)
}

// writePage renders v and sends it with the page's headers.
func (s *Server) writePage(w http.ResponseWriter, status int, v checkoutView) {
	buf := s.checkout.buffers.Get().(*bytes.Buffer)
	defer func() { buf.Reset(); s.checkout.buffers.Put(buf) }()
	if err := s.checkout.tmpl.Execute(buf, v); err != nil {
		// Only a bug in the template gets here; nothing was sent yet.
		s.log.Error("checkout page", "err", err)
		buf.Reset()
		status = http.StatusInternalServerError
		_ = s.checkout.tmpl.Execute(buf, checkoutView{Title: "Error", Heading: "Something went wrong", HeadingID: "error-heading"})
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	csp := s.checkout.csp
	if v.Live != nil {
		csp = s.checkout.liveCSP
	}
	web.SetHeaders(h, csp)
	if status == http.StatusServiceUnavailable {
		h.Set("Retry-After", strconv.Itoa(unavailableRetryAfter))
	}
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// checkoutView builds the page of id; Kind is "" when there is no such
// invoice or plan (ids that are not text included).
func (s *Server) checkoutView(ctx context.Context, id, subscriptionID, ext string) (checkoutView, error) {
	switch {
	case strings.HasPrefix(id, "inv_"):
		pg, ok, err := checkout.LoadInvoicePage(ctx, s.db, id)
		if err != nil || !ok {
			return notFoundView(), err
		}
		return s.invoiceView(pg), nil
	case strings.HasPrefix(id, "price_"):
		pg, ok, err := checkout.LoadPlanPage(ctx, s.db, id, subscriptionID)
		if err != nil || !ok {
			return notFoundView(), err
		}
		return s.planView(pg, ext), nil
	case strings.HasPrefix(id, "sub_"):
		return s.subscriptionView(ctx, id)
	}
	return notFoundView(), nil
}

// pagePath is the path of id's page, under the base URL's path, so a
// daemon served below a prefix by a proxy still gets its forms and
// redirects; payURL is where the page's forms post.
func (s *Server) pagePath(id string) string {
	return s.pathPrefix() + "/checkout/" + url.PathEscape(id)
}

func (s *Server) payURL(id string) string { return s.pagePath(id) + "/pay" }

// pageError is err's API error and status, as writeError would answer it:
// unavailable database 503, anything unexpected 500 (logged, not shown).
func (s *Server) pageError(r *http.Request, err error) (*apperr.Error, int) {
	e, ok := apperr.As(err)
	switch {
	case ok:
	case store.Unavailable(err), errors.Is(r.Context().Err(), context.Canceled):
		e = &apperr.Error{Code: apperr.ServiceUnavailable, Message: "the service is busy or restarting; nothing was charged, try again shortly"}
	default:
		s.log.ErrorContext(r.Context(), "checkout", "err", err, "request_id", requestID(r.Context()))
		e = &apperr.Error{Code: apperr.Internal, Message: "something went wrong on our side (request " + requestID(r.Context()) + ")"}
	}
	status := e.Status
	if status == 0 {
		status = HTTPStatus(e.Code)
	}
	if status == 0 {
		status = http.StatusInternalServerError
	}
	return e, status
}

// failurePage is the page shown when the page itself could not be read.
func (s *Server) failurePage(r *http.Request, err error) (checkoutView, int) {
	e, status := s.pageError(r, err)
	// e.Message is written for the merchant; the customer gets words and,
	// for a fault of ours, a reference the merchant can look up.
	v := checkoutView{Title: "Checkout unavailable", Heading: "Checkout is unavailable right now", HeadingID: "error-heading",
		Paragraphs: []string{"Nothing could be shown or charged just now.", "Reload this page in a moment; the link stays valid."}}
	if e.Code == apperr.Internal {
		v.Paragraphs = append(v.Paragraphs, "If it keeps failing, give the merchant this reference: "+requestID(r.Context()))
	}
	if status == http.StatusServiceUnavailable {
		v.Heading = "Checkout is temporarily unavailable"
	}
	return v, status
}

// checkoutNotFound answers a checkout path whose id cannot name anything
// (see checkText): the not-found page, or the API's 404 to a client asking
// for JSON.
func (s *Server) checkoutNotFound(w http.ResponseWriter, r *http.Request) {
	if acceptsJSON(r) {
		writeError(w, r, s.log, apperr.New(apperr.ResourceNotFound, "no such invoice or plan"))
		return
	}
	s.writePage(w, http.StatusNotFound, notFoundView())
}

func notFoundView() checkoutView {
	return checkoutView{Title: "Checkout link not found", Heading: "This checkout link is not valid", HeadingID: "not-found",
		Paragraphs: []string{"There is no invoice or plan at this address. Check the link you were sent, or ask the merchant for a new one."}}
}
