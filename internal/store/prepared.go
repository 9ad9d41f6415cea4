package store

import (
	"context"
	"database/sql"
	"sync"

	"github.com/jmoiron/sqlx"
)

// Statements run on a DB or a Tx are prepared once per pool and reused.
// lib/pq sends a statement with parameters in two round trips (parse and
// describe, then bind and execute) and PostgreSQL plans it every time; a
// prepared one is one round trip, planned once per connection. For the
// short statements of the money path, which run many to a request, that is
// most of their cost. The cache is keyed by the query's text, so only
// queries written as constants should reach it: it holds at most
// maxPrepared statements and runs any further query unprepared.

// maxPrepared bounds the cache: the daemon's queries are constants, a few
// hundred at most.
const maxPrepared = 1024

type stmtCache struct {
	db *sqlx.DB
	mu sync.Mutex
	// m maps a query to its statement; nil marks one that cannot be
	// prepared (several statements in one string).
	m map[string]*sqlx.Stmt
	// preparing marks queries being prepared in the background.
	preparing map[string]bool
}

func newStmtCache(db *sqlx.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sqlx.Stmt{}, preparing: map[string]bool{}}
}

// lookup returns the statement of query and whether it was cached.
func (c *stmtCache) lookup(query string) (*sqlx.Stmt, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.m[query]
	return st, ok
}

// prepare prepares query on the pool (which takes a connection of its own)
// and caches it; it returns nil when the query is to run unprepared.
func (c *stmtCache) prepare(ctx context.Context, query string) *sqlx.Stmt {
	if st, ok := c.lookup(query); ok {
		return st
	}
	st, err := c.db.PreparexContext(ctx, query)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.preparing, query)
	if prior, ok := c.m[query]; ok {
		if st != nil {
			st.Close()
		}
		return prior
	}
	switch {
	case err != nil && ctx.Err() == nil && !Unavailable(err):
		// PostgreSQL refused it (several statements, or an error the
		// unprepared query will report the same way): run it unprepared.
		if len(c.m) < maxPrepared {
			c.m[query] = nil
		}
		return nil
	case err != nil:
		return nil
	case len(c.m) >= maxPrepared:
		st.Close()
		return nil
	}
	c.m[query] = st
	return st
}

// soon prepares query in the background, for a transaction that must not
// wait for a second connection of the pool.
func (c *stmtCache) soon(query string) {
	c.mu.Lock()
	if c.preparing[query] || len(c.m) >= maxPrepared {
		c.mu.Unlock()
		return
	}
	c.preparing[query] = true
	c.mu.Unlock()
	go c.prepare(context.Background(), query)
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		if st != nil {
			st.Close()
		}
	}
	c.m = map[string]*sqlx.Stmt{}
}

// stmt returns the prepared statement of query for the pool, or nil.
func (db *DB) stmt(ctx context.Context, query string) *sqlx.Stmt {
	return db.stmts.prepare(ctx, query)
}

// ExecContext runs query on the pool, prepared.
func (db *DB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := db.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return db.DB.ExecContext(ctx, query, args...)
}

// QueryContext runs query on the pool, prepared.
func (db *DB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := db.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return db.DB.QueryContext(ctx, query, args...)
}

// QueryxContext runs query on the pool, prepared.
func (db *DB) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	if st := db.stmt(ctx, query); st != nil {
		return st.QueryxContext(ctx, args...)
	}
	return db.DB.QueryxContext(ctx, query, args...)
}

// QueryRowxContext runs query on the pool, prepared.
func (db *DB) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	if st := db.stmt(ctx, query); st != nil {
		return st.QueryRowxContext(ctx, args...)
	}
	return db.DB.QueryRowxContext(ctx, query, args...)
}

// GetContext scans the one row of query, run on the pool prepared, into dest.
func (db *DB) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	return sqlx.GetContext(ctx, db, dest, query, args...)
}

// SelectContext scans the rows of query, run on the pool prepared, into dest.
func (db *DB) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	return sqlx.SelectContext(ctx, db, dest, query, args...)
}

// stmt returns query's prepared statement bound to the transaction, or nil
// when it is not prepared yet (it then is, in the background, for next
// time: waiting here for a connection of the pool could deadlock a full
// pool of transactions).
func (tx *Tx) stmt(ctx context.Context, query string) *sqlx.Stmt {
	st, ok := tx.stmts.lookup(query)
	if !ok {
		tx.stmts.soon(query)
		return nil
	}
	if st == nil {
		return nil
	}
	return tx.Tx.StmtxContext(ctx, st)
}

// ExecContext runs query in the transaction, prepared once cached.
func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := tx.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return tx.Tx.ExecContext(ctx, query, args...)
}

// QueryContext runs query in the transaction, prepared once cached.
func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := tx.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return tx.Tx.QueryContext(ctx, query, args...)
}

// QueryxContext runs query in the transaction, prepared once cached.
func (tx *Tx) QueryxContext(ctx context.Context, query string, args ...any) (*sqlx.Rows, error) {
	if st := tx.stmt(ctx, query); st != nil {
		return st.QueryxContext(ctx, args...)
	}
	return tx.Tx.QueryxContext(ctx, query, args...)
}

// QueryRowxContext runs query in the transaction, prepared once cached.
func (tx *Tx) QueryRowxContext(ctx context.Context, query string, args ...any) *sqlx.Row {
	if st := tx.stmt(ctx, query); st != nil {
		return st.QueryRowxContext(ctx, args...)
	}
	return tx.Tx.QueryRowxContext(ctx, query, args...)
}

// GetContext scans the one row of query into dest.
func (tx *Tx) GetContext(ctx context.Context, dest any, query string, args ...any) error {
	return sqlx.GetContext(ctx, tx, dest, query, args...)
}

// SelectContext scans the rows of query into dest.
func (tx *Tx) SelectContext(ctx context.Context, dest any, query string, args ...any) error {
	return sqlx.SelectContext(ctx, tx, dest, query, args...)
}
