package customers

import (
	"context"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Lookup returns the scope's customer named by idOrExternal: the customer
// with that cus_ id, or else the one with that external_customer_id (an id
// match wins when a merchant's external id happens to look like another
// customer's id). It never creates a customer. Returns unknown_customer
// when neither matches.
func Lookup(ctx context.Context, q store.Querier, s tenant.Scope, idOrExternal string) (Customer, error) {
	var rows []Customer
	err := q.SelectContext(ctx, &rows, `SELECT `+columns+` FROM customers
		WHERE merchant_id = $1 AND mode = $2 AND (id = $3 OR external_customer_id = $3)
		ORDER BY id = $3 DESC LIMIT 1`, s.MerchantID, s.Mode, idOrExternal)
	if err != nil {
		return Customer{}, store.Translate(err)
	}
	if len(rows) == 0 {
		return Customer{}, &apperr.Error{Code: apperr.UnknownCustomer, Message: "no customer with id or external_customer_id " + quote(apperr.Clip(idOrExternal))}
	}
	return rows[0], nil
}

// quote shows a caller's value in a message without letting control
// characters or great lengths through.
func quote(v string) string {
	if r := []rune(v); len(r) > 80 {
		v = string(r[:80]) + "…"
	}
	return `"` + sanitize(v) + `"`
}

func sanitize(v string) string {
	b := []rune(v)
	for i, r := range b {
		if r < 0x20 || r == 0x7f || r == '"' {
			b[i] = '?'
		}
	}
	return string(b)
}

// Wire returns the customer's public form.
func (c Customer) Wire() wire.Customer {
	return wire.Customer{Object: "customer", ID: c.ID, ExternalCustomerID: c.ExternalID, CreatedAt: wire.Timestamp(c.CreatedAt), Livemode: c.Mode == tenant.Live}
}
