package entitlements

import (
	"testing"
	"time"
)

func TestEvaluate(t *testing.T) {
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { x := now.Add(d); return &x }
	s := func(v string) *string { return &v }
	past := now.Add(-time.Hour)
	for _, tc := range []struct {
		name     string
		st       State
		entitled bool
		reason   string
	}{
		{"no grant", State{}, false, NoGrant},
		{"active", State{Granted: true, StartsAt: past}, true, Active},
		{"revoked wins", State{Granted: true, StartsAt: past, RevokedAt: at(-time.Minute), ActiveUntil: at(-time.Second)}, false, Revoked},
		{"not started", State{Granted: true, StartsAt: now.Add(time.Minute)}, false, NotStarted},
		{"expired at the instant", State{Granted: true, StartsAt: past, ActiveUntil: at(0)}, false, Expired},
		{"before active_until", State{Granted: true, StartsAt: past, ActiveUntil: at(time.Second)}, true, Active},
		{"grace", State{Granted: true, StartsAt: past, ActiveUntil: at(-time.Second), GraceUntil: at(time.Hour)}, true, Grace},
		{"grace over", State{Granted: true, StartsAt: past, ActiveUntil: at(-time.Hour), GraceUntil: at(-time.Second)}, false, Expired},
		{"under limit", State{Granted: true, StartsAt: past, Limit: s("10"), Used: "9"}, true, Active},
		{"at limit", State{Granted: true, StartsAt: past, Limit: s("10"), Used: "10"}, false, LimitExceeded},
		{"zero limit", State{Granted: true, StartsAt: past, Limit: s("0"), Used: "0"}, false, LimitExceeded},
		{"huge", State{Granted: true, StartsAt: past, Limit: s("99999999999999999999999"), Used: "99999999999999999999998"}, true, Active},
		{"expired beats limit", State{Granted: true, StartsAt: past, ActiveUntil: at(-time.Second), Limit: s("1"), Used: "5"}, false, Expired},
	} {
		ok, reason := Evaluate(tc.st, now)
		if ok != tc.entitled || reason != tc.reason {
			t.Errorf("%s: got %v %s", tc.name, ok, reason)
		}
	}
	if r := remaining("10", "4"); r != "6" {
		t.Errorf("remaining %s", r)
	}
	if r := remaining("10", "40"); r != "0" {
		t.Errorf("remaining %s", r)
	}
}
