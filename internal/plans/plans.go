// Package plans owns subscription plans: a product and its price, created
// together (POST /v1/plans), read by id for checkout. Plans are create-only
// (the API neither changes nor deletes one). A plan is licensed (a fixed amount each period) or metered (the
// period's usage of a meter rated with a pricing model, charged up to the
// amount, the per-period cap), and may grant features to its subscribers.
package plans

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/features"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/periods"
	"github.com/tollgatehq/tollgate/internal/pricing"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Usage types.
const (
	Licensed = "licensed"
	Metered  = "metered"
)

// Limits of POST /v1/plans.
const (
	MinAmount money.Amount = 1_000_000
)

const (
	MaxNameLen     = 80
	MinNameLen     = 2
	MaxDescription = 300
	MaxFeatures    = 50
	// Trial days a plan may give (trial_days).
	MinTrialDays = 1
	MaxTrialDays = 730
)

// Feature is a feature a plan grants; Limit is for metered features.
type Feature struct {
	Key   string `json:"feature_key"`
	Limit *int64 `json:"limit_value"`
}

// Input is a POST /v1/plans request.
type Input struct {
	Name         string
	Description  *string
	Amount       money.Amount
	Interval     string
	IntervalDays *int
	UsageType    string // empty: licensed
	Meter        *string
	PricingModel *pricing.Model
	Features     []Feature
	// TrialDays is how many free days a subscription starts with (nil:
	// none).
	TrialDays *int
}

// Plan is a stored plan with its product.
type Plan struct {
	MerchantID   string       `db:"merchant_id"`
	Mode         tenant.Mode  `db:"mode"`
	ID           string       `db:"id"`
	Seq          int64        `db:"seq"`
	ProductID    string       `db:"product_id"`
	ProductName  string       `db:"product_name"`
	ProductDesc  *string      `db:"product_description"`
	Amount       money.Amount `db:"amount"`
	Interval     string       `db:"interval"`
	IntervalDays *int         `db:"interval_days"`
	UsageType    string       `db:"usage_type"`
	MeterID      *string      `db:"meter_id"`
	PricingJSON  []byte       `db:"pricing_model"`
	FeaturesJSON []byte       `db:"features"`
	TrialDays    *int         `db:"trial_days"`
	CreatedAt    time.Time    `db:"created_at"`
}

// Decode reads POST /v1/plans' schema from a JSON object (a REST body or
// tool arguments); errors are invalid_request naming the field.
func Decode(o *fields.Object) (Input, error) {
	in := Input{
		Name:        o.RequiredString("name", 0, 0),
		Description: o.String("description", 0, 0),
		Amount:      o.RequiredAmount("amount"),
		Interval:    o.RequiredString("interval", 0, 0),
		Meter:       o.String("meter", 0, 0),
	}
	if n := o.Int("interval_days", -1<<31, 1<<31-1); n != nil {
		d := int(*n)
		in.IntervalDays = &d
	}
	if n := o.Int("trial_days", -1<<31, 1<<31-1); n != nil {
		d := int(*n)
		in.TrialDays = &d
	}
	if u := o.String("usage_type", 0, 0); u != nil {
		in.UsageType = *u
	}
	if raw := o.Raw("pricing_model"); raw != nil {
		m, err := pricing.Decode(raw)
		if err != nil {
			o.Fail(err)
		}
		in.PricingModel = &m
	}
	if raw := o.Raw("features"); raw != nil {
		fs, err := decodeFeatures(raw)
		if err != nil {
			o.Fail(err)
		}
		in.Features = fs
	}
	return in, o.Err()
}

// decodeFeatures reads `features`: an array of {"feature_key": K,
// "limit_value": N} objects or bare keys.
func decodeFeatures(raw json.RawMessage) ([]Feature, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, apperr.Field("features", "must be an array of feature keys or {\"feature_key\", \"limit_value\"} objects")
	}
	if len(items) > MaxFeatures {
		return nil, apperr.Field("features", "at most %d features", MaxFeatures)
	}
	out := make([]Feature, 0, len(items))
	for i, item := range items {
		field := "features[" + strconv.Itoa(i) + "]"
		var key string
		if json.Unmarshal(item, &key) == nil {
			out = append(out, Feature{Key: key})
			continue
		}
		o, err := fields.Decode(item)
		if err != nil {
			return nil, apperr.Field(field, "must be a feature key or an object with feature_key and limit_value")
		}
		f := Feature{Key: o.RequiredString("feature_key", 0, 0)}
		if a, ok := o.Amount("limit_value"); ok {
			l := int64(a)
			f.Limit = &l
		}
		if err := o.Err(); err != nil {
			e, _ := apperr.As(err)
			return nil, apperr.Field(field, "%s", e.Message)
		}
		out = append(out, f)
	}
	return out, nil
}

// Validate applies the rules that need no database, in the API's codes:
// invalid_request naming the field, amount_too_small, invalid_interval.
func (in *Input) Validate() error {
	if n := utf8.RuneCountInString(strings.TrimSpace(in.Name)); n < MinNameLen || n > MaxNameLen {
		return apperr.Field("name", "must be %d to %d characters", MinNameLen, MaxNameLen)
	}
	if in.Description != nil && utf8.RuneCountInString(*in.Description) > MaxDescription {
		return apperr.Field("description", "must be at most %d characters", MaxDescription)
	}
	if in.Amount < MinAmount {
		return apperr.New(apperr.AmountTooSmall, "amount: must be at least %d base units (1.00 USDC)", MinAmount)
	}
	if err := periods.Validate(in.Interval, in.IntervalDays); err != nil {
		return err
	}
	if in.TrialDays != nil && (*in.TrialDays < MinTrialDays || *in.TrialDays > MaxTrialDays) {
		return apperr.Field("trial_days", "must be %d to %d days", MinTrialDays, MaxTrialDays)
	}
	switch in.UsageType {
	case "":
		in.UsageType = Licensed
	case Licensed, Metered:
	default:
		return apperr.Field("usage_type", "must be licensed or metered")
	}
	if in.UsageType == Metered {
		if in.Meter == nil {
			return apperr.Field("meter", "is required for a metered plan: the id of the meter whose usage is billed")
		}
		if in.PricingModel == nil {
			return apperr.Field("pricing_model", "is required for a metered plan")
		}
	} else {
		if in.Meter != nil {
			return apperr.Field("meter", "only metered plans take a meter (set usage_type to metered)")
		}
		if in.PricingModel != nil {
			return apperr.Field("pricing_model", "only metered plans take a pricing model (set usage_type to metered)")
		}
	}
	seen := map[string]bool{}
	for i, f := range in.Features {
		field := "features[" + strconv.Itoa(i) + "]"
		if err := metering.ValidateKey(field+".feature_key", f.Key); err != nil {
			return err
		}
		if seen[f.Key] {
			return apperr.Field(field+".feature_key", "%q is listed twice", f.Key)
		}
		seen[f.Key] = true
	}
	return nil
}

const columns = `p.merchant_id, p.mode, p.id, p.seq, p.product_id, pr.name AS product_name, pr.description AS product_description,
	p.amount, p.interval, p.interval_days, p.usage_type, p.meter_id, p.pricing_model, p.features, p.trial_days, p.created_at`

// Columns is the select list of a Plan over plans p JOIN products pr, for a
// statement of another package that reads a plan with more in one round
// trip (checkout).
const Columns = columns

// Create stores a product and its plan, created at now. A metered plan's
// meter and every feature must exist in the scope (invalid_request naming
// the field); a limit is only for metered features. Fails with
// invalid_request, amount_too_small or invalid_interval.
func Create(ctx context.Context, db *store.DB, s tenant.Scope, in Input, now time.Time) (Plan, error) {
	return store.InTx(ctx, db, func(tx *store.Tx) (Plan, error) { return CreateTx(ctx, tx, s, in, now) })
}

// CreateTx is Create in the caller's transaction.
func CreateTx(ctx context.Context, tx *store.Tx, s tenant.Scope, in Input, now time.Time) (Plan, error) {
	if err := in.Validate(); err != nil {
		return Plan{}, err
	}
	if in.Meter != nil {
		if _, ok, err := metering.ByID(ctx, tx, s, *in.Meter); err != nil {
			return Plan{}, err
		} else if !ok {
			return Plan{}, apperr.Field("meter", "no meter %q in this account and mode (create it first with POST /v1/meters)", *in.Meter)
		}
	}
	for i, f := range in.Features {
		feat, err := features.ByKey(ctx, tx, s, f.Key)
		if apperr.CodeOf(err) == apperr.UnknownFeature {
			return Plan{}, apperr.Field("features["+strconv.Itoa(i)+"].feature_key", "no feature %q in this account and mode", f.Key)
		}
		if err != nil {
			return Plan{}, err
		}
		if f.Limit != nil && feat.Type != features.Metered {
			return Plan{}, apperr.Field("features["+strconv.Itoa(i)+"].limit_value", "feature %s is boolean; only metered features take a limit", f.Key)
		}
	}
	feats := in.Features
	if feats == nil {
		feats = []Feature{}
	}
	featJSON, _ := json.Marshal(feats)
	var pm json.RawMessage
	if in.PricingModel != nil {
		pm, _ = json.Marshal(in.PricingModel.Wire())
	}
	var p Plan
	err := tx.GetContext(ctx, &p, `WITH pr AS (
			INSERT INTO products (merchant_id, mode, id, name, description, created_at) VALUES ($1, $2, $3, $4, $5, $12)
			RETURNING id, name, description
		), p AS (
			INSERT INTO plans (merchant_id, mode, id, product_id, amount, interval, interval_days, usage_type, meter_id, pricing_model, features,
				trial_days, created_at)
			SELECT $1, $2, $6, pr.id, $7, $8, $9, $10, $11, $13, $14, $15, $12 FROM pr
			RETURNING *
		)
		SELECT `+columns+` FROM p, pr`,
		s.MerchantID, s.Mode, id.New("prod"), strings.TrimSpace(in.Name), in.Description, id.New("price"), in.Amount, in.Interval,
		in.IntervalDays, in.UsageType, in.Meter, now, nullJSON(pm), featJSON, in.TrialDays)
	return p, store.Translate(err)
}

func nullJSON(b json.RawMessage) *string {
	if b == nil {
		return nil
	}
	s := string(b)
	return &s
}

// Get returns the plan with id in any merchant and mode, for the public
// checkout page (plan ids are unguessable); ok=false when there is none.
func Get(ctx context.Context, q store.Querier, planID string) (Plan, bool, error) {
	var ps []Plan
	err := q.SelectContext(ctx, &ps, `SELECT `+columns+` FROM plans p JOIN products pr ON pr.merchant_id = p.merchant_id AND pr.id = p.product_id
		WHERE p.id = $1`, planID)
	if err != nil || len(ps) == 0 {
		return Plan{}, false, store.Translate(err)
	}
	return ps[0], true, nil
}

// Features returns the features the plan grants.
func (p Plan) Features() []Feature {
	var fs []Feature
	_ = json.Unmarshal(p.FeaturesJSON, &fs)
	return fs
}

// Pricing returns a metered plan's pricing model.
func (p Plan) Pricing() (pricing.Model, error) { return pricing.Decode(p.PricingJSON) }

// Scope is the plan's merchant and mode.
func (p Plan) Scope() tenant.Scope { return tenant.Scope{MerchantID: p.MerchantID, Mode: p.Mode} }

// Wire returns the plan's public form; baseURL prefixes its checkout link.
func (p Plan) Wire(baseURL string) wire.Plan {
	fs := []wire.PlanFeature{}
	for _, f := range p.Features() {
		pf := wire.PlanFeature{FeatureKey: f.Key}
		if f.Limit != nil {
			l := strconv.FormatInt(*f.Limit, 10)
			pf.LimitValue = &l
		}
		fs = append(fs, pf)
	}
	return wire.Plan{
		Object: "plan", ID: p.ID, Amount: p.Amount.String(), Interval: p.Interval, IntervalDays: p.IntervalDays,
		UsageType: p.UsageType, Meter: p.MeterID, PricingModel: wire.StoredPricing(p.PricingJSON), Features: fs, TrialDays: p.TrialDays,
		Product:     wire.Product{ID: p.ProductID, Name: p.ProductName, Description: p.ProductDesc},
		CheckoutURL: baseURL + "/checkout/" + p.ID, CreatedAt: wire.Timestamp(p.CreatedAt), Livemode: p.Mode == tenant.Live,
	}
}
