package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func open(t *testing.T) *store.DB {
	t.Helper()
	db := testdb.Open(t)
	return db
}

// preparedCount is how many named prepared statements the session of q
// holds (the pool's statements are prepared per connection).
func preparedCount(t *testing.T, ctx context.Context, q store.Querier, text string) int {
	t.Helper()
	var n int
	if err := q.GetContext(ctx, &n, `SELECT count(*) FROM pg_prepared_statements WHERE statement = $1`, text); err != nil {
		t.Fatal(err)
	}
	return n
}

// A statement run on the pool is prepared and reused: PostgreSQL holds it
// as a named prepared statement, and it answers like the unprepared query.
func TestStatementsArePrepared(t *testing.T) {
	t.Parallel()
	db := open(t)
	ctx := context.Background()
	const q = `SELECT $1::int + $2::int`
	for i := range 3 {
		var sum int
		if err := db.GetContext(ctx, &sum, q, i, 40); err != nil || sum != i+40 {
			t.Fatalf("sum %d %v", sum, err)
		}
	}
	// One connection runs both, so the statement is on the one we ask.
	db.SetMaxOpenConns(1)
	var sum int
	if err := db.GetContext(ctx, &sum, q, 1, 1); err != nil {
		t.Fatal(err)
	}
	if n := preparedCount(t, ctx, db, q); n != 1 {
		t.Fatalf("%d prepared statements of %q", n, q)
	}
}

// Several statements in one string cannot be prepared: they run as before.
// So does a statement PostgreSQL refuses, with its own error.
func TestUnpreparableStatementsStillRun(t *testing.T) {
	t.Parallel()
	db := open(t)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TEMP TABLE a (x int); DROP TABLE a`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TEMP TABLE a (x int); DROP TABLE a`); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if _, err := db.ExecContext(ctx, `SELECT * FROM no_such_table`); err == nil {
		t.Fatal("a query of a missing table succeeded")
	}
	err := db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `SELECT 1; SELECT 2`)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// In a transaction a statement not prepared yet runs unprepared and is
// prepared in the background; the next transaction uses it.
func TestTransactionsUsePreparedStatements(t *testing.T) {
	t.Parallel()
	db := open(t)
	ctx := context.Background()
	db.SetMaxOpenConns(1)
	const q = `SELECT 7 * $1::int`
	run := func() {
		t.Helper()
		err := db.InTx(ctx, func(tx *store.Tx) error {
			var v int
			if err := tx.GetContext(ctx, &v, q, 6); err != nil || v != 42 {
				return fmt.Errorf("got %d: %v", v, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	run()
	deadline := time.Now().Add(10 * time.Second)
	for preparedCount(t, ctx, db, q) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the statement was never prepared")
		}
		time.Sleep(10 * time.Millisecond)
	}
	run()
}

// Every connection of the pool in a transaction, each running a statement
// seen for the first time: none waits for a connection to prepare it (which
// would deadlock the full pool).
func TestFullPoolOfTransactionsDoesNotDeadlock(t *testing.T) {
	t.Parallel()
	db := open(t)
	const n = 8
	db.SetMaxOpenConns(n)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var started sync.WaitGroup
	started.Add(n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			errs <- db.InTx(ctx, func(tx *store.Tx) error {
				if _, err := tx.ExecContext(ctx, `SELECT 1`); err != nil {
					return err
				}
				started.Done()
				started.Wait() // every connection is now held by a transaction
				var v int
				return tx.GetContext(ctx, &v, fmt.Sprintf(`SELECT %d + $1::int`, i), 1)
			})
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// More distinct queries than the cache holds: the least recently used are
// closed, so a connection never holds more than the cache, and every query
// still answers.
func TestStatementCacheEvicts(t *testing.T) {
	t.Parallel()
	db := open(t)
	ctx := context.Background()
	db.SetMaxOpenConns(1)
	for i := range 400 {
		var v int
		if err := db.GetContext(ctx, &v, fmt.Sprintf(`SELECT %d + $1::int`, i), 1); err != nil || v != i+1 {
			t.Fatalf("query %d: %d %v", i, v, err)
		}
	}
	var n int
	if err := db.DB.GetContext(ctx, &n, `SELECT count(*) FROM pg_prepared_statements`); err != nil {
		t.Fatal(err)
	}
	if n < 100 || n > 256 {
		t.Fatalf("%d statements prepared on the connection", n)
	}
}

// A query starting with CustomPlan runs unprepared, on the pool and in a
// transaction: PostgreSQL plans it for its arguments each time.
func TestCustomPlanRunsUnprepared(t *testing.T) {
	t.Parallel()
	db := open(t)
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	q := store.CustomPlan + `SELECT $1::int * 2`
	for i := range 3 {
		var v int
		if err := db.GetContext(ctx, &v, q, i); err != nil || v != 2*i {
			t.Fatalf("%d %v", v, err)
		}
		err := db.InTx(ctx, func(tx *store.Tx) error { return tx.GetContext(ctx, &v, q, i) })
		if err != nil || v != 2*i {
			t.Fatalf("in a transaction: %d %v", v, err)
		}
	}
	if n := preparedCount(t, ctx, db, q); n != 0 {
		t.Fatalf("%d prepared statements of %q", n, q)
	}
}
