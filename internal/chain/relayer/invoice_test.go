package relayer

import (
	"errors"
	"math/big"
	"testing"

	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/contracts"
)

func failure(t *testing.T, err error, want chain.Reason) {
	t.Helper()
	var f *chain.Failure
	if !errors.As(err, &f) || f.Reason != want {
		t.Fatalf("error %v, want a %s failure", err, want)
	}
}

// TestGaslessInvoice: the payer signs, the relayer pays the gas, the
// merchant gets exactly the invoice amount, the payer's ETH stays 0.
func TestGaslessInvoice(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{Confirmations: 2})
	merchant := addr(e.merchant)
	a := e.authorize(e.payer, merchant, 25_000_000, "inv_1")
	if err := chain.VerifyTransfer(e.ctx, e.token, a, e.expect(a)); err != nil {
		t.Fatal(err)
	}
	s, err := e.r.Submit(e.ctx, "inv_1", e.token.TransferCall(a))
	if err != nil {
		t.Fatal(err)
	}
	if s.State != Pending || s.Nonce == nil {
		t.Fatalf("submitted: %+v", s)
	}
	final, states := e.settle("inv_1")
	if final.State != Confirmed || final.Confirmations < 2 {
		t.Fatalf("final %+v (states %v)", final, states)
	}
	if states[0] != Pending || !contains(states, Mined) {
		t.Fatalf("states %v: want pending, mined (1 of 2 confirmations), confirmed", states)
	}
	if got := e.usdc(merchant); got != 25_000_000 {
		t.Fatalf("merchant has %d", got)
	}
	if got := e.usdc(addr(e.payer)); got != 1_000_000_000-25_000_000 {
		t.Fatalf("payer has %d", got)
	}
	if eth := e.eth(addr(e.payer)); eth.Sign() != 0 {
		t.Fatalf("payer's ETH is %v, want 0", eth)
	}
	rcpt := e.receipt(final.TxHash)
	if rcpt.Status != 1 || rcpt.BlockNumber.Uint64() != final.BlockNumber {
		t.Fatalf("receipt %+v", rcpt)
	}
	// Submitting again under the key sends nothing.
	nonce := e.relayerNonce()
	again, err := e.r.Submit(e.ctx, "inv_1", e.token.TransferCall(a))
	if err != nil || again.TxHash != final.TxHash || again.State != Confirmed {
		t.Fatalf("resubmit: %+v, %v", again, err)
	}
	if e.relayerNonce() != nonce {
		t.Fatal("resubmitting under the same key sent a transaction")
	}
	// The key cannot be reused for another call.
	b := e.authorize(e.payer, merchant, 1, "inv_other")
	if _, err := e.r.Submit(e.ctx, "inv_1", e.token.TransferCall(b)); err == nil {
		t.Fatal("a different call under a used key was accepted")
	}
}

// TestReplayedAuthorization: a used authorization fails verification, and a
// second submission of it (another key) sends nothing and tracks the
// transaction that used it.
func TestReplayedAuthorization(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	a := e.authorize(e.payer, addr(e.merchant), 5_000_000, "inv_replay")
	if _, err := e.r.Submit(e.ctx, "inv_replay", e.token.TransferCall(a)); err != nil {
		t.Fatal(err)
	}
	first, _ := e.settle("inv_replay")
	if first.State != Confirmed {
		t.Fatalf("first: %+v", first)
	}
	failure(t, chain.VerifyTransfer(e.ctx, e.token, a, e.expect(a)), chain.AuthorizationUsed)

	nonce, before := e.relayerNonce(), e.eth(e.r.Address())
	s, err := e.r.Submit(e.ctx, "replay-attempt", e.token.TransferCall(a))
	if err != nil {
		t.Fatal(err)
	}
	if s.TxHash != first.TxHash {
		t.Fatalf("replay tracks %s, want the original %s", s.TxHash, first.TxHash)
	}
	again, _ := e.settle("replay-attempt")
	if again.State != Confirmed || again.TxHash != first.TxHash {
		t.Fatalf("replay settled as %+v", again)
	}
	if e.relayerNonce() != nonce || e.eth(e.r.Address()).Cmp(before) != 0 {
		t.Fatal("the replay spent gas")
	}
	if got := e.usdc(addr(e.merchant)); got != 5_000_000 {
		t.Fatalf("merchant has %d: paid twice?", got)
	}
}

// TestRelayedBySomeoneElse: another relayer submits the payer's
// authorization first; ours is reconciled against the logs, not failed.
func TestRelayedBySomeoneElse(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	a := e.authorize(e.payer, addr(e.merchant), 7_000_000, "inv_race")
	call := e.token.TransferCall(a)
	s, err := e.r.Submit(e.ctx, "inv_race", call)
	if err != nil {
		t.Fatal(err)
	}
	// A competitor's copy, sent with a far higher tip, is mined first; ours
	// reverts with "authorization is used or canceled".
	theirs := e.sendAs(e.deployer, call.To, call.Data, big.NewInt(50e9))
	final, _ := e.settle("inv_race")
	if final.State != Confirmed || final.TxHash != theirs.Hash() {
		t.Fatalf("final %+v, want confirmed by their %s", final, theirs.Hash())
	}
	if s.Nonce == nil {
		t.Fatal("ours was never signed")
	}
	if got := e.usdc(addr(e.merchant)); got != 7_000_000 {
		t.Fatalf("merchant has %d", got)
	}
}

// TestInsufficientFundsPreflight: caught before any gas is spent.
func TestInsufficientFundsPreflight(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	poor := newKey(t)
	e.mint(addr(poor), 1_000_000)
	a := e.authorize(poor, addr(e.merchant), 5_000_000, "inv_poor")
	failure(t, chain.VerifyTransfer(e.ctx, e.token, a, e.expect(a)), chain.InsufficientFunds)

	nonce, before := e.relayerNonce(), e.eth(e.r.Address())
	_, err := e.r.Submit(e.ctx, "inv_poor", e.token.TransferCall(a))
	failure(t, err, chain.InsufficientFunds)
	e.sim.Commit()
	if e.relayerNonce() != nonce || e.eth(e.r.Address()).Cmp(before) != 0 {
		t.Fatal("gas was spent on a payment that could not go through")
	}
	if n := e.countIntents(); n != 0 {
		t.Fatalf("%d transactions stored for a refused payment", n)
	}
}

// TestVerifyTransferRefuses: what the checkout must refuse before relaying.
func TestVerifyTransferRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	m := addr(e.merchant)
	good := e.authorize(e.payer, m, 9_000_000, "inv_v")
	cases := []struct {
		name   string
		mutate func(a *chain.TransferAuthorization, x *chain.Expect)
		want   chain.Reason
	}{
		{"other payee", func(a *chain.TransferAuthorization, x *chain.Expect) { x.To = addr(e.deployer) }, chain.AuthorizationMismatch},
		{"other amount", func(a *chain.TransferAuthorization, x *chain.Expect) { x.Value = big.NewInt(9_000_001) }, chain.AuthorizationMismatch},
		{"other nonce", func(a *chain.TransferAuthorization, x *chain.Expect) { x.Nonce = chain.NonceFor("inv_w") }, chain.AuthorizationMismatch},
		{"tampered value", func(a *chain.TransferAuthorization, x *chain.Expect) { a.Value = big.NewInt(1); x.Value = a.Value }, chain.InvalidSignature},
		{"signed by another key", func(a *chain.TransferAuthorization, x *chain.Expect) {
			o := e.authorize(e.deployer, m, 9_000_000, "inv_v")
			a.Signature = o.Signature
		}, chain.InvalidSignature},
		{"expired", func(a *chain.TransferAuthorization, x *chain.Expect) {
			*a = e.resign(e.payer, *a, 0, e.head().Time+30)
		}, chain.AuthorizationExpired},
		{"not yet valid", func(a *chain.TransferAuthorization, x *chain.Expect) {
			*a = e.resign(e.payer, *a, e.head().Time+600, e.head().Time+3600)
		}, chain.AuthorizationNotYet},
		{"past the invoice's expiry", func(a *chain.TransferAuthorization, x *chain.Expect) {
			x.NotAfter = unix(e.head().Time + 60)
		}, chain.AuthorizationMismatch},
		{"malleable high-s", func(a *chain.TransferAuthorization, x *chain.Expect) { a.Signature = highS(a.Signature) }, chain.InvalidSignature},
	}
	for _, c := range cases {
		a := good
		a.Signature = append([]byte(nil), good.Signature...)
		x := e.expect(good)
		c.mutate(&a, &x)
		err := chain.VerifyTransfer(e.ctx, e.token, a, x)
		var f *chain.Failure
		if !errors.As(err, &f) || f.Reason != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
	if err := chain.VerifyTransfer(e.ctx, e.token, good, e.expect(good)); err != nil {
		t.Fatalf("the untouched authorization: %v", err)
	}
}

// TestRefund: the merchant (no ETH) signs an authorization back to the
// payer; the relayer submits it.
func TestRefund(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	m, p := addr(e.merchant), addr(e.payer)
	pay := e.authorize(e.payer, m, 20_000_000, "inv_r")
	if _, err := e.r.Submit(e.ctx, "pay:inv_r", e.token.TransferCall(pay)); err != nil {
		t.Fatal(err)
	}
	if s, _ := e.settle("pay:inv_r"); s.State != Confirmed {
		t.Fatalf("payment %+v", s)
	}
	// What `admin refund` prints for the merchant to sign.
	refund, td, err := e.token.RefundAuthorization(e.ctx, m, p, big.NewInt(8_000_000), "re_1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if td.Domain.Name != "USD Coin" || td.Domain.Version != "2" || refund.Nonce != chain.NonceFor("re_1") {
		t.Fatalf("domain %+v not read from the token, or nonce %s", td.Domain, refund.Nonce)
	}
	if refund.Signature, err = chain.SignTypedData(e.merchant, td); err != nil {
		t.Fatal(err)
	}
	x := chain.Expect{From: m, To: p, Value: refund.Value, Nonce: refund.Nonce, Relayer: e.r.Address()}
	if err := chain.VerifyTransfer(e.ctx, e.token, refund, x); err != nil {
		t.Fatal(err)
	}
	if _, err := e.r.Submit(e.ctx, "refund:re_1", e.token.TransferCall(refund)); err != nil {
		t.Fatal(err)
	}
	if s, _ := e.settle("refund:re_1"); s.State != Confirmed {
		t.Fatalf("refund %+v", s)
	}
	if got := e.usdc(m); got != 12_000_000 {
		t.Fatalf("merchant has %d after the refund", got)
	}
	if got := e.usdc(p); got != 1_000_000_000-12_000_000 {
		t.Fatalf("payer has %d after the refund", got)
	}
	if e.eth(m).Sign() != 0 || e.eth(p).Sign() != 0 {
		t.Fatal("merchant or payer spent ETH")
	}
}

// TestSmartWalletPayer: a contract wallet (ERC-1271) pays an invoice.
func TestSmartWalletPayer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	owner := newKey(t)
	wallet := e.deploy(contracts.TestWalletMetaData.Bin, contracts.NewTestWallet().PackConstructor(addr(owner)))
	e.mint(wallet, 50_000_000)
	d, err := e.token.Domain(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := chain.TransferAuthorization{From: wallet, To: addr(e.merchant), Value: big.NewInt(30_000_000),
		ValidAfter: new(big.Int), ValidBefore: big.NewInt(int64(e.head().Time) + 3600), Nonce: chain.NonceFor("inv_sc")}
	if a.Signature, err = chain.SignTypedData(owner, chain.TransferTypedData(d, a)); err != nil {
		t.Fatal(err)
	}
	digest, _ := chain.Digest(chain.TransferTypedData(d, a))
	if ok, err := chain.IsValidSignature(e.ctx, e.c, wallet, digest, a.Signature); err != nil || !ok {
		t.Fatalf("isValidSignature: %v %v", ok, err)
	}
	other, _ := chain.SignTypedData(e.payer, chain.TransferTypedData(d, a))
	if ok, _ := chain.IsValidSignature(e.ctx, e.c, wallet, digest, other); ok {
		t.Fatal("the wallet accepted a stranger's signature")
	}
	if err := chain.VerifyTransfer(e.ctx, e.token, a, e.expect(a)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.r.Submit(e.ctx, "inv_sc", e.token.TransferCall(a)); err != nil {
		t.Fatal(err)
	}
	if s, _ := e.settle("inv_sc"); s.State != Confirmed {
		t.Fatalf("%+v", s)
	}
	if got := e.usdc(addr(e.merchant)); got != 30_000_000 {
		t.Fatalf("merchant has %d", got)
	}
}
