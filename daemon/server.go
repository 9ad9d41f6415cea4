package daemon

import (
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/handlers"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/entitlements"
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
	// checkout renders the hosted checkout pages.
	checkout *checkoutPages
}

// NewServer builds the route table and middleware over db; cfg must be
// validated, and cfg.BaseURL prefixes checkout links. The limiter may be nil
// for the in-process default.
func NewServer(cfg Config, db *store.DB, log *slog.Logger, limiter ratelimit.Limiter) *Server {
	if limiter == nil {
		limiter = ratelimit.NewMemory(cfg.Limits, nil)
	}
	s := &Server{cfg: cfg, db: db, log: log, limiter: limiter, keys: auth.NewKeys(db), ingester: metering.NewIngester(),
		checker: entitlements.NewChecker(db), metrics: newMetrics(db), baseURL: cfg.BaseURL}
	s.oauth = newOAuthServer(s)
	s.money = s.newMoney()
	s.checkout = parseCheckoutTemplate()
	mux := http.NewServeMux()
	for _, rt := range append(s.routes(), s.oauthRoutes()...) {
		h := s.route(rt)
		if rt.compress {
			h = handlers.CompressHandler(h)
		}
		mux.Handle(rt.pattern, h)
	}
	s.handler = s.chain(mux)
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
	// compress gzips the response for clients that accept it: only routes
	// whose answers run to kilobytes, since each gzip writer costs ~1 MiB of
	// allocation that small JSON answers would pay for nothing.
	compress bool
}

// routes is the one route table.
func (s *Server) routes() []route {
	return []route{
		{pattern: "GET /healthz", plain: s.healthz},
		{pattern: "GET /readyz", plain: s.readyz},
		{pattern: "GET /metrics", plain: s.metricsHandler, compress: true},
		{pattern: "GET /checkout/{id}", plain: s.checkoutPage},

		{pattern: "POST /v1/invoices", class: ratelimit.ClassCreate, creates: true, api: s.createInvoice},
		{pattern: "GET /v1/invoices", class: ratelimit.ClassList, api: s.listInvoices, compress: true},
		{pattern: "POST /v1/meters", class: ratelimit.ClassCatalog, creates: true, api: s.createMeter},
		{pattern: "GET /v1/meters", class: ratelimit.ClassList, api: s.listMeters, compress: true},
		{pattern: "POST /v1/credit_grants", class: ratelimit.ClassCreate, creates: true, api: s.createCreditGrant},
		{pattern: "POST /v1/credit_debits", class: ratelimit.ClassDebit, creates: true, api: s.createCreditDebit},
		{pattern: "GET /v1/customers/{id}/credit_balance", class: ratelimit.ClassCreditBalance, api: s.getCreditBalance},
		{pattern: "GET /v1/payments", class: ratelimit.ClassList, api: s.listPayments, compress: true},
		{pattern: "GET /v1/subscriptions", class: ratelimit.ClassList, api: s.listSubscriptionsOf, compress: true},
		{pattern: "GET /v1/events", class: ratelimit.ClassList, api: s.listEvents, compress: true},
		{pattern: "POST /v1/features", class: ratelimit.ClassCatalog, creates: true, api: s.createFeature},
		{pattern: "POST /v1/meter-events", class: ratelimit.ClassMeterEvents, creates: true, api: s.createMeterEvents},
		{pattern: "POST /v1/entitlement_grants", class: ratelimit.ClassCreate, creates: true, api: s.createEntitlementGrant},
		{pattern: "GET /v1/customers/{id}", class: ratelimit.ClassList, api: s.getCustomer},
		{pattern: "GET /v1/customers/{id}/entitlements/{feature_key}", class: ratelimit.ClassEntitlementCheck, api: s.checkEntitlement},

		// The money path (DESIGN.md): plans, reads of one object, invoice
		// voiding, subscription cancel and upcoming charge, test clocks.
		{pattern: "POST /v1/plans", class: ratelimit.ClassCreate, creates: true, api: s.createPlan},
		{pattern: "GET /v1/invoices/{id}", class: ratelimit.ClassList, api: s.getInvoice},
		{pattern: "POST /v1/invoices/{id}/void", class: ratelimit.ClassCreate, creates: true, api: s.voidInvoice},
		{pattern: "GET /v1/payments/{id}", class: ratelimit.ClassList, api: s.getPayment},
		{pattern: "GET /v1/subscriptions/{id}", class: ratelimit.ClassList, api: s.getSubscription},
		{pattern: "POST /v1/subscriptions/{id}/cancel", class: ratelimit.ClassCreate, creates: true, api: s.cancelSubscription},
		{pattern: "GET /v1/subscriptions/{id}/upcoming", class: ratelimit.ClassList, api: s.upcomingCharge},
		{pattern: "GET /v1/test_helpers/clock", class: ratelimit.ClassList, api: s.getTestClock},
		{pattern: "POST /v1/test_helpers/clock/advance", class: ratelimit.ClassCreate, creates: true, api: s.advanceTestClock},
		{pattern: "POST /checkout/{id}/pay", plain: s.checkoutPay},

		// Read-only resources answer other methods with 405 in the envelope.
		{pattern: "/v1/payments", api: methodNotAllowed},
		{pattern: "/v1/subscriptions", api: methodNotAllowed},
		{pattern: "/v1/events", api: methodNotAllowed},
		{pattern: "/v1/invoices", api: methodNotAllowed},
		{pattern: "/v1/meters", api: methodNotAllowed},
		{pattern: "/v1/{resource}", api: unknownResource},
		{pattern: "/v1/", api: unknownResource},
		{pattern: "/", plain: s.notFound},
	}
}

// route adapts a table row to an http.Handler: route labelling, and for API
// routes authentication, rate limiting and the mode check, in that order.
func (s *Server) route(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if info, ok := r.Context().Value(routeKey).(*routeInfo); ok {
			info.pattern = rt.pattern
		}
		if rt.plain != nil {
			rt.plain(w, r)
			return
		}
		p, err := s.keys.Authenticate(r.Context(), r.Header.Get("Authorization"))
		if err != nil {
			writeError(w, r, s.log, err)
			return
		}
		if err := s.admit(w, r, p, rt); err != nil {
			writeError(w, r, s.log, err)
			return
		}
		if err := rt.api(w, r, p); err != nil {
			writeError(w, r, s.log, err)
		}
	})
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
	if rt.creates && s.cfg.Environment != "any" && string(p.Mode) != s.cfg.Environment {
		return apperr.New(apperr.ModeMismatch, "this server accepts %s-mode requests only, but the key is a %s key", s.cfg.Environment, p.Mode)
	}
	return nil
}

func methodNotAllowed(_ http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	return apperr.New(apperr.MethodNotAllowed, "%s is not allowed on %s", r.Method, r.URL.Path)
}

func unknownResource(_ http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	return apperr.New(apperr.ResourceNotFound, "no such resource: %s (list resources: payments, subscriptions, invoices, events, meters)", r.URL.Path)
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, s.log, apperr.New(apperr.ResourceNotFound, "no such path: %s", r.URL.Path))
}
