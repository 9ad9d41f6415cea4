// Package tenant names whose data a query touches: one merchant in one mode.
// Every domain function takes a Scope and every query filters on both parts.
package tenant

// Mode separates test data from live data.
type Mode string

// The two modes, selected by the API key's prefix.
const (
	Test Mode = "test"
	Live Mode = "live"
)

// Valid reports whether m is test or live.
func (m Mode) Valid() bool { return m == Test || m == Live }

// Scope is one merchant in one mode.
type Scope struct {
	MerchantID string
	Mode       Mode
}

// Livemode is the `livemode` flag objects carry on the wire.
func (s Scope) Livemode() bool { return s.Mode == Live }
