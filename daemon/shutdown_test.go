package daemon_test

import (
	"context"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
)

// Shutdown lets an in-flight request finish: the request is held inside the
// database by a table lock while Shutdown starts, and still gets its 201.
func TestGracefulShutdownFinishesInFlight(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c, _ := b.testClient()
	ctx := context.Background()
	lock, err := b.db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(`LOCK TABLE invoices IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	result := make(chan error, 1)
	go func() {
		_, err := c.CreateInvoice(ctx, client.InvoiceParams{Amount: "1", Description: "in flight"})
		result <- err
	}()
	// Wait until the request is blocked on the lock inside PostgreSQL.
	waitFor(t, 10*time.Second, func() bool {
		var n int
		_ = b.db.Get(&n, `SELECT count(*) FROM pg_locks WHERE relation = 'invoices'::regclass AND NOT granted`)
		return n > 0
	})
	shut := make(chan error, 1)
	go func() {
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		shut <- b.d.Shutdown(sctx)
	}()
	// New connections are refused once shutdown has begun.
	waitFor(t, 10*time.Second, func() bool {
		_, err := client.New(b.url, "x", client.WithMaxRetries(0)).ListInvoices(ctx, client.ListParams{})
		return err != nil && !isAPIError(err)
	})
	select {
	case err := <-shut:
		t.Fatalf("shutdown returned while a request was in flight: %v", err)
	default:
	}
	if err := lock.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-result; err != nil {
		t.Fatalf("in-flight request failed: %v", err)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
}

func isAPIError(err error) bool {
	_, ok := err.(*client.Error)
	return ok
}
