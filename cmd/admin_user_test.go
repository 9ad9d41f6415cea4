package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/audit"
	pagination "github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/users"
)

// adminRun runs an admin command against url and decodes its --json
// output into v (when v is not nil), failing the test on a non-zero exit.
func adminRun(t *testing.T, url string, v any, args ...string) string {
	t.Helper()
	out, errOut := &syncBuffer{}, &syncBuffer{}
	if code := cli(t, context.Background(), out, errOut, append(append([]string{"admin"}, args...), "--database-url", url)...); code != 0 {
		t.Fatalf("admin %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	if v != nil {
		if err := json.Unmarshal([]byte(out.String()), v); err != nil {
			t.Fatalf("admin %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return out.String()
}

// A user made by admin user create sets a password through its setup link
// once; admin user disable ends its session; each change made by an admin
// command is in admin audit list, by admin.
func TestAdminUserAndAudit(t *testing.T) {
	t.Parallel()
	db, url := eventsDB(t)
	ctx := context.Background()
	var m struct{ ID string }
	adminRun(t, url, &m, "merchant", "create", "--name", "Acme", "--json")
	adminRun(t, url, nil, "merchant", "rename", m.ID, "--name", "Acme Widgets")

	var u struct {
		ID             string    `json:"id"`
		MerchantID     string    `json:"merchant_id"`
		Email          string    `json:"email"`
		SetupURL       string    `json:"setup_url"`
		SetupExpiresAt time.Time `json:"setup_expires_at"`
	}
	adminRun(t, url, &u, "user", "create", "--merchant", m.ID, "--email", "Ops@Example.com", "--base-url", "https://billing.example.com/", "--json")
	const prefix = "https://billing.example.com/dashboard/setup/"
	if !strings.HasPrefix(u.ID, "usr_") || u.MerchantID != m.ID || u.Email != "Ops@Example.com" || !strings.HasPrefix(u.SetupURL, prefix) ||
		time.Until(u.SetupExpiresAt) < 23*time.Hour || time.Until(u.SetupExpiresAt) > 24*time.Hour {
		t.Fatalf("%+v", u)
	}
	token := strings.TrimPrefix(u.SetupURL, prefix)
	if _, err := users.CompleteSetup(ctx, db, audit.Actor{IP: "192.0.2.9"}, token, "correct horse battery staple", time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := users.CompleteSetup(ctx, db, audit.Actor{}, token, "correct horse battery staple", time.Now()); err == nil {
		t.Fatal("the setup link worked twice")
	}
	s, err := users.SignIn(ctx, db, "192.0.2.9", users.SignInInput{Email: "ops@example.com", Password: "correct horse battery staple"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	out := adminRun(t, url, nil, "user", "list", "--merchant", m.ID)
	if !strings.Contains(out, u.ID) || !strings.Contains(out, "active") {
		t.Fatalf("user list:\n%s", out)
	}
	// Duplicate emails are refused, whatever their case.
	errOut := &syncBuffer{}
	if code := cli(t, ctx, &syncBuffer{}, errOut, "admin", "user", "create", "--merchant", m.ID, "--email", "OPS@example.com", "--database-url", url); code == 0 ||
		!strings.Contains(errOut.String(), "already a user") {
		t.Fatalf("duplicate: exit %d %s", code, errOut)
	}

	var k struct{ ID, Key string }
	adminRun(t, url, &k, "key", "create", "--merchant", m.ID, "--mode", "test", "--json")
	adminRun(t, url, nil, "key", "revoke", k.ID)
	var e struct{ ID, Secret string }
	adminRun(t, url, &e, "webhook", "add", "--merchant", m.ID, "--mode", "live", "--url", "https://hooks.example.com/x", "--json")
	adminRun(t, url, nil, "webhook", "disable", e.ID)
	adminRun(t, url, nil, "webhook", "enable", e.ID)
	adminRun(t, url, nil, "webhook", "rotate-secret", e.ID)
	adminRun(t, url, nil, "webhook", "remove", e.ID)
	adminRun(t, url, nil, "wallet", "challenge", "--merchant", m.ID, "--mode", "live", "--address", "0x52908400098527886E0F7030069857D2E4169EE7")
	var disabled struct {
		DisabledAt *time.Time `json:"disabled_at"`
	}
	adminRun(t, url, &disabled, "user", "disable", u.ID, "--json")
	if disabled.DisabledAt == nil {
		t.Fatal("not disabled")
	}
	if _, err := users.Authenticate(ctx, db, s.Token, time.Now()); err == nil {
		t.Fatal("the disabled user's session lives on")
	}

	var rows []audit.Row
	adminRun(t, url, &rows, "audit", "list", "--merchant", m.ID, "--json")
	var got []string
	for i := len(rows) - 1; i >= 0; i-- {
		r := rows[i]
		got = append(got, r.Actor+" "+r.Action+" "+r.Target)
		if r.MerchantID != m.ID {
			t.Errorf("%+v", r)
		}
		// The key and the secret are never in the log.
		if strings.Contains(r.Detail, k.Key) || strings.Contains(r.Detail, e.Secret) || strings.Contains(r.Target, token) {
			t.Errorf("a secret in the log: %+v", r)
		}
	}
	want := []string{
		"admin merchant.create " + m.ID,
		"admin merchant.rename " + m.ID,
		"admin user.create " + u.ID,
		u.ID + " user.setup " + u.ID,
		u.ID + " user.sign_in " + u.ID,
		"admin api_key.create " + k.ID,
		"admin api_key.revoke " + k.ID,
		"admin webhook_endpoint.create " + e.ID,
		"admin webhook_endpoint.disable " + e.ID,
		"admin webhook_endpoint.enable " + e.ID,
		"admin webhook_endpoint.rotate_secret " + e.ID,
		"admin webhook_endpoint.remove " + e.ID,
		"admin wallet.challenge 0x52908400098527886E0F7030069857D2E4169EE7",
		"admin user.disable " + u.ID,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("audit log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, r := range rows {
		switch r.Action {
		case audit.EndpointCreate:
			if r.Mode == nil || *r.Mode != "live" || r.IP != "" || r.Detail != "https://hooks.example.com/x" {
				t.Errorf("%+v", r)
			}
		case users.ActionSignIn:
			if r.Mode != nil || r.IP != "192.0.2.9" {
				t.Errorf("%+v", r)
			}
		}
	}
	// The table form, and a failed change leaves no entry.
	if code := cli(t, ctx, &syncBuffer{}, &syncBuffer{}, "admin", "key", "revoke", "key_nope", "--database-url", url); code == 0 {
		t.Fatal("revoked an unknown key")
	}
	table := adminRun(t, url, nil, "audit", "list")
	if !strings.Contains(table, "user.disable") || strings.Contains(table, "key_nope") {
		t.Fatalf("audit list:\n%s", table)
	}
}

// assertAudited fails unless merchant's audit log holds, oldest first and
// among other entries, an entry by admin for each of actions.
func assertAudited(t *testing.T, db *store.DB, merchant string, actions ...string) {
	t.Helper()
	r, err := audit.List(context.Background(), db, audit.Filter{MerchantID: merchant, All: merchant == "", Page: pagination.Params{Limit: pagination.MaxLimit}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	next := 0
	for i := len(r.Items) - 1; i >= 0; i-- {
		e := r.Items[i]
		got = append(got, e.Actor+" "+e.Action)
		if next < len(actions) && e.Actor == audit.Admin && e.Action == actions[next] {
			next++
		}
	}
	if next < len(actions) {
		t.Fatalf("audit log lacks admin %s:\n%s", actions[next], strings.Join(got, "\n"))
	}
}
