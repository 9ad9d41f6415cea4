package apperr

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Values quoted into messages are cut short, on a rune boundary; the
// message's own text is kept.
func TestEchoedArgumentsAreClipped(t *testing.T) {
	huge := strings.Repeat("é", 1<<19)
	e := Field("feature_key", "no feature %q in this account and mode", huge)
	if len(e.Message) > 2*MaxEcho || !strings.HasSuffix(e.Message, "…\" in this account and mode") || !utf8.ValidString(e.Message) {
		t.Fatalf("%d bytes: %.300s", len(e.Message), e.Message)
	}
	if e := New(UnknownMeter, "no meter %s (%d)", "short", 7); e.Message != "no meter short (7)" {
		t.Fatal(e.Message)
	}
	args := []any{huge}
	New(Internal, "%s", args...)
	if args[0] != huge {
		t.Fatal("the caller's arguments were changed")
	}
}
