package webhooks

import (
	"context"
	"testing"

	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// TestEventMerchant: an event named by its id alone is found whether the
// time its id names is close to when it was stored (the day either side is
// searched first) or far from it (every partition is searched then), and a
// retry narrowed to another merchant touches none of its deliveries.
func TestEventMerchant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	near := id.New("evt")
	const far = "evt_0000000000000000000000ab" // names 1970
	execAll(t, db,
		`INSERT INTO merchants (id, name) VALUES ('mer_em', 'em')`,
		`INSERT INTO webhook_endpoints (merchant_id, mode, id, url, secret) VALUES ('mer_em', 'test', 'we_em', 'https://hooks.example.com/a', 's')`,
		`INSERT INTO events (merchant_id, mode, id, type, data) VALUES ('mer_em', 'test', '`+near+`', 'invoice.created', '{}'),
			('mer_em', 'test', '`+far+`', 'invoice.created', '{}')`,
		`INSERT INTO webhook_deliveries (merchant_id, mode, id, event_id, endpoint_id, status, attempts) VALUES
			('mer_em', 'test', 'dlv_em_near', '`+near+`', 'we_em', 'failed', 1),
			('mer_em', 'test', 'dlv_em_far', '`+far+`', 'we_em', 'failed', 1)`,
	)
	for ev, want := range map[string]string{near: "dlv_em_near", far: "dlv_em_far", "evt_missing": ""} {
		ds, err := ListDeliveries(ctx, db, Filter{EventID: ev})
		if err != nil || (want == "" && len(ds) != 0) || (want != "" && (len(ds) != 1 || ds[0].ID != want)) {
			t.Errorf("deliveries of %s: %+v, %v; want %q", ev, ds, err, want)
		}
	}
	if ids, err := Retry(ctx, db, RetryInput{EventID: near, MerchantID: "mer_other"}); err == nil || len(ids) != 0 {
		t.Errorf("retry narrowed to another merchant: %v, %v", ids, err)
	}
	if ids, err := Retry(ctx, db, RetryInput{EventID: near, MerchantID: "mer_em"}); err != nil || len(ids) != 1 || ids[0] != "dlv_em_near" {
		t.Errorf("retry of the event's deliveries: %v, %v", ids, err)
	}
}
