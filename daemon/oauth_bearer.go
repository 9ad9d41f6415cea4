package daemon

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/oauth"
)

// What the tool server at /api/mcp needs to authenticate a request: a
// static secret key (through auth.Keys, with both scopes) or an OAuth access
// token issued for {base}/api/mcp (through internal/oauth), and the exact
// WWW-Authenticate challenges of RFC 6750 / RFC 9728 for each failure.

// CodeInsufficientScope is the error code of a 403 for a tool the token's
// scopes do not cover.
const CodeInsufficientScope apperr.Code = "insufficient_scope"

// MCPPrincipal is who a tool-server request acts for.
type MCPPrincipal struct {
	// Principal is the merchant and mode, and the id of the API key used
	// or, for OAuth, of the key that consented.
	auth.Principal
	// Scopes are what the credential may do: both for a static key.
	Scopes []string
	// ClientID and GrantID are set for OAuth tokens only.
	ClientID string
	GrantID  string
}

// Has reports whether the principal's credential includes scope.
func (p MCPPrincipal) Has(scope string) bool { return slices.Contains(p.Scopes, scope) }

// RateKey is the credential the rate limiter counts against: the API key,
// or for an OAuth token its merchant, mode and client together, so one
// client's many refreshed tokens share one budget.
func (p MCPPrincipal) RateKey() string {
	if p.ClientID == "" {
		return p.KeyID
	}
	return "oauth:" + p.MerchantID + ":" + string(p.Mode) + ":" + p.ClientID
}

// BearerError is a refused tool-server request: answer it with Status, the
// WWW-Authenticate Challenge and the error envelope of Err.
type BearerError struct {
	Status    int
	Challenge string
	Err       *apperr.Error
}

func (e *BearerError) Error() string { return e.Err.Error() }

// ResourceMetadataURL is where the tool server's protected resource metadata
// is served (RFC 9728), named by every challenge.
func (s *Server) ResourceMetadataURL() string {
	return s.baseURL + "/.well-known/oauth-protected-resource" + mcpPath
}

// ChallengeUnauthenticated is the WWW-Authenticate value of a request with no
// usable credential: Bearer resource_metadata="…".
func (s *Server) ChallengeUnauthenticated() string {
	return `Bearer resource_metadata=` + quote(s.ResourceMetadataURL())
}

// ChallengeInvalidToken is the WWW-Authenticate value of a request whose
// token is invalid, expired, revoked or for another resource.
func (s *Server) ChallengeInvalidToken(description string) string {
	return `Bearer error="invalid_token", error_description=` + quote(description) + `, resource_metadata=` + quote(s.ResourceMetadataURL())
}

// ChallengeInsufficientScope is the WWW-Authenticate value of a 403 for a
// request that needs scope.
func (s *Server) ChallengeInsufficientScope(scope string) string {
	return `Bearer error="insufficient_scope", scope=` + quote(scope) + `, resource_metadata=` + quote(s.ResourceMetadataURL()) +
		`, error_description=` + quote("this tool needs the "+scope+" scope")
}

// AuthenticateMCP resolves a tool-server request's credential. A missing
// or unrecognisable one, or more than one Authorization header (as the
// REST API refuses them: a proxy reading another header than we do would
// disagree about the caller), is a *BearerError 401 with
// ChallengeUnauthenticated;
// an invalid, revoked or expired key or token, or a token for another
// resource, a 401 with ChallengeInvalidToken. A database outage comes back
// as service_unavailable.
func (s *Server) AuthenticateMCP(r *http.Request) (MCPPrincipal, error) {
	headers := r.Header.Values("Authorization")
	if len(headers) > 1 {
		return MCPPrincipal{}, &BearerError{
			Status: http.StatusUnauthorized, Challenge: s.ChallengeUnauthenticated(),
			Err: apperr.New(apperr.Unauthorized, "more than one Authorization header; send exactly one"),
		}
	}
	token, ok := "", false
	if len(headers) == 1 {
		token, ok = cutBearer(headers[0])
	}
	// One space separates scheme and token, as the REST API requires.
	ok = ok && !strings.HasPrefix(token, " ") && !strings.HasPrefix(token, "\t")
	token = strings.TrimSpace(token)
	switch {
	case ok && strings.HasPrefix(token, "sk_"):
		p, err := s.keys.Authenticate(r.Context(), headers[0])
		if apperr.CodeOf(err) == apperr.Unauthorized {
			e, _ := apperr.As(err)
			return MCPPrincipal{}, s.invalidToken(e.Message)
		}
		if err != nil {
			return MCPPrincipal{}, err
		}
		return MCPPrincipal{Principal: p, Scopes: oauth.Scopes()}, nil
	case ok && oauth.LooksLikeAccessToken(token):
		g, err := s.oauth.svc.Authenticate(r.Context(), token)
		if oauth.IsTokenError(err) {
			return MCPPrincipal{}, s.invalidToken(err.Error())
		}
		if err != nil {
			return MCPPrincipal{}, err
		}
		return MCPPrincipal{Principal: auth.Principal{Scope: g.Scope, KeyID: g.KeyID, Ahead: g.Ahead}, Scopes: g.Scopes, ClientID: g.ClientID, GrantID: g.ID}, nil
	}
	return MCPPrincipal{}, &BearerError{
		Status: http.StatusUnauthorized, Challenge: s.ChallengeUnauthenticated(),
		Err: apperr.New(apperr.Unauthorized, "missing credentials: send Authorization: Bearer with a secret key (sk_test_…, sk_live_…) or an OAuth access token"),
	}
}

func (s *Server) invalidToken(description string) *BearerError {
	return &BearerError{Status: http.StatusUnauthorized, Challenge: s.ChallengeInvalidToken(description),
		Err: apperr.New(apperr.Unauthorized, "%s", description)}
}

// RequireScope returns nil when p may use scope, else a *BearerError 403
// with ChallengeInsufficientScope.
func (s *Server) RequireScope(p MCPPrincipal, scope string) error {
	if p.Has(scope) {
		return nil
	}
	return &BearerError{Status: http.StatusForbidden, Challenge: s.ChallengeInsufficientScope(scope),
		Err: &apperr.Error{Code: CodeInsufficientScope, Status: http.StatusForbidden,
			Message: "the access token does not grant " + scope + "; authorize the client again with read and write access"}}
}

// WriteBearerError answers a tool-server request refused by AuthenticateMCP
// or RequireScope: a *BearerError with its status, challenge and envelope;
// anything else through the one error encoder.
func (s *Server) WriteBearerError(w http.ResponseWriter, r *http.Request, err error) {
	var be *BearerError
	if !errors.As(err, &be) {
		writeError(w, r, s.log, err)
		return
	}
	w.Header().Set("WWW-Authenticate", be.Challenge)
	e := *be.Err
	e.Status = be.Status
	writeError(w, r, s.log, &e)
}

// cutBearer strips the "Bearer " scheme, matched case-insensitively.
func cutBearer(header string) (string, bool) {
	const scheme = "bearer "
	if len(header) < len(scheme) || !strings.EqualFold(header[:len(scheme)], scheme) {
		return "", false
	}
	return header[len(scheme):], true
}

// quote writes s as an RFC 9110 quoted-string.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
