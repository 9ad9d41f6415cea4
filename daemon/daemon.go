package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/jmoiron/sqlx"
)

// Daemon is a running HTTP server.
type Daemon struct {
	Server *Server
	// URL is the address the daemon listens on, e.g. http://127.0.0.1:8080.
	URL  string
	Addr net.Addr

	srv  *http.Server
	done chan error
}

// Start validates cfg, listens on cfg.Listen and serves in the background
// until Shutdown. A taken port is one clear error.
func Start(cfg Config, db *sqlx.DB, log *slog.Logger) (*Daemon, error) {
	if err := cfg.Validate(); err != nil {
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
		Server: s, URL: url, Addr: addr, done: make(chan error, 1),
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
		d.done <- err
	}()
	return d, nil
}

// Shutdown stops accepting connections and waits for in-flight requests to
// finish, up to ctx's deadline.
func (d *Daemon) Shutdown(ctx context.Context) error {
	err := d.srv.Shutdown(ctx)
	if werr := <-d.done; err == nil {
		err = werr
	}
	return err
}

// Done is closed-over by callers that wait for the server to stop by itself.
func (d *Daemon) Done() <-chan error { return d.done }

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}
