package credits

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// A batch's transaction, one statement per step whatever its size:
//
//  1. lock the accounts the items name (ORDER BY id, so committers and
//     replicas lock in one order and cannot deadlock on them), and read
//     their first grant remainders and the stored operations of the items'
//     idempotency keys in the same statement (see lock);
//  2. only when some item names a customer without an account: look the
//     customers up, then create the customers and accounts grants open;
//  3. only when an account changed since the lock's snapshot, or its first
//     remainders may not be enough: read its remainders again;
//  4. apply the items in arrival order on the in-memory ledgers (Go only);
//  5. write every operation, entry, remainder, account, event and
//     delivery (batch_write.go).
//
// With BEGIN and COMMIT that is four round trips for a batch whose
// accounts all exist, however many items it holds.
//
// An item's own error (unknown customer, no account, a key reused with
// other parameters, an overflow) is its outcome; the others go on. Steps 2
// and 5 detect rows another transaction wrote meanwhile (a customer, an
// account, an idempotency key) and fail the batch with errConcurrent; the
// Batcher then applies its items one by one, and a batch of one is tried
// again (applyAlone, applyInTx), when it sees those rows.

// errConcurrent fails a batch that met a row written by a concurrent
// transaction: the statement that met the row waited for that transaction
// to commit, so an attempt after the rollback sees it (and replays, or
// takes the customer or account it made).
var errConcurrent = errors.New("credits batch: a concurrent transaction wrote a row of this batch")

// custKey names a customer in a scope by id or by external id (one set).
type custKey struct {
	s   tenant.Scope
	id  string
	ext string
}

// target is what an item applies to, decided before any change.
type target struct {
	l   *ledger
	err error
	// later is, for a debit whose customer has no account, the account a
	// grant earlier in the batch may open; err applies if none does.
	later *custKey
}

// batchTx is one attempt at a batch (InTx may run it again).
type batchTx struct {
	cfg      batchConfig
	tx       *store.Tx
	items    []*item
	outs     []outcome
	targets  []target
	accounts map[custKey]*ledger // by customer id and by external id
	extOf    map[*ledger]*string // the account's customer's external id
	locked   []*ledger           // in lock order
	moved    []*ledger           // locked accounts changed since the lock's snapshot
	openedBy map[*ledger]int     // accounts this batch creates: the first item naming one
	newCus   []customers.Customer
	replays  map[string]operation // by item key
	fresh    map[string]bool      // grant ids of remainders this batch creates
	w        writes
	checks   []balanceCheck
	// ahead is how many remainders of each account lock asked for
	// (readAhead); read judges what it got by it.
	ahead int
}

// batchConfig is what a batch's transaction takes from its Batcher.
type batchConfig struct {
	readAhead int // see Batcher.readAhead
	// fault, for tests, fails a batch's transaction at the named step.
	fault func(ctx context.Context, tx *store.Tx, step string) error
	// locked, when set, is called once the batch's locks are held
	// (Batcher.locked).
	locked func()
}

// defaultReadAhead is Batcher.readAhead unless a test sets another.
const defaultReadAhead = 2

// applyTx applies a batch in one transaction of its own and returns each
// item's outcome, or an error when the batch must be applied item by item.
func applyTx(ctx context.Context, db *store.DB, cfg batchConfig, batch []*item) ([]outcome, error) {
	var outs []outcome
	// Every statement of a batch is tested to probe by key on its generic
	// plan (plans_internal_test.go).
	err := db.InTxGenericPlans(ctx, func(tx *store.Tx) error {
		bt := newBatchTx(tx, cfg, batch)
		if err := bt.run(ctx); err != nil {
			return err
		}
		outs = bt.outs
		return nil
	})
	return outs, err
}

func newBatchTx(tx *store.Tx, cfg batchConfig, batch []*item) *batchTx {
	return &batchTx{cfg: cfg, tx: tx, items: batch, outs: make([]outcome, len(batch)), targets: make([]target, len(batch)),
		accounts: map[custKey]*ledger{}, extOf: map[*ledger]*string{}, openedBy: map[*ledger]int{},
		replays: map[string]operation{}, fresh: map[string]bool{}}
}

func (bt *batchTx) run(ctx context.Context) error {
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{{"lock", bt.lock}, {"resolve", bt.resolve}, {"read", bt.read}, {"write", bt.apply}}
	for _, st := range steps {
		if f := bt.cfg.fault; f != nil {
			if err := f(ctx, bt.tx, st.name); err != nil {
				return err
			}
		}
		if err := st.fn(ctx); err != nil {
			return err
		}
		if st.name == "lock" && bt.cfg.locked != nil {
			bt.cfg.locked()
		}
	}
	return nil
}

func refOf(it *item) customers.Ref {
	if it.grant != nil {
		return it.grant.Customer
	}
	return it.debit.Customer
}

func (bt *batchTx) index(l *ledger, ext *string) {
	bt.accounts[custKey{s: l.s, id: l.acct.CustomerID}] = l
	if ext != nil {
		bt.accounts[custKey{s: l.s, ext: *ext}] = l
	}
	bt.extOf[l] = ext
}

// resolve decides each item's account, or its error, with the rules of
// customers.Resolve (a grant by external id creates the customer, a debit
// creates nothing); then it creates the customers and accounts grants
// open.
func (bt *batchTx) resolve(ctx context.Context) error {
	var lookup []int
	for i, it := range bt.items {
		r := refOf(it)
		switch {
		case r.ID != nil:
			if l := bt.accounts[custKey{s: it.s, id: *r.ID}]; l != nil {
				bt.targets[i] = target{l: l, err: extMismatch(r, l.acct.CustomerID, bt.extOf[l])}
				continue
			}
		case bt.accounts[custKey{s: it.s, ext: *r.ExternalID}] != nil:
			bt.targets[i].l = bt.accounts[custKey{s: it.s, ext: *r.ExternalID}]
			continue
		case badExternalID(*r.ExternalID):
			bt.targets[i].err = apperr.Field("external_customer_id", "must be 1 to %d characters", customers.MaxExternalIDLen)
			continue
		case it.debit != nil:
			// A debit creates nothing: no account is no_credit_account,
			// naming the external id as given.
			bt.targets[i] = target{err: errNoAccountExt(*r.ExternalID), later: &custKey{s: it.s, ext: *r.ExternalID}}
			continue
		}
		lookup = append(lookup, i)
	}
	if len(lookup) == 0 {
		return nil
	}
	found, err := bt.lookup(ctx, lookup)
	if err != nil {
		return err
	}
	for _, i := range lookup {
		it, r := bt.items[i], refOf(bt.items[i])
		var k custKey
		if r.ID != nil {
			k = custKey{s: it.s, id: *r.ID}
		} else {
			k = custKey{s: it.s, ext: *r.ExternalID}
		}
		c, ok := found[k]
		switch {
		case !ok && r.ID != nil:
			// customers.Get's error, word for word.
			bt.targets[i].err = apperr.New(apperr.UnknownCustomer, "customer_id: no customer %q", *r.ID)
		case !ok:
			c = customers.Customer{MerchantID: it.s.MerchantID, Mode: it.s.Mode, ID: id.New("cus"), ExternalID: r.ExternalID, CreatedAt: it.now}
			found[k] = c
			bt.newCus = append(bt.newCus, c)
			fallthrough
		default:
			if err := extMismatch(r, c.ID, c.ExternalID); err != nil {
				bt.targets[i].err = err
			} else if it.debit != nil {
				bt.targets[i] = target{err: errNoAccount(c.ID), later: &custKey{s: it.s, id: c.ID}}
			} else {
				bt.targets[i].l = bt.open(c, i)
			}
		}
	}
	return bt.create(ctx)
}

func badExternalID(ext string) bool {
	return ext == "" || utf8.RuneCountInString(ext) > customers.MaxExternalIDLen
}

// extMismatch is customers.Resolve's check of a reference giving both ids.
func extMismatch(r customers.Ref, customerID string, ext *string) error {
	if r.ID != nil && r.ExternalID != nil && (ext == nil || *ext != *r.ExternalID) {
		return apperr.Field("external_customer_id", "does not match customer %s", customerID)
	}
	return nil
}

// lookup reads the customers the items at idx name.
func (bt *batchTx) lookup(ctx context.Context, idx []int) (map[custKey]customers.Customer, error) {
	byID, byExt := newTuples(1), newTuples(1)
	for _, i := range idx {
		if r := refOf(bt.items[i]); r.ID != nil {
			byID.add(bt.items[i].s, *r.ID)
		} else {
			byExt.add(bt.items[i].s, *r.ExternalID)
		}
	}
	var rows []customers.Customer
	err := bt.tx.SelectContext(ctx, &rows, lookupSQL,
		byID.args(byExt.args()...)...)
	if err != nil {
		return nil, store.Translate(err)
	}
	found := map[custKey]customers.Customer{}
	for _, c := range rows {
		s := tenant.Scope{MerchantID: c.MerchantID, Mode: c.Mode}
		found[custKey{s: s, id: c.ID}] = c
		if c.ExternalID != nil {
			found[custKey{s: s, ext: *c.ExternalID}] = c
		}
	}
	return found, nil
}

// open returns the account the grant at item i opens for c: a new, empty
// one unless an earlier item of the batch opened it.
func (bt *batchTx) open(c customers.Customer, i int) *ledger {
	s := tenant.Scope{MerchantID: c.MerchantID, Mode: c.Mode}
	if l := bt.accounts[custKey{s: s, id: c.ID}]; l != nil {
		return l
	}
	l := &ledger{s: s, acct: account{MerchantID: c.MerchantID, Mode: c.Mode, ID: id.New("cacct"), CustomerID: c.ID}}
	bt.index(l, c.ExternalID)
	bt.openedBy[l] = i
	return l
}

// create inserts the customers and accounts the batch opens, sorted so
// that batches inserting the same ones wait for each other in one order.
// A row already there was inserted by a concurrent transaction since the
// lookup: errConcurrent.
func (bt *batchTx) create(ctx context.Context) error {
	if len(bt.openedBy) == 0 {
		return nil
	}
	slices.SortFunc(bt.newCus, func(a, b customers.Customer) int {
		return cmp.Or(cmp.Compare(a.MerchantID, b.MerchantID), cmp.Compare(a.Mode, b.Mode), cmp.Compare(*a.ExternalID, *b.ExternalID))
	})
	cus, accts := newTuples(3), newTuples(2)
	for _, c := range bt.newCus {
		cus.add(tenant.Scope{MerchantID: c.MerchantID, Mode: c.Mode}, c.ID, *c.ExternalID, c.CreatedAt.UTC().Format(time.RFC3339Nano))
	}
	opened := make([]*ledger, 0, len(bt.openedBy))
	for l := range bt.openedBy {
		opened = append(opened, l)
	}
	slices.SortFunc(opened, func(a, b *ledger) int {
		return cmp.Or(cmp.Compare(a.s.MerchantID, b.s.MerchantID), cmp.Compare(a.s.Mode, b.s.Mode), cmp.Compare(a.acct.CustomerID, b.acct.CustomerID))
	})
	for _, l := range opened {
		accts.add(l.s, l.acct.ID, l.acct.CustomerID)
	}
	var n struct {
		Customers int `db:"customers"`
		Accounts  int `db:"accounts"`
	}
	err := bt.tx.GetContext(ctx, &n, createSQL, cus.args(accts.args()...)...)
	if err != nil {
		return store.Translate(err)
	}
	if n.Customers != len(bt.newCus) || n.Accounts != len(opened) {
		return errConcurrent
	}
	return nil
}

// lookupSQL reads customers by id and by external id (batchTx.lookup).
const lookupSQL = `SELECT c.* FROM unnest($1::text[], $2::text[], $3::text[]) AS r (merchant_id, mode, id)
		CROSS JOIN LATERAL (SELECT merchant_id, mode, id, external_customer_id, created_at FROM customers c
			WHERE c.merchant_id = r.merchant_id AND c.mode = r.mode AND c.id = r.id OFFSET 0) c
		UNION
		SELECT c.* FROM unnest($4::text[], $5::text[], $6::text[]) AS r (merchant_id, mode, ext)
		CROSS JOIN LATERAL (SELECT merchant_id, mode, id, external_customer_id, created_at FROM customers c
			WHERE c.merchant_id = r.merchant_id AND c.mode = r.mode AND c.external_customer_id = r.ext OFFSET 0) c`

// createSQL inserts customers and their accounts (batchTx.create).
const createSQL = `WITH c AS (
			INSERT INTO customers (merchant_id, mode, id, external_customer_id, created_at)
			SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[])
			ON CONFLICT ON CONSTRAINT customers_external DO NOTHING RETURNING 1
		), a AS (
			INSERT INTO credit_accounts (merchant_id, mode, id, customer_id)
			SELECT * FROM unnest($6::text[], $7::text[], $8::text[], $9::text[])
			ON CONFLICT ON CONSTRAINT credit_accounts_customer DO NOTHING RETURNING 1
		)
		SELECT (SELECT count(*) FROM c) AS customers, (SELECT count(*) FROM a) AS accounts`
