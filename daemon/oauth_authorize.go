package daemon

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/oauth"
)

// maxConsentFormBytes bounds the consent form's body.
const maxConsentFormBytes = 16 << 10

// authorizePage answers GET /oauth/authorize: the consent page, or a
// redirect with the error when the request is refused, or an error page when
// its client or redirect URI cannot be trusted.
func (o *oauthServer) authorizePage(w http.ResponseWriter, r *http.Request) {
	p, err := o.svc.CheckAuthorization(r.Context(), r.URL.Query())
	if err != nil {
		o.untrusted(w, r, err)
		return
	}
	if p.Refusal != nil {
		o.redirect(w, p.RedirectURI, o.svc.RedirectWithError(p, p.Refusal), http.StatusFound)
		return
	}
	o.consent(w, http.StatusOK, p, o.csrfToken(w, r), "", false)
}

// authorizeSubmit answers the consent form: deny redirects with
// access_denied; allow signs the merchant in with the pasted key and
// redirects with a code. A wrong key shows the form again.
func (o *oauthServer) authorizeSubmit(w http.ResponseWriter, r *http.Request) {
	if err := o.xorigin.Check(r); err != nil {
		o.errorPage(w, http.StatusForbidden, "The form was submitted from another site. Start again from the application.")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxConsentFormBytes)
	if err := r.ParseForm(); err != nil || !hasMediaType(r, "application/x-www-form-urlencoded") {
		o.errorPage(w, http.StatusBadRequest, "The form could not be read. Start again from the application.")
		return
	}
	form := r.PostForm
	p, err := o.svc.CheckAuthorization(r.Context(), form)
	if err != nil {
		o.untrusted(w, r, err)
		return
	}
	if p.Refusal != nil {
		o.redirect(w, p.RedirectURI, o.svc.RedirectWithError(p, p.Refusal), http.StatusSeeOther)
		return
	}
	write := form.Get("access") == "write"
	if !o.validCSRF(r, form.Get("csrf_token")) {
		// A stale page or blocked cookies, or a forged post: either way the
		// merchant sees the page again, with a fresh token.
		o.consent(w, http.StatusForbidden, p, o.csrfToken(w, r), "This page expired. Check the details and choose again.", write)
		return
	}
	switch form.Get("decision") {
	case "deny":
		o.redirect(w, p.RedirectURI, o.svc.RedirectWithError(p, &oauth.Error{Code: oauth.AccessDenied, Description: "the merchant denied access"}), http.StatusSeeOther)
		return
	case "allow":
	default:
		o.consent(w, http.StatusBadRequest, p, form.Get("csrf_token"), "Choose Allow or Deny.", write)
		return
	}
	scopes := []string{oauth.ScopeRead}
	if write {
		if !slices.Contains(p.Scopes, oauth.ScopeWrite) {
			o.consent(w, http.StatusBadRequest, p, form.Get("csrf_token"), "The application asked for read-only access.", false)
			return
		}
		scopes = append(scopes, oauth.ScopeWrite)
	}
	key := strings.TrimSpace(form.Get("secret_key"))
	who, err := o.s.keys.Authenticate(r.Context(), "Bearer "+key)
	if err != nil {
		if apperr.CodeOf(err) != apperr.Unauthorized {
			o.errorPage(w, http.StatusServiceUnavailable, "The service is unavailable. Try again shortly.")
			return
		}
		msg := "That secret key is not valid. Paste a key that starts with sk_test_ or sk_live_."
		if key == "" {
			msg = "Paste a secret key to allow access."
		} else if e, ok := apperr.As(err); ok && strings.Contains(e.Message, "revoked") {
			msg = "That secret key has been revoked. Paste an active key."
		}
		o.consent(w, http.StatusBadRequest, p, form.Get("csrf_token"), msg, write)
		return
	}
	code, err := o.svc.Approve(r.Context(), p, who, scopes)
	if err != nil {
		var e *oauth.Error
		if errors.As(err, &e) {
			o.redirect(w, p.RedirectURI, o.svc.RedirectWithError(p, e), http.StatusSeeOther)
			return
		}
		o.errorPage(w, http.StatusServiceUnavailable, "The service is unavailable. Try again shortly.")
		return
	}
	o.redirect(w, p.RedirectURI, o.svc.RedirectWithCode(p, code), http.StatusSeeOther)
}

// untrusted answers a request whose client or redirect URI is wrong: never a
// redirect (it could send the browser anywhere), an error page instead.
func (o *oauthServer) untrusted(w http.ResponseWriter, r *http.Request, err error) {
	var e *oauth.Error
	if errors.As(err, &e) {
		o.errorPage(w, http.StatusBadRequest, e.Description)
		return
	}
	if apperr.CodeOf(err) != apperr.ServiceUnavailable {
		o.s.log.ErrorContext(r.Context(), "oauth authorize", "err", err, "request_id", requestID(r.Context()))
	}
	o.errorPage(w, http.StatusServiceUnavailable, "The service is unavailable. Try again shortly.")
}

// redirect sends the browser back to the client; the location carries a code
// or an error and is never logged.
func (o *oauthServer) redirect(w http.ResponseWriter, redirectURI, location string, status int) {
	pageHeaders(w, redirectURI)
	w.Header().Set("Location", location)
	w.WriteHeader(status)
}

// consent renders the consent page for p.
func (o *oauthServer) consent(w http.ResponseWriter, status int, p oauth.Pending, csrf, problem string, write bool) {
	v := consentView{
		ClientName: p.Client.DisplayName(), RedirectHost: redirectHost(p.RedirectURI), Resource: p.Resource,
		OfferWrite: slices.Contains(p.Scopes, oauth.ScopeWrite), Error: problem,
	}
	v.WriteChecked = v.OfferWrite && write
	if p.Client.Kind == oauth.KindMetadataDocument {
		if u, err := url.Parse(p.Client.ID); err == nil {
			v.ClientOrigin = u.Host
		}
	}
	q := p.Request.Values()
	q.Set("csrf_token", csrf)
	for _, k := range []string{"client_id", "redirect_uri", "response_type", "scope", "state", "code_challenge", "code_challenge_method", "resource", "csrf_token"} {
		if q.Has(k) {
			v.Hidden = append(v.Hidden, hiddenField{Name: k, Value: q.Get(k)})
		}
	}
	pageHeaders(w, p.RedirectURI)
	w.WriteHeader(status)
	_ = oauthPages.Execute(w, v)
}

// redirectHost is how the page names where the browser goes next.
func redirectHost(redirectURI string) string {
	u, err := url.Parse(redirectURI)
	if err != nil {
		return redirectURI
	}
	if h := u.Hostname(); h == "localhost" || strings.HasPrefix(h, "127.") || h == "::1" {
		return u.Host + " (an application on this computer)"
	}
	return u.Host
}

// The consent form is protected against cross-site request forgery twice:
// http.CrossOriginProtection refuses cross-site posts by Sec-Fetch-Site and
// Origin, and a double-submit token ties the form to a cookie only this
// origin can set (SameSite=Strict, HttpOnly; a __Host- cookie over https).

func (o *oauthServer) csrfCookieName() string {
	if strings.HasPrefix(o.s.baseURL, "https://") {
		return "__Host-tollgate_oauth_csrf"
	}
	return "tollgate_oauth_csrf"
}

// csrfToken returns the browser's token, setting a new one if it has none.
func (o *oauthServer) csrfToken(w http.ResponseWriter, r *http.Request) string {
	name := o.csrfCookieName()
	if c, err := r.Cookie(name); err == nil && len(c.Value) == 43 {
		return c.Value
	}
	v := id.Random(43)
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: v, Path: "/", MaxAge: 3600, HttpOnly: true,
		Secure: strings.HasPrefix(o.s.baseURL, "https://"), SameSite: http.SameSiteStrictMode,
	})
	return v
}

func (o *oauthServer) validCSRF(r *http.Request, token string) bool {
	c, err := r.Cookie(o.csrfCookieName())
	return err == nil && len(token) == 43 && subtle.ConstantTimeCompare([]byte(c.Value), []byte(token)) == 1
}
