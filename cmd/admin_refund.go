package cmd

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/ethereum/go-ethereum/crypto"
	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/chain"
	"github.com/tollgatehq/tollgate/internal/chainrail"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/payments"
	"github.com/tollgatehq/tollgate/internal/rail"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testclock"
)

// refundOptions are admin refund's flags.
type refundOptions struct {
	amount, reason, signature, keyFile string
	validBefore                        uint64
}

// newAdminRefundCmd is `tollgate admin refund PAYMENT_ID`: a dashboard
// operation (no API, no tool), refunding part or all of a payment.
func newAdminRefundCmd(f *Factory) *cobra.Command {
	var o refundOptions
	cmd := &cobra.Command{
		Use:   "refund PAYMENT_ID",
		Short: "Refund part or all of a payment (never more than what is left of it)",
		Long: `Refund a payment through the settlement rail. Without --amount, everything
left of the payment is refunded. refund.succeeded is emitted when the rail
confirms the refund. Test-mode payments are refunded on the simulated rail.

A live payment is refunded on chain from the merchant's wallet, which must
authorize it (EIP-3009): without --signature or --key-file the command prints
the typed data to sign (eth_signTypedData_v4) and the exact command to run
with the signature; --key-file signs with a hot refund key instead. The
relayer pays the gas; refund.succeeded fires once the transfer is confirmed.
The chain settings (--chain-rpc-url, --usdc-address, --relayer-key-file, …)
are read as serve reads them: flags, TOLLGATE_* or the config file.`,
		Example: `  tollgate admin refund pay_… --amount 2.50usdc --reason "partial service"
  tollgate admin refund pay_… --json
  tollgate admin refund pay_… > typed-data.json   (live: sign it, then)
  tollgate admin refund pay_… --signature 0x… --valid-before 1767225600
  tollgate admin refund pay_… --key-file merchant-wallet.key   (live, a hot refund key)`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := payments.RefundInput{PaymentID: args[0]}
			if o.amount != "" {
				a, err := money.ParseCLI(o.amount)
				if err != nil {
					return usageError("--amount: %v", err)
				}
				in.Amount = &a
			}
			if o.reason != "" {
				in.Reason = &o.reason
			}
			return f.withDB(cmd.Context(), func(d *database) error { return f.refund(cmd.Context(), d, in, o) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.amount, "amount", "", "amount to refund: base units or USDC with a suffix (9usdc); default everything left")
	fl.StringVar(&o.reason, "reason", "", "why, for the record")
	fl.StringVar(&o.signature, "signature", "", "live: the merchant wallet's signature of the printed typed data (0x…)")
	fl.Uint64Var(&o.validBefore, "valid-before", 0, "live: the validBefore of the typed data that was signed (printed with it)")
	fl.StringVar(&o.keyFile, "key-file", "", "live: the merchant wallet's hex private key file, to sign the refund here")
	chainFlags(cmd)
	return cmd
}

func (f *Factory) refund(ctx context.Context, d *database, in payments.RefundInput, o refundOptions) error {
	pr, err := payments.PrepareRefund(ctx, d.DB, in)
	if err != nil {
		return err
	}
	testRail := rail.NewTest(d.DB)
	railFor := func(m tenant.Mode) (rail.Rail, bool) { return testRail, m == tenant.Test }
	clockOf := func(s tenant.Scope) time.Time { return merchantNow(context.Background(), d, s) }
	if pr.Payment.Mode == tenant.Live {
		r, client, err := daemon.NewLiveRail(f.chainConfig(), d.DB, nil, f.newLogger(slog.LevelWarn))
		if err != nil {
			return usageError("refunding a live payment needs the chain serve settles on: %v", err)
		}
		if client != nil {
			defer client.Close()
		}
		payload, done, err := f.refundAuthorization(ctx, r, pr, o)
		if err != nil || done {
			return err
		}
		in.Payload, in.Key = payload, pr.Key
		railFor = func(m tenant.Mode) (rail.Rail, bool) { return r, m == tenant.Live }
		// Live time is the rail's: the wall clock, or the chain's under
		// --clock chain, as serve stamps it.
		clockOf = func(tenant.Scope) time.Time { return r.Clock().Now() }
	}
	r, err := daemon.Refund(ctx, d.DB, railFor, in, clockOf, audit.AdminActor())
	if err != nil {
		return err
	}
	if f.JSON() {
		return writeJSONTo(f.IO.Out, r.Wire())
	}
	if r.Status == payments.RefundPending {
		fmt.Fprintf(f.IO.Out, "Refund %s of %s USDC from %s submitted; refund.succeeded fires once it is confirmed on chain\n", r.ID, r.Amount.USDC(), r.PaymentID)
		return nil
	}
	fmt.Fprintf(f.IO.Out, "Refunded %s USDC of %s: %s (%s)\n", r.Amount.USDC(), r.PaymentID, r.ID, r.Status)
	return nil
}

// refundAuthorization builds the merchant wallet's authorization of a live
// refund: signed with --key-file, or carrying --signature; without either
// it prints the typed data to sign and done is true.
func (f *Factory) refundAuthorization(ctx context.Context, r *chainrail.Rail, pr payments.PreparedRefund, o refundOptions) (*chainrail.Transfer, bool, error) {
	if o.signature != "" && o.keyFile == "" {
		if o.validBefore == 0 {
			return nil, false, usageError("--signature needs --valid-before: the validBefore of the typed data that was signed")
		}
		t, err := daemon.SignedRefund(ctx, r, pr, o.validBefore, o.signature)
		return t, false, err
	}
	terms, err := daemon.LiveRefundTerms(ctx, r, pr, o.validBefore)
	if err != nil {
		return nil, false, err
	}
	a := terms.Authorization
	if o.keyFile != "" {
		key, err := chainrail.LoadKey(o.keyFile)
		if err != nil {
			return nil, false, usageError("--key-file: %v", err)
		}
		if got := crypto.PubkeyToAddress(key.PublicKey); got != terms.Wallet {
			return nil, false, usageError("--key-file holds %s's key, not the payment's settlement wallet %s", got.Hex(), terms.Wallet.Hex())
		}
		if a.Signature, err = chain.SignTypedData(key, terms.TypedData); err != nil {
			return nil, false, err
		}
		return &chainrail.Transfer{Authorization: a}, false, nil
	}
	if err := writeJSONTo(f.IO.Out, chain.WalletTypedData(terms.TypedData)); err != nil {
		return nil, false, err
	}
	fmt.Fprintf(f.IO.Err, "\nSign the typed data above with the settlement wallet %s (eth_signTypedData_v4), then run:\n\n"+
		"    tollgate admin refund %s --amount %s --signature 0x… --valid-before %s\n\n"+
		"(the chain settings come from the config file and TOLLGATE_* as serve's do)\n",
		terms.Wallet.Hex(), pr.Payment.ID, pr.Amount, a.ValidBefore)
	return nil, true, nil
}

// merchantNow is the merchant's time for s: the wall clock, plus the test
// clock's offset in test mode (every test-mode timestamp follows the clock).
func merchantNow(ctx context.Context, d *database, s tenant.Scope) time.Time {
	ahead, _ := testclock.Ahead(ctx, d.DB, s.MerchantID)
	if s.Mode != tenant.Test {
		ahead = 0
	}
	return time.Now().Add(ahead)
}
