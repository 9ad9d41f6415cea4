package relayer

import (
	"fmt"
	"math/big"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/node"

	"github.com/tollgatehq/tollgate/internal/chain"
)

// TestFigures measures what the report quotes: gas per operation on the
// simulated chain's current-fork config, time from Submit to confirmed at
// 1 and N confirmations, and relayer throughput with one key. It runs only
// with TOLLGATE_CHAIN_FIGURES=1 (it takes about a minute).
func TestFigures(t *testing.T) {
	if os.Getenv("TOLLGATE_CHAIN_FIGURES") == "" {
		t.Skip("set TOLLGATE_CHAIN_FIGURES=1 to measure")
	}
	for _, fork := range []string{"osaka", "dev-default"} {
		t.Run(fork, func(t *testing.T) { figures(t, fork) })
	}
}

// osaka runs the simulated chain on Osaka (Fusaka), the fork in production:
// the dev chain's default also enables the draft Bogota/Amsterdam rules,
// whose state-gas metering (EIP-8037) prices new storage far higher.
func osaka(_ *node.Config, c *ethconfig.Config) {
	cfg := *c.Genesis.Config
	cfg.BogotaTime, cfg.AmsterdamTime = nil, nil
	c.Genesis.Config = &cfg
}

func figures(t *testing.T, fork string) {
	var opts []func(*node.Config, *ethconfig.Config)
	if fork == "osaka" {
		opts = append(opts, osaka)
	}
	e := newEnv(t, Config{}, opts...)
	m, p := addr(e.merchant), addr(e.payer)
	gas := func(key string) uint64 {
		s, err := e.r.Status(e.ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return e.receipt(s.TxHash).GasUsed
	}

	// Gas per operation.
	pay := e.authorize(e.payer, m, 25_000_000, "inv_g")
	e.mustSettle("inv_g", e.token.TransferCall(pay))
	plan, sig, permit := e.signedPlan(e.payer, 10_000_000, "sub_g")
	e.mustSettle("sub_g:activate", e.plans.ActivateCall(plan, sig, permit, big.NewInt(10_000_000), chain.NonceFor("pay_g1")))
	e.adjust(month)
	e.mustSettle("sub_g:renew", e.plans.ChargeCall(plan, big.NewInt(10_000_000), chain.NonceFor("pay_g2")))
	d, _ := e.token.Domain(e.ctx)
	refund := chain.TransferAuthorization{From: m, To: p, Value: big.NewInt(5_000_000), ValidAfter: new(big.Int),
		ValidBefore: big.NewInt(int64(e.head().Time) + 3600), Nonce: chain.NonceFor("re_g")}
	refund.Signature, _ = chain.SignTypedData(e.merchant, chain.TransferTypedData(d, refund))
	e.mustSettle("re_g", e.token.TransferCall(refund))
	if fork != "osaka" {
		t.Logf("%s gas: transferWithAuthorization %d, activate (permit + first charge) %d, charge %d, refund %d", fork,
			gas("inv_g"), gas("sub_g:activate"), gas("sub_g:renew"), gas("re_g"))
		return
	}
	t.Logf("gas: transferWithAuthorization %d, activate (permit + first charge) %d, charge %d, refund %d",
		gas("inv_g"), gas("sub_g:activate"), gas("sub_g:renew"), gas("re_g"))

	// Submit → confirmed, one block per step.
	for _, n := range []uint64{1, 6} {
		r, err := New(e.ctx, e.db, e.c, e.relayKey, Config{Confirmations: n})
		if err != nil {
			t.Fatal(err)
		}
		var took []time.Duration
		for i := range 20 {
			key := fmt.Sprintf("lat-%d-%d", n, i)
			a := e.authorize(e.payer, m, 1, key)
			start := time.Now()
			if _, err := r.Submit(e.ctx, key, e.token.TransferCall(a)); err != nil {
				t.Fatal(err)
			}
			for {
				e.sim.Commit()
				if _, err := r.Step(e.ctx); err != nil {
					t.Fatal(err)
				}
				s, _ := r.Status(e.ctx, key)
				if s.State == Confirmed {
					break
				}
				if s.State.Final() {
					t.Fatalf("%s: %+v", key, s)
				}
			}
			took = append(took, time.Since(start))
		}
		sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
		t.Logf("submit → confirmed at %d confirmation(s), simulated chain: median %v, p95 %v (+ %d × block time on a real chain)",
			n, took[len(took)/2].Round(time.Microsecond), took[len(took)*95/100].Round(time.Microsecond), n)
	}

	// Throughput: authorizations from many payers relayed with one key.
	const count = 400
	auths := make([]chain.TransferAuthorization, count)
	first := e.signAs(e.deployer, e.token.Address, nil, big.NewInt(10e9)).Nonce()
	for i := range auths {
		payer := newKey(t)
		tx := e.signAtNonce(e.deployer, first+uint64(i), e.token.Address, e.tok.PackMint(addr(payer), big.NewInt(1_000_000)), big.NewInt(10e9))
		if err := e.c.SendTransaction(e.ctx, tx); err != nil {
			t.Fatal(err)
		}
		if i%50 == 49 {
			e.sim.Commit()
		}
		auths[i] = e.authorize(payer, m, 1_000_000, fmt.Sprintf("tp-%d", i))
	}
	e.sim.Commit()
	vstart := time.Now()
	for _, a := range auths {
		if err := chain.VerifyTransfer(e.ctx, e.token, a, e.expect(a)); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("VerifyTransfer (off-chain checks + eth_call simulation): %.0f/s", float64(count)/time.Since(vstart).Seconds())
	start := time.Now()
	for i, a := range auths {
		if _, err := e.r.Submit(e.ctx, fmt.Sprintf("tp-%d", i), e.token.TransferCall(a)); err != nil {
			t.Fatal(err)
		}
		if i%100 == 99 {
			e.sim.Commit() // a block every 100 submissions, as a chain would keep mining
		}
	}
	submitted := time.Since(start)
	for {
		e.sim.Commit()
		if _, err := e.r.Step(e.ctx); err != nil {
			t.Fatal(err)
		}
		n, _ := e.r.Pending(e.ctx)
		if n == 0 {
			break
		}
	}
	total := time.Since(start)
	var confirmed int
	if err := e.db.Get(&confirmed, `SELECT count(*) FROM chain_intents WHERE idempotency_key LIKE 'tp-%' AND status = 'confirmed'`); err != nil {
		t.Fatal(err)
	}
	if confirmed != count {
		t.Fatalf("%d of %d confirmed", confirmed, count)
	}
	t.Logf("throughput, one key: %d authorizations submitted (verify-free: estimate, sign, store, broadcast) in %v = %.0f/s; all confirmed after %v = %.0f/s",
		count, submitted.Round(time.Millisecond), float64(count)/submitted.Seconds(), total.Round(time.Millisecond), float64(count)/total.Seconds())
}
