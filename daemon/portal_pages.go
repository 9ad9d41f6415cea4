package daemon

import (
	"net/http"
	"strings"
	"time"

	"github.com/tollgatehq/tollgate/daemon/web"
	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/portal"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// The portal's read pages: the overview, payments and a receipt (usage is
// portal_usage.go's).

// overviewView is the overview page's body.
type overviewView struct {
	Subscriptions []subscriptionView
	Balance       string
	HasCredits    bool
	Ledger        []ledgerRow
	Features      []featureRow
	Payments      []paymentRow
	MorePayments  bool
	PaymentsURL   string
}

type subscriptionView struct {
	ID, Product, PlanID, Status, StatusText string
	Price                                   string // "12.00 USDC per month", "up to 50.00 USDC per month"
	Payer                                   string
	Period                                  string
	EndsOn                                  string // set to cancel at the period's end
	Ended                                   string
	Next                                    *chargeView
	Live                                    bool
	// Discount is the subscription's discount ("" without one).
	Discount string
	// Actions: the forms' addresses; empty when the action does not apply.
	CancelURL, UndoURL, ChangeURL, PayerURL string
	Plans                                   []planOption
	Wallets                                 []walletButton
	// DiscountURL applies a coupon code.
	DiscountURL string
	// Licensed subscriptions may switch at once (prorated).
	CanSwitchNow bool
	// Trial is when a free trial ends ("" without one).
	Trial string
	// A pending change: the plan the next period starts on, and when.
	Pending, PendingAt, KeepURL string
}

type chargeView struct {
	Amount, At, Note string
	Lines            []lineRow
}

type lineRow struct{ Description, Quantity, Amount string }

type planOption struct{ ID, Label string }

type ledgerRow struct{ When, What, Amount string }

type featureRow struct{ Name, Key, Status, Limit string }

type paymentRow struct{ ID, When, Amount, Status, What, URL string }

func (s *Server) portalOverview(w http.ResponseWriter, r *http.Request) {
	pr, ok := s.openPortal(w, r)
	if !ok {
		return
	}
	s.showOverview(w, r, pr, http.StatusOK, portalNotice(r.URL.Query().Get("done")))
}

// showOverview renders the overview with status and notice (nil for
// none): after a GET, or again, with an error, after a form the customer
// can correct and send again.
func (s *Server) showOverview(w http.ResponseWriter, r *http.Request, pr portalRequest, status int, n *web.Notice) {
	v, err := s.overview(r, pr)
	if err != nil {
		s.portalFailure(w, r, err)
		return
	}
	f := pr.frame("Your account", "Overview")
	f.Notice = n
	f.Body = v
	s.renderPortal(w, r, status, portalOverviewPage, f)
}

// overview reads what the overview shows: bounded reads only (a page of
// subscriptions, the newest ledger entries and payments).
func (s *Server) overview(r *http.Request, pr portalRequest) (overviewView, error) {
	ctx := r.Context()
	subs, err := portal.Subscriptions(ctx, s.db, pr.Open)
	if err != nil {
		return overviewView{}, err
	}
	plans, err := portal.Plans(ctx, s.db, pr.Open)
	if err != nil {
		return overviewView{}, err
	}
	v := overviewView{PaymentsURL: pr.base + "/payments"}
	for _, x := range subs {
		sv := s.portalSubscription(pr, x, plans)
		if x.Live() {
			if up, err := subscriptions.UpcomingOf(ctx, s.db, x.Subscription, pr.Now); err == nil {
				sv.Next = chargeOf(up, x.Metered() || x.Status == subscriptions.PastDue)
			}
		}
		v.Subscriptions = append(v.Subscriptions, sv)
	}
	b, err := credits.GetBalance(ctx, s.db, pr.Scope(), pr.CustomerID, pr.Now)
	if err != nil {
		return overviewView{}, err
	}
	v.HasCredits, v.Balance = b.AccountID != "", creditAmount(b.Balance)
	if v.Ledger, err = s.ledgerRows(ctx, pr.Open); err != nil {
		return overviewView{}, err
	}
	if v.Features, err = s.featureRows(ctx, pr.Open); err != nil {
		return overviewView{}, err
	}
	ps, err := portal.Payments(ctx, s.db, pr.Open, page.Params{Limit: portal.RecentPayments})
	if err != nil {
		return overviewView{}, err
	}
	for _, p := range ps.Items {
		v.Payments = append(v.Payments, paymentRowOf(pr, p))
	}
	v.MorePayments = ps.HasMore
	return v, nil
}

func (s *Server) portalSubscription(pr portalRequest, x portal.Subscription, plans []portal.Plan) subscriptionView {
	sv := subscriptionFacts(x)
	if !x.Live() {
		return sv
	}
	act := pr.base + "/subscriptions/" + x.ID
	sv.DiscountURL = act + "/discount"
	if x.CancelAt != nil {
		sv.EndsOn, sv.UndoURL = day(*x.CancelAt), act+"/undo-cancel"
	} else {
		sv.CancelURL = act + "/cancel"
	}
	if x.PendingPlanID != nil && x.PendingChangeAt != nil {
		sv.Pending, sv.PendingAt, sv.KeepURL = planName(plans, *x.PendingPlanID), day(*x.PendingChangeAt), act+"/change"
	}
	for _, p := range plans {
		if p.ID != x.PlanID && (x.UsageType == nil || p.UsageType == *x.UsageType) {
			sv.Plans = append(sv.Plans, planOption{ID: p.ID, Label: p.ProductName + ": " + usdc(p.Amount) + " per " + periodText(p.Interval, p.IntervalDays)})
		}
	}
	if len(sv.Plans) > 0 {
		sv.ChangeURL, sv.CanSwitchNow = act+"/change", !x.Metered()
	}
	if pr.Mode == tenant.Test {
		sv.PayerURL = act + "/payer"
		for _, a := range rail.MagicWallets() {
			if a != sv.Payer {
				sv.Wallets = append(sv.Wallets, walletButton{Address: a, Label: walletLabel(a)})
			}
		}
	}
	return sv
}

// chargeOf shows an upcoming charge with its lines so far.
// A licensed plan's renewal is charged when its period starts; usage and
// what dunning collects, when theirs ends.
func chargeOf(up wire.Payment, metered bool) *chargeView {
	c := &chargeView{Amount: wireUSDC(up.Amount)}
	at := up.PeriodStart
	if metered {
		at = up.PeriodEnd
	}
	if at != nil {
		if t, err := time.Parse(time.RFC3339, *at); err == nil {
			c.At = day(t)
		}
	}
	for _, l := range up.Lines {
		row := lineRow{Description: l.Description, Amount: wireUSDC(l.Amount)}
		if l.Quantity != nil {
			row.Quantity = *l.Quantity
		}
		c.Lines = append(c.Lines, row)
	}
	return c
}

// wireUSDC shows a wire amount (base units as text) in USDC. A line's
// amount is negative when it takes off (a discount, a proration credit).
func wireUSDC(s string) string {
	digits, neg := strings.CutPrefix(s, "-")
	a, err := money.Parse(digits)
	if err != nil {
		return s
	}
	if neg {
		a = -a
	}
	return usdc(a)
}

func paymentRowOf(pr portalRequest, p payments.Payment) paymentRow {
	row := paymentRow{ID: p.ID, When: day(p.CreatedAt), Amount: usdc(p.Amount), Status: p.Status, URL: pr.base + "/payments/" + p.ID}
	switch {
	case p.SubscriptionID != nil:
		row.What = "Subscription " + *p.SubscriptionID
	case p.InvoiceID != nil:
		row.What = "Invoice " + *p.InvoiceID
	}
	return row
}

// paymentsView is the payments page's body: one page, newest first.
type paymentsView struct {
	Payments []paymentRow
	NextURL  string
}

func (s *Server) portalPayments(w http.ResponseWriter, r *http.Request) {
	pr, ok := s.openPortal(w, r)
	if !ok {
		return
	}
	params := page.Params{Limit: portal.PaymentsPerPage}
	if b := r.URL.Query().Get("before"); b != "" {
		c, err := page.ParseCursor(b)
		if err != nil {
			s.portalMissing(w, r)
			return
		}
		params.Before = &c
	}
	ps, err := portal.Payments(r.Context(), s.db, pr.Open, params)
	if err != nil {
		s.portalFailure(w, r, err)
		return
	}
	v := paymentsView{}
	for _, p := range ps.Items {
		v.Payments = append(v.Payments, paymentRowOf(pr, p))
	}
	if ps.Next != nil {
		v.NextURL = pr.base + "/payments?before=" + ps.Next.String()
	}
	f := pr.frame("Payments", "Payments")
	f.Body = v
	s.renderPortal(w, r, http.StatusOK, portalPaymentsPage, f)
}

// receiptView is a payment's receipt.
type receiptView struct {
	Merchant string
	Facts    []fact
	Lines    []lineRow
	Amount   string
	Refunded string
}

func (s *Server) portalReceipt(w http.ResponseWriter, r *http.Request) {
	pr, ok := s.openPortal(w, r)
	if !ok {
		return
	}
	p, err := pr.Payment(r.Context(), s.db, r.PathValue("id"))
	if err != nil {
		s.portalFailure(w, r, err)
		return
	}
	v := receiptView{Merchant: merchantOr(pr.Merchant), Amount: usdc(p.Amount)}
	v.Facts = append(v.Facts, fact{Label: "Receipt for payment", Value: p.ID, ID: "payment-id", Code: true})
	if p.ConfirmedAt != nil {
		v.Facts = append(v.Facts, timeFact("Paid on", "paid-at", *p.ConfirmedAt, stamp))
	}
	v.Facts = append(v.Facts, fact{Label: "Status", Value: p.Status, ID: "payment-status"})
	if p.SubscriptionID != nil {
		v.Facts = append(v.Facts, fact{Label: "Subscription", Value: *p.SubscriptionID, ID: "subscription-id", Code: true})
	}
	if p.InvoiceID != nil {
		v.Facts = append(v.Facts, fact{Label: "Invoice", Value: *p.InvoiceID, ID: "invoice-id", Code: true})
	}
	if p.PeriodStart != nil && p.PeriodEnd != nil {
		v.Facts = append(v.Facts, fact{Label: "Period", Value: day(*p.PeriodStart) + " – " + day(*p.PeriodEnd), ID: "period"})
	}
	if p.Payer != nil {
		v.Facts = append(v.Facts, fact{Label: "From wallet", Value: *p.Payer, ID: "payer", Code: true})
	}
	if p.Payee != nil {
		v.Facts = append(v.Facts, fact{Label: "To wallet", Value: *p.Payee, ID: "payee", Code: true})
	}
	if p.TxHash != nil {
		v.Facts = append(v.Facts, fact{Label: "Transaction", Value: *p.TxHash, ID: "tx-hash", Code: true})
	}
	v.Facts = append(v.Facts, fact{Label: "Network", Value: networkText(p.Network), ID: "network"})
	for _, l := range wire.StoredLines(p.Lines) {
		row := lineRow{Description: l.Description, Amount: wireUSDC(l.Amount)}
		if l.Quantity != nil {
			row.Quantity = *l.Quantity
		}
		v.Lines = append(v.Lines, row)
	}
	if p.AmountRefunded > 0 {
		v.Refunded = usdc(p.AmountRefunded)
	}
	f := pr.frame("Receipt "+p.ID, "Payments")
	f.Body = v
	s.renderPortal(w, r, http.StatusOK, portalReceiptPage, f)
}

// portalNotice is the notice after an action (?done=…): fixed words, so
// nothing of the request is echoed.
func portalNotice(done string) *web.Notice {
	text, ok := map[string]string{
		"canceled":   "Your subscription will end at the end of the current period.",
		"resumed":    "Your subscription will continue: the cancellation was undone.",
		"changed":    "Your plan was changed.",
		"scheduled":  "Your plan will change at the end of the current period.",
		"discounted": "The coupon was applied: its discount is shown on your subscription.",
		"payer":      "The paying wallet was replaced.",
		"kept":       "You stay on your current plan: the pending change was dropped.",
	}[done]
	if !ok {
		return nil
	}
	return &web.Notice{ID: "done-notice", Text: text, Done: true}
}
