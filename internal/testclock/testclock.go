// Package testclock moves a merchant's test-mode clock (the payments guide
// explains test clocks to users). The clock is an offset ahead of the wall clock (test_clocks,
// read with every API key lookup); it only ever moves forward, and an
// advance answers only after every renewal, dunning retry, expiry and credit
// expiry due up to the new time has run, each at its own due time.
package testclock

import (
	"context"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// MaxAdvance bounds one advance (ten years).
const MaxAdvance = 10 * 366 * 24 * time.Hour

// MaxAhead bounds how far a test clock may run ahead of the wall clock (a
// hundred years): far inside what a time.Duration holds, so every sum of
// times the billing engine makes stays exact.
const MaxAhead = 36525 * 24 * time.Hour

// AdvanceInput is a POST /v1/test_helpers/clock/advance request: exactly
// one of To (a date-time) and By (a duration).
type AdvanceInput struct {
	To *time.Time
	By *time.Duration
}

// DecodeAdvance reads {"to": date-time} or {"by": "30d"} (units s, m, h,
// d; numbers may combine: "1d12h").
func DecodeAdvance(o *fields.Object) (AdvanceInput, error) {
	in := AdvanceInput{To: o.Time("to")}
	if by := o.String("by", 0, 0); by != nil {
		d, err := ParseDuration(*by)
		if err != nil {
			o.Fail(err)
		}
		in.By = &d
	}
	if err := o.Err(); err != nil {
		return in, err
	}
	if (in.To == nil) == (in.By == nil) {
		return in, apperr.Field("to", "give exactly one of to (a date-time) and by (a duration such as 30d)")
	}
	return in, nil
}

// ParseDuration reads a positive duration written with the units s, m, h
// and d, e.g. "30d", "1d12h", "90m". Errors are invalid_request naming by.
func ParseDuration(s string) (time.Duration, error) {
	bad := apperr.Field("by", "must be a positive duration with units s, m, h or d, such as 30d or 1d12h")
	rest := strings.TrimSpace(s)
	if rest == "" {
		return 0, bad
	}
	var total time.Duration
	for rest != "" {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 || i == len(rest) || i > 9 {
			return 0, bad
		}
		n, _ := strconv.ParseInt(rest[:i], 10, 64)
		var unit time.Duration
		switch rest[i] {
		case 's':
			unit = time.Second
		case 'm':
			unit = time.Minute
		case 'h':
			unit = time.Hour
		case 'd':
			unit = 24 * time.Hour
		default:
			return 0, bad
		}
		// Compared before multiplying: 9 digits of days overflow a
		// time.Duration.
		if n > int64(MaxAdvance/unit) {
			return 0, apperr.Field("by", "must be at most %d days", int(MaxAdvance.Hours()/24))
		}
		total += time.Duration(n) * unit
		if total > MaxAdvance {
			return 0, apperr.Field("by", "must be at most %d days", int(MaxAdvance.Hours()/24))
		}
		rest = rest[i+1:]
	}
	if total <= 0 {
		return 0, bad
	}
	return total, nil
}

// Ahead returns how far the merchant's test clock runs ahead of the wall
// clock.
func Ahead(ctx context.Context, q store.Querier, merchantID string) (time.Duration, error) {
	var us []int64
	err := q.SelectContext(ctx, &us, `SELECT ahead_us FROM test_clocks WHERE merchant_id = $1`, merchantID)
	if err != nil || len(us) == 0 {
		return 0, store.Translate(err)
	}
	return time.Duration(min(us[0], MaxAhead.Microseconds())) * time.Microsecond, nil
}

// Wire is a clock's public form.
func Wire(now time.Time) wire.TestClock {
	return wire.TestClock{Object: "test_clock", Now: wire.Timestamp(now)}
}

// CheckMode refuses live mode: test clocks are test mode's (invalid_request).
func CheckMode(s tenant.Scope) error {
	if s.Mode != tenant.Test {
		return apperr.New(apperr.InvalidRequest, "test clocks exist in test mode only; use a sk_test_ key")
	}
	return nil
}

// CatchUp runs the work of one kind due for the scope up to a time.
type CatchUp func(ctx context.Context, s tenant.Scope, upTo time.Time) error

// Advance moves the scope's test clock forward to in.To, or by in.By, and
// runs every catch-up (the billing engine, the credit expiry) up to the new
// time before the clock shows it, so requests see the new time only once
// the work it made due is done. wall tells the wall clock. Advances of one
// merchant run one at a time. Fails with invalid_request (live mode, a time
// before the clock's, too far).
func Advance(ctx context.Context, db *store.DB, s tenant.Scope, in AdvanceInput, wall func() time.Time, catchUps ...CatchUp) (time.Time, error) {
	if err := CheckMode(s); err != nil {
		return time.Time{}, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return time.Time{}, store.Translate(err)
	}
	defer conn.Close()
	key := lockKey(s.MerchantID)
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		return time.Time{}, store.Translate(err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key) //nolint:errcheck
	ahead, err := Ahead(ctx, db, s.MerchantID)
	if err != nil {
		return time.Time{}, err
	}
	now := wall().Add(ahead)
	var target time.Time
	switch {
	case in.By != nil:
		target = now.Add(*in.By)
	case in.To.Before(now):
		return time.Time{}, apperr.Field("to", "test clocks only move forward: the clock is at %s", wire.Timestamp(now))
	case in.To.Sub(now) > MaxAdvance:
		return time.Time{}, apperr.Field("to", "must be at most %d days ahead of the clock", int(MaxAdvance.Hours()/24))
	default:
		target = *in.To
	}
	target = target.UTC().Truncate(time.Microsecond)
	if limit := wall().Add(MaxAhead); target.After(limit) {
		field := "to"
		if in.By != nil {
			field = "by"
		}
		return time.Time{}, apperr.Field(field, "would take the test clock past %s: it runs at most %d days (100 years) ahead of the real time",
			wire.Timestamp(limit.Truncate(time.Second)), int(MaxAhead.Hours()/24))
	}
	for _, c := range catchUps {
		if err := c(ctx, s, target); err != nil {
			return time.Time{}, err
		}
	}
	// The clock shows target from now on, and then runs with the wall clock.
	_, err = db.ExecContext(ctx, `INSERT INTO test_clocks (merchant_id, ahead_us) VALUES ($1, $2)
		ON CONFLICT (merchant_id) DO UPDATE SET ahead_us = GREATEST(test_clocks.ahead_us, EXCLUDED.ahead_us), updated_at = now()`,
		s.MerchantID, max(target.Sub(wall()).Microseconds(), ahead.Microseconds()))
	if err != nil {
		return time.Time{}, store.Translate(err)
	}
	return target, nil
}

// lockKey is the advisory lock serialising a merchant's advances.
func lockKey(merchantID string) int64 {
	h := fnv.New64a()
	h.Write([]byte("tollgate test clock\x00" + merchantID))
	return int64(h.Sum64())
}
