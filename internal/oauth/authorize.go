package oauth

import (
	"context"
	"net/url"
	"slices"
	"strings"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/store"
)

// AuthorizationRequest is an authorization request (RFC 6749 §4.1.1, with
// PKCE, RFC 7636, and the resource indicator of RFC 8707). An empty
// parameter counts as absent.
type AuthorizationRequest struct {
	ClientID            string
	RedirectURI         string
	ResponseType        string
	State               string
	Scope               string
	CodeChallenge       string
	CodeChallengeMethod string
	Resource            string
}

// Bounds on authorization request parameters.
const (
	MaxStateBytes    = 1024
	MaxScopeBytes    = 1000
	MaxResourceBytes = 2000
)

// authorizationParams are the parameters an AuthorizationRequest reads.
var authorizationParams = [...]string{"client_id", "redirect_uri", "response_type", "state", "scope", "code_challenge", "code_challenge_method", "resource"}

// Values returns the request as form values (the consent form carries them
// from the page to its submission).
func (r AuthorizationRequest) Values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{
		"client_id": r.ClientID, "redirect_uri": r.RedirectURI, "response_type": r.ResponseType, "state": r.State,
		"scope": r.Scope, "code_challenge": r.CodeChallenge, "code_challenge_method": r.CodeChallengeMethod, "resource": r.Resource,
	} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v
}

// ParseAuthorizationRequest reads an authorization request from q. It fails
// with invalid_request when a parameter is given twice (RFC 6749 §3.1) or is
// too long; the request read so far is returned either way.
func ParseAuthorizationRequest(q url.Values) (AuthorizationRequest, error) {
	r := AuthorizationRequest{
		ClientID: q.Get("client_id"), RedirectURI: q.Get("redirect_uri"), ResponseType: q.Get("response_type"),
		State: q.Get("state"), Scope: q.Get("scope"), CodeChallenge: q.Get("code_challenge"),
		CodeChallengeMethod: q.Get("code_challenge_method"), Resource: q.Get("resource"),
	}
	for _, k := range authorizationParams {
		if len(q[k]) > 1 {
			return r, oerr(InvalidRequest, "%s is given more than once", k)
		}
	}
	switch {
	case len(r.State) > MaxStateBytes:
		r.State = ""
		return r, oerr(InvalidRequest, "state may be at most %d bytes", MaxStateBytes)
	case len(r.Scope) > MaxScopeBytes:
		return r, oerr(InvalidRequest, "scope may be at most %d bytes", MaxScopeBytes)
	case len(r.Resource) > MaxResourceBytes:
		return r, oerr(InvalidRequest, "resource may be at most %d bytes", MaxResourceBytes)
	}
	return r, nil
}

// Pending is an authorization request whose client and redirect URI are
// valid, so that it is answered by redirecting back to the client: with
// Refusal when the rest of the request is wrong, else after the merchant's
// decision.
type Pending struct {
	Request AuthorizationRequest
	Client  Client
	// RedirectURI is where the answer goes: the request's redirect_uri, or
	// the client's only registered one when the request names none.
	RedirectURI string
	// Refusal, when set, is the error to redirect with; nothing is asked.
	Refusal *Error
	// Scopes is what the client asked for, normalised: the most the
	// merchant can grant. Resource is the resource the tokens will serve.
	Scopes   []string
	Resource string
}

// CheckAuthorization validates an authorization request. An error means the
// client or the redirect URI cannot be trusted, so the answer must not be a
// redirect (RFC 6749 §4.1.2.1): invalid_request or invalid_client, or a
// database error. Otherwise the Pending says where to answer and whether
// the request is refused (unsupported_response_type, invalid_request for
// PKCE, invalid_scope, invalid_target).
func (s *Service) CheckAuthorization(ctx context.Context, q url.Values) (Pending, error) {
	if len(q["client_id"]) > 1 || len(q["redirect_uri"]) > 1 {
		return Pending{}, oerr(InvalidRequest, "client_id and redirect_uri may each be given once")
	}
	if err := formText(q); err != nil {
		return Pending{}, err
	}
	c, err := s.Client(ctx, q.Get("client_id"))
	if err != nil {
		return Pending{}, err
	}
	redirect, ok := MatchRedirectURI(c.RedirectURIs, q.Get("redirect_uri"))
	if !ok {
		if q.Get("redirect_uri") == "" {
			return Pending{}, oerr(InvalidRequest, "redirect_uri is required: the client has several registered")
		}
		return Pending{}, oerr(InvalidRequest, "redirect_uri %q is not registered for this client", clip(q.Get("redirect_uri")))
	}
	req, perr := ParseAuthorizationRequest(q)
	p := Pending{Request: req, Client: c, RedirectURI: redirect}
	if perr != nil {
		p.Refusal = perr.(*Error)
		return p, nil
	}
	p.Scopes, p.Resource, p.Refusal = s.checkRequest(req)
	return p, nil
}

// checkRequest checks what follows client and redirect URI, in the order of
// RFC 6749 §4.1.2.1's list.
func (s *Service) checkRequest(r AuthorizationRequest) ([]string, string, *Error) {
	switch {
	case r.ResponseType == "":
		return nil, "", oerr(InvalidRequest, "response_type is required (code)")
	case r.ResponseType != "code":
		return nil, "", oerr(UnsupportedResponseType, "response_type must be code")
	case r.CodeChallenge == "":
		return nil, "", oerr(InvalidRequest, "code_challenge is required: PKCE with S256")
	case r.CodeChallengeMethod != "S256":
		return nil, "", oerr(InvalidRequest, "code_challenge_method must be S256")
	case !validChallenge(r.CodeChallenge):
		return nil, "", oerr(InvalidRequest, "code_challenge must be the base64url SHA-256 of the code verifier (43 characters)")
	}
	scopes := Scopes()
	if r.Scope != "" {
		scopes = normalizeScopes(strings.Fields(r.Scope))
		if len(scopes) == 0 {
			return nil, "", oerr(InvalidScope, "scope must include billing:read or billing:write")
		}
	}
	resource := s.Resource
	if r.Resource != "" && r.Resource != s.Resource {
		return nil, "", oerr(InvalidTarget, "resource must be %s", s.Resource)
	}
	return scopes, resource, nil
}

// validChallenge reports whether c has the shape of an S256 challenge: 43
// base64url characters without padding.
func validChallenge(c string) bool {
	if len(c) != 43 {
		return false
	}
	for _, b := range []byte(c) {
		if !(b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-' || b == '_') {
			return false
		}
	}
	return true
}

// Approve records the merchant's consent: the key that signed in (which
// fixes merchant and mode) grants scopes, a non-empty subset of p.Scopes.
// It returns the authorization code, valid once for CodeTTL. Fails with
// invalid_scope.
func (s *Service) Approve(ctx context.Context, p Pending, who auth.Principal, scopes []string) (string, error) {
	if p.Refusal != nil {
		return "", p.Refusal
	}
	scopes = normalizeScopes(scopes)
	if len(scopes) == 0 {
		return "", oerr(InvalidScope, "no scope granted")
	}
	for _, sc := range scopes {
		if !slices.Contains(p.Scopes, sc) {
			return "", oerr(InvalidScope, "%s was not requested", sc)
		}
	}
	code := newSecret(CodePrefix)
	_, err := s.DB.ExecContext(ctx, `INSERT INTO oauth_codes (code_hash, merchant_id, mode, key_id, client_id, redirect_uri,
		redirect_uri_given, code_challenge, resource, scopes, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, now() + make_interval(secs => $11))`,
		hashSecret(code), who.MerchantID, who.Mode, who.KeyID, p.Client.ID, p.RedirectURI,
		p.Request.RedirectURI != "", p.Request.CodeChallenge, p.Resource, pq.StringArray(scopes), seconds(s.codeTTL()))
	if err != nil {
		return "", store.Translate(err)
	}
	return code, nil
}

// RedirectWithCode returns where to send the browser after consent: the
// redirect URI with code, state and iss (RFC 9207).
func (s *Service) RedirectWithCode(p Pending, code string) string {
	return s.respond(p, url.Values{"code": {code}})
}

// RedirectWithError returns where to send the browser for a refused or
// denied request: the redirect URI with error, error_description, state and
// iss.
func (s *Service) RedirectWithError(p Pending, e *Error) string {
	return s.respond(p, url.Values{"error": {e.Code}, "error_description": {e.Description}})
}

func (s *Service) respond(p Pending, params url.Values) string {
	if p.Request.State != "" {
		params.Set("state", p.Request.State)
	}
	params.Set("iss", s.Issuer)
	u, err := url.Parse(p.RedirectURI)
	if err != nil {
		return p.RedirectURI // validated at registration; unreachable
	}
	q := u.Query()
	for k, vs := range params {
		q[k] = vs
	}
	u.RawQuery = q.Encode()
	return u.String()
}
