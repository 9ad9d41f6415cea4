package cmd

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
)

func TestInvoiceCreateAmountFlag(t *testing.T) {
	t.Parallel()
	tests := []struct {
		amount   string
		want     string // base units sent; "" means a usage error
		errMatch string
	}{
		{"9000000", "9000000", ""},
		{"9usdc", "9000000", ""},
		{"9.00usdc", "9000000", ""},
		{"9.5USDC", "9500000", ""},
		{"0.000001usdc", "1", ""},
		{" 12 usdc ", "12000000", ""},
		{"1", "1", ""},
		{"", "", "--amount"},
		{"0", "", "must be positive"},
		{"0usdc", "", "must be positive"},
		{"9.5", "", "want base units"},
		{"-5", "", "want base units"},
		{"+5", "", "want base units"},
		{"1e6", "", "want base units"},
		{"9.0000001usdc", "", "want base units"},
		{"usdc", "", "want base units"},
		{"9usd", "", "want base units"},
		{"99999999999999999999", "", "too large"},
		{"99999999999999usdc", "", "too large"},
	}
	for _, tt := range tests {
		t.Run(tt.amount, func(t *testing.T) {
			t.Parallel()
			var got client.InvoiceParams
			cmd := newInvoiceCreateCmd(NewFactory(&IO{}), func(_ context.Context, p client.InvoiceParams) error {
				got = p
				return nil
			})
			cmd.SetArgs([]string{"--amount", tt.amount, "--description", "x"})
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			cmd.SetErr(io.Discard) // warnings (a bare --amount) are not what these test
			err := cmd.Execute()
			if tt.want != "" {
				if err != nil || got.Amount != tt.want {
					t.Errorf("amount %q: sent %q, err %v; want %q", tt.amount, got.Amount, err, tt.want)
				}
				return
			}
			if err == nil || exitCode(err) != ExitUsage || !strings.Contains(err.Error(), tt.errMatch) {
				t.Errorf("amount %q: err %v (exit %d), want a usage error containing %q", tt.amount, err, exitCode(err), tt.errMatch)
			}
		})
	}
}

func TestInvoiceCreateDueAtFlag(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"2026-12-01T17:00:00Z", "2026-12-01T17:00:00Z"},
		{"2026-12-01T17:00:00+02:00", "2026-12-01T15:00:00Z"},
		{"2026-12-01", "2026-12-01T00:00:00Z"},
		{"tomorrow", ""},
		{"2026-13-01", ""},
	}
	for _, tt := range tests {
		var got client.InvoiceParams
		cmd := newInvoiceCreateCmd(NewFactory(&IO{}), func(_ context.Context, p client.InvoiceParams) error {
			got = p
			return nil
		})
		cmd.SetArgs([]string{"--amount", "1", "--description", "x", "--due-at", tt.in, "--memo", "m", "--recipient", "r", "--invoice-number", "n"})
		cmd.SilenceUsage, cmd.SilenceErrors = true, true
		cmd.SetErr(io.Discard) // warnings (a bare --amount) are not what these test
		err := cmd.Execute()
		if tt.want == "" {
			if exitCode(err) != ExitUsage {
				t.Errorf("--due-at %q: err %v, want a usage error", tt.in, err)
			}
			continue
		}
		if err != nil || got.DueAt == nil || got.DueAt.UTC().Format("2006-01-02T15:04:05Z07:00") != tt.want {
			t.Errorf("--due-at %q: got %v, err %v; want %s", tt.in, got.DueAt, err, tt.want)
		}
		if got.Memo != "m" || got.Recipient != "r" || got.InvoiceNumber != "n" {
			t.Errorf("optional flags not passed: %+v", got)
		}
	}
}

func TestInvoiceCreate(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t)
	res := cliRun(t, nil, api.args("invoice", "create", "--amount", "9usdc", "--description", "Consulting")...)
	if res.code != 0 || res.stderr != "" {
		t.Fatalf("exit %d, stderr %q", res.code, res.stderr)
	}
	want := "Created invoice inv_1\n" +
		"  Amount:        9.00 USDC (9000000 base units)\n" +
		"  Status:        open\n" +
		"  Description:   Consulting\n" +
		"  Checkout URL:  " + api.url + "/checkout/inv_1\n"
	if res.stdout != want {
		t.Errorf("stdout =\n%s\nwant\n%s", res.stdout, want)
	}
	body := api.lastBody()
	if body["amount"] != "9000000" || body["description"] != "Consulting" || len(body) != 2 {
		t.Errorf("request body = %v", body)
	}
}

func TestInvoiceCreateJSONPassthrough(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t)
	// Spacing and key order the client's types would not reproduce.
	const body = `{ "id":"inv_9", "object":"invoice", "amount":"1", "status":"open", "checkout_url":"u", "extra_field": {"a": 1} }`
	api.reply("POST", "/v1/invoices", 201, body)
	res := cliRun(t, nil, api.args("invoice", "create", "--amount", "1000000", "--description", "x", "--json")...)
	if res.code != 0 || res.stdout != body+"\n" || res.stderr != "" {
		t.Errorf("exit %d\nstdout %q\nstderr %q\nwant exactly the API's JSON", res.code, res.stdout, res.stderr)
	}
}

func TestInvoiceList(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t)
	api.addInvoices(3)
	res := cliRun(t, nil, api.args("invoice", "list")...)
	want := "" +
		"ID        AMOUNT  STATUS  DESCRIPTION  CREATED\n" +
		"inv_0  1.50 USDC  open    Order 0      2026-11-20 10:00\n" +
		"inv_1  3.00 USDC  open    Order 1      2026-11-19 10:00\n" +
		"inv_2  4.50 USDC  open    Order 2      2026-11-18 10:00\n"
	if res.code != 0 || res.stdout != want || res.stderr != "" {
		t.Errorf("exit %d, stderr %q, stdout =\n%s\nwant\n%s", res.code, res.stderr, res.stdout, want)
	}
}

func TestInvoiceListEmpty(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t)
	res := cliRun(t, nil, api.args("invoice", "list")...)
	if res.code != 0 || res.stdout != "" || res.stderr != "No invoices.\n" {
		t.Errorf("%+v", res)
	}
}

func TestInvoiceListPage(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t)
	api.addInvoices(5)
	res := cliRun(t, &IO{ErrIsTerminal: true}, api.args("invoice", "list", "--limit", "2", "--before", "c1")...)
	if res.code != 0 || strings.Count(res.stdout, "\n") != 3 || !strings.Contains(res.stdout, "inv_1 ") || !strings.Contains(res.stdout, "inv_2 ") {
		t.Errorf("stdout =\n%s", res.stdout)
	}
	if want := "More invoices: tollgate invoice list --before c3 (or --all)\n"; res.stderr != want {
		t.Errorf("stderr = %q, want %q", res.stderr, want)
	}
	if q := api.listQueries(); len(q) != 1 || q[0] != "before=c1&limit=2" {
		t.Errorf("queries = %v", q)
	}
}

func TestInvoiceListJSONPassthrough(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t)
	api.addInvoices(3)
	res := cliRun(t, nil, api.args("invoice", "list", "--limit", "2", "--json")...)
	want := `{"object":"list","data":[` + api.invoices[0] + "," + api.invoices[1] + `],"has_more":true,"next_cursor":"c2"}` + "\n"
	if res.code != 0 || res.stdout != want || res.stderr != "" {
		t.Errorf("exit %d, stderr %q\nstdout %s\nwant   %s", res.code, res.stderr, res.stdout, want)
	}
}

func TestInvoiceListAllJSON(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t)
	api.addInvoices(5)
	res := cliRun(t, nil, api.args("invoice", "list", "--all", "--limit", "2", "--json")...)
	want := `{"object":"list","data":[` + strings.Join(api.invoices, ",") + `],"has_more":false,"next_cursor":null}` + "\n"
	if res.code != 0 || res.stdout != want || res.stderr != "" {
		t.Errorf("exit %d, stderr %q\nstdout %s\nwant   %s", res.code, res.stderr, res.stdout, want)
	}
	if !json.Valid([]byte(res.stdout)) {
		t.Error("output is not valid JSON")
	}
	if q := strings.Join(api.listQueries(), " "); q != "limit=2 before=c2&limit=2 before=c4&limit=2" {
		t.Errorf("queries = %s", q)
	}
}

func TestInvoiceListAllTable(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t)
	api.addInvoices(120)
	res := cliRun(t, nil, api.args("invoice", "list", "--all")...)
	if res.code != 0 || strings.Count(res.stdout, "\n") != 121 || !strings.Contains(res.stdout, "inv_119 ") {
		t.Errorf("exit %d, %d lines", res.code, strings.Count(res.stdout, "\n"))
	}
	// --all without --limit asks for the largest pages.
	if q := api.listQueries(); len(q) != 2 || q[0] != "limit=100" {
		t.Errorf("queries = %v", q)
	}
}

func TestInvoiceListAllJSONEmpty(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t)
	res := cliRun(t, nil, api.args("invoice", "list", "--all", "--json")...)
	if want := `{"object":"list","data":[],"has_more":false,"next_cursor":null}` + "\n"; res.stdout != want {
		t.Errorf("stdout = %q, want %q", res.stdout, want)
	}
}

// A bare --amount under one USDC still means base units, but stderr says so
// in one line naming both readings; stdout (--json) is the API's object
// alone, and USDC or a full base-unit amount draws no warning.
func TestBareAmountWarning(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t)
	for _, tc := range []struct {
		args []string
		warn string
	}{
		{[]string{"invoice", "create", "--amount", "9", "--description", "x", "--json"},
			"tollgate: warning: --amount 9 is 9 base units (0.000009 USDC), not 9 USDC; for that write 9usdc or 9000000\n"},
		{[]string{"invoice", "create", "--amount", "999999", "--description", "x"}, "999999 base units (0.999999 USDC)"},
		{[]string{"plan", "create", "--name", "Pro", "--amount", "25", "--interval", "month", "--json"}, "--amount 25 is 25 base units"},
		{[]string{"credits", "grant", "--amount", "5", "--external-customer-id", "u1", "--json"}, "--amount 5 is 5 base units"},
		{[]string{"invoice", "create", "--amount", "9usdc", "--description", "x", "--json"}, ""},
		{[]string{"invoice", "create", "--amount", "0.5usdc", "--description", "x", "--json"}, ""},
		{[]string{"invoice", "create", "--amount", "1000000", "--description", "x", "--json"}, ""},
	} {
		res := cliRun(t, nil, api.args(tc.args...)...)
		if tc.warn == "" {
			if res.stderr != "" {
				t.Errorf("%v: stderr %q, want nothing", tc.args, res.stderr)
			}
			continue
		}
		if !strings.Contains(res.stderr, tc.warn) || strings.Count(res.stderr, "warning") != 1 {
			t.Errorf("%v: stderr %q, want one warning containing %q", tc.args, res.stderr, tc.warn)
		}
		if tc.args[len(tc.args)-1] == "--json" && res.code == 0 && !json.Valid([]byte(res.stdout)) {
			t.Errorf("%v: stdout is not one JSON value: %q", tc.args, res.stdout)
		}
		if strings.Contains(res.stdout, "warning") {
			t.Errorf("%v: the warning went to stdout: %q", tc.args, res.stdout)
		}
	}
}
