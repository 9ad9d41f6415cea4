// Package clock is where the daemon and its jobs take the time from, so
// tests can fix it and test mode can run a merchant's time ahead of the
// wall clock (a test clock).
//
// A merchant's test clock is an offset from the wall clock, kept in
// PostgreSQL (test_clocks) so replicas agree; it only ever grows. Live mode,
// and test mode without a clock, read the wall clock.
package clock

import "time"

// Clock tells the time.
type Clock interface {
	Now() time.Time
}

// System is the wall clock.
type System struct{}

// Now returns time.Now().
func (System) Now() time.Time { return time.Now() }

// Fixed is a clock that always says the same time (tests).
type Fixed time.Time

// Now returns the fixed time.
func (f Fixed) Now() time.Time { return time.Time(f) }

// Offset is a clock running ahead of another by a fixed amount: a merchant's
// test clock.
type Offset struct {
	Base  Clock
	Ahead time.Duration
}

// Now returns the base clock's time plus the offset.
func (o Offset) Now() time.Time { return o.Base.Now().Add(o.Ahead) }
