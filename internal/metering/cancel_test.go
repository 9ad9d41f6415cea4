package metering

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// Cancelling a live event finds it in the weeks its id's time allows, not
// every week kept; an event whose id tells nothing of its time (made
// elsewhere) is found all the same.
func TestCancelReadsTheWeeksItsIDAllows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	s := tenant.Scope{MerchantID: "mch_cancel", Mode: tenant.Live}
	now := time.Now().UTC()
	// A year of weeks, as a 400-day retention keeps, in place of the
	// partition the migration made of the table before it.
	if _, err := db.ExecContext(ctx, `INSERT INTO merchants (id, name) VALUES ($1, $1)`, s.MerchantID); err != nil {
		t.Fatal(err)
	}
	_, err := db.ExecContext(ctx, `DROP TABLE meter_events_p00000000;
		DO $$
		DECLARE
			w timestamptz := date_trunc('week', now(), 'UTC') - interval '52 weeks';
		BEGIN
			WHILE w <= date_trunc('week', now(), 'UTC') + interval '6 weeks' LOOP
				PERFORM partition_add('meter_events', 'event_timestamp', w, w + interval '1 week');
				w := w + interval '1 week';
			END LOOP;
		END
		$$`)
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := Create(ctx, db, s, Input{Key: "tokens", DisplayName: "Tokens"}, now)
	if err != nil {
		t.Fatal(err)
	}
	one, customer := int64(1), "cus-cancel"
	res, err := NewIngester().Ingest(ctx, db, s, []EventInput{{EventName: "tokens", Value: &one, ExternalCustomerID: &customer}}, now)
	if err != nil || res[0].Err != nil {
		t.Fatalf("ingest: %v, %+v", err, res)
	}
	// An id whose leading characters read as a time centuries ahead.
	const elsewhere = "me_zzzzzzzz0123456789abcdef"
	if _, err := db.ExecContext(ctx, `INSERT INTO meter_events (merchant_id, mode, id, meter_id, value, event_timestamp)
		VALUES ($1, 'live', $2, $3, 1, now() - interval '20 days')`, s.MerchantID, elsewhere, m.ID); err != nil {
		t.Fatal(err)
	}
	oldest := "meter_events_p" + now.Add(-MaxAge-8*24*time.Hour).Format("20060102")
	for _, eventID := range []string{res[0].Event.ID, elsewhere} {
		var opened []string
		err := db.InTx(ctx, func(tx *store.Tx) error {
			// The connection's scan counts not yet flushed (PostgreSQL
			// flushes them at most once a second, so earlier statements'
			// show too), before and after the read: the partitions it read
			// are those whose counts moved.
			const counts = `SELECT relname, idx_scan + seq_scan AS scans FROM pg_stat_xact_user_tables WHERE relname LIKE 'meter_events_p%'`
			var before []struct {
				Rel   string `db:"relname"`
				Scans int64  `db:"scans"`
			}
			if err := tx.SelectContext(ctx, &before, counts); err != nil {
				return err
			}
			e, err := eventByID(ctx, tx, s, eventID, true)
			if err != nil {
				return err
			}
			if e.ID != eventID {
				t.Errorf("read %+v, want %s", e, eventID)
			}
			rels, scans := make([]string, len(before)), make([]int64, len(before))
			for i, b := range before {
				rels[i], scans[i] = b.Rel, b.Scans
			}
			return tx.SelectContext(ctx, &opened, `SELECT a.relname FROM pg_stat_xact_user_tables a
				LEFT JOIN unnest($1::text[], $2::bigint[]) AS b(relname, scans) ON b.relname = a.relname
				WHERE a.relname LIKE 'meter_events_p%' AND a.idx_scan + a.seq_scan > coalesce(b.scans, 0) ORDER BY a.relname`,
				pq.StringArray(rels), pq.Int64Array(scans))
		})
		if err != nil {
			t.Fatalf("read %s: %v", eventID, err)
		}
		var old []string
		for _, p := range opened {
			if p < oldest {
				old = append(old, p)
			}
		}
		if eventID == elsewhere && len(old) == 0 {
			t.Errorf("the read of %s opened only %v: not every week", eventID, opened)
		}
		if eventID != elsewhere && (len(old) > 0 || len(opened) == 0) {
			t.Errorf("the read of %s opened %d weeks older than its id allows: %s", eventID, len(old), strings.Join(old, " "))
		}
		if e, err := Cancel(ctx, db, s, eventID, now); err != nil || e.CancelledAt == nil {
			t.Errorf("cancel %s: %+v, %v", eventID, e, err)
		}
	}
}
