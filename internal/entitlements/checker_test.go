package entitlements

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/batch"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/features"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// The batched statement's generic plan, made on a fresh database, reaches
// every table through an index for each row, as the one-check statement
// does (on tables not yet analysed both may probe a tenant-led index; the
// daemon's table-statistics job ends that within seconds of 500 rows).
func TestChecksPlanProbesByIndex(t *testing.T) {
	t.Parallel()
	testdb.AssertIndexed(t, map[string]string{"checks": checksSQL()})
}

// Checks answered together, several to a statement and duplicates shared,
// answer exactly what one check at a time does.
func TestCheckerBatchesMatchOneByOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	var scopes []tenant.Scope
	for _, name := range []string{"a", "b"} {
		m, err := auth.CreateMerchant(ctx, db, name)
		if err != nil {
			t.Fatal(err)
		}
		scopes = append(scopes, tenant.Scope{MerchantID: m.ID, Mode: tenant.Test})
	}
	now := time.Now().UTC()
	var calls []checkCall
	for si, s := range scopes {
		for _, key := range []string{"f1", "f2"} {
			if _, _, err := features.Create(ctx, db, s, features.Input{Key: key, Name: key}, now); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 7 {
			ext := fmt.Sprintf("u%d", i)
			until := now.Add(time.Duration(i-3) * time.Hour) // some expired
			g, err := Grant(ctx, db, s, GrantInput{FeatureKey: "f1", Customer: customers.Ref{ExternalID: &ext}, ActiveUntil: &until}, now)
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"f1", "f2", "nope"} {
				calls = append(calls, checkCall{ctx: ctx, scope: s, customerID: g.CustomerID, featureKey: key})
			}
			if si == 0 && i == 0 {
				// The same customer asked about in the other merchant.
				calls = append(calls, checkCall{ctx: ctx, scope: scopes[1], customerID: g.CustomerID, featureKey: "f1"})
			}
		}
		calls = append(calls, checkCall{ctx: ctx, scope: s, customerID: "cus_unknown", featureKey: "f1"})
	}
	calls = append(calls, calls[:5]...) // duplicates share a read
	want := func(x checkCall) string {
		r, err := Check(ctx, db, x.scope, x.customerID, x.featureKey, now)
		return fmt.Sprintf("%+v %v", r, err)
	}
	checker := NewChecker(db)
	var batchCalls []*batch.Call[checkCall, checkAnswer]
	for _, x := range calls {
		batchCalls = append(batchCalls, &batch.Call[checkCall, checkAnswer]{In: x})
	}
	checker.run(batchCalls) // one batch: several reads of eight
	for i, c := range batchCalls {
		if c.Out.err != nil {
			t.Fatalf("check %d: %v", i, c.Out.err)
		}
		r, err := evaluate(c.Out.row, c.In.scope, c.In.customerID, c.In.featureKey, now)
		if got, w := fmt.Sprintf("%+v %v", r, err), want(c.In); got != w {
			t.Fatalf("check %d (%s, %s): batched %s, alone %s", i, c.In.customerID, c.In.featureKey, got, w)
		}
	}
	// And through Check, from many goroutines at once.
	var wg sync.WaitGroup
	for i, x := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := checker.Check(ctx, x.scope, x.customerID, x.featureKey, now)
			if got, w := fmt.Sprintf("%+v %v", r, err), want(x); got != w {
				t.Errorf("concurrent check %d: %s, alone %s", i, got, w)
			}
		}()
	}
	wg.Wait()
	// Text PostgreSQL refuses never reaches it.
	for _, x := range []struct {
		customerID, featureKey string
		code                   apperr.Code
	}{{"cus_\x00", "f1", apperr.UnknownCustomer}, {calls[0].customerID, "f\xff", apperr.UnknownFeature}} {
		_, err := checker.Check(ctx, scopes[0], x.customerID, x.featureKey, now)
		if e, ok := apperr.As(err); !ok || e.Code != x.code {
			t.Errorf("%q/%q: %v, want %s", x.customerID, x.featureKey, err, x.code)
		}
	}
}
