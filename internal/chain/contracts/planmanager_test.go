package contracts_test

import (
	"crypto/ecdsa"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chain/contracts"
)

const month = 30 * 24 * time.Hour

// planFixture is a monthly plan of cap 10 USDC from e.payer to e.other,
// started a minute ago, running twelve periods.
type planFixture struct {
	e    *env
	plan contracts.PlanManagerPlan
	sig  []byte
}

func newPlan(e *env) *planFixture {
	start := e.now() - 60
	p := chain.Plan{
		Payer: addr(e.payer), Payee: addr(e.other), Token: e.usdc,
		CapPerPeriod: big.NewInt(10_000_000), Period: big.NewInt(int64(month / time.Second)),
		Start: new(big.Int).SetUint64(start), End: new(big.Int).SetUint64(start + 12*uint64(month/time.Second)),
		Salt: chain.NonceFor("sub_test"),
	}
	return &planFixture{e: e, plan: binding(p), sig: e.signPlan(e.payer, p)}
}

func binding(p chain.Plan) contracts.PlanManagerPlan {
	return contracts.PlanManagerPlan{Payer: p.Payer, Payee: p.Payee, Token: p.Token, CapPerPeriod: p.CapPerPeriod,
		Period: p.Period, Start: p.Start, End: p.End, Salt: p.Salt}
}

func unbinding(p contracts.PlanManagerPlan) chain.Plan {
	return chain.Plan{Payer: p.Payer, Payee: p.Payee, Token: p.Token, CapPerPeriod: p.CapPerPeriod,
		Period: p.Period, Start: p.Start, End: p.End, Salt: p.Salt}
}

func (e *env) signPlan(k *ecdsa.PrivateKey, p chain.Plan) []byte {
	e.t.Helper()
	sig, err := chain.SignTypedData(k, chain.PlanTypedData(e.domain(e.pm, "PlanManager", "1"), p))
	if err != nil {
		e.t.Fatal(err)
	}
	return sig
}

// permit returns payer's signed permit of value for the PlanManager.
func (e *env) permit(k *ecdsa.PrivateKey, value int64) contracts.PlanManagerPermit {
	e.t.Helper()
	out, err := e.c.CallContract(e.ctx, callMsg(e.usdc, e.tok.PackNonces(addr(k))), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	nonce, _ := e.tok.UnpackNonces(out)
	deadline := new(big.Int).SetUint64(e.now() + 3600)
	p := chain.Permit{Owner: addr(k), Spender: e.pm, Value: big.NewInt(value), Nonce: nonce, Deadline: deadline}
	sig, err := chain.SignTypedData(k, chain.PermitTypedData(e.domain(e.usdc, "USD Coin", "2"), p))
	if err != nil {
		e.t.Fatal(err)
	}
	var bp contracts.PlanManagerPermit
	bp.Value, bp.Deadline, bp.V = p.Value, deadline, sig[64]
	copy(bp.R[:], sig[:32])
	copy(bp.S[:], sig[32:64])
	return bp
}

func noPermit() contracts.PlanManagerPermit {
	return contracts.PlanManagerPermit{Value: new(big.Int), Deadline: new(big.Int)}
}

func (f *planFixture) activate(first int64) []byte {
	return f.e.plans.PackActivate(f.plan, f.sig, f.e.permit(f.e.payer, 1_000_000_000), big.NewInt(first), common.Hash{1})
}

func (f *planFixture) charge(amount int64) []byte {
	return f.e.plans.PackCharge(f.plan, big.NewInt(amount), common.Hash{2})
}

func TestPlanManagerHappyPath(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mint(addr(e.payer), 100_000_000)
	f := newPlan(e)
	e.ok(e.op, e.pm, f.activate(4_000_000))
	e.ok(e.op, e.pm, f.charge(6_000_000)) // exactly the cap in period 0
	e.mustRevert(e.op, e.pm, f.charge(1), "PlanManager: cap exceeded")
	if got := e.balance(addr(e.other)); got.Int64() != 10_000_000 {
		t.Fatalf("payee balance %v, want 10000000", got)
	}
	e.advance(month)
	e.ok(e.op, e.pm, f.charge(10_000_000))
	st, err := e.c.CallContract(e.ctx, callMsg(e.pm, e.plans.PackPlanState(e.planID(f.plan))), nil)
	if err != nil {
		t.Fatal(err)
	}
	state, _ := e.plans.UnpackPlanState(st)
	if state.Status != 1 || state.PeriodIndex != 1 || state.Spent.Int64() != 10_000_000 {
		t.Fatalf("state %+v", state)
	}
	e.ok(e.payer, e.pm, e.plans.PackRevoke(f.plan))
	e.advance(month)
	e.mustRevert(e.op, e.pm, f.charge(1), "PlanManager: plan revoked")
}

func (e *env) planID(p contracts.PlanManagerPlan) [32]byte {
	e.t.Helper()
	out, err := e.c.CallContract(e.ctx, callMsg(e.pm, e.plans.PackPlanId(p)), nil)
	if err != nil {
		e.t.Fatal(err)
	}
	id, _ := e.plans.UnpackPlanId(out)
	local, err := chain.Digest(chain.PlanTypedData(e.domain(e.pm, "PlanManager", "1"), unbinding(p)))
	if err != nil {
		e.t.Fatal(err)
	}
	if common.Hash(id) != local {
		e.t.Fatalf("planId on chain %x != EIP-712 digest computed off chain %x", id, local)
	}
	return id
}

// TestPlanManagerRequires makes every require of PlanManager fail once, as
// an eth_call and as a mined transaction.
func TestPlanManagerRequires(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mint(addr(e.payer), 100_000_000)
	f := newPlan(e)
	p := f.plan
	variant := func(change func(*chain.Plan)) ([]byte, contracts.PlanManagerPlan) {
		q := unbinding(p)
		change(&q)
		return e.plans.PackActivate(binding(q), e.signPlan(e.payer, q), noPermit(), big.NewInt(1), common.Hash{}), binding(q)
	}

	t.Run("constructor zero operator", func(t *testing.T) {
		data := append(common.FromHex(contracts.PlanManagerMetaData.Bin), e.plans.PackConstructor(common.Address{})...)
		if got := e.revertCreate(e.op, data); got != "PlanManager: zero operator" {
			t.Fatalf("revert %q", got)
		}
	})
	e.mustRevert(e.other, e.pm, f.activate(1), "PlanManager: caller is not the operator")
	e.mustRevert(e.other, e.pm, f.charge(1), "PlanManager: caller is not the operator")
	e.mustRevert(e.other, e.pm, e.plans.PackSetOperator(addr(e.other)), "PlanManager: caller is not the operator")
	e.mustRevert(e.op, e.pm, e.plans.PackSetOperator(common.Address{}), "PlanManager: zero operator")

	data, _ := variant(func(q *chain.Plan) { q.Payee = common.Address{} })
	e.mustRevert(e.op, e.pm, data, "PlanManager: zero address")
	data, _ = variant(func(q *chain.Plan) { q.Token = addr(e.other) })
	e.mustRevert(e.op, e.pm, data, "PlanManager: token is not a contract")
	data, _ = variant(func(q *chain.Plan) { q.Period = new(big.Int) })
	e.mustRevert(e.op, e.pm, data, "PlanManager: zero period")
	data, _ = variant(func(q *chain.Plan) { q.End = q.Start })
	e.mustRevert(e.op, e.pm, data, "PlanManager: empty term")
	data, _ = variant(func(q *chain.Plan) { q.CapPerPeriod = new(big.Int) })
	e.mustRevert(e.op, e.pm, data, "PlanManager: zero cap")
	// Signed by someone else.
	e.mustRevert(e.op, e.pm, e.plans.PackActivate(p, e.signPlan(e.other, unbinding(p)), noPermit(), big.NewInt(1), common.Hash{}),
		"PlanManager: invalid signature")
	// Metered activation (no first charge) without any allowance.
	e.mustRevert(e.op, e.pm, e.plans.PackActivate(p, f.sig, noPermit(), new(big.Int), common.Hash{}), "PlanManager: allowance is zero")
	// Charging a plan never activated.
	e.mustRevert(e.op, e.pm, f.charge(1), "PlanManager: plan not active")
	// Not started yet / already ended.
	data, _ = variant(func(q *chain.Plan) {
		q.Start = new(big.Int).SetUint64(e.now() + 3600)
		q.End = new(big.Int).SetUint64(e.now() + 7200)
	})
	e.ok(e.payer, e.usdc, e.tok.PackApprove(e.pm, big.NewInt(1_000_000_000)))
	e.mustRevert(e.op, e.pm, data, "PlanManager: plan not started")
	data, _ = variant(func(q *chain.Plan) { q.Start = big.NewInt(1); q.End = big.NewInt(2) })
	e.mustRevert(e.op, e.pm, data, "PlanManager: plan ended")

	// Active plan.
	e.ok(e.op, e.pm, f.activate(1_000_000))
	e.mustRevert(e.op, e.pm, f.activate(1_000_000), "PlanManager: plan already active")
	e.mustRevert(e.op, e.pm, f.charge(0), "PlanManager: zero amount")
	e.mustRevert(e.op, e.pm, f.charge(9_000_001), "PlanManager: cap exceeded")
	// Allowance lowered below the charge.
	e.ok(e.payer, e.usdc, e.tok.PackApprove(e.pm, big.NewInt(500_000)))
	e.mustRevert(e.op, e.pm, f.charge(600_000), "PlanManager: allowance too low")
	// Allowance fine, balance not: the token's own revert comes through.
	e.ok(e.payer, e.usdc, e.tok.PackApprove(e.pm, big.NewInt(1_000_000_000)))
	e.ok(e.payer, e.usdc, e.tok.PackTransfer(addr(e.op), big.NewInt(98_500_000)))
	e.mustRevert(e.op, e.pm, f.charge(600_000), "ERC20: transfer amount exceeds balance")

	// Revocation.
	e.mustRevert(e.other, e.pm, e.plans.PackRevoke(p), "PlanManager: caller is not the payer")
	past := new(big.Int).SetUint64(e.now() - 1)
	e.mustRevert(e.other, e.pm, e.plans.PackRevokeWithSignature(p, past, e.signRevoke(e.payer, p, past)), "PlanManager: revocation expired")
	later := new(big.Int).SetUint64(e.now() + 3600)
	e.mustRevert(e.other, e.pm, e.plans.PackRevokeWithSignature(p, later, e.signRevoke(e.other, p, later)), "PlanManager: invalid signature")
	e.ok(e.other, e.pm, e.plans.PackRevokeWithSignature(p, later, e.signRevoke(e.payer, p, later)))
	e.mustRevert(e.payer, e.pm, e.plans.PackRevoke(p), "PlanManager: plan revoked")
	e.mustRevert(e.op, e.pm, f.charge(1), "PlanManager: plan revoked")
	e.mustRevert(e.op, e.pm, f.activate(1), "PlanManager: plan revoked")

	// A token whose transferFrom returns false instead of reverting.
	falseToken := e.deploy(contracts.FalseTokenMetaData.Bin, nil)
	q := unbinding(p)
	q.Token, q.Salt = falseToken, common.Hash{9}
	e.mustRevert(e.op, e.pm, e.plans.PackActivate(binding(q), e.signPlan(e.payer, q), noPermit(), big.NewInt(1), common.Hash{}),
		"PlanManager: transfer failed")

	// The operator role moves.
	e.ok(e.op, e.pm, e.plans.PackSetOperator(addr(e.other)))
	e.mustRevert(e.op, e.pm, e.plans.PackSetOperator(addr(e.op)), "PlanManager: caller is not the operator")
}

func (e *env) signRevoke(k *ecdsa.PrivateKey, p contracts.PlanManagerPlan, deadline *big.Int) []byte {
	e.t.Helper()
	id := e.planID(p)
	sig, err := chain.SignTypedData(k, chain.RevokeTypedData(e.domain(e.pm, "PlanManager", "1"), id, deadline))
	if err != nil {
		e.t.Fatal(err)
	}
	return sig
}
