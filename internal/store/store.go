// Package store opens the PostgreSQL database, runs transactions and
// translates driver errors once, so domain packages only see apperr codes.
// Domain functions take a Querier: the *sqlx.DB or a *sqlx.Tx, so the caller
// owns the transaction.
package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq" // the PostgreSQL driver
)

// Querier is what domain functions run SQL on: a DB or a transaction.
type Querier interface {
	sqlx.ExtContext
	GetContext(ctx context.Context, dest any, query string, args ...any) error
	SelectContext(ctx context.Context, dest any, query string, args ...any) error
}

// Open connects to url and checks the connection. The pool is sized for a
// daemon on a small machine; lib/pq reconnects transparently after a restart
// of PostgreSQL, so one *sqlx.DB lives as long as the process.
func Open(ctx context.Context, url string) (*sqlx.DB, error) {
	db, err := sqlx.Open("postgres", url)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
	}
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(16)
	db.SetConnMaxIdleTime(5 * time.Minute)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := db.PingContext(pctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("database unreachable: %s", oneLine(err))
	}
	return db, nil
}

// Tx runs fn in a transaction, committing when fn returns nil and rolling back
// otherwise. Errors are translated with Translate.
func Tx(ctx context.Context, db *sqlx.DB, fn func(tx *sqlx.Tx) error) error {
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		return Translate(err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return Translate(err)
	}
	return Translate(tx.Commit())
}

// NotFound reports whether err is sql.ErrNoRows.
func NotFound(err error) bool { return err == sql.ErrNoRows }
