package daemon

import (
	"context"
	"embed"
	"html/template"
	"math/big"
	"net/http"
	"net/url"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgatehq/tollgate/daemon/web"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chainrail"
	"github.com/tollgatehq/tollgate/internal/checkout"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wallet"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Live checkout: the page's section asks the payer's EIP-1193 wallet to
// sign (eth_signTypedData_v4) what GET /checkout/{id}/authorization
// returns, and posts the signature to POST /checkout/{id}/authorization.
// Its one script is inline, allowed by its hash alone.

//go:embed pages/checkout_live.html pages/checkout_live.js
var liveFS embed.FS

// liveScript is the live section's script and its CSP source
// expression ('sha256-…').
func liveScript() (template.JS, string) {
	b, err := liveFS.ReadFile("pages/checkout_live.js")
	if err != nil {
		panic(err)
	}
	return template.JS(b), web.Hash(b)
}

// withLiveSection adds the live section's template to the page's.
func withLiveSection(t *template.Template) *template.Template {
	return template.Must(t.ParseFS(liveFS, "pages/checkout_live.html"))
}

// liveView is what the live section shows. Kind is "invoice", "plan",
// "permit" (a subscription's page: renew the spending permit) or "revoke"
// (stop paying); Unavailable, when set, is all it shows: why nothing can be
// paid here, with nothing to press.
type liveView struct {
	Kind, AuthorizationURL, Network, TxHash, Failure, ExternalCustomerID, Cap string
	ChainID, Confirmations                                                    uint64
	Pending                                                                   bool
	Script                                                                    template.JS
	Unavailable                                                               string
	// A plan's permit, shown before anything is signed: PermitTotal USDC,
	// PermitPeriods periods of at most Cap USDC, each Period long.
	PermitTotal, Period string
	PermitPeriods       uint64
	// A subscription's standing: what the permit still allows, whether
	// its last charge found it used up, where to stop paying.
	Allowance, RevokeURL string
	PermitUsedUp, Ended  bool
	// Change marks a plan's section as a subscription's plan change.
	Change bool
	// Coupon is the code a plan's page applied (couponSection): the script
	// submits the activation with it.
	Coupon string
}

// cannotBePaid is what a customer reads on a live page the merchant cannot
// be paid through yet: no operator instructions, just the fact.
const (
	noWalletText      = "This merchant cannot be paid yet: they have not set up a wallet to receive payments. Nothing can be paid here for now; please contact the merchant."
	noPlanManagerText = "Subscriptions cannot be paid here yet: this service is not set up for recurring payments on chain. Please contact the merchant."
)

// liveSection fills the live section of a live-mode page when a chain is
// configured: the wallet button on an open invoice or a plan, or the state
// of a payment or activation awaiting confirmations.
func (s *Server) liveSection(r *http.Request, id string, v *checkoutView) error {
	if s.onchain == nil || v.Kind == "" || v.Test {
		return nil
	}
	ctx := r.Context()
	lv := &liveView{AuthorizationURL: "/checkout/" + url.PathEscape(id) + "/authorization", Network: s.onchain.Network(),
		ChainID: s.onchain.ChainID(), Confirmations: s.onchain.Confirmations(), Script: s.checkout.liveScript}
	switch {
	case strings.HasPrefix(id, "inv_"):
		// The page shows the invoice as the view read it; a payment that
		// lands between that read and these must still leave the page
		// reloading itself into its receipt, never a dead "open" page.
		if v.Status != invoices.StatusOpen {
			return nil
		}
		inv, ok, err := invoices.Get(ctx, s.db, id)
		if err != nil || !ok {
			return err
		}
		lv.Kind = "invoice"
		if inv.Status != invoices.StatusOpen {
			lv.Pending = true
			break
		}
		if _, ok, err := s.payeeOf(ctx, inv.Scope(), inv.Payee); err != nil || !ok {
			lv.Unavailable = noWalletText
			v.Live = lv
			return err
		}
		st, ok, err := s.onchain.LatestPayment(ctx, inv.Scope(), inv.ID)
		if err != nil {
			return err
		}
		if ok {
			s.showAttempt(lv, st)
		}
	case strings.HasPrefix(id, "price_"):
		p, ok, err := plans.Get(ctx, s.db, id)
		if err != nil || !ok {
			return err
		}
		lv.Kind, lv.Cap, lv.ExternalCustomerID = "plan", p.Amount.USDC(), v.ExternalCustomerID
		if key := r.URL.Query().Get("activation"); key != "" {
			done, err := s.showActivation(ctx, p, key, lv, v)
			if err != nil || done {
				return err
			}
		}
		if v.Status != "" {
			// The receipt of a subscription: nothing more to pay here.
			return nil
		}
		switch _, ok, err := s.payeeOf(ctx, p.Scope(), nil); {
		case err != nil:
			return err
		case !ok:
			lv.Unavailable = noWalletText
		case s.onchain.PlanManager() == nil:
			lv.Unavailable = noPlanManagerText
		default:
			lv.Period = periodText(p.Interval, p.IntervalDays)
			lv.PermitPeriods = s.onchain.PermitPeriods()
			total := new(big.Int).Mul(big.NewInt(int64(p.Amount)), new(big.Int).SetUint64(lv.PermitPeriods))
			lv.PermitTotal = usdcText(total)
		}
	case strings.HasPrefix(id, "sub_") && reauthorizing(id, r.URL.Query()):
		// The section sets v.Live itself, or leaves the receipt alone.
		return s.changeSection(r, id, lv, v)
	case strings.HasPrefix(id, "sub_"):
		if err := s.subscriptionSection(ctx, id, lv, v); err != nil || lv.Kind == "" {
			return err
		}
	default:
		return nil
	}
	v.Live = lv
	return nil
}

// showAttempt shows a pending attempt, or why the last one failed.
func (s *Server) showAttempt(lv *liveView, st rail.Settlement) {
	switch st.Status {
	case rail.Pending, rail.Succeeded:
		// Succeeded but not yet recorded on the invoice: the receipt is
		// moments away, so the page keeps reloading until it shows.
		lv.Pending, lv.TxHash = true, st.TxHash
	case rail.Failed:
		lv.Failure = st.Reason
	}
}

// showActivation shows the activation under key: pending, failed, or done
// (the subscription, as the test-mode receipt shows it; done is true).
func (s *Server) showActivation(ctx context.Context, p plans.Plan, key string, lv *liveView, v *checkoutView) (bool, error) {
	st, ok, err := s.onchain.Lookup(ctx, p.Scope(), key)
	if err != nil || !ok || !strings.HasPrefix(key, "act:"+p.ID+":") {
		return false, err
	}
	if st.Status != rail.Succeeded {
		s.showAttempt(lv, st)
		return false, nil
	}
	x, ok, err := subscriptions.ByAuthorization(ctx, s.db, p.Scope(), key)
	if err != nil || !ok {
		// Confirmed, not recorded yet: the worker is about to.
		lv.Pending, lv.TxHash = true, st.TxHash
		return false, err
	}
	v.Status, v.StatusText, v.Wallets, v.Notice = x.Status, statusText(x.Status), nil, nil
	v.ReceiptTitle = "Your subscription"
	v.Receipt = []fact{{Label: "Subscription", Value: x.ID, ID: "subscription-id", Code: true},
		{Label: "Status", Value: statusText(x.Status), ID: "subscription-status"}}
	if x.Live() && x.CurrentPeriodEnd != nil {
		v.Receipt = append(v.Receipt, timeFact("Next charge", "next-charge", *x.CurrentPeriodEnd, day))
	}
	if x.LatestPaymentID != nil {
		v.Receipt = append(v.Receipt, fact{Label: "Payment", Value: *x.LatestPaymentID, ID: "payment-id", Code: true})
	}
	v.Receipt = append(v.Receipt, fact{Label: "Transaction", Value: st.TxHash, ID: "tx-hash", Code: true},
		fact{Label: "Network", Value: networkText(st.Network), ID: "network"})
	return true, nil
}

// liveTarget is what an authorization endpoint is about: a live invoice or
// plan, and where its money goes.
type liveTarget struct {
	inv   *invoices.Invoice
	plan  *plans.Plan
	sub   *subscriptions.Subscription
	payee common.Address
}

// liveTargetOf finds the open live invoice or the live plan with id. It
// fails with resource_not_found, invoice_not_open, invalid_request (a test
// mode object, no wallet on file) or payment_failed (no chain configured).
func (s *Server) liveTargetOf(ctx context.Context, id string) (liveTarget, error) {
	var t liveTarget
	var sc tenant.Scope
	var snapshot *string
	switch {
	case strings.HasPrefix(id, "inv_"):
		inv, ok, err := invoices.Get(ctx, s.db, id)
		if err != nil || !ok {
			return t, notFoundUnless(err, id)
		}
		if inv.Status != invoices.StatusOpen {
			return t, apperr.New(apperr.InvoiceNotOpen, "invoice %s is %s", inv.ID, inv.Status)
		}
		t.inv, sc, snapshot = &inv, inv.Scope(), inv.Payee
	case strings.HasPrefix(id, "price_"):
		p, ok, err := plans.Get(ctx, s.db, id)
		if err != nil || !ok {
			return t, notFoundUnless(err, id)
		}
		t.plan, sc = &p, p.Scope()
	case strings.HasPrefix(id, "sub_"):
		x, p, err := s.liveSubscription(ctx, id)
		if err != nil {
			return t, err
		}
		t.sub, t.plan, sc = &x, &p, x.Scope()
	default:
		return t, notFoundUnless(nil, id)
	}
	if sc.Mode != tenant.Live {
		return t, apperr.New(apperr.InvalidRequest, "%s is a test-mode object: test mode pays with test wallets at /checkout/%s/pay", id, id)
	}
	if s.onchain == nil {
		return t, apperr.New(apperr.PaymentFailed, "live payments are not available: this tollgate has no on-chain settlement configured")
	}
	payee, ok, err := s.payeeOf(ctx, sc, snapshot)
	if err != nil {
		return t, err
	}
	if !ok {
		return t, apperr.New(apperr.PaymentFailed, "%s", noWalletText)
	}
	t.payee = payee
	return t, nil
}

// payeeOf is where a live payment in sc goes: the wallet snapshotted on
// the invoice, else the wallet on file; ok=false when there is neither
// (the merchant cannot be paid in live mode yet).
func (s *Server) payeeOf(ctx context.Context, sc tenant.Scope, snapshot *string) (common.Address, bool, error) {
	if snapshot != nil {
		return common.HexToAddress(*snapshot), true, nil
	}
	w, onFile, err := wallet.Get(ctx, s.db, sc)
	if err != nil || !onFile {
		return common.Address{}, false, err
	}
	return common.HexToAddress(w.Address), true, nil
}

func notFoundUnless(err error, id string) error {
	if err != nil {
		return err
	}
	return apperr.New(apperr.ResourceNotFound, "no invoice or plan %q", truncate(id, 80))
}

// checkoutAuthorizationTerms serves GET /checkout/{id}/authorization?payer=0x…:
// the typed data the payer's wallet signs (an invoice's transfer
// authorization; a plan's terms and permit), as JSON.
func (s *Server) checkoutAuthorizationTerms(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	payer, err := chain.ParseAddress(r.URL.Query().Get("payer"))
	if err != nil {
		writeError(w, r, s.log, apperr.Field("payer", "%s", err.(*apperr.Error).Message))
		return
	}
	t, err := s.liveTargetOf(ctx, r.PathValue("id"))
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	if t.sub != nil && reauthorizing(t.sub.ID, r.URL.Query()) {
		s.changeTerms(w, r, t, payer)
		return
	}
	if t.sub != nil {
		s.permitTerms(w, r, t, payer)
		return
	}
	if t.inv != nil {
		_, td, err := s.onchain.InvoiceAuthorization(ctx, payer, t.payee, t.inv.Amount, t.inv.ID)
		if err != nil {
			writeError(w, r, s.log, err)
			return
		}
		wtd := chain.WalletTypedData(td)
		writeJSON(w, http.StatusOK, checkoutTerms{Object: "checkout_terms", Kind: "invoice", TypedData: &wtd})
		return
	}
	period, err := chainrail.PeriodSeconds(t.plan.Interval, t.plan.IntervalDays)
	if err == nil {
		var pt chainrail.PlanTerms
		if pt, err = s.onchain.PlanTerms(ctx, payer, t.payee, t.plan.Amount, period); err == nil {
			plan, permit := chain.WalletTypedData(pt.PlanTypedData), chain.WalletTypedData(pt.PermitTypedData)
			writeJSON(w, http.StatusOK, checkoutTerms{Object: "checkout_terms", Kind: "plan", Plan: &plan, Permit: &permit,
				PermitSummary: permitSummaryOf(pt.Permit.Value, pt.Allowance, pt.Periods, t.plan.Amount, periodText(t.plan.Interval, t.plan.IntervalDays))})
			return
		}
	}
	writeError(w, r, s.log, err)
}

// checkoutAuthorize serves POST /checkout/{id}/authorization (JSON): the
// payer's signed authorization of an invoice (chain.ParseTransferAuthorization)
// or plan (chainrail.ParseActivation, with ?coupon=CODE the coupon the page
// applied: 400 invalid_coupon when it cannot be used) is verified off-chain
// and submitted by the relayer. 202 with status pending (the settlement worker records the
// payment once confirmed), or the error envelope: 402 payment_failed naming
// the reason (insufficient_funds, invalid_signature, authorization_used, …),
// 409 invoice_not_open or already_subscribed, 404, 400.
func (s *Server) checkoutAuthorize(w http.ResponseWriter, r *http.Request) {
	out, err := s.authorize(w, r)
	if err != nil {
		writeError(w, r, s.log, err)
		return
	}
	status := http.StatusOK
	if out.Status == rail.Pending {
		status = http.StatusAccepted
	}
	writeJSON(w, status, out)
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) (wire.CheckoutAuthorization, error) {
	ctx := r.Context()
	id := r.PathValue("id")
	body, err := readBody(w, r, 64<<10)
	if err != nil {
		return wire.CheckoutAuthorization{}, err
	}
	t, err := s.liveTargetOf(ctx, id)
	if err != nil {
		return wire.CheckoutAuthorization{}, err
	}
	out := wire.CheckoutAuthorization{Object: "checkout_authorization", ReceiptURL: "/checkout/" + url.PathEscape(id)}
	if t.sub != nil && reauthorizing(t.sub.ID, r.URL.Query()) {
		return s.reauthorize(ctx, t, r.URL.Query(), body)
	}
	if t.sub != nil {
		return s.renewPermit(ctx, t, body)
	}
	if t.inv != nil {
		a, err := chain.ParseTransferAuthorization(body)
		if err != nil {
			return out, err
		}
		st, pay, _, err := s.money.checkout.SubmitInvoice(ctx, id, checkout.Input{Payer: strings.ToLower(a.From.Hex()),
			Payload: &chainrail.Transfer{Authorization: a}})
		if err != nil {
			return out, err
		}
		out.Status = st.Status
		if st.Status == rail.Succeeded {
			pw := pay.Wire()
			out.Payment = &pw
		}
		return out, nil
	}
	act, ext, err := chainrail.ParseActivation(body)
	if err != nil {
		return out, err
	}
	period, err := chainrail.PeriodSeconds(t.plan.Interval, t.plan.IntervalDays)
	if err != nil {
		return out, err
	}
	if err := s.onchain.CheckPlan(ctx, act.Plan, t.payee, t.plan.Amount, period); err != nil {
		return out, err
	}
	in := checkout.Input{Payer: strings.ToLower(act.Plan.Payer.Hex()), ExternalCustomerID: ext, Payload: act}
	if code := r.URL.Query().Get("coupon"); code != "" {
		// The page's coupon, in the URL as on a test-mode page: the
		// signed terms carry the plan's cap, never the discount.
		in.Coupon = &code
	}
	st, x, err := s.money.checkout.SubmitSubscription(ctx, id, in)
	if err != nil {
		return out, err
	}
	out.Status = st.Status
	out.ReceiptURL += "?activation=" + url.QueryEscape(st.Key)
	if ext != nil {
		out.ReceiptURL += "&external_customer_id=" + url.QueryEscape(*ext)
	}
	if st.Status == rail.Succeeded && x.ID != "" {
		xw := x.Wire()
		out.Subscription = &xw
	}
	return out, nil
}
