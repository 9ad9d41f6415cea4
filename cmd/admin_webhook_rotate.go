package cmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/webhooks"
)

// newAdminWebhookRotateCmd is `admin webhook rotate-secret`.
func newAdminWebhookRotateCmd(f *Factory) *cobra.Command {
	var overlap time.Duration
	cmd := &cobra.Command{
		Use:   "rotate-secret ENDPOINT_ID [--overlap 24h]",
		Short: "Give an endpoint a new whsec_ secret (printed once); the old one keeps signing for --overlap",
		Long: `Replace an endpoint's signing secret. The new secret is printed once. For the
overlap (default 24h) deliveries carry two v1 signatures, one with each secret,
so the receiver can switch to the new secret without rejecting anything;
--overlap 0 retires the old secret at once.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if overlap < 0 {
				return usageError("--overlap must not be negative")
			}
			return f.withDB(cmd.Context(), func(d *database) error {
				var e webhooks.Endpoint
				err := auditedRow(cmd.Context(), d, "webhook_endpoints", args[0], audit.EndpointRotate, func(tx *store.Tx) error {
					var err error
					e, err = webhooks.RotateSecret(cmd.Context(), tx, args[0], overlap)
					return err
				})
				if err != nil {
					return err
				}
				until := time.Now().Add(overlap).UTC()
				if f.JSON() {
					return writeJSONTo(f.IO.Out, map[string]any{"id": e.ID, "secret": e.Secret, "previous_secret_expires_at": until})
				}
				fmt.Fprintf(f.IO.Out, "Rotated the secret of %s. The new secret is shown once:\n\n    %s\n\n", e.ID, e.Secret)
				if overlap > 0 {
					fmt.Fprintf(f.IO.Out, "Deliveries are signed with both secrets until %s.\n", fmtTime(until))
				} else {
					fmt.Fprintln(f.IO.Out, "The previous secret no longer signs deliveries.")
				}
				return nil
			})
		},
	}
	cmd.Flags().DurationVar(&overlap, "overlap", webhooks.DefaultOverlap, "how long the previous secret keeps signing deliveries")
	return cmd
}
