package invoices

import (
	"context"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/batch"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Creates runs Create for concurrent requests together (group commit): one
// statement, one transaction and one WAL flush for up to 64 invoices. Under
// load, a round trip and a commit per invoice were most of what an
// invoice cost PostgreSQL. A create that finds nothing else running is its
// own batch at once.
type Creates struct {
	db     *store.DB
	writes *batch.Group[createCall, createResult]
}

type createCall struct {
	ctx   context.Context
	scope tenant.Scope
	in    Input
	now   time.Time
	id    string
}

type createResult struct {
	inv Invoice
	err error
}

// batchTimeout bounds a batch's statement: its callers wait for it whatever
// their own contexts say.
const batchTimeout = 30 * time.Second

// NewCreates returns the Creates of db.
func NewCreates(db *store.DB) *Creates {
	c := &Creates{db: db}
	c.writes = batch.New(c.run, 0, 0)
	return c
}

// Create is the package-level Create on the pool, batched with concurrent
// ones.
func (c *Creates) Create(ctx context.Context, s tenant.Scope, in Input, now time.Time) (Invoice, error) {
	if err := in.Validate(); err != nil {
		return Invoice{}, err
	}
	if err := ctx.Err(); err != nil {
		return Invoice{}, err
	}
	r := c.writes.Do(createCall{ctx: ctx, scope: s, in: in, now: now, id: id.New("inv")})
	return r.inv, r.err
}

// run inserts a batch in one statement. An invoice alone, or any the
// statement did not store (it failed), is created by itself, so an error is
// only ever its own invoice's.
func (c *Creates) run(calls []*batch.Call[createCall, createResult]) {
	var stored map[string]Invoice
	if len(calls) > 1 {
		stored = c.insert(calls)
	}
	for _, call := range calls {
		if inv, ok := stored[call.In.id]; ok {
			call.Out = createResult{inv: inv}
			continue
		}
		x := call.In
		inv, err := create(x.ctx, c.db, x.scope, x.in, x.now, x.id)
		call.Out = createResult{inv: inv, err: err}
	}
}

// insert stores the batch with createBatchSQL and returns the invoices by
// id, none when the statement failed.
func (c *Creates) insert(calls []*batch.Call[createCall, createResult]) map[string]Invoice {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(calls[0].In.ctx), batchTimeout)
	defer cancel()
	n := len(calls)
	merchants, modes, ids, amounts, descriptions := make([]string, n), make([]string, n), make([]string, n), make([]int64, n), make([]string, n)
	memos, numbers, recipients, dues, created := make([]*string, n), make([]*string, n), make([]*string, n), make([]*string, n), make([]string, n)
	for i, call := range calls {
		x := call.In
		merchants[i], modes[i], ids[i], amounts[i], descriptions[i] = x.scope.MerchantID, string(x.scope.Mode), x.id, int64(x.in.Amount), x.in.Description
		memos[i], numbers[i], recipients[i], dues[i], created[i] = x.in.Memo, x.in.InvoiceNumber, x.in.Recipient, timestampp(x.in.DueAt), timestamp(x.now)
	}
	var invs []Invoice
	if err := c.db.SelectContext(ctx, &invs, createBatchSQL, pq.StringArray(merchants), pq.StringArray(modes), pq.StringArray(ids),
		pq.Int64Array(amounts), pq.StringArray(descriptions), store.NullTexts(memos), store.NullTexts(numbers),
		store.NullTexts(recipients), store.NullTexts(dues), pq.StringArray(created)); err != nil {
		return nil
	}
	stored := make(map[string]Invoice, len(invs))
	for _, inv := range invs {
		stored[inv.ID] = inv
	}
	return stored
}

// createBatchSQL is Create's statement for arrays of invoices, the same
// text for every batch (prepared once per connection). Rows are inserted in
// the arrays' order, so seq follows the callers' order in the batch.
const createBatchSQL = `INSERT INTO invoices (merchant_id, mode, id, amount, description, memo, invoice_number, recipient, due_at, status, created_at, payee)
	SELECT v.merchant_id, v.mode, v.id, v.amount, v.description, v.memo, v.invoice_number, v.recipient, v.due_at, '` + StatusOpen + `', v.created_at,
		(SELECT w.address FROM settlement_wallets w WHERE w.merchant_id = v.merchant_id AND w.mode = v.mode AND w.replaced_at IS NULL)
	FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[], $5::text[], $6::text[], $7::text[], $8::text[], $9::timestamptz[], $10::timestamptz[])
		AS v (merchant_id, mode, id, amount, description, memo, invoice_number, recipient, due_at, created_at)
	RETURNING ` + columns

func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func timestampp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := timestamp(*t)
	return &s
}
