package webhooks

import (
	"testing"

	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// TestDeliveryPlansProbeByKey: what every delivery runs probes its rows by
// key even on tables without statistics. Each walked every delivery of the
// merchant until the table was first analysed (the record 1.5 ms, the
// claim 10 ms in the shared harness).
func TestDeliveryPlansProbeByKey(t *testing.T) {
	testdb.AssertProbes(t, map[string]string{
		"claim":     claimSQL,
		"record":    recordSQL,
		"exhausted": exhaustedSQL,
	})
}
