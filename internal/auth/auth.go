// Package auth owns merchants and their API keys: creation and revocation
// (the dashboard's operations, run by `tollgate admin`) and the lookup every
// API request makes. Only a SHA-256 hash of a key is stored; nothing is
// cached, so a revoked key fails on the very next request.
package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// keyChars is the number of random base62 characters in a key: 43 of them
// carry 256 bits, the "≥ 32 random bytes" of the design.
const keyChars = 43

// keyShaped reports whether token has a key's shape: sk_test_ or sk_live_
// and keyChars letters and digits. A loop, not a regular expression:
// every request checks its key, and the expression took twenty times as
// long.
func keyShaped(token string) bool {
	rest, ok := strings.CutPrefix(token, "sk_test_")
	if !ok {
		rest, ok = strings.CutPrefix(token, "sk_live_")
	}
	if !ok || len(rest) != keyChars {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// Merchant is an account.
type Merchant struct {
	ID        string    `db:"id" json:"id"`
	Name      string    `db:"name" json:"name"`
	CreatedAt time.Time `db:"created_at" json:"created_at"`
}

// Key is an API key's record; the secret itself is only returned by CreateKey.
type Key struct {
	ID         string      `db:"id" json:"id"`
	MerchantID string      `db:"merchant_id" json:"merchant_id"`
	Mode       tenant.Mode `db:"mode" json:"mode"`
	Hint       string      `db:"hint" json:"hint"`
	CreatedAt  time.Time   `db:"created_at" json:"created_at"`
	RevokedAt  *time.Time  `db:"revoked_at" json:"revoked_at"`
	LastUsedAt *time.Time  `db:"last_used_at" json:"last_used_at"`
}

// Principal is who an authenticated request acts for.
type Principal struct {
	tenant.Scope
	KeyID string
	// Ahead is how far the merchant's test clock runs ahead of the wall
	// clock (test mode only; zero otherwise).
	Ahead time.Duration
}

// maxMerchantName bounds a merchant's display name, shown on checkout pages.
const maxMerchantName = 100

// merchantName trims a display name and checks it: 1 to 100 characters of
// valid UTF-8 without control characters.
func merchantName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", apperr.Field("name", "is required")
	case !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl):
		return "", apperr.Field("name", "must be text without control characters")
	case utf8.RuneCountInString(name) > maxMerchantName:
		return "", apperr.Field("name", "must be at most %d characters", maxMerchantName)
	}
	return name, nil
}

// CreateMerchant creates a merchant named name.
func CreateMerchant(ctx context.Context, q store.Querier, name string) (Merchant, error) {
	name, err := merchantName(name)
	if err != nil {
		return Merchant{}, err
	}
	var m Merchant
	err = q.GetContext(ctx, &m, `INSERT INTO merchants (id, name) VALUES ($1, $2) RETURNING id, name, created_at`, id.New("mch"), name)
	return m, store.Translate(err)
}

// RenameMerchant sets the display name of merchant merchantID; checkout
// pages show it from their next request. An unknown merchant or a bad name
// is invalid_request.
func RenameMerchant(ctx context.Context, q store.Querier, merchantID, name string) (Merchant, error) {
	name, err := merchantName(name)
	if err != nil {
		return Merchant{}, err
	}
	var ms []Merchant
	err = q.SelectContext(ctx, &ms, `UPDATE merchants SET name = $2 WHERE id = $1 RETURNING id, name, created_at`, merchantID, name)
	if err != nil {
		return Merchant{}, store.Translate(err)
	}
	if len(ms) == 0 {
		return Merchant{}, apperr.Field("merchant", "no merchant %q", merchantID)
	}
	return ms[0], nil
}

// ListMerchants returns every merchant, oldest first.
func ListMerchants(ctx context.Context, q store.Querier) ([]Merchant, error) {
	ms := []Merchant{}
	err := q.SelectContext(ctx, &ms, `SELECT id, name, created_at FROM merchants ORDER BY created_at, id`)
	return ms, store.Translate(err)
}

// MerchantExists reports whether a merchant with id exists.
func MerchantExists(ctx context.Context, q store.Querier, merchantID string) (bool, error) {
	var ok bool
	err := q.GetContext(ctx, &ok, `SELECT EXISTS (SELECT 1 FROM merchants WHERE id = $1)`, merchantID)
	return ok, store.Translate(err)
}

// CreateKey makes a new secret key for the merchant in mode and returns its
// record and the full key, which is never available again. Fails with
// invalid_request when the merchant does not exist or mode is not test/live.
func CreateKey(ctx context.Context, q store.Querier, merchantID string, mode tenant.Mode) (Key, string, error) {
	if !mode.Valid() {
		return Key{}, "", apperr.Field("mode", "must be test or live")
	}
	ok, err := MerchantExists(ctx, q, merchantID)
	if err != nil {
		return Key{}, "", err
	}
	if !ok {
		return Key{}, "", apperr.Field("merchant", "no merchant %q", merchantID)
	}
	secret := "sk_" + string(mode) + "_" + id.Random(keyChars)
	hash := sha256.Sum256([]byte(secret))
	hint := secret[:len("sk_"+string(mode)+"_")+4] + "…" + secret[len(secret)-4:]
	var k Key
	err = q.GetContext(ctx, &k, `INSERT INTO api_keys (id, merchant_id, mode, key_hash, hint)
		VALUES ($1, $2, $3, $4, $5) RETURNING id, merchant_id, mode, hint, created_at, revoked_at, last_used_at`,
		id.New("key"), merchantID, mode, hash[:], hint)
	if err != nil {
		return Key{}, "", store.Translate(err)
	}
	return k, secret, nil
}

// ListKeys returns the merchant's keys (all merchants' when merchantID is
// empty), oldest first.
func ListKeys(ctx context.Context, q store.Querier, merchantID string) ([]Key, error) {
	ks := []Key{}
	err := q.SelectContext(ctx, &ks, `SELECT id, merchant_id, mode, hint, created_at, revoked_at, last_used_at FROM api_keys
		WHERE $1 = '' OR merchant_id = $1 ORDER BY created_at, id`, merchantID)
	return ks, store.Translate(err)
}

// RevokeKey revokes the key with keyID. Revoking twice is harmless; an
// unknown id is invalid_request.
func RevokeKey(ctx context.Context, q store.Querier, keyID string) error {
	res, err := q.ExecContext(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1`, keyID)
	if err != nil {
		return store.Translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return apperr.Field("key", "no API key %q", keyID)
	}
	return nil
}

// keyQuery looks a key up by its hash: a global lookup, the one query that
// does not filter on a merchant.
// The merchant's test clock comes with it, so reading the time costs no
// round trip of its own.
const keyQuery = `SELECT k.id, k.merchant_id, k.mode, k.key_hash, k.revoked_at IS NOT NULL AS revoked, coalesce(c.ahead_us, 0) AS ahead_us, k.last_used_at
	FROM api_keys k LEFT JOIN test_clocks c ON c.merchant_id = k.merchant_id AND k.mode = 'test'
	WHERE k.key_hash = $1`

// keyRow is a row of keyQuery and keysQuery.
type keyRow struct {
	ID         string
	MerchantID string
	Mode       tenant.Mode
	Hash       []byte
	Revoked    bool
	AheadUS    int64
	LastUsedAt *time.Time
}

// keyRows reads the rows of keyQuery or keysQuery field by field: every
// request makes a lookup, and sqlx's reflection cost it more than the scan.
func keyRows(rows *sql.Rows, err error) ([]keyRow, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []keyRow
	for rows.Next() {
		var r keyRow
		if err := rows.Scan(&r.ID, &r.MerchantID, (*string)(&r.Mode), &r.Hash, &r.Revoked, &r.AheadUS, &r.LastUsedAt); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// lastUsedStep is how stale a key's last_used_at may get before a request
// refreshes it: the dashboard shows it to the minute, and a write per
// request would cost every request a round trip.
const lastUsedStep = time.Minute

// stale reports whether a request at now should refresh the row's
// last_used_at.
func (r keyRow) stale(now time.Time) bool {
	return !r.Revoked && (r.LastUsedAt == nil || now.Sub(*r.LastUsedAt) >= lastUsedStep)
}

// touchKeys records that the keys with ids were used now. Two requests
// racing both write; the condition keeps it to one write a minute after.
func touchKeys(ctx context.Context, q store.Querier, ids []string) error {
	_, err := q.ExecContext(ctx, `UPDATE api_keys SET last_used_at = now()
		WHERE id = ANY($1) AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`, pq.StringArray(ids))
	return store.Translate(err)
}

// Authenticate resolves an Authorization header to a Principal. Every failure
// is unauthorized, its message saying which: "missing API key" (no header,
// or a scheme with no token), "malformed Authorization header" (not the
// Bearer scheme), "invalid API key" (a token that is not a key of ours,
// unknown or ill-shaped) or "revoked API key". A database outage is
// service_unavailable.
func Authenticate(ctx context.Context, q store.Querier, header string) (Principal, error) {
	return authenticate(header, func(hash []byte, row *keyRow) error {
		rows, err := keyRows(q.QueryContext(ctx, keyQuery, hash))
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			return sql.ErrNoRows
		}
		*row = rows[0]
		if row.stale(time.Now()) {
			_ = touchKeys(ctx, q, []string{row.ID}) // a use not recorded fails no request
		}
		return nil
	})
}

func authenticate(header string, lookup func(hash []byte, row *keyRow) error) (Principal, error) {
	header = strings.TrimSpace(header)
	token, ok := cutBearer(header + " ")
	raw := token
	token = strings.TrimSpace(token)
	switch {
	case token != "" && ok && (raw[0] == ' ' || raw[0] == '\t'):
		// "Bearer  key": one space separates scheme and token.
		return Principal{}, apperr.New(apperr.Unauthorized, "malformed Authorization header: one space between Bearer and the key")
	case token == "" && (ok || header == ""):
		return Principal{}, apperr.New(apperr.Unauthorized, "missing API key: send Authorization: Bearer sk_test_… or sk_live_…")
	case !ok:
		return Principal{}, apperr.New(apperr.Unauthorized, "malformed Authorization header: send Authorization: Bearer sk_test_… or sk_live_…")
	case !keyShaped(token):
		// A key was sent, so it is not missing: it is not one of ours.
		return Principal{}, apperr.New(apperr.Unauthorized, "invalid API key: a key is sk_test_ or sk_live_ followed by 43 letters and digits")
	}
	hash := sha256.Sum256([]byte(token))
	var row keyRow
	err := lookup(hash[:], &row)
	if store.NotFound(err) {
		return Principal{}, apperr.New(apperr.Unauthorized, "invalid API key")
	}
	if err != nil {
		return Principal{}, store.Translate(err)
	}
	// The index lookup already matched; comparing again in constant time keeps
	// the decision itself independent of where the bytes differ.
	if subtle.ConstantTimeCompare(row.Hash, hash[:]) != 1 {
		return Principal{}, apperr.New(apperr.Unauthorized, "invalid API key")
	}
	if row.Revoked {
		return Principal{}, apperr.New(apperr.Unauthorized, "revoked API key: this key has been revoked; use an active one")
	}
	return Principal{Scope: tenant.Scope{MerchantID: row.MerchantID, Mode: row.Mode}, KeyID: row.ID,
		Ahead: time.Duration(row.AheadUS) * time.Microsecond}, nil
}

// cutBearer strips the "Bearer " scheme, matched case-insensitively as HTTP
// auth schemes are.
func cutBearer(header string) (string, bool) {
	const scheme = "bearer "
	if len(header) < len(scheme) || !strings.EqualFold(header[:len(scheme)], scheme) {
		return "", false
	}
	return header[len(scheme):], true
}

// MerchantName returns the merchant's display name ("" when unknown): the
// checkout page shows who is being paid.
func MerchantName(ctx context.Context, q store.Querier, merchantID string) (string, error) {
	var names []string
	err := q.SelectContext(ctx, &names, `SELECT name FROM merchants WHERE id = $1`, merchantID)
	if err != nil || len(names) == 0 {
		return "", store.Translate(err)
	}
	return names[0], nil
}

// CountLiveKeys counts unrevoked live-mode keys (serve warns when live
// payments cannot be taken).
func CountLiveKeys(ctx context.Context, q store.Querier) (int, error) {
	var n int
	err := q.GetContext(ctx, &n, `SELECT count(*) FROM api_keys WHERE mode = 'live' AND revoked_at IS NULL`)
	return n, store.Translate(err)
}
