package wire

import "encoding/json"

// PricingModel is a metered plan's `pricing_model`, in the API's camelCase,
// as the API echoes it and the database stores it. Only the fields of its
// kind are present: unitAmount and includedUnits (per_unit), unitAmount and
// packageSize (package), mode and tiers (tiered), amount (flat). Money is a
// string of base units like every amount; unit counts are JSON integers
// (bounded so that every JSON parser reads them exactly).
type PricingModel struct {
	Kind          string        `json:"kind"`
	UnitAmount    *string       `json:"unitAmount,omitempty"`
	IncludedUnits *int64        `json:"includedUnits,omitempty"`
	PackageSize   *int64        `json:"packageSize,omitempty"`
	Mode          *string       `json:"mode,omitempty"`
	Tiers         []PricingTier `json:"tiers,omitempty"`
	Amount        *string       `json:"amount,omitempty"`
}

// PricingTier is one tier of a tiered pricing model; UpTo is null for the
// last, unbounded tier.
type PricingTier struct {
	UpTo       *int64 `json:"upTo"`
	UnitAmount string `json:"unitAmount"`
}

// PaymentLine is one step of how a metered charge was computed (the `lines`
// of a subscription payment and of an upcoming charge). Kind is `usage`
// (units priced at unit_amount, per package for package pricing),
// `included` (units free under includedUnits), `flat` (the flat fee) or
// `cap` (the plan's per-period cap; its amount is negative, so the lines'
// amounts add up to the payment's amount). Tier is 1-based and null outside
// tiered pricing; quantity and unit_amount are null where they do not apply.
type PaymentLine struct {
	Kind        string  `json:"kind"`
	Description string  `json:"description"`
	Quantity    *string `json:"quantity"`
	Tier        *int    `json:"tier"`
	UnitAmount  *string `json:"unit_amount"`
	Amount      string  `json:"amount"`
}

// StoredPricing reads a pricing model stored as its JSON (nil for none).
func StoredPricing(b []byte) *PricingModel {
	if len(b) == 0 {
		return nil
	}
	var m PricingModel
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return &m
}

// StoredLines reads payment lines stored as their JSON (nil for none).
func StoredLines(b []byte) []PaymentLine {
	var ls []PaymentLine
	_ = json.Unmarshal(b, &ls)
	return ls
}
