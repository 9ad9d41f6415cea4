package common

import (
	"strings"
	"testing"
)

func TestUSDC(t *testing.T) {
	for in, want := range map[string]string{
		"9000000": "9.00 USDC", "1": "0.000001 USDC", "0": "0.00 USDC", "12345678": "12.345678 USDC",
		"-2500000": "-2.50 USDC", "": "", "abc": "abc", "-": "-", "000100": "0.0001 USDC",
	} {
		if got := USDC(in); got != want {
			t.Errorf("USDC(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseUSDC(t *testing.T) {
	for in, want := range map[string]string{
		"12": "12000000", "12.5": "12500000", "0.000001": "1", " 12.50 usdc ": "12500000", ".5": "500000", "5.": "5000000", "007": "7000000",
	} {
		if got, err := ParseUSDC(in); err != nil || got != want {
			t.Errorf("ParseUSDC(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "usdc", "-1", "+1", "1e6", "1.2345678", "0", "0.000000", "1,5", ".", "1.2.3", strings.Repeat("9", 31)} {
		if got, err := ParseUSDC(in); err == nil {
			t.Errorf("ParseUSDC(%q) = %q, want an error", in, got)
		}
	}
}

// FuzzParseUSDC: whatever is typed, an accepted amount is positive base
// units that format back to the same value.
func FuzzParseUSDC(f *testing.F) {
	for _, s := range []string{"12.50", "0.000001", "1 usdc", "-1", "1e3", ".5", "9999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		base, err := ParseUSDC(s)
		if err != nil {
			return
		}
		if base == "" || base[0] == '0' || strings.Trim(base, "0123456789") != "" {
			t.Fatalf("ParseUSDC(%q) = %q: not positive base units", s, base)
		}
		back, err := ParseUSDC(strings.TrimSuffix(USDC(base), " USDC"))
		if err != nil || back != base {
			t.Fatalf("ParseUSDC(%q) = %q, but its formatting %q parses to %q, %v", s, base, USDC(base), back, err)
		}
	})
}

func TestLayoutHelpers(t *testing.T) {
	if Fit("abcdef", 4) != "abc…" || Pad("ab", 4, true) != "  ab" || Lines("a\nb\nc", 2) != "a\nb" {
		t.Fatal("Fit, Pad or Lines")
	}
}
