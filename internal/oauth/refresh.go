package oauth

import (
	"context"
	"slices"
	"strings"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/store"
)

type refreshRow struct {
	MerchantID    string         `db:"merchant_id"`
	GrantID       string         `db:"grant_id"`
	Kind          string         `db:"kind"`
	Scopes        pq.StringArray `db:"scopes"`
	Expired       bool           `db:"expired"`
	Used          bool           `db:"used"`
	Revoked       bool           `db:"revoked"`
	ClientID      string         `db:"client_id"`
	Resource      string         `db:"resource"`
	KeyRevoked    bool           `db:"key_revoked"`
	ClientRevoked bool           `db:"client_revoked"`
}

// rotateSQL spends a refresh token, if nobody has, and issues the next pair.
const rotateSQL = `WITH u AS (
		UPDATE oauth_tokens SET used_at = now() WHERE token_hash = $1 AND kind = 'refresh' AND grant_id = $2 AND used_at IS NULL
		RETURNING merchant_id, grant_id),
	t AS (INSERT INTO oauth_tokens (token_hash, merchant_id, grant_id, kind, scopes, expires_at)
		SELECT v.token_hash, u.merchant_id, u.grant_id, v.kind, v.scopes, now() + make_interval(secs => v.secs) FROM u, ` + pairValues + `
		RETURNING 1)
	SELECT count(*) FROM t`

// refresh rotates a refresh token: it is spent, and a new access and
// refresh token are issued. Presenting a spent refresh token again means two
// parties hold it; the whole grant is revoked (OAuth 2.1 §4.3.1).
func (s *Service) refresh(ctx context.Context, r TokenRequest) (TokenResponse, error) {
	if r.RefreshToken == "" {
		return TokenResponse{}, oerr(InvalidRequest, "refresh_token is required")
	}
	if !hasShape(r.RefreshToken, RefreshTokenPrefix) {
		return TokenResponse{}, oerr(InvalidGrant, "the refresh token is not valid")
	}
	hash := hashSecret(r.RefreshToken)
	var t refreshRow
	err := s.DB.GetContext(ctx, &t, `SELECT t.merchant_id, t.grant_id, t.kind, g.scopes, t.expires_at <= now() AS expired,
		t.used_at IS NOT NULL AS used, (t.revoked_at IS NOT NULL OR g.revoked_at IS NOT NULL) AS revoked,
		g.client_id, g.resource, k.revoked_at IS NOT NULL AS key_revoked, o.revoked_at IS NOT NULL AS client_revoked
		FROM oauth_tokens t
		JOIN oauth_grants g ON g.merchant_id = t.merchant_id AND g.id = t.grant_id
		JOIN api_keys k ON k.id = g.key_id JOIN oauth_clients o ON o.id = g.client_id
		WHERE t.token_hash = $1`, hash)
	if store.NotFound(err) || err == nil && t.Kind != "refresh" {
		return TokenResponse{}, oerr(InvalidGrant, "the refresh token is not valid")
	}
	if err != nil {
		return TokenResponse{}, store.Translate(err)
	}
	switch {
	case r.ClientID != t.ClientID:
		return TokenResponse{}, oerr(InvalidGrant, "the refresh token was issued to another client")
	case t.Revoked:
		return TokenResponse{}, oerr(InvalidGrant, "the refresh token has been revoked")
	case t.Used:
		return TokenResponse{}, s.refreshReused(ctx, t)
	case t.Expired:
		return TokenResponse{}, oerr(InvalidGrant, "the refresh token has expired")
	case t.KeyRevoked:
		return TokenResponse{}, oerr(InvalidGrant, "the API key that authorized this client has been revoked")
	case t.ClientRevoked:
		return TokenResponse{}, oerr(InvalidGrant, "the client has been revoked")
	case r.Resource != "" && r.Resource != t.Resource:
		return TokenResponse{}, oerr(InvalidTarget, "resource differs from the one the grant is for (%s)", t.Resource)
	}
	scopes, e := narrow(t.Scopes, r.Scope)
	if e != nil {
		return TokenResponse{}, e
	}
	out, args := s.pairArgs(scopes, t.Scopes)
	var n int
	if err := s.DB.GetContext(ctx, &n, rotateSQL, append([]any{hash, t.GrantID}, args...)...); err != nil {
		return TokenResponse{}, store.Translate(err)
	}
	if n == 0 {
		// Spent by a concurrent request between the read and the write.
		return TokenResponse{}, s.refreshReused(ctx, t)
	}
	return out, nil
}

// refreshReused revokes the grant of a refresh token presented twice.
func (s *Service) refreshReused(ctx context.Context, t refreshRow) error {
	if err := revokeGrant(ctx, s.DB, t.MerchantID, t.GrantID, "refresh_token_reuse"); err != nil {
		return store.Translate(err)
	}
	return oerr(InvalidGrant, "the refresh token was already used; every token of this grant is revoked")
}

// narrow applies a refresh request's scope parameter to the grant's scopes:
// a client may narrow a refresh, never widen it (RFC 6749 §6); names of no
// scope of ours are ignored, as at authorization.
func narrow(granted []string, scope string) ([]string, *Error) {
	if scope == "" {
		return granted, nil
	}
	asked := strings.Fields(scope)
	var out []string
	for _, sc := range Scopes() {
		if !slices.Contains(asked, sc) {
			continue
		}
		if !slices.Contains(granted, sc) {
			return nil, oerr(InvalidScope, "scope %s was not granted", sc)
		}
		out = append(out, sc)
	}
	if len(out) == 0 {
		return nil, oerr(InvalidScope, "scope must include billing:read or billing:write")
	}
	return out, nil
}
