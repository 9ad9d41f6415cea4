package daemon

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/felixge/httpsnoop"
	"github.com/gorilla/handlers"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/tollgatehq/tollgate/daemon/web"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/store"
)

// APIVersion is sent as wc-version on every response, errors included.
const APIVersion = "2026-07-01"

// statusClientClosed is the status logs and metrics give a request whose
// client hung up before its answer (nginx's 499): whatever was written,
// nobody read it.
const statusClientClosed = 499

type ctxKey int

// requestKey is the context key of a request's *requestInfo.
const requestKey ctxKey = 0

// requestInfo is a request's id, and its route pattern, filled in by the
// matched route so the outer middleware can label logs and metrics with
// the pattern rather than the raw path. One context value holds both:
// each value is an allocation and a step of every lookup, per request.
type requestInfo struct{ id, pattern string }

func requestID(ctx context.Context) string {
	if info, ok := ctx.Value(requestKey).(*requestInfo); ok {
		return info.id
	}
	return ""
}

// metrics are one server's Prometheus collectors, on a registry of its own
// so several servers can run in one process (tests).
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics(db *store.DB) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_http_requests_total", Help: "HTTP requests by route, method and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "tollgate_http_request_duration_seconds", Help: "HTTP request latency by route and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method"}),
	}
	m.registry.MustRegister(m.requests, m.latency,
		collectors.NewDBStatsCollector(db.DB.DB, "tollgate"),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// instrument is the outermost middleware: it assigns the request id, sets
// wc-version, and records one log line and the metrics per request.
func (s *Server) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rid := "req_" + id.Random(20)
		info := &requestInfo{id: rid, pattern: "unmatched"}
		ctx := context.WithValue(r.Context(), requestKey, info)
		w.Header().Set("request-id", rid)
		w.Header().Set("wc-version", APIVersion)
		start := time.Now()
		m := httpsnoop.CaptureMetrics(next, w, r.WithContext(ctx))
		elapsed := time.Since(start)
		method := methodLabel(r.Method)
		status, level, msg := m.Code, slog.LevelInfo, "request"
		switch {
		case m.Code >= 500 && ctx.Err() != nil:
			// The client hung up before its answer, and the failure is
			// that: no fault of the server's, so no 5xx for alerts to
			// count, anyone being able to hang up.
			status, msg = statusClientClosed, "request cancelled by the client"
		case m.Code >= 500:
			level = slog.LevelError
		}
		s.metrics.requests.WithLabelValues(info.pattern, method, strconv.Itoa(status)).Inc()
		s.metrics.latency.WithLabelValues(info.pattern, method).Observe(elapsed.Seconds())
		logRequest(ctx, s.log.Handler(), level, msg,
			slog.String("request_id", rid), slog.String("method", truncate(r.Method, 32)), slog.String("path", truncate(loggedPath(r.URL.Path), 256)),
			slog.String("route", info.pattern), slog.Int("status", status), slog.Int64("bytes", m.Written),
			slog.Duration("duration", elapsed), slog.String("remote", r.RemoteAddr))
	})
}

// logRequest is Logger.LogAttrs without the caller's program counter,
// which LogAttrs finds by walking the stack on every call and only a
// handler that prints the source reads: serve's does not, and the request
// line is the one logged per request.
func logRequest(ctx context.Context, h slog.Handler, level slog.Level, msg string, attrs ...slog.Attr) {
	if !h.Enabled(ctx, level) {
		return
	}
	rec := slog.NewRecord(time.Now(), level, msg, 0)
	rec.AddAttrs(attrs...)
	_ = h.Handle(ctx, rec)
}

// loggedPath is a request's path as the log shows it: a portal link's
// token and a dashboard setup link's are bearer secrets (whoever has one
// acts as its customer or sets its user's password), so the segment
// after /portal/ or /dashboard/setup/ reads {token}.
func loggedPath(p string) string {
	for _, prefix := range []string{"/portal/", "/dashboard/setup/"} {
		i := strings.Index(p, prefix)
		if i < 0 {
			continue
		}
		start := i + len(prefix)
		_, tail, found := strings.Cut(p[start:], "/")
		if found {
			tail = "/" + tail
		}
		return p[:start] + "{token}" + tail
	}
	return p
}

// methodLabel is the method as a metrics label: a request can name any
// method at all, and each new label value is a series kept forever, so
// methods other than HTTP's own fold into one value. (Routes are patterns
// of the table already, "unmatched" otherwise, and statuses three digits.)
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}

// chain wraps the route table in the middleware stack, outermost first:
// instrumentation, the bound on requests without a credential, panic
// recovery, the per-address rate limits, proxy headers. Compression is per route
// (see route.compress).
func (s *Server) chain(mux http.Handler) http.Handler {
	h := s.limitAnonymous(handlers.ProxyHeaders(mux))
	h = handlers.RecoveryHandler(handlers.RecoveryLogger(recoveryLogger{s.log}), handlers.PrintRecoveryStack(true))(h)
	return s.instrument(s.pageHeaders(s.shedAnonymous(h)))
}

// pageHeaders gives every answer under /portal the pages' security
// headers before anything else runs, so a refusal by the middleware (rate
// limit, shedding) carries them too.
func (s *Server) pageHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/portal" || strings.HasPrefix(r.URL.Path, "/portal/") {
			web.SetHeaders(w.Header(), s.portalPages.Policy())
		}
		next.ServeHTTP(w, r)
	})
}

type recoveryLogger struct{ log *slog.Logger }

func (l recoveryLogger) Println(v ...any) { l.log.Error("panic", "detail", v) }
