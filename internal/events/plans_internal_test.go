package events

import (
	"context"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"

	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// EmitMany runs in renewal and migration transactions, on its generic plan:
// it finds the merchant's endpoints through an index, never by a scan.
func TestEmitManyPlanUsesIndexes(t *testing.T) {
	t.Parallel()
	testdb.AssertIndexed(t, map[string]string{"emit": emitManySQL})
}

// Each mode's feed is read through its own index, in the order it is
// listed: test mode's by the clock (events_test_feed), live mode's by
// insertion (events_list).
func TestFeedPlansUseTheirIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, testdb.New(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for mode, index := range map[tenant.Mode]string{tenant.Test: "events_test_feed", tenant.Live: "events_list"} {
		s := tenant.Scope{MerchantID: "mch_x", Mode: mode}
		for name, sql := range map[string]string{
			"list_" + string(mode): listSQL(s, false, 25), "before_" + string(mode): listSQL(s, true, 25),
			"after_" + string(mode): afterSQL(s, 25),
		} {
			plan := strings.Join(testdb.GenericPlan(t, conn, name, sql), "\n")
			if !strings.Contains(plan, index) {
				t.Errorf("%s does not read %s:\n%s", name, index, plan)
			}
		}
	}
}
