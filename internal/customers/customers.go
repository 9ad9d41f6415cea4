// Package customers owns customer records. A customer is referenced by the
// service's cus_ id or by the merchant's external_customer_id, which is
// upserted into a customer the first time it is seen.
package customers

import (
	"context"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// MaxExternalIDLen bounds external_customer_id.
const MaxExternalIDLen = 255

// Customer is a merchant's customer.
type Customer struct {
	MerchantID string      `db:"merchant_id"`
	Mode       tenant.Mode `db:"mode"`
	ID         string      `db:"id"`
	Seq        int64       `db:"seq"`
	ExternalID *string     `db:"external_customer_id"`
	CreatedAt  time.Time   `db:"created_at"`
}

// Ref is how a request names a customer: by id or by external id.
type Ref struct {
	ID         *string
	ExternalID *string
}

// DecodeRef reads a request's customer_id and external_customer_id.
func DecodeRef(o *fields.Object) Ref {
	return Ref{ID: o.String("customer_id", 0, 0), ExternalID: o.String("external_customer_id", 0, 0)}
}

// Empty reports whether neither reference was given.
func (r Ref) Empty() bool { return r.ID == nil && r.ExternalID == nil }

const columns = `merchant_id, mode, id, seq, external_customer_id, created_at`

// Position is the customer's place in the list, for cursors.
func (c Customer) Position() page.Cursor { return page.Cursor{At: c.CreatedAt, Seq: c.Seq} }

// List returns a page of the scope's customers, newest first. The mode is
// named as a literal too, so the planner can seek the mode's own index
// (customers_list_test, customers_list_live) instead of walking the
// merchant's customers of both modes.
func List(ctx context.Context, q store.Querier, s tenant.Scope, p page.Params) (page.Result[Customer], error) {
	where, args := p.Where(3)
	rows := []Customer{}
	err := q.SelectContext(ctx, &rows, `SELECT `+columns+` FROM customers WHERE merchant_id = $1 AND mode = $2 AND `+modeLiteral(s)+`
		AND `+where+` `+p.Order(), append([]any{s.MerchantID, s.Mode}, args...)...)
	if err != nil {
		return page.Result[Customer]{}, store.Translate(err)
	}
	return page.Build(rows, p, Customer.Position), nil
}

// modeLiteral is the scope's mode as a condition with a constant, which a
// generic plan can match to a partial index, as it cannot a parameter.
func modeLiteral(s tenant.Scope) string {
	if s.Mode == tenant.Test {
		return "mode = 'test'"
	}
	return "mode = 'live'"
}

// Get returns the scope's customer with id. Returns unknown_customer (400,
// as for a body reference) when there is none; callers resolving a URL path
// set Status 404.
func Get(ctx context.Context, q store.Querier, s tenant.Scope, customerID string) (Customer, error) {
	var c Customer
	err := q.GetContext(ctx, &c, `SELECT `+columns+` FROM customers WHERE merchant_id = $1 AND mode = $2 AND id = $3`, s.MerchantID, s.Mode, customerID)
	if store.NotFound(err) {
		return Customer{}, apperr.New(apperr.UnknownCustomer, "customer_id: no customer %q", customerID)
	}
	return c, store.Translate(err)
}

// GetForPath is Get for a customer id taken from a URL path: the message
// names no field (the daemon makes it a 404).
func GetForPath(ctx context.Context, q store.Querier, s tenant.Scope, customerID string) (Customer, error) {
	c, err := Get(ctx, q, s, customerID)
	if e, ok := apperr.As(err); ok && e.Code == apperr.UnknownCustomer {
		return c, &apperr.Error{Code: apperr.UnknownCustomer, Message: "no customer " + strconv.Quote(apperr.Clip(customerID))}
	}
	return c, err
}

// Upsert returns the customer with externalID, creating it on first sight
// at now (the merchant's clock). Concurrent upserts of one external id
// return the same customer.
func Upsert(ctx context.Context, q store.Querier, s tenant.Scope, externalID string, now time.Time) (Customer, error) {
	if externalID == "" || utf8.RuneCountInString(externalID) > MaxExternalIDLen {
		return Customer{}, apperr.Field("external_customer_id", "must be 1 to %d characters", MaxExternalIDLen)
	}
	// Read first: on the hot path (meter events) the customer usually exists,
	// and a read takes no row lock. Then insert, and read again if a
	// concurrent insert won (each statement sees the latest commits).
	for attempt := 0; attempt < 3; attempt++ {
		var rows []Customer
		err := q.SelectContext(ctx, &rows, `SELECT `+columns+` FROM customers WHERE merchant_id = $1 AND mode = $2 AND external_customer_id = $3`,
			s.MerchantID, s.Mode, externalID)
		if err != nil {
			return Customer{}, store.Translate(err)
		}
		if len(rows) == 1 {
			return rows[0], nil
		}
		err = q.SelectContext(ctx, &rows, `INSERT INTO customers (merchant_id, mode, id, external_customer_id, created_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT ON CONSTRAINT customers_external DO NOTHING RETURNING `+columns, s.MerchantID, s.Mode, id.New("cus"), externalID, now)
		if err != nil {
			return Customer{}, store.Translate(err)
		}
		if len(rows) == 1 {
			return rows[0], nil
		}
	}
	return Customer{}, apperr.New(apperr.Internal, "customer %q could not be upserted", externalID)
}

// CreateCTE is a WITH item, name, creating customers in a statement that
// records more with them (a checkout's subscription): query yields one row
// a customer, with the columns merchant_id, mode, id, external_customer_id
// and at (its created_at). A customer whose external id is taken is not
// created (nothing written for it); the item returns merchant_id and id of
// those created.
func CreateCTE(name, query string) string {
	return name + ` AS (
		INSERT INTO customers (merchant_id, mode, id, external_customer_id, created_at)
		SELECT q.merchant_id, q.mode, q.id, q.external_customer_id, q.at FROM (` + query + `) q
		ON CONFLICT ON CONSTRAINT customers_external DO NOTHING RETURNING merchant_id, id
	)`
}

// Resolve turns a body reference into a customer: by id (which must exist,
// else unknown_customer 400), else by external id (upserted). When both are
// given they must name the same customer. required=false allows an empty
// reference (ok=false); required=true makes it customer_required. A
// customer created here is stamped now.
func Resolve(ctx context.Context, q store.Querier, s tenant.Scope, r Ref, required bool, now time.Time) (c Customer, ok bool, err error) {
	switch {
	case r.ID != nil:
		c, err = Get(ctx, q, s, *r.ID)
		if err != nil {
			return Customer{}, false, err
		}
		if r.ExternalID != nil && (c.ExternalID == nil || *c.ExternalID != *r.ExternalID) {
			return Customer{}, false, apperr.Field("external_customer_id", "does not match customer %s", c.ID)
		}
		return c, true, nil
	case r.ExternalID != nil:
		c, err = Upsert(ctx, q, s, *r.ExternalID, now)
		return c, err == nil, err
	case required:
		return Customer{}, false, apperr.New(apperr.CustomerRequired, "customer_id or external_customer_id is required")
	}
	return Customer{}, false, nil
}
