package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/auth"
)

// The first start names its merchant from --merchant-name, else asks the
// person at the terminal, else calls it "default" and says how to rename;
// a later start never makes another.
func TestBootstrapMerchantName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		flag, typed string
		terminal    bool
		want        string
		stderr      []string
	}{
		{flag: "Acme Widgets", want: "Acme Widgets", stderr: []string{`Created merchant "Acme Widgets"`}},
		{typed: "  Globex Corp \n", terminal: true, want: "Globex Corp", stderr: []string{"Your business's name, shown to customers on checkout pages [default]: "}},
		{typed: "\n", terminal: true, want: "default"},
		{want: "default", stderr: []string{`Created merchant "default"`, "tollgate admin merchant rename mch_"}},
	} {
		db, _ := eventsDB(t)
		var errOut bytes.Buffer
		f := NewFactory(&IO{In: strings.NewReader(tc.typed), Out: io.Discard, Err: &errOut, InIsTerminal: tc.terminal, ErrIsTerminal: tc.terminal})
		f.v.Set("config", filepath.Join(t.TempDir(), "config.yaml"))
		if err := f.bootstrap(ctx, &database{DB: db, Embedded: true}, "http://127.0.0.1:1", tc.flag); err != nil {
			t.Fatal(err)
		}
		ms, err := auth.ListMerchants(ctx, db)
		if err != nil || len(ms) != 1 || ms[0].Name != tc.want {
			t.Errorf("%+v: merchants %+v %v", tc, ms, err)
		}
		for _, s := range tc.stderr {
			if !strings.Contains(errOut.String(), s) {
				t.Errorf("%+v: stderr lacks %q:\n%s", tc, s, errOut.String())
			}
		}
		if !tc.terminal && strings.Contains(errOut.String(), "[default]") {
			t.Errorf("%+v: asked without a terminal", tc)
		}
		errOut.Reset()
		if err := f.bootstrap(ctx, &database{DB: db, Embedded: true}, "http://127.0.0.1:1", "Other name"); err != nil {
			t.Fatal(err)
		}
		if ms, _ := auth.ListMerchants(ctx, db); len(ms) != 1 || !strings.Contains(errOut.String(), "admin merchant rename") {
			t.Errorf("second start: %+v, stderr %q", ms, errOut.String())
		}
	}
}

// `admin merchant rename` changes the name a running daemon's checkout page
// shows at once, and refuses names the page could not show.
func TestAdminMerchantRename(t *testing.T) {
	t.Parallel()
	db, url := eventsDB(t)
	d := startEventsDaemon(t, db)
	m, key := merchantKey(t, db)
	inv, err := client.New(d.URL, key).CreateInvoice(context.Background(), client.InvoiceParams{Amount: "9000000", Description: "Consulting"})
	if err != nil {
		t.Fatal(err)
	}
	page := func() string {
		resp, err := http.Get(inv.CheckoutURL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if p := page(); !strings.Contains(p, "acme") {
		t.Fatalf("the page does not name the merchant:\n%s", p)
	}
	run := func(args ...string) cliResult {
		return cliRun(t, nil, append(append([]string{"admin", "merchant"}, args...), "--database-url", url)...)
	}
	res := run("rename", m, "--name", "Acme Widgets & Co", "--json")
	var got auth.Merchant
	if res.code != 0 || json.Unmarshal([]byte(res.stdout), &got) != nil || got.ID != m || got.Name != "Acme Widgets & Co" {
		t.Fatalf("rename --json: exit %d %q %q", res.code, res.stdout, res.stderr)
	}
	if p := page(); !strings.Contains(p, "Acme Widgets &amp; Co") {
		t.Errorf("after the rename the page does not show the new name:\n%s", p)
	}
	if res := run("rename", m, "--name", "Acme"); res.code != 0 || res.stdout != "Renamed merchant "+m+" to Acme\n" {
		t.Errorf("rename: exit %d %q %q", res.code, res.stdout, res.stderr)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"rename", m}, ExitUsage, "--name is required"},
		{[]string{"rename", "--name", "x"}, ExitUsage, "1 argument"},
		{[]string{"rename", "mch_nope", "--name", "x"}, ExitError, `no merchant "mch_nope"`},
		{[]string{"rename", m, "--name", "bad\x00name"}, ExitError, "control characters"},
		{[]string{"rename", m, "--name", strings.Repeat("x", 101)}, ExitError, "at most 100"},
	} {
		if res := run(tc.args...); res.code != tc.code || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tc.args, res.code, res.stderr, tc.code, tc.want)
		}
	}
}
