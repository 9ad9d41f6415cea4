package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/client/webhook"
)

func newWebhookCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "webhook",
		Short: "Verify and sign webhook payloads offline",
	}
	cmd.AddCommand(newWebhookVerifyCmd(f), newWebhookSignCmd(f))
	return cmd
}

// readPayload reads the raw payload from the file named by args[0], or from
// stdin when there is no argument or it is "-".
func readPayload(f *Factory, args []string) ([]byte, error) {
	if len(args) == 0 || args[0] == "-" {
		return io.ReadAll(f.IO.In)
	}
	b, err := os.ReadFile(args[0])
	if err != nil {
		return nil, usageError("%v", err)
	}
	return b, nil
}

// parseUnix reads a --now or --timestamp flag: Unix seconds.
func parseUnix(flag, s string) (time.Time, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, usageError("--%s must be a Unix time in seconds, got %q", flag, s)
	}
	return time.Unix(n, 0), nil
}

func newWebhookVerifyCmd(f *Factory) *cobra.Command {
	var secret, header, now string
	var tolerance time.Duration
	cmd := &cobra.Command{
		Use:   "verify --secret whsec_… --header 'x-wc-signature value' [FILE|-]",
		Short: "Check a payload's signature: exit 0 if valid, 5 if not, with the reason",
		Long: `Verify a webhook payload offline against the x-wc-signature header it came
with. Pass the raw request body exactly as received (a file, or stdin): any
change, even re-indenting the JSON, invalidates the signature. --header takes the
header's value, with or without the "x-wc-signature:" name in front.

Exit status 0 means valid; 5 means invalid, with the reason: no signature,
malformed header, timestamp outside the tolerance (and by how much), or a
mismatch (wrong secret, or the payload was altered).`,
		Example: `  tollgate webhook verify --secret whsec_… --header "t=1782907200,v1=5257a8…" body.json
  pbpaste | tollgate webhook verify --secret whsec_… --header "$SIG" --now 1782907230`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if secret == "" {
				return usageError("--secret is required")
			}
			at := time.Now()
			if now != "" {
				var err error
				if at, err = parseUnix("now", now); err != nil {
					return err
				}
			}
			tol := tolerance
			switch {
			case tol < 0:
				return usageError("--tolerance must not be negative")
			case tol == 0:
				tol = -1 // the package's "skip the timestamp check"
			}
			payload, err := readPayload(f, args)
			if err != nil {
				return err
			}
			value := strings.TrimSpace(header)
			if name, rest, ok := strings.Cut(value, ":"); ok && strings.EqualFold(strings.TrimSpace(name), webhook.HeaderName) {
				value = strings.TrimSpace(rest)
			}
			verr := webhook.VerifyAt(payload, value, secret, tol, at)
			if f.JSON() {
				out := map[string]any{"valid": verr == nil}
				if verr != nil {
					out["reason"] = reason(verr)
				}
				if err := writeJSONTo(f.IO.Out, out); err != nil {
					return err
				}
				if verr != nil {
					return exitWith(ExitInvalid, nil)
				}
				return nil
			}
			if verr != nil {
				return exitWith(ExitInvalid, fmt.Errorf("invalid signature: %s", reason(verr)))
			}
			fmt.Fprintln(f.IO.Out, "valid")
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&secret, "secret", "", "the endpoint's whsec_ signing secret")
	fl.StringVar(&header, "header", "", "the x-wc-signature header value")
	fl.DurationVar(&tolerance, "tolerance", webhook.DefaultTolerance, "how far t may be from now; 0 skips the timestamp check")
	fl.StringVar(&now, "now", "", "check the timestamp against this Unix time instead of the clock")
	noFileCompletion(cmd, "secret", "header", "tolerance", "now")
	return cmd
}

// reason explains a verification failure in a few words, e.g. "timestamp
// outside tolerance: 7m3s too old (tolerance 5m0s)".
func reason(err error) string {
	switch {
	case errors.Is(err, webhook.ErrNoSignature):
		return "no v1 signature in the header"
	case errors.Is(err, webhook.ErrMismatch):
		return "signature mismatch: wrong secret, or the payload or header was altered"
	}
	return strings.TrimPrefix(err.Error(), "webhook: ")
}

func newWebhookSignCmd(f *Factory) *cobra.Command {
	var secrets []string
	var timestamp string
	cmd := &cobra.Command{
		Use:   "sign --secret whsec_… [--timestamp UNIX] [FILE|-]",
		Short: "Print an x-wc-signature header value for a payload (test fixtures)",
		Example: `  tollgate webhook sign --secret whsec_… body.json
  tollgate webhook sign --secret whsec_new --secret whsec_old --timestamp 1782907200 < body.json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(secrets) == 0 {
				return usageError("--secret is required")
			}
			at := time.Now()
			if timestamp != "" {
				var err error
				if at, err = parseUnix("timestamp", timestamp); err != nil {
					return err
				}
			}
			payload, err := readPayload(f, args)
			if err != nil {
				return err
			}
			h := webhook.Sign(payload, at, secrets...)
			if f.JSON() {
				return writeJSONTo(f.IO.Out, map[string]any{"header": webhook.HeaderName, "value": h})
			}
			_, err = fmt.Fprintln(f.IO.Out, h)
			return err
		},
	}
	cmd.Flags().StringArrayVar(&secrets, "secret", nil, "whsec_ secret to sign with (repeat for a rotation's two signatures)")
	cmd.Flags().StringVar(&timestamp, "timestamp", "", "sign as of this Unix time (default now)")
	noFileCompletion(cmd, "secret", "timestamp")
	return cmd
}
