package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/fields"
)

// Credit grants, debits and balances: POST /v1/credit_grants, POST
// /v1/credit_debits and GET /v1/customers/{id}/credit_balance.

func (s *Server) createCreditGrant(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	o, err := s.decodeBody(w, r)
	if err != nil {
		return err
	}
	in, err := credits.DecodeGrant(o)
	if err != nil {
		return err
	}
	if in.IdempotencyKey, err = fields.MergeIdempotencyKey(in.IdempotencyKey, r.Header.Get("Idempotency-Key")); err != nil {
		return err
	}
	res, err := s.credits.Grant(r.Context(), p.Scope, in, s.now(p))
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if res.Deduplicated {
		status = http.StatusOK
	}
	writeJSON(w, status, res.Wire())
	return nil
}

func (s *Server) createCreditDebit(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	o, err := s.decodeBody(w, r)
	if err != nil {
		return err
	}
	in, err := credits.DecodeDebit(o)
	if err != nil {
		return err
	}
	if in.IdempotencyKey, err = fields.MergeIdempotencyKey(in.IdempotencyKey, r.Header.Get("Idempotency-Key")); err != nil {
		return err
	}
	res, err := s.credits.Debit(r.Context(), p.Scope, in, s.now(p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res.Wire())
	return nil
}

func (s *Server) getCreditBalance(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	b, err := credits.GetBalance(r.Context(), s.db, p.Scope, r.PathValue("customer"), s.now(p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, b.Wire())
	return nil
}
