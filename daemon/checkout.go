package daemon

import (
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/pricing"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// The hosted checkout pages: server-rendered, no external assets, no
// JavaScript needed in test mode (each magic wallet is a form).

//go:embed pages/checkout.html
var pagesFS embed.FS

func parseCheckoutTemplate() *template.Template {
	return template.Must(template.ParseFS(pagesFS, "pages/checkout.html"))
}

type fact struct{ Label, Value, ID string }

type tierRow struct{ Range, Unit string }

type walletButton struct{ Address, Label string }

// checkoutView is what the page shows.
type checkoutView struct {
	Found, Test, LiveUnavailable bool
	Title, Merchant, Description string
	Amount, Interval, Status     string
	Facts, Receipt               []fact
	Tiers                        []tierRow
	PricingCaption               string
	Wallets                      []walletButton
	PayURL, ExternalCustomerID   string
	Error                        string
	// Live is the wallet section of a live-mode page (checkout_live.go).
	Live *liveView
}

// checkoutPage renders GET /checkout/{id}: an invoice (with its receipt
// once paid) or a plan (with the subscription after checkout).
func (s *Server) checkoutPage(w http.ResponseWriter, r *http.Request) {
	s.renderCheckout(w, r, r.PathValue("id"), nil)
}

// renderCheckout renders the page of id, with the error of a failed
// payment when there is one, in the status that error calls for.
func (s *Server) renderCheckout(w http.ResponseWriter, r *http.Request, id string, payErr error) {
	v, err := s.checkoutData(r, id)
	if err == nil {
		err = s.liveSection(r, id, &v)
	}
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	status := http.StatusOK
	if !v.Found {
		status = http.StatusNotFound
	}
	if payErr != nil {
		e, ok := apperr.As(payErr)
		if !ok {
			s.log.ErrorContext(r.Context(), "checkout payment", "err", payErr, "request_id", requestID(r.Context()))
			e = apperr.New(apperr.Internal, "something went wrong; nothing was charged twice, try again")
		}
		v.Error, status = e.Message, statusOf(e)
	}
	checkoutHeaders(w, checkoutCSP(v))
	w.WriteHeader(status)
	_ = s.checkoutTmpl.Execute(w, v)
}

// staticCSP allows the page's own inline styles, images and form posts
// and nothing else: no scripts, no framing (clickjacking a pay button).
const staticCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; " +
	"base-uri 'none'; frame-ancestors 'none'"

// checkoutHeaders sets the headers of every checkout page.
func checkoutHeaders(w http.ResponseWriter, csp string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	// The page's URL names the invoice; links out must not carry it.
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// checkoutNotFound is the checkout page for an id that names nothing.
func (s *Server) checkoutNotFound(w http.ResponseWriter, _ *http.Request) {
	checkoutHeaders(w, staticCSP)
	w.WriteHeader(http.StatusNotFound)
	_ = s.checkoutTmpl.Execute(w, checkoutView{Title: "Not found"})
}

func statusOf(e *apperr.Error) int {
	if e.Status != 0 {
		return e.Status
	}
	if st := HTTPStatus(e.Code); st != 0 {
		return st
	}
	return http.StatusInternalServerError
}

func (s *Server) checkoutData(r *http.Request, id string) (checkoutView, error) {
	ctx := r.Context()
	if !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
		return checkoutView{Title: "Not found"}, nil
	}
	switch {
	case strings.HasPrefix(id, "inv_"):
		inv, ok, err := invoices.Get(ctx, s.db, id)
		if err != nil || !ok {
			return checkoutView{Title: "Not found"}, err
		}
		return s.invoiceView(r, inv)
	case strings.HasPrefix(id, "price_"):
		p, ok, err := plans.Get(ctx, s.db, id)
		if err != nil || !ok {
			return checkoutView{Title: "Not found"}, err
		}
		return s.planView(r, p)
	}
	return checkoutView{Title: "Not found"}, nil
}

// common fills what invoice and plan pages share.
func (s *Server) common(r *http.Request, sc tenant.Scope, id string, payable bool) (checkoutView, error) {
	name, err := auth.MerchantName(r.Context(), s.db, sc.MerchantID)
	if err != nil {
		return checkoutView{}, err
	}
	v := checkoutView{Found: true, Test: sc.Mode == tenant.Test, Merchant: name, PayURL: "/checkout/" + id + "/pay"}
	if !payable {
		return v, nil
	}
	if _, ok := s.money.railFor(sc.Mode); !ok {
		v.LiveUnavailable = true
		return v, nil
	}
	if v.Test {
		labels := []string{"Succeeds", "Insufficient funds", "Revoked after the first payment", "Fails twice after the first, then succeeds",
			"Fails transiently once", "Succeeds once, then every charge fails"}
		for i, a := range rail.MagicWallets() {
			v.Wallets = append(v.Wallets, walletButton{Address: a, Label: labels[i]})
		}
	}
	return v, nil
}

func (s *Server) invoiceView(r *http.Request, inv invoices.Invoice) (checkoutView, error) {
	v, err := s.common(r, inv.Scope(), inv.ID, inv.Status == invoices.StatusOpen)
	if err != nil {
		return v, err
	}
	v.Title, v.Description, v.Amount, v.Status = "Pay "+inv.Amount.USDC()+" USDC", inv.Description, inv.Amount.USDC(), inv.Status
	v.Facts = append(v.Facts, fact{"Invoice", inv.ID, "invoice-id"})
	if inv.InvoiceNumber != nil {
		v.Facts = append(v.Facts, fact{"Number", *inv.InvoiceNumber, "invoice-number"})
	}
	if inv.DueAt != nil {
		v.Facts = append(v.Facts, fact{"Due", day(*inv.DueAt), "due"})
	}
	if inv.PaymentID != nil {
		p, err := payments.Get(r.Context(), s.db, inv.Scope(), *inv.PaymentID)
		if err != nil {
			return v, err
		}
		v.Receipt = []fact{{"Payment", p.ID, "payment-id"}, {"Paid", stamp(*inv.PaidAt), "paid-at"},
			{"From", deref(p.Payer), "payer"}, {"Transaction", deref(p.TxHash), "tx-hash"}, {"Network", p.Network, "network"}}
	}
	return v, nil
}

func (s *Server) planView(r *http.Request, p plans.Plan) (checkoutView, error) {
	v, err := s.common(r, p.Scope(), p.ID, true)
	if err != nil {
		return v, err
	}
	v.Title, v.Description, v.Amount, v.Status = p.ProductName, p.ProductName, p.Amount.USDC(), "subscribe"
	v.Interval = "every " + intervalText(p)
	if p.ProductDesc != nil {
		v.Facts = append(v.Facts, fact{"About", *p.ProductDesc, "product-description"})
	}
	v.Facts = append(v.Facts, fact{"Plan", p.ID, "plan-id"})
	if p.UsageType == plans.Metered {
		v.Interval = "billed by usage " + v.Interval
		v.Facts = append(v.Facts, fact{"Cap", p.Amount.USDC() + " USDC per period at most", "cap"})
		if m, err := p.Pricing(); err == nil {
			v.Tiers, v.PricingCaption = pricingRows(m)
		}
	}
	v.ExternalCustomerID = r.URL.Query().Get("external_customer_id")
	if subID := r.URL.Query().Get("subscription"); subID != "" {
		x, ok, err := subscriptions.ByID(r.Context(), s.db, subID)
		if err != nil {
			return v, err
		}
		if ok && x.PlanID == p.ID {
			v.Status, v.Wallets = x.Status, nil
			v.Receipt = []fact{{"Subscription", x.ID, "subscription-id"}, {"Status", x.Status, "subscription-status"}}
			if x.Live() && x.CurrentPeriodEnd != nil {
				v.Receipt = append(v.Receipt, fact{"Next charge", stamp(*x.CurrentPeriodEnd), "next-charge"})
			}
			if x.LatestPaymentID != nil {
				v.Receipt = append(v.Receipt, fact{"Payment", *x.LatestPaymentID, "payment-id"})
			}
		}
	}
	return v, nil
}

func intervalText(p plans.Plan) string {
	switch p.Interval {
	case "week":
		return "week"
	case "biweekly":
		return "two weeks"
	case "month":
		return "month"
	case "year":
		return "year"
	}
	if p.IntervalDays != nil {
		return fmt.Sprintf("%d days", *p.IntervalDays)
	}
	return p.Interval
}

// pricingRows describes a pricing model as table rows.
func pricingRows(m pricing.Model) ([]tierRow, string) {
	usdc := func(a money.Amount) string { return a.USDC() + " USDC" }
	switch m.Kind {
	case pricing.Tiered:
		var rows []tierRow
		from := int64(1)
		for _, t := range m.Tiers {
			rng := fmt.Sprintf("%d and up", from)
			if t.UpTo != nil {
				rng = fmt.Sprintf("%d–%d", from, *t.UpTo)
				from = *t.UpTo + 1
			}
			rows = append(rows, tierRow{rng, usdc(t.UnitAmount)})
		}
		caption := "Graduated: each unit is priced in its own tier."
		if m.Mode == pricing.Volume {
			caption = "Volume: every unit is priced at the tier the total falls in."
		}
		return rows, caption
	case pricing.PerUnit:
		return []tierRow{{fmt.Sprintf("beyond %d included", m.IncludedUnits), usdc(m.UnitAmount)}}, "Per unit."
	case pricing.Package:
		return []tierRow{{fmt.Sprintf("each package of %d", m.PackageSize), usdc(m.UnitAmount)}}, "Per package."
	case pricing.Flat:
		return []tierRow{{"any usage", usdc(m.Amount) + " per period"}}, "Flat."
	}
	return nil, ""
}

func day(t time.Time) string   { return t.UTC().Format("2 Jan 2006") }
func stamp(t time.Time) string { return t.UTC().Format("2 Jan 2006 15:04 UTC") }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
