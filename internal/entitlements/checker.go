package entitlements

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tollgatehq/tollgate/internal/batch"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Checker answers the access checks of one pool, concurrent ones together:
// a batch's distinct checks are read by one statement for up to
// checksPerRead of them, and identical checks (a service asking about one
// customer from many requests) share one read. Nothing is cached: a batch
// starts after each of its requests arrived, so it sees every grant,
// revocation and usage event committed before.
type Checker struct {
	db     *store.DB
	checks *batch.Group[checkCall, checkAnswer]
	sql    string
}

type checkCall struct {
	ctx        context.Context
	scope      tenant.Scope
	customerID string
	featureKey string
}

type checkAnswer struct {
	row checkRow
	err error
}

// checksPerRead is the statement's fixed width. A VALUES list of known
// length keeps the generic plan's estimates those of a custom plan, so
// PostgreSQL plans the statement once per connection (an array of unknown
// length would have it planned again on every run, at several times the
// cost of running it). Unused rows repeat the first.
const checksPerRead = 8

// checkTimeout bounds a batch's reads: its callers wait for them whatever
// their own contexts say.
const checkTimeout = 10 * time.Second

// NewChecker returns a Checker over db.
func NewChecker(db *store.DB) *Checker {
	c := &Checker{db: db, sql: checksSQL()}
	c.checks = batch.New(c.run, 0, 0)
	return c
}

// Check answers whether the customer (an id from a URL path) is entitled to
// the feature at now, in one query of primary-key lookups. Fails with
// unknown_customer (404) or unknown_feature (404).
func (c *Checker) Check(ctx context.Context, s tenant.Scope, customerID, featureKey string, now time.Time) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, store.Translate(err)
	}
	// Text PostgreSQL would refuse names nothing stored, and must not fail
	// the other checks of its batch.
	switch {
	case fields.TextProblem(customerID) != "":
		return evaluate(checkRow{}, s, customerID, featureKey, now) // unknown_customer
	case fields.TextProblem(featureKey) != "":
		return evaluate(checkRow{CustomerID: &customerID}, s, customerID, featureKey, now) // unknown_feature
	}
	a := c.checks.Do(checkCall{ctx: ctx, scope: s, customerID: customerID, featureKey: featureKey})
	if a.err != nil {
		return Result{}, a.err
	}
	return evaluate(a.row, s, customerID, featureKey, now)
}

func (c *Checker) run(calls []*batch.Call[checkCall, checkAnswer]) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(calls[0].In.ctx), checkTimeout)
	defer cancel()
	type key struct {
		s        tenant.Scope
		cid, key string
	}
	slot := map[key]int{}
	var distinct []checkCall
	for _, call := range calls {
		k := key{call.In.scope, call.In.customerID, call.In.featureKey}
		if _, ok := slot[k]; !ok {
			slot[k] = len(distinct)
			distinct = append(distinct, call.In)
		}
	}
	rows := make([]checkRow, len(distinct))
	var err error
	if len(distinct) == 1 {
		// Mostly a batch is one check asked many times: the one-check
		// statement does an eighth of the lookups.
		x := distinct[0]
		err = c.db.GetContext(ctx, &rows[0], checkSQL, x.scope.MerchantID, x.scope.Mode, x.customerID, x.featureKey)
	} else {
		for lo := 0; lo < len(distinct) && err == nil; lo += checksPerRead {
			err = readChecks(ctx, c.db, c.sql, distinct[lo:min(lo+checksPerRead, len(distinct))], rows[lo:])
		}
	}
	for _, call := range calls {
		if err != nil {
			call.Out = checkAnswer{err: store.Translate(err)}
			continue
		}
		call.Out = checkAnswer{row: rows[slot[key{call.In.scope, call.In.customerID, call.In.featureKey}]]}
	}
}

// readChecks reads up to checksPerRead checks into rows, in order.
func readChecks(ctx context.Context, db *store.DB, query string, checks []checkCall, rows []checkRow) error {
	args := make([]any, 0, 4*checksPerRead)
	for i := range checksPerRead {
		x := checks[0]
		if i < len(checks) {
			x = checks[i]
		}
		args = append(args, x.scope.MerchantID, string(x.scope.Mode), x.customerID, x.featureKey)
	}
	var got []struct {
		N int `db:"n"`
		checkRow
	}
	if err := db.SelectContext(ctx, &got, query, args...); err != nil {
		return err
	}
	for _, g := range got {
		if g.N < len(checks) {
			rows[g.N] = g.checkRow
		}
	}
	return nil
}

// checksSQL is checkSQL for checksPerRead checks, each row numbered.
func checksSQL() string {
	values := make([]string, checksPerRead)
	for i := range values {
		p := 4*i + 1
		values[i] = fmt.Sprintf("(%d, $%d::text, $%d::text, $%d::text, $%d::text)", i, p, p+1, p+2, p+3)
	}
	// Each row's lookups run in a LATERAL subquery (OFFSET 0 keeps it
	// one), so the generic plan probes each table by key for each row; as
	// plain joins, a plan made while the tables had no statistics
	// hash-joined the rows against scans of whole tables.
	return `SELECT x.n, y.* FROM (VALUES ` + strings.Join(values, ", ") + `) AS x (n, merchant_id, mode, cid, fkey)
CROSS JOIN LATERAL (
	SELECT c.id AS customer_id, f.id AS feature_id, f.type, m.aggregation,
		e.grant_id, e.limit_value::text AS limit_value, e.starts_at, e.active_until, e.grace_until, e.revoked_at,
		w.event_count, w.value_sum::text AS value_sum, w.value_max, w.last_value
	FROM (SELECT 1) one
	LEFT JOIN customers c ON c.merchant_id = x.merchant_id AND c.mode = x.mode AND c.id = x.cid
	LEFT JOIN features f ON f.merchant_id = x.merchant_id AND f.mode = x.mode AND f.key = x.fkey
	LEFT JOIN meters m ON m.merchant_id = x.merchant_id AND m.id = f.meter_id
	LEFT JOIN entitlements e ON e.merchant_id = x.merchant_id AND e.mode = x.mode AND e.customer_id = c.id AND e.feature_id = f.id
	LEFT JOIN usage_windows w ON w.merchant_id = x.merchant_id AND w.mode = x.mode AND w.customer_id = c.id AND w.meter_id = f.meter_id AND w.owner = f.id
	OFFSET 0) y`
}
