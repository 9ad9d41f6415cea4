package daemon_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

func TestUnauthorized(t *testing.T) {
	t.Parallel()
	b := setup(t)
	m := b.merchant("acme")
	revokedID, revoked := b.key(m, tenant.Test)
	if err := auth.RevokeKey(context.Background(), b.db, revokedID); err != nil {
		t.Fatal(err)
	}
	_, valid := b.key(m, tenant.Live)
	cases := map[string]string{
		"missing":         "",
		"empty":           " ",
		"no bearer":       valid,
		"basic scheme":    "Basic " + valid,
		"bearer empty":    "Bearer ",
		"unknown shape":   "Bearer pk_test_abc",
		"truncated key":   "Bearer " + valid[:len(valid)-1],
		"unknown key":     "Bearer sk_test_" + strings.Repeat("A", 43),
		"revoked":         "Bearer " + revoked,
		"wrong mode word": "Bearer sk_prod_" + strings.Repeat("A", 43),
	}
	for name, header := range cases {
		t.Run(name, func(t *testing.T) {
			for _, path := range []string{"/v1/invoices", "/v1/events", "/v1/nope"} {
				req, _ := http.NewRequest("GET", b.url+path, nil)
				if header != "" {
					req.Header.Set("Authorization", header)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != 401 || resp.Header.Get("wc-version") != "2026-07-01" {
					t.Fatalf("%s: got %d", path, resp.StatusCode)
				}
			}
		})
	}
	// Through the client: the typed error carries 401 unauthorized.
	_, err := b.client(revoked).ListInvoices(context.Background(), client.ListParams{})
	apiErr(t, err, 401, "unauthorized")
	// The scheme is matched case-insensitively, as HTTP auth schemes are.
	req, _ := http.NewRequest("GET", b.url+"/v1/invoices", nil)
	req.Header.Set("Authorization", "bearer "+valid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("lower-case bearer: %d", resp.StatusCode)
	}
}

func TestRevokedKeyFailsOnNextRequest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	keyID, key := b.key(b.merchant("acme"), tenant.Test)
	c := b.client(key)
	ctx := context.Background()
	if _, err := c.ListInvoices(ctx, client.ListParams{}); err != nil {
		t.Fatal(err)
	}
	if err := auth.RevokeKey(ctx, b.db, keyID); err != nil {
		t.Fatal(err)
	}
	_, err := c.ListInvoices(ctx, client.ListParams{})
	apiErr(t, err, 401, "unauthorized")
}

func TestIsolation(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := b.merchant("a")
	_, aTest := b.key(a, tenant.Test)
	_, aLive := b.key(a, tenant.Live)
	_, bTest := b.key(b.merchant("b"), tenant.Test)
	mk := func(key, desc string) {
		if _, err := b.client(key).CreateInvoice(ctx, client.InvoiceParams{Amount: "5", Description: desc}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.client(key).CreateMeter(ctx, client.MeterParams{Key: "calls", DisplayName: desc}); err != nil {
			t.Fatal(err)
		}
	}
	mk(aTest, "a-test")
	mk(aLive, "a-live")
	mk(bTest, "b-test")
	for key, want := range map[string]string{aTest: "a-test", aLive: "a-live", bTest: "b-test"} {
		invs, err := b.client(key).ListInvoices(ctx, client.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(invs.Data) != 1 || invs.Data[0].Description != want {
			t.Fatalf("%s sees %s", want, invs.Raw)
		}
		if invs.Data[0].Livemode != (want == "a-live") {
			t.Fatalf("%s livemode wrong", want)
		}
		ms, err := b.client(key).ListMeters(ctx, client.ListParams{})
		if err != nil {
			t.Fatal(err)
		}
		// The same meter key exists once per merchant and mode.
		if len(ms.Data) != 1 || ms.Data[0].DisplayName != want {
			t.Fatalf("%s sees meters %s", want, ms.Raw)
		}
	}
}

func TestModeMismatch(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *daemon.Config) { c.Environment = "live" })
	m := b.merchant("acme")
	_, testKey := b.key(m, tenant.Test)
	_, liveKey := b.key(m, tenant.Live)
	ctx := context.Background()
	_, err := b.client(testKey).CreateInvoice(ctx, client.InvoiceParams{Amount: "5", Description: "x"})
	apiErr(t, err, 400, "mode_mismatch")
	_, err = b.client(testKey).CreateMeter(ctx, client.MeterParams{Key: "k", DisplayName: "x"})
	apiErr(t, err, 400, "mode_mismatch")
	if _, err := b.client(liveKey).CreateInvoice(ctx, client.InvoiceParams{Amount: "5", Description: "x"}); err != nil {
		t.Fatal(err)
	}
	// Reads are not create requests.
	if _, err := b.client(testKey).ListInvoices(ctx, client.ListParams{}); err != nil {
		t.Fatal(err)
	}
}
