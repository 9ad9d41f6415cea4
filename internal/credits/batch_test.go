package credits_test

import (
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/money"
)

// call is one grant or debit of a test sequence.
type call struct {
	grant *credits.GrantInput
	debit *credits.DebitInput
	now   time.Time
}

// result is a call's outcome with the database's own ids made comparable
// across databases: customer ids become their external ids.
type result struct {
	Grant credits.GrantResult
	Debit credits.DebitResult
	Err   string
}

func (f *fixture) do(c call, batched bool) (credits.GrantResult, credits.DebitResult, error) {
	switch {
	case c.grant != nil && batched:
		r, err := f.grant(*c.grant, c.now)
		return r, credits.DebitResult{}, err
	case c.grant != nil:
		r, err := credits.Grant(f.ctx, f.db, f.s, *c.grant, c.now)
		return r, credits.DebitResult{}, err
	case batched:
		r, err := f.debit(*c.debit, c.now)
		return credits.GrantResult{}, r, err
	}
	r, err := credits.Debit(f.ctx, f.db, f.s, *c.debit, c.now)
	return credits.GrantResult{}, r, err
}

var cusID = regexp.MustCompile(`cus_[A-Za-z0-9]+`)

// comparable replaces ids that differ between two databases.
func (f *fixture) comparable(g credits.GrantResult, d credits.DebitResult, err error) result {
	f.t.Helper()
	ext := func(id string) string {
		var e *string
		if qerr := f.db.Get(&e, `SELECT external_customer_id FROM customers WHERE id = $1`, id); qerr != nil || e == nil {
			return "?" + id[:3]
		}
		return "ext:" + *e
	}
	r := result{Grant: g, Debit: d}
	if g.CustomerID != "" {
		r.Grant.CustomerID, r.Grant.AccountID = ext(g.CustomerID), g.AccountID[:6]
		if strings.HasPrefix(g.EntryID, "cle_") {
			r.Grant.EntryID = "cle_"
		}
	}
	if d.CustomerID != "" {
		r.Debit.CustomerID, r.Debit.AccountID = ext(d.CustomerID), d.AccountID[:6]
	}
	if err != nil {
		// With an error the result means nothing (Grant's is a zero
		// replay's); callers ignore it.
		return result{Err: string(apperr.CodeOf(err)) + ": " + cusID.ReplaceAllStringFunc(err.Error(), ext)}
	}
	return r
}

// runQueued queues calls in order on a paused batcher, then lets one
// committer take them together, and returns their results in call order.
func (f *fixture) runQueued(calls []call) []result {
	f.t.Helper()
	f.b.Pause()
	out := make([]result, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g, d, err := f.do(c, true)
			out[i] = f.comparable(g, d, err)
		}()
		waitFor(f.t, func() bool { return f.b.Queued() == i+1 })
	}
	f.b.Resume()
	wg.Wait()
	return out
}

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

// mixedCalls is a sequence mixing successes and every per-item error on
// one database's customers: u1 funded, u2 without an account.
func mixedCalls(f *fixture) []call {
	u1, u2 := f.customer("u1"), f.customer("u2")
	exp := t0.Add(30 * time.Minute)
	f.mustGrant(u1, 100, &exp, t0)
	if _, err := f.grant(credits.GrantInput{Customer: ref(u1), Amount: 50, IdempotencyKey: ptr("seed")}, t0); err != nil {
		f.t.Fatal(err)
	}
	ext := func(e string) customers.Ref { return customers.Ref{ExternalID: &e} }
	g := func(r customers.Ref, amount int64, mod ...func(*credits.GrantInput)) call {
		in := credits.GrantInput{Customer: r, Amount: money.Amount(amount)}
		for _, m := range mod {
			m(&in)
		}
		return call{grant: &in, now: t0}
	}
	d := func(r customers.Ref, amount int64, mod ...func(*credits.DebitInput)) call {
		in := credits.DebitInput{Customer: r, Amount: money.Amount(amount)}
		for _, m := range mod {
			m(&in)
		}
		return call{debit: &in, now: t0}
	}
	key := func(k string) func(*credits.DebitInput) {
		return func(in *credits.DebitInput) { in.IdempotencyKey = &k }
	}
	later := d(ref(u1), 10)
	later.now = t0.Add(45 * time.Minute) // the first grant has expired
	return []call{
		d(ref(u1), 30),
		g(ref(u1), 20, func(in *credits.GrantInput) { in.ExpiresAt = ptr(t0.Add(10 * time.Minute)) }),
		d(ref(u1), 40),
		d(ref("cus_nope"), 5), // unknown_customer
		d(ref(u2), 5),         // no_credit_account
		d(ext("newbie"), 5),   // no_credit_account: not yet
		g(ext("newbie"), 70, func(in *credits.GrantInput) { in.IdempotencyKey = ptr("gk") }), // opens an account
		d(ext("newbie"), 30), // on the account just opened
		g(ref(u1), 10, func(in *credits.GrantInput) { in.IdempotencyKey = ptr("seed") }), // key reused, other amount
		d(ref(u1), 25, key("dk")),
		d(ref(u1), 25, key("dk")), // same key in the batch: replays
		d(ref(u1), 1000, func(in *credits.DebitInput) { in.AllowNegative = true }),
		g(ref(u1), 300), // repays the debt first
		g(customers.Ref{ID: &u1, ExternalID: ptr("u2")}, 5), // ids disagree
		later,
		g(ext(strings.Repeat("x", 256)), 5),
		d(ref(u2), 5, key("gk")),
		g(ref(u2), 5, func(in *credits.GrantInput) { in.IdempotencyKey = ptr("dk") }), // a debit's key
		d(ext("u1"), 7),
	}
}

// A batch mixing good items and every per-item error gives each caller
// exactly what Grant and Debit one by one would, and writes the same.
func TestBatchMatchesOneByOne(t *testing.T) {
	t.Parallel()
	one, batched := setup(t), setup(t)
	got := matchOneByOne(t, one, batched, mixedCalls(one), mixedCalls(batched))
	later := t0.Add(45 * time.Minute)
	for _, ext := range []string{"u1", "newbie"} {
		a, b := one.balance(one.customer(ext), later), batched.balance(batched.customer(ext), later)
		if a.Balance != b.Balance || a.Granted != b.Granted || a.Consumed != b.Consumed {
			t.Errorf("%s: balance %+v, one by one %+v", ext, b, a)
		}
	}
	checkInvariants(t, batched, later)
	checkEvents(t, batched, got)
}

// matchOneByOne makes oneCalls one by one on one and batchCalls as one
// batch on batched (the same calls, on two databases), checks that each
// batched call got what its one-by-one twin got and that no batch fell
// back, and returns the batched results.
func matchOneByOne(t *testing.T, one, batched *fixture, oneCalls, batchCalls []call) []result {
	t.Helper()
	want := make([]result, len(oneCalls))
	for i, c := range oneCalls {
		g, d, err := one.do(c, false)
		want[i] = one.comparable(g, d, err)
	}
	got := batched.runQueued(batchCalls)
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("call %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	if n := batched.b.Fallbacks(); n != 0 {
		t.Errorf("%d batches fell back", n)
	}
	return got
}

// checkEvents: one event per applied grant or debit, whose data is the
// result's wire form (the REST response), in call order.
func checkEvents(t *testing.T, f *fixture, results []result) {
	t.Helper()
	var want []string
	for _, r := range results {
		switch {
		case r.Err != "" || r.Grant.Deduplicated || r.Debit.Deduplicated:
		case r.Grant.CustomerID != "":
			want = append(want, "credit.granted "+r.Grant.CustomerID+" "+r.Grant.Balance.String())
		default:
			want = append(want, "credit.debited "+r.Debit.CustomerID+" "+r.Debit.Balance.String())
		}
	}
	var evs []struct {
		Type string `db:"type"`
		Data []byte `db:"data"`
	}
	if err := f.db.Select(&evs, `SELECT type, data FROM events WHERE merchant_id = $1 AND type LIKE 'credit.%' ORDER BY seq`, f.s.MerchantID); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		var data struct {
			CustomerID string `json:"customer_id"`
			Balance    string `json:"balance"`
		}
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatal(err)
		}
		var ext string
		if err := f.db.Get(&ext, `SELECT external_customer_id FROM customers WHERE id = $1`, data.CustomerID); err != nil {
			t.Fatal(err)
		}
		got = append(got, e.Type+" ext:"+ext+" "+data.Balance)
	}
	// The fixture's own grants come first.
	if len(got) < len(want) || !reflect.DeepEqual(got[len(got)-len(want):], want) {
		t.Errorf("events\n got %q\nwant …%q", got, want)
	}
}
