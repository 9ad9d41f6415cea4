package daemon

import (
	"context"
	"net/http"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Credit grants, debits and balances: POST /v1/credit_grants, POST
// /v1/credit_debits and GET /v1/customers/{id}/credit_balance.

// Event types emitted here.
const (
	eventCreditGranted = "credit.granted"
	eventCreditDebited = "credit.debited"
)

// customerRef reads customer_id and external_customer_id.
func customerRef(o *fields.Object) customers.Ref {
	return customers.Ref{ID: o.String("customer_id", 0, 0), ExternalID: o.String("external_customer_id", 0, 0)}
}

// idempotencyKey reads the body's idempotency_key, or else the
// Idempotency-Key header. Both present must agree.
func idempotencyKey(o *fields.Object, header string) *string {
	body := o.String("idempotency_key", 0, 0)
	switch {
	case header == "":
		return body
	case body == nil:
		return &header
	case *body != header:
		o.Fail(apperr.Field("idempotency_key", "differs from the Idempotency-Key header"))
	}
	return body
}

// creditGrantInput reads POST /v1/credit_grants' schema (shared with the MCP
// tool); header is the Idempotency-Key header, if any.
func creditGrantInput(o *fields.Object, header string) (credits.GrantInput, error) {
	in := credits.GrantInput{
		Amount:         o.RequiredAmount("amount"),
		Customer:       customerRef(o),
		Reason:         o.String("reason", 0, 0),
		ExpiresAt:      o.Time("expires_at"),
		IdempotencyKey: idempotencyKey(o, header),
	}
	return in, o.Err()
}

// creditDebitInput reads POST /v1/credit_debits' schema (shared with the MCP
// tool).
func creditDebitInput(o *fields.Object, header string) (credits.DebitInput, error) {
	in := credits.DebitInput{
		Amount:         o.RequiredAmount("amount"),
		Customer:       customerRef(o),
		Reason:         o.String("reason", 0, 0),
		IdempotencyKey: idempotencyKey(o, header),
	}
	if b := o.Bool("allow_negative"); b != nil {
		in.AllowNegative = *b
	}
	return in, o.Err()
}

func (s *Server) createCreditGrant(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	o, err := s.decodeBody(w, r)
	if err != nil {
		return err
	}
	in, err := creditGrantInput(o, r.Header.Get("Idempotency-Key"))
	if err != nil {
		return err
	}
	res, err := s.grantCredits(r.Context(), p.Scope, in)
	if err != nil {
		return err
	}
	status := http.StatusCreated
	if res.Deduplicated {
		status = http.StatusOK
	}
	writeJSON(w, status, creditGrantToJSON(res))
	return nil
}

func (s *Server) createCreditDebit(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	o, err := s.decodeBody(w, r)
	if err != nil {
		return err
	}
	in, err := creditDebitInput(o, r.Header.Get("Idempotency-Key"))
	if err != nil {
		return err
	}
	res, err := s.debitCredits(r.Context(), p.Scope, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, creditDebitToJSON(res))
	return nil
}

func (s *Server) getCreditBalance(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	b, err := credits.GetBalance(r.Context(), s.db, p.Scope, r.PathValue("id"), time.Now())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, creditBalanceToJSON(b))
	return nil
}

// grantCredits applies a grant and emits credit.granted (data: the result
// object) in the same transaction; a replay emits nothing.
func (s *Server) grantCredits(ctx context.Context, scope tenant.Scope, in credits.GrantInput) (credits.GrantResult, error) {
	var res credits.GrantResult
	err := store.Tx(ctx, s.db, func(tx *sqlx.Tx) (err error) {
		if res, err = credits.Grant(ctx, tx, scope, in, time.Now()); err != nil || res.Deduplicated {
			return err
		}
		_, err = events.Emit(ctx, tx, scope, eventCreditGranted, creditGrantToJSON(res))
		return err
	})
	return res, err
}

// debitCredits applies a debit and emits credit.debited (data: the result
// object) in the same transaction; a replay emits nothing.
func (s *Server) debitCredits(ctx context.Context, scope tenant.Scope, in credits.DebitInput) (credits.DebitResult, error) {
	var res credits.DebitResult
	err := store.Tx(ctx, s.db, func(tx *sqlx.Tx) (err error) {
		if res, err = credits.Debit(ctx, tx, scope, in, time.Now()); err != nil || res.Deduplicated {
			return err
		}
		_, err = events.Emit(ctx, tx, scope, eventCreditDebited, creditDebitToJSON(res))
		return err
	})
	return res, err
}

type creditGrantJSON struct {
	Object       string `json:"object"`
	CustomerID   string `json:"customer_id"`
	Granted      string `json:"granted"`
	Balance      string `json:"balance"`
	EntryID      string `json:"entry_id"`
	Deduplicated bool   `json:"deduplicated"`
}

func creditGrantToJSON(r credits.GrantResult) creditGrantJSON {
	return creditGrantJSON{Object: "credit_grant", CustomerID: r.CustomerID, Granted: r.Granted.String(),
		Balance: r.Balance.String(), EntryID: r.EntryID, Deduplicated: r.Deduplicated}
}

type creditDebitJSON struct {
	Object       string `json:"object"`
	CustomerID   string `json:"customer_id"`
	Requested    string `json:"requested"`
	Covered      string `json:"covered"`
	Shortfall    string `json:"shortfall"`
	Balance      string `json:"balance"`
	Deduplicated bool   `json:"deduplicated"`
}

func creditDebitToJSON(r credits.DebitResult) creditDebitJSON {
	return creditDebitJSON{Object: "credit_debit", CustomerID: r.CustomerID, Requested: r.Requested.String(),
		Covered: r.Covered.String(), Shortfall: r.Shortfall.String(), Balance: r.Balance.String(), Deduplicated: r.Deduplicated}
}

// creditBalanceJSON omits account_id, granted and consumed for a customer
// without a credit account, as SPEC.md says.
type creditBalanceJSON struct {
	Object     string  `json:"object"`
	CustomerID string  `json:"customer_id"`
	AccountID  string  `json:"account_id,omitempty"`
	Balance    string  `json:"balance"`
	Granted    *string `json:"granted,omitempty"`
	Consumed   *string `json:"consumed,omitempty"`
	Currency   string  `json:"currency"`
}

func creditBalanceToJSON(b credits.Balance) creditBalanceJSON {
	j := creditBalanceJSON{Object: "credit_balance", CustomerID: b.CustomerID, Balance: b.Balance.String(), Currency: "usdc"}
	if b.AccountID != "" {
		granted, consumed := b.Granted.String(), b.Consumed.String()
		j.AccountID, j.Granted, j.Consumed = b.AccountID, &granted, &consumed
	}
	return j
}
