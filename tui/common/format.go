package common

import (
	"errors"
	"strings"
	"time"
	"unicode"

	"github.com/charmbracelet/x/ansi"
)

// USDCDecimals is how many decimals a USDC base unit has.
const USDCDecimals = 6

// USDC formats a wire amount (base units, possibly negative) for people:
// "9000000" → "9.00 USDC", "1" → "0.000001 USDC". A value that is not an
// amount is returned as sent; "" stays "".
func USDC(base string) string {
	if base == "" {
		return ""
	}
	digits, neg := strings.CutPrefix(base, "-")
	if digits == "" || strings.TrimFunc(digits, func(r rune) bool { return r >= '0' && r <= '9' }) != "" {
		return base
	}
	digits = strings.TrimLeft(digits, "0")
	if len(digits) <= USDCDecimals {
		digits = strings.Repeat("0", USDCDecimals+1-len(digits)) + digits
	}
	whole, frac := digits[:len(digits)-USDCDecimals], strings.TrimRight(digits[len(digits)-USDCDecimals:], "0")
	for len(frac) < 2 {
		frac += "0"
	}
	if neg && strings.Trim(whole+frac, "0") != "" {
		whole = "-" + whole
	}
	return whole + "." + frac + " USDC"
}

// ParseUSDC reads an amount typed by a person in USDC ("12", "12.5",
// "0.000001", "12.50 usdc") and returns it in base units ("12500000"). It
// fails for an empty value, a sign, anything but digits and one dot, more
// than 6 decimals, zero, or more than 30 digits.
func ParseUSDC(s string) (string, error) {
	s = strings.TrimSpace(s)
	if lower := strings.ToLower(s); strings.HasSuffix(lower, "usdc") {
		s = strings.TrimSpace(s[:len(s)-len("usdc")])
	}
	if s == "" {
		return "", errors.New("enter an amount in USDC, e.g. 12.50")
	}
	whole, frac, dot := strings.Cut(s, ".")
	if dot && frac == "" && whole == "" {
		return "", errors.New("not a number")
	}
	for _, part := range []string{whole, frac} {
		for _, r := range part {
			if r < '0' || r > '9' {
				return "", errors.New("use digits and one decimal point, e.g. 12.50")
			}
		}
	}
	if len(frac) > USDCDecimals {
		return "", errors.New("USDC has at most 6 decimals")
	}
	digits := strings.TrimLeft(whole+frac+strings.Repeat("0", USDCDecimals-len(frac)), "0")
	if digits == "" {
		return "", errors.New("must be more than 0")
	}
	if len(digits) > 30 {
		return "", errors.New("too large")
	}
	return digits, nil
}

// Clean makes API text safe to draw: control characters, which could move
// the cursor or drive the terminal, become spaces.
func Clean(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// Fit truncates s (which may hold styles) to width cells, ending in "…"
// when cut.
func Fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	return ansi.Truncate(s, width, "…")
}

// Pad fits s to exactly width cells: truncated, or padded with spaces on
// the right (left when right is true).
func Pad(s string, width int, right bool) string {
	s = Fit(s, width)
	gap := width - ansi.StringWidth(s)
	if gap <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", gap) + s
	}
	return s + strings.Repeat(" ", gap)
}

// Lines returns exactly n lines of s: cut, or filled with empty lines.
func Lines(s string, n int) string {
	if n <= 0 {
		return ""
	}
	ls := strings.Split(s, "\n")
	if len(ls) > n {
		ls = ls[:n]
	}
	for len(ls) < n {
		ls = append(ls, "")
	}
	return strings.Join(ls, "\n")
}

// When formats an API time for a table cell in local time: the clock time
// for today, else the date and minute.
func When(t time.Time, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	t = t.Local()
	if y, m, d := t.Date(); func() bool { y2, m2, d2 := now.Local().Date(); return y == y2 && m == m2 && d == d2 }() {
		return t.Format("15:04:05")
	}
	return t.Format("01-02 15:04")
}

// Timestamp formats an API time in full, for detail views.
func Timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// Deref returns *s, or "" for nil.
func Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
