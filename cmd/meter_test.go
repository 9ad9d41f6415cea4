package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
)

func TestMeterCreateFlags(t *testing.T) {
	t.Parallel()
	var got client.MeterParams
	cmd := newMeterCreateCmd(NewFactory(&IO{}), func(_ context.Context, p client.MeterParams) error {
		got = p
		return nil
	})
	cmd.SetArgs([]string{"--key", "tokens", "--display-name", "Tokens", "--aggregation", "max",
		"--event-value-key", "n", "--unit-label", "token", "--description", "LLM tokens"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	want := client.MeterParams{Key: "tokens", DisplayName: "Tokens", Aggregation: "max", EventValueKey: "n", UnitLabel: "token", Description: "LLM tokens"}
	if got != want {
		t.Errorf("params = %+v, want %+v", got, want)
	}

	cmd = newMeterCreateCmd(NewFactory(&IO{}), nil)
	cmd.SetArgs([]string{"--key", "k", "--display-name", "K", "--aggregation", "avg"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.Execute(); exitCode(err) != ExitUsage || !strings.Contains(err.Error(), "sum, count, max, last") {
		t.Errorf("--aggregation avg: err %v, want a usage error listing the choices", err)
	}
}

func TestMeterCreate(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t)
	res := cliRun(t, nil, api.args("meter", "create", "--key", "api_calls", "--display-name", "API calls")...)
	want := "Created meter meter_1\n" +
		"  Key:           api_calls\n" +
		"  Display name:  API calls\n" +
		"  Aggregation:   sum\n"
	if res.code != 0 || res.stdout != want || res.stderr != "" {
		t.Errorf("exit %d, stderr %q, stdout =\n%s\nwant\n%s", res.code, res.stderr, res.stdout, want)
	}
	if body := api.lastBody(); len(body) != 2 || body["key"] != "api_calls" || body["display_name"] != "API calls" {
		t.Errorf("request body = %v", body)
	}
}

func TestMeterCreateExisting(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t)
	const existing = `{"object":"meter","id":"meter_7","key":"api_calls","display_name":"Calls","aggregation":"count","event_value_key":null,"unit_label":"call","description":null,"created_at":"2026-11-01T00:00:00Z","livemode":false}`
	api.reply("POST", "/v1/meters", 200, existing)
	res := cliRun(t, nil, api.args("meter", "create", "--key", "api_calls", "--display-name", "API calls")...)
	if res.code != 0 || !strings.HasPrefix(res.stdout, "Meter api_calls already exists (unchanged): meter_7\n") ||
		!strings.Contains(res.stdout, "Display name:  Calls\n") {
		t.Errorf("exit %d, stdout =\n%s", res.code, res.stdout)
	}
	res = cliRun(t, nil, api.args("meter", "create", "--key", "api_calls", "--display-name", "API calls", "--json")...)
	if res.stdout != existing+"\n" {
		t.Errorf("--json stdout = %q", res.stdout)
	}
}

func TestMeterList(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t)
	api.meters = []string{
		`{"object":"meter","id":"meter_2","key":"tokens","display_name":"LLM tokens","aggregation":"sum","event_value_key":"n","unit_label":"token","description":null,"created_at":"2026-11-02T08:00:00Z","livemode":false}`,
		`{"object":"meter","id":"meter_1","key":"api_calls","display_name":"API calls","aggregation":"count","event_value_key":null,"unit_label":"","description":null,"created_at":"2026-11-01T08:00:00Z","livemode":false}`,
	}
	res := cliRun(t, nil, api.args("meter", "list")...)
	want := "" +
		"ID       KEY        DISPLAY NAME  AGGREGATION  UNIT   CREATED\n" +
		"meter_2  tokens     LLM tokens    sum          token  2026-11-02 08:00\n" +
		"meter_1  api_calls  API calls     count               2026-11-01 08:00\n"
	if res.code != 0 || res.stdout != want {
		t.Errorf("exit %d, stdout =\n%s\nwant\n%s", res.code, res.stdout, want)
	}
	res = cliRun(t, nil, api.args("meter", "list", "--all", "--limit", "1", "--json")...)
	wantJSON := `{"object":"list","data":[` + api.meters[0] + "," + api.meters[1] + `],"has_more":false,"next_cursor":null}` + "\n"
	if res.stdout != wantJSON {
		t.Errorf("--all --json stdout =\n%s\nwant\n%s", res.stdout, wantJSON)
	}
}

func TestExitCodes(t *testing.T) {
	t.Parallel()
	api := newFakeAPI(t)
	api.reply("POST", "/v1/invoices", 400, `{"error":{"code":"invalid_request","message":"description: must be 1 to 500 characters"}}`)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"missing required flag", api.args("invoice", "create", "--amount", "1"), ExitUsage, `required flag(s) "description" not set`},
		{"bad amount", api.args("invoice", "create", "--amount", "nine", "--description", "x"), ExitUsage, `--amount "nine"`},
		{"unknown flag", api.args("invoice", "list", "--bogus"), ExitUsage, "unknown flag: --bogus"},
		{"stray argument", api.args("meter", "list", "extra"), ExitUsage, `unknown command "extra"`},
		{"limit out of range", api.args("invoice", "list", "--limit", "101"), ExitUsage, "--limit must be between 1 and 100"},
		{"limit zero", api.args("meter", "list", "--limit", "0", "--json"), ExitUsage, "--limit must be between 1 and 100"},
		{"bad aggregation", api.args("meter", "create", "--key", "k", "--display-name", "K", "--aggregation", "avg"), ExitUsage, "--aggregation"},
		{"rejected key", []string{"invoice", "list", "--api-url", api.url, "--api-key", "sk_test_revoked"}, ExitAuth, "unauthorized: invalid API key (HTTP 401, request-id req_test)"},
		{"rejected key on create", []string{"meter", "create", "--key", "k", "--display-name", "K", "--api-url", api.url, "--api-key", "sk_test_revoked", "--json"}, ExitAuth, "unauthorized"},
		{"API validation error", api.args("invoice", "create", "--amount", "1", "--description", "x"), ExitError, "tollgate: invalid_request: description: must be 1 to 500 characters (HTTP 400, request-id req_test)\n"},
		{"API validation error with --json", api.args("invoice", "create", "--amount", "1", "--description", "x", "--json"), ExitError, "invalid_request"},
	}
	// Cleanup runs after the parallel subtests.
	t.Cleanup(func() {
		if n := api.requests(); n != 0 {
			t.Errorf("%d list/create requests reached the API; usage errors must be caught first", n)
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := cliRun(t, nil, tt.args...)
			if res.code != tt.code {
				t.Errorf("exit %d, want %d (stderr %q)", res.code, tt.code, res.stderr)
			}
			if res.stdout != "" {
				t.Errorf("stdout = %q, want nothing: errors go to stderr", res.stdout)
			}
			if !strings.Contains(res.stderr, tt.stderr) {
				t.Errorf("stderr = %q, want it to contain %q", res.stderr, tt.stderr)
			}
		})
	}
}

func TestNoAPIKey(t *testing.T) {
	t.Setenv("TOLLGATE_API_KEY", "")
	res := cliRun(t, nil, "invoice", "list", "--api-url", "http://127.0.0.1:1")
	if res.code != ExitAuth || res.stdout != "" || !strings.Contains(res.stderr, "no API key") {
		t.Errorf("%+v", res)
	}
}

func TestDaemonNotRunningHint(t *testing.T) {
	t.Parallel()
	// Port 1 refuses connections; the client retries a refused connection
	// a few times before giving up, so this takes about two seconds.
	res := cliRun(t, nil, "meter", "list", "--api-url", "http://127.0.0.1:1", "--api-key", testKey)
	if res.code != ExitError || res.stdout != "" || !strings.Contains(res.stderr, "tollgate serve") {
		t.Errorf("%+v", res)
	}
}
