package daemon

import (
	"log/slog"
	"sync"
	"time"
)

// rateLog writes warnings at most once per interval; the next line that is
// written says how many were suppressed, so a flood of failures (a dead
// webhook endpoint with thousands of deliveries) cannot flood the log.
type rateLog struct {
	log        *slog.Logger
	interval   time.Duration
	mu         sync.Mutex
	last       time.Time
	suppressed int
}

func newRateLog(log *slog.Logger, interval time.Duration) *rateLog {
	return &rateLog{log: log, interval: interval}
}

func (r *rateLog) warn(msg string, args ...any) {
	r.mu.Lock()
	now := time.Now()
	if now.Sub(r.last) < r.interval {
		r.suppressed++
		r.mu.Unlock()
		return
	}
	n := r.suppressed
	r.last, r.suppressed = now, 0
	r.mu.Unlock()
	if n > 0 {
		args = append(args, "suppressed_since_last", n)
	}
	r.log.Warn(msg, args...)
}

// truncate shortens s to at most n bytes (on a rune boundary) for logs and
// error messages that echo input.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
