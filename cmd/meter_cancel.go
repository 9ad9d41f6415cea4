package cmd

import (
	"context"

	"github.com/spf13/cobra"
)

// newMeterCancelCmd builds `meter cancel`.
func newMeterCancelCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "cancel METER_EVENT_ID",
		Short: "Cancel a meter event sent by mistake: it then counts nowhere",
		Long: `Cancel a meter event sent by mistake. The event is kept, marked cancelled, and
counts nowhere from then on: usage summaries, entitlement usage, upcoming
charges, rating and alerts. Its idempotency key stays used. An event in a
period already rated and billed cannot be cancelled (usage_already_billed).`,
		Example:           `  tollgate meter cancel me_…`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			return meterCancelRun(cmd.Context(), f, args[0])
		},
	}
}

func meterCancelRun(ctx context.Context, f *Factory, id string) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	e, err := c.CancelMeterEvent(ctx, id)
	if err != nil {
		return explain(err)
	}
	if f.JSON() {
		return printRaw(f.IO.Out, e.Raw)
	}
	return printFields(f.IO, "Cancelled meter event "+e.ID, [][2]string{
		{"Meter", e.Meter},
		{"Customer", deref(e.CustomerID)},
		{"Value", e.Value},
		{"Timestamp", when(&e.EventTimestamp)},
		{"Cancelled", when(e.CancelledAt)},
	})
}
