package auth_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

// openMerchant opens a fresh database with one merchant.
func openMerchant(t *testing.T) (*store.DB, auth.Merchant) {
	t.Helper()
	ctx := context.Background()
	db := testdb.Open(t)
	m, err := auth.CreateMerchant(ctx, db, "acme")
	if err != nil {
		t.Fatal(err)
	}
	return db, m
}

func createKey(t *testing.T, db *store.DB, merchantID string, mode tenant.Mode) (auth.Key, string) {
	t.Helper()
	k, secret, err := auth.CreateKey(context.Background(), db, merchantID, mode)
	if err != nil {
		t.Fatal(err)
	}
	return k, secret
}

// Every failure is unauthorized; the message tells missing, malformed,
// invalid and revoked apart, so a wrong key is never called missing.
func TestAuthenticateMessages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, m := openMerchant(t)
	_, valid := createKey(t, db, m.ID, tenant.Test)
	revokedKey, revoked := createKey(t, db, m.ID, tenant.Live)
	if err := auth.RevokeKey(ctx, db, revokedKey.ID); err != nil {
		t.Fatal(err)
	}
	wrong := "sk_test_" + strings.Repeat("A", 43)
	cases := map[string]string{
		"":                               "missing API key",
		"   ":                            "missing API key",
		"Bearer":                         "missing API key",
		"Bearer   ":                      "missing API key",
		"bearer ":                        "missing API key",
		valid:                            "malformed Authorization header",
		"Basic " + valid:                 "malformed Authorization header",
		"Bearer " + wrong:                "invalid API key",
		"Bearer sk_test_wrong":           "invalid API key",
		"Bearer " + valid[:len(valid)-1]: "invalid API key",
		"Bearer " + valid + "x":          "invalid API key",
		"Bearer pk_test_abc":             "invalid API key",
		"Bearer " + revoked:              "revoked API key",
		"Bearer  " + valid:               "malformed Authorization header",
		"Bearer\t" + valid:               "malformed Authorization header",
	}
	keys := auth.NewKeys(db)
	for header, want := range cases {
		for name, authenticate := range map[string]func() (auth.Principal, error){
			"Authenticate": func() (auth.Principal, error) { return auth.Authenticate(ctx, db, header) },
			"Keys":         func() (auth.Principal, error) { return keys.Authenticate(ctx, header) },
		} {
			_, err := authenticate()
			e, ok := apperr.As(err)
			if !ok || e.Code != apperr.Unauthorized || !strings.HasPrefix(e.Message, want) {
				t.Errorf("%s(%q) = %v, want unauthorized %q…", name, header, err, want)
			}
		}
	}
	for _, header := range []string{"Bearer " + valid, "bearer " + valid + " ", "BEARER " + valid} {
		p, err := keys.Authenticate(ctx, header)
		if err != nil || p.Scope.MerchantID != m.ID || p.Scope.Mode != tenant.Test {
			t.Errorf("%q: %+v %v", header, p, err)
		}
	}
}

// Lookups are batched, never cached: with requests authenticating all the
// time, every request that starts after the revocation committed fails.
func TestKeysRevocationTakesEffectUnderLoad(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, m := openMerchant(t)
	k, secret := createKey(t, db, m.ID, tenant.Test)
	_, other := createKey(t, db, m.ID, tenant.Live)
	keys := auth.NewKeys(db)
	var revokedAt atomic.Int64 // unix nanos once RevokeKey returned
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var afterRevoke, accepted atomic.Int64
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			header := "Bearer " + secret
			if i%4 == 0 {
				header = "Bearer " + other
			}
			for {
				select {
				case <-stop:
					return
				default:
				}
				done := revokedAt.Load() != 0
				p, err := keys.Authenticate(ctx, header)
				switch {
				case i%4 == 0 && (err != nil || p.Scope.Mode != tenant.Live):
					t.Errorf("the other key: %+v %v", p, err)
					return
				case i%4 != 0 && done:
					afterRevoke.Add(1)
					if err == nil {
						t.Errorf("a request after the revocation was accepted")
						return
					}
				case i%4 != 0 && err == nil:
					accepted.Add(1)
				}
			}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for accepted.Load() < 200 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if err := auth.RevokeKey(ctx, db, k.ID); err != nil {
		t.Fatal(err)
	}
	revokedAt.Store(time.Now().UnixNano())
	for afterRevoke.Load() < 200 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	close(stop)
	wg.Wait()
	if accepted.Load() < 200 || afterRevoke.Load() < 200 {
		t.Fatalf("%d requests accepted before and %d made after the revocation; want 200 of each", accepted.Load(), afterRevoke.Load())
	}
}

// A key's use is recorded, at most once a minute, through either lookup.
func TestKeyLastUsed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, m := openMerchant(t)
	a, secretA := createKey(t, db, m.ID, tenant.Test)
	b, secretB := createKey(t, db, m.ID, tenant.Live)
	lastUsed := func(id string) *time.Time {
		ks, err := auth.ListKeys(ctx, db, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ks {
			if k.ID == id {
				return k.LastUsedAt
			}
		}
		t.Fatalf("no key %s", id)
		return nil
	}
	if lastUsed(a.ID) != nil {
		t.Fatal("a new key was used")
	}
	if _, err := auth.NewKeys(db).Authenticate(ctx, "Bearer "+secretA); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.Authenticate(ctx, db, "Bearer "+secretB); err != nil {
		t.Fatal(err)
	}
	first := lastUsed(a.ID)
	if first == nil || time.Since(*first) > time.Minute || lastUsed(b.ID) == nil {
		t.Fatalf("not recorded: %v %v", first, lastUsed(b.ID))
	}
	// Within the minute, a use writes nothing.
	if _, err := auth.NewKeys(db).Authenticate(ctx, "Bearer "+secretA); err != nil {
		t.Fatal(err)
	}
	if again := lastUsed(a.ID); !again.Equal(*first) {
		t.Fatalf("rewritten within the minute: %v then %v", first, again)
	}
}
