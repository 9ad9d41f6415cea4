// Package metering owns meters: the named things usage is recorded against.
// Meter events and aggregates build on it.
package metering

import (
	"context"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Aggregations a meter may use.
const (
	Sum   = "sum"
	Count = "count"
	Max   = "max"
	Last  = "last"
)

// KeyPattern is the charset of meter and feature keys.
var KeyPattern = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// isKey is KeyPattern.MatchString without the regexp machinery, for the
// event name of every ingested event (the regexp was 3% of the daemon's
// CPU on 500-event batches).
func isKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// MaxKeyLen bounds meter and feature keys.
const MaxKeyLen = 100

// Meter is a named usage counter.
type Meter struct {
	MerchantID    string      `db:"merchant_id"`
	Mode          tenant.Mode `db:"mode"`
	ID            string      `db:"id"`
	Seq           int64       `db:"seq"`
	Key           string      `db:"key"`
	DisplayName   string      `db:"display_name"`
	Aggregation   string      `db:"aggregation"`
	EventValueKey *string     `db:"event_value_key"`
	UnitLabel     *string     `db:"unit_label"`
	Description   *string     `db:"description"`
	CreatedAt     time.Time   `db:"created_at"`
}

// Input is a create request.
type Input struct {
	Key           string
	DisplayName   string
	Aggregation   string // empty means sum
	EventValueKey *string
	UnitLabel     *string
	Description   *string
}

// Decode reads POST /v1/meters' schema from a JSON object (a REST body or
// tool arguments); errors are invalid_request naming the field.
func Decode(o *fields.Object) (Input, error) {
	in := Input{
		Key:           o.RequiredString("key", 0, 0),
		DisplayName:   o.RequiredString("display_name", 0, 0),
		EventValueKey: o.String("event_value_key", 0, 0),
		UnitLabel:     o.String("unit_label", 0, 0),
		Description:   o.String("description", 0, 0),
	}
	if a := o.String("aggregation", 0, 0); a != nil {
		in.Aggregation = *a
	}
	return in, o.Err()
}

// Wire returns the meter's public form.
func (m Meter) Wire() wire.Meter {
	j := wire.Meter{
		Object: "meter", ID: m.ID, Key: m.Key, DisplayName: m.DisplayName, Aggregation: m.Aggregation,
		EventValueKey: m.EventValueKey, Description: m.Description, CreatedAt: wire.Timestamp(m.CreatedAt), Livemode: m.Mode == tenant.Live,
	}
	if m.UnitLabel != nil {
		j.UnitLabel = *m.UnitLabel
	}
	return j
}

// Position is the meter's place in the list, for cursors.
func (m Meter) Position() page.Cursor { return page.Cursor{At: m.CreatedAt, Seq: m.Seq} }

// ValidateKey checks a meter or feature key; field names the input field.
func ValidateKey(field, key string) error {
	if key == "" {
		return apperr.Field(field, "is required")
	}
	if len(key) > MaxKeyLen {
		return apperr.Field(field, "must be at most %d characters", MaxKeyLen)
	}
	if !KeyPattern.MatchString(key) {
		return apperr.Field(field, "may contain only letters, digits, dot, dash and underscore")
	}
	return nil
}

// Validate applies the meter rules; errors are invalid_request naming the field.
func (in *Input) Validate() error {
	if err := ValidateKey("key", in.Key); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(strings.TrimSpace(in.DisplayName)); n < 1 || n > 200 {
		return apperr.Field("display_name", "must be 1 to 200 characters")
	}
	switch in.Aggregation {
	case "":
		in.Aggregation = Sum
	case Sum, Count, Max, Last:
	default:
		return apperr.Field("aggregation", "must be one of sum, count, max, last")
	}
	if in.EventValueKey != nil && (*in.EventValueKey == "" || utf8.RuneCountInString(*in.EventValueKey) > 200) {
		return apperr.Field("event_value_key", "must be 1 to 200 characters")
	}
	if in.UnitLabel != nil && utf8.RuneCountInString(*in.UnitLabel) > 100 {
		return apperr.Field("unit_label", "must be at most 100 characters")
	}
	if in.Description != nil && utf8.RuneCountInString(*in.Description) > 500 {
		return apperr.Field("description", "must be at most 500 characters")
	}
	return nil
}

const columns = `merchant_id, mode, id, seq, key, display_name, aggregation, event_value_key, unit_label, description, created_at`

// Create stores a meter created at now, or returns the existing meter with
// the same key (created=false): creation is idempotent by key. One
// statement, on the pool or the caller's transaction. Fails with
// invalid_request.
func Create(ctx context.Context, q store.Querier, s tenant.Scope, in Input, now time.Time) (m Meter, created bool, err error) {
	if err := in.Validate(); err != nil {
		return Meter{}, false, err
	}
	// ON CONFLICT DO NOTHING + a fallback read is race-free: two concurrent
	// creates of one key both end with the single stored meter.
	rows := []Meter{}
	err = q.SelectContext(ctx, &rows, `INSERT INTO meters (merchant_id, mode, id, key, display_name, aggregation, event_value_key, unit_label, description, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT ON CONSTRAINT meters_key DO NOTHING RETURNING `+columns,
		s.MerchantID, s.Mode, id.New("meter"), in.Key, in.DisplayName, in.Aggregation, in.EventValueKey, in.UnitLabel, in.Description, now)
	if err != nil {
		return Meter{}, false, store.Translate(err)
	}
	if len(rows) == 1 {
		return rows[0], true, nil
	}
	m, ok, err := ByKey(ctx, q, s, in.Key)
	if err == nil && !ok {
		err = apperr.New(apperr.Internal, "meter %q vanished during creation", in.Key)
	}
	return m, false, err
}

// ByKey returns the scope's meter with key; ok=false when there is none.
func ByKey(ctx context.Context, q store.Querier, s tenant.Scope, key string) (Meter, bool, error) {
	var m Meter
	err := q.GetContext(ctx, &m, `SELECT `+columns+` FROM meters WHERE merchant_id = $1 AND mode = $2 AND key = $3`, s.MerchantID, s.Mode, key)
	if store.NotFound(err) {
		return Meter{}, false, nil
	}
	return m, err == nil, store.Translate(err)
}

// ByID returns the scope's meter with id; ok=false when there is none.
func ByID(ctx context.Context, q store.Querier, s tenant.Scope, meterID string) (Meter, bool, error) {
	var m Meter
	err := q.GetContext(ctx, &m, `SELECT `+columns+` FROM meters WHERE merchant_id = $1 AND mode = $2 AND id = $3`, s.MerchantID, s.Mode, meterID)
	if store.NotFound(err) {
		return Meter{}, false, nil
	}
	return m, err == nil, store.Translate(err)
}

// List returns a page of the scope's meters, newest first.
func List(ctx context.Context, q store.Querier, s tenant.Scope, p page.Params) (page.Result[Meter], error) {
	return page.Select(ctx, q, "meters", columns, s, p, Meter.Position)
}
