// Package webhooks owns merchants' webhook endpoints: registration with the
// HTTPS rule and a whsec_ signing secret (the dashboard's side, run by
// `tollgate admin webhook`). Deliveries build on it.
package webhooks

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/ssrf"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Endpoint is a registered receiver of event deliveries.
type Endpoint struct {
	MerchantID    string         `db:"merchant_id" json:"merchant_id"`
	Mode          tenant.Mode    `db:"mode" json:"mode"`
	ID            string         `db:"id" json:"id"`
	URL           string         `db:"url" json:"url"`
	Secret        string         `db:"secret" json:"-"`
	EventTypes    pq.StringArray `db:"event_types" json:"event_types"`
	AllowInsecure bool           `db:"allow_insecure" json:"allow_insecure"`
	Enabled       bool           `db:"enabled" json:"enabled"`
	// DisabledReason and DisabledAt say why and when a disabled endpoint
	// was disabled (an operator, or a 410 Gone answer).
	DisabledReason *string    `db:"disabled_reason" json:"disabled_reason"`
	DisabledAt     *time.Time `db:"disabled_at" json:"disabled_at"`
	CreatedAt      time.Time  `db:"created_at" json:"created_at"`
}

// Input registers an endpoint.
type Input struct {
	MerchantID string
	Mode       tenant.Mode
	URL        string
	// EventTypes limits deliveries to these types; empty means all.
	EventTypes []string
	// AllowInsecure admits http:// URLs (local development).
	AllowInsecure bool
}

// ValidateURL enforces an absolute URL with a host and a valid port, and
// unless allowInsecure, HTTPS to a host that is not a loopback, private,
// link-local, metadata or otherwise non-public address in any spelling
// (package ssrf judges it; names are judged at delivery, once resolved).
// Errors are invalid_request naming url.
func ValidateURL(raw string, allowInsecure bool) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return apperr.Field("url", "must be an absolute https:// URL")
	}
	if u.User != nil {
		return apperr.Field("url", "must not carry credentials")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return apperr.Field("url", "port %s is not a port number (1 to 65535)", p)
		}
	}
	if allowInsecure {
		return nil
	}
	if u.Scheme != "https" {
		return apperr.Field("url", "must use https (pass --allow-insecure-webhooks for local development)")
	}
	if err := ssrf.CheckHost(u.Hostname()); err != nil {
		return apperr.Field("url", "%s", strings.TrimPrefix(err.Error(), ssrf.ErrRefused.Error()+": "))
	}
	return nil
}

const columns = `merchant_id, mode, id, url, secret, event_types, allow_insecure, enabled, disabled_reason, disabled_at, created_at`

// Reasons an endpoint is disabled.
const (
	DisabledByOperator = "disabled by an operator"
	DisabledGone       = "the endpoint answered 410 Gone"
)

// Add registers an endpoint and returns it with its new secret (in
// Endpoint.Secret), which the caller shows once.
func Add(ctx context.Context, q store.Querier, in Input) (Endpoint, error) {
	if !in.Mode.Valid() {
		return Endpoint{}, apperr.Field("mode", "must be test or live")
	}
	if err := ValidateURL(in.URL, in.AllowInsecure); err != nil {
		return Endpoint{}, err
	}
	for _, t := range in.EventTypes {
		if strings.TrimSpace(t) == "" {
			return Endpoint{}, apperr.Field("events", "event types must not be empty")
		}
	}
	ok, err := auth.MerchantExists(ctx, q, in.MerchantID)
	if err != nil {
		return Endpoint{}, err
	}
	if !ok {
		return Endpoint{}, apperr.Field("merchant", "no merchant %q", in.MerchantID)
	}
	types := in.EventTypes
	if types == nil {
		types = []string{}
	}
	var e Endpoint
	err = q.GetContext(ctx, &e, `INSERT INTO webhook_endpoints (merchant_id, mode, id, url, secret, event_types, allow_insecure)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING `+columns,
		in.MerchantID, in.Mode, id.New("we"), in.URL, NewSecret(), pq.StringArray(types), in.AllowInsecure)
	return e, store.Translate(err)
}

// NewSecret returns a fresh whsec_ signing secret.
func NewSecret() string { return "whsec_" + id.Random(43) }

// List returns the endpoints of a merchant (every merchant's when
// merchantID is empty), excluding removed ones, oldest first.
func List(ctx context.Context, q store.Querier, merchantID string) ([]Endpoint, error) {
	es := []Endpoint{}
	err := q.SelectContext(ctx, &es, `SELECT `+columns+` FROM webhook_endpoints
		WHERE ($1 = '' OR merchant_id = $1) AND removed_at IS NULL ORDER BY created_at, id`, merchantID)
	return es, store.Translate(err)
}

// Remove removes the endpoint; its history is kept, and its pending
// deliveries are marked failed. Unknown ids are invalid_request.
func Remove(ctx context.Context, q store.Querier, endpointID string) error {
	if err := update(ctx, q, endpointID, `removed_at = now(), enabled = false`); err != nil {
		return err
	}
	_, err := q.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'failed', last_error = 'endpoint removed', updated_at = now()
		WHERE endpoint_id = $1 AND status = 'pending'`, endpointID)
	return store.Translate(err)
}

// Get returns one endpoint that is not removed. An unknown id is
// invalid_request.
func Get(ctx context.Context, q store.Querier, endpointID string) (Endpoint, error) {
	var e Endpoint
	err := q.GetContext(ctx, &e, `SELECT `+columns+` FROM webhook_endpoints WHERE id = $1 AND removed_at IS NULL`, endpointID)
	if store.NotFound(err) {
		return e, apperr.Field("endpoint", "no webhook endpoint %q", endpointID)
	}
	return e, store.Translate(err)
}

// SetEnabled enables the endpoint (clearing why it was disabled) or
// disables it as an operator's decision.
func SetEnabled(ctx context.Context, q store.Querier, endpointID string, enabled bool) error {
	if enabled {
		return update(ctx, q, endpointID, `enabled = true, disabled_reason = NULL, disabled_at = NULL`)
	}
	return update(ctx, q, endpointID, `enabled = false, disabled_reason = '`+DisabledByOperator+`', disabled_at = now()`)
}

func update(ctx context.Context, q store.Querier, endpointID, set string) error {
	res, err := q.ExecContext(ctx, `UPDATE webhook_endpoints SET `+set+` WHERE id = $1 AND removed_at IS NULL`, endpointID)
	if err != nil {
		return store.Translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return apperr.Field("endpoint", "no webhook endpoint %q", endpointID)
	}
	return nil
}
