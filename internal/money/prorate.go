package money

import "math/big"

// Prorate returns a × num ÷ den rounded half up once, on the magnitude (so
// a credit rounds like the charge it mirrors): the part of a per-period
// difference a for num of den seconds. The product is computed exactly,
// whatever its size; den must be positive and num in 0..den. A result that
// does not fit is ErrOverflow (it cannot, with num ≤ den).
func Prorate(a Amount, num, den int64) (Amount, error) {
	if den <= 0 || num < 0 || num > den {
		return 0, ErrOverflow
	}
	neg := a < 0
	p := new(big.Int).Abs(big.NewInt(int64(a)))
	p.Mul(p, big.NewInt(num))
	// Half up: ⌊(2·p + den) ÷ (2·den)⌋.
	d := big.NewInt(den)
	p.Mul(p, big.NewInt(2))
	p.Add(p, d)
	p.Quo(p, d.Mul(d, big.NewInt(2)))
	if neg {
		p.Neg(p)
	}
	if !p.IsInt64() {
		return 0, ErrOverflow
	}
	return Amount(p.Int64()), nil
}
