package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/url"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/store"
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
	return form, formText(form)
}

// formText refuses parameters that are not valid text (invalid UTF-8, NUL):
// no client, code or token can be named by them, and PostgreSQL would
// refuse them as text.
func formText(form url.Values) error {
	for k, vs := range form {
		if p := fields.TextProblem(k); p != "" {
			return oerr(InvalidRequest, "a parameter name %s", p)
		}
		for _, v := range vs {
			if p := fields.TextProblem(v); p != "" {
				return oerr(InvalidRequest, "%s %s", clip(k), p)
			}
		}
	}
	return nil
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

// Token requests read, check in Go, then make one conditional write that
// commits on its own: spending the code (or refresh token) only if nobody
// spent it meanwhile, and creating what it issues in the same statement.
// Two requests racing with one secret cannot both win: the loser's write
// matches no row, which is handled as the replay it is.

// pairValues is the VALUES list of a new access and refresh token pair, in
// the argument positions pairArgs fills from $3.
const pairValues = `(VALUES ($3::bytea, 'access', $5::text[], $7::bigint), ($4::bytea, 'refresh', $6::text[], $8::bigint))
	AS v (token_hash, kind, scopes, secs)`

// pairArgs makes an access token carrying scopes and a refresh token
// carrying the grant's scopes (a narrowed refresh narrows the access token
// only, RFC 6749 §6); args are $3 to $8 of pairValues.
func (s *Service) pairArgs(scopes, granted []string) (TokenResponse, []any) {
	access, refresh := newSecret(AccessTokenPrefix), newSecret(RefreshTokenPrefix)
	out := TokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: seconds(s.accessTTL()), RefreshToken: refresh, Scope: ScopeString(scopes)}
	return out, []any{hashSecret(access), hashSecret(refresh), pq.StringArray(scopes), pq.StringArray(granted), seconds(s.accessTTL()), seconds(s.refreshTTL())}
}

// exchangeSQL spends a code and creates its grant and first token pair.
const exchangeSQL = `WITH c AS (
		UPDATE oauth_codes SET used_at = now(), grant_id = $2 WHERE code_hash = $1 AND used_at IS NULL
		RETURNING merchant_id, mode, key_id, client_id, scopes, resource),
	g AS (INSERT INTO oauth_grants (merchant_id, mode, id, key_id, client_id, scopes, resource)
		SELECT merchant_id, mode, $2, key_id, client_id, scopes, resource FROM c RETURNING merchant_id, id),
	t AS (INSERT INTO oauth_tokens (token_hash, merchant_id, grant_id, kind, scopes, expires_at)
		SELECT v.token_hash, g.merchant_id, g.id, v.kind, v.scopes, now() + make_interval(secs => v.secs) FROM g, ` + pairValues + `
		RETURNING 1)
	SELECT count(*) FROM t`

func (s *Service) exchangeCode(ctx context.Context, r TokenRequest) (TokenResponse, error) {
	switch {
	case r.Code == "":
		return TokenResponse{}, oerr(InvalidRequest, "code is required")
	case r.CodeVerifier == "":
		return TokenResponse{}, oerr(InvalidRequest, "code_verifier is required (PKCE)")
	case !hasShape(r.Code, CodePrefix):
		return TokenResponse{}, oerr(InvalidGrant, "the authorization code is not valid")
	}
	hash := hashSecret(r.Code)
	var c codeRow
	err := s.DB.GetContext(ctx, &c, `SELECT c.merchant_id, c.client_id, c.redirect_uri, c.redirect_uri_given,
		c.code_challenge, c.resource, c.scopes, c.expires_at <= now() AS expired, c.used_at IS NOT NULL AS used, c.grant_id,
		k.revoked_at IS NOT NULL AS key_revoked, o.revoked_at IS NOT NULL AS client_revoked
		FROM oauth_codes c JOIN api_keys k ON k.id = c.key_id JOIN oauth_clients o ON o.id = c.client_id
		WHERE c.code_hash = $1`, hash)
	if store.NotFound(err) {
		return TokenResponse{}, oerr(InvalidGrant, "the authorization code is not valid")
	}
	if err != nil {
		return TokenResponse{}, store.Translate(err)
	}
	if c.Used {
		return TokenResponse{}, s.codeReplayed(ctx, hash)
	}
	if e := checkCode(c, r); e != nil {
		return TokenResponse{}, e
	}
	out, args := s.pairArgs(c.Scopes, c.Scopes)
	var n int
	if err := s.DB.GetContext(ctx, &n, exchangeSQL, append([]any{hash, id.New("ogr")}, args...)...); err != nil {
		return TokenResponse{}, store.Translate(err)
	}
	if n == 0 {
		return TokenResponse{}, s.codeReplayed(ctx, hash)
	}
	return out, nil
}

// codeReplayed refuses a code presented again: it may have been stolen, so
// what its first exchange issued is revoked (RFC 6749 §4.1.2).
func (s *Service) codeReplayed(ctx context.Context, hash []byte) error {
	var c struct {
		MerchantID string  `db:"merchant_id"`
		GrantID    *string `db:"grant_id"`
	}
	if err := s.DB.GetContext(ctx, &c, `SELECT merchant_id, grant_id FROM oauth_codes WHERE code_hash = $1`, hash); err != nil && !store.NotFound(err) {
		return store.Translate(err)
	}
	if c.GrantID != nil {
		if err := revokeGrant(ctx, s.DB, c.MerchantID, *c.GrantID, "code_replay"); err != nil {
			return store.Translate(err)
		}
	}
	return oerr(InvalidGrant, "the authorization code was already used; the tokens it issued are revoked")
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
