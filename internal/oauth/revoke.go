package oauth

import (
	"context"

	"github.com/tollgatehq/tollgate/internal/store"
)

// revokeGrant ends every token of a grant; a grant revoked already keeps
// its first reason.
func revokeGrant(ctx context.Context, q store.Querier, merchantID, grantID, reason string) error {
	_, err := q.ExecContext(ctx, `UPDATE oauth_grants SET revoked_at = coalesce(revoked_at, now()),
		revoked_reason = coalesce(revoked_reason, $3) WHERE merchant_id = $1 AND id = $2`, merchantID, grantID, reason)
	return err
}

// RevocationRequest is an RFC 7009 revocation request.
type RevocationRequest struct {
	Token         string
	TokenTypeHint string
	ClientID      string
}

// ParseRevocationRequest decodes a form-encoded revocation request body.
// Fails with invalid_request when token is missing, a parameter repeats or
// the body is not a form.
func ParseRevocationRequest(body []byte) (RevocationRequest, error) {
	form, err := parseForm(body)
	if err != nil {
		return RevocationRequest{}, err
	}
	r := RevocationRequest{Token: form.Get("token"), TokenTypeHint: form.Get("token_type_hint"), ClientID: form.Get("client_id")}
	if r.Token == "" {
		return r, oerr(InvalidRequest, "token is required")
	}
	return r, nil
}

// Revoke revokes a token (RFC 7009): a refresh token ends its whole grant,
// an access token itself. An unknown or malformed token is not an error
// (§2.2). When the request names a client, the token must be that client's:
// otherwise it fails with unauthorized_client and nothing is revoked.
func (s *Service) Revoke(ctx context.Context, r RevocationRequest) error {
	if !hasShape(r.Token, AccessTokenPrefix) && !hasShape(r.Token, RefreshTokenPrefix) {
		return nil
	}
	var t struct {
		MerchantID string `db:"merchant_id"`
		GrantID    string `db:"grant_id"`
		Kind       string `db:"kind"`
		ClientID   string `db:"client_id"`
	}
	err := s.DB.GetContext(ctx, &t, `SELECT t.merchant_id, t.grant_id, t.kind, g.client_id FROM oauth_tokens t
		JOIN oauth_grants g ON g.merchant_id = t.merchant_id AND g.id = t.grant_id WHERE t.token_hash = $1`, hashSecret(r.Token))
	if store.NotFound(err) {
		return nil
	}
	if err != nil {
		return store.Translate(err)
	}
	if r.ClientID != "" && r.ClientID != t.ClientID {
		return oerr(UnauthorizedClient, "the token was issued to another client")
	}
	if t.Kind == "refresh" {
		return store.Translate(revokeGrant(ctx, s.DB, t.MerchantID, t.GrantID, "revoked_by_client"))
	}
	_, err = s.DB.ExecContext(ctx, `UPDATE oauth_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE token_hash = $1`, hashSecret(r.Token))
	return store.Translate(err)
}
