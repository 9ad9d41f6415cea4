package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/internal/audit"
	pagination "github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
)

// newAdminAuditCmd is `admin audit`: the audit log of every change made
// from the dashboard or by admin commands.
func newAdminAuditCmd(f *Factory, withDBFlags func(*cobra.Command) *cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "Read the audit log of dashboard and admin changes"}
	var merchant string
	var limit int
	list := &cobra.Command{
		Use:   "list [--merchant ID] [--limit N]",
		Short: "List audit log entries, newest first: who (a dashboard user or admin), from where, what",
		Long: `List the audit log: every change made from the merchant dashboard or by an
admin command, and every sign-in and failed sign-in, with the user (usr_… or
admin), the IP it came from and the time. The log is append-only: the database
refuses to change or delete its entries. Without --merchant it lists every
merchant's entries and those of no merchant (failed sign-ins for unknown
emails, OAuth clients).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > pagination.MaxLimit {
				return usageError("--limit must be from 1 to %d", pagination.MaxLimit)
			}
			return f.withDB(cmd.Context(), func(d *database) error {
				r, err := audit.List(cmd.Context(), d.DB, audit.Filter{MerchantID: merchant, All: merchant == "", Page: pagination.Params{Limit: limit}})
				if err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, r.Items)
				}
				if len(r.Items) == 0 {
					fmt.Fprintln(f.IO.Err, "No audit log entries.")
					return nil
				}
				t := newTablePrinter(f.IO, "TIME", "MERCHANT", "MODE", "USER", "IP", "ACTION", "TARGET", "DETAIL").
					elide(1, 3, 6).cut(7).drop(7, 2, 4, 1)
				for _, e := range r.Items {
					t.row(fmtTime(e.CreatedAt), orDash(e.MerchantID), orDash(deref(e.Mode)), e.Actor, orDash(e.IP), e.Action, orDash(e.Target), orDash(e.Detail))
				}
				return t.print()
			})
		},
	}
	list.Flags().StringVar(&merchant, "merchant", "", "only this merchant's entries")
	list.Flags().IntVar(&limit, "limit", 50, "at most this many, from 1 to 100")
	cmd.AddCommand(withDBFlags(list))
	return cmd
}

// audited runs change and writes its audit-log entry (user admin) in one
// transaction: entry names what changed, from change's result.
func audited[T any](ctx context.Context, d *database, change func(tx *store.Tx) (T, error), entry func(T) audit.Entry) (T, error) {
	return audit.InTx(ctx, d.DB, audit.AdminActor(), change, entry)
}

// auditedRow runs change to row rowID of table and writes its audit-log
// entry (user admin, with the row's merchant and mode) in one transaction.
func auditedRow(ctx context.Context, d *database, table, rowID, action string, change func(tx *store.Tx) error) error {
	return audit.ChangeRow(ctx, d.DB, audit.AdminActor(), nil, table, rowID, action, change)
}

// auditedAfter writes the entry of a change that ran its own transaction
// (or reached outside the database, as a refund does) once it succeeded.
func auditedAfter(ctx context.Context, d *database, e audit.Entry) error {
	return audit.Record(ctx, d.DB, audit.AdminActor(), e)
}
