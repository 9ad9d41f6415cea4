package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/internal/webhooks"
)

// newAdminWebhookShowCmd is `admin webhook show ID`: one endpoint, whether
// it is enabled and, when not, why and since when (an operator, or a 410
// Gone answer), with its pending deliveries.
func newAdminWebhookShowCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use: "show ENDPOINT_ID", Short: "Show an endpoint: enabled or why disabled, and its backlog", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withDB(cmd.Context(), func(d *database) error {
				e, err := webhooks.Get(cmd.Context(), d.DB, args[0])
				if err != nil {
					return err
				}
				backlogs, err := webhooks.Backlogs(cmd.Context(), d.DB, e.MerchantID)
				if err != nil {
					return err
				}
				b := backlogs[e.ID]
				if f.JSON() {
					return writeJSONTo(f.IO.Out, map[string]any{
						"id": e.ID, "merchant_id": e.MerchantID, "mode": e.Mode, "url": e.URL, "event_types": e.EventTypes,
						"allow_insecure": e.AllowInsecure, "enabled": e.Enabled, "disabled_reason": e.DisabledReason,
						"disabled_at": e.DisabledAt, "created_at": e.CreatedAt, "pending": b.Pending,
						"last_error": b.LastError, "last_status": b.LastStatus,
					})
				}
				types := "all"
				if len(e.EventTypes) > 0 {
					types = strings.Join(e.EventTypes, ",")
				}
				state := "enabled"
				if !e.Enabled {
					state = disabledNote(e)
				}
				lines := [][2]string{
					{"ID", e.ID}, {"Merchant", e.MerchantID}, {"Mode", string(e.Mode)}, {"URL", clean(e.URL)}, {"Events", types},
					{"State", state}, {"Created", e.CreatedAt.UTC().Format(time.RFC3339)}, {"Pending", fmt.Sprint(b.Pending)},
				}
				switch {
				case b.LastError != nil:
					lines = append(lines, [2]string{"Last attempt", clean(*b.LastError)})
				case b.LastStatus != nil:
					lines = append(lines, [2]string{"Last attempt", fmt.Sprintf("HTTP %d", *b.LastStatus)})
				}
				for _, l := range lines {
					if _, err := fmt.Fprintf(f.IO.Out, "%-13s %s\n", l[0]+":", l[1]); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
}
