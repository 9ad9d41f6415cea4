package audit_test

import (
	"context"
	"testing"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// A scoped change to another merchant's row, or the other mode's, is
// refused before it runs, and leaves no entry; the owner's goes through.
func TestChangeRowKeepsToItsScope(t *testing.T) {
	ctx := context.Background()
	db := testdb.Open(t)
	a, _ := auth.CreateMerchant(ctx, db, "a")
	b, _ := auth.CreateMerchant(ctx, db, "b")
	k, _, err := auth.CreateKey(ctx, db, a.ID, tenant.Live)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	change := func(tx *store.Tx) error { ran++; return nil }
	user := audit.Actor{User: "usr_x", IP: "203.0.113.5"}
	for _, s := range []tenant.Scope{{MerchantID: b.ID, Mode: tenant.Live}, {MerchantID: a.ID, Mode: tenant.Test}, {}} {
		err := audit.ChangeRow(ctx, db, user, &s, "api_keys", k.ID, audit.KeyRevoke, change)
		if apperr.CodeOf(err) != apperr.ResourceNotFound {
			t.Errorf("%+v: %v", s, err)
		}
	}
	if err := audit.ChangeRow(ctx, db, user, &tenant.Scope{MerchantID: b.ID, Mode: tenant.Live}, "api_keys", "key_nope", audit.KeyRevoke, change); apperr.CodeOf(err) != apperr.ResourceNotFound {
		t.Errorf("unknown id: %v", err)
	}
	if ran != 0 {
		t.Fatalf("ran %d times out of scope", ran)
	}
	if err := audit.ChangeRow(ctx, db, user, &tenant.Scope{MerchantID: a.ID, Mode: tenant.Live}, "api_keys", k.ID, audit.KeyRevoke, change); err != nil || ran != 1 {
		t.Fatalf("owner: %v", err)
	}
	for _, m := range []string{a.ID, b.ID} {
		r, err := audit.List(ctx, db, audit.Filter{MerchantID: m})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{a.ID: 1, b.ID: 0}[m]
		if len(r.Items) != want {
			t.Fatalf("%s: %d entries, want %d", m, len(r.Items), want)
		}
		if want == 1 && (r.Items[0].Actor != "usr_x" || r.Items[0].IP != "203.0.113.5" || r.Items[0].Target != k.ID || *r.Items[0].Mode != "live") {
			t.Fatalf("%+v", r.Items[0])
		}
	}
}
