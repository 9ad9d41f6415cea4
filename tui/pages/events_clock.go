package pages

import (
	"time"

	tea "charm.land/bubbletea/v2"
)

// The tail's clock: in test mode events are stamped by the merchant's test
// clock, so the time windows (last 1 h, 24 h, 7 d) and the rows' times are
// measured by it, not by the wall clock. Its offset is read before each
// catch-up and whenever the clock tab reads or advances the clock.

// now is the time the tail measures by: the test clock in test mode (as
// last read), else the wall clock.
func (e *Events) now() time.Time { return e.c.Now().Add(e.skew) }

// onClock takes the clock the clock tab read or advanced. When it moved
// forward, the window moves with it: events kept from before the move that
// are now older than the window are dropped, while those the advance made
// (renewals, expiries, stamped after the old time) stay and keep arriving.
func (e *Events) onClock(m clockMsg) tea.Cmd {
	if e.c.Live || m.err != nil || m.clock == nil {
		return nil
	}
	before := e.now()
	e.skew = m.clock.Now.Sub(e.c.Now())
	if !m.advanced && e.now().Sub(before) < time.Minute {
		return nil // a reading: nothing moved
	}
	if !e.caughtUp {
		return e.restart() // the catch-up under way measured by the old time
	}
	cutoff := e.now().Add(-windows[e.window].d)
	kept := e.rows[:0]
	for _, r := range e.rows {
		if r.at.Before(cutoff) && !r.at.After(before) {
			continue
		}
		kept = append(kept, r)
	}
	if len(kept) == len(e.rows) {
		return nil
	}
	clear(e.rows[len(kept):])
	e.rows = kept
	e.refilter()
	if e.autoscroll {
		e.cur.Bottom()
	}
	e.showDetail()
	return nil
}
