package cmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/money"
)

// pricingFlags are the flags of `plan create` that make a metered plan's
// pricing_model, as typed. The CLI only turns them into JSON (a value that
// cannot be read is a usage error); what the model means is the API's to
// validate, and its error names the pricing_model field.
type pricingFlags struct {
	Kind          string   // --pricing
	UnitAmount    string   // --unit-amount
	IncludedUnits string   // --included-units
	PackageSize   string   // --package-size
	TierMode      string   // --tier-mode
	Tiers         []string // --tier upTo:unitAmount, repeatable
	FlatAmount    string   // --flat-amount
	Model         string   // --pricing-model, the whole object as JSON
}

// pricingModel is the JSON the flags build, in the API's camelCase: amounts
// as strings of base units, unit counts as integers.
type pricingModel struct {
	Kind          string        `json:"kind"`
	UnitAmount    *string       `json:"unitAmount,omitempty"`
	IncludedUnits *int64        `json:"includedUnits,omitempty"`
	PackageSize   *int64        `json:"packageSize,omitempty"`
	Mode          string        `json:"mode,omitempty"`
	Tiers         []pricingTier `json:"tiers,omitempty"`
	Amount        *string       `json:"amount,omitempty"`
}

// pricingTier is one tier; UpTo is null for the last, unbounded one.
type pricingTier struct {
	UpTo       *int64 `json:"upTo"`
	UnitAmount string `json:"unitAmount"`
}

// pieces reports whether any flag building a model was given.
func (p pricingFlags) pieces() bool {
	return p.Kind != "" || p.UnitAmount != "" || p.IncludedUnits != "" || p.PackageSize != "" ||
		p.TierMode != "" || len(p.Tiers) > 0 || p.FlatAmount != ""
}

// given reports whether the flags describe a pricing model at all.
func (p pricingFlags) given() bool { return p.pieces() || p.Model != "" }

// model returns the pricing_model to send, or nil when no flag gave one.
// Without --pricing the kind follows from the flags: tiers make tiered, a
// flat amount flat, a package size package, and otherwise per_unit.
func (p pricingFlags) model() (json.RawMessage, error) {
	if p.Model != "" {
		if p.pieces() {
			return nil, usageError("--pricing-model gives the whole pricing model: leave out --pricing, --unit-amount, --included-units, --package-size, --tier-mode, --tier and --flat-amount")
		}
		var b bytes.Buffer
		if err := json.Compact(&b, []byte(p.Model)); err != nil {
			return nil, usageError("--pricing-model is not valid JSON: %v", err)
		}
		return b.Bytes(), nil
	}
	if !p.pieces() {
		return nil, nil
	}
	m := pricingModel{Kind: p.Kind, Mode: p.TierMode}
	if m.Kind == "" {
		switch {
		case len(p.Tiers) > 0 || p.TierMode != "":
			m.Kind = "tiered"
		case p.FlatAmount != "":
			m.Kind = "flat"
		case p.PackageSize != "":
			m.Kind = "package"
		default:
			m.Kind = "per_unit"
		}
	}
	var err error
	if m.UnitAmount, err = optAmount("--unit-amount", p.UnitAmount); err != nil {
		return nil, err
	}
	if m.Amount, err = optAmount("--flat-amount", p.FlatAmount); err != nil {
		return nil, err
	}
	if m.IncludedUnits, err = optUnits("--included-units", p.IncludedUnits); err != nil {
		return nil, err
	}
	if m.PackageSize, err = optUnits("--package-size", p.PackageSize); err != nil {
		return nil, err
	}
	for _, s := range p.Tiers {
		t, err := parseTier(s)
		if err != nil {
			return nil, usageError("--tier %q: %v", s, err)
		}
		m.Tiers = append(m.Tiers, t)
	}
	return json.Marshal(m)
}

// optAmount reads an optional amount flag (base units or 9usdc; zero is
// allowed: a free tier is a price).
func optAmount(flag, s string) (*string, error) {
	if s == "" {
		return nil, nil
	}
	a, err := parsePrice(s)
	if err != nil {
		return nil, usageError("%s %q: %v", flag, s, err)
	}
	v := a.String()
	return &v, nil
}

// optUnits reads an optional unit count. A negative one is sent as typed:
// the API says what is wrong with it.
func optUnits(flag, s string) (*int64, error) {
	if s == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return nil, usageError("%s %q: want a whole number of units", flag, s)
	}
	return &n, nil
}

var errPrice = errors.New("want base units (1500) or USDC with a suffix (0.0015usdc)")

// parsePrice reads a unit price: base units or USDC with a suffix, zero
// allowed.
func parsePrice(s string) (money.Amount, error) {
	a, err := money.ParseCLI(s)
	switch {
	case errors.Is(err, money.ErrOverflow):
		return 0, errors.New("too large")
	case err != nil || a < 0:
		return 0, errPrice
	}
	return a, nil
}

// parseTier reads --tier upTo:unitAmount. upTo is a unit count, or `inf`
// or nothing for the last, unbounded tier (null on the wire).
func parseTier(s string) (pricingTier, error) {
	upTo, price, ok := strings.Cut(s, ":")
	if !ok {
		return pricingTier{}, errors.New("want upTo:unitAmount, e.g. 1000:2000 or inf:0.001usdc")
	}
	var t pricingTier
	switch u := strings.TrimSpace(upTo); strings.ToLower(u) {
	case "", "inf":
	default:
		n, err := strconv.ParseInt(u, 10, 64)
		if err != nil {
			return pricingTier{}, fmt.Errorf("upTo %q: want a whole number of units, or inf for the last tier", u)
		}
		t.UpTo = &n
	}
	a, err := parsePrice(strings.TrimSpace(price))
	if err != nil {
		return pricingTier{}, fmt.Errorf("unitAmount %q: %v", price, err)
	}
	t.UnitAmount = a.String()
	return t, nil
}

// parseFeature reads --feature KEY[:LIMIT]: a bare key, or a key with the
// usage limit of a metered feature. The limit is sent as typed; the API
// checks it.
func parseFeature(s string) (client.PlanFeature, error) {
	key, limit, hasLimit := strings.Cut(s, ":")
	key, limit = strings.TrimSpace(key), strings.TrimSpace(limit)
	switch {
	case key == "":
		return client.PlanFeature{}, errors.New("want KEY or KEY:LIMIT, e.g. api_access or seats:5")
	case hasLimit && limit == "":
		return client.PlanFeature{}, errors.New("nothing after the colon: want KEY:LIMIT, e.g. seats:5, or just KEY")
	}
	f := client.PlanFeature{FeatureKey: key}
	if hasLimit {
		f.LimitValue = &limit
	}
	return f, nil
}

// pricingSummary describes a plan's pricing model for people, e.g.
// "per_unit: 0.001 USDC per unit, first 100 units included".
func pricingSummary(raw json.RawMessage) string {
	var m struct {
		Kind          string  `json:"kind"`
		UnitAmount    *string `json:"unitAmount"`
		IncludedUnits *int64  `json:"includedUnits"`
		PackageSize   *int64  `json:"packageSize"`
		Mode          *string `json:"mode"`
		Tiers         []struct {
			UpTo       *int64 `json:"upTo"`
			UnitAmount string `json:"unitAmount"`
		} `json:"tiers"`
		Amount *string `json:"amount"`
	}
	if len(raw) == 0 || string(raw) == "null" || json.Unmarshal(raw, &m) != nil {
		return ""
	}
	unit := usdc(deref(m.UnitAmount))
	switch m.Kind {
	case "per_unit":
		s := "per_unit: " + unit + " per unit"
		if m.IncludedUnits != nil && *m.IncludedUnits > 0 {
			s += fmt.Sprintf(", first %d included", *m.IncludedUnits)
		}
		return s
	case "package":
		if m.PackageSize != nil {
			return fmt.Sprintf("package: %s per %d units", unit, *m.PackageSize)
		}
	case "tiered":
		var parts []string
		for _, t := range m.Tiers {
			bound := "above"
			if t.UpTo != nil {
				bound = fmt.Sprintf("up to %d", *t.UpTo)
			}
			parts = append(parts, bound+" at "+usdc(t.UnitAmount))
		}
		return "tiered (" + deref(m.Mode) + "): " + strings.Join(parts, ", ")
	case "flat":
		return "flat: " + usdc(deref(m.Amount)) + " per period"
	}
	return m.Kind
}
