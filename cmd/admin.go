package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
)

// newAdminCmd is the merchant dashboard's operations, run by the operator
// against the database (the only client-side commands that open it).
func newAdminCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "admin",
		Short: "Operator commands run against the database: merchants, API keys, webhook endpoints",
	}
	dbFlags := func(c *cobra.Command) *cobra.Command { dbFlags(c); return c }
	merchant := &cobra.Command{Use: "merchant", Short: "Create, list and rename merchants"}
	merchant.AddCommand(dbFlags(newAdminMerchantCreate(f)), dbFlags(newAdminMerchantList(f)), dbFlags(newAdminMerchantRename(f)))
	key := &cobra.Command{Use: "key", Short: "Create, list and revoke API keys"}
	key.AddCommand(dbFlags(newAdminKeyCreate(f)), dbFlags(newAdminKeyList(f)), dbFlags(newAdminKeyRevoke(f)))
	cmd.AddCommand(merchant, key, newAdminWebhookCmd(f, dbFlags), newAdminDeliveriesCmd(f, dbFlags))
	cmd.AddCommand(newAdminEntitlementCmd(f, dbFlags))
	cmd.AddCommand(newAdminOAuthCmd(f, dbFlags))
	cmd.AddCommand(newAdminWalletCmd(f, dbFlags))
	cmd.AddCommand(dbFlags(newAdminRefundCmd(f)))
	cmd.AddCommand(newAdminChainCmd(f, dbFlags))
	cmd.AddCommand(newAdminUserCmd(f, dbFlags), newAdminAuditCmd(f, dbFlags))
	cmd.AddCommand(newAdminArchiveCmd(f, dbFlags))
	return cmd
}

// withDB runs fn with the database open (starting the embedded cluster for
// the command's duration if it is not running). It logs only warnings and
// errors: an admin command's stderr stays quiet unless something is wrong.
func (f *Factory) withDB(ctx context.Context, fn func(d *database) error) error {
	d, err := f.openDatabase(ctx, f.newLogger(slog.LevelWarn), true)
	if err != nil {
		return err
	}
	defer d.Close(ctx)
	return fn(d)
}

func writeJSONTo(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

func fmtTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }

func newAdminKeyCreate(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use: "create --merchant ID --mode test|live", Short: "Create an API key (printed once)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			merchant, _ := cmd.Flags().GetString("merchant")
			mode, _ := cmd.Flags().GetString("mode")
			if merchant == "" {
				return usageError("--merchant is required")
			}
			if !tenant.Mode(mode).Valid() {
				return usageError("--mode must be test or live")
			}
			return f.withDB(cmd.Context(), func(d *database) error {
				type created struct {
					key    auth.Key
					secret string
				}
				c, err := audited(cmd.Context(), d, func(tx *store.Tx) (created, error) {
					k, secret, err := auth.CreateKey(cmd.Context(), tx, merchant, tenant.Mode(mode))
					return created{k, secret}, err
				}, func(c created) audit.Entry {
					return audit.Entry{MerchantID: c.key.MerchantID, Mode: c.key.Mode, Action: audit.KeyCreate, Target: c.key.ID, Detail: c.key.Hint}
				})
				if err != nil {
					return err
				}
				k, secret := c.key, c.secret
				save, _ := cmd.Flags().GetBool("save")
				saved := ""
				if save {
					// Saved under its mode's name, so a config file holds a
					// key of each mode and the CLI picks the one a command
					// needs (--live for live mode).
					saved = f.configPath()
					if err := updateConfigFile(saved, map[string]any{mode + "_api_key": secret}); err != nil {
						return fmt.Errorf("the key was created but not saved to %s: %w; it is %s", saved, err, secret)
					}
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, map[string]any{"id": k.ID, "key": secret, "merchant_id": k.MerchantID, "mode": k.Mode, "created_at": k.CreatedAt})
				}
				fmt.Fprintf(f.IO.Out, "Created %s key %s for %s. The key is shown once:\n\n    %s\n", k.Mode, k.ID, k.MerchantID, secret)
				if saved != "" {
					fmt.Fprintf(f.IO.Out, "\nSaved as %s_api_key in %s.", mode, saved)
					if mode == string(tenant.Live) {
						fmt.Fprint(f.IO.Out, " Client commands use it with --live (tollgate --live invoice create …).")
					}
					fmt.Fprintln(f.IO.Out)
				}
				return nil
			})
		},
	}
	cmd.Flags().String("merchant", "", "merchant id")
	cmd.Flags().String("mode", "", "test or live")
	cmd.Flags().Bool("save", false, "also save the key in the config file as test_api_key or live_api_key")
	return cmd
}

func newAdminKeyList(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use: "list [--merchant ID]", Short: "List API keys (hints only; keys are not stored)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			merchant, _ := cmd.Flags().GetString("merchant")
			return f.withDB(cmd.Context(), func(d *database) error {
				ks, err := auth.ListKeys(cmd.Context(), d.DB, merchant)
				if err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, ks)
				}
				t := newTablePrinter(f.IO, "ID", "MERCHANT", "MODE", "KEY", "CREATED", "REVOKED").elide(1).drop(4, 1)
				for _, k := range ks {
					revoked := "-"
					if k.RevokedAt != nil {
						revoked = whenShort(k.RevokedAt)
					}
					t.row(k.ID, k.MerchantID, string(k.Mode), k.Hint, whenShort(&k.CreatedAt), revoked)
				}
				return t.print()
			})
		},
	}
	cmd.Flags().String("merchant", "", "only this merchant's keys")
	return cmd
}

func newAdminKeyRevoke(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use: "revoke KEY_ID", Short: "Revoke an API key; it fails on the very next request", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withDB(cmd.Context(), func(d *database) error {
				if err := auditedRow(cmd.Context(), d, "api_keys", args[0], audit.KeyRevoke, func(tx *store.Tx) error {
					return auth.RevokeKey(cmd.Context(), tx, args[0])
				}); err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, map[string]any{"id": args[0], "revoked": true})
				}
				fmt.Fprintf(f.IO.Out, "Revoked %s\n", args[0])
				return nil
			})
		},
	}
}

// exactArgs is cobra.ExactArgs with a usage-error exit code.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError("%s takes %d argument(s), got %d", cmd.CommandPath(), n, len(args))
		}
		return nil
	}
}
