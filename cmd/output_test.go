package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestUSDC(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"9000000":             "9.00 USDC",
		"0":                   "0.00 USDC",
		"1":                   "0.000001 USDC",
		"1500":                "0.0015 USDC",
		"123456789":           "123.456789 USDC",
		"-2500000":            "-2.50 USDC",
		"9223372036854775807": "9223372036854.775807 USDC",
		"not-a-number":        "not-a-number",
		"":                    "",
	}
	for in, want := range tests {
		if got := usdc(in); got != want {
			t.Errorf("usdc(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTablePrinter(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	tp := newTablePrinter(&IO{Out: &out}, "ID", "AMOUNT", "NOTE").alignRight(1)
	tp.row("inv_1", "9.00 USDC", "line\nbreak\x1b[31m")
	tp.row("inv_22", "1000.50 USDC", "é")
	if err := tp.print(); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"ID            AMOUNT  NOTE\n" +
		"inv_1      9.00 USDC  line break [31m\n" +
		"inv_22  1000.50 USDC  é\n"
	if out.String() != want {
		t.Errorf("table =\n%q\nwant\n%q", out.String(), want)
	}
}

func TestColourOnlyOnTerminalWithoutNoColor(t *testing.T) {
	// Not parallel: it sets NO_COLOR.
	api := newFakeAPI(t)
	api.addInvoices(1)
	t.Setenv("NO_COLOR", "") // restored after the test
	os.Unsetenv("NO_COLOR")
	res := cliRun(t, &IO{OutIsTerminal: true}, api.args("invoice", "list")...)
	if !strings.Contains(res.stdout, "\x1b[1mID\x1b[0m") {
		t.Errorf("terminal output has no bold header: %q", res.stdout)
	}
	res = cliRun(t, &IO{OutIsTerminal: false}, api.args("invoice", "list")...)
	if strings.Contains(res.stdout, "\x1b[") {
		t.Errorf("piped output has colour: %q", res.stdout)
	}
	t.Setenv("NO_COLOR", "1")
	res = cliRun(t, &IO{OutIsTerminal: true}, api.args("invoice", "create", "--amount", "1usdc", "--description", "x")...)
	if strings.Contains(res.stdout, "\x1b[") || res.code != 0 {
		t.Errorf("NO_COLOR output has colour: %q", res.stdout)
	}
}

func TestPrintAllJSONKeepsItemsVerbatim(t *testing.T) {
	t.Parallel()
	items := []json.RawMessage{json.RawMessage(`{"b": 1,  "a":2}`), json.RawMessage(`{"id":"x"}`)}
	var out bytes.Buffer
	if err := printAllJSON(&out, items, func(r json.RawMessage) json.RawMessage { return r }); err != nil {
		t.Fatal(err)
	}
	want := `{"object":"list","data":[{"b": 1,  "a":2},{"id":"x"}],"has_more":false,"next_cursor":null}` + "\n"
	if out.String() != want {
		t.Errorf("got %s", out.String())
	}
}

func TestEntitlementCheckMarksMatchVerdict(t *testing.T) {
	// Not parallel: it clears NO_COLOR.
	t.Setenv("NO_COLOR", "")
	os.Unsetenv("NO_COLOR")
	api := newFakeAPI(t)
	check := func(entitled bool, reason string) cliResult {
		api.reply("GET", "/v1/customers/cus_1/entitlements/sso", 200, fmt.Sprintf(
			`{"object":"entitlement","customer_id":"cus_1","feature":"sso","entitled":%t,"reason":%q}`, entitled, reason))
		return cliRun(t, &IO{OutIsTerminal: true}, api.args("entitlements", "check", "cus_1", "sso")...)
	}
	res := check(false, "no_grant")
	if res.code != ExitNotEntitled || strings.Contains(res.stdout, "✓") ||
		!strings.HasPrefix(res.stdout, red("✗")+" Not entitled: cus_1 to sso\n") {
		t.Errorf("not entitled: exit %d, stdout %q", res.code, res.stdout)
	}
	res = check(true, "active")
	if res.code != 0 || strings.Contains(res.stdout, "✗") ||
		!strings.HasPrefix(res.stdout, green("✓")+" Entitled: cus_1 to sso\n") {
		t.Errorf("entitled: exit %d, stdout %q", res.code, res.stdout)
	}
}
