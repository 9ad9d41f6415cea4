package cmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/chainrail"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wallet"
)

// newAdminWalletCmd is `admin wallet`: the merchant's settlement wallet,
// which only the wallet's own signature can change (never the API).
func newAdminWalletCmd(f *Factory, withDBFlags func(*cobra.Command) *cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "wallet",
		Short: "Show and set a merchant's settlement wallet (changing it needs the wallet's signature)",
		Long: `A merchant's payments settle straight to its wallet on file, one per mode.
To set it: print a challenge for the new address, sign its message with that
wallet (personal_sign, EIP-191; e.g. in the wallet's "sign message" screen or
with cast wallet sign), and pass the signature to set within 10 minutes.
The challenge is printed without a trailing newline: after
"tollgate admin wallet challenge … > message.txt" the file holds exactly the
bytes to sign, and only a signature over exactly those bytes is accepted.
In test mode a merchant without a wallet settles to a generated test wallet.`,
	}
	cmd.AddCommand(withDBFlags(newAdminWalletChallenge(f)), withDBFlags(newAdminWalletSet(f)), withDBFlags(newAdminWalletShow(f)))
	return cmd
}

// walletSetEntry is the audit entry of a wallet change.
func walletSetEntry(s tenant.Scope, w wallet.Wallet) audit.Entry {
	e := audit.Entry{MerchantID: s.MerchantID, Mode: s.Mode, Action: audit.WalletSet, Target: w.Address}
	if len(w.Previous) > 0 {
		e.Detail = "replaced " + w.Previous[0].Address
	}
	return e
}

// walletScope reads --merchant and --mode, which every wallet command takes.
func walletScope(cmd *cobra.Command) (tenant.Scope, error) {
	merchant, _ := cmd.Flags().GetString("merchant")
	mode, _ := cmd.Flags().GetString("mode")
	if merchant == "" {
		return tenant.Scope{}, usageError("--merchant is required")
	}
	if !tenant.Mode(mode).Valid() {
		return tenant.Scope{}, usageError("--mode must be test or live")
	}
	return tenant.Scope{MerchantID: merchant, Mode: tenant.Mode(mode)}, nil
}

func walletScopeFlags(cmd *cobra.Command) {
	cmd.Flags().String("merchant", "", "merchant id")
	cmd.Flags().String("mode", "", "test or live")
}

func newAdminWalletChallenge(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "challenge --merchant ID --mode test|live --address 0x…",
		Short: "Print the message the new wallet must sign (single-use, valid 10 minutes)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := walletScope(cmd)
			if err != nil {
				return err
			}
			address, _ := cmd.Flags().GetString("address")
			if address == "" {
				return usageError("--address is required")
			}
			return f.withDB(cmd.Context(), func(d *database) error {
				c, err := audited(cmd.Context(), d, func(tx *store.Tx) (wallet.Challenge, error) {
					return wallet.NewChallenge(cmd.Context(), tx, s, address, time.Now())
				}, func(c wallet.Challenge) audit.Entry {
					return audit.Entry{MerchantID: s.MerchantID, Mode: s.Mode, Action: audit.WalletChallenge, Target: c.Address}
				})
				if err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, c.Wire())
				}
				// The message alone on stdout, without a trailing newline,
				// so a file it is saved to holds exactly the bytes to sign;
				// the instructions go to stderr.
				fmt.Fprint(f.IO.Out, c.Message)
				fmt.Fprintf(f.IO.Err, "\n\nSign the message above (exactly these %d bytes, no trailing newline) with %s (personal_sign) before %s, then run:\n\n"+
					"    tollgate admin wallet set --merchant %s --mode %s --address %s --signature 0x…\n",
					len(c.Message), c.Address, fmtTime(c.ExpiresAt)+" UTC", s.MerchantID, s.Mode, c.Address)
				return nil
			})
		},
	}
	walletScopeFlags(cmd)
	cmd.Flags().String("address", "", "the new settlement wallet (0x…, EIP-55 or all lowercase)")
	return cmd
}

func newAdminWalletSet(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "set --merchant ID --mode test|live --address 0x… --signature 0x…",
		Short: "Set the settlement wallet with its signature over the newest challenge",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := walletScope(cmd)
			if err != nil {
				return err
			}
			address, _ := cmd.Flags().GetString("address")
			signature, _ := cmd.Flags().GetString("signature")
			if address == "" || signature == "" {
				return usageError("--address and --signature are required")
			}
			return f.withDB(cmd.Context(), func(d *database) error {
				var v wallet.Verifier = wallet.ECDSA{}
				if url := f.v.GetString("chain_rpc_url"); url != "" {
					// A smart-contract wallet signs by its code: ask it
					// (ERC-1271) on the chain live mode settles on.
					client, err := chainrail.Dial(cmd.Context(), url)
					if err != nil {
						return err
					}
					defer client.Close()
					v = chainrail.Verifier{B: client}
				}
				w, err := wallet.SetWith(cmd.Context(), d.DB, v, s, address, signature, time.Now())
				if err != nil {
					return err
				}
				if err := auditedAfter(cmd.Context(), d, walletSetEntry(s, w)); err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, w.Wire())
				}
				fmt.Fprintf(f.IO.Out, "Settlement wallet of %s (%s mode) is now %s\n", s.MerchantID, s.Mode, w.Address)
				if len(w.Previous) > 0 {
					fmt.Fprintf(f.IO.Out, "It replaced %s\n", w.Previous[0].Address)
				}
				return nil
			})
		},
	}
	walletScopeFlags(cmd)
	cmd.Flags().String("address", "", "the new settlement wallet (0x…)")
	cmd.Flags().String("signature", "", "the wallet's signature of the challenge message (0x…: 65 bytes, or a contract wallet's)")
	cmd.Flags().String("chain-rpc-url", "", "verify on this chain, so smart-contract wallets (ERC-1271) can sign too")
	return cmd
}

func newAdminWalletShow(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show --merchant ID --mode test|live",
		Short: "Show the settlement wallet and the ones it replaced",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := walletScope(cmd)
			if err != nil {
				return err
			}
			return f.withDB(cmd.Context(), func(d *database) error {
				w, onFile, err := wallet.Get(cmd.Context(), d.DB, s)
				if err != nil {
					return err
				}
				if !onFile && !w.Generated {
					return wallet.NoWallet()
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, w.Wire())
				}
				tw := newTable(f.IO.Out)
				fmt.Fprintf(tw, "Merchant:\t%s\nMode:\t%s\nAddress:\t%s\n", s.MerchantID, s.Mode, w.Address)
				if w.Generated {
					fmt.Fprintln(tw, "Source:\tgenerated test wallet (none on file; no one holds its key)")
				} else {
					fmt.Fprintf(tw, "Verified:\t%s\n", fmtTime(w.VerifiedAt))
				}
				for i, p := range w.Previous {
					label := ""
					if i == 0 {
						label = "Previous:"
					}
					fmt.Fprintf(tw, "%s\t%s  verified %s, replaced %s\n", label, p.Address, fmtTime(p.VerifiedAt), fmtTime(*p.ReplacedAt))
				}
				return tw.Flush()
			})
		},
	}
	walletScopeFlags(cmd)
	return cmd
}
