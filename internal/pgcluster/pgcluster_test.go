package pgcluster

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lib/pq"
)

// shortDir is a temp dir short enough for the socket path limit
// (t.TempDir() names can exceed it).
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tgpg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func exec1(t *testing.T, url, q string) {
	t.Helper()
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func TestClusterLifecycle(t *testing.T) {
	if _, err := FindBinaries(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	c := New(filepath.Join(shortDir(t), "data"), testLog(t))

	t0 := time.Now()
	owned, err := c.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first start (initdb + start): %v", time.Since(t0))
	t.Cleanup(func() { _ = c.Stop(context.Background()) })
	if !owned {
		t.Fatal("first Start: owned = false, want true")
	}

	db, err := sql.Open("postgres", c.URL(Database))
	if err != nil {
		t.Fatal(err)
	}
	var one int
	if err := db.QueryRow("select 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("select 1 = %d, %v", one, err)
	}
	db.Close()
	exec1(t, c.URL(Database), "CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)")

	// A second Start (another daemon, or one restarted after kill -9)
	// attaches to the running server.
	owned, err = New(c.Dir, testLog(t)).Start(ctx)
	if err != nil || owned {
		t.Fatalf("Start while running: owned=%v err=%v, want false, nil", owned, err)
	}

	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatalf("Stop when stopped: %v", err)
	}
	t0 = time.Now()
	if owned, err = c.Start(ctx); err != nil || !owned {
		t.Fatalf("restart: owned=%v err=%v", owned, err)
	}
	t.Logf("restart: %v", time.Since(t0))
	db, err = sql.Open("postgres", c.URL(Database))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int
	if err := db.QueryRow("SELECT v FROM kept").Scan(&v); err != nil || v != 42 {
		t.Fatalf("after restart: v=%d err=%v, want 42", v, err)
	}
	if fi, err := os.Stat(c.LogFile()); err != nil || fi.Size() == 0 {
		t.Fatalf("server log %s missing or empty: %v", c.LogFile(), err)
	}
	// No TCP listener, only the socket.
	var listen string
	if err := db.QueryRow("SHOW listen_addresses").Scan(&listen); err != nil || listen != "" {
		t.Fatalf("listen_addresses = %q, %v", listen, err)
	}
	db.Close()

	// A server killed outright leaves a stale postmaster.pid; Start must
	// recover from it.
	pidFile, err := os.ReadFile(filepath.Join(c.Dir, "pg", "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(pidFile), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for syscall.Kill(pid, 0) == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if owned, err = c.Start(ctx); err != nil || !owned {
		t.Fatalf("start after SIGKILL: owned=%v err=%v", owned, err)
	}
	exec1(t, c.URL(Database), "SELECT v FROM kept")
}

func TestStartErrorIncludesLog(t *testing.T) {
	if _, err := FindBinaries(); err != nil {
		t.Skip(err)
	}
	c := New(shortDir(t), testLog(t))
	c.Ephemeral = true
	if _, err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A bad setting makes the server refuse to start; the error must say why.
	f, err := os.OpenFile(filepath.Join(c.Dir, "pg", "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("\nmax_connections = nonsense\n")
	f.Close()
	_, err = c.Start(context.Background())
	if err == nil {
		_ = c.Stop(context.Background())
		t.Fatal("Start with a broken config succeeded")
	}
	t.Log(err)
	if !strings.Contains(err.Error(), "max_connections") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error should be one line quoting the log: %v", err)
	}
}

func TestBinariesMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	old := pgLibGlob
	pgLibGlob = filepath.Join(t.TempDir(), "*", "bin")
	t.Cleanup(func() { pgLibGlob = old })

	if _, err := FindBinaries(); !errors.Is(err, ErrNoBinaries) {
		t.Fatalf("FindBinaries: %v", err)
	}
	_, err := New(shortDir(t), nil).Start(context.Background())
	if !errors.Is(err, ErrNoBinaries) || !strings.Contains(err.Error(), "--database-url") || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Start: %v", err)
	}
}

func fakeBin(t *testing.T, dir string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestFindBinaries(t *testing.T) {
	root := t.TempDir()
	old := pgLibGlob
	pgLibGlob = filepath.Join(root, "lib", "*", "bin")
	t.Cleanup(func() { pgLibGlob = old })
	for _, v := range []string{"9.6", "14", "15"} {
		fakeBin(t, filepath.Join(root, "lib", v, "bin"), requiredBinaries...)
	}
	fakeBin(t, filepath.Join(root, "lib", "16", "bin"), "initdb", "pg_ctl") // incomplete

	t.Setenv("PATH", t.TempDir())
	if got, err := FindBinaries(); err != nil || got != filepath.Join(root, "lib", "15", "bin") {
		t.Fatalf("glob: got %q, %v; want version 15", got, err)
	}

	onPath := filepath.Join(root, "path")
	fakeBin(t, onPath, requiredBinaries...)
	t.Setenv("PATH", onPath)
	if got, err := FindBinaries(); err != nil || got != onPath {
		t.Fatalf("PATH: got %q, %v; want %q", got, err, onPath)
	}
}

func TestSocketPathTooLong(t *testing.T) {
	dir := "/tmp/" + strings.Repeat("d", 100)
	_, err := New(dir, nil).Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "107") {
		t.Fatalf("want socket length error, got %v", err)
	}
	if _, statErr := os.Stat(dir); statErr == nil {
		t.Fatal("Start created the data dir despite refusing it")
	}
}

func TestEnsureTraversable(t *testing.T) {
	base := t.TempDir()
	// ensureTraversable walks up to /; don't let the test loosen real
	// directories such as a TMPDIR under /root.
	for d := filepath.Dir(filepath.Dir(base)); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err != nil || fi.Mode().Perm()&0o001 == 0 {
			t.Skipf("%s is not o+x; not loosening it in a test", d)
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	locked := filepath.Join(base, "locked")
	leaf := filepath.Join(locked, "data")
	if err := os.MkdirAll(leaf, 0o700); err != nil {
		t.Fatal(err)
	}
	os.Chmod(locked, 0o700)
	// A uid and gid nobody uses, so only the "other" bits apply to it.
	const stranger = 4242424
	if err := ensureTraversable(leaf, stranger, []uint32{stranger}, testLog(t)); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{leaf, locked, base} {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm()&0o001 == 0 {
			t.Errorf("%s: mode %v lacks o+x", d, fi.Mode().Perm())
		}
		if fi.Mode().Perm()&0o004 != 0 && d != base {
			t.Errorf("%s: mode %v gained o+r", d, fi.Mode().Perm())
		}
	}
}

func TestURLQuoting(t *testing.T) {
	c := New("/tmp/it's here", nil)
	got := c.URL("db")
	want := `host='/tmp/it\'s here/run' port=5432 user=tollgate dbname=db sslmode=disable`
	if got != want {
		t.Fatalf("URL = %s, want %s", got, want)
	}
}

// FuzzURL checks that any data dir and database name survive quoting:
// lib/pq must read back exactly the socket dir and database we meant.
func FuzzURL(f *testing.F) {
	f.Add("/var/lib/tollgate", "tollgate")
	f.Add("/tmp/it's here", `we\ird db`)
	f.Fuzz(func(t *testing.T, dir, db string) {
		if !filepath.IsAbs(dir) || strings.ContainsAny(dir+db, "\x00,") || db == "" || !utf8.ValidString(dir) || !utf8.ValidString(db) {
			t.Skip()
		}
		c := &Cluster{Dir: dir}
		cfg, err := pq.NewConfig(c.URL(db))
		if err != nil {
			t.Fatalf("URL %q: %v", c.URL(db), err)
		}
		if cfg.Host != c.runDir() || cfg.Database != db || cfg.User != Superuser {
			t.Fatalf("URL %q parsed as host=%q dbname=%q user=%q", c.URL(db), cfg.Host, cfg.Database, cfg.User)
		}
	})
}
