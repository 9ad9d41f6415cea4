package pricing

import (
	"database/sql/driver"
	"encoding/json"
	"errors"

	"github.com/tollgatehq/tollgate/internal/wire"
)

// Wire returns the model's canonical public form: the fields of its kind
// only, includedUnits always present for per_unit, every tier's upTo
// present (null on the last). Decode(json.Marshal(m.Wire())) returns m.
func (m Model) Wire() wire.PricingModel {
	str := func(s string) *string { return &s }
	num := func(n int64) *int64 { return &n }
	w := wire.PricingModel{Kind: string(m.Kind)}
	switch m.Kind {
	case PerUnit:
		w.UnitAmount, w.IncludedUnits = str(m.UnitAmount.String()), num(m.IncludedUnits)
	case Package:
		w.UnitAmount, w.PackageSize = str(m.UnitAmount.String()), num(m.PackageSize)
	case Tiered:
		w.Mode = str(string(m.Mode))
		w.Tiers = make([]wire.PricingTier, len(m.Tiers))
		for i, t := range m.Tiers {
			w.Tiers[i] = wire.PricingTier{UnitAmount: t.UnitAmount.String()}
			if t.UpTo != nil {
				w.Tiers[i].UpTo = num(*t.UpTo)
			}
		}
	case Flat:
		w.Amount = str(m.Amount.String())
	}
	return w
}

// MarshalJSON encodes the model as its wire form.
func (m Model) MarshalJSON() ([]byte, error) { return json.Marshal(m.Wire()) }

// UnmarshalJSON decodes and validates a model with Decode; JSON null
// leaves m as it is, as encoding/json does for other types.
func (m *Model) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	d, err := Decode(b)
	if err != nil {
		return err
	}
	*m = d
	return nil
}

// Value stores the model in a jsonb column as its wire form.
func (m Model) Value() (driver.Value, error) { return json.Marshal(m.Wire()) }

// Scan reads a model stored by Value (a jsonb column), validating it again.
// Scan a nullable column into a *Model: NULL leaves it nil.
func (m *Model) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case []byte:
		b = v
	case string:
		b = []byte(v)
	default:
		return errors.New("pricing: cannot scan a pricing model from a non-JSON column")
	}
	return m.UnmarshalJSON(b)
}
