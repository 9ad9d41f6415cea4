package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/metering"
)

// Daemon is a running HTTP server.
type Daemon struct {
	Server *Server
	// URL is the address the daemon listens on, e.g. http://127.0.0.1:8080.
	URL  string
	Addr net.Addr

	srv        *http.Server
	deliveries *deliverer
	// stopBackground ends loops that need no draining (the credit sweep).
	stopBackground context.CancelFunc
	background     sync.WaitGroup
	done           chan struct{} // closed when Serve has returned
	serveErr       error
	shutOnce       sync.Once
	shutErr        error
}

// Start validates cfg, listens on cfg.Listen and serves in the background
// until Shutdown, with the webhook delivery workers running alongside. A
// taken port or an unreadable --webhook-ca-file is one clear error.
func Start(cfg Config, db *sqlx.DB, log *slog.Logger, opts ...StartOption) (*Daemon, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var o startOptions
	for _, opt := range opts {
		opt(&o)
	}
	deliveries, err := newDeliverer(cfg, db, log, o)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("cannot listen on %s: the port is already in use (is another tollgate running? pass --listen)", cfg.Listen)
		}
		return nil, fmt.Errorf("cannot listen on %s: %v", cfg.Listen, err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	url := "http://" + net.JoinHostPort(host, fmt.Sprint(addr.Port))
	base := cfg.BaseURL
	if base == "" {
		base = url
	}
	s := NewServer(cfg, db, log, trimSlash(base), nil)
	d := &Daemon{
		Server: s, URL: url, Addr: addr, deliveries: deliveries, done: make(chan struct{}),
		srv: &http.Server{
			Handler:           s,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       60 * time.Second,
			WriteTimeout:      60 * time.Second,
			IdleTimeout:       120 * time.Second,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		},
	}
	go func() {
		err := d.srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		d.serveErr = err
		close(d.done)
	}()
	deliveries.start()
	bg, cancel := context.WithCancel(context.Background())
	d.stopBackground = cancel
	d.background.Add(1)
	go func() {
		defer d.background.Done()
		// Balances never wait for the sweep (reads leave expired remainders
		// out); it writes the expiry entries, claiming accounts with SKIP
		// LOCKED so replicas never write one twice.
		credits.RunSweeper(bg, db, time.Minute, func(err error) { log.Warn("credit expiry sweep", "err", err) })
	}()
	d.background.Add(1)
	go func() {
		defer d.background.Done()
		pruneMeterEventKeys(bg, db, log)
	}()
	d.background.Add(1)
	go func() {
		defer d.background.Done()
		pruneOAuth(bg, db, log)
	}()
	return d, nil
}

// Shutdown stops accepting connections and claiming deliveries, and waits
// for in-flight requests and delivery attempts to finish, up to ctx's
// deadline (attempts cut short are sent again by the next daemon).
func (d *Daemon) Shutdown(ctx context.Context) error {
	d.shutOnce.Do(func() { d.shutErr = d.shutdown(ctx) })
	return d.shutErr
}

func (d *Daemon) shutdown(ctx context.Context) error {
	d.stopBackground()
	defer d.background.Wait()
	err := d.srv.Shutdown(ctx)
	<-d.done
	if err == nil {
		err = d.serveErr
	}
	if derr := d.deliveries.shutdown(ctx); err == nil {
		err = derr
	}
	return err
}

// Done is closed when the server has stopped, by Shutdown or by failing;
// Err then says why. Shutdown may be called more than once.
func (d *Daemon) Done() <-chan struct{} { return d.done }

// Err is the error the server stopped with, once Done is closed.
func (d *Daemon) Err() error { return d.serveErr }

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

// pruneMeterEventKeys drops meter-event idempotency keys once they are past
// the 35 days they are promised for, an hour after start and then daily
// (the delete scans the key table, so it runs rarely; replicas running it
// at once delete the same rows harmlessly).
func pruneMeterEventKeys(ctx context.Context, db *sqlx.DB, log *slog.Logger) {
	wait := time.Hour
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = 24 * time.Hour
		n, err := metering.PruneKeys(ctx, db, time.Now().Add(-metering.MaxAge-time.Hour))
		if err != nil && ctx.Err() == nil {
			log.Warn("pruning meter event idempotency keys", "err", err)
			continue
		}
		log.Info("pruned meter event idempotency keys", "deleted", n)
	}
}
