package webhooks

import (
	"testing"

	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// TestDeliveryPlansProbeByKey: what every delivery runs probes its rows by
// key on tables without statistics, fresh or already holding a merchant's
// deliveries, and once analysed. Each walked every delivery of the merchant
// until the table was first analysed (the record 1.5 ms, the claim 10 ms in
// the shared harness); the claim then still read the due index into a
// bitmap (0.2 to 1 ms) before it leased by ctid.
func TestDeliveryPlansProbeByKey(t *testing.T) {
	testdb.AssertProbesAsTablesFill(t, map[string]string{
		"claim":     claimSQL,
		"record":    recordSQL,
		"exhausted": exhaustedSQL,
	}, []string{
		`INSERT INTO merchants (id, name) VALUES ('mer_pl', 'pl')`,
		`INSERT INTO webhook_endpoints (merchant_id, mode, id, url, secret) VALUES ('mer_pl', 'test', 'we_pl', 'https://hooks.example.com/a', 's')`,
		// As under a steady stream: most answered, one in forty pending.
		`INSERT INTO webhook_deliveries (merchant_id, mode, id, event_id, endpoint_id, status, event_created_at)
			SELECT 'mer_pl', 'test', 'dlv_' || n, 'evt_' || n, 'we_pl', CASE WHEN n % 40 = 0 THEN 'pending' ELSE 'succeeded' END, now()
			FROM generate_series(1, 20000) n`,
	}, "webhook_deliveries")
}
