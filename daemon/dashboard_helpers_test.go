package daemon_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/users"
)

const dashPassword = "a long dashboard passphrase"

// browser is a cookie-keeping HTTP client that does not follow redirects,
// driving the dashboard as a browser's forms would.
type browser struct {
	t    *testing.T
	b    *bundle
	c    *http.Client
	last string // the last page's body
}

func (b *bundle) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, b: b, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type answer struct {
	status int
	header http.Header
	body   string
}

func (br *browser) do(method, path string, form url.Values, header map[string]string) answer {
	br.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, br.b.url+path, body)
	if err != nil {
		br.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := br.c.Do(req)
	if err != nil {
		br.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	br.last = string(out)
	return answer{resp.StatusCode, resp.Header, string(out)}
}

func (br *browser) get(path string) answer { br.t.Helper(); return br.do("GET", path, nil, nil) }

var csrfField = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// token is the form token on the last page.
func (br *browser) token() string {
	br.t.Helper()
	m := csrfField.FindStringSubmatch(br.last)
	if m == nil {
		br.t.Fatalf("no form token on the page:\n%s", br.last)
	}
	return m[1]
}

// post submits a form of the last page (its token added).
func (br *browser) post(path string, form url.Values) answer {
	br.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	form.Set("csrf_token", br.token())
	return br.do("POST", path, form, nil)
}

// cookie is the browser's cookie name for the dashboard's paths.
func (br *browser) cookie(name string) *http.Cookie {
	u, _ := url.Parse(br.b.url + "/dashboard")
	for _, c := range br.c.Jar.Cookies(u) {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// dashUser makes a dashboard user of merchant with dashPassword set.
func (b *bundle) dashUser(t testing.TB, merchant, email string) users.User {
	t.Helper()
	c, err := users.Create(context.Background(), b.db, audit.AdminActor(), merchant, email, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	u, err := users.CompleteSetup(context.Background(), b.db, audit.Actor{}, c.SetupToken, dashPassword, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// signIn signs br in as email.
func (br *browser) signIn(email string) {
	br.t.Helper()
	br.get("/dashboard/sign-in")
	if a := br.post("/dashboard/sign-in", url.Values{"email": {email}, "password": {dashPassword}}); a.status != http.StatusSeeOther {
		br.t.Fatalf("sign-in: %d\n%s", a.status, a.body)
	}
	if a := br.get("/dashboard"); a.status != http.StatusOK {
		br.t.Fatalf("overview after sign-in: %d\n%s", a.status, a.body)
	}
}

var newKeyRE = regexp.MustCompile(`id="new-key">(sk_(?:test|live)_[0-9A-Za-z]{43})<`)
var newSecretRE = regexp.MustCompile(`id="new-secret">(whsec_[0-9A-Za-z]+)<`)
