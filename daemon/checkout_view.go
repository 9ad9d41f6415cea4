package daemon

import (
	"strconv"
	"strings"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/checkout"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// checkoutView is what the page template shows. Kind is "invoice" or
// "plan"; a page without an object (not found, unavailable) leaves it "".
type checkoutView struct {
	Kind      string
	Title     string // the document's title
	Merchant  string
	Test      bool
	Eyebrow   string // above the heading: who asks to be paid
	Heading   string // the page's one h1
	HeadingID string
	Lead      string // a plan's product description
	Amount    string // "12.34 USDC"
	UpTo      bool   // the amount is a metered plan's cap
	Per       string // "per month"
	// Trial says a plan's free trial plainly: "14-day free trial, then
	// 9.00 USDC per month".
	Trial string
	// Status is the invoice's or the subscription's status (the pill);
	// StatusText is how it reads.
	Status, StatusText string
	Error              *payError
	Notice             *notice
	Paragraphs         []string
	Facts              []fact
	Pricing            *pricingView
	ReceiptTitle       string
	Receipt            []fact
	Wallets            []walletButton
	PayURL             string
	ExternalCustomerID string
	// Live is the wallet section of a live-mode page (checkout_live.go).
	Live *liveView
	// Coupon is a test-mode plan page's coupon form (checkout_coupon.go).
	Coupon *couponView
}

// fact is one row of a details list; Datetime (RFC 3339) makes it a
// <time>, Code sets it in monospace (ids, addresses, hashes).
type fact struct {
	Label, Value, ID string
	Datetime         string
	Code             bool
}

type notice struct {
	ID, Text string
	Done     bool // a success (paid, subscribed), announced politely
}

// payError is a failed payment as the page explains it: Message is the API
// error's message (payment_failed names the rail's reason).
type payError struct{ Title, Message, Hint string }

type pricingView struct {
	Rule, UnitsHeader, Included, Cap string
	Tiers                            []tierRow
}

type tierRow struct{ Range, Unit string }

type walletButton struct{ Address, Label string }

// walletLabel says what a magic wallet does.
func walletLabel(address string) string {
	switch address {
	case rail.WalletSucceeds:
		return "Pays successfully"
	case rail.WalletInsufficient:
		return "Declined: insufficient funds"
	case rail.WalletRevokesAfter1st:
		return "Pays, then revokes its authorization before the next charge"
	case rail.WalletFailsTwiceAfter1:
		return "Pays, then the next two charges fail and the third succeeds"
	case rail.WalletTransientOnce:
		return "Pays after a transient network failure"
	case rail.WalletFailsAfter1st:
		return "Pays, then every later charge fails"
	}
	return "Test wallet"
}

func (s *Server) invoiceView(pg checkout.InvoicePage) checkoutView {
	v := checkoutView{Kind: "invoice", Merchant: pg.Merchant, Test: pg.Mode == tenant.Test,
		Title: "Pay " + usdc(pg.Amount) + merchantSuffix(" to ", pg.Merchant), Eyebrow: "Invoice" + merchantSuffix(" from ", pg.Merchant),
		Heading: pg.Description, HeadingID: "description", Amount: usdc(pg.Amount),
		Status: pg.Status, StatusText: pg.Status, PayURL: s.payURL(pg.ID)}
	if pg.InvoiceNumber != nil && *pg.InvoiceNumber != "" {
		v.Facts = append(v.Facts, fact{Label: "Invoice number", Value: *pg.InvoiceNumber, ID: "invoice-number"})
	}
	if pg.DueAt != nil {
		v.Facts = append(v.Facts, timeFact("Due", "due", *pg.DueAt, day))
	}
	if pg.Memo != nil && *pg.Memo != "" {
		v.Facts = append(v.Facts, fact{Label: "Memo", Value: *pg.Memo, ID: "memo"})
	}
	v.Facts = append(v.Facts, fact{Label: "Invoice ID", Value: pg.ID, ID: "invoice-id", Code: true})
	switch pg.Status {
	case invoices.StatusPaid:
		v.Title = "Receipt: " + usdc(pg.Amount) + merchantSuffix(" paid to ", pg.Merchant)
		v.Notice = &notice{ID: "paid-notice", Text: "Paid. Thank you! Keep this receipt for your records.", Done: true}
		v.ReceiptTitle = "Receipt"
		if pg.PaymentID != nil {
			v.Receipt = append(v.Receipt, fact{Label: "Payment", Value: *pg.PaymentID, ID: "payment-id", Code: true})
		}
		v.Receipt = append(v.Receipt, fact{Label: "Amount paid", Value: usdc(pg.Amount), ID: "amount-paid"})
		if pg.PaidAt != nil {
			v.Receipt = append(v.Receipt, timeFact("Paid on", "paid-at", *pg.PaidAt, stamp))
		}
		if pg.Payer != nil {
			v.Receipt = append(v.Receipt, fact{Label: "From wallet", Value: *pg.Payer, ID: "payer", Code: true})
		}
		if pg.TxHash != nil {
			v.Receipt = append(v.Receipt, fact{Label: "Transaction", Value: *pg.TxHash, ID: "tx-hash", Code: true})
		}
		if pg.Network != nil {
			v.Receipt = append(v.Receipt, fact{Label: "Network", Value: networkText(*pg.Network), ID: "network"})
		}
	case invoices.StatusVoid:
		text := "This invoice was voided and can no longer be paid."
		if pg.VoidedAt != nil {
			text = "This invoice was voided on " + day(*pg.VoidedAt) + " and can no longer be paid."
		}
		v.Notice = &notice{ID: "void-notice", Text: text}
	case invoices.StatusOpen:
		s.offerPayment(&v, pg.Mode)
	}
	return v
}

// oneTimeWallets are the test wallets whose behaviour shows on a single
// payment; the others differ only in later charges, so only a plan's page
// offers them.
var oneTimeWallets = []string{rail.WalletSucceeds, rail.WalletInsufficient, rail.WalletTransientOnce}

func (s *Server) planView(pg checkout.PlanPage, ext string) checkoutView {
	period := periodText(pg.Interval, pg.IntervalDays)
	v := checkoutView{Kind: "plan", Merchant: pg.Merchant, Test: pg.Mode == tenant.Test,
		Title: "Subscribe to " + pg.ProductName, Eyebrow: "Subscription" + merchantSuffix(" from ", pg.Merchant),
		Heading: pg.ProductName, HeadingID: "product-name", Amount: usdc(pg.Amount), Per: "per " + period,
		PayURL: s.payURL(pg.ID)}
	if fields.TextProblem(ext) == "" {
		v.ExternalCustomerID = ext
	}
	if pg.ProductDesc != nil {
		v.Lead = *pg.ProductDesc
	}
	unit := "unit"
	if pg.UnitLabel != nil && *pg.UnitLabel != "" {
		unit = *pg.UnitLabel
	}
	if pg.UsageType == plans.Metered {
		v.UpTo = true
		meter := "usage"
		if pg.MeterName != nil && *pg.MeterName != "" {
			meter = "usage of " + *pg.MeterName
		}
		v.Facts = append(v.Facts,
			fact{Label: "Billing", ID: "usage-type", Value: "Metered: your " + meter + " is billed at the end of every " + period + ". Nothing is charged when you subscribe."},
			fact{Label: "Cap", ID: "cap", Value: "At most " + usdc(pg.Amount) + " per " + period})
		if m, err := pg.Pricing(); err == nil {
			v.Pricing = pricingOf(m, unit, period, pg.Amount)
		}
	} else {
		v.Facts = append(v.Facts, fact{Label: "Billing", ID: "usage-type",
			Value: "Licensed: a fixed " + usdc(pg.Amount) + ", charged when you subscribe and then every " + period + "."})
	}
	trialTerms(&v, pg, period)
	v.Facts = append(v.Facts, fact{Label: "Plan ID", Value: pg.ID, ID: "plan-id", Code: true})
	if x := pg.Subscription; x != nil {
		subscriptionReceipt(&v, pg, x)
		return v
	}
	s.offerPayment(&v, pg.Mode)
	return v
}

// subscriptionReceipt shows the subscription a customer came back with.
func subscriptionReceipt(v *checkoutView, pg checkout.PlanPage, x *checkout.PageSubscription) {
	v.Status, v.StatusText = x.Status, statusText(x.Status)
	v.ReceiptTitle = "Your subscription"
	v.Receipt = append(v.Receipt, fact{Label: "Subscription", Value: x.ID, ID: "subscription-id", Code: true},
		fact{Label: "Status", Value: statusText(x.Status), ID: "subscription-status"})
	if x.CurrentPeriodStart != nil && x.CurrentPeriodEnd != nil {
		v.Receipt = append(v.Receipt, fact{Label: "Current period", ID: "current-period",
			Value: day(*x.CurrentPeriodStart) + " – " + day(*x.CurrentPeriodEnd)})
	}
	live := x.Status == subscriptions.Trialing || x.Status == subscriptions.Active || x.Status == subscriptions.PastDue
	switch {
	case live && x.CancelAt != nil:
		v.Receipt = append(v.Receipt, timeFact("Ends on", "cancel-at", *x.CancelAt, day))
	case x.Status == subscriptions.PastDue && x.NextActionAt != nil:
		v.Receipt = append(v.Receipt, timeFact("Next attempt", "next-charge", *x.NextActionAt, stamp))
	case (x.Status == subscriptions.Active || x.Status == subscriptions.Trialing) && x.CurrentPeriodEnd != nil:
		// A trial's period is the trial: the first charge is at its end.
		f := timeFact("Next charge", "next-charge", *x.CurrentPeriodEnd, day)
		if pg.UsageType == plans.Metered {
			f.Value = "This period's usage, up to " + usdc(pg.Amount) + ", after " + f.Value
		} else {
			f.Value = usdc(pg.Amount) + " on " + f.Value
		}
		f.Datetime = ""
		v.Receipt = append(v.Receipt, f)
	}
	if x.EndedAt != nil {
		v.Receipt = append(v.Receipt, timeFact("Ended on", "ended-at", *x.EndedAt, day))
	}
	if x.LatestPaymentID != nil {
		v.Receipt = append(v.Receipt, fact{Label: "Last payment", Value: *x.LatestPaymentID, ID: "payment-id", Code: true})
		if x.LatestAmount != nil {
			v.Receipt = append(v.Receipt, fact{Label: "Amount paid", Value: usdc(*x.LatestAmount), ID: "amount-paid"})
		}
		if x.LatestTxHash != nil {
			v.Receipt = append(v.Receipt, fact{Label: "Transaction", Value: *x.LatestTxHash, ID: "tx-hash", Code: true})
		}
	}
	switch x.Status {
	case subscriptions.Trialing:
		v.Notice = &notice{ID: "trial-notice", Text: "Your free trial has started: nothing was charged. The first charge is on " +
			day(*x.CurrentPeriodEnd) + ", when the trial ends.", Done: true}
	case subscriptions.Active:
		v.Notice = &notice{ID: "subscribed-notice", Text: "You are subscribed. Thank you!", Done: true}
	case subscriptions.PastDue:
		v.Notice = &notice{ID: "past-due-notice", Text: "The last charge failed. It will be tried again; your access continues meanwhile."}
	default:
		v.Notice = &notice{ID: "ended-notice", Text: "This subscription has ended."}
	}
}

// offerPayment adds what pays the page: in test mode the magic wallets; in
// live mode, until the on-chain rail is configured, a notice and nothing to
// press.
func (s *Server) offerPayment(v *checkoutView, mode tenant.Mode) {
	if _, ok := s.money.railFor(mode); !ok {
		v.Notice = &notice{ID: "unavailable", Text: "Payment is not available yet: this service has no on-chain settlement configured, so nothing can be paid here. Please contact the merchant."}
		return
	}
	if mode != tenant.Test {
		// The live section (checkout_live.go) offers the wallet.
		return
	}
	wallets := rail.MagicWallets()
	if v.Kind == "invoice" {
		wallets = oneTimeWallets
	}
	for _, a := range wallets {
		v.Wallets = append(v.Wallets, walletButton{Address: a, Label: walletLabel(a)})
	}
}

// paymentError explains a failed POST …/pay to the customer in words: the
// API's codes, its messages (which name ids and flags) and the rail's
// reasons are for the merchant, who gets them as JSON.
func paymentError(e *apperr.Error) *payError {
	pe := &payError{Title: "The payment could not be completed", Message: "Please try again. If it keeps failing, contact the merchant."}
	switch e.Code {
	case apperr.PaymentFailed:
		pe.Title, pe.Message, pe.Hint = "Payment failed", declineText(e.Message), "Nothing was charged. You can try again, or with another wallet."
		switch {
		case strings.Contains(e.Message, "awaits confirmation"):
			pe.Title, pe.Hint = "Payment submitted", ""
			pe.Message = "Your payment was sent and is waiting for confirmation on the network. There is no need to pay again: this page shows the receipt once it is confirmed."
		case strings.Contains(e.Message, "not available") || strings.Contains(e.Message, "cannot be paid"):
			pe.Title, pe.Hint = "Payment is not available", ""
			pe.Message = "Payments cannot be taken here yet. Please contact the merchant."
		}
	case apperr.InvoiceNotOpen:
		pe.Title, pe.Message = "This invoice cannot be paid", "It has already been paid, or the merchant has cancelled it."
	case apperr.InvalidCoupon:
		pe.Title, pe.Message = "This coupon cannot be used", "It is unknown, expired, used up, or not for this plan. Nothing was charged: pay without it, or try another code."
	case apperr.AlreadySubscribed:
		pe.Title, pe.Message = "Already subscribed", "You already have an active subscription to this plan, so there is nothing to pay."
	case apperr.InvalidRequest:
		pe.Title, pe.Message = "The payment form was not valid", "Please reload the page and choose a wallet again."
	case apperr.ServiceUnavailable:
		pe.Title, pe.Message = "Checkout is temporarily unavailable", "Please try again in a minute. Paying again never charges twice."
	}
	return pe
}

// declineText says why the rail declined a payment, from the reason the
// API's message names.
func declineText(message string) string {
	switch {
	case strings.Contains(message, rail.InsufficientFunds):
		return "The wallet does not have enough USDC for this payment."
	case strings.Contains(message, rail.AuthorizationRevoked):
		return "The wallet has withdrawn its authorization to pay this merchant."
	}
	return "The wallet declined the payment."
}

// isText reports whether s is valid UTF-8 without NUL: what may be echoed
// into a page or passed on to the database.

func statusText(st string) string {
	switch st {
	case subscriptions.PastDue:
		return "past due"
	case subscriptions.Trialing:
		return "free trial"
	}
	return st
}

func networkText(n string) string {
	if n == "test" {
		return "test (simulated rail)"
	}
	return n
}

// periodText names one billing period: "month", "two weeks", "30 days".
func periodText(interval string, days *int) string {
	switch interval {
	case "biweekly":
		return "two weeks"
	case "week", "month", "year":
		return interval
	}
	if days != nil {
		if *days == 1 {
			return "day"
		}
		return strconv.Itoa(*days) + " days"
	}
	return interval
}

func merchantSuffix(joiner, merchant string) string {
	if merchant == "" {
		return ""
	}
	return joiner + merchant
}

func usdc(a money.Amount) string { return a.USDC() + " USDC" }

func day(t time.Time) string   { return t.UTC().Format("2 Jan 2006") }
func stamp(t time.Time) string { return t.UTC().Format("2 Jan 2006, 15:04 UTC") }

func timeFact(label, id string, t time.Time, format func(time.Time) string) fact {
	return fact{Label: label, ID: id, Value: format(t), Datetime: t.UTC().Format(time.RFC3339)}
}
