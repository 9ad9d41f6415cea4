package webhooks

import (
	"testing"

	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// TestDeliveryPlansProbeByKey: what every delivery runs probes its rows by
// key even on tables without statistics. attemptFK is the check
// PostgreSQL makes for each attempt row's foreign key. Each walked every
// delivery of the merchant until the table was first analysed (the record
// 1.5 ms, the check 0.6 ms, the claim 10 ms in the shared harness).
func TestDeliveryPlansProbeByKey(t *testing.T) {
	testdb.AssertProbes(t, map[string]string{
		"claim":     claimSQL,
		"record":    recordSQL,
		"exhausted": exhaustedSQL,
		"attempt_fk": `SELECT 1 FROM ONLY webhook_deliveries x WHERE merchant_id = $1::text AND id = $2::text
			FOR KEY SHARE OF x`,
	})
}
