package daemon_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
)

// specCheck is an http.RoundTripper that holds every /v1 exchange of the
// end-to-end tests to the daemon's own /openapi.json, with kin-openapi, a
// validator nobody here wrote: each response must match what the document
// says for its route and status, and each request the daemon accepted must
// match the document (a refused request may break it: tests send bad input
// on purpose). A route that answered success without being described fails
// the test.
type specCheck struct {
	t      testing.TB
	raw    []byte // the document
	next   http.RoundTripper
	once   sync.Once
	router routers.Router
}

// newSpecCheck fetches the daemon's /openapi.json for a checker.
func newSpecCheck(t testing.TB, url string) *specCheck {
	t.Helper()
	resp, err := http.Get(url + "/openapi.json")
	if err != nil {
		t.Fatalf("GET /openapi.json: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /openapi.json: %d %s", resp.StatusCode, raw)
	}
	return &specCheck{t: t, raw: raw, next: http.DefaultTransport}
}

// load parses and validates the document, once.
func (c *specCheck) load() routers.Router {
	c.once.Do(func() {
		doc, err := openapi3.NewLoader().LoadFromData(c.raw)
		if err != nil {
			c.t.Errorf("loading /openapi.json: %v", err)
			return
		}
		if err := doc.Validate(context.Background()); err != nil {
			c.t.Errorf("/openapi.json is not a valid OpenAPI document: %v", err)
			return
		}
		// Requests come to the daemon itself; a base URL's path is a
		// proxy's, so routes match on their paths alone.
		doc.Servers = nil
		if c.router, err = legacy.NewRouter(doc); err != nil {
			c.t.Errorf("routing /openapi.json: %v", err)
		}
	})
	return c.router
}

func (c *specCheck) RoundTrip(r *http.Request) (*http.Response, error) {
	var reqBody []byte
	if r.Body != nil {
		reqBody, _ = io.ReadAll(r.Body)
		r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	resp, err := c.next.RoundTrip(r)
	if err != nil || !strings.HasPrefix(r.URL.Path, "/v1/") || resp.Header.Get("Content-Encoding") != "" {
		return resp, err
	}
	respBody, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	router := c.load()
	if router == nil {
		return resp, nil
	}
	ctx := context.Background()
	vr := r.Clone(ctx)
	vr.Body = io.NopCloser(bytes.NewReader(reqBody))
	what := r.Method + " " + r.URL.RequestURI()
	route, params, err := router.FindRoute(vr)
	if err != nil {
		// Unknown resources are refused (404, 405) and rightly undescribed.
		if resp.StatusCode < 400 {
			c.t.Errorf("%s answered %d but is not in /openapi.json: %v", what, resp.StatusCode, err)
		}
		return resp, nil
	}
	in := &openapi3filter.RequestValidationInput{Request: vr, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	// A batch whose events were partly rejected was refused in part.
	refused := resp.StatusCode >= 400 || bytes.Contains(respBody, []byte(`"rejected":`)) && !bytes.Contains(respBody, []byte(`"rejected":0`))
	if !refused {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			c.t.Errorf("%s was accepted (%d) but breaks /openapi.json: %v\nbody: %s", what, resp.StatusCode, err, reqBody)
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(respBody)), Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		c.t.Errorf("%s: the %d answer breaks /openapi.json: %v\nbody: %s", what, resp.StatusCode, err, respBody)
	}
	return resp, nil
}

// httpClient is an HTTP client whose /v1 exchanges are checked against
// the daemon's /openapi.json.
func (b *bundle) httpClient() *http.Client {
	if b.spec == nil {
		return http.DefaultClient
	}
	return &http.Client{Transport: b.spec}
}
