package credits_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// t0 is the injected clock's start; whole seconds keep PostgreSQL's
// microsecond timestamps exact.
var t0 = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

type fixture struct {
	t   testing.TB
	db  *store.DB
	b   *credits.Batcher // grant and debit go through it, as the daemon's do
	s   tenant.Scope
	ctx context.Context
}

func setup(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, testdb.New(t))
	if err != nil {
		t.Fatal(err)
	}
	b := credits.NewBatcher(db)
	// As the daemon runs it: batches on a pool that plans generically.
	if err := b.GenericPlans(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Close()
		db.Close()
	})
	m, err := auth.CreateMerchant(ctx, db, "acme")
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, db: db, b: b, s: tenant.Scope{MerchantID: m.ID, Mode: tenant.Test}, ctx: ctx}
}

// customer upserts a customer by external id and returns its id.
func (f *fixture) customer(ext string) string {
	f.t.Helper()
	c, err := customers.Upsert(f.ctx, f.db, f.s, ext, time.Now())
	if err != nil {
		f.t.Fatal(err)
	}
	return c.ID
}

func ref(customerID string) customers.Ref { return customers.Ref{ID: &customerID} }
func ptr[T any](v T) *T                   { return &v }

func (f *fixture) grant(in credits.GrantInput, now time.Time) (credits.GrantResult, error) {
	return f.b.Grant(f.ctx, f.s, in, now)
}

func (f *fixture) debit(in credits.DebitInput, now time.Time) (credits.DebitResult, error) {
	return f.b.Debit(f.ctx, f.s, in, now)
}

func (f *fixture) mustGrant(cus string, amount money.Amount, expires *time.Time, now time.Time) credits.GrantResult {
	f.t.Helper()
	res, err := f.grant(credits.GrantInput{Customer: ref(cus), Amount: amount, ExpiresAt: expires}, now)
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

func (f *fixture) mustDebit(cus string, amount money.Amount, allowNegative bool, now time.Time) credits.DebitResult {
	f.t.Helper()
	res, err := f.debit(credits.DebitInput{Customer: ref(cus), Amount: amount, AllowNegative: allowNegative}, now)
	if err != nil {
		f.t.Fatal(err)
	}
	return res
}

func (f *fixture) balance(cus string, now time.Time) credits.Balance {
	f.t.Helper()
	b, err := credits.GetBalance(f.ctx, f.db, f.s, cus, now)
	if err != nil {
		f.t.Fatal(err)
	}
	return b
}

func wantCode(t testing.TB, err error, code apperr.Code, field string) {
	t.Helper()
	e, ok := apperr.As(err)
	if !ok || e.Code != code || !strings.HasPrefix(e.Message, field) {
		t.Fatalf("want %s %q…, got %v", code, field, err)
	}
}

func TestGrantAndDebit(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cus := f.customer("u1")
	if b := f.balance(cus, t0); b.AccountID != "" || b.Balance != 0 {
		t.Fatalf("no account yet: %+v", b)
	}
	_, err := f.debit(credits.DebitInput{Customer: ref(cus), Amount: 1}, t0)
	wantCode(t, err, apperr.NoCreditAccount, "customer "+cus+" has no credit account")

	g := f.mustGrant(cus, 100, nil, t0)
	if g.Granted != 100 || g.Balance != 100 || !strings.HasPrefix(g.EntryID, "cle_") || g.Deduplicated || g.CustomerID != cus {
		t.Fatalf("grant %+v", g)
	}
	d := f.mustDebit(cus, 30, false, t0)
	if d.Requested != 30 || d.Covered != 30 || d.Shortfall != 0 || d.Balance != 70 {
		t.Fatalf("debit %+v", d)
	}
	// Without allow_negative a debit covers what the balance allows.
	d = f.mustDebit(cus, 100, false, t0)
	if d.Covered != 70 || d.Shortfall != 30 || d.Balance != 0 {
		t.Fatalf("short debit %+v", d)
	}
	d = f.mustDebit(cus, 5, false, t0)
	if d.Covered != 0 || d.Shortfall != 5 || d.Balance != 0 {
		t.Fatalf("empty debit %+v", d)
	}
	// With it the whole amount is covered and the balance goes negative;
	// the next grant repays that first.
	d = f.mustDebit(cus, 40, true, t0)
	if d.Covered != 40 || d.Shortfall != 0 || d.Balance != -40 {
		t.Fatalf("negative debit %+v", d)
	}
	if d := f.mustDebit(cus, 1, false, t0); d.Covered != 0 || d.Balance != -40 {
		t.Fatalf("debit while negative %+v", d)
	}
	g = f.mustGrant(cus, 50, nil, t0)
	if g.Balance != 10 {
		t.Fatalf("grant after debt %+v", g)
	}
	if d := f.mustDebit(cus, 20, false, t0); d.Covered != 10 || d.Balance != 0 {
		t.Fatalf("debt was not repaid first: %+v", d)
	}
	b := f.balance(cus, t0)
	if b.Balance != 0 || b.Granted != 150 || b.Consumed != 150 || !strings.HasPrefix(b.AccountID, "cacct_") {
		t.Fatalf("balance %+v", b)
	}
	checkInvariants(t, f, t0)
}

func TestValidation(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cus := f.customer("u1")
	long := strings.Repeat("é", 301)
	cases := []struct {
		in    credits.GrantInput
		code  apperr.Code
		field string
	}{
		{credits.GrantInput{Customer: ref(cus)}, apperr.InvalidRequest, "amount:"},
		{credits.GrantInput{Amount: 1}, apperr.CustomerRequired, ""},
		{credits.GrantInput{Customer: ref(cus), Amount: 1, Reason: &long}, apperr.InvalidRequest, "reason:"},
		{credits.GrantInput{Customer: ref(cus), Amount: 1, IdempotencyKey: ptr(strings.Repeat("k", 256))}, apperr.InvalidRequest, "idempotency_key:"},
		{credits.GrantInput{Customer: ref(cus), Amount: 1, ExpiresAt: &t0}, apperr.InvalidRequest, "expires_at:"},
		{credits.GrantInput{Customer: ref("cus_nope"), Amount: 1}, apperr.UnknownCustomer, "customer_id:"},
	}
	for _, c := range cases {
		_, err := f.grant(c.in, t0)
		wantCode(t, err, c.code, c.field)
	}
	if _, err := f.grant(credits.GrantInput{Customer: ref(cus), Amount: 1, Reason: ptr(strings.Repeat("é", 300))}, t0); err != nil {
		t.Fatalf("300 characters: %v", err)
	}
	// Overflow is an error, never a wrap.
	if _, err := f.grant(credits.GrantInput{Customer: ref(cus), Amount: 1<<63 - 1}, t0); apperr.CodeOf(err) != apperr.InvalidRequest {
		t.Fatalf("overflow: %v", err)
	}
	_, err := f.debit(credits.DebitInput{Customer: customers.Ref{}, Amount: 1}, t0)
	wantCode(t, err, apperr.CustomerRequired, "")
	// A debit for an external id never seen is no_credit_account, and
	// leaves no customer behind.
	// The message names the external id, not a made-up cus_ id.
	_, err = f.debit(credits.DebitInput{Customer: customers.Ref{ExternalID: ptr("ghost")}, Amount: 1}, t0)
	wantCode(t, err, apperr.NoCreditAccount, `customer with external_customer_id "ghost" has no credit account`)
	if strings.Contains(err.Error(), "cus_") {
		t.Fatalf("names a customer id: %v", err)
	}
	// So does a known customer without an account, named by external id.
	f.customer("known")
	_, err = f.debit(credits.DebitInput{Customer: customers.Ref{ExternalID: ptr("known")}, Amount: 1}, t0)
	wantCode(t, err, apperr.NoCreditAccount, `customer with external_customer_id "known" has no credit account`)
	_, err = f.debit(credits.DebitInput{Customer: customers.Ref{ExternalID: ptr(strings.Repeat("x", 256))}, Amount: 1}, t0)
	wantCode(t, err, apperr.InvalidRequest, "external_customer_id")
	var n int
	if err := f.db.Get(&n, `SELECT count(*) FROM customers WHERE external_customer_id = 'ghost'`); err != nil || n != 0 {
		t.Fatalf("ghost customer: %d %v", n, err)
	}
}

func TestIdempotency(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cus := f.customer("u1")
	other := f.customer("u2")
	in := credits.GrantInput{Customer: customers.Ref{ExternalID: ptr("u1")}, Amount: 100, IdempotencyKey: ptr("g1"), ExpiresAt: ptr(t0.Add(time.Hour))}
	first, err := f.grant(in, t0)
	if err != nil {
		t.Fatal(err)
	}
	f.mustDebit(cus, 10, false, t0)
	// The replay names the customer by id; same customer, same result.
	in.Customer = ref(cus)
	again, err := f.grant(in, t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if !again.Deduplicated || again.EntryID != first.EntryID || again.Balance != 100 {
		t.Fatalf("replay %+v vs %+v", again, first)
	}
	for name, mod := range map[string]func(*credits.GrantInput){
		"amount":     func(g *credits.GrantInput) { g.Amount = 101 },
		"customer":   func(g *credits.GrantInput) { g.Customer = ref(other) },
		"reason":     func(g *credits.GrantInput) { g.Reason = ptr("other") },
		"expires_at": func(g *credits.GrantInput) { g.ExpiresAt = nil },
	} {
		changed := in
		mod(&changed)
		_, err := f.grant(changed, t0)
		wantCode(t, err, apperr.InvalidRequest, "idempotency_key:")
		if !strings.Contains(err.Error(), name) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The explicit default reason is the same request.
	in.Reason = ptr(credits.DefaultGrantReason)
	if r, err := f.grant(in, t0); err != nil || !r.Deduplicated {
		t.Fatalf("explicit default reason: %+v %v", r, err)
	}
	// Keys are shared by grants and debits.
	_, err = f.debit(credits.DebitInput{Customer: ref(cus), Amount: 100, IdempotencyKey: ptr("g1")}, t0)
	wantCode(t, err, apperr.InvalidRequest, "idempotency_key:")

	d := credits.DebitInput{Customer: ref(cus), Amount: 50, IdempotencyKey: ptr("d1")}
	d1, err := f.debit(d, t0)
	if err != nil || d1.Balance != 40 {
		t.Fatalf("%+v %v", d1, err)
	}
	d2, err := f.debit(d, t0)
	if err != nil || !d2.Deduplicated || d2.Balance != 40 || d2.Covered != 50 {
		t.Fatalf("debit replay %+v %v", d2, err)
	}
	d.AllowNegative = true
	_, err = f.debit(d, t0)
	wantCode(t, err, apperr.InvalidRequest, "idempotency_key:")
	if b := f.balance(cus, t0); b.Balance != 40 || b.Consumed != 60 {
		t.Fatalf("replays counted: %+v", b)
	}
	// Another merchant may use the same key.
	f2 := &fixture{t: t, db: f.db, b: f.b, ctx: f.ctx}
	m, _ := auth.CreateMerchant(f.ctx, f.db, "other")
	f2.s = tenant.Scope{MerchantID: m.ID, Mode: tenant.Test}
	if r, err := f2.grant(credits.GrantInput{Customer: customers.Ref{ExternalID: ptr("u1")}, Amount: 5, IdempotencyKey: ptr("g1")}, t0); err != nil || r.Deduplicated {
		t.Fatalf("other merchant: %+v %v", r, err)
	}
	checkInvariants(t, f, t0)
}

// The ledger refuses changes to what was written, whoever asks.
func TestLedgerAppendOnly(t *testing.T) {
	t.Parallel()
	f := setup(t)
	cus := f.customer("u1")
	f.mustGrant(cus, 100, nil, t0)
	f.mustDebit(cus, 10, false, t0)
	for _, stmt := range []string{
		`UPDATE credit_entries SET amount = 1000`,
		`DELETE FROM credit_entries`,
		`TRUNCATE credit_entries CASCADE`,
		`UPDATE credit_operations SET balance = 0`,
		`DELETE FROM credit_operations`,
		`TRUNCATE credit_operations CASCADE`,
	} {
		_, err := f.db.Exec(stmt)
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v", stmt, err)
		}
	}
	if b := f.balance(cus, t0); b.Balance != 90 {
		t.Fatalf("balance %d", b.Balance)
	}
}
