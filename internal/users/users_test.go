package users

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

const password = "a long enough passphrase"

var t0 = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

type fixture struct {
	t   *testing.T
	ctx context.Context
	db  *store.DB
}

func newFixture(t *testing.T) *fixture {
	return &fixture{t: t, ctx: context.Background(), db: testdb.Open(t)}
}

func (f *fixture) merchant() string {
	m, err := auth.CreateMerchant(f.ctx, f.db, "shop")
	if err != nil {
		f.t.Fatal(err)
	}
	return m.ID
}

// user creates a user of merchant with a password set.
func (f *fixture) user(merchant, email string) User {
	c, err := Create(f.ctx, f.db, audit.AdminActor(), merchant, email, t0)
	if err != nil {
		f.t.Fatal(err)
	}
	u, err := CompleteSetup(f.ctx, f.db, audit.Actor{IP: "192.0.2.1"}, c.SetupToken, password, t0)
	if err != nil {
		f.t.Fatal(err)
	}
	return u
}

func (f *fixture) signIn(email, pw string, at time.Time) (Started, error) {
	return SignIn(f.ctx, f.db, "198.51.100.7", SignInInput{Email: email, Password: pw}, at)
}

func (f *fixture) actions(merchant string) []string {
	r, err := audit.List(f.ctx, f.db, audit.Filter{MerchantID: merchant, All: merchant == "*"})
	if err != nil {
		f.t.Fatal(err)
	}
	var out []string
	for i := len(r.Items) - 1; i >= 0; i-- {
		out = append(out, r.Items[i].Action)
	}
	return out
}

func TestSetupLinkSingleUseAndExpiry(t *testing.T) {
	f := newFixture(t)
	m := f.merchant()
	c, err := Create(f.ctx, f.db, audit.AdminActor(), m, "Ops@Example.com", t0)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.SetupToken) != tokenChars || !c.SetupExpiresAt.Equal(t0.Add(24*time.Hour)) || c.User.PasswordSet {
		t.Fatalf("%+v", c)
	}
	if _, err := CompleteSetup(f.ctx, f.db, audit.Actor{}, c.SetupToken, "short pass", t0); apperr.CodeOf(err) != apperr.InvalidRequest {
		t.Fatalf("short password: %v", err)
	}
	// Refused for its password, the link still works; expired it does not.
	if _, err := SetupUser(f.ctx, f.db, c.SetupToken, t0.Add(SetupTTL)); apperr.CodeOf(err) != apperr.ResourceNotFound {
		t.Fatalf("expired link: %v", err)
	}
	if _, err := CompleteSetup(f.ctx, f.db, audit.Actor{}, c.SetupToken, password, t0.Add(SetupTTL+time.Second)); apperr.CodeOf(err) != apperr.ResourceNotFound {
		t.Fatalf("expired link used: %v", err)
	}
	if u, err := SetupUser(f.ctx, f.db, c.SetupToken, t0.Add(time.Hour)); err != nil || u.Email != "Ops@Example.com" {
		t.Fatalf("%+v %v", u, err)
	}
	u, err := CompleteSetup(f.ctx, f.db, audit.Actor{IP: "192.0.2.1"}, c.SetupToken, password, t0.Add(time.Hour))
	if err != nil || !u.PasswordSet {
		t.Fatalf("%+v %v", u, err)
	}
	// Replayed: the link is used, whatever password comes with it.
	if _, err := CompleteSetup(f.ctx, f.db, audit.Actor{}, c.SetupToken, "another long passphrase", t0.Add(2*time.Hour)); apperr.CodeOf(err) != apperr.ResourceNotFound {
		t.Fatalf("replayed link: %v", err)
	}
	if _, err := f.signIn("ops@example.com", "another long passphrase", t0.Add(3*time.Hour)); err == nil {
		t.Fatal("the replay changed the password")
	}
	if _, err := f.signIn("OPS@example.COM", password, t0.Add(3*time.Hour)); err != nil {
		t.Fatalf("sign-in after setup: %v", err)
	}
	if got := strings.Join(f.actions(m), ","); got != "user.create,user.setup,user.sign_in_failed,user.sign_in" {
		t.Errorf("audit: %s", got)
	}
}

func TestEmailUniquePerMerchant(t *testing.T) {
	f := newFixture(t)
	a, b := f.merchant(), f.merchant()
	f.user(a, "ops@example.com")
	if _, err := Create(f.ctx, f.db, audit.AdminActor(), a, "OPS@example.com", t0); apperr.CodeOf(err) != apperr.InvalidRequest {
		t.Fatalf("duplicate: %v", err)
	}
	f.user(b, "Ops@Example.com")
	for _, bad := range []string{"", "nobody", "a b@example.com", "Name <x@example.com>"} {
		if _, err := Create(f.ctx, f.db, audit.AdminActor(), a, bad, t0); apperr.CodeOf(err) != apperr.InvalidRequest {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := Create(f.ctx, f.db, audit.AdminActor(), "mch_nope", "x@example.com", t0); apperr.CodeOf(err) != apperr.InvalidRequest {
		t.Errorf("unknown merchant: %v", err)
	}
	// The same email and password at two merchants: the user picks one.
	_, err := f.signIn("ops@example.com", password, t0)
	if e, ok := apperr.As(err); !ok || !strings.HasPrefix(e.Message, "merchant: ") {
		t.Fatalf("ambiguous: %v", err)
	}
	s, err := SignIn(f.ctx, f.db, "", SignInInput{Email: "ops@example.com", Password: password, MerchantID: b}, t0)
	if err != nil || s.MerchantID != b {
		t.Fatalf("%+v %v", s, err)
	}
}

func TestSessionsEnd(t *testing.T) {
	f := newFixture(t)
	m := f.merchant()
	u := f.user(m, "ops@example.com")
	s1, err := f.signIn("ops@example.com", password, t0)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := f.signIn("ops@example.com", password, t0)
	if err != nil || s2.Token == s1.Token || len(s1.Token) != tokenChars {
		t.Fatalf("each sign-in makes a new token: %v", err)
	}
	auth := func(token string, at time.Time) error { _, err := Authenticate(f.ctx, f.db, token, at); return err }
	// Idle: seen 11 h after, then 11 h after that, is alive; 12 h idle is not.
	if err := auth(s1.Token, t0.Add(11*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := auth(s1.Token, t0.Add(22*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := auth(s1.Token, t0.Add(34*time.Hour)); apperr.CodeOf(err) != apperr.Unauthorized {
		t.Fatalf("idle 12 h: %v", err)
	}
	// Absolute: kept busy, it still ends 7 days after sign-in.
	s3, _ := f.signIn("ops@example.com", password, t0)
	for h := time.Duration(10); h < 7*24; h += 10 {
		if err := auth(s3.Token, t0.Add(h*time.Hour)); err != nil {
			t.Fatalf("at %dh: %v", h, err)
		}
	}
	if err := auth(s3.Token, t0.Add(7*24*time.Hour)); apperr.CodeOf(err) != apperr.Unauthorized {
		t.Fatalf("7 days: %v", err)
	}
	// Sign-out ends one session; disabling the user ends the others at once.
	if err := SignOut(f.ctx, f.db, "", s2.Token, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := auth(s2.Token, t0.Add(2*time.Minute)); apperr.CodeOf(err) != apperr.Unauthorized {
		t.Fatalf("signed out: %v", err)
	}
	s4, _ := f.signIn("ops@example.com", password, t0)
	if _, err := Disable(f.ctx, f.db, audit.AdminActor(), "", u.ID, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := auth(s4.Token, t0.Add(time.Minute)); apperr.CodeOf(err) != apperr.Unauthorized {
		t.Fatalf("disabled: %v", err)
	}
	if _, err := f.signIn("ops@example.com", password, t0.Add(time.Hour)); apperr.CodeOf(err) != apperr.Unauthorized {
		t.Fatalf("disabled user signed in: %v", err)
	}
	if err := auth("", t0); err == nil {
		t.Fatal("empty token")
	}
}

func TestLockout(t *testing.T) {
	f := newFixture(t)
	m := f.merchant()
	f.user(m, "ops@example.com")
	for i := range MaxFailures {
		if _, err := f.signIn("ops@example.com", "wrong password "+string(rune('a'+i)), t0.Add(time.Duration(i)*time.Second)); apperr.CodeOf(err) != apperr.Unauthorized {
			t.Fatalf("failure %d: %v", i, err)
		}
	}
	at := t0.Add(MaxFailures * time.Second)
	if _, err := f.signIn("ops@example.com", password, at); !Locked(err) {
		t.Fatalf("the right password during the lock: %v", err)
	}
	if _, err := f.signIn("ops@example.com", password, at.Add(LockTime-2*time.Second)); !Locked(err) {
		t.Fatalf("near the lock's end: %v", err)
	}
	if _, err := f.signIn("ops@example.com", password, at.Add(LockTime)); err != nil {
		t.Fatalf("after the lock: %v", err)
	}
	// An unknown email locks alike, so the lock says nothing about who exists.
	for range MaxFailures {
		f.signIn("nobody@example.com", "x", t0)
	}
	if _, err := f.signIn("nobody@example.com", "x", t0); !Locked(err) {
		t.Fatalf("unknown email: %v", err)
	}
	// Failures spread over more than the window never lock.
	for i := range 2 * MaxFailures {
		if _, err := f.signIn("OPS@example.com", "wrong", at.Add(time.Hour+time.Duration(i)*2*time.Minute)); Locked(err) {
			t.Fatalf("locked by failures 2 minutes apart, at %d", i)
		}
	}
}

// Parallel guesses get no more than MaxFailures tries between them.
func TestLockoutUnderParallelGuesses(t *testing.T) {
	f := newFixture(t)
	m := f.merchant()
	f.user(m, "ops@example.com")
	var wg sync.WaitGroup
	var mu sync.Mutex
	tried := 0
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.signIn("ops@example.com", "guess number "+string(rune('A'+i)), t0)
			if !Locked(err) {
				mu.Lock()
				tried++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if tried > MaxFailures {
		t.Fatalf("%d guesses checked", tried)
	}
	if _, err := f.signIn("ops@example.com", password, t0); !Locked(err) {
		t.Fatalf("%v", err)
	}
}

func TestTOTP(t *testing.T) {
	f := newFixture(t)
	m := f.merchant()
	f.user(m, "ops@example.com")
	st, err := f.signIn("ops@example.com", password, t0)
	if err != nil || st.TOTPEnrolled {
		t.Fatal(err)
	}
	e, err := BeginTOTP(f.ctx, f.db, st.Session)
	if err != nil || !strings.HasPrefix(e.URI, "otpauth://totp/tollgate:ops@example.com?") {
		t.Fatalf("%+v %v", e, err)
	}
	secret, err := totpEncoding.DecodeString(e.Secret)
	if err != nil {
		t.Fatal(err)
	}
	// Pending, it is not asked for yet; a wrong code does not enrol it.
	if err := ConfirmTOTP(f.ctx, f.db, st.Session, "", "000000", t0); apperr.CodeOf(err) != apperr.InvalidRequest {
		t.Fatalf("wrong code: %v", err)
	}
	if _, err := f.signIn("ops@example.com", password, t0); err != nil {
		t.Fatal(err)
	}
	if err := ConfirmTOTP(f.ctx, f.db, st.Session, "", TOTPCode(secret, t0), t0); err != nil {
		t.Fatal(err)
	}
	at := t0.Add(time.Minute)
	if _, err := f.signIn("ops@example.com", password, at); apperr.CodeOf(err) != apperr.Unauthorized {
		t.Fatalf("no code: %v", err)
	}
	code := TOTPCode(secret, at)
	s, err := SignIn(f.ctx, f.db, "", SignInInput{Email: "ops@example.com", Password: password, TOTP: code}, at)
	if err != nil || !s.TOTPEnrolled {
		t.Fatalf("%+v %v", s, err)
	}
	if _, err := SignIn(f.ctx, f.db, "", SignInInput{Email: "ops@example.com", Password: password, TOTP: code}, at); apperr.CodeOf(err) != apperr.Unauthorized {
		t.Fatalf("a code used twice: %v", err)
	}
}

func TestAuditLogIsAppendOnly(t *testing.T) {
	f := newFixture(t)
	m := f.merchant()
	f.user(m, "ops@example.com")
	f.signIn("ops@example.com", "wrong", t0)
	f.signIn("stranger@example.com", "wrong", t0)
	for _, stmt := range []string{`UPDATE audit_log SET actor = 'x'`, `DELETE FROM audit_log`, `TRUNCATE audit_log`} {
		if _, err := f.db.Exec(stmt); err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v", stmt, err)
		}
	}
	if got := strings.Join(f.actions(m), ","); got != "user.create,user.setup,user.sign_in_failed" {
		t.Errorf("merchant's log: %s", got)
	}
	if got := strings.Join(f.actions("*"), ","); got != "user.create,user.setup,user.sign_in_failed,user.sign_in_failed" {
		t.Errorf("whole log: %s", got)
	}
	r, _ := audit.List(f.ctx, f.db, audit.Filter{MerchantID: m})
	last := r.Items[0]
	if last.IP != "198.51.100.7" || last.Detail != "ops@example.com: wrong password" || last.Target == "" {
		t.Errorf("%+v", last)
	}
}
