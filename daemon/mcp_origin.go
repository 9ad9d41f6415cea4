package daemon

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

// The tool server validates Origin, as the MCP transport asks of servers
// against DNS rebinding: a page on another site that a browser lets reach
// the daemon (a loopback one, typically) must not drive it. A request
// without Origin comes from no browser and passes. A browser's is allowed
// when it is the base URL's own origin, a loopback origin while the base
// URL is loopback, or one named by --mcp-allowed-origins; any other is
// 403. CORS answers name the allowed origin, so a browser refuses the rest
// by itself too.

// codeForbiddenOrigin is the error code of a refused Origin.
const codeForbiddenOrigin apperr.Code = "forbidden_origin"

// mcpOriginAllowed reports whether a request's Origin may use the tool
// server ("" is no browser's: allowed).
func (s *Server) mcpOriginAllowed(origin string) bool {
	if origin == "" {
		return true
	}
	o, ok := parseOrigin(origin)
	if !ok {
		return false
	}
	base, _ := parseOrigin(s.baseURL)
	if o == base {
		return true
	}
	if isLoopbackHost(hostOf(base)) && isLoopbackHost(hostOf(o)) {
		return true
	}
	for _, a := range s.cfg.MCPAllowedOrigins {
		if allowed, ok := parseOrigin(a); ok && allowed == o {
			return true
		}
	}
	return false
}

// parseOrigin is an origin (or URL) as scheme://host[:port], lower case,
// the default port left out.
func parseOrigin(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return u.Scheme + "://" + host, true
}

// hostOf is an origin's host name, without port or brackets.
func hostOf(origin string) string {
	u, err := url.Parse(origin)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

func isLoopbackHost(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// mcpCORS wraps a tool-server handler: a refused Origin gets 403 in the
// envelope; an allowed one is named in the CORS headers.
func (s *Server) mcpCORS(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if !s.mcpOriginAllowed(origin) {
			s.refuse(w, r, &apperr.Error{Code: codeForbiddenOrigin, Status: http.StatusForbidden,
				Message: "Origin " + truncate(origin, 200) + " may not use the tool server; the operator allows origins with serve --mcp-allowed-origins"})
			return
		}
		w.Header().Add("Vary", "Origin")
		w.Header().Set("Access-Control-Expose-Headers", "WWW-Authenticate, wc-version, request-id")
		if origin != "" {
			w.Header().Set("Access-Control-Allow-Origin", origin)
		}
		h(w, r)
	}
}

// mcpPreflight answers a CORS preflight of the tool server, from an
// allowed Origin (mcpCORS refuses the others).
func mcpPreflight(w http.ResponseWriter, _ *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID")
	h.Set("Access-Control-Max-Age", "86400")
	w.WriteHeader(http.StatusNoContent)
}
