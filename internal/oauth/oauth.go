// Package oauth is the OAuth 2.1 authorization server of the tool server, as
// domain and storage: clients (dynamic registration, RFC 7591, and Client ID
// Metadata Documents), single-use authorization codes bound to PKCE S256, the
// RFC 8707 resource, scopes and the API key that consented, and opaque access
// and refresh tokens with rotation, reuse detection and revocation (RFC 7009).
// Authenticate is what the resource server (/api/mcp) calls on every request.
//
// Codes and tokens are random strings with a recognisable prefix; only their
// SHA-256 hashes are stored. Nothing is cached in memory: a revoked token,
// grant, client or API key fails on the very next request. The HTTP handlers
// live in package daemon; this package never writes a response.
package oauth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/store"
)

// The scopes a token can carry. Static API keys have both.
const (
	ScopeRead  = "billing:read"
	ScopeWrite = "billing:write"
)

// Scopes lists every scope, in the order documents show them.
func Scopes() []string { return []string{ScopeRead, ScopeWrite} }

// The prefixes of the secrets this package issues. Each is followed by
// secretChars random base62 characters.
const (
	AccessTokenPrefix  = "tgat_"
	RefreshTokenPrefix = "tgrt_"
	CodePrefix         = "tgac_"
	// ClientIDPrefix starts the ids of dynamically registered clients.
	ClientIDPrefix = "tgc_"
)

// secretChars random base62 characters carry 256 bits.
const secretChars = 43

// Default lifetimes.
const (
	DefaultCodeTTL     = 2 * time.Minute
	DefaultAccessTTL   = time.Hour
	DefaultRefreshTTL  = 30 * 24 * time.Hour
	DefaultDocumentTTL = time.Hour
)

// Service is the authorization server over one database. A zero TTL means
// the default.
type Service struct {
	DB *store.DB
	// Issuer identifies the authorization server: the daemon's base URL.
	Issuer string
	// Resource is the one protected resource tokens are issued for, the
	// tool server's URL ({base}/api/mcp).
	Resource string
	// Fetch is the HTTP client Client ID Metadata Documents are fetched
	// with: the SSRF-safe client, which refuses private addresses.
	Fetch *http.Client
	// FetchErr, when set, is why no fetch client could be built; every
	// metadata-document client then fails with it.
	FetchErr error

	CodeTTL, AccessTTL, RefreshTTL time.Duration
	// DocumentTTL is how long a fetched metadata document is used before it
	// is fetched again.
	DocumentTTL time.Duration
	// MaxDocumentBytes bounds a metadata document; FetchTimeout bounds its
	// fetch.
	MaxDocumentBytes int64
	FetchTimeout     time.Duration

	mu   sync.Mutex
	stmt *sqlx.Stmt // the prepared token lookup of Authenticate
}

// NewService returns a Service with the default lifetimes and bounds.
func NewService(db *store.DB, issuer, resource string, fetch *http.Client) *Service {
	return &Service{
		DB: db, Issuer: issuer, Resource: resource, Fetch: fetch,
		CodeTTL: DefaultCodeTTL, AccessTTL: DefaultAccessTTL, RefreshTTL: DefaultRefreshTTL,
		DocumentTTL: DefaultDocumentTTL, MaxDocumentBytes: 8 << 10, FetchTimeout: 5 * time.Second,
	}
}

// Error is an OAuth protocol error: Code is one of the registered error codes
// below, Description a sentence for the developer of the client.
type Error struct {
	Code        string
	Description string
}

func (e *Error) Error() string { return e.Code + ": " + e.Description }

// The error codes of RFC 6749 §4.1.2.1 and §5.2, RFC 7591 §3.2.2, RFC 7009
// §2.2.1 and RFC 8707 §2.
const (
	InvalidRequest          = "invalid_request"
	InvalidClient           = "invalid_client"
	InvalidGrant            = "invalid_grant"
	UnauthorizedClient      = "unauthorized_client"
	UnsupportedGrantType    = "unsupported_grant_type"
	InvalidScope            = "invalid_scope"
	InvalidTarget           = "invalid_target"
	AccessDenied            = "access_denied"
	UnsupportedResponseType = "unsupported_response_type"
	InvalidRedirectURI      = "invalid_redirect_uri"
	InvalidClientMetadata   = "invalid_client_metadata"
	UnsupportedTokenType    = "unsupported_token_type"
)

func oerr(code, format string, args ...any) *Error {
	return &Error{Code: code, Description: fmt.Sprintf(format, args...)}
}

// newSecret returns prefix followed by 256 random bits in base62.
func newSecret(prefix string) string { return prefix + id.Random(secretChars) }

// hashSecret is what is stored of a code or token.
func hashSecret(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:]
}

// hasShape reports whether s is prefix followed by secretChars base62
// characters: anything else is rejected before any lookup.
func hasShape(s, prefix string) bool {
	if len(s) != len(prefix)+secretChars || !strings.HasPrefix(s, prefix) {
		return false
	}
	for _, c := range []byte(s[len(prefix):]) {
		if !(c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// normalizeScopes returns the known scopes among s in canonical order, and
// write implies read: a client that may create may also read back.
func normalizeScopes(s []string) []string {
	var out []string
	if slices.Contains(s, ScopeRead) || slices.Contains(s, ScopeWrite) {
		out = append(out, ScopeRead)
	}
	if slices.Contains(s, ScopeWrite) {
		out = append(out, ScopeWrite)
	}
	return out
}

// ScopeString is scopes joined as the space-separated scope parameter.
func ScopeString(scopes []string) string { return strings.Join(scopes, " ") }

// ctxTimeout bounds a fetch.
func ctxTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		d = 5 * time.Second
	}
	return context.WithTimeout(ctx, d)
}

// seconds is d in whole seconds for SQL intervals, at least 1.
func seconds(d time.Duration) int64 {
	if s := int64(d / time.Second); s > 0 {
		return s
	}
	return 1
}

func (s *Service) codeTTL() time.Duration    { return orDefault(s.CodeTTL, DefaultCodeTTL) }
func (s *Service) accessTTL() time.Duration  { return orDefault(s.AccessTTL, DefaultAccessTTL) }
func (s *Service) refreshTTL() time.Duration { return orDefault(s.RefreshTTL, DefaultRefreshTTL) }
func (s *Service) documentTTL() time.Duration {
	return orDefault(s.DocumentTTL, DefaultDocumentTTL)
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
