package web

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
)

// CSRFField is the name of the form field carrying the token.
const CSRFField = "csrf_token"

// MaxForm bounds a form's body: the portal's and dashboard's forms are a
// few short fields.
const MaxForm = 16 << 10

// CSRFToken is the form token of the browser session whose secret is
// sessionToken: an HMAC of it, so it is bound to that session (a form from
// another session, or a token seen on another session's page, is
// refused), costs no storage and dies with the session. It is one token
// per session, not per form: the pages' actions are each safe to repeat
// (cancelling twice cancels once), so a replay within the session does no
// more than the customer's own second click.
func CSRFToken(sessionToken string) string {
	m := hmac.New(sha256.New, []byte(sessionToken))
	m.Write([]byte("tollgate form token v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// ErrForbidden is a form refused: from another origin, or without the
// session's token.
var errForbidden = errors.New("web: cross-origin post or missing form token")

// Forms checks posted forms: their origin and their token.
type Forms struct {
	origins *http.CrossOriginProtection
}

// NewForms returns a checker that also trusts baseOrigin (scheme://host of
// the public base URL, for a daemon behind a proxy that rewrites Host).
func NewForms(baseOrigin string) *Forms {
	c := http.NewCrossOriginProtection()
	if baseOrigin != "" {
		// An origin that does not parse is simply not trusted.
		_ = c.AddTrustedOrigin(baseOrigin)
	}
	return &Forms{origins: c}
}

// Check reads r's form (at most MaxForm bytes) and refuses it unless it is
// a POST from this site (Sec-Fetch-Site, else Origin against Host) whose
// token is sessionToken's. A refusal is for a 403.
func (f *Forms) Check(w http.ResponseWriter, r *http.Request, sessionToken string) error {
	if r.Method != http.MethodPost {
		return errForbidden
	}
	if err := f.origins.Check(r); err != nil {
		return errForbidden
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxForm)
	if err := r.ParseForm(); err != nil {
		return err
	}
	got := r.PostForm.Get(CSRFField)
	want := CSRFToken(sessionToken)
	if len(r.PostForm[CSRFField]) != 1 || subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		return errForbidden
	}
	return nil
}

// Forbidden reports whether err is Check's refusal of origin or token (as
// opposed to a form that could not be read).
func Forbidden(err error) bool { return errors.Is(err, errForbidden) }
