package daemon

import (
	"strconv"

	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/pricing"
)

// pricingOf explains a metered plan's pricing model in words, with a table
// for tiers: unit names what the meter counts, period one billing period,
// limit the per-period cap.
func pricingOf(m pricing.Model, unit, period string, limit money.Amount) *pricingView {
	pv := &pricingView{UnitsHeader: "Units (" + unit + ")",
		Cap: "Charges are capped at " + usdc(limit) + " per " + period + ", whatever the usage."}
	switch m.Kind {
	case pricing.PerUnit:
		pv.Rule = price(m.UnitAmount) + " per " + unit + "."
		if m.IncludedUnits > 0 {
			pv.Included = "The first " + group(m.IncludedUnits) + " each " + period + " are included at no charge."
		}
	case pricing.Package:
		pv.Rule = price(m.UnitAmount) + " per package of " + group(m.PackageSize) + " units (" + unit + "); a started package is charged in full."
	case pricing.Flat:
		pv.Rule = "A flat " + usdc(m.Amount) + " per " + period + ", whatever the usage."
	case pricing.Tiered:
		pv.Rule = "Graduated tiers: each unit is priced at the rate of the tier it falls in."
		if m.Mode == pricing.Volume {
			pv.Rule = "Volume tiers: every unit is priced at the rate of the tier the " + period + "'s total falls in."
		}
		from := int64(1)
		for _, t := range m.Tiers {
			rng := group(from) + " and up"
			if t.UpTo != nil {
				rng = group(from) + " – " + group(*t.UpTo)
				if *t.UpTo == from {
					rng = group(from)
				}
				from = *t.UpTo + 1
			}
			pv.Tiers = append(pv.Tiers, tierRow{Range: rng, Unit: price(t.UnitAmount)})
		}
	default:
		return nil
	}
	return pv
}

// price is a unit price: "Free" for zero.
func price(a money.Amount) string {
	if a == 0 {
		return "Free"
	}
	return usdc(a)
}

// group writes n with thousands separators: 1234567 → "1,234,567".
func group(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+1)
	if neg {
		out = append(out, '-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
