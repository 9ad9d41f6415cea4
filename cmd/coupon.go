package cmd

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
)

var couponDurations = []string{"once", "repeating", "forever"}

func newCouponCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "coupon",
		Short: "Create, list and archive coupons, and apply them to subscriptions",
		Long: `A coupon takes a percent or an amount off a subscription's charges: the first
charge only (once), for a number of billing periods (repeating) or forever.
Customers redeem its code at checkout (?coupon=CODE on the checkout URL), or
you apply it to a subscription. Each discounted charge carries a discount
line; a charge discounted to zero moves nothing, and the period renews all
the same. An unusable coupon (unknown, archived, expired, exhausted, or for
another plan) is invalid_coupon.`,
	}
	cmd.AddCommand(newCouponCreateCmd(f, nil), newCouponListCmd(f), newCouponArchiveCmd(f), newCouponApplyCmd(f), newCouponRemoveCmd(f))
	return cmd
}

// newCouponCreateCmd builds `coupon create`; tests pass runF.
func newCouponCreateCmd(f *Factory, runF func(context.Context, client.CouponParams) error) *cobra.Command {
	var p client.CouponParams
	var amountOff, redeemBy string
	cmd := &cobra.Command{
		Use:   "create (--percent-off N | --amount-off AMOUNT) --duration once|repeating|forever",
		Short: "Create a coupon",
		Example: `  tollgate coupon create --percent-off 20 --duration repeating --periods 3 --code LAUNCH
  tollgate coupon create --amount-off 5usdc --duration once --max-redemptions 100 --redeem-by 2027-01-01
  tollgate coupon create --percent-off 100 --duration once --applies-to price_… --name "First month free"`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !slices.Contains(couponDurations, p.Duration) {
				return usageError("--duration must be one of %s, got %q", strings.Join(couponDurations, ", "), p.Duration)
			}
			if (amountOff == "") == !cmd.Flags().Changed("percent-off") {
				return usageError("give one of --percent-off and --amount-off")
			}
			if cmd.Flags().Changed("percent-off") && (p.PercentOff < 1 || p.PercentOff > 100) {
				return usageError("--percent-off must be from 1 to 100, got %d", p.PercentOff)
			}
			if amountOff != "" {
				a, err := parseAmount(amountOff)
				if err != nil {
					return err
				}
				p.AmountOff = a.String()
			}
			if (p.Duration == "repeating") != cmd.Flags().Changed("periods") {
				return usageError("--periods goes with --duration repeating, and only with it")
			}
			if redeemBy != "" {
				t, err := parseDate(redeemBy)
				if err != nil {
					return usageError("--redeem-by must be a date (2027-01-01) or an RFC 3339 date-time, got %q", redeemBy)
				}
				p.RedeemBy = t
			}
			if runF != nil {
				return runF(cmd.Context(), p)
			}
			return couponCreateRun(cmd.Context(), f, p)
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&p.PercentOff, "percent-off", 0, "percent off each covered charge, 1 to 100 (rounded half up)")
	fl.StringVar(&amountOff, "amount-off", "", "amount off each covered charge (base units, or 5usdc)")
	fl.StringVar(&p.Duration, "duration", "", "once, repeating or forever")
	fl.IntVar(&p.DurationInPeriods, "periods", 0, "repeating: how many billing periods, 1 to 120")
	fl.StringVar(&p.Code, "code", "", "the code customers type: 3 to 40 letters, digits, - or _ (unique whatever the case)")
	fl.Int64Var(&p.MaxRedemptions, "max-redemptions", 0, "how many times it can be redeemed (default: no limit)")
	fl.StringVar(&redeemBy, "redeem-by", "", "the last moment it can be redeemed (date or RFC 3339 date-time)")
	fl.StringSliceVar(&p.AppliesTo, "applies-to", nil, "plan ids (price_…) it is limited to, comma-separated (default: every plan)")
	fl.StringVar(&p.Name, "name", "", "a name shown at checkout and in your records, up to 200 characters")
	_ = cmd.MarkFlagRequired("duration")
	_ = cmd.RegisterFlagCompletionFunc("duration", cobra.FixedCompletions(couponDurations, cobra.ShellCompDirectiveNoFileComp))
	noFileCompletion(cmd, "percent-off", "amount-off", "periods", "code", "max-redemptions", "redeem-by", "applies-to", "name")
	return cmd
}

func couponCreateRun(ctx context.Context, f *Factory, p client.CouponParams) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	x, err := c.CreateCoupon(ctx, p)
	if err != nil {
		return explain(err)
	}
	if f.JSON() {
		return printRaw(f.IO.Out, x.Raw)
	}
	return printFields(f.IO, "Created coupon "+x.ID, couponFields(*x))
}

func couponFields(c client.Coupon) [][2]string {
	limit := "no limit"
	if c.MaxRedemptions != nil {
		limit = strconv.FormatInt(*c.MaxRedemptions, 10)
	}
	plans := "every plan"
	if len(c.AppliesTo) > 0 {
		plans = strings.Join(c.AppliesTo, ", ")
	}
	return [][2]string{
		{"Code", deref(c.Code)},
		{"Name", deref(c.Name)},
		{"Discount", couponOff(c)},
		{"Duration", couponDuration(c)},
		{"Redeemed", strconv.FormatInt(c.TimesRedeemed, 10) + " of " + limit},
		{"Redeem by", when(c.RedeemBy)},
		{"Plans", plans},
		{"Valid", strconv.FormatBool(c.Valid)},
		{"Status", c.Status},
	}
}

// couponOff says what the coupon takes off: "20%" or "5.00 USDC".
func couponOff(c client.Coupon) string {
	if c.PercentOff != nil {
		return strconv.Itoa(*c.PercentOff) + "% off"
	}
	return usdc(deref(c.AmountOff)) + " off"
}

// couponDuration says which charges the coupon covers.
func couponDuration(c client.Coupon) string {
	switch {
	case c.Duration == "repeating" && c.DurationInPeriods != nil:
		return strconv.Itoa(*c.DurationInPeriods) + " periods"
	case c.Duration == "once":
		return "first charge"
	}
	return c.Duration
}

// discountText is a subscription's discount in a few words ("" for none).
func discountText(d *client.Discount) string {
	if d == nil {
		return ""
	}
	s := couponOff(d.Coupon)
	if d.Coupon.Code != nil {
		s += " (" + *d.Coupon.Code + ")"
	}
	if d.End != nil {
		s += " until " + whenShort(d.End)
	} else if d.Coupon.Duration == "forever" {
		s += ", forever"
	}
	return s
}

func newCouponListCmd(f *Factory) *cobra.Command { return newListCmd(f, "coupons", couponListing) }

var couponListing = listing[client.Coupon]{
	plural: "coupons",
	fetch:  func(c *client.Client) client.ListFunc[client.Coupon] { return c.ListCoupons },
	raw:    func(v client.Coupon) json.RawMessage { return v.Raw },
	header: []string{"ID", "CODE", "DISCOUNT", "DURATION", "REDEEMED", "VALID", "CREATED"},
	elide:  []int{0},
	cut:    []int{1},
	drop:   []int{6, 3},
	row: func(v client.Coupon) []string {
		redeemed := strconv.FormatInt(v.TimesRedeemed, 10)
		if v.MaxRedemptions != nil {
			redeemed += "/" + strconv.FormatInt(*v.MaxRedemptions, 10)
		}
		valid := "yes"
		if !v.Valid {
			valid = "no"
		}
		return []string{v.ID, deref(v.Code), couponOff(v), couponDuration(v), redeemed, valid, whenShort(&v.CreatedAt)}
	},
}

func newCouponArchiveCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:               "archive COUPON_ID",
		Short:             "Archive a coupon: it can no longer be redeemed (discounts already applied keep running)",
		Example:           `  tollgate coupon archive coupon_…`,
		Args:              exactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.Client()
			if err != nil {
				return err
			}
			x, err := c.ArchiveCoupon(cmd.Context(), args[0])
			if err != nil {
				return explain(err)
			}
			if f.JSON() {
				return printRaw(f.IO.Out, x.Raw)
			}
			return printFields(f.IO, "Archived coupon "+x.ID, couponFields(*x))
		},
	}
}

func newCouponApplyCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "apply SUBSCRIPTION_ID COUPON",
		Short: "Apply a coupon (its code or id) to a subscription, from its next charge on",
		Long: `Apply a coupon to a subscription, replacing any discount it has: from a licensed
plan's next renewal, or from a metered plan's current period. Emits
subscription.updated.`,
		Example:           `  tollgate coupon apply sub_… LAUNCH`,
		Args:              exactArgs(2),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			return setDiscount(cmd.Context(), f, args[0], args[1], "Applied "+args[1]+" to ")
		},
	}
}

func newCouponRemoveCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:               "remove SUBSCRIPTION_ID",
		Short:             "Remove a subscription's discount: its next charges are in full",
		Example:           `  tollgate coupon remove sub_…`,
		Args:              exactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			return setDiscount(cmd.Context(), f, args[0], "", "Removed the discount of ")
		},
	}
}

func setDiscount(ctx context.Context, f *Factory, subID, coupon, title string) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	x, err := c.SetSubscriptionDiscount(ctx, subID, coupon)
	if err != nil {
		return explain(err)
	}
	if f.JSON() {
		return printRaw(f.IO.Out, x.Raw)
	}
	return printFields(f.IO, title+x.ID, subscriptionFields(x))
}
