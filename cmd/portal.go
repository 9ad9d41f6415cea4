package cmd

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client"
)

// portalOptions are the flags of `portal`.
type portalOptions struct {
	client.PortalSessionParams
	Open bool
}

// newPortalCmd builds `portal`; tests pass runF to check flag parsing
// without a server.
func newPortalCmd(f *Factory, runF func(context.Context, portalOptions) error) *cobra.Command {
	var o portalOptions
	cmd := &cobra.Command{
		Use:   "portal CUSTOMER",
		Short: "Make a one-hour customer portal link for a customer and print it",
		Long: `Make a link to the customer portal for one customer (a cus_ id, or your
external_customer_id) and print it. There the customer sees their
subscriptions, usage, credits and receipts, cancels or keeps a subscription,
and switches to one of the --plan plans. The link works for one hour and
carries a secret: give it to that customer only. See tollgate help portal.`,
		Example: `  tollgate portal cus_…
  tollgate portal user_42 --plan price_… --plan price_… --return-url https://app.example.com/account
  tollgate portal cus_… --open`,
		Args:              exactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.HasPrefix(args[0], "cus_") {
				o.CustomerID = args[0]
			} else {
				o.ExternalCustomerID = args[0]
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return portalRun(cmd.Context(), f, o)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&o.Plans, "plan", nil, "a plan (price_…) the customer may switch to; repeat or separate with commas")
	fl.StringVar(&o.ReturnURL, "return-url", "", "where the portal's back link leads (https; http only for localhost)")
	fl.BoolVar(&o.Open, "open", false, "open the link in this machine's browser too")
	noFileCompletion(cmd, "plan", "return-url")
	return cmd
}

func portalRun(ctx context.Context, f *Factory, o portalOptions) error {
	c, err := f.Client()
	if err != nil {
		return err
	}
	ps, err := c.CreatePortalSession(ctx, o.PortalSessionParams)
	if err != nil {
		return explain(err)
	}
	if f.JSON() {
		err = printRaw(f.IO.Out, ps.Raw)
	} else {
		_, err = fmt.Fprintln(f.IO.Out, ps.URL)
	}
	if err != nil || !o.Open {
		return err
	}
	if err := openBrowser(ps.URL); err != nil {
		fmt.Fprintf(f.IO.Err, "could not open a browser (%v); open the link above yourself\n", err)
	}
	return nil
}

// openBrowser opens url in the desktop's browser, without waiting for it.
func openBrowser(url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
