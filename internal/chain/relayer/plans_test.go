package relayer

import (
	"crypto/ecdsa"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgatehq/tollgate/internal/chain"
)

const month = 30 * 24 * time.Hour

// signedPlan returns a plan of cap per month from the payer to the
// merchant, the payer's signature over it and a permit of a year's caps.
func (e *env) signedPlan(k *ecdsa.PrivateKey, cap int64, salt string) (chain.Plan, []byte, chain.SignedPermit) {
	e.t.Helper()
	start := e.head().Time - 60
	p := chain.Plan{Payer: addr(k), Payee: addr(e.merchant), Token: e.token.Address,
		CapPerPeriod: big.NewInt(cap), Period: big.NewInt(int64(month / time.Second)),
		Start: new(big.Int).SetUint64(start), End: new(big.Int).SetUint64(start + 12*uint64(month/time.Second)),
		Salt: chain.NonceFor(salt)}
	pd, err := e.plans.Domain(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	sig, err := chain.SignTypedData(k, chain.PlanTypedData(pd, p))
	if err != nil {
		e.t.Fatal(err)
	}
	td, err := e.token.Domain(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	nonce, err := e.token.PermitNonce(e.ctx, addr(k))
	if err != nil {
		e.t.Fatal(err)
	}
	permit := chain.Permit{Owner: addr(k), Spender: e.plans.Address, Value: big.NewInt(12 * cap), Nonce: nonce,
		Deadline: new(big.Int).SetUint64(e.head().Time + 3600)}
	psig, err := chain.SignTypedData(k, chain.PermitTypedData(td, permit))
	if err != nil {
		e.t.Fatal(err)
	}
	return p, sig, chain.SignedPermit{Value: permit.Value, Deadline: permit.Deadline, Signature: psig}
}

func (e *env) mustSettle(key string, c chain.Call) Settlement {
	e.t.Helper()
	if _, err := e.r.Submit(e.ctx, key, c); err != nil {
		e.t.Fatalf("%s: %v", key, err)
	}
	s, states := e.settle(key)
	if s.State != Confirmed {
		e.t.Fatalf("%s: %+v (states %v)", key, s, states)
	}
	return s
}

func (e *env) state(p chain.Plan) chain.PlanState {
	e.t.Helper()
	st, err := e.plans.State(e.ctx, p)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// TestPlanLifecycle: activate → renew → cap exceeded → next period →
// revoke → charge refused, all gasless for the payer.
func TestPlanLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	m := addr(e.merchant)
	p, sig, permit := e.signedPlan(e.payer, 10_000_000, "sub_1")

	e.mustSettle("sub_1:activate", e.plans.ActivateCall(p, sig, permit, big.NewInt(10_000_000), chain.NonceFor("pay_1")))
	if st := e.state(p); st.Status != chain.PlanActive || st.Spent.Int64() != 10_000_000 || st.Remaining.Sign() != 0 {
		t.Fatalf("after activation: %+v", st)
	}
	if got := e.usdc(m); got != 10_000_000 {
		t.Fatalf("merchant has %d", got)
	}
	// A second charge in the first period is over the cap: refused in
	// preflight, nothing stored or sent.
	nonce := e.relayerNonce()
	_, err := e.r.Submit(e.ctx, "sub_1:extra", e.plans.ChargeCall(p, big.NewInt(1), chain.NonceFor("pay_x")))
	failure(t, err, chain.CapExceeded)
	if e.relayerNonce() != nonce {
		t.Fatal("a refused charge was sent")
	}

	// Renewal in the next period.
	e.adjust(month)
	if st := e.state(p); st.Remaining.Int64() != 10_000_000 {
		t.Fatalf("next period remaining %v", st.Remaining)
	}
	e.mustSettle("sub_1:renew:1", e.plans.ChargeCall(p, big.NewInt(10_000_000), chain.NonceFor("pay_2")))
	_, err = e.r.Submit(e.ctx, "sub_1:extra2", e.plans.ChargeCall(p, big.NewInt(10_000_000), chain.NonceFor("pay_y")))
	failure(t, err, chain.CapExceeded)

	// The payer revokes without gas: their signature, our relayer.
	pd, _ := e.plans.Domain(e.ctx)
	id, err := e.plans.PlanID(e.ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	deadline := new(big.Int).SetUint64(e.head().Time + 3600)
	rsig, err := chain.SignTypedData(e.payer, chain.RevokeTypedData(pd, id, deadline))
	if err != nil {
		t.Fatal(err)
	}
	e.mustSettle("sub_1:revoke", e.plans.RevokeCall(p, deadline, rsig))
	if st := e.state(p); st.Status != chain.PlanRevoked || st.Remaining.Sign() != 0 {
		t.Fatalf("after revoke: %+v", st)
	}
	e.adjust(month)
	_, err = e.r.Submit(e.ctx, "sub_1:renew:2", e.plans.ChargeCall(p, big.NewInt(10_000_000), chain.NonceFor("pay_3")))
	failure(t, err, chain.AuthorizationRevoked)
	if got := e.usdc(m); got != 20_000_000 {
		t.Fatalf("merchant has %d, want two periods' 20000000", got)
	}
	if e.eth(addr(e.payer)).Sign() != 0 {
		t.Fatal("the payer spent ETH")
	}
}

// TestMeteredChargeAtCap: a metered plan only authorizes at activation;
// usage is charged up to exactly the cap, not a unit more.
func TestMeteredChargeAtCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	p, sig, permit := e.signedPlan(e.payer, 5_000_000, "sub_m")
	e.mustSettle("sub_m:activate", e.plans.ActivateCall(p, sig, permit, nil, common.Hash{}))
	if got := e.usdc(addr(e.merchant)); got != 0 {
		t.Fatalf("activation of a metered plan charged %d", got)
	}
	e.adjust(month)
	_, err := e.r.Submit(e.ctx, "sub_m:p1:over", e.plans.ChargeCall(p, big.NewInt(5_000_001), chain.NonceFor("pay_o")))
	failure(t, err, chain.CapExceeded)
	e.mustSettle("sub_m:p1", e.plans.ChargeCall(p, big.NewInt(5_000_000), chain.NonceFor("pay_m1")))
	if got := e.usdc(addr(e.merchant)); got != 5_000_000 {
		t.Fatalf("merchant has %d", got)
	}
}

// TestAllowanceGoneRefusesCharge: a payer who sets the allowance to zero
// (with their own gas) stops every charge, at no gas to the relayer. The
// charge says allowance_too_low, as it does for a bounded permit used up
// (which the payer may renew); the Approval to zero is what the watcher
// reads as a revocation.
func TestAllowanceGoneRefusesCharge(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{})
	payer := newKey(t)
	e.mint(addr(payer), 100_000_000)
	p, sig, permit := e.signedPlan(payer, 10_000_000, "sub_a")
	e.mustSettle("sub_a:activate", e.plans.ActivateCall(p, sig, permit, big.NewInt(1_000_000), chain.NonceFor("pay_a")))
	e.fund(addr(payer))
	e.sendAs(payer, e.token.Address, e.tok.PackApprove(e.plans.Address, new(big.Int)), big.NewInt(1e9))
	e.sim.Commit()
	_, err := e.r.Submit(e.ctx, "sub_a:charge", e.plans.ChargeCall(p, big.NewInt(1_000_000), chain.NonceFor("pay_b")))
	failure(t, err, chain.AllowanceTooLow)
}

// TestChargeRevertedByRevokeInSameBlock: the payer's revocation lands just
// before a charge that passed preflight; the charge is reverted, with the
// reason the rail needs.
func TestChargeRevertedByRevokeInSameBlock(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Config{Confirmations: 2})
	p, sig, permit := e.signedPlan(e.payer, 10_000_000, "sub_race")
	e.mustSettle("sub_race:activate", e.plans.ActivateCall(p, sig, permit, big.NewInt(1_000_000), chain.NonceFor("pay_r1")))
	if _, err := e.r.Submit(e.ctx, "sub_race:charge", e.plans.ChargeCall(p, big.NewInt(1_000_000), chain.NonceFor("pay_r2"))); err != nil {
		t.Fatal(err)
	}
	pd, _ := e.plans.Domain(e.ctx)
	id, _ := e.plans.PlanID(e.ctx, p)
	deadline := new(big.Int).SetUint64(e.head().Time + 3600)
	rsig, err := chain.SignTypedData(e.payer, chain.RevokeTypedData(pd, id, deadline))
	if err != nil {
		t.Fatal(err)
	}
	revoke := e.plans.RevokeCall(p, deadline, rsig)
	e.sendAs(e.deployer, revoke.To, revoke.Data, big.NewInt(100e9)) // mined first: a higher tip
	final, states := e.settle("sub_race:charge")
	if final.State != Reverted || final.Reason() != chain.AuthorizationRevoked {
		t.Fatalf("final %+v (states %v), want reverted: authorization_revoked", final, states)
	}
	if got := e.usdc(addr(e.merchant)); got != 1_000_000 {
		t.Fatalf("merchant has %d", got)
	}
}
