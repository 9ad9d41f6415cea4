package id

import (
	"regexp"
	"testing"
	"time"
)

var shape = regexp.MustCompile(`^inv_[0-9A-Za-z]{24}$`)

func TestNewShape(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 1000 {
		v := New("inv")
		if !shape.MatchString(v) {
			t.Fatalf("%q is not inv_ and 24 base62 characters", v)
		}
		if seen[v] {
			t.Fatalf("%q made twice", v)
		}
		seen[v] = true
	}
}

// Ids sort (bytewise) by the millisecond they were made in, across the
// places where a base62 digit rolls over (9→A, Z→a, z→0 with a carry).
func TestIDsSortByTime(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	var prev string
	for ms := range 62*62 + 5 {
		v := at("me", base.Add(time.Duration(ms)*time.Millisecond))
		if prev != "" && v <= prev {
			t.Fatalf("%q, made 1 ms after %q, does not sort after it", v, prev)
		}
		prev = v
	}
	// The time part is fixed-width until the year 8888.
	if v := at("me", time.Date(8000, 1, 1, 0, 0, 0, 0, time.UTC)); !regexp.MustCompile(`^me_[0-9A-Za-z]{24}$`).MatchString(v) {
		t.Errorf("year 8000: %q", v)
	}
}

func TestTimeReadsNew(t *testing.T) {
	t.Parallel()
	for _, when := range []time.Time{time.Now(), time.Date(2026, 11, 23, 12, 0, 0, 123456789, time.UTC), time.UnixMilli(0)} {
		got, ok := Time(at("me", when))
		if want := when.Truncate(time.Millisecond).UTC(); !ok || !got.Equal(want) {
			t.Errorf("Time of an id made at %s: %s, %v", want, got, ok)
		}
	}
	for _, v := range []string{"", "me_", "me_1", "me_" + "!!!!!!!!" + "0123456789abcdef", "me_0123456789abcdef0123456"} {
		if _, ok := Time(v); ok {
			t.Errorf("Time(%q) reads a time", v)
		}
	}
}

// NewN makes ids of New's form, all different, whose time part reads as
// the time they were made.
func TestNewN(t *testing.T) {
	t.Parallel()
	before := time.Now().Truncate(time.Millisecond)
	ids := NewN("inv", 1000)
	after := time.Now()
	if len(ids) != 1000 || NewN("inv", 0) != nil {
		t.Fatalf("NewN made %d ids, want 1000 (and none for 0)", len(ids))
	}
	seen := map[string]bool{}
	for _, v := range ids {
		if !shape.MatchString(v) {
			t.Fatalf("%q is not inv_ and 24 base62 characters", v)
		}
		if seen[v] {
			t.Fatalf("%q made twice", v)
		}
		seen[v] = true
		if at, ok := Time(v); !ok || at.Before(before) || at.After(after) {
			t.Fatalf("%q reads as made at %s (%v), not between %s and %s", v, at, ok, before, after)
		}
	}
}
