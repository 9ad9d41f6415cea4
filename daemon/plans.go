package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/invoices"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/plans"
	"github.com/tollgatehq/tollgate/internal/subscriptions"
	"github.com/tollgatehq/tollgate/internal/testclock"
)

// The money path's REST endpoints: plans, reads of one object, voiding,
// cancelling, the upcoming charge and the test clock (see the payments
// guide, cmd/help/payments.md).

func (s *Server) createPlan(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	o, err := s.decodeBody(w, r)
	if err != nil {
		return err
	}
	in, err := plans.Decode(o)
	if err != nil {
		return err
	}
	plan, err := plans.Create(r.Context(), s.db, p.Scope, in, s.now(p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, plan.Wire(s.baseURL))
	return nil
}

func (s *Server) getInvoice(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	inv, err := invoices.ByID(r.Context(), s.db, p.Scope, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, inv.Wire(s.baseURL))
	return nil
}

func (s *Server) voidInvoice(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	inv, err := invoices.Void(r.Context(), s.db, p.Scope, r.PathValue("id"), s.now(p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, inv.Wire(s.baseURL))
	return nil
}

func (s *Server) getPayment(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	pay, err := payments.Get(r.Context(), s.db, p.Scope, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, pay.Wire())
	return nil
}

func (s *Server) getSubscription(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	x, err := subscriptions.Get(r.Context(), s.db, p.Scope, r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, x.Wire())
	return nil
}

func (s *Server) cancelSubscription(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	o, err := s.decodeOptionalBody(w, r)
	if err != nil {
		return err
	}
	in, err := subscriptions.DecodeCancel(o)
	if err != nil {
		return err
	}
	x, err := subscriptions.Cancel(r.Context(), s.db, p.Scope, r.PathValue("id"), in, s.now(p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, x.Wire())
	return nil
}

func (s *Server) upcomingCharge(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	up, err := subscriptions.Upcoming(r.Context(), s.db, p.Scope, r.PathValue("id"), s.now(p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, up)
	return nil
}

func (s *Server) getTestClock(w http.ResponseWriter, _ *http.Request, p auth.Principal) error {
	if err := testclock.CheckMode(p.Scope); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, testclock.Wire(s.now(p)))
	return nil
}

func (s *Server) advanceTestClock(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	if err := testclock.CheckMode(p.Scope); err != nil {
		return err
	}
	o, err := s.decodeBody(w, r)
	if err != nil {
		return err
	}
	in, err := testclock.DecodeAdvance(o)
	if err != nil {
		return err
	}
	now, err := testclock.Advance(r.Context(), s.db, p.Scope, in, s.cfg.Clock.Now, s.catchUps()...)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, testclock.Wire(now))
	return nil
}
