package idempotency_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/idempotency"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func TestCheckKey(t *testing.T) {
	t.Parallel()
	for key, ok := range map[string]bool{
		"k": true, strings.Repeat("é", 255): true, "order 42/a:b": true,
		strings.Repeat("k", 256): false, "a\x00b": false, "a\nb": false, "a\x7fb": false, "a\u0085b": false, "\xff": false,
	} {
		if err := idempotency.CheckKey(key); (err == nil) != ok || (err != nil && apperr.CodeOf(err) != apperr.InvalidRequest) {
			t.Errorf("CheckKey(%.20q) = %v", key, err)
		}
	}
}

// Whatever the header holds, CheckKey answers invalid_request or accepts
// a key of at most 255 characters of text.
func FuzzCheckKey(f *testing.F) {
	for _, s := range []string{"", "k", "a\x00b", strings.Repeat("x", 256), "\xff\xfe", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		err := idempotency.CheckKey(key)
		if err != nil {
			if apperr.CodeOf(err) != apperr.InvalidRequest {
				t.Fatalf("%q: %v", key, err)
			}
			return
		}
		if !utf8.ValidString(key) || utf8.RuneCountInString(key) > idempotency.MaxKey || strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("accepted %q", key)
		}
	})
}

// A key's first run is recorded with its write; a replay answers it and
// runs nothing; other parameters are invalid_request; a failed run records
// nothing, so the next one runs.
func TestDo(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.Open(t)
	m, err := auth.CreateMerchant(ctx, db, "acme")
	if err != nil {
		t.Fatal(err)
	}
	req := idempotency.Request{Scope: tenant.Scope{MerchantID: m.ID, Mode: tenant.Test}, Operation: "op", Key: "k",
		Fingerprint: idempotency.Fingerprint([]byte("/a"), []byte(`{}`))}
	runs := 0
	run := func(tx *store.Tx) (int, []byte, error) {
		runs++
		_, err := tx.ExecContext(ctx, `SELECT 1`)
		return 201, []byte(`{"n":1}`), err
	}
	boom := errors.New("boom")
	if _, err := idempotency.Do(ctx, db, req, func(*store.Tx) (int, []byte, error) { return 0, nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("failed run: %v", err)
	}
	a, err := idempotency.Do(ctx, db, req, run)
	if err != nil || a.Status != 201 || string(a.Body) != `{"n":1}` || a.Replayed {
		t.Fatalf("first: %+v %v", a, err)
	}
	a, err = idempotency.Do(ctx, db, req, run)
	if err != nil || a.Status != 201 || string(a.Body) != `{"n":1}` || !a.Replayed || runs != 1 {
		t.Fatalf("replay: %+v %v, %d runs", a, err, runs)
	}
	other := req
	other.Fingerprint = idempotency.Fingerprint([]byte("/a"), []byte(`{"x":1}`))
	if _, err := idempotency.Do(ctx, db, other, run); apperr.CodeOf(err) != apperr.InvalidRequest {
		t.Fatalf("other parameters: %v", err)
	}
	if n, err := idempotency.Prune(ctx, db, time.Now().Add(-idempotency.Kept), time.Now()); err != nil || n != 0 {
		t.Fatalf("prune: %d %v", n, err)
	}
	if _, err := idempotency.Prune(ctx, db, time.Now(), time.Now()); err == nil {
		t.Fatal("pruning keys younger than Kept")
	}
}
