package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// HTTPStatus is the one table mapping error codes to HTTP statuses; 0 for
// a code it does not know.
func HTTPStatus(code apperr.Code) int {
	switch code {
	case apperr.Unauthorized:
		return http.StatusUnauthorized
	case apperr.InvalidJSON, apperr.InvalidRequest, apperr.ModeMismatch, apperr.AmountTooSmall, apperr.InvalidInterval,
		apperr.MissingValue, apperr.CustomerRequired, apperr.UnknownCustomer, apperr.InvalidCoupon:
		return http.StatusBadRequest
	case apperr.UnknownMeter, apperr.UnknownFeature, apperr.NoCreditAccount, apperr.ResourceNotFound:
		return http.StatusNotFound
	case apperr.PaymentFailed:
		return http.StatusPaymentRequired
	case apperr.InvoiceNotOpen, apperr.AlreadySubscribed, apperr.UsageAlreadyBilled, apperr.AuthorizationRequired:
		return http.StatusConflict
	case apperr.MethodNotAllowed:
		return http.StatusMethodNotAllowed
	case apperr.RateLimited:
		return http.StatusTooManyRequests
	case apperr.ServiceUnavailable:
		return http.StatusServiceUnavailable
	case apperr.Internal:
		return http.StatusInternalServerError
	}
	return 0
}

// unavailableRetryAfter is what a 503 asks clients to wait, in seconds.
const unavailableRetryAfter = 2

// Bounds of what is echoed: an error message's length, and of an internal
// error's text in the log (a driver's error may quote the input).
const (
	maxMessage     = 1024
	maxLoggedError = 2048
)

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v)
}

// writeError writes err as the error envelope. Errors that are not API errors
// become 503 when the database is unavailable and 500 otherwise; the 500's
// detail goes to the log, not the client.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	e := apiError(r.Context(), log, err)
	status := e.Status
	if status == 0 {
		status = HTTPStatus(e.Code)
	}
	if status == 0 {
		status = http.StatusInternalServerError
	}
	if status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", strconv.Itoa(unavailableRetryAfter))
	}
	// Messages quote input cut short already (apperr.Clip); this bounds
	// one built some other way.
	writeJSON(w, status, wire.Error{Error: wire.ErrorDetail{Code: string(e.Code), Message: truncate(e.Message, maxMessage), CheckoutURL: e.CheckoutURL}})
}

// apiError is err as the API reports it (REST envelopes and tool errors
// alike): an API error as it is, a database outage as service_unavailable,
// anything else as internal, logged with the request id.
func apiError(ctx context.Context, log *slog.Logger, err error) *apperr.Error {
	e, ok := apperr.As(err)
	switch {
	case ok:
	case store.Unavailable(err):
		e = &apperr.Error{Code: apperr.ServiceUnavailable, Message: "the database is unavailable; retry shortly"}
	case errors.Is(err, context.Canceled) && ctx.Err() != nil, errors.Is(ctx.Err(), context.Canceled):
		// The client went away, and whatever failed did so for that;
		// nobody reads this response, and instrument logs it as the
		// client's cancellation.
		e = &apperr.Error{Code: apperr.ServiceUnavailable, Message: "request cancelled"}
	default:
		log.ErrorContext(ctx, "internal error", "err", truncate(err.Error(), maxLoggedError), "request_id", requestID(ctx))
		e = &apperr.Error{Code: apperr.Internal, Message: "internal error; request id " + requestID(ctx)}
	}
	return e
}

// readBody reads the request body up to limit bytes. A larger body is
// invalid_request with status 413, answered rather than dropped: when
// Content-Length says so, before reading any of it (a client that sent
// Expect: 100-continue is not asked for the body at all).
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	tooBig := &apperr.Error{Code: apperr.InvalidRequest, Status: http.StatusRequestEntityTooLarge,
		Message: "request body exceeds " + strconv.FormatInt(limit, 10) + " bytes"}
	if r.ContentLength > limit {
		dropBody(w, r)
		return nil, tooBig
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return nil, tooBig
		}
		return nil, apperr.New(apperr.InvalidJSON, "could not read request body: %v", err)
	}
	return body, nil
}
