package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
)

// Values sent to a count meter draw a warning that it counts events, not
// values: for one event when a person reads stderr, and in a file's
// summary; a sum meter's values and plain events draw none.
func TestMeterSendWarnsOfCountMeters(t *testing.T) {
	t.Parallel()
	u := startUsageAPI(t)
	ctx := context.Background()
	for _, m := range []client.MeterParams{
		{Key: "api_calls", DisplayName: "API calls", Aggregation: "count"},
		{Key: "tokens", DisplayName: "Tokens", Aggregation: "sum"},
	} {
		if _, err := u.c.CreateMeter(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	onTerminal := func(args ...string) cliResult {
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(cfg, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		args = append([]string{"--config", cfg, "--api-url", u.url, "--api-key", u.key}, args...)
		code := Run(ctx, args, &IO{In: strings.NewReader(""), Out: &out, Err: &errOut, ErrIsTerminal: true})
		return cliResult{code: code, stdout: out.String(), stderr: errOut.String()}
	}
	send := []string{"meter", "send", "--external-customer-id", "u_1", "--event-name"}

	res := onTerminal(append(send, "api_calls", "--value", "1200")...)
	want := "tollgate: warning: api_calls is a count meter: it counts events, not values, so this event counts 1, not 1200; bill by value with a sum meter\n"
	if res.code != 0 || res.stderr != want {
		t.Errorf("count meter, value 1200: exit %d, stderr %q; want %q", res.code, res.stderr, want)
	}
	for _, args := range [][]string{
		append(send, "tokens", "--value", "1200"),
		append(send, "api_calls"),
		append(send, "api_calls", "--value", "1"),
	} {
		if res := onTerminal(args...); res.code != 0 || res.stderr != "" {
			t.Errorf("%v: exit %d, stderr %q; want no warning", args, res.code, res.stderr)
		}
	}
	// Not on a terminal (a script), one event costs no lookup and no line.
	if res := u.cli(t, "", append(send, "api_calls", "--value", "5", "--json")...); res.code != 0 || res.stderr != "" {
		t.Errorf("piped: exit %d, stderr %q", res.code, res.stderr)
	}

	lines := `{"event_name":"api_calls","external_customer_id":"u_2","value":300}
{"event_name":"api_calls","external_customer_id":"u_2","value":7}
{"event_name":"api_calls","external_customer_id":"u_2"}
{"event_name":"tokens","external_customer_id":"u_2","value":300}
`
	res = u.cli(t, lines, "meter", "send", "--file", "-", "--json")
	want = "tollgate: warning: api_calls is a count meter: it counts events, not values, so its 2 events with other values each count 1; bill by value with a sum meter\n"
	if res.code != 0 || res.stderr != want || !strings.Contains(res.stdout, `"accepted": 4`) {
		t.Errorf("file: exit %d, stdout %s, stderr %q; want %q", res.code, res.stdout, res.stderr, want)
	}
}
