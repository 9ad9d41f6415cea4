package cmd

import (
	"errors"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/tui"
)

func newTUICmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tui",
		Short: "Watch and work the API from a terminal UI",
		Long: `Open the operator's terminal UI: a live event tail (replay an event to a local
webhook handler with r), paged invoices, payments, subscriptions and meters, a
customer view (credits, an entitlement check, subscriptions), a form to create
invoices, and the test clock. It uses the same --api-url and --api-key as every
client command and never opens the database. Press ? inside for every key.

Replay signs and sends an event exactly as ` + "`events tail --forward-to`" + ` does, to
--forward-to with --secret (both also read from TOLLGATE_FORWARD_TO,
TOLLGATE_SECRET or the config file's forward_to and secret).`,
		Example: `  tollgate tui
  tollgate tui --forward-to http://localhost:3000/webhooks --secret whsec_…`,
		Args:              cobra.NoArgs,
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			forwardTo, secret := f.v.GetString("forward_to"), f.v.GetString("secret")
			switch {
			case forwardTo != "" && secret == "":
				return usageError("--forward-to needs --secret, the whsec_ secret your handler verifies with")
			case forwardTo != "" && !strings.HasPrefix(forwardTo, "http://") && !strings.HasPrefix(forwardTo, "https://"):
				return usageError("--forward-to must be an http:// or https:// URL")
			}
			if !f.IO.OutIsTerminal {
				return exitWith(ExitUsage, errors.New("tui needs a terminal; for scripts use `tollgate events tail` and the list commands"))
			}
			f.silenceRetryNotices() // stderr is the screen the UI draws on
			c, err := f.Client()
			if err != nil {
				return err
			}
			url := f.v.GetString("api_url")
			if url == "" {
				url = defaultAPIURL
			}
			_, noColor := os.LookupEnv("NO_COLOR")
			return tui.Run(cmd.Context(), f.IO.In, tui.Options{
				Client: c, APIURL: url, APIKey: f.v.GetString("api_key"),
				ForwardTo: forwardTo, Secret: secret, UserAgent: "tollgate-cli/" + version + " (tui replay)",
				Output: f.IO.Out, Color: !noColor,
			})
		},
	}
	fl := cmd.Flags()
	fl.String("forward-to", "", "replay events (key r) to this URL, signed like a delivery")
	fl.String("secret", "", "whsec_ secret to sign replayed events with")
	noFileCompletion(cmd, "forward-to", "secret")
	return cmd
}
