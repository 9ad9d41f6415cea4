package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/internal/money"
)

func newEntitlementsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "entitlements",
		Short: "Grant features to customers and check access",
	}
	cmd.AddCommand(newEntitlementsGrantCmd(f, nil), newEntitlementsCheckCmd(f))
	return cmd
}

// entitlementsGrantOptions are the flags of `entitlements grant`, as typed.
type entitlementsGrantOptions struct {
	Feature     string
	Customer    string
	External    string
	Limit       string
	ActiveUntil string
}

func (o *entitlementsGrantOptions) params() (client.EntitlementGrantParams, error) {
	p := client.EntitlementGrantParams{FeatureKey: o.Feature, CustomerID: o.Customer, ExternalCustomerID: o.External}
	if o.Customer == "" && o.External == "" {
		return p, usageError("pass --customer-id or --external-customer-id")
	}
	if o.Limit != "" {
		l, err := money.Parse(o.Limit)
		if err != nil {
			if errors.Is(err, money.ErrOverflow) {
				return p, usageError("--limit %q is too large", o.Limit)
			}
			return p, usageError("--limit %q: want a non-negative integer", o.Limit)
		}
		p.LimitValue = l.String()
	}
	if o.ActiveUntil != "" {
		t, err := parseDate(o.ActiveUntil)
		if err != nil {
			return p, usageError("--active-until %q: want RFC 3339 (2026-12-01T17:00:00Z) or a date (2026-12-01)", o.ActiveUntil)
		}
		p.ActiveUntil = &t
	}
	return p, nil
}

// newEntitlementsGrantCmd builds `entitlements grant`; tests pass runF to
// check flag parsing without a server.
func newEntitlementsGrantCmd(f *Factory, runF func(context.Context, client.EntitlementGrantParams) error) *cobra.Command {
	o := &entitlementsGrantOptions{}
	cmd := &cobra.Command{
		Use:   "grant --feature KEY (--customer-id ID | --external-customer-id ID)",
		Short: "Grant a feature to a customer (replaces the previous limit and end)",
		Example: `  tollgate entitlements grant --feature sso --external-customer-id u_42
  tollgate entitlements grant --feature ai.tokens --customer-id cus_123 --limit 100000 --active-until 2026-12-01`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			p, err := o.params()
			if err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), p)
			}
			c, err := f.Client()
			if err != nil {
				return err
			}
			g, err := c.GrantEntitlement(cmd.Context(), p)
			if err != nil {
				return explain(err)
			}
			if f.JSON() {
				return printRaw(f.IO.Out, g.Raw)
			}
			return printFields(f.IO, "Granted "+g.Feature+" to "+g.CustomerID+" ("+g.ID+")", [][2]string{
				{"Limit", deref(g.LimitValue)},
				{"Starts", when(&g.StartsAt)},
				{"Active until", when(g.ActiveUntil)},
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Feature, "feature", "", "feature key")
	fl.StringVar(&o.Customer, "customer-id", "", "customer id (cus_…)")
	fl.StringVar(&o.External, "external-customer-id", "", "your customer id (created on first use)")
	fl.StringVar(&o.Limit, "limit", "", "usage limit of a metered feature (default unlimited)")
	fl.StringVar(&o.ActiveUntil, "active-until", "", "when the entitlement lapses: RFC 3339 or a date")
	_ = cmd.MarkFlagRequired("feature")
	cmd.MarkFlagsMutuallyExclusive("customer-id", "external-customer-id")
	noFileCompletion(cmd, "feature", "customer-id", "external-customer-id", "limit", "active-until")
	return cmd
}

func newEntitlementsCheckCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "check CUSTOMER_ID FEATURE_KEY",
		Short: "Check access: exits 0 when entitled, 3 when not",
		Example: `  tollgate entitlements check cus_123 sso
  if tollgate entitlements check cus_123 ai.tokens >/dev/null; then run_job; fi`,
		Args:              exactArgs(2),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client()
			if err != nil {
				return err
			}
			e, err := c.CheckEntitlement(cmd.Context(), args[0], args[1])
			if err != nil {
				return explain(err)
			}
			if f.JSON() {
				err = printRaw(f.IO.Out, e.Raw)
			} else {
				verdict := "Entitled"
				if !e.Entitled {
					verdict = "Not entitled"
				}
				err = printOutcome(f.IO, e.Entitled, fmt.Sprintf("%s: %s to %s", verdict, e.CustomerID, e.Feature), [][2]string{
					{"Reason", e.Reason},
					{"Limit", deref(e.Limit)},
					{"Used", deref(e.Used)},
					{"Remaining", deref(e.Remaining)},
				})
			}
			if err != nil {
				return err
			}
			if !e.Entitled {
				return exitWith(ExitNotEntitled, nil)
			}
			return nil
		},
	}
}
