// Package apperr defines the API's error codes and the error type every
// domain package returns. The daemon maps codes to
// HTTP statuses in one table; the client maps them back.
package apperr

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// Code is one of the API's machine-readable error codes.
type Code string

// The spec's codes, plus service_unavailable and internal_error, which the
// daemon uses when PostgreSQL is unreachable or something unexpected happens.
const (
	Unauthorized     Code = "unauthorized"
	InvalidJSON      Code = "invalid_json"
	InvalidRequest   Code = "invalid_request"
	ModeMismatch     Code = "mode_mismatch"
	AmountTooSmall   Code = "amount_too_small"
	InvalidInterval  Code = "invalid_interval"
	MissingValue     Code = "missing_value"
	CustomerRequired Code = "customer_required"
	UnknownCustomer  Code = "unknown_customer"
	UnknownMeter     Code = "unknown_meter"
	UnknownFeature   Code = "unknown_feature"
	NoCreditAccount  Code = "no_credit_account"
	ResourceNotFound Code = "resource_not_found"
	MethodNotAllowed Code = "method_not_allowed"
	RateLimited      Code = "rate_limited"
	// The money path's codes (checkout and payments).
	PaymentFailed      Code = "payment_failed"
	InvoiceNotOpen     Code = "invoice_not_open"
	AlreadySubscribed  Code = "already_subscribed"
	UsageAlreadyBilled Code = "usage_already_billed"
	// AuthorizationRequired: a plan change above what the payer authorized
	// (the error carries the page where the payer authorizes it).
	AuthorizationRequired Code = "authorization_required"
	// InvalidCoupon: a coupon that is unknown, archived, expired,
	// exhausted or not for the plan.
	InvalidCoupon      Code = "invalid_coupon"
	ServiceUnavailable Code = "service_unavailable"
	Internal           Code = "internal_error"
)

// Error is an API error: a code from the spec and a message for people that
// names the offending field where there is one.
type Error struct {
	Code    Code
	Message string
	// Status overrides the code's default HTTP status (unknown_customer is
	// 400 in a body but 404 in a URL path). Zero means the default.
	Status int
	// CheckoutURL is where a payer acts to lift the error
	// (authorization_required); empty otherwise.
	CheckoutURL string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// New returns an *Error with a formatted message. String arguments longer
// than MaxEcho bytes are cut short (see Clip).
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, clipArgs(args)...)}
}

// Field returns an invalid_request error whose message starts with the field
// name, e.g. `description: must be 1 to 500 characters`. String arguments
// are cut short as by New.
func Field(field, format string, args ...any) *Error {
	return &Error{Code: InvalidRequest, Message: field + ": " + fmt.Sprintf(format, clipArgs(args)...)}
}

// MaxEcho bounds how much of a value a message quotes: messages name the
// offending input, which can be as large as a request body.
const MaxEcho = 128

// Clip returns s cut to at most MaxEcho bytes, on a rune boundary, with an
// ellipsis marking the cut.
func Clip(s string) string {
	if len(s) <= MaxEcho {
		return s
	}
	cut := MaxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func clipArgs(args []any) []any {
	var out []any
	for i, a := range args {
		if s, ok := a.(string); ok && len(s) > MaxEcho {
			if out == nil {
				out = append([]any(nil), args...) // the caller's slice is left alone
			}
			out[i] = Clip(s)
		}
	}
	if out == nil {
		return args
	}
	return out
}

// CodeOf returns the code carried by err, or "" when err is not an *Error.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// As returns the *Error inside err, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
