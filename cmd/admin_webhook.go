package cmd

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/webhooks"
)

func newAdminWebhookCmd(f *Factory, withDBFlags func(*cobra.Command) *cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: "webhook", Short: "Register and manage webhook endpoints"}
	add := &cobra.Command{
		Use: "add --merchant ID --mode test|live --url URL", Short: "Register an endpoint (its whsec_ secret is printed once)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fl := cmd.Flags()
			in := webhooks.Input{}
			in.MerchantID, _ = fl.GetString("merchant")
			mode, _ := fl.GetString("mode")
			in.Mode = tenant.Mode(mode)
			in.URL, _ = fl.GetString("url")
			in.AllowInsecure = f.v.GetBool("allow_insecure_webhooks")
			in.EventTypes, _ = fl.GetStringSlice("events")
			if in.MerchantID == "" || in.URL == "" {
				return usageError("--merchant and --url are required")
			}
			if !in.Mode.Valid() {
				return usageError("--mode must be test or live")
			}
			return f.withDB(cmd.Context(), func(d *database) error {
				e, err := audited(cmd.Context(), d, func(tx *store.Tx) (webhooks.Endpoint, error) {
					return webhooks.Add(cmd.Context(), tx, in)
				}, func(e webhooks.Endpoint) audit.Entry {
					return audit.Entry{MerchantID: e.MerchantID, Mode: e.Mode, Action: audit.EndpointCreate, Target: e.ID, Detail: e.URL}
				})
				if err != nil {
					return err
				}
				if in.AllowInsecure && webhooks.ValidateURL(in.URL, false) != nil {
					// The flag admits the URL here; deliveries are the
					// daemon's, and it has a flag of its own.
					fmt.Fprintf(f.IO.Err, "tollgate: note: only a daemon started with --allow-insecure-webhooks (or TOLLGATE_ALLOW_INSECURE_WEBHOOKS=true) delivers to %s;\n"+
						"tollgate: note: any other refuses each attempt and the deliveries stay pending (`tollgate admin webhook list` shows why)\n", clean(in.URL))
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, map[string]any{"id": e.ID, "secret": e.Secret, "url": e.URL, "merchant_id": e.MerchantID, "mode": e.Mode, "event_types": e.EventTypes})
				}
				fmt.Fprintf(f.IO.Out, "Registered %s -> %s. Its signing secret is shown once:\n\n    %s\n", e.ID, e.URL, e.Secret)
				return nil
			})
		},
	}
	add.Flags().String("merchant", "", "merchant id")
	add.Flags().String("mode", "", "test or live")
	add.Flags().String("url", "", "endpoint URL (https)")
	add.Flags().StringSlice("events", nil, "event types to deliver (default all)")
	add.Flags().Bool("allow-insecure-webhooks", false, "allow an http:// URL (development)")

	list := &cobra.Command{
		Use: "list [--merchant ID]", Short: "List webhook endpoints", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			merchant, _ := cmd.Flags().GetString("merchant")
			return f.withDB(cmd.Context(), func(d *database) error {
				es, err := webhooks.List(cmd.Context(), d.DB, merchant)
				if err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, es)
				}
				backlogs, err := webhooks.Backlogs(cmd.Context(), d.DB, merchant)
				if err != nil {
					return err
				}
				return printEndpoints(f.IO, es, backlogs)
			})
		},
	}
	list.Flags().String("merchant", "", "only this merchant's endpoints")

	change := func(use, short, done, action string, fn func(context.Context, store.Querier, string) error) *cobra.Command {
		return &cobra.Command{
			Use: use + " ENDPOINT_ID", Short: short, Args: exactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return f.withDB(cmd.Context(), func(d *database) error {
					if err := auditedRow(cmd.Context(), d, "webhook_endpoints", args[0], action, func(tx *store.Tx) error {
						return fn(cmd.Context(), tx, args[0])
					}); err != nil {
						return err
					}
					if f.JSON() {
						return writeJSONTo(f.IO.Out, map[string]any{"id": args[0], "status": done})
					}
					fmt.Fprintf(f.IO.Out, "%s %s\n", strings.ToUpper(done[:1])+done[1:], args[0])
					return nil
				})
			},
		}
	}
	remove := change("remove", "Remove an endpoint", "removed", audit.EndpointRemove, webhooks.Remove)
	disable := change("disable", "Stop deliveries to an endpoint", "disabled", audit.EndpointDisable, func(ctx context.Context, q store.Querier, id string) error {
		return webhooks.SetEnabled(ctx, q, id, false)
	})
	enable := change("enable", "Resume deliveries to an endpoint", "enabled", audit.EndpointEnable, func(ctx context.Context, q store.Querier, id string) error {
		return webhooks.SetEnabled(ctx, q, id, true)
	})
	for _, c := range []*cobra.Command{add, list, newAdminWebhookShowCmd(f), remove, disable, enable, newAdminWebhookRotateCmd(f)} {
		cmd.AddCommand(withDBFlags(c))
	}
	return cmd
}

// printEndpoints lists endpoints with their pending deliveries and, below
// the table, why each backlog waits: the latest failed attempt's error or
// status, such as a daemon refusing an http:// URL.
func printEndpoints(streams *IO, es []webhooks.Endpoint, backlogs map[string]webhooks.Backlog) error {
	t := newTablePrinter(streams, "ID", "MERCHANT", "MODE", "URL", "EVENTS", "ENABLED", "PENDING").
		alignRight(6).elide(1).cut(3, 4).atLeast(3, 30).drop(1, 4, 5)
	var why []string
	for _, e := range es {
		types := "all"
		if len(e.EventTypes) > 0 {
			types = strings.Join(e.EventTypes, ",")
		}
		b := backlogs[e.ID]
		t.row(e.ID, e.MerchantID, string(e.Mode), e.URL, types, strconv.FormatBool(e.Enabled), strconv.Itoa(b.Pending))
		if d := disabledNote(e); d != "" {
			why = append(why, e.ID+": "+d)
		}
		switch {
		case b.LastError != nil:
			why = append(why, fmt.Sprintf("%s: %d pending; last attempt: %s", e.ID, b.Pending, clean(*b.LastError)))
		case b.LastStatus != nil:
			why = append(why, fmt.Sprintf("%s: %d pending; last attempt: HTTP %d", e.ID, b.Pending, *b.LastStatus))
		}
	}
	if err := t.print(); err != nil {
		return err
	}
	for _, w := range why {
		if _, err := fmt.Fprintln(streams.Out, w); err != nil {
			return err
		}
	}
	return nil
}

// disabledNote says why and since when an endpoint is disabled, "" when it
// is enabled.
func disabledNote(e webhooks.Endpoint) string {
	if e.Enabled {
		return ""
	}
	note := "disabled"
	if e.DisabledReason != nil {
		note += ": " + clean(*e.DisabledReason)
	}
	if e.DisabledAt != nil {
		note += " (" + e.DisabledAt.UTC().Format(time.RFC3339) + ")"
	}
	return note
}
