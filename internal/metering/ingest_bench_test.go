package metering

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// BenchmarkIngestBatch stores 500-event batches shaped like the shared
// harness's: distinct idempotency keys, 1,000 external customer ids,
// ~100 bytes of properties an event. ns/op is a batch's wall time, the
// daemon's part (building the batch included) and PostgreSQL's together:
// on a shared machine, compare runs alternated, or read PostgreSQL's side
// with EXPLAIN.
func BenchmarkIngestBatch(b *testing.B) {
	db := testdb.Open(b)
	ctx := context.Background()
	s := benchScope(b, db)
	now := time.Now().UTC()
	g := NewIngester()
	batch := 0
	for b.Loop() {
		ins := benchBatch(batch, now)
		batch++
		res, err := g.Ingest(ctx, db, s, ins, now)
		if err != nil {
			b.Fatal(err)
		}
		if res[0].Err != nil {
			b.Fatal(res[0].Err)
		}
	}
}

// benchBatch is the batch numbered batch of BenchmarkIngestBatch.
func benchBatch(batch int, now time.Time) []EventInput {
	ins := make([]EventInput, MaxBatch)
	for i := range ins {
		n := batch*MaxBatch + i
		v, ext, key, at := int64(1+i), fmt.Sprintf("cust-%04d", (n*7919)%1000), fmt.Sprintf("ing-bench-%d", n), now
		ins[i] = EventInput{EventName: "bench.tokens", Value: &v, ExternalCustomerID: &ext, Timestamp: &at, IdempotencyKey: &key,
			Properties: json.RawMessage(fmt.Sprintf(`{"region":"eu-west-1","model":"claude-haiku","request_id":"req_%016x","latency_ms":%d,"cached":false}`, n*7919, 20+i))}
	}
	return ins
}

// benchScope is a merchant with a sum meter keyed bench.tokens.
func benchScope(b testing.TB, db *store.DB) tenant.Scope {
	b.Helper()
	ctx := context.Background()
	s := tenant.Scope{MerchantID: "mer_bench", Mode: tenant.Test}
	if _, err := db.ExecContext(ctx, `INSERT INTO merchants (id, name) VALUES ('mer_bench', 'bench')`); err != nil {
		b.Fatal(err)
	}
	if _, _, err := Create(ctx, db, s, Input{Key: "bench.tokens", DisplayName: "tokens", Aggregation: Sum}, time.Now().Add(-time.Hour)); err != nil {
		b.Fatal(err)
	}
	return s
}
