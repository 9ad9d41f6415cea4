package store

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tollgatehq/tollgate/migrations"
)

// migrationLock is the advisory lock key that serialises migrations across
// replicas starting at once ("tollgate" in ASCII, as a number).
const migrationLock = 0x746f6c6c67617465

// Migrate applies every embedded migration not yet applied, in order, each in
// its own transaction, under a session advisory lock. Migrations are
// forward-only.
func Migrate(ctx context.Context, db *sql.DB) error { return MigrateTo(ctx, db, math.MaxInt) }

// MigrateTo is Migrate stopping after version last: tests of a migration
// start from a database as it stood before it.
func MigrateTo(ctx context.Context, db *sql.DB, last int) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return Translate(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock) //nolint:errcheck
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	files, err := Migrations()
	if err != nil {
		return err
	}
	for _, m := range files {
		var done bool
		if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE version = $1)`, m.Version).Scan(&done); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if done || m.Version > last {
			continue
		}
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("migrate: %s: %w", m.Name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name); err != nil {
			_ = tx.Rollback()
			return fmt.Errorf("migrate: %s: %w", m.Name, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate: %s: %w", m.Name, err)
		}
	}
	return nil
}

// Migration is one numbered SQL file.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations returns the embedded migrations sorted by version. File names
// are NNN_description.sql.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, _, _ := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a number", e.Name())
		}
		body, err := fs.ReadFile(migrations.FS, e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: e.Name(), SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s share a number", out[i-1].Name, out[i].Name)
		}
	}
	return out, nil
}
