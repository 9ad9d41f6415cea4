package daemon_test

import (
	"encoding/json"
	"math/big"
	"os"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/chaintest"
	"github.com/tollgatehq/tollgate/internal/chainrail"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// TestLiveInvoiceGasless: a live invoice paid from a wallet end to end
// through the API: the page offers the wallet, the payer signs what the
// checkout asks, the relayer pays the gas (the payer's ETH stays 0), and
// invoice.paid fires once, after the third confirmation and not before.
// Posting the same authorization again sends nothing; posting it to
// another invoice is refused.
func TestLiveInvoiceGasless(t *testing.T) {
	t.Parallel()
	e := newLiveEnv(t, 3)
	inv, err := e.api.CreateInvoice(e.ctx, client.InvoiceParams{Amount: "25000000", Description: "Live licence"})
	if err != nil {
		t.Fatal(err)
	}
	st, hdr, page := e.raw("GET", "/checkout/"+inv.ID, "", "")
	if st != 200 || !contains(page, `id="live-pay"`) || contains(page, `id="unavailable"`) ||
		!contains(hdr.Get("Content-Security-Policy"), "script-src 'sha256-") || !contains(hdr.Get("Content-Security-Policy"), "connect-src 'self'") {
		t.Fatalf("live page: %d %s\n%s", st, hdr.Get("Content-Security-Policy"), page)
	}
	body := e.invoiceAuthorization(e.payer, inv.ID)
	code, out := e.authorize(inv.ID, body)
	if code != 202 || out["status"] != "pending" || out["receipt_url"] != "/checkout/"+inv.ID {
		t.Fatalf("authorization: %d %v", code, out)
	}
	if _, _, page := e.raw("GET", "/checkout/"+inv.ID, "", ""); !contains(page, `id="live-pending"`) {
		t.Fatalf("page while pending:\n%s", page)
	}
	e.step() // mined: 1 confirmation
	e.step() // 2
	if got, _ := e.api.GetInvoice(e.ctx, inv.ID); got.Status != "open" || len(e.events("invoice.paid")) != 0 {
		t.Fatalf("paid before 3 confirmations: %+v", got)
	}
	e.until("invoice.paid", func() bool { return len(e.events("invoice.paid")) == 1 })
	paid, err := e.api.GetInvoice(e.ctx, inv.ID)
	if err != nil || paid.Status != "paid" || paid.PaymentID == nil {
		t.Fatalf("invoice %+v %v", paid, err)
	}
	p, err := e.api.GetPayment(e.ctx, *paid.PaymentID)
	if err != nil || p.Amount != "25000000" || p.TxHash == nil || p.Network == nil || *p.Network != "eip155:1337" || !p.Livemode {
		t.Fatalf("payment %+v %v", p, err)
	}
	if got := e.usdc(addr(e.merchant)); got != 25_000_000 {
		t.Fatalf("merchant has %d", got)
	}
	if eth := e.eth(addr(e.payer)); eth.Sign() != 0 {
		t.Fatalf("the payer spent ETH: %v", eth)
	}
	e.step()
	e.step()
	if n := len(e.events("invoice.paid")); n != 1 {
		t.Fatalf("%d invoice.paid events", n)
	}
	if _, _, page := e.raw("GET", "/checkout/"+inv.ID, "", ""); !contains(page, p.ID) || contains(page, `id="live-pay"`) {
		t.Fatalf("receipt page:\n%s", page)
	}

	// The same authorization again: the invoice is paid, nothing is sent.
	nonce := e.relayerNonce()
	if code, out := e.authorize(inv.ID, body); code != 409 || !contains(errorMessage(out), "invoice_not_open") {
		t.Fatalf("replay: %d %v", code, out)
	}
	// Replayed against another invoice: its nonce and amount are not that
	// invoice's.
	other, err := e.api.CreateInvoice(e.ctx, client.InvoiceParams{Amount: "25000000", Description: "Another"})
	if err != nil {
		t.Fatal(err)
	}
	if code, out := e.authorize(other.ID, body); code != 402 || !contains(errorMessage(out), "authorization_mismatch") {
		t.Fatalf("replay onto another invoice: %d %v", code, out)
	}
	e.step()
	if e.relayerNonce() != nonce || e.usdc(addr(e.merchant)) != 25_000_000 {
		t.Fatal("a replayed authorization moved money or spent gas")
	}
}

// TestLivePageBetweenConfirmationAndRecording: a payment the rail has
// seen succeed but the worker has not yet recorded on the invoice leaves
// the page reloading itself (it found a dead "open" page with the pay
// button in that window, and the payer saw no receipt until reloading by
// hand).
func TestLivePageBetweenConfirmationAndRecording(t *testing.T) {
	t.Parallel()
	e := newLiveEnv(t, 1)
	inv, err := e.api.CreateInvoice(e.ctx, client.InvoiceParams{Amount: "1000000", Description: "In between"})
	if err != nil {
		t.Fatal(err)
	}
	if code, out := e.authorize(inv.ID, e.invoiceAuthorization(e.payer, inv.ID)); code != 202 {
		t.Fatalf("authorization: %d %v", code, out)
	}
	// The worker's finish without its record: the state a page load can
	// land in between the two transactions.
	if _, err := e.bundle.db.ExecContext(e.ctx, `UPDATE chain_settlements SET status = 'succeeded', settled_at = now()
		WHERE nonce = $1`, inv.ID); err != nil {
		t.Fatal(err)
	}
	st, _, page := e.raw("GET", "/checkout/"+inv.ID, "", "")
	if st != 200 || !contains(page, `data-status="open"`) || !contains(page, `id="live-pending"`) || contains(page, `id="live-pay"`) {
		t.Fatalf("page between confirmation and recording: %d\n%s", st, page)
	}
}

// TestLiveInsufficientFunds: caught in preflight, no gas spent, nothing
// stored; the payer can try again once funded.
func TestLiveInsufficientFunds(t *testing.T) {
	t.Parallel()
	e := newLiveEnv(t, 1)
	poor := newKey(t)
	e.mint(addr(poor), 1_000_000)
	inv, err := e.api.CreateInvoice(e.ctx, client.InvoiceParams{Amount: "5000000", Description: "Too much"})
	if err != nil {
		t.Fatal(err)
	}
	nonce, bal := e.relayerNonce(), e.eth(addr(e.relayKey))
	body := e.invoiceAuthorization(poor, inv.ID)
	if code, out := e.authorize(inv.ID, body); code != 402 || !contains(errorMessage(out), "payment_failed: payment failed: insufficient_funds") {
		t.Fatalf("poor payer: %d %v", code, out)
	}
	e.step()
	if e.relayerNonce() != nonce || e.eth(addr(e.relayKey)).Cmp(bal) != 0 {
		t.Fatal("gas spent on a payment that could not go through")
	}
	var n int
	if err := e.db.Get(&n, `SELECT count(*) FROM chain_settlements`); err != nil || n != 0 {
		t.Fatalf("%d settlements stored (%v)", n, err)
	}
	e.mint(addr(poor), 9_000_000)
	if code, out := e.authorize(inv.ID, body); code != 202 {
		t.Fatalf("funded payer: %d %v", code, out)
	}
	e.until("paid", func() bool { return len(e.events("invoice.paid")) == 1 })
}

// TestLivePlanLifecycle: a plan activated from a wallet (plan signature
// and permit, first period pulled in the same transaction), renewed a
// period later by the billing engine on the chain's clock, revoked by the
// payer on chain (gasless, relayed by someone else): the watcher marks the
// subscription revoked and its entitlement follows; nothing more is
// charged.
func TestLivePlanLifecycle(t *testing.T) {
	t.Parallel()
	e := newLiveEnv(t, 1)
	one := 1
	if _, err := e.api.CreateFeature(e.ctx, client.FeatureParams{Key: "pro", Name: "Pro"}); err != nil {
		t.Fatal(err)
	}
	plan, err := e.api.CreatePlan(e.ctx, client.PlanParams{Name: "Pro", Amount: "5000000", Interval: "custom", IntervalDays: &one,
		Features: []client.PlanFeature{{FeatureKey: "pro"}}})
	if err != nil {
		t.Fatal(err)
	}
	terms := e.terms(plan.ID, addr(e.payer))
	planTD, planSig := signTerms(t, e.payer, terms["plan"])
	permitTD, permitSig := signTerms(t, e.payer, terms["permit"])
	b, _ := json.Marshal(map[string]any{"plan": planTD.Message, "signature": planSig, "external_customer_id": "u_42",
		"permit": map[string]any{"value": permitTD.Message["value"], "deadline": permitTD.Message["deadline"], "signature": permitSig}})
	body := string(b)
	code, out := e.authorize(plan.ID, body)
	if code != 202 || out["status"] != "pending" || !contains(out["receipt_url"].(string), "activation=") {
		t.Fatalf("activation: %d %v", code, out)
	}
	e.until("subscription.active", func() bool { return len(e.events("subscription.active")) == 1 })
	if _, _, page := e.raw("GET", out["receipt_url"].(string), "", ""); !contains(page, `id="subscription-status">active`) {
		t.Fatalf("receipt page:\n%s", page)
	}
	subs, err := e.api.ListSubscriptions(e.ctx, client.ListParams{})
	if err != nil || len(subs.Data) != 1 || subs.Data[0].Status != "active" {
		t.Fatalf("subscriptions %+v %v", subs, err)
	}
	sub := subs.Data[0]
	if got := e.usdc(addr(e.merchant)); got != 5_000_000 {
		t.Fatalf("first period: merchant has %d", got)
	}
	if ent, err := e.api.CheckEntitlement(e.ctx, *sub.CustomerID, "pro"); err != nil || !ent.Entitled {
		t.Fatalf("entitlement %+v %v", ent, err)
	}

	// A period later, on the chain and by the billing engine's clock.
	chaintest.AdjustTime(t, e.sim, 24*time.Hour+time.Minute)
	e.sim.Commit()
	now := time.Now().Add(24*time.Hour + 2*time.Minute)
	e.until("subscription.renewed", func() bool {
		if err := e.d.Jobs().Drain(e.ctx, "subscription-billing", now); err != nil {
			t.Fatal(err)
		}
		now = now.Add(20 * time.Second) // past the pending charge's recheck
		return len(e.events("subscription.renewed")) == 1
	})
	if got := e.usdc(addr(e.merchant)); got != 10_000_000 {
		t.Fatalf("after the renewal: merchant has %d", got)
	}

	// The payer revokes without gas; someone with ETH relays it.
	act, _, err := chainrail.ParseActivation([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	dom, err := e.pm.Domain(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	id, err := e.pm.PlanID(e.ctx, act.Plan)
	if err != nil {
		t.Fatal(err)
	}
	deadline := new(big.Int).SetUint64(e.head().Time + 3600)
	rsig, err := chain.SignTypedData(e.payer, chain.RevokeTypedData(dom, id, deadline))
	if err != nil {
		t.Fatal(err)
	}
	e.sendAs(e.deployer, e.pm.Address, e.pm.RevokeCall(act.Plan, deadline, rsig).Data)
	e.until("subscription.revoked", func() bool { return len(e.events("subscription.revoked")) == 1 })
	got, err := e.api.GetSubscription(e.ctx, sub.ID)
	if err != nil || got.Status != "revoked" {
		t.Fatalf("after the revocation: %+v %v", got, err)
	}
	if ent, err := e.api.CheckEntitlement(e.ctx, *sub.CustomerID, "pro"); err != nil || ent.Entitled || ent.Reason != "revoked" {
		t.Fatalf("entitlement after the revocation %+v %v", ent, err)
	}
	// The next period: nothing is charged, nothing fails.
	chaintest.AdjustTime(t, e.sim, 24*time.Hour)
	e.step()
	if err := e.d.Jobs().Drain(e.ctx, "subscription-billing", now.Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	e.step()
	if got := e.usdc(addr(e.merchant)); got != 10_000_000 || len(e.events("subscription.payment_failed")) != 0 {
		t.Fatalf("charged after the revocation: merchant has %d", got)
	}
}

// TestLiveRefund: the merchant wallet's authorization (signed with a hot
// refund key, as admin refund --key-file does) moves the money back; the
// merchant needs no ETH; refund.succeeded fires on confirmation.
func TestLiveRefund(t *testing.T) {
	t.Parallel()
	e := newLiveEnv(t, 2)
	inv, err := e.api.CreateInvoice(e.ctx, client.InvoiceParams{Amount: "8000000", Description: "Refundable"})
	if err != nil {
		t.Fatal(err)
	}
	if code, out := e.authorize(inv.ID, e.invoiceAuthorization(e.payer, inv.ID)); code != 202 {
		t.Fatalf("pay: %d %v", code, out)
	}
	e.until("paid", func() bool { return len(e.events("invoice.paid")) == 1 })
	paid, _ := e.api.GetInvoice(e.ctx, inv.ID)

	// What admin refund does, over the same database and chain.
	r, _, err := daemon.NewLiveRail(daemon.ChainConfig{Backend: e.c, RelayerKey: e.relayKey, USDCAddress: e.token.Address.Hex(),
		PlanManager: e.pm.Address.Hex(), Confirmations: 2}, e.db, nil, testLogger())
	if err != nil {
		t.Fatal(err)
	}
	amount := int64(3_000_000)
	in := payments.RefundInput{PaymentID: *paid.PaymentID}
	a3 := paymentsAmount(amount)
	in.Amount = &a3
	pr, err := payments.PrepareRefund(e.ctx, e.db, in)
	if err != nil {
		t.Fatal(err)
	}
	auth, td, err := r.Token().RefundAuthorization(e.ctx, addr(e.merchant), addr(e.payer), big.NewInt(amount), pr.Key, 0)
	if err != nil {
		t.Fatal(err)
	}
	if auth.Signature, err = chain.SignTypedData(e.merchant, td); err != nil {
		t.Fatal(err)
	}
	in.Payload = &chainrail.Transfer{Authorization: auth}
	before := e.usdc(addr(e.payer))
	ref, err := payments.IssueRefund(e.ctx, e.db, func(m tenant.Mode) (rail.Rail, bool) { return r, m == tenant.Live }, in,
		func(tenant.Scope) time.Time { return time.Now() })
	if err != nil || ref.Status != payments.RefundPending {
		t.Fatalf("refund %+v %v", ref, err)
	}
	// Asking for more than is left while it is pending is refused.
	five := paymentsAmount(5_000_001)
	if _, err := payments.PrepareRefund(e.ctx, e.db, payments.RefundInput{PaymentID: *paid.PaymentID, Amount: &five}); err == nil {
		t.Fatal("a refund over what is left (counting the pending one) was accepted")
	}
	e.until("refund.succeeded", func() bool { return len(e.events("refund.succeeded")) == 1 })
	if got := e.usdc(addr(e.payer)); got != before+amount {
		t.Fatalf("payer got %d back, want %d", got-before, amount)
	}
	p, err := e.api.GetPayment(e.ctx, *paid.PaymentID)
	if err != nil || p.Status != "partially_refunded" || p.AmountRefunded == nil || *p.AmountRefunded != "3000000" {
		t.Fatalf("payment after the refund: %+v %v", p, err)
	}
	if eth := e.eth(addr(e.merchant)); eth.Sign() != 0 {
		t.Fatalf("the merchant spent ETH: %v", eth)
	}
}

// TestLiveReorgNeverPaid: the payment is mined, then a longer fork without
// it (carrying the payer's cancelAuthorization instead) replaces its block:
// the invoice is never paid, invoice.paid never fires, and the page says
// why the attempt failed.
func TestLiveReorgNeverPaid(t *testing.T) {
	t.Parallel()
	e := newLiveEnv(t, 2)
	inv, err := e.api.CreateInvoice(e.ctx, client.InvoiceParams{Amount: "15000000", Description: "Flipped"})
	if err != nil {
		t.Fatal(err)
	}
	body := e.invoiceAuthorization(e.payer, inv.ID)
	if code, out := e.authorize(inv.ID, body); code != 202 {
		t.Fatalf("pay: %d %v", code, out)
	}
	parent := e.head().Hash()
	e.step() // mined, one confirmation of two
	if got := e.usdc(addr(e.merchant)); got != 15_000_000 {
		t.Fatalf("the transfer did not run: %d", got)
	}
	chaintest.Fork(t, e.sim, parent)
	var a struct {
		Nonce string `json:"nonce"`
	}
	_ = json.Unmarshal([]byte(body), &a)
	dom, _ := e.token.Domain(e.ctx)
	csig, err := chain.SignTypedData(e.payer, chain.CancelTypedData(dom, addr(e.payer), common.HexToHash(a.Nonce)))
	if err != nil {
		t.Fatal(err)
	}
	e.sendAs(e.deployer, e.token.Address, e.tok.PackCancelAuthorization0(addr(e.payer), common.HexToHash(a.Nonce), csig))
	e.sim.Commit()
	e.sim.Commit()
	e.until("the attempt fails", func() bool {
		var status string
		_ = e.db.Get(&status, `SELECT status FROM chain_settlements WHERE nonce = $1`, inv.ID)
		return status == "failed"
	})
	for range 3 {
		e.step()
	}
	if got, _ := e.api.GetInvoice(e.ctx, inv.ID); got.Status != "open" || len(e.events("invoice.paid")) != 0 {
		t.Fatalf("a reorganised payment left the invoice %s", got.Status)
	}
	if got := e.usdc(addr(e.merchant)); got != 0 {
		t.Fatalf("merchant has %d on the canonical chain", got)
	}
	if _, _, page := e.raw("GET", "/checkout/"+inv.ID, "", ""); !contains(page, "authorization_canceled") || !contains(page, `id="live-pay"`) {
		t.Fatalf("page after the flip:\n%s", page)
	}
}

// TestLiveFigures measures what the report quotes: time from the
// authorization POST to invoice.paid on the simulated chain at 1 and 3
// confirmations (blocks mined as fast as the test steps, so it is the
// daemon's own latency). It runs with TOLLGATE_CHAIN_FIGURES=1.
func TestLiveFigures(t *testing.T) {
	if os.Getenv("TOLLGATE_CHAIN_FIGURES") == "" {
		t.Skip("set TOLLGATE_CHAIN_FIGURES=1 to measure")
	}
	for _, confs := range []uint64{1, 3} {
		e := newLiveEnv(t, confs)
		var total time.Duration
		const n = 10
		for i := range n {
			inv, err := e.api.CreateInvoice(e.ctx, client.InvoiceParams{Amount: "1000000", Description: "figure"})
			if err != nil {
				t.Fatal(err)
			}
			body := e.invoiceAuthorization(e.payer, inv.ID)
			start := time.Now()
			if code, out := e.authorize(inv.ID, body); code != 202 {
				t.Fatalf("pay: %d %v", code, out)
			}
			e.until("paid", func() bool { return len(e.events("invoice.paid")) == i+1 })
			total += time.Since(start)
		}
		t.Logf("FIGURE confirmations=%d: authorization POST to invoice.paid %v on average over %d invoices", confs, total/n, n)
	}
}
