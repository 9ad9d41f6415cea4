package store

import (
	"context"
	"database/sql/driver"
	"maps"

	"github.com/lib/pq"
)

// Config adjusts how Open connects.
type Config struct {
	// Trace, when set, is called with the text of every statement the pool
	// sends (run directly or prepared), before it is sent; it must be safe
	// for concurrent use. Tests use it to hold the daemon's statements to
	// the schema's rules (one merchant per row lock, no join across
	// merchants).
	Trace func(query string)
	// GenericPlans runs every prepared statement of the pool's sessions on
	// its generic plan (plan_cache_mode), planned once per connection:
	// see DB.GenericPlans.
	GenericPlans bool
}

// connector opens lib/pq connections, wrapped to report statements when
// the config asks for it.
func (cfg Config) connector(url string) (driver.Connector, error) {
	pcfg, err := pq.NewConfig(url)
	if err != nil {
		return nil, err
	}
	if cfg.GenericPlans {
		// Sent as a run-time parameter when each connection starts.
		pcfg.Runtime = maps.Clone(pcfg.Runtime)
		if pcfg.Runtime == nil {
			pcfg.Runtime = map[string]string{}
		}
		pcfg.Runtime["plan_cache_mode"] = "force_generic_plan"
	}
	c, err := pq.NewConnectorConfig(pcfg)
	if err != nil || cfg.Trace == nil {
		return c, err
	}
	return tracingConnector{Connector: c, trace: cfg.Trace}, nil
}

type tracingConnector struct {
	*pq.Connector
	trace func(string)
}

func (c tracingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	cn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &tracingConn{conn: cn, trace: c.trace}, nil
}

// pqConn is what lib/pq's connection implements; the wrapper forwards all
// of it, so database/sql takes the same paths with or without tracing.
type pqConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
	driver.NamedValueChecker
}

type tracingConn struct {
	conn  driver.Conn
	trace func(string)
}

func (c *tracingConn) pq() pqConn { return c.conn.(pqConn) }

func (c *tracingConn) Prepare(query string) (driver.Stmt, error) {
	c.trace(query)
	return c.conn.Prepare(query)
}

func (c *tracingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	c.trace(query)
	return c.pq().PrepareContext(ctx, query)
}

func (c *tracingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	c.trace(query)
	return c.pq().ExecContext(ctx, query, args)
}

func (c *tracingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	c.trace(query)
	return c.pq().QueryContext(ctx, query, args)
}

func (c *tracingConn) Close() error { return c.conn.Close() }

//lint:ignore SA1019 driver.Conn requires Begin; database/sql calls BeginTx.
func (c *tracingConn) Begin() (driver.Tx, error) { return c.conn.Begin() } //nolint:staticcheck

func (c *tracingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.pq().BeginTx(ctx, opts)
}

func (c *tracingConn) Ping(ctx context.Context) error { return c.pq().Ping(ctx) }

func (c *tracingConn) ResetSession(ctx context.Context) error { return c.pq().ResetSession(ctx) }

func (c *tracingConn) IsValid() bool { return c.pq().IsValid() }

func (c *tracingConn) CheckNamedValue(nv *driver.NamedValue) error {
	return c.pq().CheckNamedValue(nv)
}
