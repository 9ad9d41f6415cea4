package store

import (
	"context"

	"github.com/lib/pq"
)

// AnalyzeFresh analyses the tables of the current schema that were never
// analysed and have had at least minChanges rows written, and returns
// their names.
//
// Until a table has statistics, PostgreSQL prices every equality alike and
// breaks ties between indexes in favour of the most recently made one: a
// lookup by (merchant_id, id) is then planned on an index that starts with
// merchant_id and walks every row of the merchant, and a prepared
// statement keeps that plan until the table is analysed. Autovacuum first
// analyses a table within about a minute of its first rows; on a new
// install under load that minute costs a scan per lookup. An analysis
// invalidates the plans made without statistics.
func AnalyzeFresh(ctx context.Context, db *DB, minChanges int64) ([]string, error) {
	var tables []string
	err := db.SelectContext(ctx, &tables, `SELECT relname FROM pg_stat_user_tables
		WHERE schemaname = current_schema() AND last_analyze IS NULL AND last_autoanalyze IS NULL
			AND n_mod_since_analyze >= $1
		ORDER BY relname`, minChanges)
	if err != nil {
		return nil, Translate(err)
	}
	for _, t := range tables {
		// A table owned by another role is skipped with a warning, not an
		// error: the operator's autovacuum still gets to it.
		if _, err := db.ExecContext(ctx, `ANALYZE `+pq.QuoteIdentifier(t)); err != nil {
			return nil, Translate(err)
		}
	}
	return tables, nil
}
