package oauth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) { testdb.Main(m) }

const resource = "https://t.example/api/mcp"

// fixture is a service over a fresh database, a merchant's key and a
// registered client.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	db     *store.DB
	svc    *Service
	who    auth.Principal
	client Client
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	db := testdb.Open(t)
	m, err := auth.CreateMerchant(ctx, db, "acme")
	if err != nil {
		t.Fatal(err)
	}
	k, _, err := auth.CreateKey(ctx, db, m.ID, tenant.Live)
	if err != nil {
		t.Fatal(err)
	}
	c, err := RegisterClient(ctx, db, ClientMetadata{RedirectURIs: []string{"https://a.example/cb"}, ClientName: "A"})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, ctx: ctx, db: db, svc: NewService(db, "https://t.example", resource, nil),
		who: auth.Principal{Scope: tenant.Scope{MerchantID: m.ID, Mode: tenant.Live}, KeyID: k.ID}, client: c}
}

// grant runs consent and exchange in the domain and returns the tokens.
func (f *fixture) grant(scopes ...string) TokenResponse {
	f.t.Helper()
	const verifier, challenge = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	p := Pending{Client: f.client, RedirectURI: "https://a.example/cb", Scopes: Scopes(), Resource: resource,
		Request: AuthorizationRequest{CodeChallenge: challenge}}
	code, err := f.svc.Approve(f.ctx, p, f.who, scopes)
	if err != nil {
		f.t.Fatal(err)
	}
	tr, err := f.svc.Token(f.ctx, TokenRequest{GrantType: "authorization_code", Code: code, CodeVerifier: verifier, ClientID: f.client.ID})
	if err != nil {
		f.t.Fatal(err)
	}
	return tr
}

func TestAuthenticateAndGrants(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tr := f.grant(ScopeRead)
	for _, auth := range []func(string) (Grant, error){
		func(tok string) (Grant, error) { return f.svc.Authenticate(f.ctx, tok) },
		func(tok string) (Grant, error) { return Authenticate(f.ctx, f.db, tok, resource) },
	} {
		g, err := auth(tr.AccessToken)
		if err != nil || g.Scope != f.who.Scope || g.KeyID != f.who.KeyID || g.ClientID != f.client.ID || !g.Has(ScopeRead) || g.Has(ScopeWrite) {
			t.Fatalf("%+v %v", g, err)
		}
		if _, err := auth(tr.RefreshToken); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("a refresh token used as an access token: %v", err)
		}
	}
	if _, err := Authenticate(f.ctx, f.db, tr.AccessToken, "https://t.example/other"); !errors.Is(err, ErrWrongAudience) {
		t.Errorf("wrong audience: %v", err)
	}
	if _, err := approveWriteOnRead(f); codeOf(err) != InvalidScope {
		t.Errorf("approving write on a read-only request: %v", err)
	}

	gs, err := ListGrants(f.ctx, f.db, GrantFilter{})
	if err != nil || len(gs) != 1 || gs[0].Status != "active" || gs[0].ClientName != "A" || gs[0].ExpiresAt == nil {
		t.Fatalf("%+v %v", gs, err)
	}
	if err := RevokeGrant(f.ctx, f.db, gs[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Authenticate(f.ctx, tr.AccessToken); !errors.Is(err, ErrRevokedToken) {
		t.Errorf("token of a revoked grant: %v", err)
	}
	gs, _ = ListGrants(f.ctx, f.db, GrantFilter{ClientID: f.client.ID})
	if len(gs) != 1 || gs[0].Status != "revoked" || *gs[0].RevokedReason != "revoked_by_operator" {
		t.Fatalf("%+v", gs)
	}
	if gs, _ := ListGrants(f.ctx, f.db, GrantFilter{MerchantID: "mch_other"}); len(gs) != 0 {
		t.Errorf("filter by merchant: %+v", gs)
	}
	if err := RevokeGrant(f.ctx, f.db, "ogr_nope"); apperr.CodeOf(err) != apperr.InvalidRequest {
		t.Errorf("unknown grant: %v", err)
	}
	if err := RevokeClient(f.ctx, f.db, "tgc_nope"); apperr.CodeOf(err) != apperr.InvalidRequest {
		t.Errorf("unknown client: %v", err)
	}
	if _, err := f.svc.Client(f.ctx, "tgc_nope"); codeOf(err) != InvalidClient {
		t.Errorf("unknown client lookup: %v", err)
	}
	if err := RevokeClient(f.ctx, f.db, f.client.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Client(f.ctx, f.client.ID); codeOf(err) != InvalidClient {
		t.Errorf("revoked client lookup: %v", err)
	}
}

// approveWriteOnRead tries to grant write on a request that asked for read only.
func approveWriteOnRead(f *fixture) (string, error) {
	p := Pending{Client: f.client, RedirectURI: "https://a.example/cb", Scopes: []string{ScopeRead}, Resource: resource,
		Request: AuthorizationRequest{CodeChallenge: strings.Repeat("A", 43)}}
	return f.svc.Approve(f.ctx, p, f.who, []string{ScopeRead, ScopeWrite})
}

// Prune drops codes and tokens long past their lifetime; spent refresh
// tokens stay until then, so their reuse is caught.
func TestPrune(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	old := f.grant(ScopeRead, ScopeWrite)
	if _, err := f.svc.Token(f.ctx, TokenRequest{GrantType: "refresh_token", RefreshToken: old.RefreshToken, ClientID: f.client.ID}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.db.Exec(`UPDATE oauth_tokens SET expires_at = now() - interval '2 days' WHERE token_hash IN ($1, $2)`,
		hashSecret(old.AccessToken), hashSecret(old.RefreshToken)); err != nil {
		t.Fatal(err)
	}
	f.grant(ScopeRead)
	if _, err := f.db.Exec(`UPDATE oauth_codes SET expires_at = now() - interval '2 days'`); err != nil {
		t.Fatal(err)
	}
	recent := f.grant(ScopeRead) // its code expires within the kept day
	if _, err := f.db.Exec(`UPDATE oauth_codes SET expires_at = now() - interval '23 hours' WHERE expires_at > now() - interval '1 day'`); err != nil {
		t.Fatal(err)
	}
	n, err := Prune(f.ctx, f.db)
	if err != nil || n != 4 { // two tokens, two codes
		t.Fatalf("pruned %d (%v), want 4", n, err)
	}
	var codes, tokens int
	_ = f.db.Get(&codes, `SELECT count(*) FROM oauth_codes`)
	_ = f.db.Get(&tokens, `SELECT count(*) FROM oauth_tokens`)
	if codes != 1 || tokens != 6 { // the rotated pair of the first grant, and the other grants' pairs
		t.Fatalf("%d codes and %d tokens left, want 1 and 6", codes, tokens)
	}
	if _, err := f.svc.Authenticate(f.ctx, recent.AccessToken); err != nil {
		t.Fatal(err)
	}
	if n, err := Prune(f.ctx, f.db); err != nil || n != 0 {
		t.Fatalf("second prune: %d %v", n, err)
	}
}

// Metadata documents are fetched within FetchTimeout and MaxDocumentBytes.
func TestFetchBounds(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/slow.json":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/big.json":
			_, _ = w.Write([]byte(`{"client_id":"x","pad":"` + strings.Repeat("x", 200) + `"}`))
		case "/redirect.json":
			http.Redirect(w, r, "/elsewhere.json", http.StatusFound)
		}
	}))
	defer srv.Close()
	defer close(release)
	// Like the SSRF-safe client, this one answers a redirect with the 3xx.
	f.svc.Fetch = srv.Client()
	f.svc.Fetch.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	f.svc.FetchTimeout = 200 * time.Millisecond
	f.svc.MaxDocumentBytes = 100
	cases := map[string]string{"/slow.json": "too long", "/big.json": "larger than the 100 bytes", "/redirect.json": "302"}
	for path, want := range cases {
		start := time.Now()
		_, err := f.svc.Client(f.ctx, srv.URL+path)
		if codeOf(err) != InvalidClient || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
		if time.Since(start) > 3*time.Second {
			t.Errorf("%s took %v", path, time.Since(start))
		}
	}
	f.svc.Fetch, f.svc.FetchErr = nil, errors.New("no CA")
	if _, err := f.svc.Client(f.ctx, srv.URL+"/x.json"); codeOf(err) != InvalidClient || !strings.Contains(err.Error(), "no CA") {
		t.Errorf("fetch error: %v", err)
	}
}

// Prune drops registered clients that no merchant consented to within a
// day: anyone may register, so nothing else would. Clients with a grant,
// and recent ones, stay.
func TestPruneUnusedClients(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.grant(ScopeRead)
	var ids []string
	for range 3 {
		c, err := RegisterClient(f.ctx, f.db, ClientMetadata{RedirectURIs: []string{"https://b.example/cb"}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	if _, err := f.db.Exec(`UPDATE oauth_clients SET created_at = now() - interval '25 hours' WHERE id <> $1`, ids[2]); err != nil {
		t.Fatal(err)
	}
	if n, err := Prune(f.ctx, f.db); err != nil || n != 2 {
		t.Fatalf("pruned %d (%v), want the two old unused clients", n, err)
	}
	var left []string
	_ = f.db.Select(&left, `SELECT id FROM oauth_clients ORDER BY id`)
	if len(left) != 2 {
		t.Fatalf("clients left: %v", left)
	}
	for _, id := range left {
		if id != f.client.ID && id != ids[2] {
			t.Fatalf("clients left: %v", left)
		}
	}
}
