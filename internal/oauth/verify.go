package oauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// Why an access token is refused. Each is answered 401 with
// `WWW-Authenticate: Bearer error="invalid_token"`; they differ in the
// description the client gets.
var (
	// ErrInvalidToken: malformed, unknown, or not an access token.
	ErrInvalidToken = errors.New("the access token is not valid")
	// ErrExpiredToken: past its lifetime; the client refreshes.
	ErrExpiredToken = errors.New("the access token has expired")
	// ErrRevokedToken: the token, its grant, its client or the API key
	// that consented has been revoked.
	ErrRevokedToken = errors.New("the access token has been revoked")
	// ErrWrongAudience: issued for another resource (RFC 8707).
	ErrWrongAudience = errors.New("the access token was issued for another resource")
)

// Grant is who a request made with an access token acts for: the merchant
// and mode of the API key that consented, through one client, with scopes.
type Grant struct {
	ID       string
	Scope    tenant.Scope
	KeyID    string
	ClientID string
	Scopes   []string
	// ExpiresAt is when the access token expires.
	ExpiresAt time.Time
	// Ahead is how far the merchant's test clock runs ahead of the wall
	// clock (test mode only), as for an API key.
	Ahead time.Duration
}

// Has reports whether the grant includes scope.
func (g Grant) Has(scope string) bool { return slices.Contains(g.Scopes, scope) }

// verifyQuery looks an access token up by its hash with everything that can
// end it: a global lookup, like an API key's.
const verifyQuery = `SELECT t.token_hash, t.kind, t.scopes, t.expires_at, t.expires_at <= now() AS expired,
	(t.revoked_at IS NOT NULL OR g.revoked_at IS NOT NULL OR k.revoked_at IS NOT NULL OR o.revoked_at IS NOT NULL) AS revoked,
	g.id AS grant_id, g.merchant_id, g.mode, g.key_id, g.client_id, g.resource, coalesce(c.ahead_us, 0) AS ahead_us
	FROM oauth_tokens t
	JOIN oauth_grants g ON g.merchant_id = t.merchant_id AND g.id = t.grant_id
	JOIN api_keys k ON k.id = g.key_id
	JOIN oauth_clients o ON o.id = g.client_id
	LEFT JOIN test_clocks c ON c.merchant_id = g.merchant_id AND g.mode = 'test'
	WHERE t.token_hash = $1`

type verifyRow struct {
	Hash       []byte         `db:"token_hash"`
	Kind       string         `db:"kind"`
	Scopes     pq.StringArray `db:"scopes"`
	ExpiresAt  time.Time      `db:"expires_at"`
	Expired    bool           `db:"expired"`
	Revoked    bool           `db:"revoked"`
	GrantID    string         `db:"grant_id"`
	MerchantID string         `db:"merchant_id"`
	Mode       tenant.Mode    `db:"mode"`
	KeyID      string         `db:"key_id"`
	ClientID   string         `db:"client_id"`
	Resource   string         `db:"resource"`
	AheadUS    int64          `db:"ahead_us"`
}

// Authenticate verifies an access token presented to resource and returns
// its grant. It fails with ErrInvalidToken, ErrExpiredToken,
// ErrRevokedToken or ErrWrongAudience, or service_unavailable when the
// database is down. Nothing is cached: a revocation (of the token, its
// grant, its client or its API key) applies to the very next request.
func Authenticate(ctx context.Context, q store.Querier, token, resource string) (Grant, error) {
	return verify(token, resource, func(hash []byte, row *verifyRow) error { return q.GetContext(ctx, row, verifyQuery, hash) })
}

// Authenticate is the package-level Authenticate for s.Resource, over a
// statement prepared once per Service (the lookup runs on every tool call).
func (s *Service) Authenticate(ctx context.Context, token string) (Grant, error) {
	return verify(token, s.Resource, func(hash []byte, row *verifyRow) error {
		stmt, err := s.prepared(ctx)
		if err != nil {
			return err
		}
		return stmt.GetContext(ctx, row, hash)
	})
}

func (s *Service) prepared(ctx context.Context) (*sqlx.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stmt == nil {
		stmt, err := s.DB.PreparexContext(ctx, verifyQuery)
		if err != nil {
			return nil, err
		}
		s.stmt = stmt
	}
	return s.stmt, nil
}

func verify(token, resource string, lookup func(hash []byte, row *verifyRow) error) (Grant, error) {
	if !hasShape(token, AccessTokenPrefix) {
		return Grant{}, ErrInvalidToken
	}
	hash := hashSecret(token)
	var row verifyRow
	err := lookup(hash, &row)
	if store.NotFound(err) {
		return Grant{}, ErrInvalidToken
	}
	if err != nil {
		return Grant{}, store.Translate(err)
	}
	switch {
	case subtle.ConstantTimeCompare(row.Hash, hash) != 1 || row.Kind != "access":
		return Grant{}, ErrInvalidToken
	case row.Revoked:
		return Grant{}, ErrRevokedToken
	case row.Expired:
		return Grant{}, ErrExpiredToken
	case row.Resource != resource:
		return Grant{}, ErrWrongAudience
	}
	return Grant{
		ID: row.GrantID, Scope: tenant.Scope{MerchantID: row.MerchantID, Mode: row.Mode}, KeyID: row.KeyID,
		ClientID: row.ClientID, Scopes: row.Scopes, ExpiresAt: row.ExpiresAt, Ahead: time.Duration(row.AheadUS) * time.Microsecond,
	}, nil
}

// IsTokenError reports whether err is one of the reasons an access token is
// refused (rather than, say, the database being down).
func IsTokenError(err error) bool {
	return errors.Is(err, ErrInvalidToken) || errors.Is(err, ErrExpiredToken) ||
		errors.Is(err, ErrRevokedToken) || errors.Is(err, ErrWrongAudience)
}

// LooksLikeAccessToken reports whether a bearer credential is meant for
// this package (its prefix), as opposed to a static API key.
func LooksLikeAccessToken(token string) bool {
	return len(token) >= len(AccessTokenPrefix) && token[:len(AccessTokenPrefix)] == AccessTokenPrefix
}
