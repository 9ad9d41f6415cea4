package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/testclock"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// testClockOperations are test mode's per-merchant clock: read it, and
// move it forward.
func testClockOperations() []operation {
	return []operation{
		{
			pattern: "GET /v1/test_helpers/clock", class: ratelimit.ClassList, rest: (*Server).getTestClock,
			doc: apispec.Operation{ID: "getTestClock", Tag: "Test clocks", Summary: "Get the test clock",
				Doc:       "Test mode only (a live key is invalid_request).",
				Responses: ok[wire.TestClock]("The clock."), Errors: errs(apperr.InvalidRequest)},
		},
		{
			// Keyed, but not in one transaction with its work: an advance
			// runs its catch-ups in transactions of their own, under the
			// merchant's advance lock, and the record commits after them.
			pattern: "POST /v1/test_helpers/clock/advance", class: ratelimit.ClassCreate,
			doc: apispec.Operation{ID: "advanceTestClock", Tag: "Test clocks", Summary: "Advance the test clock",
				Doc:  "Moves the merchant's test-mode time forward and answers once every renewal, dunning retry, expiry and credit expiry due by then has run, in time order.",
				Body: typeOf[wire.ClockAdvanceRequest](), Responses: ok[wire.TestClock]("The clock at its new time."), Errors: invalidErrs()},
			tool: &toolSpec{name: "advance_test_clock", title: "Advance the test clock", testOnly: true,
				doc: "Test mode only: moves the merchant's test clock forward (to a date-time, or by a duration such as 30d) and runs the charges due by then: " +
					"each subscription renewal is charged (a simulated test-mode payment), with dunning retries, expiries and credit expiries; it answers once all have run. It moves no real funds.",
				in: typeOf[wire.ClockAdvanceRequest](), out: typeOf[wire.TestClock]()},
			run: func(s *Server, c *call) (any, error) {
				if err := testclock.CheckMode(c.p.Scope); err != nil {
					return nil, err
				}
				in, err := testclock.DecodeAdvance(c.args)
				if err != nil {
					return nil, err
				}
				now, err := testclock.Advance(c.ctx, s.db, c.p.Scope, in, s.cfg.Clock.Now, s.catchUps()...)
				if err != nil {
					return nil, err
				}
				return testclock.Wire(now), nil
			},
		},
	}
}

func (s *Server) getTestClock(w http.ResponseWriter, _ *http.Request, p auth.Principal) error {
	if err := testclock.CheckMode(p.Scope); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, testclock.Wire(s.now(p)))
	return nil
}
