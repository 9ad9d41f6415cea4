package oauth

import (
	"context"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// GrantInfo is a grant as the operator sees it: one consent and the chain of
// tokens it issued. Tokens themselves are never shown (only hashes exist).
type GrantInfo struct {
	ID            string         `db:"id" json:"id"`
	MerchantID    string         `db:"merchant_id" json:"merchant_id"`
	Mode          tenant.Mode    `db:"mode" json:"mode"`
	KeyID         string         `db:"key_id" json:"key_id"`
	ClientID      string         `db:"client_id" json:"client_id"`
	ClientName    string         `db:"client_name" json:"client_name"`
	Scopes        pq.StringArray `db:"scopes" json:"scopes"`
	Resource      string         `db:"resource" json:"resource"`
	CreatedAt     time.Time      `db:"created_at" json:"created_at"`
	LastIssuedAt  *time.Time     `db:"last_issued_at" json:"last_issued_at"`
	ExpiresAt     *time.Time     `db:"expires_at" json:"expires_at"`
	RevokedAt     *time.Time     `db:"revoked_at" json:"revoked_at"`
	RevokedReason *string        `db:"revoked_reason" json:"revoked_reason"`
	// Status is active, expired (no live refresh token left), revoked,
	// key_revoked or client_revoked.
	Status string `db:"status" json:"status"`
}

// GrantFilter narrows ListGrants; empty fields match everything.
type GrantFilter struct {
	MerchantID string
	ClientID   string
	Limit      int
}

// ListGrants returns grants, newest first, at most f.Limit (default 100).
func ListGrants(ctx context.Context, q store.Querier, f GrantFilter) ([]GrantInfo, error) {
	if f.Limit <= 0 {
		f.Limit = 100
	}
	gs := []GrantInfo{}
	err := q.SelectContext(ctx, &gs, `SELECT g.id, g.merchant_id, g.mode, g.key_id, g.client_id, o.client_name, g.scopes, g.resource,
		g.created_at, g.revoked_at, g.revoked_reason, t.last_issued_at, t.expires_at,
		CASE WHEN g.revoked_at IS NOT NULL THEN 'revoked'
		     WHEN k.revoked_at IS NOT NULL THEN 'key_revoked'
		     WHEN o.revoked_at IS NOT NULL THEN 'client_revoked'
		     WHEN t.expires_at IS NULL OR t.expires_at <= now() THEN 'expired'
		     ELSE 'active' END AS status
		FROM oauth_grants g
		JOIN api_keys k ON k.id = g.key_id
		JOIN oauth_clients o ON o.id = g.client_id
		LEFT JOIN LATERAL (SELECT max(created_at) AS last_issued_at,
			max(expires_at) FILTER (WHERE kind = 'refresh' AND used_at IS NULL) AS expires_at
			FROM oauth_tokens WHERE merchant_id = g.merchant_id AND grant_id = g.id) t ON true
		WHERE ($1 = '' OR g.merchant_id = $1) AND ($2 = '' OR g.client_id = $2)
		ORDER BY g.created_at DESC, g.seq DESC LIMIT $3`, f.MerchantID, f.ClientID, f.Limit)
	return gs, store.Translate(err)
}

// RevokeGrant revokes a grant: every token it issued stops working on its
// next use. Revoking twice is harmless; an unknown id is invalid_request.
func RevokeGrant(ctx context.Context, q store.Querier, grantID string) error {
	res, err := q.ExecContext(ctx, `UPDATE oauth_grants SET revoked_at = coalesce(revoked_at, now()),
		revoked_reason = coalesce(revoked_reason, 'revoked_by_operator') WHERE id = $1`, grantID)
	if err != nil {
		return store.Translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return apperr.Field("grant", "no OAuth grant %q", grantID)
	}
	return nil
}
