package page

import (
	"context"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Select reads one page of table for scope s, newest first. columns must
// include created_at and seq; pos returns a row's position for the cursor.
func Select[T any](ctx context.Context, q store.Querier, table, columns string, s tenant.Scope, p Params, pos func(T) Cursor) (Result[T], error) {
	where, args := p.Where(3)
	rows := []T{}
	err := q.SelectContext(ctx, &rows, `SELECT `+columns+` FROM `+table+` WHERE merchant_id = $1 AND mode = $2 AND `+where+` `+p.Order(),
		append([]any{s.MerchantID, s.Mode}, args...)...)
	if err != nil {
		return Result[T]{}, store.Translate(err)
	}
	return Build(rows, p, pos), nil
}
