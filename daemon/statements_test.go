package daemon_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/credits"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// TestStatementsStayOnOneMerchant drives two merchants through the
// daemon's work at once (ingestion, credit grants and debits, an alert,
// an invoice paid at checkout, a subscription renewed at a clock advance
// and by the billing job, webhook deliveries, credit expiry, portal and
// dashboard pages), then checks that the claims of the background work
// were among the statements recorded: setup's check holds every statement
// to one merchant per row lock and no join across merchants, and this
// test makes sure the statements that once broke those rules are run.
func TestStatementsStayOnOneMerchant(t *testing.T) {
	t.Parallel()
	b := setup(t, func(c *daemon.Config) { c.AllowInsecureWebhooks = true })
	ctx := context.Background()
	rc := newReceiver(t, nil)
	type shop struct {
		id  string
		c   *client.Client
		sub *client.Subscription
	}
	var shops []shop
	for _, name := range []string{"acme", "globex"} {
		m := b.merchant(name)
		_, key := b.key(m, tenant.Test)
		b.endpoint(m, rc.URL)
		shops = append(shops, shop{id: m, c: b.client(key)})
	}
	for i := range shops {
		s := &shops[i]
		f := &moneyFixture{bundle: b, c: s.c, m: s.id, ctx: ctx}
		if _, err := s.c.CreateMeter(ctx, client.MeterParams{Key: "calls", DisplayName: "Calls", Aggregation: "count"}); err != nil {
			t.Fatal(err)
		}
		sendUsage(t, s.c, "calls", "u_1", "")
		if _, err := s.c.CreateAlert(ctx, client.AlertParams{Type: "credit_balance_below", Threshold: "5000000"}); err != nil {
			t.Fatal(err)
		}
		soon := time.Now().Add(24 * time.Hour)
		if _, err := s.c.GrantCredits(ctx, client.CreditGrantParams{Amount: "8000000", ExternalCustomerID: "u_1", ExpiresAt: &soon}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.c.DebitCredits(ctx, client.CreditDebitParams{Amount: "4000000", ExternalCustomerID: "u_1"}); err != nil {
			t.Fatal(err)
		}
		inv, err := s.c.CreateInvoice(ctx, client.InvoiceParams{Amount: "9000000", Description: "Pro plan"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.c.Pay(ctx, inv.ID, client.CheckoutParams{Payer: rail.WalletSucceeds}); err != nil {
			t.Fatal(err)
		}
		p := f.plan(client.PlanParams{Name: "Weekly", Amount: "2000000", Interval: "week"})
		s.sub = f.subscribe(p.ID, rail.WalletSucceeds, "u_1")
		f.advance("8d")
		ps, err := s.c.CreatePortalSession(ctx, client.PortalSessionParams{ExternalCustomerID: "u_1"})
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := b.httpClient().Get(ps.URL); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("portal page: %v %v", resp, err)
		} else {
			resp.Body.Close()
		}
	}
	// The billing job's own pass (not the advance's): the first merchant's
	// clock moves a week on without the advance running what falls due.
	if _, err := b.db.ExecContext(ctx, `UPDATE test_clocks SET ahead_us = ahead_us + 7 * 86400 * 1000000::bigint
		WHERE merchant_id = $1`, shops[0].id); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the billing job's claim", func() bool {
		for _, q := range b.stmts.All() {
			if strings.Contains(q, "FOR UPDATE OF s SKIP LOCKED") {
				return true
			}
		}
		return false
	})
	eventually(t, 30*time.Second, "the billing job's renewal", func() bool {
		x, err := shops[0].c.GetSubscription(ctx, shops[0].sub.ID)
		return err == nil && x.CurrentPeriodStart.After(shops[0].sub.CurrentPeriodStart.Add(13*24*time.Hour))
	})
	// The expiry sweep across merchants, as its job runs it, a day on.
	if _, err := credits.SweepExpired(ctx, b.db, time.Now().Add(48*time.Hour)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "both merchants' alerts", func() bool {
		return len(triggersOf(t, b.db, shops[0].id)) > 0 && len(triggersOf(t, b.db, shops[1].id)) > 0
	})
	eventually(t, 20*time.Second, "webhook deliveries of both merchants", func() bool {
		var pending int
		err := b.db.GetContext(ctx, &pending, `SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'`)
		return err == nil && pending == 0 && rc.Count() > 10
	})
	email := "owner@acme.test"
	b.dashUser(t, shops[0].id, email)
	br := b.browser(t)
	br.signIn(email)
	for _, page := range []string{"/dashboard", "/dashboard/events", "/dashboard/payments", "/dashboard/developers"} {
		if a := br.get(page); a.status != http.StatusOK {
			t.Fatalf("%s: %d", page, a.status)
		}
	}

	// Each claim that once spanned merchants ran, here locking rows of
	// the table named.
	claims := map[string]bool{"webhook_deliveries": false, "alert_checks": false, "subscriptions": false, "credit_accounts": false}
	for _, q := range b.stmts.All() {
		if !strings.Contains(q, "FOR UPDATE") {
			continue
		}
		for table := range claims {
			if strings.Contains(q, "FROM "+table) || strings.Contains(q, "UPDATE "+table) {
				claims[table] = true
			}
		}
	}
	for table, seen := range claims {
		if !seen {
			t.Errorf("no statement locked rows of %s: the workload no longer covers its claim", table)
		}
	}
}
