package pgcluster

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
)

// runAs is the identity PostgreSQL runs under. A nil *runAs means "as self".
type runAs struct {
	uid, gid uint32
	gids     []uint32 // all groups, for the traversal check
}

// serverUser picks who runs PostgreSQL: postgres refuses to run as root, so
// root hands the cluster to the system user "postgres".
func serverUser() (*runAs, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, PostgreSQL must run as the system user \"postgres\", which does not exist: create it (useradd --system postgres), install PostgreSQL, or run tollgate as a non-root user")
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("user postgres has a non-numeric uid/gid %q/%q", u.Uid, u.Gid)
	}
	r := &runAs{uid: uint32(uid), gid: uint32(gid), gids: []uint32{uint32(gid)}}
	if ids, err := u.GroupIds(); err == nil {
		for _, s := range ids {
			if g, err := strconv.ParseUint(s, 10, 32); err == nil {
				r.gids = append(r.gids, uint32(g))
			}
		}
	}
	return r, nil
}

func (r *runAs) sysProcAttr() *syscall.SysProcAttr {
	// Setpgid keeps the server out of the daemon's process group, so a
	// Ctrl-C aimed at the daemon does not also shut PostgreSQL down under it
	// mid-request; the daemon stops it itself.
	a := &syscall.SysProcAttr{Setpgid: true}
	if r != nil {
		a.Credential = &syscall.Credential{Uid: r.uid, Gid: r.gid, Groups: r.gids}
	}
	return a
}

// own hands path to the server user (no-op when running as self).
func (r *runAs) own(path string) error {
	if r == nil {
		return nil
	}
	if err := os.Chown(path, int(r.uid), int(r.gid)); err != nil {
		return fmt.Errorf("give %s to user postgres: %w", path, err)
	}
	return nil
}

// mkdirOwned creates dir (0700) for the server user.
func (r *runAs) mkdirOwned(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return err
	}
	return r.own(dir)
}

// writeOwned writes a file the server must read.
func (r *runAs) writeOwned(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	return r.own(path)
}

// ensureTraversable adds the o+x (search only, never read) bit to dir and
// each ancestor the server user could not otherwise pass through, e.g.
// /root (0700), since the cluster lives below them.
func ensureTraversable(dir string, uid uint32, gids []uint32, log *slog.Logger) error {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if !canSearch(fi, uid, gids) {
			mode := fi.Mode().Perm() | 0o001
			if err := os.Chmod(d, mode|fi.Mode()&(os.ModeSticky|os.ModeSetgid|os.ModeSetuid)); err != nil {
				return fmt.Errorf("PostgreSQL (user postgres) cannot reach %s and adding o+x to %s failed: %w", dir, d, err)
			}
			// The data dir itself is ours to set; loosening someone
			// else's directory (an ancestor) deserves a warning.
			level := slog.LevelWarn
			if d == dir {
				level = slog.LevelDebug
			}
			log.Log(context.Background(), level, "added o+x (search) so the postgres user can reach the cluster", "dir", d, "mode", fmt.Sprintf("%04o", mode))
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

func canSearch(fi os.FileInfo, uid uint32, gids []uint32) bool {
	perm := fi.Mode().Perm()
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return perm&0o001 != 0
	}
	// Like the kernel: the owner class, else the group class, else other.
	switch {
	case st.Uid == uid:
		return perm&0o100 != 0
	case slices.Contains(gids, st.Gid):
		return perm&0o010 != 0
	default:
		return perm&0o001 != 0
	}
}
