package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/entitlements"
	"github.com/tollgatehq/tollgate/internal/store"
)

// newAdminEntitlementCmd is the operator's entitlement commands: revoking a
// grant makes checks answer revoked until the merchant grants again.
func newAdminEntitlementCmd(f *Factory, withDBFlags func(*cobra.Command) *cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: "entitlement", Short: "Revoke entitlement grants"}
	revoke := &cobra.Command{
		Use: "revoke GRANT_ID", Short: "Revoke an entitlement grant (ent_…); checks answer revoked", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withDB(cmd.Context(), func(d *database) error {
				s, err := entitlements.GrantScope(cmd.Context(), d.DB, args[0])
				if err != nil {
					return err
				}
				var g entitlements.GrantRecord
				err = auditedRow(cmd.Context(), d, "entitlement_grants", args[0], audit.EntitlementGrantRevoke, func(tx *store.Tx) error {
					var err error
					g, err = entitlements.RevokeTx(cmd.Context(), tx, args[0], merchantNow(cmd.Context(), d, s))
					return err
				})
				if err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, map[string]any{"id": g.ID, "feature": g.FeatureKey, "customer_id": g.CustomerID,
						"merchant_id": g.MerchantID, "mode": g.Mode, "revoked_at": g.RevokedAt})
				}
				fmt.Fprintf(f.IO.Out, "Revoked %s (%s for %s)\n", g.ID, g.FeatureKey, g.CustomerID)
				return nil
			})
		},
	}
	cmd.AddCommand(withDBFlags(revoke))
	return cmd
}
