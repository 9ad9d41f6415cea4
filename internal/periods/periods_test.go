package periods

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // America/New_York for the daylight-saving test, whatever the machine has

	"github.com/tollgatehq/tollgate/internal/apperr"
)

func date(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// boundaries checks Boundary(anchor, interval, days, n) for n = 0, 1, … and
// that Index puts each boundary, and the instant before it, in the right
// period.
func boundaries(t *testing.T, anchor string, interval string, days int, want []string) {
	t.Helper()
	a := date(anchor)
	for n, w := range want {
		got := Boundary(a, interval, days, n)
		if !got.Equal(date(w)) || got.Location() != time.UTC {
			t.Errorf("%s %s: Boundary(%d) = %s; want %s", anchor, interval, n, got.Format(time.RFC3339Nano), w)
		}
		if i := Index(a, interval, days, got); i != n {
			t.Errorf("%s %s: Index(Boundary(%d)) = %d", anchor, interval, n, i)
		}
		if i := Index(a, interval, days, got.Add(-time.Nanosecond)); i != n-1 {
			t.Errorf("%s %s: Index(Boundary(%d) − 1ns) = %d; want %d", anchor, interval, n, i, n-1)
		}
	}
}

func TestMonthFromJan31(t *testing.T) {
	t.Parallel()
	boundaries(t, "2026-01-31T10:30:15.5Z", Month, 0, []string{
		"2026-01-31T10:30:15.5Z", "2026-02-28T10:30:15.5Z", "2026-03-31T10:30:15.5Z", "2026-04-30T10:30:15.5Z",
		"2026-05-31T10:30:15.5Z", "2026-06-30T10:30:15.5Z", "2026-07-31T10:30:15.5Z", "2026-08-31T10:30:15.5Z",
		"2026-09-30T10:30:15.5Z", "2026-10-31T10:30:15.5Z", "2026-11-30T10:30:15.5Z", "2026-12-31T10:30:15.5Z",
		"2027-01-31T10:30:15.5Z", "2027-02-28T10:30:15.5Z",
	})
	boundaries(t, "2028-01-31T00:00:00Z", Month, 0, []string{
		"2028-01-31T00:00:00Z", "2028-02-29T00:00:00Z", "2028-03-31T00:00:00Z", "2028-04-30T00:00:00Z",
	})
}

func TestMonthFromFeb29(t *testing.T) {
	t.Parallel()
	boundaries(t, "2028-02-29T23:59:59Z", Month, 0, []string{
		"2028-02-29T23:59:59Z", "2028-03-29T23:59:59Z", "2028-04-29T23:59:59Z", "2028-05-29T23:59:59Z",
		"2028-06-29T23:59:59Z", "2028-07-29T23:59:59Z", "2028-08-29T23:59:59Z", "2028-09-29T23:59:59Z",
		"2028-10-29T23:59:59Z", "2028-11-29T23:59:59Z", "2028-12-29T23:59:59Z", "2029-01-29T23:59:59Z",
		"2029-02-28T23:59:59Z", "2029-03-29T23:59:59Z",
	})
}

func TestYearFromFeb29(t *testing.T) {
	t.Parallel()
	boundaries(t, "2028-02-29T08:00:00Z", Year, 0, []string{
		"2028-02-29T08:00:00Z", "2029-02-28T08:00:00Z", "2030-02-28T08:00:00Z", "2031-02-28T08:00:00Z",
		"2032-02-29T08:00:00Z", "2033-02-28T08:00:00Z",
	})
	if got := Boundary(date("2028-02-29T08:00:00Z"), Year, 0, -4); !got.Equal(date("2024-02-29T08:00:00Z")) {
		t.Errorf("Boundary(-4) = %s", got)
	}
	if got := Boundary(date("2026-01-31T00:00:00Z"), Month, 0, -2); !got.Equal(date("2025-11-30T00:00:00Z")) {
		t.Errorf("Boundary(-2) = %s", got)
	}
}

func TestFixedIntervals(t *testing.T) {
	t.Parallel()
	boundaries(t, "2026-02-26T12:00:00Z", Week, 0, []string{
		"2026-02-26T12:00:00Z", "2026-03-05T12:00:00Z", "2026-03-12T12:00:00Z",
	})
	boundaries(t, "2026-12-25T00:00:00Z", Biweekly, 0, []string{
		"2026-12-25T00:00:00Z", "2027-01-08T00:00:00Z", "2027-01-22T00:00:00Z",
	})
	boundaries(t, "2028-02-28T06:00:00Z", Custom, 1, []string{
		"2028-02-28T06:00:00Z", "2028-02-29T06:00:00Z", "2028-03-01T06:00:00Z",
	})
	boundaries(t, "2028-01-01T00:00:00Z", Custom, 365, []string{
		"2028-01-01T00:00:00Z", "2028-12-31T00:00:00Z", "2029-12-31T00:00:00Z", // 2028 has 366 days
	})
}

// TestUTCAcrossDaylightSaving anchors in New York just before clocks spring
// forward (2026-03-08) and fall back (2026-11-01): periods stay whole days
// of UTC and the time of day is kept in UTC, not in the anchor's zone.
func TestUTCAcrossDaylightSaving(t *testing.T) {
	t.Parallel()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	spring := time.Date(2026, 3, 1, 12, 0, 0, 0, ny) // 17:00 UTC (EST)
	if got := Boundary(spring, Week, 0, 2); !got.Equal(date("2026-03-15T17:00:00Z")) || got.Location() != time.UTC {
		t.Errorf("week after the spring change = %s", got)
	}
	if start, end := Period(spring, Week, 0, 1); end.Sub(start) != 7*24*time.Hour {
		t.Errorf("week across the spring change lasts %s", end.Sub(start))
	}
	if got := Boundary(spring, Month, 0, 1); !got.Equal(date("2026-04-01T17:00:00Z")) {
		t.Errorf("month after the spring change = %s", got)
	}
	fall := time.Date(2026, 10, 31, 22, 0, 0, 0, ny) // 02:00 UTC on Nov 1 (EDT)
	if got := Boundary(fall, Custom, 1, 1); !got.Equal(date("2026-11-02T02:00:00Z")) {
		t.Errorf("day after the fall change = %s", got)
	}
	if got := Boundary(fall, Month, 0, 1); !got.Equal(date("2026-12-01T02:00:00Z")) {
		t.Errorf("month after the fall change = %s", got)
	}
	if i := Index(fall, Custom, 1, date("2026-11-02T01:59:59.999999999Z")); i != 0 {
		t.Errorf("Index just before the first boundary = %d", i)
	}
}

func TestIndexBeforeAnchor(t *testing.T) {
	t.Parallel()
	a := date("2026-07-01T00:00:00.5Z")
	tests := []struct {
		interval string
		days     int
		t        string
		want     int
	}{
		{Week, 0, "2026-07-01T00:00:00.499999999Z", -1},
		{Week, 0, "2026-06-24T00:00:00.5Z", -1},
		{Week, 0, "2026-06-24T00:00:00.4Z", -2},
		{Month, 0, "2026-06-30T23:59:59Z", -1},
		{Month, 0, "2026-06-01T00:00:00.5Z", -1},
		{Month, 0, "2026-06-01T00:00:00Z", -2},
		{Year, 0, "2025-07-01T00:00:00.5Z", -1},
		{Custom, 30, "2026-07-31T00:00:00.5Z", 1},
		{Custom, 30, "2026-07-31T00:00:00.4Z", 0},
	}
	for _, tt := range tests {
		if got := Index(a, tt.interval, tt.days, date(tt.t)); got != tt.want {
			t.Errorf("Index(%s %s %d) = %d; want %d", tt.t, tt.interval, tt.days, got, tt.want)
		}
	}
}

// TestPeriodsTile draws random anchors, intervals and instants: consecutive
// periods meet exactly (no gap, no overlap), each is non-empty, and Index
// finds the one period holding any instant.
func TestPeriodsTile(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(20260701, 11))
	intervals := []string{Week, Biweekly, Month, Year, Custom}
	for i := 0; i < 3000; i++ {
		anchor := time.Unix(r.Int64N(4_102_444_800), r.Int64N(1e9)) // 1970–2100
		if r.IntN(4) == 0 {                                         // month ends, where clamping happens
			anchor = time.Date(1990+r.IntN(80), time.Month(1+r.IntN(12)), 28+r.IntN(4), r.IntN(24), 0, 0, 0, time.UTC)
		}
		interval := intervals[r.IntN(len(intervals))]
		days := 0
		if interval == Custom {
			days = 1 + r.IntN(MaxCustomDays)
		}
		first := r.IntN(200) - 100
		for n := first; n < first+30; n++ {
			start, end := Period(anchor, interval, days, n)
			next, _ := Period(anchor, interval, days, n+1)
			if !end.Equal(next) || !start.Before(end) {
				t.Fatalf("%s %s/%d: period %d = [%s, %s), period %d starts %s", anchor, interval, days, n, start, end, n+1, next)
			}
			at := start.Add(time.Duration(r.Int64N(int64(end.Sub(start)))))
			for _, x := range []time.Time{start, at, end.Add(-time.Nanosecond)} {
				if got := Index(anchor, interval, days, x); got != n {
					t.Fatalf("%s %s/%d: Index(%s) = %d; want %d in [%s, %s)", anchor, interval, days, x, got, n, start, end)
				}
			}
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	d := func(n int) *int { return &n }
	tests := []struct {
		interval string
		days     *int
		field    string // "" when valid
	}{
		{Week, nil, ""}, {Biweekly, nil, ""}, {Month, nil, ""}, {Year, nil, ""},
		{Custom, d(1), ""}, {Custom, d(365), ""},
		{Custom, nil, "interval_days"}, {Custom, d(0), "interval_days"}, {Custom, d(366), "interval_days"}, {Custom, d(-7), "interval_days"},
		{Month, d(30), "interval_days"}, {Week, d(7), "interval_days"},
		{"daily", nil, "interval"}, {"Month", nil, "interval"}, {"", nil, "interval"}, {"fortnight", d(14), "interval"},
	}
	for _, tt := range tests {
		err := Validate(tt.interval, tt.days)
		if tt.field == "" {
			if err != nil {
				t.Errorf("Validate(%q, %v) = %v", tt.interval, tt.days, err)
			}
			continue
		}
		e, ok := apperr.As(err)
		if !ok || e.Code != apperr.InvalidInterval || !strings.HasPrefix(e.Message, tt.field+": ") {
			t.Errorf("Validate(%q, %v) = %v; want invalid_interval naming %s", tt.interval, tt.days, err, tt.field)
		}
	}
}

func TestInvalidIntervalPanics(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		interval string
		days     int
	}{{"daily", 0}, {Custom, 0}, {Custom, 366}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Boundary(%q, %d) did not panic", c.interval, c.days)
				}
			}()
			Boundary(time.Now(), c.interval, c.days, 1)
		}()
	}
}
