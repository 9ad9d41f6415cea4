package store

import (
	"container/list"
	"context"
	"database/sql"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
)

// Statements run on a DB or a Tx are prepared once per pool and reused.
// lib/pq sends a statement with parameters in two round trips (parse and
// describe, then bind and execute) and PostgreSQL plans it every time; a
// prepared one is one round trip, planned once per connection. For the
// short statements of the money path, which run many to a request, that is
// most of their cost. The cache is keyed by the query's text: queries are
// constants, or variants of one with a literal in it (a list's LIMIT).

// CustomPlan starts a query that runs unprepared, planned for its
// arguments each time: a prepared statement's generic plan is fixed after a
// few runs, and for a query over an array of keys on a table that was empty
// then, it scans the table against the whole array once the table has grown
// (the test rail's batch lookups took ~0.5 s a batch that way).
const CustomPlan = "/* custom plan */ "

func customPlan(query string) bool { return strings.HasPrefix(query, CustomPlan) }

// maxPrepared bounds the cache, and with it what each connection of the
// pool holds prepared: the daemon's constant queries, a few hundred at most,
// plus the variants of queries written with a literal in them (a list's
// LIMIT). The least recently used statement makes room for a new one.
const maxPrepared = 256

type stmtCache struct {
	db *sqlx.DB
	mu sync.Mutex
	// entries maps a query to its element in lru, most recent first.
	entries map[string]*list.Element
	lru     *list.List
	// preparing marks queries being prepared in the background.
	preparing map[string]bool
}

// cached is one statement; st is nil for a query that cannot be prepared
// (several statements in one string). users counts the calls using st, so
// an evicted statement is closed only when the last is done with it.
type cached struct {
	query   string
	st      *sqlx.Stmt
	users   int
	evicted bool
}

func newStmtCache(db *sqlx.DB) *stmtCache {
	return &stmtCache{db: db, entries: map[string]*list.Element{}, lru: list.New(), preparing: map[string]bool{}}
}

// acquire returns query's entry, marked in use (release it), or nil when
// it is not cached.
func (c *stmtCache) acquire(query string) *cached {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[query]
	if !ok {
		return nil
	}
	c.lru.MoveToFront(el)
	e := el.Value.(*cached)
	e.users++
	return e
}

// release marks e no longer in use by one call. Statements are closed only
// after the cache's lock is let go: closing one takes each pool
// connection's lock, and a connection busy with a statement of the cache
// may be waiting for the cache's lock (a deadlock seen under load).
func (c *stmtCache) release(e *cached) {
	c.mu.Lock()
	e.users--
	closing := e.evicted && e.users == 0 && e.st != nil
	c.mu.Unlock()
	if closing {
		e.st.Close()
	}
}

// add caches st (nil: not preparable) for query and returns its entry in
// use, or the entry another goroutine added first.
func (c *stmtCache) add(query string, st *sqlx.Stmt) *cached {
	var closing []*sqlx.Stmt // closed once the lock is let go (see release)
	defer func() {
		for _, s := range closing {
			s.Close()
		}
	}()
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[query]; ok {
		if st != nil {
			closing = append(closing, st)
		}
		e := el.Value.(*cached)
		e.users++
		return e
	}
	for c.lru.Len() >= maxPrepared {
		old := c.lru.Remove(c.lru.Back()).(*cached)
		delete(c.entries, old.query)
		old.evicted = true
		if old.users == 0 && old.st != nil {
			closing = append(closing, old.st)
		}
	}
	e := &cached{query: query, st: st, users: 1}
	c.entries[query] = c.lru.PushFront(e)
	return e
}

// prepare returns query's entry in use, preparing it on the pool (which
// takes a connection of its own) if needed; nil when it is to run
// unprepared this time.
func (c *stmtCache) prepare(ctx context.Context, query string) *cached {
	if e := c.acquire(query); e != nil {
		return e
	}
	st, err := c.db.PreparexContext(ctx, query)
	switch {
	case err == nil:
		return c.add(query, st)
	case ctx.Err() == nil && !Unavailable(err):
		// PostgreSQL refused it (several statements, or an error the
		// unprepared query reports the same way): run it unprepared.
		return c.add(query, nil)
	}
	return nil
}

// soon prepares query in the background, for a transaction that must not
// wait for a second connection of the pool.
func (c *stmtCache) soon(query string) {
	c.mu.Lock()
	if c.preparing[query] {
		c.mu.Unlock()
		return
	}
	c.preparing[query] = true
	c.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if e := c.prepare(ctx, query); e != nil {
			c.release(e)
		}
		c.mu.Lock()
		delete(c.preparing, query)
		c.mu.Unlock()
	}()
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, el := range c.entries {
		if e := el.Value.(*cached); e.st != nil {
			e.st.Close()
		}
	}
	c.entries, c.lru = map[string]*list.Element{}, list.New()
}

// onPool runs query's prepared statement on the pool with use, or returns
// false when it is to run unprepared.
func (db *DB) onPool(ctx context.Context, query string, use func(st *sqlx.Stmt)) bool {
	if customPlan(query) {
		return false
	}
	e := db.stmts.prepare(ctx, query)
	if e == nil {
		return false
	}
	defer db.stmts.release(e)
	if e.st == nil {
		return false
	}
	use(e.st)
	return true
}

// ExecContext runs query on the pool, prepared.
func (db *DB) ExecContext(ctx context.Context, query string, args ...any) (res sql.Result, err error) {
	if db.onPool(ctx, query, func(st *sqlx.Stmt) { res, err = st.ExecContext(ctx, args...) }) {
		return res, err
	}
	return db.DB.ExecContext(ctx, query, args...)
}

// QueryContext runs query on the pool, prepared.
func (db *DB) QueryContext(ctx context.Context, query string, args ...any) (rows *sql.Rows, err error) {
	if db.onPool(ctx, query, func(st *sqlx.Stmt) { rows, err = st.QueryContext(ctx, args...) }) {
		return rows, err
	}
	return db.DB.QueryContext(ctx, query, args...)
}

// QueryxContext runs query on the pool, prepared.
func (db *DB) QueryxContext(ctx context.Context, query string, args ...any) (rows *sqlx.Rows, err error) {
	if db.onPool(ctx, query, func(st *sqlx.Stmt) { rows, err = st.QueryxContext(ctx, args...) }) {
		return rows, err
	}
	return db.DB.QueryxContext(ctx, query, args...)
}

// QueryRowxContext runs query on the pool, prepared.
func (db *DB) QueryRowxContext(ctx context.Context, query string, args ...any) (row *sqlx.Row) {
	if db.onPool(ctx, query, func(st *sqlx.Stmt) { row = st.QueryRowxContext(ctx, args...) }) {
		return row
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

// inTx runs query's prepared statement bound to the transaction with use,
// or returns false when it is not prepared yet (it then is, in the
// background, for next time: waiting here for a connection of the pool
// could deadlock a full pool of transactions).
func (tx *Tx) inTx(ctx context.Context, query string, use func(st *sqlx.Stmt)) bool {
	if customPlan(query) {
		return false
	}
	e := tx.stmts.acquire(query)
	if e == nil {
		tx.stmts.soon(query)
		return false
	}
	defer tx.stmts.release(e)
	if e.st == nil {
		return false
	}
	use(tx.Tx.StmtxContext(ctx, e.st))
	return true
}

// ExecContext runs query in the transaction, prepared once cached.
func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (res sql.Result, err error) {
	if tx.inTx(ctx, query, func(st *sqlx.Stmt) { res, err = st.ExecContext(ctx, args...) }) {
		return res, err
	}
	return tx.Tx.ExecContext(ctx, query, args...)
}

// QueryContext runs query in the transaction, prepared once cached.
func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (rows *sql.Rows, err error) {
	if tx.inTx(ctx, query, func(st *sqlx.Stmt) { rows, err = st.QueryContext(ctx, args...) }) {
		return rows, err
	}
	return tx.Tx.QueryContext(ctx, query, args...)
}

// QueryxContext runs query in the transaction, prepared once cached.
func (tx *Tx) QueryxContext(ctx context.Context, query string, args ...any) (rows *sqlx.Rows, err error) {
	if tx.inTx(ctx, query, func(st *sqlx.Stmt) { rows, err = st.QueryxContext(ctx, args...) }) {
		return rows, err
	}
	return tx.Tx.QueryxContext(ctx, query, args...)
}

// QueryRowxContext runs query in the transaction, prepared once cached.
func (tx *Tx) QueryRowxContext(ctx context.Context, query string, args ...any) (row *sqlx.Row) {
	if tx.inTx(ctx, query, func(st *sqlx.Stmt) { row = st.QueryRowxContext(ctx, args...) }) {
		return row
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
