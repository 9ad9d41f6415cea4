// Package pricing owns metered plans' pricing models: decoding and
// validating `pricing_model` (POST /v1/plans), its canonical JSON, and
// rating a period's usage into an amount with lines that explain it. It is
// pure logic: no database, no clock.
//
// Arithmetic is exact: quantities and rated amounts are math/big integers,
// so no usage is too large to rate. Unit amounts are whole base units (the API
// admits only integer amounts), so every product is an integer and the rule
// that a fraction of a base unit rounds half up, once, on the total, holds
// trivially: there is never a fraction to round.
//
// Bounds, so that a model always fits its storage and its wire form:
// amounts (unitAmount, amount) fit money.Amount (at most 2^63−1 base units);
// unit counts (includedUnits, packageSize, upTo) are at most MaxUnits
// (2^53−1, the largest integer every JSON parser reads exactly); at most
// MaxTiers tiers.
package pricing

import (
	"slices"
	"strconv"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/money"
)

// Kind selects a pricing model.
type Kind string

// The kinds of pricing model.
const (
	PerUnit Kind = "per_unit"
	Package Kind = "package"
	Tiered  Kind = "tiered"
	Flat    Kind = "flat"
)

// Mode is how a tiered model prices units.
type Mode string

// Tiered modes: graduated prices each unit in its own tier; volume prices
// every unit at the tier the total falls in.
const (
	Graduated Mode = "graduated"
	Volume    Mode = "volume"
)

// MaxTiers is the most tiers a tiered model may have.
const MaxTiers = 100

// MaxUnits is the largest unit count (includedUnits, packageSize, upTo):
// 2^53−1, so the counts, echoed as JSON integers, survive any JSON parser.
const MaxUnits = 1<<53 - 1

// Model is a validated pricing model. Only the fields of its Kind are set;
// the others are zero.
type Model struct {
	Kind Kind
	// UnitAmount is the price of one unit (per_unit) or one package (package).
	UnitAmount money.Amount
	// IncludedUnits are free each period (per_unit).
	IncludedUnits int64
	// PackageSize is the number of units in a package (package), at least 1.
	PackageSize int64
	// Mode and Tiers describe a tiered model.
	Mode  Mode
	Tiers []Tier
	// Amount is the flat fee per period (flat).
	Amount money.Amount
}

// Tier is one tier of a tiered model: it covers units up to and including
// UpTo (nil for the last tier, which has no upper bound).
type Tier struct {
	UpTo       *int64
	UnitAmount money.Amount
}

// Validate checks a model built in code (Decode already applies it): known
// kind and mode, non-negative amounts, counts within bounds, packageSize ≥ 1,
// 1 to MaxTiers tiers whose upTo are strictly ascending positive integers,
// null on the last tier and only there, and no field of another kind set.
// It fails with invalid_request naming the field as pricing_model.<field>.
func (m Model) Validate() error {
	amount := func(field string, a money.Amount) error {
		if a < 0 {
			return apperr.Field(prefix+field, "must be a non-negative integer of base units")
		}
		return nil
	}
	count := func(field string, n, min int64) error {
		if n < min || n > MaxUnits {
			return apperr.Field(prefix+field, "must be an integer from %d to %d", min, int64(MaxUnits))
		}
		return nil
	}
	if err := m.onlyKindFields(); err != nil {
		return err
	}
	switch m.Kind {
	case PerUnit:
		if err := amount("unitAmount", m.UnitAmount); err != nil {
			return err
		}
		return count("includedUnits", m.IncludedUnits, 0)
	case Package:
		if err := amount("unitAmount", m.UnitAmount); err != nil {
			return err
		}
		return count("packageSize", m.PackageSize, 1)
	case Flat:
		return amount("amount", m.Amount)
	case Tiered:
		if m.Mode != Graduated && m.Mode != Volume {
			return apperr.Field(prefix+"mode", "must be graduated or volume")
		}
		return validateTiers(m.Tiers)
	}
	return apperr.Field(prefix+"kind", "must be one of per_unit, package, tiered, flat")
}

// prefix is how every field of a model is named in errors.
const prefix = "pricing_model."

// onlyKindFields rejects a model carrying a field that belongs to another
// kind, so that a model has one meaning and one wire form.
func (m Model) onlyKindFields() error {
	allowed := kindFields(m.Kind)
	if allowed == nil {
		return nil // the kind itself is reported by Validate
	}
	set := []struct {
		name string
		set  bool
	}{
		{"unitAmount", m.UnitAmount != 0},
		{"includedUnits", m.IncludedUnits != 0},
		{"packageSize", m.PackageSize != 0},
		{"mode", m.Mode != ""},
		{"tiers", m.Tiers != nil},
		{"amount", m.Amount != 0},
	}
	for _, f := range set {
		if f.set && !slices.Contains(allowed, f.name) {
			return apperr.Field(prefix+f.name, "is not a field of kind %s", m.Kind)
		}
	}
	return nil
}

// kindFields returns the fields kind admits besides kind itself, the
// required ones first; nil for an unknown kind.
func kindFields(k Kind) []string {
	switch k {
	case PerUnit:
		return []string{"unitAmount", "includedUnits"}
	case Package:
		return []string{"unitAmount", "packageSize"}
	case Tiered:
		return []string{"mode", "tiers"}
	case Flat:
		return []string{"amount"}
	}
	return nil
}

func validateTiers(tiers []Tier) error {
	if len(tiers) == 0 || len(tiers) > MaxTiers {
		return apperr.Field(prefix+"tiers", "must be an array of 1 to %d tiers", MaxTiers)
	}
	var prev int64
	for i, t := range tiers {
		at := func(f string) string { return prefix + "tiers[" + strconv.Itoa(i) + "]." + f }
		if t.UnitAmount < 0 {
			return apperr.Field(at("unitAmount"), "must be a non-negative integer of base units")
		}
		last := i == len(tiers)-1
		switch {
		case last && t.UpTo != nil:
			return apperr.Field(at("upTo"), "must be null on the last tier, which has no upper bound")
		case !last && t.UpTo == nil:
			return apperr.Field(at("upTo"), "may be null only on the last tier")
		case !last && (*t.UpTo < 1 || *t.UpTo > MaxUnits):
			return apperr.Field(at("upTo"), "must be an integer from 1 to %d", int64(MaxUnits))
		case !last && *t.UpTo <= prev:
			return apperr.Field(at("upTo"), "must be greater than the previous tier's upTo (%d)", prev)
		}
		if !last {
			prev = *t.UpTo
		}
	}
	return nil
}
