package daemon

import (
	"context"
	"net/http"
	"time"

	"github.com/tollgatehq/tollgate/daemon/web"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

const (
	dashPaymentsPage = "pages/dashboard_payments.html"
	dashPaymentPage  = "pages/dashboard_payment.html"
)

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
}

// dashRefundAsk is a refund the user asked for, shown for confirmation.
type dashRefundAsk struct {
	Amount     money.Amount
	AmountText string
	Reason     string
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
	f.Body = d.page(dashPaymentView{Payment: p, Left: p.Amount - p.AmountRefunded, Live: p.Mode == tenant.Live, Confirm: ask})
	s.renderDash(w, r, status, dashPaymentPage, f)
}

// dashRefund refunds one of the session's payments in two steps: the first
// post shows what would be refunded, the second (confirm=yes) refunds it
// through the payment's rail as admin refund does. Live refunds need the
// merchant wallet's own authorization, which admin refund asks for.
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
	if p.Mode == tenant.Live {
		s.renderPayment(w, r, d, http.StatusBadRequest, nil, &web.Notice{ID: "form-error",
			Text: "A live refund is paid from your settlement wallet, which must authorize it: run tollgate admin refund " + p.ID + " on the server."})
		return
	}
	pr, err := payments.PrepareRefund(r.Context(), s.db, in)
	if err != nil {
		s.renderPayment(w, r, d, http.StatusBadRequest, nil, dashNotice(err))
		return
	}
	if r.PostForm.Get("confirm") != "yes" {
		ask.Amount = pr.Amount
		s.renderPayment(w, r, d, http.StatusOK, ask, nil)
		return
	}
	now, err := s.scopeNow(r.Context(), d)
	if err != nil {
		s.dashFailure(w, r, err)
		return
	}
	ref, err := payments.IssueRefund(r.Context(), s.db, s.money.railFor, in, func(tenant.Scope) time.Time { return now })
	if err != nil {
		if apperr.CodeOf(err) == apperr.InvalidRequest {
			s.renderPayment(w, r, d, http.StatusBadRequest, nil, dashNotice(err))
			return
		}
		s.dashFailure(w, r, err)
		return
	}
	// The refund ran its own transaction and reached the rail: its entry
	// follows it, as admin refund's does.
	if err := audit.Record(r.Context(), s.db, d.actor(), audit.RefundEntry(ref.MerchantID, ref.Mode, ref.ID, ref.PaymentID, ref.Amount.USDC(), ref.Reason)); err != nil {
		s.dashFailure(w, r, err)
		return
	}
	s.dashDone(w, r, d.base+"/payments/"+p.ID, "refunded")
}
