package cmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/store"
)

func newAdminMerchantCreate(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use: "create --name NAME", Short: "Create a merchant", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			name, _ := cmd.Flags().GetString("name")
			if strings.TrimSpace(name) == "" {
				return usageError("--name is required")
			}
			return f.withDB(cmd.Context(), func(d *database) error {
				m, err := audited(cmd.Context(), d, func(tx *store.Tx) (auth.Merchant, error) {
					return auth.CreateMerchant(cmd.Context(), tx, name)
				}, func(m auth.Merchant) audit.Entry {
					return audit.Entry{MerchantID: m.ID, Action: audit.MerchantCreate, Target: m.ID, Detail: m.Name}
				})
				if err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, m)
				}
				fmt.Fprintf(f.IO.Out, "Created merchant %s (%s)\n", m.ID, m.Name)
				return nil
			})
		},
	}
	cmd.Flags().String("name", "", "merchant name")
	return cmd
}

func newAdminMerchantList(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "List merchants", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.withDB(cmd.Context(), func(d *database) error {
				ms, err := auth.ListMerchants(cmd.Context(), d.DB)
				if err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, ms)
				}
				t := newTablePrinter(f.IO, "ID", "NAME", "CREATED").cut(1).drop(2)
				for _, m := range ms {
					t.row(m.ID, m.Name, whenShort(&m.CreatedAt))
				}
				return t.print()
			})
		},
	}
}

func newAdminMerchantRename(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rename MERCHANT_ID --name NAME",
		Short: "Rename a merchant: the name its checkout pages show",
		Long: `Set a merchant's display name, the one its customers see on checkout pages
("Invoice from NAME"). Running daemons show it from their next page.`,
		Example: `  tollgate admin merchant rename mch_… --name "Acme Widgets"`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, _ := cmd.Flags().GetString("name")
			if strings.TrimSpace(name) == "" {
				return usageError("--name is required")
			}
			return f.withDB(cmd.Context(), func(d *database) error {
				m, err := audited(cmd.Context(), d, func(tx *store.Tx) (auth.Merchant, error) {
					return auth.RenameMerchant(cmd.Context(), tx, args[0], name)
				}, func(m auth.Merchant) audit.Entry {
					return audit.Entry{MerchantID: m.ID, Action: audit.MerchantRename, Target: m.ID, Detail: m.Name}
				})
				if err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, m)
				}
				fmt.Fprintf(f.IO.Out, "Renamed merchant %s to %s\n", m.ID, clean(m.Name))
				return nil
			})
		},
	}
	cmd.Flags().String("name", "", "display name shown on checkout pages, 1 to 100 characters")
	return cmd
}
