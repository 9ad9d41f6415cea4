// Package features owns features: what a merchant grants customers access
// to. A boolean feature is on or off; a metered one is backed by a meter
// whose usage counts against the granted limit (package entitlements).
package features

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Feature types.
const (
	Boolean = "boolean"
	Metered = "metered"
)

// Feature is something a customer can be entitled to.
type Feature struct {
	MerchantID  string      `db:"merchant_id"`
	Mode        tenant.Mode `db:"mode"`
	ID          string      `db:"id"`
	Seq         int64       `db:"seq"`
	Key         string      `db:"key"`
	Name        string      `db:"name"`
	Type        string      `db:"type"`
	MeterID     *string     `db:"meter_id"`
	UnitLabel   *string     `db:"unit_label"`
	Description *string     `db:"description"`
	CreatedAt   time.Time   `db:"created_at"`
}

// Input is a create request.
type Input struct {
	Key         string
	Name        string
	Type        string  // empty means boolean
	Meter       *string // meter id; required for metered
	UnitLabel   *string
	Description *string
}

// Decode reads POST /v1/features' schema from a JSON object (a REST body or
// tool arguments); errors are invalid_request naming the field.
func Decode(o *fields.Object) (Input, error) {
	in := Input{
		Key:         o.RequiredString("key", 0, 0),
		Name:        o.RequiredString("name", 0, 0),
		Meter:       o.String("meter", 0, 0),
		UnitLabel:   o.String("unit_label", 0, 0),
		Description: o.String("description", 0, 0),
	}
	if t := o.String("type", 0, 0); t != nil {
		in.Type = *t
	}
	return in, o.Err()
}

// Wire returns the feature's public form.
func (f Feature) Wire() wire.Feature {
	return wire.Feature{
		Object: "feature", ID: f.ID, Key: f.Key, Name: f.Name, Type: f.Type, MeterID: f.MeterID,
		UnitLabel: f.UnitLabel, Description: f.Description, CreatedAt: wire.Timestamp(f.CreatedAt), Livemode: f.Mode == tenant.Live,
	}
}

// Validate applies the feature rules that need no database; errors are
// invalid_request naming the field.
func (in *Input) Validate() error {
	if err := metering.ValidateKey("key", in.Key); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(strings.TrimSpace(in.Name)); n < 1 || n > 200 {
		return apperr.Field("name", "must be 1 to 200 characters")
	}
	switch in.Type {
	case "":
		in.Type = Boolean
	case Boolean, Metered:
	default:
		return apperr.Field("type", "must be boolean or metered")
	}
	switch {
	case in.Type == Metered && in.Meter == nil:
		return apperr.Field("meter", "is required for a metered feature: pass the id of the meter whose usage counts")
	case in.Type == Boolean && in.Meter != nil:
		return apperr.Field("meter", "only metered features have a meter (set type to metered)")
	}
	if in.UnitLabel != nil && utf8.RuneCountInString(*in.UnitLabel) > 100 {
		return apperr.Field("unit_label", "must be at most 100 characters")
	}
	if in.Description != nil && utf8.RuneCountInString(*in.Description) > 500 {
		return apperr.Field("description", "must be at most 500 characters")
	}
	return nil
}

const columns = `merchant_id, mode, id, seq, key, name, type, meter_id, unit_label, description, created_at`

// Create stores a feature created at now, or returns the existing feature
// with the same key (created=false): creation is idempotent by key. A
// metered feature's meter must exist in the scope, else invalid_request
// naming meter. Runs on the pool or the caller's transaction.
func Create(ctx context.Context, q store.Querier, s tenant.Scope, in Input, now time.Time) (f Feature, created bool, err error) {
	if err := in.Validate(); err != nil {
		return Feature{}, false, err
	}
	if in.Meter != nil {
		_, ok, err := metering.ByID(ctx, q, s, *in.Meter)
		if err != nil {
			return Feature{}, false, err
		}
		if !ok {
			return Feature{}, false, apperr.Field("meter", "no meter %q in this account and mode (create it first with POST /v1/meters)", *in.Meter)
		}
	}
	// As for meters: ON CONFLICT DO NOTHING and a fallback read is
	// race-free for concurrent creates of one key.
	rows := []Feature{}
	err = q.SelectContext(ctx, &rows, `INSERT INTO features (merchant_id, mode, id, key, name, type, meter_id, unit_label, description, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		ON CONFLICT ON CONSTRAINT features_key DO NOTHING RETURNING `+columns,
		s.MerchantID, s.Mode, id.New("feat"), in.Key, in.Name, in.Type, in.Meter, in.UnitLabel, in.Description, now)
	if err != nil {
		return Feature{}, false, store.Translate(err)
	}
	if len(rows) == 1 {
		return rows[0], true, nil
	}
	f, err = ByKey(ctx, q, s, in.Key)
	return f, false, err
}

// ByKey returns the scope's feature with key, or unknown_feature (404).
func ByKey(ctx context.Context, q store.Querier, s tenant.Scope, key string) (Feature, error) {
	var f Feature
	err := q.GetContext(ctx, &f, `SELECT `+columns+` FROM features WHERE merchant_id = $1 AND mode = $2 AND key = $3`, s.MerchantID, s.Mode, key)
	if store.NotFound(err) {
		return Feature{}, apperr.New(apperr.UnknownFeature, "feature_key: no feature %q in this account and mode", key)
	}
	return f, store.Translate(err)
}
