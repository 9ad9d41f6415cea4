package cmd

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/webhooks"
)

// newAdminDeliveriesCmd is `admin deliveries`: inspect webhook deliveries
// and their attempts, and replay them.
func newAdminDeliveriesCmd(f *Factory, withDBFlags func(*cobra.Command) *cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: "deliveries", Short: "Inspect and replay webhook deliveries"}
	cmd.AddCommand(
		withDBFlags(newAdminDeliveriesList(f)),
		withDBFlags(newAdminDeliveriesShow(f)),
		withDBFlags(newAdminDeliveriesRetry(f)),
	)
	return cmd
}

func newAdminDeliveriesList(f *Factory) *cobra.Command {
	var fl webhooks.Filter
	cmd := &cobra.Command{
		Use:   "list [--event evt_…] [--endpoint we_…] [--status failed|pending|succeeded]",
		Short: "List webhook deliveries, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if fl.Status != "" && fl.Status != webhooks.StatusPending && fl.Status != webhooks.StatusSucceeded && fl.Status != webhooks.StatusFailed {
				return usageError("--status must be pending, succeeded or failed")
			}
			if fl.Limit < 0 {
				return usageError("--limit must be positive")
			}
			return f.withDB(cmd.Context(), func(d *database) error {
				ds, err := webhooks.ListDeliveries(cmd.Context(), d.DB, fl)
				if err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, ds)
				}
				if len(ds) == 0 {
					fmt.Fprintln(f.IO.Err, "No deliveries.")
					return nil
				}
				t := newTablePrinter(f.IO, "ID", "EVENT", "ENDPOINT", "STATUS", "ATTEMPTS", "LAST", "NEXT ATTEMPT").
					alignRight(4).elide(1, 2).cut(5).drop(2, 6, 1)
				for _, x := range ds {
					next := "-"
					if x.Status == webhooks.StatusPending {
						next = whenShort(&x.NextAttemptAt)
					}
					t.row(x.ID, x.EventID, x.EndpointID, x.Status, strconv.Itoa(x.Attempts), lastOutcome(x), next)
				}
				return t.print()
			})
		},
	}
	cmd.Flags().StringVar(&fl.EventID, "event", "", "only deliveries of this event")
	cmd.Flags().StringVar(&fl.EndpointID, "endpoint", "", "only deliveries to this endpoint")
	cmd.Flags().StringVar(&fl.Status, "status", "", "only pending, succeeded or failed deliveries")
	cmd.Flags().StringVar(&fl.MerchantID, "merchant", "", "only this merchant's deliveries")
	cmd.Flags().IntVar(&fl.Limit, "limit", 50, "at most this many")
	return cmd
}

// lastOutcome summarises a delivery's latest attempt: "200", "500", or the
// error.
func lastOutcome(x webhooks.Delivery) string {
	switch {
	case x.Attempts == 0 && x.LastError == nil:
		return "-"
	case x.LastStatus != nil:
		return strconv.Itoa(*x.LastStatus)
	case x.LastError != nil:
		return truncateText(*x.LastError, 60)
	}
	return "-"
}

func truncateText(s string, n int) string {
	s = clean(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func newAdminDeliveriesShow(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "show DELIVERY_ID",
		Short: "Show a delivery and every attempt: time, status, latency, error, response",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withDB(cmd.Context(), func(d *database) error {
				x, as, err := webhooks.GetDelivery(cmd.Context(), d.DB, args[0])
				if err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, map[string]any{"delivery": x, "attempts": as})
				}
				fmt.Fprintf(f.IO.Out, "Delivery %s of %s to %s: %s after %d attempt(s)\n", x.ID, x.EventID, x.EndpointID, x.Status, x.Attempts)
				if x.Status == webhooks.StatusPending {
					fmt.Fprintf(f.IO.Out, "Next attempt: %s\n", fmtTime(x.NextAttemptAt))
				}
				for _, a := range as {
					status := "-"
					if a.Status != nil {
						status = strconv.Itoa(*a.Status)
					}
					fmt.Fprintf(f.IO.Out, "\n#%d  %s  status %s  %v\n", a.Attempt, fmtTime(a.StartedAt), status, a.Latency.Round(time.Microsecond))
					if a.Error != nil {
						fmt.Fprintf(f.IO.Out, "  error: %s\n", clean(*a.Error))
					}
					if a.ResponseBody != "" {
						fmt.Fprintf(f.IO.Out, "  response: %s\n", truncateText(a.ResponseBody, 200))
					}
				}
				return nil
			})
		},
	}
}

func newAdminDeliveriesRetry(f *Factory) *cobra.Command {
	var in webhooks.RetryInput
	cmd := &cobra.Command{
		Use:   "retry (DELIVERY_ID | --event evt_… | --failed-since 2h)",
		Short: "Send deliveries again now, with a fresh cycle of retries",
		Long: `Replay webhook deliveries: one by id, every delivery of an event, or every
delivery that failed (ran out of retries) within a period. They are sent at once
by the running daemon, with the usual retries if they fail again.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				in.DeliveryID = args[0]
			}
			n := 0
			for _, set := range []bool{in.DeliveryID != "", in.EventID != "", in.FailedSince != 0} {
				if set {
					n++
				}
			}
			if n != 1 {
				return usageError("give exactly one of DELIVERY_ID, --event or --failed-since")
			}
			if in.FailedSince < 0 {
				return usageError("--failed-since must be positive")
			}
			return f.withDB(cmd.Context(), func(d *database) error {
				var ids []string
				retry := func(tx *store.Tx) error {
					var err error
					ids, err = webhooks.Retry(cmd.Context(), tx, in)
					return err
				}
				var err error
				switch {
				case in.DeliveryID != "":
					err = auditedRow(cmd.Context(), d, "webhook_deliveries", in.DeliveryID, audit.DeliveryRetry, retry)
				case in.EventID != "":
					err = auditedRow(cmd.Context(), d, "events", in.EventID, audit.DeliveryRetry, retry)
				default:
					// Failed deliveries of every merchant: an entry of none.
					_, err = audited(cmd.Context(), d, func(tx *store.Tx) (struct{}, error) { return struct{}{}, retry(tx) },
						func(struct{}) audit.Entry {
							return audit.Entry{Action: audit.DeliveryRetry, Detail: "failed since " + in.FailedSince.String()}
						})
				}
				if err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, map[string]any{"retried": ids})
				}
				if len(ids) == 0 {
					fmt.Fprintln(f.IO.Out, "No deliveries to retry.")
					return nil
				}
				fmt.Fprintf(f.IO.Out, "Retrying %d deliver%s: %s\n", len(ids), map[bool]string{true: "y", false: "ies"}[len(ids) == 1], strings.Join(ids, ", "))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&in.EventID, "event", "", "every delivery of this event")
	cmd.Flags().DurationVar(&in.FailedSince, "failed-since", 0, "every delivery that failed within this period, e.g. 2h")
	return cmd
}
