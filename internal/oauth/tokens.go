package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/url"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// TokenRequest is a token endpoint request (RFC 6749 §4.1.3 and §6, with
// PKCE's code_verifier and RFC 8707's resource). An empty parameter counts
// as absent.
type TokenRequest struct {
	GrantType    string
	Code         string
	RedirectURI  string
	CodeVerifier string
	ClientID     string
	RefreshToken string
	Scope        string
	Resource     string
}

// MaxTokenRequestBytes bounds a token or revocation request body.
const MaxTokenRequestBytes = 8 << 10

// ParseTokenRequest decodes a form-encoded token request body. Fails with
// invalid_request when the body is not a form, a parameter is given twice or
// grant_type is missing, and unsupported_grant_type for a grant other than
// authorization_code and refresh_token.
func ParseTokenRequest(body []byte) (TokenRequest, error) {
	form, err := parseForm(body)
	if err != nil {
		return TokenRequest{}, err
	}
	r := TokenRequest{
		GrantType: form.Get("grant_type"), Code: form.Get("code"), RedirectURI: form.Get("redirect_uri"),
		CodeVerifier: form.Get("code_verifier"), ClientID: form.Get("client_id"), RefreshToken: form.Get("refresh_token"),
		Scope: form.Get("scope"), Resource: form.Get("resource"),
	}
	switch r.GrantType {
	case "authorization_code", "refresh_token":
		return r, nil
	case "":
		return r, oerr(InvalidRequest, "grant_type is required")
	}
	return r, oerr(UnsupportedGrantType, "grant_type must be authorization_code or refresh_token")
}

// parseForm decodes a form body where no parameter may repeat (RFC 6749 §3.2).
func parseForm(body []byte) (url.Values, error) {
	if len(body) > MaxTokenRequestBytes {
		return nil, oerr(InvalidRequest, "the request body exceeds %d bytes", MaxTokenRequestBytes)
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, oerr(InvalidRequest, "the body must be application/x-www-form-urlencoded")
	}
	for k, vs := range form {
		if len(vs) > 1 {
			return nil, oerr(InvalidRequest, "%s is given more than once", clip(k))
		}
	}
	return form, nil
}

// TokenResponse is a successful token endpoint answer (RFC 6749 §5.1).
type TokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

// Token answers a token request: it exchanges an authorization code or
// rotates a refresh token. Fails with invalid_request (missing client_id,
// code, code_verifier or refresh_token), invalid_grant (unknown, expired,
// spent or revoked code or refresh token, wrong client, redirect_uri or code
// verifier, revoked key or client), invalid_target and invalid_scope.
func (s *Service) Token(ctx context.Context, r TokenRequest) (TokenResponse, error) {
	if r.ClientID == "" {
		return TokenResponse{}, oerr(InvalidRequest, "client_id is required")
	}
	switch r.GrantType {
	case "authorization_code":
		return s.exchangeCode(ctx, r)
	case "refresh_token":
		return s.refresh(ctx, r)
	}
	return TokenResponse{}, oerr(UnsupportedGrantType, "grant_type must be authorization_code or refresh_token")
}

type codeRow struct {
	MerchantID       string         `db:"merchant_id"`
	Mode             tenant.Mode    `db:"mode"`
	KeyID            string         `db:"key_id"`
	ClientID         string         `db:"client_id"`
	RedirectURI      string         `db:"redirect_uri"`
	RedirectURIGiven bool           `db:"redirect_uri_given"`
	CodeChallenge    string         `db:"code_challenge"`
	Resource         string         `db:"resource"`
	Scopes           pq.StringArray `db:"scopes"`
	Expired          bool           `db:"expired"`
	Used             bool           `db:"used"`
	GrantID          *string        `db:"grant_id"`
	KeyRevoked       bool           `db:"key_revoked"`
	ClientRevoked    bool           `db:"client_revoked"`
}

func (s *Service) exchangeCode(ctx context.Context, r TokenRequest) (TokenResponse, error) {
	switch {
	case r.Code == "":
		return TokenResponse{}, oerr(InvalidRequest, "code is required")
	case r.CodeVerifier == "":
		return TokenResponse{}, oerr(InvalidRequest, "code_verifier is required (PKCE)")
	case !hasShape(r.Code, CodePrefix):
		return TokenResponse{}, oerr(InvalidGrant, "the authorization code is not valid")
	}
	var out TokenResponse
	var refusal *Error
	err := store.Tx(ctx, s.DB, func(tx *sqlx.Tx) error {
		var c codeRow
		err := tx.GetContext(ctx, &c, `SELECT c.merchant_id, c.mode, c.key_id, c.client_id, c.redirect_uri, c.redirect_uri_given,
			c.code_challenge, c.resource, c.scopes, c.expires_at <= now() AS expired, c.used_at IS NOT NULL AS used, c.grant_id,
			k.revoked_at IS NOT NULL AS key_revoked, o.revoked_at IS NOT NULL AS client_revoked
			FROM oauth_codes c JOIN api_keys k ON k.id = c.key_id JOIN oauth_clients o ON o.id = c.client_id
			WHERE c.code_hash = $1 FOR UPDATE OF c`, hashSecret(r.Code))
		if store.NotFound(err) {
			refusal = oerr(InvalidGrant, "the authorization code is not valid")
			return nil
		}
		if err != nil {
			return err
		}
		if c.Used {
			// A replayed code may have been stolen: what it issued is
			// revoked (RFC 6749 §4.1.2).
			refusal = oerr(InvalidGrant, "the authorization code was already used; the tokens it issued are revoked")
			if c.GrantID != nil {
				return revokeGrant(ctx, tx, c.MerchantID, *c.GrantID, "code_replay")
			}
			return nil
		}
		if refusal = checkCode(c, r); refusal != nil {
			return nil
		}
		grantID := id.New("ogr")
		if _, err := tx.ExecContext(ctx, `INSERT INTO oauth_grants (merchant_id, mode, id, key_id, client_id, scopes, resource)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, c.MerchantID, c.Mode, grantID, c.KeyID, c.ClientID, c.Scopes, c.Resource); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE oauth_codes SET used_at = now(), grant_id = $2 WHERE code_hash = $1`, hashSecret(r.Code), grantID); err != nil {
			return err
		}
		out, err = s.issue(ctx, tx, c.MerchantID, grantID, c.Scopes, c.Scopes)
		return err
	})
	if err != nil {
		return TokenResponse{}, err
	}
	if refusal != nil {
		return TokenResponse{}, refusal
	}
	s.pruneTokens(ctx)
	return out, nil
}

// checkCode checks a live code against the token request presenting it.
func checkCode(c codeRow, r TokenRequest) *Error {
	switch {
	case c.Expired:
		return oerr(InvalidGrant, "the authorization code has expired")
	case r.ClientID != c.ClientID:
		return oerr(InvalidGrant, "the authorization code was issued to another client")
	case r.RedirectURI != "" && r.RedirectURI != c.RedirectURI:
		return oerr(InvalidGrant, "redirect_uri differs from the authorization request's")
	case r.RedirectURI == "" && c.RedirectURIGiven:
		return oerr(InvalidGrant, "redirect_uri is required: the authorization request named one")
	case !VerifyPKCE(r.CodeVerifier, c.CodeChallenge):
		return oerr(InvalidGrant, "code_verifier does not match the code_challenge")
	case r.Resource != "" && r.Resource != c.Resource:
		return oerr(InvalidTarget, "resource differs from the one the code was issued for (%s)", c.Resource)
	case c.KeyRevoked:
		return oerr(InvalidGrant, "the API key that authorized this client has been revoked")
	case c.ClientRevoked:
		return oerr(InvalidGrant, "the client has been revoked")
	}
	return nil
}

// VerifyPKCE reports whether verifier (43 to 128 unreserved characters,
// RFC 7636 §4.1) hashes to challenge under S256.
func VerifyPKCE(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	for _, b := range []byte(verifier) {
		if !(b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-' || b == '.' || b == '_' || b == '~') {
			return false
		}
	}
	sum := sha256.Sum256([]byte(verifier))
	want := base64.RawURLEncoding.EncodeToString(sum[:])
	return subtle.ConstantTimeCompare([]byte(want), []byte(challenge)) == 1
}

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
	var out TokenResponse
	var refusal *Error
	err := store.Tx(ctx, s.DB, func(tx *sqlx.Tx) error {
		var t refreshRow
		err := tx.GetContext(ctx, &t, `SELECT t.merchant_id, t.grant_id, t.kind, g.scopes, t.expires_at <= now() AS expired,
			t.used_at IS NOT NULL AS used, (t.revoked_at IS NOT NULL OR g.revoked_at IS NOT NULL) AS revoked,
			g.client_id, g.resource, k.revoked_at IS NOT NULL AS key_revoked, o.revoked_at IS NOT NULL AS client_revoked
			FROM oauth_tokens t
			JOIN oauth_grants g ON g.merchant_id = t.merchant_id AND g.id = t.grant_id
			JOIN api_keys k ON k.id = g.key_id JOIN oauth_clients o ON o.id = g.client_id
			WHERE t.token_hash = $1 FOR UPDATE OF t`, hashSecret(r.RefreshToken))
		if store.NotFound(err) || err == nil && t.Kind != "refresh" {
			refusal = oerr(InvalidGrant, "the refresh token is not valid")
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case r.ClientID != t.ClientID:
			refusal = oerr(InvalidGrant, "the refresh token was issued to another client")
			return nil
		case t.Revoked:
			refusal = oerr(InvalidGrant, "the refresh token has been revoked")
			return nil
		case t.Used:
			refusal = oerr(InvalidGrant, "the refresh token was already used; every token of this grant is revoked")
			return revokeGrant(ctx, tx, t.MerchantID, t.GrantID, "refresh_token_reuse")
		case t.Expired:
			refusal = oerr(InvalidGrant, "the refresh token has expired")
			return nil
		case t.KeyRevoked:
			refusal = oerr(InvalidGrant, "the API key that authorized this client has been revoked")
			return nil
		case t.ClientRevoked:
			refusal = oerr(InvalidGrant, "the client has been revoked")
			return nil
		case r.Resource != "" && r.Resource != t.Resource:
			refusal = oerr(InvalidTarget, "resource differs from the one the grant is for (%s)", t.Resource)
			return nil
		}
		scopes := []string(t.Scopes)
		if r.Scope != "" {
			// A client may narrow a refresh, never widen it (RFC 6749 §6);
			// names of no scope of ours are ignored, as at authorization.
			asked := strings.Fields(r.Scope)
			var narrowed []string
			for _, sc := range Scopes() {
				if !slices.Contains(asked, sc) {
					continue
				}
				if !slices.Contains(scopes, sc) {
					refusal = oerr(InvalidScope, "scope %s was not granted", sc)
					return nil
				}
				narrowed = append(narrowed, sc)
			}
			if len(narrowed) == 0 {
				refusal = oerr(InvalidScope, "scope must include billing:read or billing:write")
				return nil
			}
			scopes = narrowed
		}
		if _, err := tx.ExecContext(ctx, `UPDATE oauth_tokens SET used_at = now() WHERE token_hash = $1`, hashSecret(r.RefreshToken)); err != nil {
			return err
		}
		out, err = s.issue(ctx, tx, t.MerchantID, t.GrantID, scopes, t.Scopes)
		return err
	})
	if err != nil {
		return TokenResponse{}, err
	}
	if refusal != nil {
		return TokenResponse{}, refusal
	}
	return out, nil
}

// issue makes an access token carrying scopes and a refresh token carrying
// the grant's scopes (a narrowed refresh narrows the access token only, RFC
// 6749 §6).
func (s *Service) issue(ctx context.Context, tx *sqlx.Tx, merchantID, grantID string, scopes, granted []string) (TokenResponse, error) {
	access, refresh := newSecret(AccessTokenPrefix), newSecret(RefreshTokenPrefix)
	_, err := tx.ExecContext(ctx, `INSERT INTO oauth_tokens (token_hash, merchant_id, grant_id, kind, scopes, expires_at) VALUES
		($1, $3, $4, 'access', $5, now() + make_interval(secs => $7)),
		($2, $3, $4, 'refresh', $6, now() + make_interval(secs => $8))`,
		hashSecret(access), hashSecret(refresh), merchantID, grantID, pq.StringArray(scopes), pq.StringArray(granted),
		seconds(s.accessTTL()), seconds(s.refreshTTL()))
	if err != nil {
		return TokenResponse{}, err
	}
	return TokenResponse{
		AccessToken: access, TokenType: "Bearer", ExpiresIn: seconds(s.accessTTL()),
		RefreshToken: refresh, Scope: ScopeString(scopes),
	}, nil
}

// pruneTokens drops a batch of tokens that expired over a day ago. Spent
// refresh tokens are kept until then so that their reuse is still detected
// (and revokes the grant) for as long as they would have been valid.
func (s *Service) pruneTokens(ctx context.Context) {
	_, _ = s.DB.ExecContext(ctx, `DELETE FROM oauth_tokens WHERE token_hash IN
		(SELECT token_hash FROM oauth_tokens WHERE expires_at < now() - interval '1 day' LIMIT 500)`)
}

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
