package metering

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Ingester stores meter events. It keeps the meters it has looked up:
// meters are immutable and never deleted, so a hit saves a round trip per
// batch. Only hits are kept, so a meter created later is found by the next
// query. It keeps the customers of the external ids its batches resolved,
// likewise: a customer's id and external id never change and customers
// are never deleted, so a batch whose external ids are all known skips
// their lookup (on a 500-event batch over 1,000 customers, ~400 index
// probes and as many customer ids minted for nothing). Build one per pool
// with NewIngester.
type Ingester struct {
	meters     sync.Map // cacheKey → Meter
	cachedSize atomic.Int64
	byScope    sync.Map // tenant.Scope → *sync.Map (external id → customer id)
	custSize   atomic.Int64
}

// maxCachedMeters bounds the meter cache, and maxCachedCustomers the
// customer cache; past its bound a cache starts over.
const (
	maxCachedMeters    = 100_000
	maxCachedCustomers = 200_000
)

// NewIngester returns an Ingester with empty caches.
func NewIngester() *Ingester { return &Ingester{} }

// Ingest is IngestTx in a transaction of its own, run again from scratch
// when PostgreSQL breaks a deadlock or a serialization conflict (keys
// already stored then deduplicate as usual). The customers the batch
// resolved by external id are remembered once it has committed, never
// before: a customer upserted by a transaction that rolls back does not
// exist.
//
// It first assumes that no key of the batch is stored, the common case,
// and writes with writeNewKeysSQL; when one is, that transaction fails
// and the batch runs again with writeSQL, which deduplicates: a replay
// pays for one failed attempt.
func (g *Ingester) Ingest(ctx context.Context, db *store.DB, s tenant.Scope, ins []EventInput, now time.Time) ([]Result, error) {
	var learned map[string]string
	var res []Result
	var err error
	for _, newKeys := range []bool{true, false} {
		res, err = store.InTx(ctx, db, func(tx *store.Tx) ([]Result, error) {
			// Every attempt starts from the inputs as received: validation
			// fills in a missing timestamp, which a replay is not
			// compared on.
			res, l, err := g.ingestTx(ctx, tx, s, slices.Clone(ins), now, newKeys)
			learned = l
			return res, err
		})
		if !errors.Is(err, errKeyStored) {
			break
		}
	}
	if err == nil {
		g.rememberCustomers(s, learned)
	}
	return res, err
}

// errKeyStored fails a transaction that wrote with writeNewKeysSQL a batch
// one of whose keys was stored.
var errKeyStored = errors.New("an idempotency key of the batch is stored")

// IngestTx stores a request's events (1 to MaxBatch), received at now, in
// tx and returns one Result per input, in order. An event that fails
// (invalid_request, unknown_meter, missing_value, unknown_customer) does not
// stop the others. An event whose idempotency key was seen before (by an
// earlier request, or earlier in this one) is not stored again: when it is
// the same event (meter, customer, value, properties, and timestamp when it
// gives one) its Result is the original event with Deduplicated set, else
// invalid_request naming idempotency_key.
//
// Every stored event, its idempotency key, any customer upserted for it and
// the usage windows it falls in commit with tx. The events are written with
// one statement whatever their number. The error is non-nil only when the
// database fails; the Results are then meaningless.
func (g *Ingester) IngestTx(ctx context.Context, tx *store.Tx, s tenant.Scope, ins []EventInput, now time.Time) ([]Result, error) {
	res, _, err := g.ingestTx(ctx, tx, s, ins, now, false)
	return res, err
}

// ingestTx is IngestTx, also returning the customers it resolved by
// external id (external id → customer id), to remember once tx commits.
// With newKeys it writes with writeNewKeysSQL, and fails with errKeyStored
// (tx is then aborted) when a key of the batch is stored.
func (g *Ingester) ingestTx(ctx context.Context, tx *store.Tx, s tenant.Scope, ins []EventInput, now time.Time, newKeys bool) ([]Result, map[string]string, error) {
	res := make([]Result, len(ins))
	// A replay that leaves the timestamp to the server is not compared on
	// it: the original's "now" has passed.
	stamped := make([]bool, len(ins))
	for i := range ins {
		stamped[i] = ins[i].Timestamp != nil
		res[i].Err = ins[i].Validate(now)
	}
	meters, err := g.metersFor(ctx, tx, s, ins, res)
	if err != nil {
		return nil, nil, err
	}
	// Resolve meters and quantities, and drop repeats of a key within the
	// request: the first occurrence is written, the others copy its result.
	dupOf := map[int]int{}
	firstByKey := map[string]int{}
	for i, in := range ins {
		if res[i].Err != nil {
			continue
		}
		m, ok := meters[in.EventName]
		if !ok {
			res[i].Err = apperr.New(apperr.UnknownMeter, "event_name: no meter with key %q", in.EventName)
			continue
		}
		v, err := quantity(in, m)
		if err != nil {
			res[i].Err = err
			continue
		}
		res[i].Event = Event{Mode: s.Mode, MeterID: m.ID, MeterKey: m.Key, Value: v, Timestamp: *in.Timestamp,
			Properties: in.Properties, IdempotencyKey: in.IdempotencyKey}
	}
	learned, err := resolveCustomers(ctx, tx, s, ins, res, now, g.customers(s))
	if err != nil {
		return nil, nil, err
	}
	for i, in := range ins {
		if res[i].Err != nil || in.IdempotencyKey == nil {
			continue
		}
		if j, seen := firstByKey[*in.IdempotencyKey]; seen {
			dupOf[i] = j
			continue
		}
		firstByKey[*in.IdempotencyKey] = i
	}
	if err := write(ctx, tx, s, res, dupOf, stamped, now, newKeys); err != nil {
		return nil, nil, err
	}
	return res, learned, nil
}

// metersFor looks up, in one query, the meters the valid inputs name.
func (g *Ingester) metersFor(ctx context.Context, q store.Querier, s tenant.Scope, ins []EventInput, res []Result) (map[string]Meter, error) {
	var keys []string
	seen := map[string]bool{}
	for i, in := range ins {
		if res[i].Err == nil && !seen[in.EventName] {
			seen[in.EventName] = true
			keys = append(keys, in.EventName)
		}
	}
	out := map[string]Meter{}
	missing := keys[:0]
	for _, k := range keys {
		if m, ok := g.meters.Load(cacheKey(s, k)); ok {
			out[k] = m.(Meter)
		} else {
			missing = append(missing, k)
		}
	}
	if keys = missing; len(keys) == 0 {
		return out, nil
	}
	var ms []Meter
	err := q.SelectContext(ctx, &ms, `SELECT `+columns+` FROM meters WHERE merchant_id = $1 AND mode = $2 AND key = ANY($3)`,
		s.MerchantID, s.Mode, pq.StringArray(keys))
	if err != nil {
		return nil, store.Translate(err)
	}
	for _, m := range ms {
		out[m.Key] = m
		if g.cachedSize.Add(1) > maxCachedMeters {
			g.meters.Clear()
			g.cachedSize.Store(0)
		}
		g.meters.Store(cacheKey(s, m.Key), m)
	}
	return out, nil
}

func cacheKey(s tenant.Scope, key string) string {
	return s.MerchantID + "/" + string(s.Mode) + "/" + key
}

// jsonText is raw JSON as a nullable text parameter.
func jsonText(raw json.RawMessage) *string {
	if raw == nil {
		return nil
	}
	s := string(raw)
	return &s
}

// PruneKeys deletes idempotency keys stored before cutoff, which must be at
// least MaxAge before now (keys are kept that long), and returns how many
// went. created_at is deliberately not indexed (an index costs every
// ingested key): this scans the table, so run it rarely, e.g. daily.
func PruneKeys(ctx context.Context, q store.Querier, cutoff, now time.Time) (int64, error) {
	if now.Sub(cutoff) < MaxAge {
		return 0, apperr.New(apperr.InvalidRequest, "idempotency keys are kept at least %s", strconv.Itoa(int(MaxAge.Hours()/24))+" days")
	}
	r, err := q.ExecContext(ctx, `DELETE FROM meter_event_keys WHERE created_at < $1`, cutoff)
	if err != nil {
		return 0, store.Translate(err)
	}
	return r.RowsAffected()
}
