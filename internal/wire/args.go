package wire

import "github.com/tollgatehq/tollgate/internal/fields"

// Decoders of the argument objects that only name an object, shared by the
// tools whose REST counterparts take the id from the URL path.

// DecodeObjectArgs reads ObjectArgs (the get_* tools' arguments) from a JSON
// object; errors are invalid_request naming the field.
func DecodeObjectArgs(o *fields.Object) (ObjectArgs, error) {
	a := ObjectArgs{ID: o.RequiredString("id", 0, 0)}
	return a, o.Err()
}

// DecodeCustomerArgs reads CustomerArgs (the get_credit_balance tool's
// arguments) from a JSON object; errors are invalid_request naming the
// field.
func DecodeCustomerArgs(o *fields.Object) (CustomerArgs, error) {
	a := CustomerArgs{CustomerID: o.RequiredString("customer_id", 0, 0)}
	return a, o.Err()
}
