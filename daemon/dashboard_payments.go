package daemon

import (
	"context"
	_ "embed"
	"encoding/json"
	"html/template"
	"net/http"
	"strconv"
	"time"

	"github.com/tollgatehq/tollgate/daemon/web"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

const (
	dashPaymentsPage = "pages/dashboard_payments.html"
	dashPaymentPage  = "pages/dashboard_payment.html"
)

// dashRefundJS is the payment page's script: the browser wallet's part of
// a live refund. Its hash is that page's only script-src.
//
//go:embed pages/dashboard_refund.js
var dashRefundJS string

func (s *Server) dashPayments(w http.ResponseWriter, r *http.Request) {
	dashList(s, w, r, "/payments", "Payments", dashPaymentsPage, func(ctx context.Context, d dashRequest, p page.Params) (page.Result[payments.Payment], error) {
		return payments.List(ctx, s.db, d.Scope(), p)
	})
}

// dashPaymentView is a payment's page: the payment, what is left to refund,
// and a refund waiting for confirmation.
type dashPaymentView struct {
	Payment payments.Payment
	Left    money.Amount
	Live    bool
	Confirm *dashRefundAsk
	Script  template.JS
}

// dashRefundAsk is a refund the user asked for, shown for confirmation;
// a live one with the terms its settlement wallet signs.
type dashRefundAsk struct {
	Amount     money.Amount
	AmountText string
	Reason     string
	// Live: the wallet that signs, the typed data it signs (as
	// eth_signTypedData_v4 takes it), and what the signature is posted with.
	Wallet      string
	TypedData   string
	ValidBefore string
	Key         string
}

func (s *Server) dashPayment(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	s.renderPayment(w, r, d, http.StatusOK, nil, doneNotice(r))
}

func (s *Server) renderPayment(w http.ResponseWriter, r *http.Request, d dashRequest, status int, ask *dashRefundAsk, notice *web.Notice) {
	p, err := payments.Get(r.Context(), s.db, d.Scope(), r.PathValue("id"))
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	f := d.frame("Payment "+p.ID, "Payments")
	f.Notice = notice
	v := dashPaymentView{Payment: p, Left: p.Amount - p.AmountRefunded, Live: p.Mode == tenant.Live, Confirm: ask}
	if ask != nil && ask.TypedData != "" {
		v.Script = template.JS(dashRefundJS) // #nosec: our own embedded file
	}
	f.Body = d.page(v)
	s.renderDash(w, r, status, dashPaymentPage, f)
}

// dashRefund refunds one of the session's payments in two steps: the first
// post shows what would be refunded, the second (confirm=yes) refunds it
// through the payment's rail with the function admin refund calls. A live
// refund is paid from the merchant's settlement wallet: the confirmation
// carries the authorization admin refund prints, the page's script asks
// the browser wallet to sign it (eth_signTypedData_v4), and the second
// post carries the signature, which the rail verifies before it submits.
func (s *Server) dashRefund(w http.ResponseWriter, r *http.Request) {
	d, ok := s.openDashboard(w, r)
	if !ok {
		return
	}
	// Only the session's merchant's payment, in its mode.
	p, err := payments.Get(r.Context(), s.db, d.Scope(), r.PathValue("id"))
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	in := payments.RefundInput{PaymentID: p.ID}
	ask := &dashRefundAsk{Reason: r.PostForm.Get("reason")}
	if text := r.PostForm.Get("amount"); text != "" {
		a, err := money.ParseCLI(text)
		if err != nil {
			s.renderPayment(w, r, d, http.StatusBadRequest, nil, dashNotice(apperr.Field("amount", "%v", err)))
			return
		}
		in.Amount, ask.AmountText = &a, text
	}
	if ask.Reason != "" {
		in.Reason = &ask.Reason
	}
	live := p.Mode == tenant.Live
	if live && s.onchain == nil {
		s.renderPayment(w, r, d, http.StatusBadRequest, nil, &web.Notice{ID: "form-error",
			Text: "Live refunds are paid on chain, and this tollgate has no on-chain settlement configured."})
		return
	}
	pr, err := payments.PrepareRefund(r.Context(), s.db, in)
	if err != nil {
		s.renderPayment(w, r, d, http.StatusBadRequest, nil, dashNotice(err))
		return
	}
	if r.PostForm.Get("confirm") != "yes" {
		ask.Amount = pr.Amount
		if live {
			if err := s.askLiveRefund(r.Context(), ask, pr); err != nil {
				s.refundFailed(w, r, d, err)
				return
			}
		}
		s.renderPayment(w, r, d, http.StatusOK, ask, nil)
		return
	}
	if live {
		if in.Payload, err = s.signedLiveRefund(r, pr); err != nil {
			s.refundFailed(w, r, d, err)
			return
		}
		in.Key = pr.Key
	}
	now, err := s.scopeNow(r.Context(), d)
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	ref, err := Refund(r.Context(), s.db, s.money.railFor, in, func(tenant.Scope) time.Time { return now }, d.actor())
	if err != nil {
		s.refundFailed(w, r, d, err)
		return
	}
	done := "refunded"
	if ref.Status == payments.RefundPending {
		done = "refund-pending"
	}
	s.dashDone(w, r, d.base+"/payments/"+p.ID, done)
}

// askLiveRefund adds to ask the terms the settlement wallet signs for pr.
func (s *Server) askLiveRefund(ctx context.Context, ask *dashRefundAsk, pr payments.PreparedRefund) error {
	t, err := LiveRefundTerms(ctx, s.onchain, pr, 0)
	if err != nil {
		return err
	}
	td, err := json.Marshal(chain.WalletTypedData(t.TypedData))
	if err != nil {
		return err
	}
	ask.Wallet, ask.TypedData, ask.ValidBefore, ask.Key = t.Wallet.Hex(), string(td), t.Authorization.ValidBefore.String(), pr.Key
	return nil
}

// signedLiveRefund reads the confirmation's signature of the terms shown
// for pr. Terms shown before another refund of the payment was made are
// for another nonce: refused with a clear word rather than a bad signature.
func (s *Server) signedLiveRefund(r *http.Request, pr payments.PreparedRefund) (any, error) {
	if r.PostForm.Get("key") != pr.Key {
		return nil, apperr.Field("payment", "another refund of %s was made since this one was shown; ask for the refund again", pr.Payment.ID)
	}
	validBefore, err := strconv.ParseUint(r.PostForm.Get("valid_before"), 10, 64)
	if err != nil || validBefore == 0 {
		return nil, apperr.Field("valid_before", "must be the validBefore of the signed authorization")
	}
	return SignedRefund(r.Context(), s.onchain, pr, validBefore, r.PostForm.Get("signature"))
}

// refundFailed shows why a refund was not made on the payment's page when
// it is the user's to fix (a bad amount, a signature the rail refused),
// and the error page otherwise.
func (s *Server) refundFailed(w http.ResponseWriter, r *http.Request, d dashRequest, err error) {
	switch apperr.CodeOf(err) {
	case apperr.InvalidRequest, apperr.PaymentFailed:
		s.renderPayment(w, r, d, http.StatusBadRequest, nil, dashNotice(err))
		return
	}
	s.dashFailure(w, r, err)
}
