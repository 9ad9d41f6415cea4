package daemon

import (
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"net/http"
	"net/url"
	"strings"
)

// The consent page and the error page of /oauth/authorize: server-rendered,
// no script, no external assets; the only style is inline and allowed by its
// hash in the Content-Security-Policy.

const consentCSS = `
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;background:#f5f6f8;color:#1b1d21;margin:0;padding:2rem 1rem;line-height:1.5;font-size:1rem}
main{background:#fff;border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.12);padding:1.5rem;max-width:32rem;margin:0 auto}
h1{font-size:1.35rem;line-height:1.3;margin:0 0 1rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:.25rem 1rem;margin:0 0 1.25rem;font-size:.95rem}
dt{color:#4a4f57}
dd{margin:0;overflow-wrap:anywhere}
.note{color:#4a4f57;font-size:.9rem}
.error{background:#fdecea;color:#8a1c10;border:1px solid #f3b5ad;border-radius:8px;padding:.6rem .8rem}
label[for=secret_key]{display:block;font-weight:600;margin-bottom:.3rem}
input[type=password]{width:100%;font:inherit;padding:.6rem .7rem;border:1px solid #6b7280;border-radius:8px}
fieldset{border:1px solid #d0d4da;border-radius:8px;margin:1.25rem 0;padding:.5rem .9rem .9rem}
legend{font-weight:600;padding:0 .3rem}
.choice{display:flex;gap:.6rem;align-items:flex-start;margin-top:.6rem}
.choice input{margin-top:.35rem;width:1.1rem;height:1.1rem}
.actions{display:flex;gap:.75rem;flex-wrap:wrap}
button{font:inherit;font-weight:600;min-height:2.75rem;padding:.5rem 1.4rem;border-radius:8px;border:1px solid #1a4fb4;background:#fff;color:#1a4fb4;cursor:pointer}
button.primary{background:#1a4fb4;color:#fff}
:focus-visible{outline:3px solid #f59e0b;outline-offset:2px}
code{font-size:.9em}
@media (max-width:420px){body{padding:.75rem .5rem}main{padding:1.1rem}dl{grid-template-columns:1fr;gap:0}dd{margin-bottom:.5rem}}
`

// consentCSP is the page's Content-Security-Policy; form-action is completed
// per request with the redirect URI's origin, since browsers apply it to the
// redirect that answers the form too.
var consentCSP = func() string {
	sum := sha256.Sum256([]byte(consentCSS))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; frame-ancestors 'none'; base-uri 'none'"
}()

var oauthPages = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorize {{.ClientName}} · tollgate</title>
<style>` + consentCSS + `</style>
</head>
<body>
<main>
<h1>Allow <span id="client-name">{{.ClientName}}</span> to use your tollgate account?</h1>
{{if .Error}}<p class="error" role="alert" id="error">{{.Error}}</p>{{end}}
<dl>
<dt>Application</dt><dd>{{.ClientName}}{{if .ClientOrigin}} <span class="note">(published by {{.ClientOrigin}})</span>{{else}} <span class="note">(name chosen by the application)</span>{{end}}</dd>
<dt>Sends you back to</dt><dd id="redirect-host">{{.RedirectHost}}</dd>
<dt>For</dt><dd>the billing tools at {{.Resource}}</dd>
</dl>
<form method="post" action="authorize">
{{range .Hidden}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{end}}<label for="secret_key">Secret key</label>
<input id="secret_key" name="secret_key" type="password" required autocomplete="off" autocapitalize="none" spellcheck="false" aria-describedby="key-help"{{if .Error}} aria-invalid="true"{{end}}>
<p id="key-help" class="note">Paste a secret key (<code>sk_test_…</code> or <code>sk_live_…</code>). It chooses the account and the mode, test or live, the application will work in. The key is not given to the application.</p>
<fieldset>
<legend>Access</legend>
<label class="choice"><input type="radio" name="access" value="read" id="access-read"{{if not .WriteChecked}} checked{{end}}><span><strong>Read only</strong><br>List and read invoices, payments, subscriptions, meters, events, credit balances and entitlements.</span></label>
{{if .OfferWrite}}<label class="choice"><input type="radio" name="access" value="write" id="access-write"{{if .WriteChecked}} checked{{end}}><span><strong>Read and write</strong><br>Also create invoices, plans, meters, features, usage events, credit grants and debits, and entitlement grants.</span></label>
{{end}}<p class="note">No access moves funds, changes the settlement wallet or issues refunds.</p>
</fieldset>
<div class="actions">
<button type="submit" name="decision" value="allow" class="primary" id="allow">Allow</button>
<button type="submit" name="decision" value="deny" id="deny" formnovalidate>Deny</button>
</div>
</form>
</main>
</body>
</html>
{{define "error"}}<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Authorization failed · tollgate</title>
<style>` + consentCSS + `</style>
</head>
<body>
<main>
<h1>This authorization request cannot be completed</h1>
<p class="error" role="alert" id="error">{{.}}</p>
<p class="note">Return to the application and connect again. If this keeps happening, its developer should check its OAuth settings.</p>
</main>
</body>
</html>
{{end}}`))

type hiddenField struct{ Name, Value string }

type consentView struct {
	ClientName   string
	ClientOrigin string // the host publishing a metadata-document client
	RedirectHost string
	Resource     string
	Hidden       []hiddenField
	OfferWrite   bool
	WriteChecked bool
	Error        string
}

// pageHeaders sets the headers of every page /oauth/authorize answers with.
// The form may post to the page itself and be answered by a redirect to
// redirectURI's origin; when that origin cannot be written in CSP (an IPv6
// literal), form-action is left out rather than break the redirect.
func pageHeaders(w http.ResponseWriter, redirectURI string) {
	csp := consentCSP
	switch origin := cspOrigin(redirectURI); {
	case redirectURI == "":
		csp += "; form-action 'none'"
	case origin != "":
		csp += "; form-action 'self' " + origin
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// cspOrigin is the origin of a redirect URI as a CSP source, or "" when it
// cannot be written as one (an IPv6 literal).
func cspOrigin(redirectURI string) string {
	u, err := url.Parse(redirectURI)
	if err != nil || u.Host == "" || strings.ContainsAny(u.Host, "[]; ,'\"") {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// errorPage answers a request that cannot be redirected back to its client.
func (o *oauthServer) errorPage(w http.ResponseWriter, status int, message string) {
	pageHeaders(w, "")
	w.WriteHeader(status)
	_ = oauthPages.ExecuteTemplate(w, "error", message)
}
