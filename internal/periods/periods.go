// Package periods computes subscriptions' billing periods: fixed lengths of
// days (week 7, biweekly 14, custom interval_days)
// and calendar months and years anchored on the subscription's start. Period
// n runs from Boundary(n) (inclusive) to Boundary(n+1) (exclusive); period 0
// starts at the anchor. All times are UTC: a period is never 23 or 25 hours
// short or long because of a time zone's daylight saving.
//
// Month and year boundaries are computed from the anchor, never from the
// previous boundary: the n-th boundary is the anchor plus n months (12n for
// years) with the day clamped to that month's length and the time of day
// kept, so an anchor on Jan 31 renews on Feb 28 (29 in leap years), Mar 31,
// Apr 30, … and never drifts to the 28th.
package periods

import (
	"strconv"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

// The intervals a plan may have (POST /v1/plans).
const (
	Week     = "week"
	Biweekly = "biweekly"
	Month    = "month"
	Year     = "year"
	Custom   = "custom"
)

// MaxCustomDays is the longest custom interval, in days.
const MaxCustomDays = 365

// Validate checks a plan's interval and interval_days (nil when absent or
// null). It fails with invalid_interval, naming the field, when the interval
// is not one of week, biweekly, month, year, custom (the empty string
// included: the caller reports a missing interval as it reports any missing
// field), when interval_days is missing with custom or present with another
// interval, or when it is outside 1 to 365.
func Validate(interval string, intervalDays *int) error {
	switch interval {
	case Custom:
		if intervalDays == nil {
			return apperr.New(apperr.InvalidInterval, "interval_days: is required when interval is custom")
		}
		if *intervalDays < 1 || *intervalDays > MaxCustomDays {
			return apperr.New(apperr.InvalidInterval, "interval_days: must be 1 to %d", MaxCustomDays)
		}
	case Week, Biweekly, Month, Year:
		if intervalDays != nil {
			return apperr.New(apperr.InvalidInterval, "interval_days: is allowed only when interval is custom")
		}
	default:
		return apperr.New(apperr.InvalidInterval, "interval: must be one of week, biweekly, month, year, custom")
	}
	return nil
}

// Boundary returns the n-th boundary after anchor (n may be negative), in
// UTC: anchor + n×length for fixed intervals, anchor + n months or years,
// day clamped, for calendar ones. days is the custom interval's length and
// is ignored for the others. interval and days must pass Validate (plans
// are validated when created); anything else panics.
func Boundary(anchor time.Time, interval string, days int, n int) time.Time {
	a := anchor.UTC()
	if d := fixedDays(interval, days); d > 0 {
		return a.AddDate(0, 0, n*d)
	}
	months := n * calendarMonths(interval)
	total := int(a.Month()) - 1 + months
	y := a.Year() + floorDiv(total, 12)
	m := time.Month(total - 12*floorDiv(total, 12) + 1)
	day := min(a.Day(), daysIn(y, m))
	return time.Date(y, m, day, a.Hour(), a.Minute(), a.Second(), a.Nanosecond(), time.UTC)
}

// Period returns the n-th period: [Boundary(n), Boundary(n+1)).
func Period(anchor time.Time, interval string, days int, n int) (start, end time.Time) {
	return Boundary(anchor, interval, days, n), Boundary(anchor, interval, days, n+1)
}

// Index returns the n of the period t falls in: Boundary(n) ≤ t <
// Boundary(n+1). It is negative when t is before anchor. Same preconditions
// as Boundary.
func Index(anchor time.Time, interval string, days int, t time.Time) int {
	a, t := anchor.UTC(), t.UTC()
	if d := fixedDays(interval, days); d > 0 {
		// Whole seconds and a non-negative fraction: the fraction never
		// crosses a boundary, which falls on a whole number of days.
		secs := t.Unix() - a.Unix()
		if t.Nanosecond() < a.Nanosecond() {
			secs--
		}
		return int(floorDiv64(secs, int64(d)*86400))
	}
	k := calendarMonths(interval)
	n := floorDiv((t.Year()-a.Year())*12+int(t.Month())-int(a.Month()), k)
	// The month count is off by at most one period (a boundary inside t's
	// month, the clamped day, the time of day).
	for Boundary(a, interval, days, n).After(t) {
		n--
	}
	for !Boundary(a, interval, days, n+1).After(t) {
		n++
	}
	return n
}

// fixedDays returns the length in days of a fixed interval, 0 for a
// calendar one.
func fixedDays(interval string, days int) int {
	switch interval {
	case Week:
		return 7
	case Biweekly:
		return 14
	case Custom:
		if days < 1 || days > MaxCustomDays {
			panic("periods: custom interval of " + strconv.Itoa(days) + " days")
		}
		return days
	case Month, Year:
		return 0
	}
	panic("periods: unknown interval " + interval)
}

func calendarMonths(interval string) int {
	if interval == Year {
		return 12
	}
	return 1
}

// daysIn returns the number of days of month m of year y.
func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func floorDiv(a, b int) int { return int(floorDiv64(int64(a), int64(b))) }

func floorDiv64(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
