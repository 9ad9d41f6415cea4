package daemon_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// creditsClient makes a merchant with a test key; it returns the client, the
// key and the scope (to create customers without credit accounts).
func (b *bundle) creditsClient() (*client.Client, string, tenant.Scope) {
	m := b.merchant("acme")
	_, key := b.key(m, tenant.Test)
	return b.client(key), key, tenant.Scope{MerchantID: m, Mode: tenant.Test}
}

// keysOf returns the sorted top-level keys of a JSON object.
func keysOf(t *testing.T, raw []byte) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), ",")
}

func TestCreditGrantsAndDebits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, key, scope := b.creditsClient()
	ctx := context.Background()

	var resp client.Response
	g, err := c.GrantCredits(ctx, client.CreditGrantParams{Amount: "1000000", ExternalCustomerID: "u1", IdempotencyKey: "g1"}, client.CaptureResponse(&resp))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 201 || g.Object != "credit_grant" || !strings.HasPrefix(g.CustomerID, "cus_") || g.Granted != "1000000" ||
		g.Balance != "1000000" || g.EntryID == "" || g.Deduplicated {
		t.Fatalf("grant %d %s", resp.StatusCode, g.Raw)
	}
	if k := keysOf(t, g.Raw); k != "balance,customer_id,deduplicated,entry_id,granted,object" {
		t.Fatalf("grant fields %s", k)
	}
	cus := g.CustomerID
	// A replay with the key in the header instead, naming the customer by id.
	again, err := c.GrantCredits(ctx, client.CreditGrantParams{Amount: "1000000", CustomerID: cus}, client.IdempotencyKey("g1"), client.CaptureResponse(&resp))
	if err != nil || resp.StatusCode != 200 || !again.Deduplicated || again.EntryID != g.EntryID {
		t.Fatalf("replay %v %d %s", err, resp.StatusCode, again.Raw)
	}
	_, err = c.GrantCredits(ctx, client.CreditGrantParams{Amount: "2", CustomerID: cus, IdempotencyKey: "g1"})
	if e := apiErr(t, err, 400, "invalid_request"); !strings.HasPrefix(e.Message, "idempotency_key:") {
		t.Fatal(e.Message)
	}
	_, err = c.GrantCredits(ctx, client.CreditGrantParams{Amount: "1000000", CustomerID: cus, IdempotencyKey: "g1"}, client.IdempotencyKey("other"))
	apiErr(t, err, 400, "invalid_request")

	exp := time.Now().Add(time.Hour)
	if _, err := c.GrantCredits(ctx, client.CreditGrantParams{Amount: "500", CustomerID: cus, Reason: "promo", ExpiresAt: &exp}); err != nil {
		t.Fatal(err)
	}
	d, err := c.DebitCredits(ctx, client.CreditDebitParams{Amount: "600", CustomerID: cus}, client.CaptureResponse(&resp))
	if err != nil || resp.StatusCode != 200 || d.Object != "credit_debit" || d.Requested != "600" || d.Covered != "600" || d.Shortfall != "0" || d.Balance != "999900" {
		t.Fatalf("debit %v %s", err, d.Raw)
	}
	if k := keysOf(t, d.Raw); k != "balance,covered,customer_id,deduplicated,object,requested,shortfall" {
		t.Fatalf("debit fields %s", k)
	}
	d, err = c.DebitCredits(ctx, client.CreditDebitParams{Amount: "1000000", ExternalCustomerID: "u1", IdempotencyKey: "d1"})
	if err != nil || d.Covered != "999900" || d.Shortfall != "100" || d.Balance != "0" {
		t.Fatalf("short debit %v %s", err, d.Raw)
	}
	d, err = c.DebitCredits(ctx, client.CreditDebitParams{Amount: "1000000", ExternalCustomerID: "u1"}, client.IdempotencyKey("d1"), client.CaptureResponse(&resp))
	if err != nil || resp.StatusCode != 200 || !d.Deduplicated || d.Covered != "999900" {
		t.Fatalf("debit replay %v %s", err, d.Raw)
	}
	d, err = c.DebitCredits(ctx, client.CreditDebitParams{Amount: "250", CustomerID: cus, AllowNegative: true, Reason: "overage"})
	if err != nil || d.Covered != "250" || d.Shortfall != "0" || d.Balance != "-250" {
		t.Fatalf("negative debit %v %s", err, d.Raw)
	}

	bal, err := c.GetCreditBalance(ctx, cus)
	if err != nil || bal.Object != "credit_balance" || bal.Balance != "-250" || bal.Granted != "1000500" || bal.Consumed != "1000750" ||
		bal.Currency != "usdc" || bal.AccountID == "" || bal.CustomerID != cus {
		t.Fatalf("balance %v %s", err, bal.Raw)
	}
	if k := keysOf(t, bal.Raw); k != "account_id,balance,consumed,currency,customer_id,expired,granted,object" || bal.Expired != "0" {
		t.Fatalf("balance fields %s", k)
	}

	// A customer without a credit account.
	other, err := customers.Upsert(ctx, b.db, scope, "no-account", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	bal, err = c.GetCreditBalance(ctx, other.ID)
	if err != nil || bal.Balance != "0" || keysOf(t, bal.Raw) != "balance,currency,customer_id,object" {
		t.Fatalf("no account %v %s", err, bal.Raw)
	}
	_, err = c.DebitCredits(ctx, client.CreditDebitParams{Amount: "1", CustomerID: other.ID})
	apiErr(t, err, 404, "no_credit_account")
	_, err = c.DebitCredits(ctx, client.CreditDebitParams{Amount: "1", ExternalCustomerID: "never-seen"})
	apiErr(t, err, 404, "no_credit_account")
	_, err = c.GetCreditBalance(ctx, "cus_nope")
	apiErr(t, err, 404, "unknown_customer")
	_, err = c.GrantCredits(ctx, client.CreditGrantParams{Amount: "1", CustomerID: "cus_nope"})
	apiErr(t, err, 400, "unknown_customer")
	_, err = c.DebitCredits(ctx, client.CreditDebitParams{Amount: "1", CustomerID: "cus_nope"})
	apiErr(t, err, 400, "unknown_customer")
	_, err = c.GrantCredits(ctx, client.CreditGrantParams{Amount: "1"})
	apiErr(t, err, 400, "customer_required")
	_, err = c.DebitCredits(ctx, client.CreditDebitParams{Amount: "1"})
	apiErr(t, err, 400, "customer_required")

	// Default reasons are recorded in the ledger.
	var reasons []string
	if err := b.db.Select(&reasons, `SELECT reason FROM credit_operations ORDER BY seq`); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(reasons, "|"); got != "API grant|promo|API debit|API debit|overage" {
		t.Fatalf("reasons %s", got)
	}

	// One event per applied grant or debit, whose data is the result.
	evs, err := c.ListEvents(ctx, client.ListParams{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, e := range evs.Data {
		types = append(types, e.Type)
	}
	if got := strings.Join(types, ","); got != "credit.debited,credit.debited,credit.debited,credit.granted,credit.granted" {
		t.Fatalf("events %s", got)
	}
	var data map[string]any
	if err := json.Unmarshal(evs.Data[0].Data, &data); err != nil {
		t.Fatal(err)
	}
	if data["object"] != "credit_debit" || data["balance"] != "-250" || data["covered"] != "250" || data["deduplicated"] != false {
		t.Fatalf("event data %s", evs.Data[0].Data)
	}
	if err := json.Unmarshal(evs.Data[4].Data, &data); err != nil || data["entry_id"] != g.EntryID || data["object"] != "credit_grant" {
		t.Fatalf("grant event data %s", evs.Data[4].Data)
	}

	// Field rules, on the raw API.
	bad := map[string]string{
		`{"customer_id":"` + cus + `"}`:                                                                 "amount:",
		`{"amount":0,"customer_id":"` + cus + `"}`:                                                      "amount:",
		`{"amount":"1.5","customer_id":"` + cus + `"}`:                                                  "amount:",
		`{"amount":-1,"customer_id":"` + cus + `"}`:                                                     "amount:",
		`{"amount":1,"customer_id":5}`:                                                                  "customer_id:",
		`{"amount":1,"customer_id":"` + cus + `","reason":"` + strings.Repeat("r", 301) + `"}`:          "reason:",
		`{"amount":1,"customer_id":"` + cus + `","idempotency_key":"` + strings.Repeat("k", 256) + `"}`: "idempotency_key:",
		`{"amount":1,"customer_id":"` + cus + `","idempotency_key":""}`:                                 "idempotency_key:",
		`{"amount":1,"customer_id":"` + cus + `","expires_at":"tomorrow"}`:                              "expires_at:",
		`{"amount":1,"customer_id":"` + cus + `","expires_at":"2001-01-01T00:00:00Z"}`:                  "expires_at:",
		`{"amount":1,"customer_id":"` + cus + `","allow_negative":true}`:                                "allow_negative:",
		`{"amount":1,"customer_id":"` + cus + `","extra":1}`:                                            "extra:",
	}
	for body, field := range bad {
		status, _, out := b.raw("POST", "/v1/credit_grants", key, body)
		if status != 400 || !strings.Contains(out, `"invalid_request"`) || !strings.Contains(out, `"message":"`+field) {
			t.Errorf("grant %s: %d %s", body, status, out)
		}
	}
	for body, field := range map[string]string{
		`{"amount":1,"customer_id":"` + cus + `","allow_negative":"yes"}`:                      "allow_negative:",
		`{"amount":1,"customer_id":"` + cus + `","expires_at":"2031-01-01T00:00:00Z"}`:         "expires_at:",
		`{"amount":"01x","customer_id":"` + cus + `"}`:                                         "amount:",
		`{"amount":1,"customer_id":"` + cus + `","reason":"` + strings.Repeat("é", 301) + `"}`: "reason:",
	} {
		status, _, out := b.raw("POST", "/v1/credit_debits", key, body)
		if status != 400 || !strings.Contains(out, `"message":"`+field) {
			t.Errorf("debit %s: %d %s", body, status, out)
		}
	}
	if status, _, out := b.raw("POST", "/v1/credit_debits", key, `{"amount":`); status != 400 || !strings.Contains(out, "invalid_json") {
		t.Errorf("invalid json: %d %s", status, out)
	}
	if status, _, out := b.raw("GET", "/v1/customers/"+cus+"/credit_balance", "", ""); status != 401 {
		t.Errorf("no key: %d %s", status, out)
	}
}

// Grants share the create budget with invoices; debits and balance reads
// have their own.
func TestCreditRateLimits(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *daemon.Config) {
		c.Limits = map[ratelimit.Class]int{ratelimit.ClassCreate: 2, ratelimit.ClassDebit: 1, ratelimit.ClassCreditBalance: 1}
	})
	c, _, _ := b.creditsClient()
	ctx := context.Background()
	if _, err := c.CreateInvoice(ctx, client.InvoiceParams{Amount: "1", Description: "x"}); err != nil {
		t.Fatal(err)
	}
	g, err := c.GrantCredits(ctx, client.CreditGrantParams{Amount: "10", ExternalCustomerID: "u"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GrantCredits(ctx, client.CreditGrantParams{Amount: "10", ExternalCustomerID: "u"})
	if e := apiErr(t, err, 429, "rate_limited"); e.RetryAfter <= 0 {
		t.Fatalf("retry-after %v", e.RetryAfter)
	}
	if _, err := c.DebitCredits(ctx, client.CreditDebitParams{Amount: "1", CustomerID: g.CustomerID}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DebitCredits(ctx, client.CreditDebitParams{Amount: "1", CustomerID: g.CustomerID})
	apiErr(t, err, 429, "rate_limited")
	if _, err := c.GetCreditBalance(ctx, g.CustomerID); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetCreditBalance(ctx, g.CustomerID)
	apiErr(t, err, 429, "rate_limited")
}

func TestCreditModeMismatch(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *daemon.Config) { c.Environment = "live" })
	c, _, _ := b.creditsClient()
	ctx := context.Background()
	_, err := c.GrantCredits(ctx, client.CreditGrantParams{Amount: "10", ExternalCustomerID: "u"})
	apiErr(t, err, 400, "mode_mismatch")
	_, err = c.DebitCredits(ctx, client.CreditDebitParams{Amount: "10", ExternalCustomerID: "u"})
	apiErr(t, err, 400, "mode_mismatch")
}

// 60 concurrent debits of 100 against a balance of 5000 cover exactly 5000;
// one idempotency key sent 20 times at once grants once.
func TestCreditDebitsConcurrentHTTP(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *daemon.Config) { c.RateLimits = false })
	c, _, _ := b.creditsClient()
	ctx := context.Background()
	g, err := c.GrantCredits(ctx, client.CreditGrantParams{Amount: "3000", ExternalCustomerID: "u"})
	if err != nil {
		t.Fatal(err)
	}
	cus := g.CustomerID
	exp := time.Now().Add(time.Hour)
	if _, err := c.GrantCredits(ctx, client.CreditGrantParams{Amount: "2000", CustomerID: cus, ExpiresAt: &exp}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var covered, balances []string
	var wg sync.WaitGroup
	for range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := c.DebitCredits(ctx, client.CreditDebitParams{Amount: "100", CustomerID: cus})
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			covered, balances = append(covered, d.Covered), append(balances, d.Balance)
		}()
	}
	wg.Wait()
	full := 0
	for i := range covered {
		if covered[i] == "100" {
			full++
		}
		if strings.HasPrefix(balances[i], "-") {
			t.Fatalf("overdrawn: %s", balances[i])
		}
	}
	if full != 50 {
		t.Fatalf("%d debits fully covered, want 50", full)
	}
	bal, err := c.GetCreditBalance(ctx, cus)
	if err != nil || bal.Balance != "0" || bal.Consumed != "5000" {
		t.Fatalf("balance %v %s", err, bal.Raw)
	}

	statuses := make([]int, 20)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var resp client.Response
			_, err := c.GrantCredits(ctx, client.CreditGrantParams{Amount: "700", CustomerID: cus}, client.IdempotencyKey("once"), client.CaptureResponse(&resp))
			if err != nil {
				t.Error(err)
			}
			statuses[i] = resp.StatusCode
		}()
	}
	wg.Wait()
	created := 0
	for _, st := range statuses {
		if st == http.StatusCreated {
			created++
		} else if st != http.StatusOK {
			t.Fatalf("statuses %v", statuses)
		}
	}
	if created != 1 {
		t.Fatalf("statuses %v", statuses)
	}
	bal, err = c.GetCreditBalance(ctx, cus)
	if err != nil || bal.Balance != "700" || bal.Granted != "5700" {
		t.Fatalf("balance after replays %v %s", err, bal.Raw)
	}
	var granted int
	if err := b.db.Get(&granted, `SELECT count(*) FROM events WHERE type = 'credit.granted'`); err != nil || granted != 3 {
		t.Fatalf("credit.granted events %d %v", granted, err)
	}
}
