package cmd

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tollgatehq/tollgate/client"
)

func TestCreditsGrantFlags(t *testing.T) {
	t.Parallel()
	run := func(args ...string) (client.CreditGrantParams, error) {
		var got client.CreditGrantParams
		cmd := newCreditsGrantCmd(NewFactory(&IO{}), func(_ context.Context, p client.CreditGrantParams) error {
			got = p
			return nil
		})
		cmd.SetArgs(args)
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		cmd.SetErr(io.Discard) // warnings (a bare --amount) are not what these test
		return got, cmd.Execute()
	}
	p, err := run("--amount", "2.5usdc", "--external-customer-id", "u1", "--reason", "promo", "--expires-at", "2031-01-02")
	if err != nil || p.Amount != "2500000" || p.ExternalCustomerID != "u1" || p.Reason != "promo" ||
		p.ExpiresAt == nil || p.ExpiresAt.Format("2006-01-02T15:04:05Z07:00") != "2031-01-02T00:00:00Z" {
		t.Fatalf("%+v %v", p, err)
	}
	// Without --idempotency-key each run gets its own random key.
	if !strings.HasPrefix(p.IdempotencyKey, "cli_") {
		t.Fatalf("key %q", p.IdempotencyKey)
	}
	q, _ := run("--amount", "1", "--customer-id", "cus_1")
	if q.IdempotencyKey == p.IdempotencyKey || q.CustomerID != "cus_1" {
		t.Fatalf("keys %q %q", p.IdempotencyKey, q.IdempotencyKey)
	}
	if p, _ := run("--amount", "1", "--customer-id", "c", "--idempotency-key", "mine"); p.IdempotencyKey != "mine" {
		t.Fatalf("key %q", p.IdempotencyKey)
	}
	for _, args := range [][]string{
		{"--amount", "0", "--customer-id", "c"},
		{"--amount", "1.5", "--customer-id", "c"},
		{"--amount", "1", "--customer-id", "c", "--expires-at", "soon"},
	} {
		if _, err := run(args...); err == nil || exitCode(err) != ExitUsage {
			t.Errorf("%v: %v", args, err)
		}
	}
}

func TestCreditsDebitFlags(t *testing.T) {
	t.Parallel()
	var got client.CreditDebitParams
	cmd := newCreditsDebitCmd(NewFactory(&IO{}), func(_ context.Context, p client.CreditDebitParams) error {
		got = p
		return nil
	})
	cmd.SetArgs([]string{"--amount", "7", "--customer-id", "cus_1", "--allow-negative"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetErr(io.Discard) // warnings (a bare --amount) are not what these test
	if err := cmd.Execute(); err != nil || got.Amount != "7" || !got.AllowNegative || got.CustomerID != "cus_1" {
		t.Fatalf("%+v %v", got, err)
	}
}

// creditsAPI answers the credit endpoints with canned bodies and records
// the requests.
type creditsAPI struct {
	url    string
	mu     sync.Mutex
	bodies []map[string]any
	paths  []string
	reply  map[string]string // "METHOD /path" → body (status 200/201)
}

func newCreditsAPI(t *testing.T, reply map[string]string) *creditsAPI {
	api := &creditsAPI{reply: reply}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api.mu.Lock()
		defer api.mu.Unlock()
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		api.bodies, api.paths = append(api.bodies, body), append(api.paths, r.Method+" "+r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		out, ok := api.reply[r.Method+" "+r.URL.Path]
		if !ok {
			w.WriteHeader(404)
			io.WriteString(w, `{"error":{"code":"unknown_customer","message":"no customer"}}`)
			return
		}
		io.WriteString(w, out)
	}))
	t.Cleanup(srv.Close)
	api.url = srv.URL
	return api
}

func (api *creditsAPI) args(args ...string) []string {
	return append(args, "--api-url", api.url, "--api-key", testKey)
}

func TestCreditsCommands(t *testing.T) {
	t.Parallel()
	grant := `{"object":"credit_grant","customer_id":"cus_1","granted":"2500000","balance":"3000000","entry_id":"cle_1","deduplicated":false}`
	debit := `{"object":"credit_debit","customer_id":"cus_1","requested":"4000000","covered":"3000000","shortfall":"1000000","balance":"0","deduplicated":false}`
	balance := `{"object":"credit_balance","customer_id":"cus_1","account_id":"cacct_1","balance":"-1500000","granted":"3000000","consumed":"4500000","currency":"usdc"}`
	api := newCreditsAPI(t, map[string]string{
		"POST /v1/credit_grants":                 grant,
		"POST /v1/credit_debits":                 debit,
		"GET /v1/customers/cus_1/credit_balance": balance,
		"GET /v1/customers/cus_2/credit_balance": `{"object":"credit_balance","customer_id":"cus_2","balance":"0","currency":"usdc"}`,
		"GET /v1/customers/cus_3/credit_balance": `{"object":"credit_balance","customer_id":"cus_3","account_id":"cacct_3","balance":"500000","granted":"5000000","consumed":"1500000","expired":"3000000","currency":"usdc"}`,
	})

	res := cliRun(t, nil, api.args("credits", "grant", "--amount", "2.5usdc", "--external-customer-id", "u1")...)
	if res.code != 0 || !strings.Contains(res.stdout, "Granted 2.50 USDC to cus_1") || !strings.Contains(res.stdout, "3.00 USDC") {
		t.Fatalf("grant: %d %q %q", res.code, res.stdout, res.stderr)
	}
	if b := api.bodies[0]; b["amount"] != "2500000" || b["external_customer_id"] != "u1" || !strings.HasPrefix(b["idempotency_key"].(string), "cli_") {
		t.Fatalf("grant body %v", b)
	}
	res = cliRun(t, nil, api.args("credits", "debit", "--amount", "4000000", "--customer-id", "cus_1", "--json")...)
	if res.code != 0 || res.stdout != debit+"\n" {
		t.Fatalf("debit --json: %d %q %q", res.code, res.stdout, res.stderr)
	}
	res = cliRun(t, nil, api.args("credits", "debit", "--amount", "4000000", "--customer-id", "cus_1")...)
	if res.code != 0 || !strings.Contains(res.stdout, "Debited 3.00 USDC from cus_1 (1.00 USDC short)") {
		t.Fatalf("debit: %d %q", res.code, res.stdout)
	}
	res = cliRun(t, nil, api.args("credits", "balance", "cus_1")...)
	if res.code != 0 || !strings.Contains(res.stdout, "BALANCE") || !strings.Contains(res.stdout, "-1.50 USDC") || !strings.Contains(res.stdout, "cacct_1") {
		t.Fatalf("balance: %d %q", res.code, res.stdout)
	}
	// After an expiry the row adds up: 5.00 - 1.50 - 3.00 = 0.50.
	res = cliRun(t, nil, api.args("credits", "balance", "cus_3")...)
	if res.code != 0 || !strings.Contains(res.stdout, "EXPIRED") || !strings.Contains(res.stdout, "0.50 USDC") || !strings.Contains(res.stdout, "3.00 USDC") {
		t.Fatalf("balance after an expiry: %d %q", res.code, res.stdout)
	}
	res = cliRun(t, nil, api.args("credits", "balance", "cus_2")...)
	if res.code != 0 || !strings.Contains(res.stdout, "(no credit account)") {
		t.Fatalf("no account: %d %q", res.code, res.stdout)
	}
	res = cliRun(t, nil, api.args("credits", "balance", "cus_2", "--json")...)
	if res.code != 0 || !strings.HasPrefix(res.stdout, `{"object":"credit_balance","customer_id":"cus_2"`) {
		t.Fatalf("balance --json: %d %q", res.code, res.stdout)
	}
	res = cliRun(t, nil, api.args("credits", "balance", "cus_9")...)
	if res.code != ExitError || !strings.Contains(res.stderr, "unknown_customer") {
		t.Fatalf("unknown: %d %q", res.code, res.stderr)
	}
	// Usage errors never reach the API.
	before := len(api.paths)
	for _, args := range [][]string{
		{"credits", "grant", "--amount", "1"},
		{"credits", "debit", "--customer-id", "c"},
		{"credits", "balance"},
		{"credits", "balance", "a", "b"},
	} {
		if res := cliRun(t, nil, api.args(args...)...); res.code != ExitUsage {
			t.Errorf("%v: exit %d %q", args, res.code, res.stderr)
		}
	}
	if len(api.paths) != before {
		t.Fatalf("usage errors sent requests: %v", api.paths[before:])
	}
}
