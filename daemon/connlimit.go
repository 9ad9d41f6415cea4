package daemon

import (
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
)

// Connection limits: each open connection costs a file handle, and the
// process has a fixed number of them. 20,000 idle keep-alive connections
// with no key once took them all, and /healthz stopped answering. So:
//
//   - one peer address holds at most --max-connections-per-ip;
//   - the daemon holds at most --max-connections, and a new connection
//     past that closes the longest-waiting one that has no request in
//     flight (idle keep-alive, or one that has sent nothing yet) rather
//     than being refused: a waiting connection costs its client a
//     reconnect, a refused one costs the health check or the paying
//     customer behind it;
//   - requests with no credential may fill all but a reserve of the
//     connections (shedAnonymous), so health checks and authenticated
//     calls always find one to run on.

// connLimiter is the listener's side of the limits.
type connLimiter struct {
	net.Listener
	max, perIP int
	refused    *prometheus.CounterVec

	mu      sync.Mutex
	total   int
	byIP    map[string]int
	waiting map[*limitedConn]time.Time // no request in flight, since when
}

func newConnLimiter(ln net.Listener, total, perIP int, reg prometheus.Registerer) *connLimiter {
	l := &connLimiter{Listener: ln, max: total, perIP: perIP, byIP: map[string]int{}, waiting: map[*limitedConn]time.Time{},
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "tollgate_http_connections_shed_total",
			Help: "Connections closed by the connection limits: over the per-address cap, over the total with none waiting to close, or closed while waiting to make room.",
		}, []string{"reason"})}
	reg.MustRegister(l.refused)
	return l
}

// Accept returns the next connection the limits admit.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip := peerIP(c.RemoteAddr())
		if lc := l.admit(c, ip); lc != nil {
			return lc, nil
		}
		c.Close()
	}
}

func (l *connLimiter) admit(c net.Conn, ip string) *limitedConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byIP[ip] >= l.perIP {
		l.refused.WithLabelValues("per_ip").Inc()
		return nil
	}
	if l.total >= l.max {
		victim := l.longestWaiting()
		if victim == nil {
			l.refused.WithLabelValues("total").Inc()
			return nil
		}
		l.refused.WithLabelValues("made_room").Inc()
		// Counted as gone now, so that the next accept does not pick
		// another victim for the same room; the server notices the
		// closed socket and drops the connection.
		victim.releaseLocked()
		go victim.Conn.Close()
	}
	l.total++
	l.byIP[ip]++
	lc := &limitedConn{Conn: c, ip: ip, limiter: l}
	l.waiting[lc] = time.Now()
	return lc
}

// longestWaiting is the connection that has waited longest with no
// request in flight; nil when every connection is busy.
func (l *connLimiter) longestWaiting() *limitedConn {
	var victim *limitedConn
	var since time.Time
	for c, t := range l.waiting {
		if victim == nil || t.Before(since) {
			victim, since = c, t
		}
	}
	return victim
}

// connState is the http.Server's ConnState hook: it tracks which
// connections have no request in flight.
func (l *connLimiter) connState(c net.Conn, state http.ConnState) {
	lc, ok := c.(*limitedConn)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch state {
	case http.StateIdle:
		if !lc.released {
			l.waiting[lc] = time.Now()
		}
	case http.StateActive, http.StateHijacked, http.StateClosed:
		delete(l.waiting, lc)
	}
}

// limitedConn is an admitted connection; closing it gives its room back.
type limitedConn struct {
	net.Conn
	ip       string
	limiter  *connLimiter
	released bool // guarded by limiter.mu
}

func (c *limitedConn) Close() error {
	c.limiter.mu.Lock()
	c.releaseLocked()
	c.limiter.mu.Unlock()
	return c.Conn.Close()
}

// releaseLocked gives the connection's room back, once; the caller holds
// the limiter's mu.
func (c *limitedConn) releaseLocked() {
	if c.released {
		return
	}
	l := c.limiter
	c.released = true
	delete(l.waiting, c)
	l.total--
	if l.byIP[c.ip]--; l.byIP[c.ip] <= 0 {
		delete(l.byIP, c.ip)
	}
}

// peerIP is the address a connection comes from, without its port.
func peerIP(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// anonymousGate bounds the requests with no credential in flight at once.
type anonymousGate struct {
	inFlight atomic.Int64
	max      int64
}

// shedAnonymous answers 503 at once, closing the connection, to a request
// with no Authorization header (health checks aside) while the anonymous
// ones in flight fill all connections but the reserve.
func (s *Server) shedAnonymous(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" || r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
			next.ServeHTTP(w, r)
			return
		}
		g := &s.anonymous
		if g.inFlight.Add(1) > g.max {
			g.inFlight.Add(-1)
			w.Header().Set("Connection", "close")
			dropBody(w, r)
			w.Header().Set("Retry-After", strconv.Itoa(unavailableRetryAfter))
			writeError(w, r, s.log, apperr.New(apperr.ServiceUnavailable, "too many requests without a credential in flight; retry shortly"))
			return
		}
		defer g.inFlight.Add(-1)
		next.ServeHTTP(w, r)
	})
}

// connectionReserve is how many of total connections requests without a
// credential may not fill: an eighth, at least 16.
func connectionReserve(total int) int { return min(total/2, max(total/8, 16)) }

// fileHandleRoom is how many connections the process's file-handle limit
// leaves room for, keeping 512 for the database pool, webhook deliveries
// and files.
func fileHandleRoom() int {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur > 1<<30 {
		return 1 << 30
	}
	return max(int(lim.Cur)-512, 64)
}

// limitAnonymous applies the per-address rate limits to those paths:
// anonymous (all of them) and oauth_register (dynamic registration on
// top). It runs before the proxy headers are read, so the address is the
// connection's peer, which a client cannot choose.
func (s *Server) limitAnonymous(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.cfg.RateLimits || !isAnonymousPath(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		key := "ip:" + peerAddress(r.RemoteAddr)
		classes := []ratelimit.Class{ratelimit.ClassAnonymous}
		if r.Method == http.MethodPost && r.URL.Path == "/oauth/register" {
			classes = append(classes, ratelimit.ClassRegister)
		}
		for _, class := range classes {
			d, err := s.limiter.Allow(r.Context(), key, class)
			if err == nil && !d.Allowed {
				secs := max(int(math.Ceil(d.RetryAfter.Seconds())), 1)
				if strings.HasPrefix(r.URL.Path, "/portal") {
					s.portalTooMany(w, r, secs)
					return
				}
				w.Header().Set("Retry-After", strconv.Itoa(secs))
				dropBody(w, r)
				writeError(w, r, s.log, apperr.New(apperr.RateLimited,
					"rate limit of %d requests per minute exceeded for %s from this address; retry in %d s", d.Limit, class, secs))
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// isAnonymousPath reports whether anyone may call path without a
// credential and make it do work: checkout pages and payments, the OAuth
// server, and /portal (the customer portal's pages, when they come).
func isAnonymousPath(path string) bool {
	return strings.HasPrefix(path, "/checkout/") || strings.HasPrefix(path, "/oauth/") || strings.HasPrefix(path, "/portal")
}

// peerAddress is the host of a RemoteAddr.
func peerAddress(remote string) string {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		return remote
	}
	return host
}
