package web

import (
	"context"
	"math"

	"github.com/tollgatehq/tollgate/internal/ratelimit"
)

// SessionLimit counts a browser session's requests against the web
// session class (on top of the per-address limit every anonymous path
// has), so one leaked link cannot be driven from many addresses at once.
type SessionLimit struct {
	Limiter ratelimit.Limiter
	// Off turns the limit off (serve's rate limits off).
	Off bool
}

// Allow counts one request of the session keyed by key (its token's
// digest, never the token); it returns the seconds to wait when over.
// A limiter that cannot decide lets the request through, as the API's do.
func (l SessionLimit) Allow(ctx context.Context, key string) (retryAfter int, ok bool) {
	if l.Off || l.Limiter == nil {
		return 0, true
	}
	d, err := l.Limiter.Allow(ctx, "web:"+key, ratelimit.ClassWebSession)
	if err != nil || d.Allowed {
		return 0, true
	}
	return max(int(math.Ceil(d.RetryAfter.Seconds())), 1), false
}
