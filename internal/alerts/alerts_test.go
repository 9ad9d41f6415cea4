package alerts

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
	"github.com/tollgatehq/tollgate/internal/wire"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func setup(t *testing.T) (*store.DB, tenant.Scope, metering.Meter) {
	t.Helper()
	db := testdb.Open(t)
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO merchants (id, name) VALUES ('mer_a', 'a'), ('mer_b', 'b')`,
		`INSERT INTO customers (merchant_id, mode, id) VALUES ('mer_a', 'test', 'cus_1'), ('mer_a', 'test', 'cus_2'), ('mer_b', 'test', 'cus_b')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s := tenant.Scope{MerchantID: "mer_a", Mode: tenant.Test}
	m, _, err := metering.Create(ctx, db, s, metering.Input{Key: "calls", DisplayName: "Calls"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return db, s, m
}

func decode(t *testing.T, body string) Input {
	t.Helper()
	o, err := fields.Decode([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	in, err := Decode(o)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return in
}

// drain runs the job until no check is left.
func drain(t *testing.T, db *store.DB) {
	t.Helper()
	e := &Evaluator{DB: db}
	for {
		more, err := e.Step(context.Background(), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if !more {
			return
		}
	}
}

func triggers(t *testing.T, db *store.DB) []wire.AlertTrigger {
	t.Helper()
	var raws []string
	if err := db.SelectContext(context.Background(), &raws, `SELECT data::text FROM events WHERE type = 'alert.triggered' ORDER BY seq`); err != nil {
		t.Fatal(err)
	}
	out := make([]wire.AlertTrigger, len(raws))
	for i, r := range raws {
		if err := json.Unmarshal([]byte(r), &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func TestUsageAlertFiresOnceUnderConcurrentWriters(t *testing.T) {
	db, s, m := setup(t)
	ctx := context.Background()
	now := time.Now()
	a, err := Create(ctx, db, s, decode(t, `{"type":"usage_threshold","meter":"`+m.ID+`","threshold":"100"}`), now)
	if err != nil || a.Status != Active {
		t.Fatalf("%+v %v", a, err)
	}
	// 100 distractors watching another customer.
	for i := 0; i < 100; i++ {
		if _, err := Create(ctx, db, s, decode(t, `{"type":"usage_threshold","meter":"`+m.ID+`","threshold":"1000000","customer_id":"cus_2"}`), now); err != nil {
			t.Fatal(err)
		}
	}
	g := metering.NewIngester()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var jobWG sync.WaitGroup
	for r := 0; r < 2; r++ { // two replicas' jobs
		jobWG.Add(1)
		go func() {
			defer jobWG.Done()
			e := &Evaluator{DB: db, Batch: 3}
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := e.Step(ctx, time.Now()); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cust, one := "cus_1", int64(1)
			for i := 0; i < 8; i++ {
				res, err := g.Ingest(ctx, db, s, []metering.EventInput{{EventName: "calls", Value: &one, CustomerID: &cust}}, time.Now())
				if err != nil || res[0].Err != nil {
					t.Error(err, res[0].Err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	jobWG.Wait()
	drain(t, db)
	trs := triggers(t, db)
	if len(trs) != 1 {
		t.Fatalf("%d triggers: %+v", len(trs), trs)
	}
	tr := trs[0]
	if tr.AlertID != a.ID || tr.CustomerID == nil || *tr.CustomerID != "cus_1" || tr.Threshold == nil || *tr.Threshold != "100" || tr.PeriodStart == nil {
		t.Errorf("trigger %+v", tr)
	}
	// Archived: no further triggers, even in another period's worth of usage.
	if a, err = Archive(ctx, db, s, a.ID, now); err != nil || a.Status != Archived {
		t.Fatalf("%+v %v", a, err)
	}
	if _, err := Archive(ctx, db, s, "alert_nope", now); apperr.CodeOf(err) != apperr.ResourceNotFound {
		t.Errorf("archive unknown: %v", err)
	}
	list, err := List(ctx, db, s, page.Params{Limit: 100})
	if err != nil || len(list.Items) != 100 || !list.HasMore {
		t.Errorf("list: %d %v", len(list.Items), err)
	}
}

func TestCreditAlertFiresPerDownwardCrossing(t *testing.T) {
	db, s, _ := setup(t)
	ctx := context.Background()
	now := time.Now()
	cust := "cus_1"
	if _, err := Create(ctx, db, s, decode(t, `{"type":"credit_balance_below","threshold":50,"customer_id":"cus_1"}`), now); err != nil {
		t.Fatal(err)
	}
	grant := func(n money.Amount) {
		if _, err := credits.Grant(ctx, db, s, credits.GrantInput{Customer: customers.Ref{ID: &cust}, Amount: n}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	debit := func(n money.Amount) {
		if _, err := store.InTx(ctx, db, func(tx *store.Tx) (credits.DebitResult, error) {
			return credits.DebitTx(ctx, tx, s, credits.DebitInput{Customer: customers.Ref{ID: &cust}, Amount: n}, time.Now())
		}); err != nil {
			t.Fatal(err)
		}
	}
	grant(100)
	debit(30) // 70: above
	drain(t, db)
	debit(30) // 40: crossed
	drain(t, db)
	debit(10) // 30: still below
	drain(t, db)
	if n := len(triggers(t, db)); n != 1 {
		t.Fatalf("%d triggers after one crossing", n)
	}
	grant(100) // 130
	debit(100) // 30: crossed again
	drain(t, db)
	trs := triggers(t, db)
	if len(trs) != 2 || trs[1].Value != "30" || trs[1].PeriodStart != nil {
		t.Fatalf("triggers %+v", trs)
	}
}

// An expiry sweep lowers balances as debits do: it leaves the alert job a
// check only for an account a balance alert watches (one per account, with
// the balance before the expiry), none for the others, and the check fires
// the alert once.
func TestCreditExpirySweepLeavesChecksOnlyWhenWatched(t *testing.T) {
	db, s, _ := setup(t)
	ctx := context.Background()
	sb := tenant.Scope{MerchantID: "mer_b", Mode: tenant.Test}
	now := time.Now()
	grant := func(s tenant.Scope, cust string, n money.Amount, exp time.Time) {
		t.Helper()
		if _, err := credits.Grant(ctx, db, s, credits.GrantInput{Customer: customers.Ref{ID: &cust}, Amount: n, ExpiresAt: &exp}, now); err != nil {
			t.Fatal(err)
		}
	}
	type row struct {
		MerchantID string `db:"merchant_id"`
		CustomerID string `db:"customer_id"`
		Subject    string `db:"subject"`
		Prev       string `db:"prev"`
	}
	checks := func() []row {
		t.Helper()
		var rs []row
		if err := db.SelectContext(ctx, &rs, `SELECT merchant_id, customer_id, subject, coalesce(prev_balance::text, '') AS prev
			FROM alert_checks ORDER BY merchant_id, customer_id`); err != nil {
			t.Fatal(err)
		}
		return rs
	}
	sweep := func(at time.Time, wantEntries int) {
		t.Helper()
		if n, err := credits.SweepExpired(ctx, db, at); err != nil || n != wantEntries {
			t.Fatalf("swept %d entries (%v), want %d", n, err, wantEntries)
		}
	}

	// No alert anywhere: expiries leave nothing.
	exp1 := now.Add(time.Hour)
	grant(s, "cus_1", 100, exp1)
	grant(s, "cus_2", 100, exp1)
	grant(sb, "cus_b", 100, exp1)
	sweep(exp1.Add(time.Minute), 3)
	if rs := checks(); len(rs) != 0 {
		t.Fatalf("checks without any alert: %+v", rs)
	}

	// A balance alert on cus_1 only, and an archived one on every
	// customer of mer_b: one check, for cus_1, with its balance before.
	if _, err := Create(ctx, db, s, decode(t, `{"type":"credit_balance_below","threshold":50,"customer_id":"cus_1"}`), now); err != nil {
		t.Fatal(err)
	}
	archived, err := Create(ctx, db, sb, decode(t, `{"type":"credit_balance_below","threshold":50}`), now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Archive(ctx, db, sb, archived.ID, now); err != nil {
		t.Fatal(err)
	}
	exp2 := now.Add(2 * time.Hour)
	grant(s, "cus_1", 80, exp2)
	grant(s, "cus_1", 40, exp2) // two grants, one account: still one check
	grant(s, "cus_2", 80, exp2)
	grant(sb, "cus_b", 80, exp2)
	sweep(exp2.Add(time.Minute), 4)
	want := []row{{"mer_a", "cus_1", CreditSubject, "120"}}
	if rs := checks(); len(rs) != 1 || rs[0] != want[0] {
		t.Fatalf("checks %+v, want %+v", rs, want)
	}
	drain(t, db)
	trs := triggers(t, db)
	if len(trs) != 1 || trs[0].CustomerID == nil || *trs[0].CustomerID != "cus_1" || trs[0].Value != "0" {
		t.Fatalf("triggers %+v", trs)
	}

	// An alert for every customer of mer_b watches cus_b too.
	if _, err := Create(ctx, db, sb, decode(t, `{"type":"credit_balance_below","threshold":50}`), now); err != nil {
		t.Fatal(err)
	}
	exp3 := now.Add(3 * time.Hour)
	grant(sb, "cus_b", 60, exp3)
	grant(s, "cus_2", 60, exp3)
	sweep(exp3.Add(time.Minute), 2)
	want = []row{{"mer_b", "cus_b", CreditSubject, "60"}}
	if rs := checks(); len(rs) != 1 || rs[0] != want[0] {
		t.Fatalf("checks %+v, want %+v", rs, want)
	}
}

func TestCreateRefusals(t *testing.T) {
	db, s, m := setup(t)
	ctx := context.Background()
	other := tenant.Scope{MerchantID: "mer_b", Mode: tenant.Test}
	mb, _, err := metering.Create(ctx, db, other, metering.Input{Key: "b", DisplayName: "B"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for body, code := range map[string]apperr.Code{
		`{"type":"usage_threshold","meter":"` + m.ID + `","threshold":-1}`:         apperr.InvalidRequest,
		`{"type":"usage_threshold","meter":"` + m.ID + `","threshold":1.5}`:        apperr.InvalidRequest,
		`{"type":"usage_threshold","meter":"` + m.ID + `"}`:                        apperr.InvalidRequest,
		`{"type":"usage_threshold","meter":"` + mb.ID + `","threshold":1}`:         apperr.UnknownMeter,
		`{"type":"usage_threshold","meter":"meter_nope","threshold":1}`:            apperr.UnknownMeter,
		`{"type":"spend_threshold","percent":0}`:                                   apperr.InvalidRequest,
		`{"type":"spend_threshold","percent":101}`:                                 apperr.InvalidRequest,
		`{"type":"spend_threshold","percent":50,"customer_id":"cus_b"}`:            apperr.UnknownCustomer,
		`{"type":"credit_balance_below","threshold":"99999999999999999999999999"}`: apperr.InvalidRequest,
		`{"type":"nope"}`: apperr.InvalidRequest,
		`{"type":"credit_balance_below","threshold":1,"name":"` + string(make([]byte, 0)) + `x"}`: "",
	} {
		o, err := fields.Decode([]byte(body))
		if err == nil {
			var in Input
			if in, err = Decode(o); err == nil {
				_, err = Create(ctx, db, s, in, time.Now())
			}
		}
		if apperr.CodeOf(err) != code {
			t.Errorf("%s: %v", body, err)
		}
	}
}

// FuzzDecode: any body is refused with an API error, or decodes to an
// input whose validation answers an API error or holds the type's rules.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"type":"usage_threshold","meter":"meter_1","threshold":5}`, `{"type":"spend_threshold","percent":100}`,
		`{"type":"credit_balance_below","threshold":"0","customer_id":"cus_1","name":"n"}`, `{"type":"spend_threshold","percent":1.5}`,
		`{"type":"x"}`, `{}`, `[]`, `{"type":"usage_threshold","threshold":1e3}`, `{"percent":-1,"type":"spend_threshold"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := fields.Decode(body)
		if err != nil {
			if _, ok := apperr.As(err); !ok {
				t.Fatalf("decode: non-API error %v", err)
			}
			return
		}
		in, err := Decode(o)
		if err == nil {
			err = in.Validate()
		}
		if err != nil {
			if _, ok := apperr.As(err); !ok {
				t.Fatalf("non-API error %T %v", err, err)
			}
			return
		}
		switch in.Type {
		case UsageThreshold:
			if in.Meter == nil || in.Threshold == nil || in.Percent != nil {
				t.Fatalf("usage alert %+v", in)
			}
		case CreditBalanceBelow:
			if in.Threshold == nil || in.Meter != nil || in.Percent != nil {
				t.Fatalf("balance alert %+v", in)
			}
		case SpendThreshold:
			if in.Percent == nil || *in.Percent < 1 || *in.Percent > 100 || in.Threshold != nil || in.Meter != nil {
				t.Fatalf("spend alert %+v", in)
			}
		default:
			t.Fatalf("type %q accepted", in.Type)
		}
		if in.Threshold != nil && *in.Threshold < 0 {
			t.Fatalf("negative threshold")
		}
	})
}
