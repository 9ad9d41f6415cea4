package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Several processes share one cluster: a daemon, a second daemon on the
// same data dir, admin commands run beside them. Each holds a shared flock
// on Dir/users.lock for as long as it uses the server, and the last one to
// leave stops it: leaving tries to turn the shared lock into an exclusive
// one, which succeeds only when no other process holds the file. The kernel
// drops the locks of a process that dies, so a server left behind by a
// daemon killed with SIGKILL is stopped by whoever uses it last, and nobody
// stops a server another process is still using.

const usersFile = "users.lock"

// joinPoll is how often join retries while the server is being stopped.
const joinPoll = 50 * time.Millisecond

// join takes this Cluster's shared lock on the users file, waiting while
// another process holds it exclusively (it is stopping the server).
func (c *Cluster) join(ctx context.Context) error {
	if c.users != nil {
		return nil
	}
	path := filepath.Join(c.Dir, usersFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	deadline := time.Now().Add(startTimeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err == nil {
			c.users = f
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return fmt.Errorf("lock %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return fmt.Errorf("another tollgate process has been stopping PostgreSQL under %s for %s; try again once it has exited", c.Dir, startTimeout)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return ctx.Err()
		case <-time.After(joinPoll):
		}
	}
}

// Release ends this Cluster's use of the server, begun by Start. When no
// other process is using the server it stops it (pg_ctl stop -m fast);
// otherwise it leaves it running for them. Releasing twice, or without a
// Start, does nothing.
func (c *Cluster) Release(ctx context.Context) error {
	f := c.users
	if f == nil {
		return nil
	}
	c.users = nil
	defer f.Close()
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		c.Log.Info("leaving PostgreSQL running for the other processes using it", "dir", c.dataDir())
		return nil
	}
	if err != nil {
		return fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	// Exclusive: nobody else uses the server, and nobody can start using it
	// until it is down and the lock is dropped.
	return c.stop(ctx)
}

// leave drops this Cluster's lock without stopping anything.
func (c *Cluster) leave() {
	if c.users != nil {
		c.users.Close()
		c.users = nil
	}
}
