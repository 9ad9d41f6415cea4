package daemon_test

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/rail"
)

// Requests and page assertions for the checkout tests.

// pageResp is one answer of the checkout routes.
type pageResp struct {
	status int
	header http.Header
	body   string
}

func (b *bundle) page(path string) pageResp {
	b.t.Helper()
	req, err := http.NewRequest("GET", b.url+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.do(req)
}

// payForm posts the checkout form of id as a browser does (no JSON asked).
func (b *bundle) payForm(id string, form url.Values) pageResp {
	b.t.Helper()
	req, err := http.NewRequest("POST", b.url+"/checkout/"+id+"/pay", strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	return b.do(req)
}

func (b *bundle) do(req *http.Request) pageResp {
	b.t.Helper()
	// A browser follows the 303; the tests look at it.
	hc := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	return pageResp{resp.StatusCode, resp.Header, string(body)}
}

// is asserts the status and the page invariants: HTML with its headers, a
// CSP that admits exactly the page's one style element, one h1, no script,
// no inline style attribute, no external asset; then that the body has
// every want and none of the nots.
func (p pageResp) is(t *testing.T, status int, wants []string, nots ...string) {
	t.Helper()
	if p.status != status {
		t.Fatalf("status %d, want %d:\n%s", p.status, status, p.body)
	}
	p.secure(t)
	if n := strings.Count(p.body, "<h1"); n != 1 {
		t.Fatalf("%d h1 elements", n)
	}
	for _, want := range []string{`<html lang="en">`, "<main", "<header>", "<footer>", `name="viewport"`} {
		if !strings.Contains(p.body, want) {
			t.Fatalf("page lacks %q", want)
		}
	}
	p.has(t, wants, nots...)
}

// secure asserts the headers of every page (checkout, portal) and what
// its policy implies: a CSP that admits exactly the page's one style
// element and no script, and no script, inline style attribute or
// external asset in the page.
func (p pageResp) secure(t *testing.T) {
	t.Helper()
	for h, want := range map[string]string{"Content-Type": "text/html; charset=utf-8", "X-Content-Type-Options": "nosniff",
		"Referrer-Policy": "no-referrer", "Cache-Control": "no-store", "X-Frame-Options": "DENY"} {
		if got := p.header.Get(h); got != want {
			t.Fatalf("%s: %q, want %q", h, got, want)
		}
	}
	styles := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindAllStringSubmatch(p.body, -1)
	if len(styles) != 1 {
		t.Fatalf("%d style elements", len(styles))
	}
	sum := sha256.Sum256([]byte(styles[0][1]))
	csp := p.header.Get("Content-Security-Policy")
	for _, d := range []string{"default-src 'none'", "style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'",
		"form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"} {
		if !strings.Contains(csp, d) {
			t.Fatalf("CSP %q lacks %q", csp, d)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "script-src") {
		t.Fatalf("CSP %q admits inline code or scripts", csp)
	}
	for _, bad := range []string{"<script", " style=", "src=", "http://", "https://", "<main id=\"content\">\n</main>"} {
		if strings.Contains(p.body, bad) {
			t.Fatalf("page contains %q:\n%s", bad, p.body)
		}
	}
}

// has asserts the body has every want and none of the nots.
func (p pageResp) has(t *testing.T, wants []string, nots ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(p.body, want) {
			t.Fatalf("page lacks %q:\n%s", want, p.body)
		}
	}
	for _, not := range nots {
		if strings.Contains(p.body, not) {
			t.Fatalf("page has %q:\n%s", not, p.body)
		}
	}
}

// invoiceWallets are the test wallets an invoice's page offers: those that
// differ in a single payment. A plan's page offers rail.MagicWallets().
var invoiceWallets = []string{rail.WalletSucceeds, rail.WalletInsufficient, rail.WalletTransientOnce}

// subscriptionOnlyWallets differ only in later charges.
var subscriptionOnlyWallets = []string{rail.WalletRevokesAfter1st, rail.WalletFailsTwiceAfter1, rail.WalletFailsAfter1st}

// walletForms are the test-wallet forms of a payable test-mode page.
func walletForms(action string, wallets []string) []string {
	var out []string
	for _, a := range wallets {
		out = append(out, `<input type="hidden" name="payer" value="`+a+`">`, `id="pay-`+a+`"`)
	}
	return append(out, `<form method="post" action="`+action+`">`, `id="test-mode"`)
}
