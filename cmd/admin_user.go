package cmd

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/users"
)

// newAdminUserCmd is `admin user`: the merchant dashboard's users.
func newAdminUserCmd(f *Factory, withDBFlags func(*cobra.Command) *cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "user",
		Short: "Create, list and disable merchant dashboard users",
		Long: `Dashboard users sign in at {base_url}/dashboard and see one merchant's data.
A new user gets a setup link, valid 24 hours and usable once, where they choose
a password of at least 12 characters. Disabling a user ends their sessions at
once.`,
	}
	cmd.AddCommand(withDBFlags(newAdminUserCreate(f)), withDBFlags(newAdminUserList(f)), withDBFlags(newAdminUserDisable(f)))
	return cmd
}

// defaultBaseURL is serve's base URL when neither --base-url nor its
// listen address is configured.
const defaultBaseURL = "http://127.0.0.1:8080"

// dashboardBaseURL is the base URL setup links start with: --base-url,
// TOLLGATE_BASE_URL or the config file's base_url, as serve reads it.
func (f *Factory) dashboardBaseURL() (string, error) {
	base := strings.TrimRight(f.v.GetString("base_url"), "/")
	if base == "" {
		if listen := f.v.GetString("listen"); listen != "" {
			return "http://" + listen, nil
		}
		return defaultBaseURL, nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", usageError("--base-url must be an http(s) URL such as https://billing.example.com")
	}
	return base, nil
}

func newAdminUserCreate(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "create --merchant ID --email EMAIL",
		Short: "Create a dashboard user and print its setup link (single use, valid 24 hours)",
		Example: `  tollgate admin user create --merchant mch_… --email ops@example.com
  tollgate admin user create --merchant mch_… --email ops@example.com --base-url https://billing.example.com --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			merchant, _ := cmd.Flags().GetString("merchant")
			email, _ := cmd.Flags().GetString("email")
			if merchant == "" || email == "" {
				return usageError("--merchant and --email are required")
			}
			base, err := f.dashboardBaseURL()
			if err != nil {
				return err
			}
			return f.withDB(cmd.Context(), func(d *database) error {
				c, err := users.Create(cmd.Context(), d.DB, audit.AdminActor(), merchant, email, time.Now())
				if err != nil {
					return err
				}
				link := base + "/dashboard/setup/" + c.SetupToken
				if f.JSON() {
					return writeJSONTo(f.IO.Out, map[string]any{"id": c.User.ID, "merchant_id": c.User.MerchantID, "email": c.User.Email,
						"setup_url": link, "setup_expires_at": c.SetupExpiresAt.UTC()})
				}
				fmt.Fprintf(f.IO.Out, "Created dashboard user %s (%s) of %s. Send them this setup link; it works once, until %s UTC:\n\n    %s\n",
					c.User.ID, clean(c.User.Email), c.User.MerchantID, fmtTime(c.SetupExpiresAt), link)
				return nil
			})
		},
	}
	cmd.Flags().String("merchant", "", "merchant id")
	cmd.Flags().String("email", "", "the user's email, their sign-in name (unique per merchant)")
	cmd.Flags().String("base-url", "", "public URL of the daemon, which setup links start with (default: serve's, else "+defaultBaseURL+")")
	return cmd
}

func newAdminUserList(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use: "list [--merchant ID]", Short: "List dashboard users", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			merchant, _ := cmd.Flags().GetString("merchant")
			return f.withDB(cmd.Context(), func(d *database) error {
				us, err := users.List(cmd.Context(), d.DB, merchant)
				if err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, us)
				}
				t := newTablePrinter(f.IO, "ID", "MERCHANT", "EMAIL", "STATUS", "2FA", "CREATED").elide(1).cut(2).drop(5, 4, 1)
				for _, u := range us {
					status := "active"
					switch {
					case u.DisabledAt != nil:
						status = "disabled"
					case !u.PasswordSet:
						status = "setup pending"
					}
					tfa := "-"
					if u.TOTPEnrolled {
						tfa = "totp"
					}
					t.row(u.ID, u.MerchantID, u.Email, status, tfa, whenShort(&u.CreatedAt))
				}
				return t.print()
			})
		},
	}
	cmd.Flags().String("merchant", "", "only this merchant's users")
	return cmd
}

func newAdminUserDisable(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use: "disable USER_ID", Short: "Disable a dashboard user; their sessions end at once", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withDB(cmd.Context(), func(d *database) error {
				u, err := users.Disable(cmd.Context(), d.DB, audit.AdminActor(), "", args[0], time.Now())
				if err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, u)
				}
				fmt.Fprintf(f.IO.Out, "Disabled %s (%s); their sessions have ended\n", u.ID, clean(u.Email))
				return nil
			})
		},
	}
}
