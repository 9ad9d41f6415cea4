package cmd

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// pageClient drives the dashboard's forms as a browser would: it keeps
// cookies, does not follow redirects, and posts each form with the form
// token of the page before.
type pageClient struct {
	t    *testing.T
	base string
	c    *http.Client
	last string
}

var formToken = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

func (p *pageClient) do(method, path string, form url.Values) (int, string) {
	p.t.Helper()
	var body io.Reader
	if form != nil {
		if m := formToken.FindStringSubmatch(p.last); m != nil {
			form.Set("csrf_token", m[1])
		}
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, p.base+path, body)
	if err != nil {
		p.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", p.base)
	}
	resp, err := p.c.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	p.last = string(out)
	return resp.StatusCode, p.last
}

// Keys, secrets, tokens and passwords are shown once to whoever made them
// and never written to a log: a daemon with its log captured
// and the admin commands' stderr, through every act that makes or uses
// one — API keys (admin and dashboard), webhook secrets (added and
// rotated, both ways), a setup link, a password (and a wrong one), a
// dashboard session, a portal link opened — hold none of them in full.
func TestSecretsNeverLogged(t *testing.T) {
	t.Parallel()
	dbURL := testdb.New(t)
	var secrets []string // every secret made, with what it is
	var stderrs strings.Builder
	admin := func(v any, args ...string) {
		t.Helper()
		code, out, errOut := run(append(args, "--database-url", dbURL, "--json")...)
		stderrs.WriteString(errOut)
		if code != 0 || json.Unmarshal([]byte(out), v) != nil {
			t.Fatalf("%v: %d %s %s", args, code, out, errOut)
		}
	}
	var m struct{ ID string }
	admin(&m, "admin", "merchant", "create", "--name", "Secretive")
	var k struct{ Key string }
	admin(&k, "admin", "key", "create", "--merchant", m.ID, "--mode", "test")
	secrets = append(secrets, k.Key)

	srv := startServe(t, "--config", os.DevNull, "--database-url", dbURL, "--listen", "127.0.0.1:0", "--allow-insecure-webhooks", "--rate-limits=false")
	t.Cleanup(srv.cancel)
	addr := srv.listening(t, 60*time.Second)
	base := "http://" + addr
	waitUntil(t, "the daemon", 60*time.Second, func() bool { return readyz(addr) == 200 })

	var w struct{ ID, Secret string }
	admin(&w, "admin", "webhook", "add", "--merchant", m.ID, "--mode", "test", "--url", "http://127.0.0.1:9/admin-hook", "--allow-insecure-webhooks")
	secrets = append(secrets, w.Secret)
	admin(&w, "admin", "webhook", "rotate-secret", w.ID)
	secrets = append(secrets, w.Secret)
	var u struct {
		SetupURL string `json:"setup_url"`
	}
	admin(&u, "admin", "user", "create", "--merchant", m.ID, "--email", "ops@example.com", "--base-url", base)
	setupPath := strings.TrimPrefix(u.SetupURL, base)
	secrets = append(secrets, setupPath[strings.LastIndex(setupPath, "/")+1:])

	jar, _ := cookiejar.New(nil)
	p := &pageClient{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	const password, wrong = "correct horse battery staple", "wrong horse battery staple"
	secrets = append(secrets, password, wrong)
	p.do("GET", setupPath, nil)
	if code, body := p.do("POST", setupPath, url.Values{"password": {password}, "confirm": {password}}); code != 200 || !strings.Contains(body, `action="/dashboard/sign-in"`) {
		t.Fatalf("setup: %d %s", code, body)
	}
	if code, _ := p.do("POST", "/dashboard/sign-in", url.Values{"email": {"ops@example.com"}, "password": {wrong}}); code == http.StatusSeeOther {
		t.Fatal("a wrong password signed in")
	}
	if code, body := p.do("POST", "/dashboard/sign-in", url.Values{"email": {"ops@example.com"}, "password": {password}}); code != http.StatusSeeOther {
		t.Fatalf("sign-in: %d %s", code, body)
	}
	dash, _ := url.Parse(base + "/dashboard")
	for _, c := range jar.Cookies(dash) {
		secrets = append(secrets, c.Value)
	}
	shown := func(re string) {
		t.Helper()
		m := regexp.MustCompile(`id="new-(?:key|secret)">(` + re + `)<`).FindStringSubmatch(p.last)
		if m == nil {
			t.Fatalf("no %s on the page:\n%s", re, p.last)
		}
		secrets = append(secrets, m[1])
	}
	p.do("GET", "/dashboard/developers", nil)
	p.do("POST", "/dashboard/keys", url.Values{})
	shown(`sk_test_\w+`)
	p.do("POST", "/dashboard/webhooks", url.Values{"url": {"http://127.0.0.1:9/dashboard-hook"}})
	shown(`whsec_\w+`)
	dashHook := regexp.MustCompile(`/dashboard/webhooks/(we_\w+)/rotate`).FindAllStringSubmatch(p.last, -1)
	p.do("POST", "/dashboard/webhooks/"+dashHook[len(dashHook)-1][1]+"/rotate", url.Values{})
	shown(`whsec_\w+`)

	api := client.New(base, k.Key)
	ctx := context.Background()
	g, err := api.GrantCredits(ctx, client.CreditGrantParams{Amount: "1000", ExternalCustomerID: "u1"})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := api.CreatePortalSession(ctx, client.PortalSessionParams{CustomerID: g.CustomerID})
	if err != nil {
		t.Fatal(err)
	}
	portalPath := strings.TrimPrefix(ps.URL, base)
	secrets = append(secrets, portalPath[strings.LastIndex(portalPath, "/")+1:])
	if code, _ := p.do("GET", portalPath, nil); code != 200 {
		t.Fatalf("portal: %d", code)
	}
	p.do("GET", portalPath+"/payments", nil)

	if code := srv.stop(t); code != 0 {
		t.Fatalf("serve exited %d", code)
	}
	logs := srv.stderr.String()
	for _, want := range []string{"path=/portal/{token}", "path=/dashboard/setup/{token}", "path=/dashboard/keys", "path=/v1/portal_sessions"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %q: the test would not see a leak there", want)
		}
	}
	for _, s := range secrets {
		if len(s) < 20 {
			t.Fatalf("%q is not a secret worth looking for", s)
		}
		if strings.Contains(logs, s) || strings.Contains(stderrs.String(), s) {
			t.Errorf("a secret is in the log: %.12s…", s)
		}
	}
}
