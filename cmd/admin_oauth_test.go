package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/oauth"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
)

// `admin oauth clients|tokens list|revoke` as scripts use them: --json prints
// one JSON array or object, revocation takes effect on the next token use,
// and unknown ids are errors.
func TestAdminOAuth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testdb.New(t)
	db, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m, _ := auth.CreateMerchant(ctx, db, "acme")
	k, _, _ := auth.CreateKey(ctx, db, m.ID, tenant.Test)
	c, err := oauth.RegisterClient(ctx, db, oauth.ClientMetadata{ClientName: "Inspector", RedirectURIs: []string{"http://127.0.0.1:6274/oauth/callback"}})
	if err != nil {
		t.Fatal(err)
	}
	svc := oauth.NewService(db, "http://t.example", "http://t.example/api/mcp", nil)
	const verifier, challenge = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	code, err := svc.Approve(ctx, oauth.Pending{Client: c, RedirectURI: c.RedirectURIs[0], Scopes: oauth.Scopes(), Resource: svc.Resource,
		Request: oauth.AuthorizationRequest{CodeChallenge: challenge}}, auth.Principal{Scope: tenant.Scope{MerchantID: m.ID, Mode: tenant.Test}, KeyID: k.ID}, oauth.Scopes())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := svc.Token(ctx, oauth.TokenRequest{GrantType: "authorization_code", Code: code, CodeVerifier: verifier, ClientID: c.ID})
	if err != nil {
		t.Fatal(err)
	}

	code2, out, errOut := run("admin", "oauth", "clients", "list", "--json", "--database-url", url)
	var clients []map[string]any
	if code2 != 0 || json.Unmarshal([]byte(out), &clients) != nil || len(clients) != 1 || clients[0]["id"] != c.ID || clients[0]["kind"] != "registered" {
		t.Fatalf("clients list: %d %s %s", code2, out, errOut)
	}
	code2, out, _ = run("admin", "oauth", "clients", "list", "--database-url", url)
	if code2 != 0 || !strings.Contains(out, "Inspector") || !strings.Contains(out, "127.0.0.1:6274") {
		t.Fatalf("clients table: %s", out)
	}
	code2, out, _ = run("admin", "oauth", "tokens", "list", "--json", "--merchant", m.ID, "--database-url", url)
	var grants []map[string]any
	if code2 != 0 || json.Unmarshal([]byte(out), &grants) != nil || len(grants) != 1 || grants[0]["status"] != "active" || grants[0]["client_id"] != c.ID {
		t.Fatalf("tokens list: %d %s", code2, out)
	}
	if strings.Contains(out, tr.AccessToken) || strings.Contains(out, tr.RefreshToken) {
		t.Fatal("tokens list shows a token")
	}
	grantID := grants[0]["id"].(string)
	code2, out, _ = run("admin", "oauth", "tokens", "list", "--database-url", url)
	if code2 != 0 || !strings.Contains(out, grantID) || !strings.Contains(out, "billing:read,billing:write") || !strings.Contains(out, "active") {
		t.Fatalf("tokens table: %s", out)
	}
	code2, out, _ = run("admin", "oauth", "tokens", "revoke", grantID, "--json", "--database-url", url)
	var res map[string]any
	if code2 != 0 || json.Unmarshal([]byte(out), &res) != nil || res["revoked"] != true {
		t.Fatalf("tokens revoke: %d %s", code2, out)
	}
	if _, err := svc.Authenticate(ctx, tr.AccessToken); err != oauth.ErrRevokedToken {
		t.Fatalf("token after its grant was revoked: %v", err)
	}
	if code2, _, errOut := run("admin", "oauth", "tokens", "revoke", "ogr_nope", "--database-url", url); code2 != 1 || !strings.Contains(errOut, "ogr_nope") {
		t.Fatalf("revoke unknown grant: %d %s", code2, errOut)
	}
	if code2, _, _ := run("admin", "oauth", "clients", "revoke", c.ID, "--database-url", url); code2 != 0 {
		t.Fatal("clients revoke failed")
	}
	code2, out, _ = run("admin", "oauth", "clients", "list", "--json", "--database-url", url)
	if code2 != 0 || json.Unmarshal([]byte(out), &clients) != nil || clients[0]["revoked_at"] == nil {
		t.Fatalf("revoked client: %s", out)
	}
	if code2, _, errOut := run("admin", "oauth", "clients", "revoke", "tgc_nope", "--database-url", url); code2 != 1 || !strings.Contains(errOut, "tgc_nope") {
		t.Fatalf("revoke unknown client: %d %s", code2, errOut)
	}
	if code2, _, _ := run("admin", "oauth", "tokens", "list", "--limit", "0", "--database-url", url); code2 != 2 {
		t.Fatalf("--limit 0: %d", code2)
	}
	if code2, _, _ := run("admin", "oauth", "tokens", "revoke", "--database-url", url); code2 != 2 {
		t.Fatalf("revoke without an id: %d", code2)
	}
	assertAudited(t, db, m.ID, audit.OAuthGrantRevoke)
	assertAudited(t, db, "", audit.OAuthGrantRevoke, audit.OAuthClientRevoke)
}
