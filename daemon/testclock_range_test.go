package daemon_test

import (
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
)

// The clock runs at most a hundred years ahead: an advance past that is
// refused, and the clock stays where it was.
func TestClockAdvanceOutOfRange(t *testing.T) {
	t.Parallel()
	f := setupMoney(t)
	for range 10 {
		f.advance("3650d")
	}
	before, err := f.c.GetTestClock(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.c.AdvanceTestClock(f.ctx, client.TestClockAdvanceParams{By: "3650d"})
	apiErr(t, err, 400, "invalid_request")
	far := before.Now.Add(3000 * 24 * time.Hour)
	_, err = f.c.AdvanceTestClock(f.ctx, client.TestClockAdvanceParams{To: &far})
	apiErr(t, err, 400, "invalid_request")
	for _, by := range []string{"213504d", "999999999d", "106752d"} {
		status, _, body := f.raw("POST", "/v1/test_helpers/clock/advance", f.key, `{"by":"`+by+`"}`)
		if status != 400 || !strings.Contains(body, "invalid_request") || !strings.Contains(body, "by") {
			t.Errorf("by %s: %d %s", by, status, body)
		}
	}
	after, err := f.c.GetTestClock(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Now.Sub(before.Now) > time.Hour {
		t.Fatalf("the clock moved from %s to %s", before.Now, after.Now)
	}
	// Up to the edge is still fine.
	f.advance("20d")
}
