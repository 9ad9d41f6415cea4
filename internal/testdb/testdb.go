// Package testdb gives DB-backed tests a fresh, migrated PostgreSQL
// database each. A package opts in with
//
//	func TestMain(m *testing.M) { testdb.Main(m) }
//
// and calls New(t) wherever a test needs a database. The server is
// TOLLGATE_TEST_DATABASE_URL if set (the role needs CREATEDB), else a
// private throwaway cluster started on first use and removed at exit.
// Databases are cloned from a template migrated once per test binary, so a
// new database costs one CREATE DATABASE, not a migration run.
package testdb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/pgcluster"
	"github.com/tollgatehq/tollgate/internal/store"
)

// EnvURL names the variable that points the tests at an existing server.
const EnvURL = "TOLLGATE_TEST_DATABASE_URL"

const setupTimeout = 3 * time.Minute

var (
	mainRunning bool

	// The server, started lazily so test binaries (or -run/-list
	// selections) that never ask for a database pay nothing.
	serverOnce sync.Once
	serverErr  error
	adminURL   string
	admin      *sql.DB
	cluster    *pgcluster.Cluster
	clusterDir string

	tmplOnce sync.Once
	tmplErr  error
	tmplName string
)

// Main is called from TestMain: it runs the tests, then drops the template
// and, if it started one, stops the private cluster and removes its
// directory, leaving nothing behind. It does not return.
func Main(m *testing.M) {
	mainRunning = true
	code := m.Run()
	if err := teardown(); err != nil {
		fmt.Fprintln(os.Stderr, "testdb:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// New returns the URL of a fresh database cloned from the migrated template;
// it is dropped (WITH (FORCE)) in t.Cleanup. Safe for t.Parallel().
func New(t testing.TB) string {
	t.Helper()
	mustServer(t)
	tmplOnce.Do(func() { tmplErr = makeTemplate() })
	if tmplErr != nil {
		t.Fatalf("testdb: %v", tmplErr)
	}
	name := randomName("tgtest_")
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if err := createDatabase(ctx, name, tmplName); err != nil {
		t.Fatalf("testdb: %v", err)
	}
	t.Cleanup(func() {
		if err := dropDatabase(name); err != nil {
			t.Errorf("testdb: %v", err)
		}
	})
	return DatabaseURL(adminURL, name)
}

// Blank returns the URL of a new empty database, with no migration applied
// (for tests of a migration: store.MigrateTo brings it to the version before
// it); it is dropped in t.Cleanup.
func Blank(t testing.TB) string {
	t.Helper()
	mustServer(t)
	name := randomName("tgtest_")
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)); err != nil {
		t.Fatalf("testdb: %v", err)
	}
	t.Cleanup(func() {
		if err := dropDatabase(name); err != nil {
			t.Errorf("testdb: %v", err)
		}
	})
	return DatabaseURL(adminURL, name)
}

// DatabaseURL returns url (a postgres:// URL or a lib/pq key=value string)
// pointed at database db.
func DatabaseURL(u, db string) string {
	if strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://") {
		if p, err := url.Parse(u); err == nil {
			p.Path, p.RawPath = "/"+db, ""
			return p.String()
		}
	}
	// lib/pq keeps the last value of a repeated key.
	return u + " dbname=" + db
}

func mustServer(t testing.TB) {
	t.Helper()
	if !mainRunning {
		t.Fatal("testdb: the package needs func TestMain(m *testing.M) { testdb.Main(m) }")
	}
	serverOnce.Do(func() { serverErr = startServer() })
	if serverErr != nil {
		t.Fatalf("testdb: %v", serverErr)
	}
}

func startServer() error {
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	adminURL = os.Getenv(EnvURL)
	if adminURL == "" {
		reapOrphans(ctx, tempBase())
		dir, err := os.MkdirTemp(tempBase(), "tgtest")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
			return err
		}
		clusterDir = dir
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		cluster = pgcluster.New(dir, log)
		cluster.Ephemeral = true
		if _, err := cluster.Start(ctx); err != nil {
			cluster = nil // Start stops what it started when it fails
			return fmt.Errorf("start a private PostgreSQL for the tests (or set %s): %w", EnvURL, err)
		}
		adminURL = cluster.URL("postgres")
		// Processes this one starts inherit the cluster rather than start
		// their own: above all the workers of `go test -fuzz`, which run
		// the fuzz target's setup afresh and would each pay for a cluster
		// out of their fuzzing time. They leave it running; this process
		// stops it at exit.
		if err := os.Setenv(EnvURL, adminURL); err != nil {
			return err
		}
	}
	db, err := sql.Open("postgres", adminURL)
	if err == nil {
		err = db.PingContext(ctx)
	}
	if err != nil {
		return fmt.Errorf("connect to the test server: %w", err)
	}
	admin = db
	return nil
}

// ownerFile in a private cluster's directory holds the test process's pid.
const ownerFile = "owner.pid"

// reapOrphans stops and removes private clusters left by test binaries that
// died before their cleanup ran (a panic, a -timeout): their owner process
// is gone, so nobody else will.
func reapOrphans(ctx context.Context, base string) {
	dirs, _ := filepath.Glob(filepath.Join(base, "tgtest*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || syscall.Kill(pid, 0) != syscall.ESRCH {
			continue
		}
		if err := pgcluster.New(dir, nil).Stop(ctx); err == nil {
			_ = os.RemoveAll(dir)
		}
	}
}

// tempBase is os.TempDir() unless a long TMPDIR (macOS, CI runners) would
// push the socket path past the unix limit.
func tempBase() string {
	base := os.TempDir()
	if len(filepath.Join(base, "tgtest0123456789", "run", ".s.PGSQL.5432")) > pgcluster.MaxSocketPath {
		return "/tmp"
	}
	return base
}

func makeTemplate() error {
	ctx, cancel := context.WithTimeout(context.Background(), setupTimeout)
	defer cancel()
	name := randomName("tgtmpl_")
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(name)); err != nil {
		return fmt.Errorf("create template database: %w", err)
	}
	tmplName = name // from here on, teardown drops it
	db, err := sql.Open("postgres", DatabaseURL(adminURL, name))
	if err != nil {
		return err
	}
	err = store.Migrate(ctx, db)
	// Clones need the template free of sessions: close ours, and refuse
	// new ones (CREATE DATABASE ... TEMPLATE does not connect).
	db.Close()
	if err != nil {
		return fmt.Errorf("migrate template database: %w", err)
	}
	if _, err := admin.ExecContext(ctx, "ALTER DATABASE "+pq.QuoteIdentifier(name)+" ALLOW_CONNECTIONS false"); err != nil {
		return fmt.Errorf("lock template database: %w", err)
	}
	return nil
}

// createDatabase clones tmpl, retrying while the template still has a
// session (a closing connection of ours, or autovacuum).
func createDatabase(ctx context.Context, name, tmpl string) error {
	q := "CREATE DATABASE " + pq.QuoteIdentifier(name) + " TEMPLATE " + pq.QuoteIdentifier(tmpl)
	var err error
	for attempt := 1; attempt <= 10; attempt++ {
		if _, err = admin.ExecContext(ctx, q); err == nil {
			return nil
		}
		var pqErr *pq.Error
		if !errors.As(err, &pqErr) || pqErr.Code != "55006" { // object_in_use
			break
		}
		time.Sleep(time.Duration(attempt) * 100 * time.Millisecond)
	}
	return fmt.Errorf("create test database: %w", err)
}

func dropDatabase(name string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+pq.QuoteIdentifier(name)+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

func teardown() error {
	var errs []error
	if admin != nil {
		if tmplName != "" {
			errs = append(errs, dropDatabase(tmplName))
		}
		errs = append(errs, admin.Close())
	}
	if cluster != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := cluster.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if clusterDir != "" {
		errs = append(errs, os.RemoveAll(clusterDir))
	}
	return errors.Join(errs...)
}

// randomName is unique across the test binaries of one `go test ./...`
// sharing a server, and lowercase so it needs no quoting anywhere.
func randomName(prefix string) string {
	b := make([]byte, 10)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// Open is a store on a new database (New), closed when the test ends.
func Open(t testing.TB) *store.DB {
	t.Helper()
	return OpenConfig(t, store.Config{})
}

// OpenConfig is Open with cfg (a statement tracer, say).
func OpenConfig(t testing.TB, cfg store.Config) *store.DB {
	t.Helper()
	db, err := store.OpenConfig(context.Background(), New(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
