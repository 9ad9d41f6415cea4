package page

import (
	"net/url"
	"testing"
	"time"
)

func TestCursorRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 22, 3, 49, 26, 123456000, time.UTC)
	for _, c := range []Cursor{{At: at, Seq: 42}, {At: at}, {At: at.Truncate(time.Second), Seq: 9_000_000_000_000_000_000}} {
		got, err := ParseCursor(c.String())
		if err != nil || !got.At.Equal(c.At) || got.Seq != c.Seq {
			t.Fatalf("%s: got %+v %v", c, got, err)
		}
		if _, err := time.Parse(time.RFC3339Nano, c.String()); err != nil {
			t.Fatalf("%s is not an RFC 3339 date-time: %v", c, err)
		}
	}
}

func TestParseCursorPlainDateTimes(t *testing.T) {
	cases := map[string]time.Time{
		"2026-01-02T03:04:05Z":        time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		"2026-01-02T03:04:05.5Z":      time.Date(2026, 1, 2, 3, 4, 5, 500000000, time.UTC),
		"2026-01-02T05:04:05+02:00":   time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		"2026-01-02t03:04:05.000001z": time.Date(2026, 1, 2, 3, 4, 5, 1000, time.UTC),
	}
	for in, want := range cases {
		c, err := ParseCursor(in)
		if err != nil || !c.At.Equal(want) || c.Seq != 0 {
			t.Fatalf("%s: %+v %v", in, c, err)
		}
	}
	for _, bad := range []string{"", "yesterday", "2026-01-02", "2026-13-02T03:04:05Z", "2026-01-02T03:04:05", "2026-01-02T03:04:05.Z", "2026-01-02T03:04:05.12345699999999999999999999Z"} {
		if _, err := ParseCursor(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
}

func TestParseQuery(t *testing.T) {
	p, err := ParseQuery(url.Values{})
	if err != nil || p.Limit != DefaultLimit || p.Before != nil {
		t.Fatalf("defaults: %+v %v", p, err)
	}
	for _, bad := range []string{"0", "101", "-1", "x", "1.0", ""} {
		if _, err := ParseQuery(url.Values{"limit": {bad}}); err == nil {
			t.Fatalf("limit %q accepted", bad)
		}
	}
}

func TestBuild(t *testing.T) {
	rows := []int{5, 4, 3}
	r := Build(rows, Params{Limit: 2}, func(i int) Cursor { return Cursor{Seq: int64(i)} })
	if len(r.Items) != 2 || !r.HasMore || r.Next.Seq != 4 {
		t.Fatalf("%+v", r)
	}
	r = Build([]int(nil), Params{Limit: 2}, func(i int) Cursor { return Cursor{} })
	if r.Items == nil || r.HasMore || r.Next != nil {
		t.Fatalf("empty page must have an empty, non-nil slice: %+v", r)
	}
}

// FuzzParseCursor: never panics, and whatever parses re-formats to a cursor
// that parses to the same position.
func FuzzParseCursor(f *testing.F) {
	for _, s := range []string{"2026-11-22T03:49:26.12345642Z", "2026-01-02T05:04:05+02:00", "2026-01-02T03:04:05Z", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCursor(s)
		if err != nil {
			return
		}
		again, err := ParseCursor(c.String())
		if err != nil || !again.At.Equal(c.At) || again.Seq != c.Seq {
			t.Fatalf("%q -> %s -> %+v %v", s, c, again, err)
		}
	})
}
