package contracts_test

import (
	"crypto/ecdsa"
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/tollgatehq/tollgate/internal/chain"
)

func (e *env) auth(k *ecdsa.PrivateKey, to common.Address, value int64, after, before uint64, id string) chain.TransferAuthorization {
	e.t.Helper()
	a := chain.TransferAuthorization{From: addr(k), To: to, Value: big.NewInt(value), ValidAfter: new(big.Int).SetUint64(after),
		ValidBefore: new(big.Int).SetUint64(before), Nonce: chain.NonceFor(id)}
	sig, err := chain.SignTypedData(k, chain.TransferTypedData(e.domain(e.usdc, "USD Coin", "2"), a))
	if err != nil {
		e.t.Fatal(err)
	}
	a.Signature = sig
	return a
}

func (e *env) twa(a chain.TransferAuthorization) []byte {
	return e.tok.PackTransferWithAuthorization(a.From, a.To, a.Value, a.ValidAfter, a.ValidBefore, a.Nonce, a.Signature)
}

// TestTestUSDCRevertStrings: TestUSDC refuses what FiatTokenV2 refuses,
// with its revert strings, so the rail's reason mapping is exercised for
// real.
func TestTestUSDCRevertStrings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.mint(addr(e.payer), 10_000_000)
	now := e.now()
	to := addr(e.other)

	e.mustRevert(e.other, e.usdc, e.tok.PackMint(to, big.NewInt(1)), "FiatToken: caller is not a minter")
	e.mustRevert(e.op, e.usdc, e.twa(e.auth(e.payer, to, 1, now+600, now+3600, "a")), "FiatTokenV2: authorization is not yet valid")
	e.mustRevert(e.op, e.usdc, e.twa(e.auth(e.payer, to, 1, 0, now-1, "b")), "FiatTokenV2: authorization is expired")
	forged := e.auth(e.other, to, 1, 0, now+3600, "c")
	forged.From = addr(e.payer)
	e.mustRevert(e.op, e.usdc, e.twa(forged), "FiatTokenV2: invalid signature")
	tooMuch := e.auth(e.payer, to, 20_000_000, 0, now+3600, "d")
	e.mustRevert(e.op, e.usdc, e.twa(tooMuch), "ERC20: transfer amount exceeds balance")

	good := e.auth(e.payer, to, 1_000_000, 0, now+3600, "e")
	e.mustRevert(e.op, e.usdc, e.tok.PackReceiveWithAuthorization(good.From, good.To, good.Value, good.ValidAfter, good.ValidBefore, good.Nonce, good.Signature),
		"FiatTokenV2: caller must be the payee")
	r := e.ok(e.op, e.usdc, e.twa(good))
	if len(r.Logs) != 2 || r.Logs[0].Topics[0] != chain.TopicAuthorizationUsed || r.Logs[1].Topics[0] != chain.TopicTransfer {
		t.Fatalf("logs %+v: want AuthorizationUsed then Transfer", r.Logs)
	}
	e.mustRevert(e.op, e.usdc, e.twa(good), "FiatTokenV2: authorization is used or canceled")

	// Cancel: a canceled nonce can no longer be used.
	unused := e.auth(e.payer, to, 1, 0, now+3600, "f")
	csig, _ := chain.SignTypedData(e.payer, chain.CancelTypedData(e.domain(e.usdc, "USD Coin", "2"), addr(e.payer), unused.Nonce))
	r = e.ok(e.other, e.usdc, e.tok.PackCancelAuthorization0(addr(e.payer), unused.Nonce, csig))
	if r.Logs[0].Topics[0] != chain.TopicAuthorizationCanceled {
		t.Fatal("no AuthorizationCanceled")
	}
	e.mustRevert(e.op, e.usdc, e.twa(unused), "FiatTokenV2: authorization is used or canceled")

	// EIP-2612.
	p := e.permit(e.payer, 5)
	p.Deadline = new(big.Int).SetUint64(now - 10)
	e.mustRevert(e.op, e.usdc, e.tok.PackPermit0(addr(e.payer), e.pm, p.Value, p.Deadline, p.V, p.R, p.S), "FiatTokenV2: permit is expired")
	p = e.permit(e.payer, 5)
	e.mustRevert(e.op, e.usdc, e.tok.PackPermit0(addr(e.payer), e.pm, big.NewInt(6), p.Deadline, p.V, p.R, p.S), "EIP2612: invalid signature")
	e.ok(e.op, e.usdc, e.tok.PackPermit0(addr(e.payer), e.pm, p.Value, p.Deadline, p.V, p.R, p.S))
	e.mustRevert(e.op, e.usdc, e.tok.PackPermit0(addr(e.payer), e.pm, p.Value, p.Deadline, p.V, p.R, p.S), "EIP2612: invalid signature") // nonce moved on
	e.mustRevert(e.other, e.usdc, e.tok.PackTransferFrom(addr(e.payer), to, big.NewInt(1)), "ERC20: transfer amount exceeds allowance")
	e.mustRevert(e.payer, e.usdc, e.tok.PackTransfer(common.Address{}, big.NewInt(1)), "ERC20: transfer to the zero address")
}
