// Package clock is where the daemon and its jobs take the time from, so
// tests can set it.
//
// A merchant's test clock is an offset from this clock, kept in PostgreSQL
// (test_clocks) so replicas agree; it only ever grows. The daemon adds it in
// one place (Server.now); live mode, and test mode without a clock, read
// this clock as it is.
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
