// Package money holds USDC amounts as exact integers of base units (6
// decimals). No float ever touches an amount; arithmetic that would overflow
// is an error, never a wrap.
package money

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Decimals is the number of decimal places of USDC.
const Decimals = 6

// Amount is a number of USDC base units (1 USDC = 1,000,000). Balances may be
// negative; amounts parsed from input never are.
type Amount int64

// ErrOverflow is returned when an amount does not fit.
var ErrOverflow = errors.New("amount too large")

// ErrSyntax is returned for input that is not a plain non-negative integer.
var ErrSyntax = errors.New("must be a non-negative integer of base units (digits only, as a JSON integer or string)")

// Parse reads a string matching ^[0-9]+$ as base units.
func Parse(s string) (Amount, error) {
	if s == "" {
		return 0, ErrSyntax
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, ErrSyntax
		}
		if v > (math.MaxInt64-uint64(c-'0'))/10 {
			return 0, ErrOverflow
		}
		v = v*10 + uint64(c-'0')
	}
	return Amount(v), nil
}

// ParseJSON reads an amount sent as a JSON integer (9000000) or a JSON string
// of digits ("9000000"). Floats, exponents, signs and null are rejected.
func ParseJSON(raw []byte) (Amount, error) {
	s := strings.TrimSpace(string(raw))
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	return Parse(s)
}

// ParseCLI reads a command-line amount: base units ("9000000") or USDC with a
// suffix ("9usdc", "9.00usdc", "0.5 USDC"). More than 6 decimals is an error.
func ParseCLI(s string) (Amount, error) {
	s = strings.TrimSpace(s)
	lower := strings.ToLower(s)
	if !strings.HasSuffix(lower, "usdc") {
		return Parse(s)
	}
	num := strings.TrimSpace(s[:len(s)-len("usdc")])
	whole, frac, hasDot := strings.Cut(num, ".")
	if whole == "" && (!hasDot || frac == "") {
		return 0, errors.New("amount: expected a number before usdc, e.g. 9.00usdc")
	}
	if len(frac) > Decimals {
		return 0, errors.New("amount: USDC has at most 6 decimals")
	}
	if whole == "" {
		whole = "0"
	}
	if hasDot && frac == "" {
		return 0, errors.New("amount: expected digits after the decimal point")
	}
	digits := whole + frac + strings.Repeat("0", Decimals-len(frac))
	a, err := Parse(digits)
	if err != nil {
		if errors.Is(err, ErrOverflow) {
			return 0, err
		}
		return 0, errors.New("amount: expected base units (9000000) or USDC with a suffix (9usdc, 9.00usdc)")
	}
	return a, nil
}

// String returns the base units in decimal, as sent on the wire.
func (a Amount) String() string { return strconv.FormatInt(int64(a), 10) }

// USDC formats the amount in USDC with at least two decimals: 9000000 →
// "9.00", 1500 → "0.0015".
func (a Amount) USDC() string {
	neg := a < 0
	u := uint64(a)
	if neg {
		u = uint64(-(a + 1)) + 1 // safe for MinInt64
	}
	whole := u / 1_000_000
	frac := strconv.FormatUint(u%1_000_000+1_000_000, 10)[1:]
	frac = strings.TrimRight(frac, "0")
	for len(frac) < 2 {
		frac += "0"
	}
	s := strconv.FormatUint(whole, 10) + "." + frac
	if neg {
		s = "-" + s
	}
	return s
}

// Add returns a+b, or ErrOverflow.
func Add(a, b Amount) (Amount, error) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, ErrOverflow
	}
	return s, nil
}

// Sub returns a-b, or ErrOverflow.
func Sub(a, b Amount) (Amount, error) {
	if b == math.MinInt64 {
		return 0, ErrOverflow
	}
	return Add(a, -b)
}
