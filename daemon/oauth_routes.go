package daemon

import (
	"errors"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/tollgatehq/tollgate/internal/oauth"
	"github.com/tollgatehq/tollgate/internal/ssrf"
)

// This file and the other oauth_*.go files are the HTTP side of the OAuth 2.1
// authorization server that guards the tool server at /api/mcp: discovery
// documents (RFC 8414, RFC 9728), registration (RFC 7591), the consent page,
// the token and revocation endpoints, and the bearer check /api/mcp makes.
// Everything they decide is in internal/oauth. Codes and tokens are never
// logged: the request log records paths without queries, and nothing here
// logs a form or a body.

// mcpPath is the tool server's path: the one protected resource.
const mcpPath = "/api/mcp"

// oauthServer holds what the OAuth handlers share.
type oauthServer struct {
	s   *Server
	svc *oauth.Service
	// xorigin refuses cross-site submissions of the consent form.
	xorigin *http.CrossOriginProtection
}

// newOAuthServer builds the authorization server of s. Metadata documents
// are fetched through the SSRF-safe client with the webhook settings: the
// same --allow-insecure-webhooks admits private addresses (development,
// tests) and --webhook-ca-file adds trusted roots.
func newOAuthServer(s *Server) *oauthServer {
	fetch, err := ssrf.NewClient(ssrf.Options{
		AllowPrivate: s.cfg.AllowInsecureWebhooks, CAFile: s.cfg.WebhookCAFile, Timeout: 5 * time.Second, MaxConnsPerHost: 2,
	})
	svc := oauth.NewService(s.db, s.baseURL, s.baseURL+mcpPath, fetch)
	svc.FetchErr = err
	return &oauthServer{s: s, svc: svc, xorigin: http.NewCrossOriginProtection()}
}

// oauthRoutes are the authorization server's rows of the route table. None
// is rate limited per credential: they are reached before there is one.
func (s *Server) oauthRoutes() []route {
	o := s.oauth
	rows := []route{
		{pattern: "GET /.well-known/oauth-authorization-server", plain: cors(o.serverMetadata)},
		{pattern: "GET /.well-known/oauth-protected-resource", plain: cors(o.resourceMetadata)},
		{pattern: "GET /.well-known/oauth-protected-resource" + mcpPath, plain: cors(o.resourceMetadata)},
		{pattern: "POST /oauth/register", plain: cors(o.register)},
		{pattern: "GET /oauth/authorize", plain: o.authorizePage},
		{pattern: "POST /oauth/authorize", plain: o.authorizeSubmit},
		{pattern: "POST /oauth/token", plain: cors(o.token)},
		{pattern: "POST /oauth/revoke", plain: cors(o.revoke)},
	}
	// Browser-based clients (the MCP Inspector) call these cross-origin.
	for _, p := range []string{"/.well-known/oauth-authorization-server", "/.well-known/oauth-protected-resource",
		"/.well-known/oauth-protected-resource" + mcpPath, "/oauth/register", "/oauth/token", "/oauth/revoke"} {
		rows = append(rows, route{pattern: "OPTIONS " + p, plain: preflight})
	}
	return rows
}

// serverMetadata is the authorization server metadata (RFC 8414).
//
// A map, not the SDK's oauthex.AuthServerMeta: that type always writes
// jwks_uri, empty here (no signed tokens), and clients that check
// metadata URLs refuse an empty one.
func (o *oauthServer) serverMetadata(w http.ResponseWriter, _ *http.Request) {
	base := o.s.baseURL
	w.Header().Set("Cache-Control", "public, max-age=300")
	writeJSON(w, http.StatusOK, serverMeta{AuthServerMeta: oauthex.AuthServerMeta{
		Issuer:                                     base,
		AuthorizationEndpoint:                      base + "/oauth/authorize",
		TokenEndpoint:                              base + "/oauth/token",
		RegistrationEndpoint:                       base + "/oauth/register",
		RevocationEndpoint:                         base + "/oauth/revoke",
		ScopesSupported:                            oauth.Scopes(),
		ResponseTypesSupported:                     []string{"code"},
		ResponseModesSupported:                     []string{"query"},
		GrantTypesSupported:                        []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported:          []string{"none"},
		RevocationEndpointAuthMethodsSupported:     []string{"none"},
		CodeChallengeMethodsSupported:              []string{"S256"},
		AuthorizationResponseIssParameterSupported: true,
		ClientIDMetadataDocumentSupported:          true,
	}})
}

// serverMeta is the SDK's typed metadata without its jwks_uri, which the
// SDK always writes: tokens here are opaque, so there are no keys to
// publish, and an empty URL is not one. The shallower field wins.
type serverMeta struct {
	oauthex.AuthServerMeta
	JWKSURI string `json:"jwks_uri,omitempty"`
}

// resourceMetadata is the protected resource metadata of the tool server
// (RFC 9728), served at the root and at the tool server's path.
func (o *oauthServer) resourceMetadata(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Cache-Control", "public, max-age=300")
	writeJSON(w, http.StatusOK, &oauthex.ProtectedResourceMetadata{
		Resource:               o.svc.Resource,
		AuthorizationServers:   []string{o.s.baseURL},
		ScopesSupported:        oauth.Scopes(),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "tollgate billing tools",
	})
}

// cors lets any origin read h's answers: they carry no cookies and are
// meant for any client.
func cors(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Access-Control-Expose-Headers", "WWW-Authenticate, wc-version, request-id")
		h(w, r)
	}
}

func preflight(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, MCP-Protocol-Version")
	h.Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusNoContent)
}

// oauthErrorBody is an RFC 6749 §5.2 (and RFC 7591 §3.2.2) error.
type oauthErrorBody struct {
	Error       string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

// writeOAuthError answers a token, revocation or registration request that
// failed: an *oauth.Error as RFC 6749 JSON (400, or 401 for
// invalid_client), anything else (database down, a bug) as the daemon's
// error envelope.
func (o *oauthServer) writeOAuthError(w http.ResponseWriter, r *http.Request, err error) {
	var e *oauth.Error
	if !errors.As(err, &e) {
		writeError(w, r, o.s.log, err)
		return
	}
	status := http.StatusBadRequest
	if e.Code == oauth.InvalidClient {
		status = http.StatusUnauthorized
		w.Header().Set("WWW-Authenticate", `Basic realm="tollgate"`)
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, status, oauthErrorBody{Error: e.Code, Description: e.Description})
}
