package testdb

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tollgatehq/tollgate/internal/pgcluster"
)

func TestMain(m *testing.M) { Main(m) }

func TestNewDatabasesAreSeparate(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]bool{}
	// Parallel subtests run once the group's body returns; the group
	// returns once they are done.
	t.Run("group", func(t *testing.T) {
		for _, name := range []string{"a", "b"} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				u := New(t)
				mu.Lock()
				seen[u] = true
				mu.Unlock()
				db, err := sql.Open("postgres", u)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				var n int
				if err := db.QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n == 0 {
					t.Fatalf("template not migrated: schema_migrations n=%d err=%v", n, err)
				}
				for _, q := range []string{`CREATE TABLE mine (v text)`, `INSERT INTO mine VALUES ('` + name + `')`} {
					if _, err := db.Exec(q); err != nil {
						t.Fatal(err)
					}
				}
				var vals []string
				rows, err := db.Query(`SELECT v FROM mine`)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				for rows.Next() {
					var v string
					if err := rows.Scan(&v); err != nil {
						t.Fatal(err)
					}
					vals = append(vals, v)
				}
				if strings.Join(vals, ",") != name {
					t.Fatalf("table mine holds %v, want only %q", vals, name)
				}
			})
		}
	})
	if len(seen) != 2 {
		t.Fatalf("two New calls gave %d distinct databases", len(seen))
	}
}

func TestDatabaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:p@h:5432/postgres?sslmode=disable": "postgres://u:p@h:5432/x?sslmode=disable",
		"host=/tmp/run user=tollgate dbname=postgres":    "host=/tmp/run user=tollgate dbname=postgres dbname=x",
	} {
		if got := DatabaseURL(in, "x"); got != want {
			t.Errorf("DatabaseURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// A cluster whose test process died is stopped and removed by the next run.
func TestReapOrphans(t *testing.T) {
	base, err := os.MkdirTemp("", "tgr")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(base, "tgtest1")
	alive := filepath.Join(base, "tgtest2")
	ctx := context.Background()
	for dir, pid := range map[string]int{orphan: dead.Process.Pid, alive: os.Getpid()} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(strconv.Itoa(pid)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cl := pgcluster.New(orphan, nil)
	cl.Ephemeral = true
	if _, err := cl.Start(ctx); err != nil {
		t.Fatal(err)
	}
	reapOrphans(ctx, base)
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		_ = cl.Stop(ctx)
		t.Fatalf("orphan cluster dir still there: %v", err)
	}
	if _, err := os.Stat(alive); err != nil {
		t.Fatal("a live owner's dir was reaped")
	}
}
