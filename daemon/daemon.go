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

	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/tollgatehq/tollgate/internal/jobs"
	"github.com/tollgatehq/tollgate/internal/store"
)

// Daemon is a running HTTP server and its background jobs.
type Daemon struct {
	Server *Server
	// URL is the address the daemon listens on, e.g. http://127.0.0.1:8080.
	URL  string
	Addr net.Addr

	srv *http.Server
	// ethClient is the node connection Start dialed, closed at shutdown.
	ethClient  *ethclient.Client
	runner     *jobs.Runner
	deliveries *deliverer
	stopRecord chan struct{}
	done       chan struct{} // closed when Serve has returned
	serveErr   error
	shutOnce   sync.Once
	shutErr    error
}

// Start validates cfg, listens on cfg.Listen and serves in the background
// until Shutdown, with the job runner (webhook deliveries, credit expiry,
// pruning) running alongside. A taken port or an unreadable
// --webhook-ca-file is one clear error.
func Start(cfg Config, db *store.DB, log *slog.Logger) (*Daemon, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.MaxConnections = min(cfg.MaxConnections, fileHandleRoom())
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("cannot listen on %s: the port is already in use (is another tollgate running? pass --listen)", cfg.Listen)
		}
		return nil, fmt.Errorf("cannot listen on %s: %v", cfg.Listen, err)
	}
	var ethClient *ethclient.Client
	if cfg.Chain.Enabled() && cfg.LiveRail == nil {
		if ethClient, err = startChain(&cfg, db, log); err != nil {
			ln.Close()
			return nil, err
		}
	}
	addr := ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	url := "http://" + net.JoinHostPort(host, fmt.Sprint(addr.Port))
	if cfg.BaseURL == "" {
		cfg.BaseURL = url
	}
	cfg.BaseURL = trimSlash(cfg.BaseURL)
	s := NewServer(cfg, db, log, nil)
	deliveries, err := newDeliverer(cfg, db, log, newDeliveryMetrics(s.metrics.registry, db))
	if err != nil {
		ln.Close()
		closeClient(ethClient)
		return nil, err
	}
	runner := jobs.New(db, cfg.Clock, log)
	all := append(maintenanceJobs(cfg, db), deliveries.job(runner), billingJob(s.money.biller), alertJob(db))
	if s.onchain != nil {
		all = append(all, s.chainJob())
	}
	for _, j := range all {
		if err := runner.Add(j); err != nil {
			ln.Close()
			closeClient(ethClient)
			return nil, err
		}
	}
	limited := newConnLimiter(ln, cfg.MaxConnections, cfg.MaxConnectionsPerIP, s.metrics.registry)
	d := &Daemon{
		Server: s, URL: url, Addr: addr, runner: runner, deliveries: deliveries, ethClient: ethClient,
		stopRecord: make(chan struct{}), done: make(chan struct{}),
		srv: &http.Server{
			Handler:           s,
			ReadHeaderTimeout: 5 * time.Second,
			ReadTimeout:       60 * time.Second,
			WriteTimeout:      60 * time.Second,
			IdleTimeout:       cfg.IdleTimeout,
			ConnState:         limited.connState,
			ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		},
	}
	go func() {
		err := d.srv.Serve(limited)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		d.serveErr = err
		close(d.done)
	}()
	go deliveries.record(d.stopRecord)
	runner.Start()
	return d, nil
}

// Jobs is the daemon's job runner (tests drain its jobs on demand).
func (d *Daemon) Jobs() *jobs.Runner { return d.runner }

// Shutdown stops accepting connections and claiming work, and waits for
// in-flight requests, jobs and webhook attempts to finish (and the attempts
// to be recorded), up to ctx's deadline; work cut short is claimed again by
// the next daemon.
func (d *Daemon) Shutdown(ctx context.Context) error {
	d.shutOnce.Do(func() { d.shutErr = d.shutdown(ctx) })
	return d.shutErr
}

func (d *Daemon) shutdown(ctx context.Context) error {
	err := d.srv.Shutdown(ctx)
	<-d.done
	// No request is left to queue a credit grant or debit.
	d.Server.credits.Close()
	if err == nil {
		err = d.serveErr
	}
	if jerr := d.runner.Stop(ctx); err == nil {
		err = jerr
	}
	close(d.stopRecord)
	select {
	case <-d.deliveries.recorded:
	case <-ctx.Done():
		d.deliveries.cancelSend()
		<-d.deliveries.recorded
		if err == nil {
			err = fmt.Errorf("webhook deliveries: %w", ctx.Err())
		}
	}
	d.deliveries.cancelSend()
	closeClient(d.ethClient)
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
