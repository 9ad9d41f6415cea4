// Package pgcluster runs the daemon's embedded default database: a private
// PostgreSQL cluster under the data directory, started from the PostgreSQL
// binaries installed on the machine and reachable only through a unix socket
// in that directory.
package pgcluster

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/lib/pq"
)

// Superuser and Database are the role and database Start provides.
const (
	Superuser = "tollgate"
	Database  = "tollgate"
)

// MaxSocketPath is the longest unix socket path the kernel accepts
// (sizeof(sun_path) minus the terminating NUL).
const MaxSocketPath = 107

const (
	port         = "5432"
	socketName   = ".s.PGSQL." + port
	startTimeout = 120 * time.Second
	readyTimeout = 30 * time.Second
	logRotateAt  = 16 << 20
)

// Cluster is a private PostgreSQL cluster under Dir.
type Cluster struct {
	// Dir is the tollgate data dir; cluster data in Dir/pg, socket in
	// Dir/run, server log in Dir/pg.log.
	Dir string
	Log *slog.Logger
	// Ephemeral trades durability for speed (no fsync anywhere), for
	// clusters thrown away afterwards such as the test harness's.
	Ephemeral bool

	bin string
	as  *runAs
	// users is this Cluster's shared lock on Dir/users.lock, held from
	// Start to Release (see users.go).
	users *os.File
}

// New returns a Cluster for data dir dir (made absolute, since the server
// does not run in our working directory). A nil log discards.
func New(dir string, log *slog.Logger) *Cluster {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return &Cluster{Dir: dir, Log: log}
}

func (c *Cluster) dataDir() string { return filepath.Join(c.Dir, "pg") }
func (c *Cluster) runDir() string  { return filepath.Join(c.Dir, "run") }

// LogFile is the server's log, kept for diagnosing failures.
func (c *Cluster) LogFile() string { return filepath.Join(c.Dir, "pg.log") }

// URL is the lib/pq connection string for database name db over the unix
// socket. Port and sslmode are explicit so PG* variables in the
// environment cannot redirect it.
func (c *Cluster) URL(db string) string {
	return fmt.Sprintf("host=%s port=%s user=%s dbname=%s sslmode=disable",
		quote(c.runDir()), port, Superuser, quote(db))
}

// quote renders a lib/pq key=value value.
func quote(s string) string {
	// lib/pq ends an unquoted value at any unicode space, not just ' '.
	if s != "" && !strings.ContainsAny(s, `'\`) && strings.IndexFunc(s, unicode.IsSpace) < 0 {
		return s
	}
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// prepare finds the binaries and the server user and checks the paths. It
// is cheap and runs on every Start and Stop.
func (c *Cluster) prepare() error {
	if sock := filepath.Join(c.runDir(), socketName); len(sock) > MaxSocketPath {
		return fmt.Errorf("data directory %s is too deep: the PostgreSQL socket path %s is %d bytes, over the unix limit of %d; use a shorter --data-dir or pass --database-url", c.Dir, sock, len(sock), MaxSocketPath)
	}
	bin, err := FindBinaries()
	if err != nil {
		return err
	}
	as, err := serverUser()
	if err != nil {
		return err
	}
	c.bin, c.as = bin, as
	return nil
}

// Start initialises the cluster if needed (initdb, superuser "tollgate",
// trust auth on the unix socket only, no TCP listener), starts it with
// pg_ctl if it is not running (if it is already running, used by another
// process or left behind by a daemon that was killed, it attaches to it),
// and creates database "tollgate" if missing. owned is true when this call
// started the server. Every successful Start is paired with Release, which
// stops the server only when no other process is using it.
func (c *Cluster) Start(ctx context.Context) (owned bool, err error) {
	if err := c.prepare(); err != nil {
		return false, err
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return false, fmt.Errorf("create data dir: %w", err)
	}
	if c.as != nil {
		if err := ensureTraversable(c.Dir, c.as.uid, c.as.gids, c.Log); err != nil {
			return false, err
		}
	}
	if err := c.as.mkdirOwned(c.runDir()); err != nil {
		return false, fmt.Errorf("create socket dir: %w", err)
	}
	// Joining first means nobody stops the server between our finding it
	// running and our using it.
	if err := c.join(ctx); err != nil {
		return false, err
	}
	defer func() {
		if err != nil {
			_ = c.Release(context.WithoutCancel(ctx))
		}
	}()
	if err := c.initdb(ctx); err != nil {
		return false, err
	}
	running, err := c.running(ctx)
	if err != nil {
		return false, err
	}
	if running {
		c.Log.Info("attaching to running PostgreSQL", "dir", c.dataDir())
	} else {
		if err := c.start(ctx); err != nil {
			// Another process may have started it between our check and
			// pg_ctl (two daemons on one data dir): attach instead.
			if ok, _ := c.running(ctx); !ok {
				return false, err
			}
		} else {
			owned = true
		}
	}
	if err := c.createDatabase(ctx); err != nil {
		return false, err
	}
	return owned, nil
}

// Stop shuts the server down (pg_ctl stop -m fast: sessions are cut,
// committed work is kept) whoever is using it, and ends this Cluster's use
// of it; it is for throwaway clusters (tests) and cleaning up. Processes
// sharing a cluster call Release instead. Stopping a stopped cluster is not
// an error.
func (c *Cluster) Stop(ctx context.Context) error {
	defer c.leave()
	return c.stop(ctx)
}

func (c *Cluster) stop(ctx context.Context) error {
	if err := c.prepare(); err != nil {
		return err
	}
	if ok, err := c.running(ctx); err != nil || !ok {
		return err
	}
	out, err := c.pgctl(ctx, "stop", "-D", c.dataDir(), "-m", "fast", "-w", "-t", secs(startTimeout)).CombinedOutput()
	if err != nil {
		return fmt.Errorf("stop PostgreSQL: %s: %w", oneLine(out), err)
	}
	return nil
}

// initdb creates the cluster unless it exists. It builds it in Dir/pg.init
// and renames it into place, so an interrupted initdb never leaves a
// half-made Dir/pg that later starts would trip on.
func (c *Cluster) initdb(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(c.dataDir(), "PG_VERSION")); err == nil {
		return c.writeSettings()
	}
	if _, err := os.Stat(c.dataDir()); err == nil {
		return fmt.Errorf("%s exists but is not a PostgreSQL cluster (no PG_VERSION): move it away", c.dataDir())
	}
	tmp := c.dataDir() + ".init"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := c.as.mkdirOwned(tmp); err != nil {
		return fmt.Errorf("create cluster dir: %w", err)
	}
	c.Log.Info("creating PostgreSQL cluster", "dir", c.dataDir(), "bin", c.bin)
	// C locale: always available, same sort order everywhere, English
	// server messages.
	args := []string{"-D", tmp, "-U", Superuser, "-E", "UTF8", "--locale=C", "-A", "trust", "--no-instructions"}
	if c.Ephemeral {
		args = append(args, "--no-sync")
	}
	cmd := c.command(ctx, filepath.Join(c.bin, "initdb"), args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("initdb failed: %s: %w", lastLines(string(out), 5), err)
	}
	// Only the socket, which only the server user (and root) can reach
	// because Dir/run is 0700, is trusted; there is no TCP listener.
	hba := "# managed by tollgate\nlocal all all trust\n"
	if err := c.as.writeOwned(filepath.Join(tmp, "pg_hba.conf"), []byte(hba)); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(tmp, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString("\n# tollgate's settings, rewritten at every start\ninclude_if_exists = 'tollgate.conf'\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, c.dataDir()); err != nil {
		return err
	}
	return c.writeSettings()
}

// writeSettings (re)writes tollgate.conf, so a moved data dir or a new
// tollgate version takes effect on the next start.
func (c *Cluster) writeSettings() error {
	conf := fmt.Sprintf(`listen_addresses = ''
port = %s
unix_socket_directories = %s
unix_socket_permissions = 0700
max_connections = 200
`, port, confQuote(c.runDir()))
	if c.Ephemeral {
		conf += "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\nshared_buffers = 32MB\n"
	}
	return c.as.writeOwned(filepath.Join(c.dataDir(), "tollgate.conf"), []byte(conf))
}

func confQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// running asks pg_ctl, which also sees through a stale postmaster.pid
// left by a killed server.
func (c *Cluster) running(ctx context.Context) (bool, error) {
	out, err := c.pgctl(ctx, "status", "-D", c.dataDir()).CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ee) && (ee.ExitCode() == 3 || ee.ExitCode() == 4): // not running; no cluster
		return false, nil
	default:
		return false, fmt.Errorf("pg_ctl status: %s: %w", oneLine(out), err)
	}
}

func (c *Cluster) start(ctx context.Context) error {
	from, err := c.prepareLog()
	if err != nil {
		return err
	}
	c.Log.Info("starting PostgreSQL", "dir", c.dataDir(), "log", c.LogFile())
	out, err := c.pgctl(ctx, "start", "-D", c.dataDir(), "-l", c.LogFile(), "-w", "-t", secs(startTimeout)).CombinedOutput()
	if err == nil {
		return nil
	}
	// Quote only what this attempt logged; older lines would mislead.
	why := oneLine(out)
	if b, rerr := os.ReadFile(c.LogFile()); rerr == nil && int64(len(b)) > from {
		why = lastLines(string(b[from:]), 3)
	}
	return fmt.Errorf("PostgreSQL failed to start: %s (log: %s)", why, c.LogFile())
}

// prepareLog creates the log for the server user (it cannot create files
// in Dir), rotating it once so it cannot grow without bound, and returns
// its current size.
func (c *Cluster) prepareLog() (int64, error) {
	p := c.LogFile()
	if fi, err := os.Stat(p); err == nil && fi.Size() > logRotateAt {
		_ = os.Rename(p, p+".1")
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, fmt.Errorf("create server log: %w", err)
	}
	fi, err := f.Stat()
	_ = f.Close()
	if err != nil {
		return 0, err
	}
	return fi.Size(), c.as.own(p)
}

// createDatabase waits until the server accepts connections (an attached
// server may still be starting up) and creates the tollgate database.
func (c *Cluster) createDatabase(ctx context.Context) error {
	db, err := sql.Open("postgres", c.URL("postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(readyTimeout)
	for {
		err = db.PingContext(ctx)
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("connect to PostgreSQL at %s: %w", c.runDir(), err)
	}
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, Database).Scan(&exists); err != nil {
		return fmt.Errorf("look up database %s: %w", Database, err)
	}
	if exists {
		return nil
	}
	_, err = db.ExecContext(ctx, "CREATE DATABASE "+pq.QuoteIdentifier(Database))
	var pqErr *pq.Error
	if errors.As(err, &pqErr) && pqErr.Code == "42P04" { // created concurrently
		err = nil
	}
	if err != nil {
		return fmt.Errorf("create database %s: %w", Database, err)
	}
	return nil
}

func (c *Cluster) pgctl(ctx context.Context, args ...string) *exec.Cmd {
	return c.command(ctx, filepath.Join(c.bin, "pg_ctl"), args...)
}

func (c *Cluster) command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = c.as.sysProcAttr()
	// The server user may not be able to enter our working directory.
	cmd.Dir = "/"
	// PGDATA/PGPORT and friends must not override our explicit settings,
	// and LC_ALL=C keeps tool messages in English for error reports.
	env := []string{"LC_ALL=C"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PG") && !strings.HasPrefix(kv, "LC_ALL=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	return cmd
}

func secs(d time.Duration) string { return fmt.Sprint(int(d.Seconds())) }

func oneLine(b []byte) string {
	return strings.Join(strings.Fields(string(b)), " ")
}

// lastLines joins the last n non-empty lines of s with " | ", so a start
// error stays one line yet shows why.
func lastLines(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 0 {
		return "(server log empty)"
	}
	return strings.Join(lines, " | ")
}
