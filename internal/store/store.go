// Package store opens the PostgreSQL database, runs transactions and
// translates driver errors once, so domain packages only see apperr codes.
//
// Domain functions take a Querier (the pool or a transaction) when one
// statement does their work, or come in pairs when they need a transaction:
// Op(ctx, db *DB, …) opens one with InTx, and OpTx(ctx, tx *Tx, …) joins the
// caller's, so a caller can compose several operations atomically.
package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
)

// Querier is what domain functions run SQL on: a DB or a transaction.
type Querier interface {
	sqlx.ExtContext
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
}

// DB is the connection pool, plus the in-process wake-ups that
// transactions fire after they commit (see Tx.Notify).
type DB struct {
	*sqlx.DB
	url   string
	cfg   Config
	hub   *hub
	stmts *stmtCache
	// shared marks a pool that uses another's hub (GenericPlans): closing
	// it leaves the hub to its owner.
	shared bool
}

// Pool sizing: a daemon on a small machine. Idle connections equal open
// ones, so a burst of requests never closes and reopens connections.
const (
	maxOpenConns = 32
	maxIdleConns = 32
)

// Open connects to url and checks the connection. lib/pq reconnects
// transparently after a restart of PostgreSQL, so one *DB lives as long as
// the process. Close it to stop its notifier.
func Open(ctx context.Context, url string) (*DB, error) {
	return OpenConfig(ctx, url, Config{})
}

// OpenConfig is Open with cfg.
func OpenConfig(ctx context.Context, url string, cfg Config) (*DB, error) {
	c, err := cfg.connector(url)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
	}
	db := sqlx.NewDb(sql.OpenDB(c), "postgres")
	db.SetMaxOpenConns(maxOpenConns)
	db.SetMaxIdleConns(maxIdleConns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("database unreachable: %s", oneLine(err))
	}
	return &DB{DB: db, url: url, cfg: cfg, hub: newHub(db), stmts: newStmtCache(db)}, nil
}

// GenericPlans opens a second pool of at most conns connections on db's
// database whose sessions run every prepared statement on its generic plan,
// planned once per connection, and which shares db's wake-ups. It is for a
// worker whose statements over arrays run many times a second, each tested
// to probe by key on its generic plan (testdb.AssertProbes): under the
// default plan_cache_mode PostgreSQL plans them again on every run, as
// their arrays' lengths are unknown to a generic plan, and for the webhook
// recorder the planning cost a third of the statement. One statement on
// the pool, unlike InTxGenericPlans, needs no transaction around it (its
// BEGIN and SET LOCAL are two round trips more). Close it before db. When
// db was opened without a URL, it returns db itself.
func (db *DB) GenericPlans(ctx context.Context, conns int) (*DB, error) {
	if db.url == "" {
		return db, nil
	}
	cfg := db.cfg
	cfg.GenericPlans = true
	g, err := OpenConfig(ctx, db.url, cfg)
	if err != nil {
		return nil, err
	}
	g.hub.close()
	g.hub, g.shared = db.hub, true
	g.SetMaxOpenConns(conns)
	g.SetMaxIdleConns(conns)
	return g, nil
}

// URL is the connection string the pool was opened with, for the dedicated
// LISTEN connection of the job runner.
func (db *DB) URL() string { return db.url }

// Close stops the notifier and closes the pool.
func (db *DB) Close() error {
	if !db.shared {
		db.hub.close()
	}
	db.stmts.close()
	return db.DB.Close()
}

// Tx is a transaction that can ask for wake-ups once it commits.
type Tx struct {
	*sqlx.Tx
	notify map[string]bool
	stmts  *stmtCache
}

// Notify asks that the subscribers of channel be woken once the transaction
// commits (nothing happens if it rolls back): in this process at once, and
// in other replicas through one coalesced NOTIFY sent outside any business
// transaction, since PostgreSQL serialises the commits of transactions that
// NOTIFY.
func (tx *Tx) Notify(channel string) {
	if tx.notify == nil {
		tx.notify = map[string]bool{}
	}
	tx.notify[channel] = true
}

// maxAttempts bounds how often InTx runs a function that PostgreSQL aborted
// to break a deadlock or a serialization conflict.
const maxAttempts = 3

// InTx runs fn in a transaction, committing when fn returns nil and rolling
// back otherwise. A deadlock or serialization failure (see Retryable) runs
// fn again from scratch, so fn must have no effects outside the database.
// Errors are translated with Translate.
func (db *DB) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	return db.runTx(ctx, "", fn)
}

// InTxGenericPlans is InTx with the transaction's prepared statements run
// on their generic plans, planned once per connection. For a batch's
// statements over arrays, PostgreSQL's default (auto) judges a generic plan
// costlier, as it cannot know the arrays' lengths, and so plans them again
// on every run: for the credit batches, more PostgreSQL time than running
// them. Only statements whose generic plans are tested to probe by key
// (testdb.AssertProbes) belong in such a transaction.
//
// On a pool from GenericPlans, whose sessions already plan so, it is InTx:
// the SET LOCAL would be one round trip more a transaction for nothing.
func (db *DB) InTxGenericPlans(ctx context.Context, fn func(tx *Tx) error) error {
	if db.cfg.GenericPlans {
		return db.runTx(ctx, "", fn)
	}
	return db.runTx(ctx, "SET LOCAL plan_cache_mode = force_generic_plan", fn)
}

func (db *DB) runTx(ctx context.Context, setup string, fn func(tx *Tx) error) error {
	var err error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		if err = db.inTx(ctx, setup, fn); !Retryable(err) {
			break
		}
	}
	return Translate(err)
}

func (db *DB) inTx(ctx context.Context, setup string, fn func(tx *Tx) error) error {
	stx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return err
	}
	if setup != "" {
		if _, err := stx.ExecContext(ctx, setup); err != nil {
			_ = stx.Rollback()
			return err
		}
	}
	tx := &Tx{Tx: stx, stmts: db.stmts}
	if err := fn(tx); err != nil {
		_ = stx.Rollback()
		return err
	}
	if err := stx.Commit(); err != nil {
		return err
	}
	for ch := range tx.notify {
		db.hub.fire(ch)
	}
	return nil
}

// InTx is db.InTx for a function with a result.
func InTx[T any](ctx context.Context, db *DB, fn func(tx *Tx) (T, error)) (T, error) {
	var out T
	err := db.InTx(ctx, func(tx *Tx) error {
		var err error
		out, err = fn(tx)
		return err
	})
	return out, err
}

// NotFound reports whether err is sql.ErrNoRows.
func NotFound(err error) bool { return err == sql.ErrNoRows }
