package metering

import (
	"context"
	"math/big"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Window sizes of a usage summary.
const (
	Hour  = "hour"
	Day   = "day"
	Month = "month"
)

// MaxWindows bounds the windows one usage summary may return.
const MaxWindows = 1000

// DefaultUsageSpan is how far back a summary starts when the customer has
// no subscription period on the meter to start from.
const DefaultUsageSpan = 30 * 24 * time.Hour

// UsageInput is a usage summary request; nil times take their defaults.
type UsageInput struct {
	Meter  string // a meter_ id or a meter key
	From   *time.Time
	To     *time.Time
	Window string // "" for no windows
}

// ParseUsageQuery reads GET /v1/customers/{id}/usage's query string: meter,
// from, to and window, each at most once. Anything else is invalid_request
// naming the parameter.
func ParseUsageQuery(q url.Values) (UsageInput, error) {
	var in UsageInput
	for k, vs := range q {
		if p := fields.TextProblem(k); p != "" {
			return in, apperr.Field("query", "parameter names %s", p)
		}
		switch k {
		case "meter", "from", "to", "window":
		default:
			return in, apperr.Field(apperr.Clip(k), "is not a parameter of this request")
		}
		if len(vs) != 1 {
			return in, apperr.Field(k, "must be given once")
		}
		if p := fields.TextProblem(vs[0]); p != "" {
			return in, apperr.Field(k, "%s", p)
		}
	}
	in.Meter, in.Window = q.Get("meter"), q.Get("window")
	for _, f := range []struct {
		name string
		dst  **time.Time
	}{{"from", &in.From}, {"to", &in.To}} {
		if !q.Has(f.name) {
			continue
		}
		t, err := fields.ParseTime(f.name, q.Get(f.name))
		if err != nil {
			return in, err
		}
		*f.dst = &t
	}
	return in, nil
}

// DecodeUsageArgs reads the tool form of the request (customer_id, meter,
// from, to, window) and returns the customer id with it.
func DecodeUsageArgs(o *fields.Object) (string, UsageInput, error) {
	cust := o.RequiredString("customer_id", 1, 255)
	in := UsageInput{Meter: o.RequiredString("meter", 1, 255), From: o.Time("from"), To: o.Time("to")}
	if w := o.String("window", 0, 0); w != nil {
		in.Window = *w
	}
	return cust, in, o.Err()
}

// WindowValue is one window of a usage summary.
type WindowValue struct {
	Start, End time.Time
	Value      string
}

// Summary is a customer's usage of a meter over [From, To).
type Summary struct {
	CustomerID string
	Meter      Meter
	From, To   time.Time
	Value      string
	// Windows is nil when none were asked for.
	Windows []WindowValue
}

// Wire returns the summary's public form.
func (u Summary) Wire() wire.UsageSummary {
	out := wire.UsageSummary{Object: "usage_summary", CustomerID: u.CustomerID, Meter: u.Meter.ID, MeterKey: u.Meter.Key,
		Aggregation: u.Meter.Aggregation, From: wire.Timestamp(u.From), To: wire.Timestamp(u.To), Value: u.Value}
	if u.Windows != nil {
		out.Windows = make([]wire.UsageWindow, len(u.Windows))
		for i, w := range u.Windows {
			out.Windows[i] = wire.UsageWindow{Start: wire.Timestamp(w.Start), End: wire.Timestamp(w.End), Value: w.Value}
		}
	}
	return out
}

// ResolveMeter finds the scope's meter by id (meter_…) or key; unknown is
// 404 unknown_meter.
func ResolveMeter(ctx context.Context, q store.Querier, s tenant.Scope, ref string) (Meter, error) {
	if ref == "" {
		return Meter{}, apperr.Field("meter", "is required (a meter id or key)")
	}
	var (
		m   Meter
		ok  bool
		err error
	)
	if strings.HasPrefix(ref, "meter_") {
		m, ok, err = ByID(ctx, q, s, ref)
	}
	if err == nil && !ok && len(ref) <= MaxKeyLen && KeyPattern.MatchString(ref) {
		m, ok, err = ByKey(ctx, q, s, ref)
	}
	if err == nil && !ok {
		err = &apperr.Error{Code: apperr.UnknownMeter, Status: 404, Message: "meter: no meter " + strconv.Quote(apperr.Clip(ref))}
	}
	return m, err
}

// CurrentPeriod returns the current period of the customer's live
// subscription whose plan uses the meter; ok=false when there is none.
func CurrentPeriod(ctx context.Context, q store.Querier, s tenant.Scope, customerID, meterID string) (start, end time.Time, ok bool, err error) {
	var rows []struct {
		Start time.Time `db:"current_period_start"`
		End   time.Time `db:"current_period_end"`
	}
	err = q.SelectContext(ctx, &rows, `SELECT current_period_start, current_period_end FROM subscriptions
		WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 AND meter_id = $4 AND status IN ('trialing', 'active', 'past_due')
			AND current_period_start IS NOT NULL AND current_period_end IS NOT NULL
		ORDER BY current_period_start DESC LIMIT 1`, s.MerchantID, s.Mode, customerID, meterID)
	if err != nil || len(rows) == 0 {
		return time.Time{}, time.Time{}, false, store.Translate(err)
	}
	return rows[0].Start, rows[0].End, true, nil
}

// Usage answers a usage summary for the customer (a path id: unknown is 404
// unknown_customer) at now, from the usage buckets: its cost depends on the
// span and the windows asked for, not on how many events are stored.
func Usage(ctx context.Context, q store.Querier, s tenant.Scope, customerID string, in UsageInput, now time.Time) (Summary, error) {
	switch in.Window {
	case "", Hour, Day, Month:
	default:
		return Summary{}, apperr.Field("window", "must be one of hour, day, month")
	}
	if in.From != nil && in.To != nil && !in.From.Before(*in.To) {
		return Summary{}, apperr.Field("from", "must be before to")
	}
	to := now.UTC().Truncate(time.Microsecond)
	if in.To != nil {
		to = *in.To
	}
	if in.From != nil {
		// The common request, in one statement; a refused window count
		// and a missing meter or customer take the plain path below,
		// which says what is wrong in its order.
		if u, spans, err := frame(customerID, in.From.UTC(), to.UTC(), in.Window); err == nil {
			if u, ok, err := usageOnce(ctx, q, s, customerID, in.Meter, u, spans); err != nil || ok {
				return u, err
			}
		}
	}
	m, err := usageTarget(ctx, q, s, customerID, in.Meter)
	if err != nil {
		return Summary{}, err
	}
	var from time.Time
	if in.From != nil {
		from = *in.From
	} else if start, _, ok, err := CurrentPeriod(ctx, q, s, customerID, m.ID); err != nil {
		return Summary{}, err
	} else if ok && start.Before(to) {
		from = start
	} else {
		from = to.Add(-DefaultUsageSpan)
	}
	if !from.Before(to) {
		return Summary{}, apperr.Field("from", "must be before to")
	}
	u, spans, err := frame(customerID, from.UTC(), to.UTC(), in.Window)
	if err != nil {
		return Summary{}, err
	}
	u.Meter = m
	aggs, err := aggregateSpans(ctx, q, s, m, customerID, spans)
	if err != nil {
		return Summary{}, err
	}
	return u.fill(aggs), nil
}

// frame is a summary of [from, to) without its meter and figures, and the
// spans to aggregate: one, or one per window.
func frame(customerID string, from, to time.Time, window string) (Summary, [][2]time.Time, error) {
	u := Summary{CustomerID: customerID, From: from, To: to}
	if window == "" {
		return u, [][2]time.Time{{from, to}}, nil
	}
	ws, err := windows(from, to, window)
	if err != nil {
		return u, nil, err
	}
	spans := make([][2]time.Time, len(ws))
	u.Windows = make([]WindowValue, len(ws))
	for i, w := range ws {
		spans[i] = [2]time.Time{maxTime(w[0], from), minTime(w[1], to)}
		u.Windows[i] = WindowValue{Start: w[0], End: w[1]}
	}
	return u, spans, nil
}

// fill sets the summary's figures from its spans' aggregates.
func (u Summary) fill(aggs []Agg) Summary {
	var total Agg
	for i, a := range aggs {
		total.add(a)
		if u.Windows != nil {
			u.Windows[i].Value = a.Value(u.Meter.Aggregation)
		}
	}
	u.Value = total.Value(u.Meter.Aggregation)
	return u
}

// windows lists the UTC windows of size w that overlap [from, to).
func windows(from, to time.Time, w string) ([][2]time.Time, error) {
	var out [][2]time.Time
	for start := floor(from, w); start.Before(to); start = next(start, w) {
		if len(out) == MaxWindows {
			return nil, apperr.Field("window", "gives more than %d windows from from to to; use a larger window or a shorter span", MaxWindows)
		}
		out = append(out, [2]time.Time{start, next(start, w)})
	}
	return out, nil
}

func floor(t time.Time, w string) time.Time {
	t = t.UTC()
	switch w {
	case Hour:
		return t.Truncate(time.Hour)
	case Day:
		return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	default:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
}

func next(t time.Time, w string) time.Time {
	switch w {
	case Hour:
		return t.Add(time.Hour)
	case Day:
		return t.AddDate(0, 0, 1)
	default:
		return t.AddDate(0, 1, 0)
	}
}

// ceil is the first boundary of size w at or after t.
func ceil(t time.Time, w string) time.Time {
	if f := floor(t, w); f.Equal(t) {
		return f
	} else {
		return next(f, w)
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// Agg is the aggregates of a set of events.
type Agg struct {
	Count  int64
	Sum    *big.Int
	Max    *int64
	Last   *int64
	LastAt time.Time
	LastID string
}

func (a *Agg) add(b Agg) {
	if b.Count == 0 {
		return
	}
	a.Count += b.Count
	if a.Sum == nil {
		a.Sum = new(big.Int)
	}
	if b.Sum != nil {
		a.Sum.Add(a.Sum, b.Sum)
	}
	if b.Max != nil && (a.Max == nil || *b.Max > *a.Max) {
		a.Max = b.Max
	}
	if b.Last != nil && (a.Last == nil || b.LastAt.After(a.LastAt) || (b.LastAt.Equal(a.LastAt) && b.LastID > a.LastID)) {
		a.Last, a.LastAt, a.LastID = b.Last, b.LastAt, b.LastID
	}
}

// Value is the aggregate under a meter's aggregation, "0" when empty.
func (a Agg) Value(aggregation string) string {
	if a.Count == 0 {
		return "0"
	}
	switch aggregation {
	case Count:
		return strconv.FormatInt(a.Count, 10)
	case Max:
		return strconv.FormatInt(*a.Max, 10)
	case Last:
		return strconv.FormatInt(*a.Last, 10)
	default:
		return a.Sum.String()
	}
}

// Big is the aggregate as an integer, for comparing with thresholds.
func (a Agg) Big(aggregation string) *big.Int {
	v, _ := new(big.Int).SetString(a.Value(aggregation), 10)
	return v
}

// plan splits [from, to) into the ranges read from events (the parts of an
// hour at either end), the ranges of whole hours read from the hour buckets
// (the partial days at either end) and the range of whole days
// [days[0], days[1]) read from the day buckets (empty when days[0] is not
// before days[1]).
func plan(from, to time.Time) (raw, hours [][2]time.Time, days [2]time.Time) {
	h0, h1 := ceil(from, Hour), floor(to, Hour)
	if !h0.Before(h1) {
		return [][2]time.Time{{from, to}}, nil, [2]time.Time{h1, h1}
	}
	if from.Before(h0) {
		raw = append(raw, [2]time.Time{from, h0})
	}
	if h1.Before(to) {
		raw = append(raw, [2]time.Time{h1, to})
	}
	d0, d1 := ceil(h0, Day), floor(h1, Day)
	if !d0.Before(d1) {
		return raw, [][2]time.Time{{h0, h1}}, [2]time.Time{h1, h1}
	}
	if h0.Before(d0) {
		hours = append(hours, [2]time.Time{h0, d0})
	}
	if d1.Before(h1) {
		hours = append(hours, [2]time.Time{d1, h1})
	}
	return raw, hours, [2]time.Time{d0, d1}
}
