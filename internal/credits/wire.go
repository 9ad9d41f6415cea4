package credits

import (
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// DecodeGrant reads POST /v1/credit_grants' schema from a JSON object (a
// REST body or tool arguments); errors are invalid_request naming the
// field. An Idempotency-Key header is the adapter's to merge.
func DecodeGrant(o *fields.Object) (GrantInput, error) {
	in := GrantInput{
		Amount:         o.RequiredAmount("amount"),
		Customer:       customers.DecodeRef(o),
		Reason:         o.String("reason", 0, 0),
		ExpiresAt:      o.Time("expires_at"),
		IdempotencyKey: o.String("idempotency_key", 0, 0),
	}
	return in, o.Err()
}

// DecodeDebit reads POST /v1/credit_debits' schema from a JSON object.
func DecodeDebit(o *fields.Object) (DebitInput, error) {
	in := DebitInput{
		Amount:         o.RequiredAmount("amount"),
		Customer:       customers.DecodeRef(o),
		Reason:         o.String("reason", 0, 0),
		IdempotencyKey: o.String("idempotency_key", 0, 0),
	}
	if b := o.Bool("allow_negative"); b != nil {
		in.AllowNegative = *b
	}
	return in, o.Err()
}

// Wire returns the grant result's public form.
func (r GrantResult) Wire() wire.CreditGrant {
	return wire.CreditGrant{Object: "credit_grant", CustomerID: r.CustomerID, Granted: r.Granted.String(),
		Balance: r.Balance.String(), EntryID: r.EntryID, Deduplicated: r.Deduplicated}
}

// Wire returns the debit result's public form.
func (r DebitResult) Wire() wire.CreditDebit {
	return wire.CreditDebit{Object: "credit_debit", CustomerID: r.CustomerID, Requested: r.Requested.String(),
		Covered: r.Covered.String(), Shortfall: r.Shortfall.String(), Balance: r.Balance.String(), Deduplicated: r.Deduplicated}
}

// Wire returns the balance's public form: account_id, granted, consumed
// and expired only when the customer has a credit account.
func (b Balance) Wire() wire.CreditBalance {
	j := wire.CreditBalance{Object: "credit_balance", CustomerID: b.CustomerID, Balance: b.Balance.String(), Currency: "usdc"}
	if b.AccountID != "" {
		granted, consumed, expired := b.Granted.String(), b.Consumed.String(), b.Expired.String()
		j.AccountID, j.Granted, j.Consumed, j.Expired = b.AccountID, &granted, &consumed, &expired
	}
	return j
}
