// Package periods computes billing periods.
//
// PROVISIONAL: replaced by the full package (branch pricing).
package periods

import (
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

// Validate checks an interval and its interval_days.
func Validate(interval string, days *int) error {
	switch interval {
	case "custom":
		if days == nil || *days < 1 || *days > 365 {
			return apperr.New(apperr.InvalidInterval, "interval_days: custom intervals need interval_days from 1 to 365")
		}
	case "week", "biweekly", "month", "year":
		if days != nil {
			return apperr.New(apperr.InvalidInterval, "interval_days: only a custom interval takes interval_days")
		}
	default:
		return apperr.New(apperr.InvalidInterval, "interval: must be week, biweekly, month, year or custom")
	}
	return nil
}

// Boundary is the n-th period boundary from anchor.
func Boundary(anchor time.Time, interval string, days, n int) time.Time {
	anchor = anchor.UTC()
	switch interval {
	case "week":
		return anchor.AddDate(0, 0, 7*n)
	case "biweekly":
		return anchor.AddDate(0, 0, 14*n)
	case "custom":
		return anchor.AddDate(0, 0, days*n)
	}
	months := n
	if interval == "year" {
		months = 12 * n
	}
	y, m, d := anchor.Date()
	first := time.Date(y, m+time.Month(months), 1, anchor.Hour(), anchor.Minute(), anchor.Second(), anchor.Nanosecond(), time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(d, last)-1)
}

// Period is the n-th period [start, end).
func Period(anchor time.Time, interval string, days, n int) (time.Time, time.Time) {
	return Boundary(anchor, interval, days, n), Boundary(anchor, interval, days, n+1)
}
