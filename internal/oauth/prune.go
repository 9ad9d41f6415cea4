package oauth

import (
	"context"

	"github.com/tollgatehq/tollgate/internal/store"
)

// PruneAfter is how long codes and tokens are kept past their expiry: a
// spent code or refresh token presented within it is still recognised as a
// replay and revokes its grant; after it, it is merely unknown.
const PruneAfter = "1 day"

// UnusedClientAge is how long a dynamically registered client that no
// merchant has consented to is kept.
const UnusedClientAge = "1 day"

// pruneBatch bounds one delete, so pruning never holds many row locks.
const pruneBatch = 1000

// Prune deletes codes and tokens that expired more than PruneAfter ago,
// and registered clients older than UnusedClientAge with no grant (their
// codes with them), in batches, and returns how many rows went. Grants stay (the operator's
// history). Replicas running it at once delete disjoint batches (SKIP
// LOCKED). Fails with service_unavailable when the database is down.
func Prune(ctx context.Context, q store.Querier) (int64, error) {
	var total int64
	for _, stmt := range []string{
		`DELETE FROM oauth_tokens WHERE token_hash IN (SELECT token_hash FROM oauth_tokens
			WHERE expires_at < now() - interval '` + PruneAfter + `' LIMIT $1 FOR UPDATE SKIP LOCKED)`,
		`DELETE FROM oauth_codes WHERE code_hash IN (SELECT code_hash FROM oauth_codes
			WHERE expires_at < now() - interval '` + PruneAfter + `' LIMIT $1 FOR UPDATE SKIP LOCKED)`,
		// Anyone may register a client, so registrations that never led
		// to a consent are not kept: a day is enough to finish one.
		`DELETE FROM oauth_clients WHERE id IN (SELECT c.id FROM oauth_clients c
			WHERE c.kind = 'registered' AND c.created_at < now() - interval '` + UnusedClientAge + `'
			AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id)
			LIMIT $1 FOR UPDATE SKIP LOCKED)`,
	} {
		for {
			res, err := q.ExecContext(ctx, stmt, pruneBatch)
			if err != nil {
				return total, store.Translate(err)
			}
			n, _ := res.RowsAffected()
			total += n
			if n < pruneBatch || ctx.Err() != nil {
				break
			}
		}
	}
	return total, nil
}
