package daemon

import (
	"html/template"
	"net/http"

	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// checkoutTmpl is the hosted checkout page. For now it shows the invoice;
// paying comes with the checkout issue.
var checkoutTmpl = template.Must(template.New("checkout").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{if .Found}}Pay {{.Amount}} USDC{{else}}Invoice not found{{end}} · tollgate</title>
<style>
body{font-family:system-ui,sans-serif;background:#f5f6f8;color:#1b1d21;margin:0;display:flex;justify-content:center;padding:4rem 1rem}
main{background:#fff;border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.08);padding:2rem;max-width:28rem;width:100%}
.amount{font-size:2.2rem;font-weight:600;margin:.4rem 0}
.status{display:inline-block;padding:.15rem .6rem;border-radius:999px;background:#e8f0fe;color:#1a4fb4;font-size:.85rem}
.test{background:#fff4d6;color:#7a5200;padding:.4rem .8rem;border-radius:6px;font-size:.85rem;margin-bottom:1rem}
dl{display:grid;grid-template-columns:auto 1fr;gap:.3rem 1rem;font-size:.9rem;color:#555}
</style>
</head>
<body>
<main>
{{if .Found}}
{{if .Test}}<div class="test" id="test-mode">Test mode: no real funds move.</div>{{end}}
<div id="description">{{.Description}}</div>
<div class="amount" id="amount">{{.Amount}} USDC</div>
<span class="status" id="status">{{.Status}}</span>
<dl>
<dt>Invoice</dt><dd id="invoice-id">{{.ID}}</dd>
{{if .Number}}<dt>Number</dt><dd>{{.Number}}</dd>{{end}}
{{if .DueAt}}<dt>Due</dt><dd>{{.DueAt}}</dd>{{end}}
</dl>
{{else}}
<h1>Invoice not found</h1>
<p>This checkout link is not valid.</p>
{{end}}
</main>
</body>
</html>
`))

type checkoutView struct {
	Found       bool
	Test        bool
	ID          string
	Amount      string
	Description string
	Status      string
	Number      string
	DueAt       string
}

// checkoutCSP allows the page's own inline styles, images and form posts
// and nothing else: no scripts, no framing (clickjacking a pay button).
const checkoutCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; " +
	"base-uri 'none'; frame-ancestors 'none'"

// checkoutHeaders sets the headers of every checkout page.
func checkoutHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", checkoutCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// The page's URL names the invoice; links out must not carry it.
	h.Set("Referrer-Policy", "no-referrer")
}

// checkoutPage renders the public checkout page of an invoice.
func (s *Server) checkoutPage(w http.ResponseWriter, r *http.Request) {
	inv, ok, err := invoices.Get(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	if !ok {
		s.checkoutNotFound(w, r)
		return
	}
	checkoutHeaders(w)
	v := checkoutView{Found: true, Test: inv.Mode == tenant.Test, ID: inv.ID, Amount: inv.Amount.USDC(),
		Description: inv.Description, Status: inv.Status}
	if inv.InvoiceNumber != nil {
		v.Number = *inv.InvoiceNumber
	}
	if inv.DueAt != nil {
		v.DueAt = inv.DueAt.UTC().Format("2 Jan 2006")
	}
	_ = checkoutTmpl.Execute(w, v)
}

// checkoutNotFound is the checkout page for an id that names no invoice.
func (s *Server) checkoutNotFound(w http.ResponseWriter, _ *http.Request) {
	checkoutHeaders(w)
	w.WriteHeader(http.StatusNotFound)
	_ = checkoutTmpl.Execute(w, checkoutView{})
}
