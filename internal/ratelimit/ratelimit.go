// Package ratelimit decides whether an API request may proceed under the
// API's per-minute rate limits.
//
// Limits apply per credential (the key passed to Allow: an API key's id, or an
// OAuth token's merchant+mode+client) and per endpoint class over a sliding
// 60-second window. Each Class is a group of endpoints with one shared
// budget: for example POST /v1/invoices, /v1/plans, /v1/credit_grants and
// /v1/entitlement_grants all draw on ClassCreate.
//
// Limiter is an interface so that a PostgreSQL- or Redis-backed
// implementation can be shared by several `serve` replicas; Memory is the
// in-process implementation.
package ratelimit

import (
	"context"
	"time"
)

// Window is the length of the sliding window every limit is counted over.
const Window = 60 * time.Second

// Class is an endpoint class: a group of endpoints sharing one budget.
type Class string

// The endpoint classes (the api guide's rate-limit table).
const (
	// ClassList covers GET /v1/{resource} list endpoints.
	ClassList Class = "list"
	// ClassCreate covers POST /v1/invoices, /v1/plans, /v1/credit_grants and
	// /v1/entitlement_grants, which share one budget.
	ClassCreate Class = "create"
	// ClassDebit covers POST /v1/credit_debits.
	ClassDebit Class = "credit_debits"
	// ClassMeterEvents covers POST /v1/meter-events.
	ClassMeterEvents Class = "meter_events"
	// ClassEntitlementCheck covers GET /v1/customers/{id}/entitlements/{feature_key}.
	ClassEntitlementCheck Class = "entitlement_checks"
	// ClassCreditBalance covers GET /v1/customers/{id}/credit_balance.
	ClassCreditBalance Class = "credit_balance"
	// ClassMCP covers POST /api/mcp.
	ClassMCP Class = "mcp"
	// ClassCatalog covers POST /v1/meters and POST /v1/features, which
	// fit none of the other classes: they get a budget of their own rather
	// than eating into the invoices/plans/grants "create" budget.
	ClassCatalog Class = "catalog"
	// ClassAnonymous covers the pages and endpoints anyone may call
	// without a credential (checkout, the OAuth server, the portal),
	// counted per peer address rather than per credential.
	ClassAnonymous Class = "anonymous"
	// ClassWebSession covers the requests of one browser session of the
	// customer portal (per link), on top of ClassAnonymous per address.
	ClassWebSession Class = "web_session"
	// ClassRegister covers OAuth dynamic client registration, per peer
	// address, on top of ClassAnonymous: each one is a stored row.
	ClassRegister Class = "oauth_register"
)

// DefaultLimits returns a new map holding the default requests-per-minute limit
// for every Class. The caller may modify it (e.g. from the config file) before
// passing it to NewMemory.
func DefaultLimits() map[Class]int {
	return map[Class]int{
		ClassList:             120,
		ClassCreate:           60,
		ClassDebit:            120,
		ClassMeterEvents:      600,
		ClassEntitlementCheck: 600,
		ClassCreditBalance:    240,
		ClassMCP:              120,
		ClassCatalog:          120,
		ClassAnonymous:        1200,
		ClassRegister:         60,
		ClassWebSession:       300,
	}
}

// Decision is the outcome of one Allow call.
type Decision struct {
	// Allowed reports whether the request may proceed. An allowed request
	// has been counted against the budget.
	Allowed bool
	// Limit is the number of requests allowed per Window for the class, or 0
	// when the class is unlimited.
	Limit int
	// Remaining is how many more requests the budget admits right now (after
	// this one, if it was allowed). It is 0 when the class is unlimited.
	Remaining int
	// RetryAfter is, for a denied request, the time until the oldest counted
	// request leaves the window and one more request would be admitted. It
	// is 0 for an allowed request.
	RetryAfter time.Duration
}

// Unlimited reports whether no limit applied to the request.
func (d Decision) Unlimited() bool { return d.Limit <= 0 }

// RetryAfterSeconds returns RetryAfter rounded up to whole seconds, at least
// 1, for the retry-after response header. It returns 0 for an allowed request.
func (d Decision) RetryAfterSeconds() int {
	if d.Allowed {
		return 0
	}
	s := int((d.RetryAfter + time.Second - 1) / time.Second)
	return max(s, 1)
}

// Limiter decides whether a request may proceed. Implementations must be safe
// for concurrent use.
type Limiter interface {
	// Allow counts one request by the credential key against class's budget
	// and reports the outcome. A class without a configured positive limit
	// is unlimited. A non-nil error means no decision could be made (e.g. a
	// shared store was unreachable); the Decision is then meaningless and the
	// caller chooses whether to fail open or closed.
	Allow(ctx context.Context, key string, class Class) (Decision, error)
	// AllowN is Allow for n requests at once: all are counted, or none.
	AllowN(ctx context.Context, key string, class Class, n int) (Decision, error)
}
