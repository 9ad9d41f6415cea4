package daemon

import (
	"net/http"
	"path"
	"regexp"
	"strings"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
)

// A request's own text (path segments, query parameters) reaches SQL as
// text, which PostgreSQL refuses when it holds NUL or invalid UTF-8. Such
// text can name nothing that is stored (bodies that carry it are refused
// when decoded), so it is answered here, for every route, before any
// handler: a path segment as the endpoint's not-found, a query parameter as
// invalid_request naming it. JSON bodies are package fields' to check.

var wildcardRE = regexp.MustCompile(`\{([^}.]+)(?:\.\.\.)?\}`)

// wildcards returns the names of a route pattern's wildcards.
func wildcards(pattern string) []string {
	var names []string
	for _, m := range wildcardRE.FindAllStringSubmatch(pattern, -1) {
		names = append(names, m[1])
	}
	return names
}

// checkText checks the path segments named by segments and every query
// parameter.
func checkText(r *http.Request, segments []string) error {
	for _, name := range segments {
		if fields.TextProblem(r.PathValue(name)) != "" {
			return segmentNotFound(name)
		}
	}
	if r.URL.RawQuery == "" {
		return nil
	}
	for k, vs := range r.URL.Query() {
		if p := fields.TextProblem(k); p != "" {
			return apperr.New(apperr.InvalidRequest, "a query parameter's name %s", p)
		}
		for _, v := range vs {
			if p := fields.TextProblem(v); p != "" {
				return apperr.Field(truncate(k, 64), "%s", p)
			}
		}
	}
	return nil
}

// segmentNotFound is the answer to a path whose wildcard name holds text
// that cannot name anything: the endpoint's own not-found code.
func segmentNotFound(name string) error {
	switch name {
	case "customer":
		return &apperr.Error{Code: apperr.UnknownCustomer, Status: http.StatusNotFound, Message: "no such customer (the id in the path is not valid text)"}
	case "feature_key":
		return apperr.New(apperr.UnknownFeature, "no such feature (the key in the path is not valid text)")
	}
	return apperr.New(apperr.ResourceNotFound, "no such %s (the path segment is not valid text)", name)
}

// cleanPathsOnly answers a path that is not clean ("//v1/invoices",
// "/v1/./invoices") with the 404 envelope, naming the clean path, where
// http.ServeMux would redirect with an HTML body: every answer of the API is
// its own, in its own format.
func (s *Server) cleanPathsOnly(mux http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			if clean := cleanPath(r.URL.Path); clean != r.URL.Path {
				s.refuse(w, r, apperr.New(apperr.ResourceNotFound, "no such path: %s (paths are not rewritten; the clean form is %s)", r.URL.Path, clean))
				return
			}
		}
		mux.ServeHTTP(w, r)
	})
}

// cleanPath is the path http.ServeMux would redirect p to: rooted, without
// "." or ".." elements or repeated slashes, its trailing slash kept.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if strings.HasSuffix(p, "/") && np != "/" {
		np += "/"
	}
	return np
}
