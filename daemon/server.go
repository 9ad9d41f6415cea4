package daemon

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/gorilla/handlers"

	"github.com/tollgatehq/tollgate/daemon/web"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/chainrail"
	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/entitlements"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/store"
)

// Server serves the HTTP API over one database: the route table, the
// middleware, and the per-pool state its operations keep (the prepared key
// lookup and entitlement check, the meter cache).
type Server struct {
	cfg      Config
	db       *store.DB
	log      *slog.Logger
	limiter  ratelimit.Limiter
	keys     *auth.Keys
	ingester *metering.Ingester
	checker  *entitlements.Checker
	metrics  *metrics
	baseURL  string
	handler  http.Handler
	oauth    *oauthServer
	money    *moneyPath
	// credits applies stand-alone credit grants and debits by group commit.
	credits *credits.Batcher
	// invoices creates invoices by group commit.
	invoices *invoices.Creates
	// onchain is live mode's on-chain rail, nil without a chain.
	onchain *chainrail.Rail
	// checkout renders the hosted checkout pages.
	checkout *checkoutPages
	// portalPages renders the customer portal (portal.go); forms checks
	// its posts; webLimit is its per-link rate limit.
	portalPages *web.Pages
	forms       *web.Forms
	webLimit    web.SessionLimit
	// dashPages renders the merchant dashboard (dashboard.go).
	dashPages *web.Pages
	// mcp is the tool server's SDK handler; toolsByName its registry.
	mcp         http.Handler
	toolsByName map[string]tool
	// openapi is the API description, built once.
	openapi []byte
	// anonymous bounds the requests without a credential in flight.
	anonymous anonymousGate
}

// NewServer builds the route table and middleware over db; cfg must be
// validated, and cfg.BaseURL prefixes checkout links. The limiter may be nil
// for the in-process default.
func NewServer(cfg Config, db *store.DB, log *slog.Logger, limiter ratelimit.Limiter) *Server {
	if limiter == nil {
		limiter = ratelimit.NewMemory(cfg.Limits, nil)
	}
	s := &Server{cfg: cfg, db: db, log: log, limiter: limiter, keys: auth.NewKeys(db), ingester: metering.NewIngester(),
		checker: entitlements.NewChecker(db), metrics: newMetrics(db), baseURL: cfg.BaseURL, credits: credits.NewBatcher(db),
		invoices: invoices.NewCreates(db)}
	s.oauth = newOAuthServer(s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	if err := s.credits.GenericPlans(ctx); err != nil {
		log.Warn("credit batches run on the main pool", "error", err)
	}
	cancel()
	s.anonymous.max = int64(cfg.MaxConnections - connectionReserve(cfg.MaxConnections))
	if r, ok := cfg.LiveRail.(*chainrail.Rail); ok {
		s.onchain = r
		s.registerChainMetrics()
	}
	s.money = s.newMoney()
	s.checkout = parseCheckoutTemplate()
	s.portalPages = newPortalPages()
	s.dashPages = newDashboardPages()
	s.forms = web.NewForms(baseOrigin(cfg.BaseURL))
	s.webLimit = web.SessionLimit{Limiter: limiter, Off: !cfg.RateLimits}
	s.toolsByName = map[string]tool{}
	for _, t := range toolTable() {
		s.toolsByName[t.name] = t
	}
	s.mcp = s.newMCPHandler()
	mux := http.NewServeMux()
	for _, rt := range s.allRoutes() {
		h := s.route(rt)
		if rt.compress {
			h = handlers.CompressHandler(h)
		}
		mux.Handle(rt.pattern, h)
	}
	s.handler = s.chain(s.cleanPathsOnly(mux))
	doc, missing, err := s.OpenAPI()
	switch {
	case err != nil:
		log.Error("building the API description", "err", err)
	case len(missing) > 0:
		log.Warn("routes missing from the API description", "routes", missing)
	}
	s.openapi = doc
	return s
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// apiFunc is a REST handler: it writes its response or returns an error for
// the one error encoder.
type apiFunc func(w http.ResponseWriter, r *http.Request, p auth.Principal) error

// now is the time of a request: the wall clock, or the merchant's test
// clock for a test-mode key.
func (s *Server) now(p auth.Principal) time.Time { return s.cfg.Clock.Now().Add(p.Ahead) }

// route is one row of the route table.
type route struct {
	pattern string
	class   ratelimit.Class // "" means not rate limited
	creates bool            // a create request: subject to mode_mismatch
	api     apiFunc         // authenticated /v1 handler
	plain   http.HandlerFunc
	// missing answers a plain route whose path segment cannot name anything
	// (see checkText); nil: the JSON 404. A route with one is a page: the
	// text of its query is its own to check.
	missing http.HandlerFunc
	// compress gzips the response for clients that accept it: only routes
	// whose answers run to kilobytes, since each gzip writer costs ~1 MiB of
	// allocation that small JSON answers would pay for nothing.
	compress bool
}

// routes are the rows of the REST server that are not API operations:
// health, metrics, the hosted checkout, and the answers to paths and
// methods that name nothing.
func (s *Server) routes() []route {
	return []route{
		{pattern: "GET /healthz", plain: s.healthz},
		{pattern: "GET /readyz", plain: s.readyz},
		{pattern: "GET /metrics", plain: s.metricsHandler, compress: true},
		{pattern: "GET /checkout/{id}", plain: s.checkoutPage, missing: s.checkoutNotFound},

		{pattern: "POST /checkout/{id}/pay", plain: s.checkoutPay, missing: s.checkoutNotFound},
		// Live mode's wallet checkout (checkout_live.go).
		{pattern: "GET /checkout/{id}/authorization", plain: s.checkoutAuthorizationTerms},
		{pattern: "POST /checkout/{id}/authorization", plain: s.checkoutAuthorize},
		{pattern: "GET /checkout/{id}/revoke", plain: s.checkoutRevokePage, missing: s.checkoutNotFound},
		{pattern: "POST /checkout/{id}/revoke", plain: s.checkoutRevoke},

		// Read-only resources answer other methods with 405 in the envelope.
		{pattern: "/v1/payments", api: methodNotAllowed},
		{pattern: "/v1/subscriptions", api: methodNotAllowed},
		{pattern: "/v1/events", api: methodNotAllowed},
		{pattern: "/v1/invoices", api: methodNotAllowed},
		{pattern: "/v1/meters", api: methodNotAllowed},
		{pattern: "/v1/alerts", api: methodNotAllowed},
		{pattern: "/v1/{resource}", api: unknownResource},
		{pattern: "/v1/", api: unknownResource},
		{pattern: "/v1", api: unknownResource},
		{pattern: "/", plain: s.notFound},
	}
}

// allRoutes is the route table: the API's operations (operations.go), the
// other rows of the REST server, the authorization server's, and the tool
// server's with the API description.
func (s *Server) allRoutes() []route {
	var rows []route
	for _, o := range apiOperations() {
		rows = append(rows, o.route(s))
	}
	return append(append(append(append(append(rows, s.routes()...), s.portalRoutes()...), s.dashboardRoutes()...), s.oauthRoutes()...), s.toolRoutes()...)
}

// route adapts a table row to an http.Handler: route labelling, the checks
// of the request's text, and for API routes authentication, rate limiting
// and the mode check, in that order. Whatever is refused before the handler
// runs is refused on headers alone, its body unread (see refuse).
func (s *Server) route(rt route) http.Handler {
	segments := wildcards(rt.pattern)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if info, ok := r.Context().Value(requestKey).(*requestInfo); ok {
			info.pattern = rt.pattern
		}
		if rt.plain != nil {
			err := checkText(r, segments)
			switch {
			case err == nil:
			case rt.missing != nil && apperr.CodeOf(err) == apperr.ResourceNotFound:
				dropBody(w, r)
				rt.missing(w, r)
				return
			case rt.missing == nil:
				s.refuse(w, r, err)
				return
			}
			// A page (a route with its own not-found) reads its own query
			// and passes over what is not text.
			rt.plain(w, r)
			return
		}
		p, err := s.authenticate(r)
		if err == nil {
			err = s.admit(w, r, p, rt)
		}
		if err == nil {
			err = checkText(r, segments)
		}
		if err == nil {
			err = checkJSONBody(r)
		}
		if err != nil {
			s.refuse(w, r, err)
			return
		}
		if err := rt.api(w, r, p); err != nil {
			writeError(w, r, s.log, inPath(segments, err))
		}
	})
}

// authenticate resolves the request's API key. More than one Authorization
// header is unauthorized: a proxy that reads another than we do would
// disagree about who the caller is.
func (s *Server) authenticate(r *http.Request) (auth.Principal, error) {
	headers := r.Header.Values("Authorization")
	if len(headers) > 1 {
		return auth.Principal{}, apperr.New(apperr.Unauthorized, "more than one Authorization header; send exactly one")
	}
	return s.keys.Authenticate(r.Context(), r.Header.Get("Authorization"))
}

// refuse answers err before the request's body was read.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	dropBody(w, r)
	writeError(w, r, s.log, err)
}

// dropBody makes an answer given without reading the request's body close
// the connection after it. Otherwise the server would read what is left of
// the body before answering (to reuse the connection), and a slow or
// endless body would hold the answer until the read timeout; the read
// deadline set to now stops the server reading it after the answer too.
func dropBody(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
		_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	}
}

// admit applies the rate limit and, for create requests, the environment.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, p auth.Principal, rt route) error {
	if s.cfg.RateLimits && rt.class != "" {
		d, err := s.limiter.Allow(r.Context(), p.KeyID, rt.class)
		if err != nil {
			return err
		}
		if !d.Allowed {
			secs := int(math.Ceil(d.RetryAfter.Seconds()))
			if secs < 1 {
				secs = 1
			}
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			return apperr.New(apperr.RateLimited, "rate limit of %d requests per minute exceeded for %s; retry in %d s", d.Limit, rt.class, secs)
		}
	}
	if rt.creates {
		return s.checkMode(p)
	}
	return nil
}

// checkMode refuses a create request whose key is of the mode this server
// does not serve (--environment): mode_mismatch.
func (s *Server) checkMode(p auth.Principal) error {
	if s.cfg.Environment != "any" && string(p.Mode) != s.cfg.Environment {
		return apperr.New(apperr.ModeMismatch, "this server accepts %s-mode requests only, but the key is a %s key", s.cfg.Environment, p.Mode)
	}
	return nil
}

func methodNotAllowed(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	dropBody(w, r)
	return apperr.New(apperr.MethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.Path)
}

func unknownResource(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	dropBody(w, r)
	return apperr.New(apperr.ResourceNotFound, "no such resource: %s (list resources: payments, subscriptions, invoices, events, meters)", r.URL.Path)
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.refuse(w, r, apperr.New(apperr.ResourceNotFound, "no such path: %s", r.URL.Path))
}

// inPath makes unknown_customer a 404 on a route whose path names the
// customer: the domain reports the code alone, and the same code is 400
// when a request's body names the customer.
func inPath(segments []string, err error) error {
	e, ok := apperr.As(err)
	if !ok || e.Code != apperr.UnknownCustomer || e.Status != 0 || !slices.Contains(segments, "customer") {
		return err
	}
	return &apperr.Error{Code: e.Code, Status: http.StatusNotFound, Message: e.Message}
}
