// Package idempotency keeps the Idempotency-Key records of creates and
// changes: the first answer to a keyed request, written in the same
// transaction as the request's own write. A retry with the same key and
// the same parameters gets that answer back and does nothing; the same key
// with other parameters is invalid_request. Records are scoped per merchant,
// mode and operation.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// MaxKey is the longest key, in characters.
const MaxKey = 255

// CheckKey refuses a key that is too long, not UTF-8, or holds control
// characters: invalid_request naming the header.
func CheckKey(key string) error {
	if !utf8.ValidString(key) {
		return apperr.Field("Idempotency-Key", "must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(key); n > MaxKey {
		return apperr.Field("Idempotency-Key", "must be at most %d characters (got %d)", MaxKey, n)
	}
	for _, r := range key {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return apperr.Field("Idempotency-Key", "must not contain control characters")
		}
	}
	return nil
}

// Fingerprint hashes a request's parameters (its path and canonical body).
func Fingerprint(parts ...[]byte) []byte {
	h := sha256.New()
	for _, p := range parts {
		var n [8]byte
		for i, l := 0, uint64(len(p)); i < 8; i++ {
			n[i] = byte(l >> (8 * i))
		}
		h.Write(n[:])
		h.Write(p)
	}
	return h.Sum(nil)
}

// Request names a keyed request.
type Request struct {
	Scope       tenant.Scope
	Operation   string
	Key         string
	Fingerprint []byte
}

// Answer is a request's answer as recorded.
type Answer struct {
	Status int
	Body   []byte
	// Replayed is true when the answer is an earlier request's.
	Replayed bool
}

// errTaken: another request holds the key (it committed first).
var errTaken = errors.New("idempotency: key taken")

// Do answers req: the recorded answer when the key was used before, or
// run's, recorded in run's transaction. Concurrent requests with one key
// wait for the first: one writes, the others replay its answer. An error
// of run records nothing, so a retry runs again.
func Do(ctx context.Context, db *store.DB, req Request, run func(tx *store.Tx) (status int, body []byte, err error)) (Answer, error) {
	for attempt := 0; attempt < 3; attempt++ {
		if a, ok, err := lookup(ctx, db, req); err != nil || ok {
			return a, err
		}
		a, err := store.InTx(ctx, db, func(tx *store.Tx) (Answer, error) {
			// The claim comes first: a concurrent request with the same key
			// waits here until this transaction ends, then finds the record.
			res, err := tx.ExecContext(ctx, `INSERT INTO idempotency_keys (merchant_id, mode, operation, key, fingerprint)
				VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
				req.Scope.MerchantID, req.Scope.Mode, req.Operation, req.Key, req.Fingerprint)
			if err != nil {
				return Answer{}, err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				return Answer{}, errTaken
			}
			status, body, err := run(tx)
			if err != nil {
				return Answer{}, err
			}
			_, err = tx.ExecContext(ctx, `UPDATE idempotency_keys SET status = $5, body = $6
				WHERE merchant_id = $1 AND mode = $2 AND operation = $3 AND key = $4`,
				req.Scope.MerchantID, req.Scope.Mode, req.Operation, req.Key, status, body)
			return Answer{Status: status, Body: body}, err
		})
		if errors.Is(err, errTaken) {
			continue
		}
		return a, err
	}
	return Answer{}, apperr.New(apperr.ServiceUnavailable, "the request with this Idempotency-Key is still running; retry shortly")
}

// lookup returns the recorded answer of req's key, or invalid_request when
// it was recorded for other parameters.
func lookup(ctx context.Context, q store.Querier, req Request) (Answer, bool, error) {
	var rows []struct {
		Fingerprint []byte `db:"fingerprint"`
		Status      int    `db:"status"`
		Body        []byte `db:"body"`
	}
	err := q.SelectContext(ctx, &rows, `SELECT fingerprint, status, body FROM idempotency_keys
		WHERE merchant_id = $1 AND mode = $2 AND operation = $3 AND key = $4`,
		req.Scope.MerchantID, req.Scope.Mode, req.Operation, req.Key)
	if err != nil || len(rows) == 0 {
		return Answer{}, false, store.Translate(err)
	}
	if !bytes.Equal(rows[0].Fingerprint, req.Fingerprint) {
		return Answer{}, false, apperr.Field("idempotency_key",
			"the Idempotency-Key %q was already used with different parameters; send a new key for a new request", req.Key)
	}
	return Answer{Status: rows[0].Status, Body: rows[0].Body, Replayed: true}, true, nil
}

// Kept is how long a key is kept: a retry within it is answered again.
const Kept = 35 * 24 * time.Hour

// Prune deletes the keys recorded before cutoff, which must be at least
// Kept before now, and returns how many went. created_at is not indexed
// (an index would cost every keyed write), so this scans the table: run it
// rarely, e.g. daily.
func Prune(ctx context.Context, q store.Querier, cutoff, now time.Time) (int64, error) {
	if now.Sub(cutoff) < Kept {
		return 0, apperr.New(apperr.InvalidRequest, "idempotency keys are kept at least %d days", int(Kept.Hours()/24))
	}
	r, err := q.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE created_at < $1`, cutoff)
	if err != nil {
		return 0, store.Translate(err)
	}
	return r.RowsAffected()
}
