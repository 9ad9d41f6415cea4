package client

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Error codes the API returns in its error envelope, for comparing with
// Error.Code.
const (
	CodeUnauthorized       = "unauthorized"
	CodeInvalidJSON        = "invalid_json"
	CodeInvalidRequest     = "invalid_request"
	CodeModeMismatch       = "mode_mismatch"
	CodeAmountTooSmall     = "amount_too_small"
	CodeInvalidInterval    = "invalid_interval"
	CodeMissingValue       = "missing_value"
	CodeCustomerRequired   = "customer_required"
	CodeUnknownCustomer    = "unknown_customer"
	CodeUnknownMeter       = "unknown_meter"
	CodeUnknownFeature     = "unknown_feature"
	CodeNoCreditAccount    = "no_credit_account"
	CodeResourceNotFound   = "resource_not_found"
	CodeMethodNotAllowed   = "method_not_allowed"
	CodeRateLimited        = "rate_limited"
	CodePaymentFailed      = "payment_failed"
	CodeInvoiceNotOpen     = "invoice_not_open"
	CodeAlreadySubscribed  = "already_subscribed"
	CodeUsageAlreadyBilled = "usage_already_billed"
	// CodeAuthorizationRequired: a plan change above what the payer
	// authorized; Error.CheckoutURL is where the payer authorizes it.
	CodeAuthorizationRequired = "authorization_required"
	CodeInvalidCoupon         = "invalid_coupon"
	CodeServiceUnavailable    = "service_unavailable"
	CodeInternal              = "internal_error"
)

// Error is a non-2xx response. Code and Message come from the API's error
// body; a response without one (a proxy's HTML page, say) leaves Code empty
// and describes the status in Message.
type Error struct {
	Status    int    // HTTP status
	Code      string // e.g. "invalid_request"; empty when the body had none
	Message   string // for people; names the offending field where there is one
	RequestID string // the response's request-id header, for support
	// RetryAfter is the response's retry-after (429 and 503), else 0.
	RetryAfter time.Duration
	// CheckoutURL is where the payer authorizes a larger amount
	// (authorization_required); empty otherwise.
	CheckoutURL string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Code != "" {
		b.WriteString(e.Code + ": ")
	}
	b.WriteString(e.Message)
	fmt.Fprintf(&b, " (HTTP %d", e.Status)
	if e.RequestID != "" {
		b.WriteString(", request-id " + e.RequestID)
	}
	b.WriteString(")")
	return b.String()
}

// decodeError builds the *Error for a non-2xx response.
func decodeError(status int, header http.Header, body []byte) *Error {
	e := &Error{
		Status:     status,
		RequestID:  requestID(header),
		RetryAfter: retryAfter(header.Get("Retry-After")),
	}
	var env struct {
		Error struct {
			Code        string `json:"code"`
			Message     string `json:"message"`
			CheckoutURL string `json:"checkout_url"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && (env.Error.Code != "" || env.Error.Message != "") {
		e.Code, e.Message, e.CheckoutURL = env.Error.Code, env.Error.Message, env.Error.CheckoutURL
		return e
	}
	e.Message = strings.ToLower(http.StatusText(status))
	if e.Message == "" {
		e.Message = "unexpected status"
	}
	if s := snippet(body); s != "" {
		e.Message += ": " + s
	}
	return e
}

func requestID(h http.Header) string {
	if id := h.Get("Request-Id"); id != "" {
		return id
	}
	return h.Get("X-Request-Id")
}

// retryAfter reads a retry-after header: delay-seconds or an HTTP date.
func retryAfter(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(secs, 0)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}

// snippet returns the start of a non-JSON error body when it is short
// readable text (a plain-text proxy error), and "" for HTML or binary, whose
// contents would only clutter the message.
func snippet(body []byte) string {
	s := strings.TrimSpace(string(body))
	if s == "" || strings.HasPrefix(s, "<") {
		return ""
	}
	s, _, _ = strings.Cut(s, "\n")
	if r := []rune(s); len(r) > 120 {
		s = string(r[:120]) + "…"
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return ""
		}
	}
	return s
}
