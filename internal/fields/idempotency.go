package fields

import "github.com/tollgatehq/tollgate/internal/apperr"

// MergeIdempotencyKey combines a body's idempotency_key with a request's
// Idempotency-Key header (empty when absent): either may be given, and both
// must then agree, else invalid_request naming idempotency_key. Credits and
// meter events share the rule.
func MergeIdempotencyKey(body *string, header string) (*string, error) {
	switch {
	case header == "":
		return body, nil
	case body == nil:
		return &header, nil
	case *body != header:
		return nil, apperr.Field("idempotency_key", "differs from the Idempotency-Key header; send one or the other")
	}
	return body, nil
}
