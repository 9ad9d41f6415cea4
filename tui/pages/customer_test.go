package pages

import (
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/tui/common"
)

// A check's usage goes on a line of its own, so both fit 80 columns.
func TestEntitlementText(t *testing.T) {
	t.Parallel()
	st := common.NewStyles(false)
	s := func(v string) *string { return &v }
	for _, tc := range []struct {
		ent            client.Entitlement
		verdict, usage string
	}{
		{client.Entitlement{Feature: "exports", Entitled: true, Reason: "active"}, "exports: entitled (active)", ""},
		{client.Entitlement{Feature: "ai.tokens", Entitled: true, Reason: "active", Used: s("2468"), Limit: s("100000"), Remaining: s("97532")},
			"ai.tokens: entitled (active)", "used 2468 · limit 100000 · remaining 97532"},
		{client.Entitlement{Feature: "ai.tokens", Reason: "limit_reached", Used: s("10"), Limit: s("10"), Remaining: s("0")},
			"ai.tokens: not entitled (limit_reached)", "used 10 · limit 10 · remaining 0"},
		{client.Entitlement{Feature: "ai.tokens", Entitled: true, Reason: "active", Used: s("7")}, "ai.tokens: entitled (active)", "used 7"},
	} {
		verdict, usage := entitlementText(st, &tc.ent)
		if verdict != tc.verdict || usage != tc.usage {
			t.Errorf("%+v: %q, %q; want %q, %q", tc.ent, verdict, usage, tc.verdict, tc.usage)
		}
	}
}
