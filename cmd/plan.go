package cmd

import (
	"context"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
)

var (
	intervals    = []string{"week", "biweekly", "month", "year", "custom"}
	usageTypes   = []string{"licensed", "metered"}
	pricingKinds = []string{"per_unit", "package", "tiered", "flat"}
	tierModes    = []string{"graduated", "volume"}
)

func newPlanCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan",
		Short: "Create subscription plans and move their subscribers to another plan",
	}
	cmd.AddCommand(newPlanCreateCmd(f, nil), newPlanMigrateCmd(f))
	return cmd
}

// planCreateOptions are the flags of `plan create`, as typed.
type planCreateOptions struct {
	Name         string
	Amount       string
	Interval     string
	IntervalDays string
	TrialDays    string
	Description  string
	UsageType    string
	Meter        string
	Features     []string
	Pricing      pricingFlags
}

// params converts the flags to the API's request. Only what cannot be read
// (an amount, a number, JSON) is a usage error here: the API validates the
// rest and names the field.
func (o *planCreateOptions) params() (client.PlanParams, error) {
	amount, err := parseAmount(o.Amount)
	if err != nil {
		return client.PlanParams{}, err
	}
	p := client.PlanParams{
		Name:        o.Name,
		Amount:      amount.String(),
		Interval:    o.Interval,
		Description: o.Description,
		UsageType:   o.UsageType,
		Meter:       o.Meter,
	}
	if o.IntervalDays != "" {
		n, err := strconv.Atoi(strings.TrimSpace(o.IntervalDays))
		if err != nil {
			return client.PlanParams{}, usageError("--interval-days %q: want a whole number of days", o.IntervalDays)
		}
		p.IntervalDays = &n
	}
	if o.TrialDays != "" {
		n, err := strconv.Atoi(strings.TrimSpace(o.TrialDays))
		if err != nil {
			return client.PlanParams{}, usageError("--trial-days %q: want a whole number of days", o.TrialDays)
		}
		p.TrialDays = &n
	}
	if p.PricingModel, err = o.Pricing.model(); err != nil {
		return client.PlanParams{}, err
	}
	// A meter or a pricing model only makes sense on a metered plan.
	if p.UsageType == "" && (p.Meter != "" || o.Pricing.given()) {
		p.UsageType = "metered"
	}
	for _, s := range o.Features {
		feat, err := parseFeature(s)
		if err != nil {
			return client.PlanParams{}, usageError("--feature %q: %v", s, err)
		}
		p.Features = append(p.Features, feat)
	}
	return p, nil
}

// newPlanCreateCmd builds `plan create`; tests pass runF to check flag
// parsing without a server.
func newPlanCreateCmd(f *Factory, runF func(context.Context, client.PlanParams) error) *cobra.Command {
	o := &planCreateOptions{}
	cmd := &cobra.Command{
		Use:   "create --name NAME --amount AMOUNT --interval INTERVAL",
		Short: "Create a subscription plan and print its checkout URL",
		Long: `Create a plan: a product and its price, paid at the printed checkout URL.

A licensed plan (the default) charges --amount every period. A metered plan
bills the customer's usage of --meter each period, priced by its pricing
model and capped at --amount. Build the model from flags:
  --pricing per_unit  --unit-amount A [--included-units N]
  --pricing package   --unit-amount A --package-size N
  --pricing tiered    --tier-mode graduated|volume --tier UPTO:A ... (inf for the last)
  --pricing flat      --flat-amount A
or give it whole as JSON with --pricing-model. --meter or any pricing flag
makes the plan metered unless --usage-type says otherwise. Amounts are base
units (1500) or USDC with a suffix (0.0015usdc).

--trial-days N (1 to 730) starts each subscription with an N-day free
trial: checkout authorizes the payer without charging, and the first
period is charged when the trial ends. A customer gets one trial per
product.`,
		Example: `  tollgate plan create --name Pro --amount 9usdc --interval month --feature api_access --feature seats:5
  tollgate plan create --name "API usage" --amount 50usdc --interval month --meter meter_… \
      --pricing tiered --tier-mode graduated --tier 1000:0.002usdc --tier inf:0.001usdc
  tollgate plan create --name Daily --amount 1usdc --interval custom --interval-days 1 --json
  tollgate plan create --name Pro --amount 9usdc --interval month --trial-days 14`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			warnBareAmount(cmd.ErrOrStderr(), o.Amount)
			p, err := o.params()
			if err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), p)
			}
			return planCreateRun(cmd.Context(), f, p)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Name, "name", "", "product name, 2 to 80 characters")
	fl.StringVar(&o.Amount, "amount", "", "price per period (a metered plan's cap): base units (9000000) or USDC (9usdc); at least 1 USDC")
	fl.StringVar(&o.Interval, "interval", "", "billing period: week, biweekly, month, year or custom")
	fl.StringVar(&o.IntervalDays, "interval-days", "", "days per period, 1 to 365 (with --interval custom)")
	fl.StringVar(&o.TrialDays, "trial-days", "", "free trial days each subscription starts with, 1 to 730")
	fl.StringVar(&o.Description, "description", "", "product description, up to 300 characters")
	fl.StringVar(&o.UsageType, "usage-type", "", "licensed (default) or metered")
	fl.StringVar(&o.Meter, "meter", "", "id of the meter a metered plan bills (meter_…)")
	fl.StringVar(&o.Pricing.Kind, "pricing", "", "pricing model: per_unit, package, tiered or flat")
	fl.StringVar(&o.Pricing.UnitAmount, "unit-amount", "", "price per unit (per package for package pricing)")
	fl.StringVar(&o.Pricing.IncludedUnits, "included-units", "", "units free each period (per_unit)")
	fl.StringVar(&o.Pricing.PackageSize, "package-size", "", "units per package (package)")
	fl.StringVar(&o.Pricing.TierMode, "tier-mode", "", "tiered pricing: graduated (each unit at its tier) or volume (all units at the total's tier)")
	fl.StringArrayVar(&o.Pricing.Tiers, "tier", nil, "a tier as upTo:unitAmount, repeatable in ascending order; inf or nothing as upTo for the last")
	fl.StringVar(&o.Pricing.FlatAmount, "flat-amount", "", "fee per period (flat)")
	fl.StringVar(&o.Pricing.Model, "pricing-model", "", `the whole pricing_model as JSON, e.g. '{"kind":"per_unit","unitAmount":1000}'`)
	fl.StringArrayVar(&o.Features, "feature", nil, "feature key granted to subscribers, KEY or KEY:LIMIT for a metered feature; repeatable")
	_ = cmd.MarkFlagRequired("name")
	_ = cmd.MarkFlagRequired("amount")
	_ = cmd.MarkFlagRequired("interval")
	_ = cmd.RegisterFlagCompletionFunc("interval", cobra.FixedCompletions(intervals, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("usage-type", cobra.FixedCompletions(usageTypes, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("pricing", cobra.FixedCompletions(pricingKinds, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("tier-mode", cobra.FixedCompletions(tierModes, cobra.ShellCompDirectiveNoFileComp))
	noFileCompletion(cmd, "name", "amount", "interval-days", "trial-days", "description", "meter", "unit-amount", "included-units",
		"package-size", "tier", "flat-amount", "pricing-model", "feature")
	return cmd
}

func planCreateRun(ctx context.Context, f *Factory, p client.PlanParams) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	plan, err := c.CreatePlan(ctx, p)
	if err != nil {
		return explain(err)
	}
	if f.JSON() {
		return printRaw(f.IO.Out, plan.Raw)
	}
	return printFields(f.IO, "Created plan "+plan.ID, planFields(plan))
}

// planFields are the details of a plan.
func planFields(p *client.Plan) [][2]string {
	amount := amountDetail(p.Amount) + " " + every(p.Interval, p.IntervalDays)
	if p.UsageType == "metered" {
		amount = "usage, capped at " + amount
	}
	var feats []string
	for _, ft := range p.Features {
		s := ft.FeatureKey
		if ft.LimitValue != nil {
			s += " (limit " + *ft.LimitValue + ")"
		}
		feats = append(feats, s)
	}
	return [][2]string{
		{"Product", p.Product.ID + " " + p.Product.Name},
		{"Description", deref(p.Product.Description)},
		{"Amount", amount},
		{"Trial", trialDetail(p.TrialDays)},
		{"Usage type", p.UsageType},
		{"Meter", deref(p.Meter)},
		{"Pricing", pricingSummary(p.PricingModel)},
		{"Features", strings.Join(feats, ", ")},
		{"Checkout URL", p.CheckoutURL},
	}
}

// trialDetail says a plan's trial, or nothing when it has none.
func trialDetail(days *int) string {
	if days == nil {
		return ""
	}
	return strconv.Itoa(*days) + "-day free trial"
}
