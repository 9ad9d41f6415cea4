package money

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Amount
		err  error
	}{
		{"0", 0, nil},
		{"9000000", 9_000_000, nil},
		{"007", 7, nil},
		{"9223372036854775807", math.MaxInt64, nil},
		{"9223372036854775808", 0, ErrOverflow},
		{"99999999999999999999999", 0, ErrOverflow},
		{"", 0, ErrSyntax},
		{"-1", 0, ErrSyntax},
		{"+1", 0, ErrSyntax},
		{"1.0", 0, ErrSyntax},
		{"1e6", 0, ErrSyntax},
		{" 1", 0, ErrSyntax},
		{"１", 0, ErrSyntax}, // fullwidth digit
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if got != tt.want || !errors.Is(err, tt.err) {
			t.Errorf("Parse(%q) = %d, %v; want %d, %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestParseJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Amount
		ok   bool
	}{
		{`9000000`, 9_000_000, true},
		{`"9000000"`, 9_000_000, true},
		{` 12 `, 12, true},
		{`9.5`, 0, false},
		{`9e6`, 0, false},
		{`-1`, 0, false},
		{`"-1"`, 0, false},
		{`null`, 0, false},
		{`""`, 0, false},
		{`"`, 0, false},
		{`true`, 0, false},
		{`"1"2"`, 0, false},
	}
	for _, tt := range tests {
		got, err := ParseJSON([]byte(tt.in))
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseJSON(%s) = %d, %v; want %d, ok=%t", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseCLI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Amount
		ok   bool
	}{
		{"9000000", 9_000_000, true},
		{"9usdc", 9_000_000, true},
		{"9.00usdc", 9_000_000, true},
		{"9.5 USDC", 9_500_000, true},
		{"0.5usdc", 500_000, true},
		{".5usdc", 500_000, true},
		{"0.000001usdc", 1, true},
		{" 3 Usdc ", 3_000_000, true},
		{"9223372036854.775807usdc", math.MaxInt64, true},
		{"9223372036854.775808usdc", 0, false},
		{"0.0000001usdc", 0, false},
		{"9.usdc", 0, false},
		{".usdc", 0, false},
		{"usdc", 0, false},
		{"-1usdc", 0, false},
		{"1,5usdc", 0, false},
		{"1.5.0usdc", 0, false},
		{"9.5", 0, false},
		{"9 usd", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseCLI(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseCLI(%q) = %d, %v; want %d, ok=%t", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestUSDC(t *testing.T) {
	t.Parallel()
	tests := map[Amount]string{
		0:             "0.00",
		1:             "0.000001",
		1500:          "0.0015",
		9_000_000:     "9.00",
		9_500_000:     "9.50",
		123_456_789:   "123.456789",
		-2_500_000:    "-2.50",
		math.MaxInt64: "9223372036854.775807",
		math.MinInt64: "-9223372036854.775808",
	}
	for a, want := range tests {
		if got := a.USDC(); got != want {
			t.Errorf("Amount(%d).USDC() = %q, want %q", int64(a), got, want)
		}
	}
}

func TestAddSub(t *testing.T) {
	t.Parallel()
	if s, err := Add(2, 3); s != 5 || err != nil {
		t.Errorf("Add(2, 3) = %d, %v", s, err)
	}
	if _, err := Add(math.MaxInt64, 1); !errors.Is(err, ErrOverflow) {
		t.Errorf("Add(max, 1): %v, want ErrOverflow", err)
	}
	if _, err := Add(math.MinInt64, -1); !errors.Is(err, ErrOverflow) {
		t.Errorf("Add(min, -1): %v, want ErrOverflow", err)
	}
	if s, err := Sub(2, 5); s != -3 || err != nil {
		t.Errorf("Sub(2, 5) = %d, %v", s, err)
	}
	if _, err := Sub(0, math.MinInt64); !errors.Is(err, ErrOverflow) {
		t.Errorf("Sub(0, min): %v, want ErrOverflow", err)
	}
}

// FuzzParse checks that Parse accepts exactly ^[0-9]+$ within range and
// agrees with strconv.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"0", "9000000", "9223372036854775807", "9223372036854775808", "-1", "1e6", "", "10000000000000000000A"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Parse(s)
		digits := s != "" && strings.Trim(s, "0123456789") == ""
		ref, refErr := strconv.ParseInt(s, 10, 64)
		prefix := s[:len(s)-len(strings.TrimLeft(s, "0123456789"))]
		_, prefixErr := strconv.ParseInt(prefix, 10, 64)
		switch {
		case !digits && prefix != "" && prefixErr != nil:
			// Parse stops at the overflow before it sees the bad byte.
			if err == nil {
				t.Fatalf("Parse(%q) = %d, want an error", s, got)
			}
		case !digits:
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("Parse(%q) = %d, %v; want ErrSyntax", s, got, err)
			}
		case refErr != nil:
			if !errors.Is(err, ErrOverflow) {
				t.Fatalf("Parse(%q) = %d, %v; want ErrOverflow", s, got, err)
			}
		case err != nil || int64(got) != ref:
			t.Fatalf("Parse(%q) = %d, %v; want %d", s, got, err, ref)
		}
	})
}

// FuzzParseJSON checks that whatever ParseJSON accepts is a non-negative
// amount that round-trips through its wire form.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`9000000`, `"9000000"`, `9.5`, `-1`, `null`, `"1e3"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := ParseJSON(raw)
		if err != nil {
			return
		}
		if a < 0 {
			t.Fatalf("ParseJSON(%q) = %d, negative", raw, a)
		}
		if b, err := ParseJSON([]byte(`"` + a.String() + `"`)); err != nil || b != a {
			t.Fatalf("ParseJSON(%q) = %d, but its string form gives %d, %v", raw, a, b, err)
		}
	})
}

// FuzzParseCLI checks that every accepted amount is non-negative and that
// its USDC form, with the suffix, parses back to the same amount.
func FuzzParseCLI(f *testing.F) {
	for _, s := range []string{"9000000", "9usdc", "9.00usdc", "0.5 USDC", ".5usdc", "9.usdc", "-1usdc", "1.0000001usdc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseCLI(s)
		if err != nil {
			return
		}
		if a < 0 {
			t.Fatalf("ParseCLI(%q) = %d, negative", s, a)
		}
		if b, err := ParseCLI(a.USDC() + "usdc"); err != nil || b != a {
			t.Fatalf("ParseCLI(%q) = %d, but %susdc gives %d, %v", s, a, a.USDC(), b, err)
		}
		if b, err := ParseCLI(a.String()); err != nil || b != a {
			t.Fatalf("ParseCLI(%q) = %d, but %s gives %d, %v", s, a, a.String(), b, err)
		}
	})
}
