package pgcluster

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func isRunning(t *testing.T, c *Cluster) bool {
	t.Helper()
	ok, err := c.running(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func query(c *Cluster) error {
	db, err := sql.Open("postgres", c.URL(Database))
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Ping()
}

// The last process using a cluster stops it; nobody stops a cluster another
// process still uses, whichever of them started it.
func TestLastUserStops(t *testing.T) {
	if _, err := FindBinaries(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	dir := shortDir(t)
	first := New(dir, testLog(t))
	first.Ephemeral = true
	if owned, err := first.Start(ctx); err != nil || !owned {
		t.Fatalf("first Start: owned=%v err=%v", owned, err)
	}
	t.Cleanup(func() { _ = first.Stop(context.Background()) })

	// A second daemon attaches, then leaves: the first keeps its database.
	second := New(dir, testLog(t))
	if owned, err := second.Start(ctx); err != nil || owned {
		t.Fatalf("second Start: owned=%v err=%v", owned, err)
	}
	if err := second.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := query(first); err != nil || !isRunning(t, first) {
		t.Fatalf("the second's Release stopped the first's cluster: %v", err)
	}
	if err := second.Release(ctx); err != nil {
		t.Fatalf("second Release: %v", err)
	}

	// The one that started it leaves first; the attached one keeps it, and
	// stops it when it leaves last.
	third := New(dir, testLog(t))
	if _, err := third.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := query(third); err != nil {
		t.Fatalf("the starter's Release stopped a cluster still in use: %v", err)
	}
	if err := third.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if isRunning(t, third) {
		t.Fatal("the last user left the cluster running")
	}

	// A user that dies (its lock dropped by the kernel, no Release) leaves
	// the server behind; whoever uses it next stops it when done.
	crashed := New(dir, testLog(t))
	if owned, err := crashed.Start(ctx); err != nil || !owned {
		t.Fatalf("restart: owned=%v err=%v", owned, err)
	}
	crashed.leave() // as if killed
	if !isRunning(t, crashed) {
		t.Fatal("server gone with its starter's lock")
	}
	next := New(dir, testLog(t))
	if owned, err := next.Start(ctx); err != nil || owned {
		t.Fatalf("attach to the orphan: owned=%v err=%v", owned, err)
	}
	if err := next.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if isRunning(t, next) {
		t.Fatal("the orphaned server was left running")
	}
}

// While a process holds the users file exclusively (it is stopping the
// server), nobody joins: a Start waits rather than attach to a server
// about to go.
func TestJoinWaitsWhileStopping(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	stopper, err := os.OpenFile(filepath.Join(dir, usersFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer stopper.Close()
	if err := syscall.Flock(int(stopper.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	c := New(dir, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*joinPoll)
	defer cancel()
	if err := c.join(ctx); !errors.Is(err, context.DeadlineExceeded) || c.users != nil {
		t.Fatalf("join while stopping: %v, want it to wait until the deadline", err)
	}
	if err := syscall.Flock(int(stopper.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	if err := c.join(context.Background()); err != nil || c.users == nil {
		t.Fatalf("join after the stop: %v", err)
	}
	// Now a user holds it, nobody gets it exclusively.
	if err := syscall.Flock(int(stopper.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("exclusive lock beside a user: %v", err)
	}
	c.leave()
	if err := syscall.Flock(int(stopper.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("exclusive lock after the user left: %v", err)
	}
}
