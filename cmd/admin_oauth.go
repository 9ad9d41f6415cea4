package cmd

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tollgatehq/tollgate/internal/audit"
	"github.com/tollgatehq/tollgate/internal/oauth"
	"github.com/tollgatehq/tollgate/internal/store"
)

// newAdminOAuthCmd is `admin oauth`: the OAuth clients of the tool server and
// the tokens merchants granted them.
func newAdminOAuthCmd(f *Factory, withDBFlags func(*cobra.Command) *cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: "oauth", Short: "List and revoke the tool server's OAuth clients and tokens"}
	clients := &cobra.Command{Use: "clients", Short: "List and revoke OAuth clients"}
	clients.AddCommand(withDBFlags(newAdminOAuthClientsList(f)), withDBFlags(newAdminOAuthClientsRevoke(f)))
	tokens := &cobra.Command{
		Use:   "tokens",
		Short: "List and revoke OAuth tokens (one row per consent)",
		Long: `List and revoke OAuth tokens. Each row is one grant: a merchant's consent to a
client, and the chain of access and refresh tokens it has issued since.
Revoking it ends all of them on their next use. The tokens themselves are
never shown: only their hashes are stored.`,
	}
	tokens.AddCommand(withDBFlags(newAdminOAuthTokensList(f)), withDBFlags(newAdminOAuthTokensRevoke(f)))
	cmd.AddCommand(clients, tokens)
	return cmd
}

func newAdminOAuthClientsList(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "List OAuth clients, newest first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.withDB(cmd.Context(), func(d *database) error {
				cs, err := oauth.ListClients(cmd.Context(), d.DB)
				if err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, cs)
				}
				if len(cs) == 0 {
					fmt.Fprintln(f.IO.Err, "No OAuth clients.")
					return nil
				}
				tw := newTable(f.IO.Out)
				fmt.Fprintln(tw, "ID\tKIND\tNAME\tREDIRECTS TO\tCREATED\tREVOKED")
				for _, c := range cs {
					revoked := "-"
					if c.RevokedAt != nil {
						revoked = fmtTime(*c.RevokedAt)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.ID, kindLabel(c.Kind), truncateText(orDash(c.Name), 40),
						redirectHosts(c.RedirectURIs), fmtTime(c.CreatedAt), revoked)
				}
				return tw.Flush()
			})
		},
	}
}

func newAdminOAuthClientsRevoke(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use: "revoke CLIENT_ID", Short: "Revoke a client: no new authorizations, and its tokens fail on their next use", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withDB(cmd.Context(), func(d *database) error {
				// A client is no merchant's: its entry has none.
				if _, err := audited(cmd.Context(), d, func(tx *store.Tx) (string, error) {
					return args[0], oauth.RevokeClient(cmd.Context(), tx, args[0])
				}, func(id string) audit.Entry { return audit.Entry{Action: audit.OAuthClientRevoke, Target: id} }); err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, map[string]any{"id": args[0], "revoked": true})
				}
				fmt.Fprintf(f.IO.Out, "Revoked client %s\n", args[0])
				return nil
			})
		},
	}
}

func newAdminOAuthTokensList(f *Factory) *cobra.Command {
	var fl oauth.GrantFilter
	cmd := &cobra.Command{
		Use: "list [--merchant ID] [--client ID]", Short: "List grants, newest first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if fl.Limit < 1 {
				return usageError("--limit must be positive")
			}
			return f.withDB(cmd.Context(), func(d *database) error {
				gs, err := oauth.ListGrants(cmd.Context(), d.DB, fl)
				if err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, gs)
				}
				if len(gs) == 0 {
					fmt.Fprintln(f.IO.Err, "No OAuth tokens.")
					return nil
				}
				tw := newTable(f.IO.Out)
				fmt.Fprintln(tw, "ID\tMERCHANT\tMODE\tCLIENT\tSCOPES\tSTATUS\tCREATED\tLAST ISSUED")
				for _, g := range gs {
					last := "-"
					if g.LastIssuedAt != nil {
						last = fmtTime(*g.LastIssuedAt)
					}
					client := g.ClientName
					if client == "" {
						client = g.ClientID
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.ID, g.MerchantID, g.Mode, truncateText(client, 40),
						strings.Join(g.Scopes, ","), g.Status, fmtTime(g.CreatedAt), last)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().StringVar(&fl.MerchantID, "merchant", "", "only this merchant's grants")
	cmd.Flags().StringVar(&fl.ClientID, "client", "", "only this client's grants")
	cmd.Flags().IntVar(&fl.Limit, "limit", 100, "at most this many")
	return cmd
}

func newAdminOAuthTokensRevoke(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use: "revoke GRANT_ID", Short: "Revoke a grant (ogr_…): its access and refresh tokens fail on their next use", Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.withDB(cmd.Context(), func(d *database) error {
				if err := auditedRow(cmd.Context(), d, "oauth_grants", args[0], audit.OAuthGrantRevoke, func(tx *store.Tx) error {
					return oauth.RevokeGrant(cmd.Context(), tx, args[0])
				}); err != nil {
					return err
				}
				if f.JSON() {
					return writeJSONTo(f.IO.Out, map[string]any{"id": args[0], "revoked": true})
				}
				fmt.Fprintf(f.IO.Out, "Revoked %s and every token it issued\n", args[0])
				return nil
			})
		},
	}
}

func kindLabel(kind string) string {
	if kind == oauth.KindMetadataDocument {
		return "document"
	}
	return kind
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// redirectHosts names where a client's redirect URIs point, host by host.
func redirectHosts(uris []string) string {
	var hosts []string
	for _, u := range uris {
		if p, err := url.Parse(u); err == nil && !slices.Contains(hosts, p.Host) {
			hosts = append(hosts, p.Host)
		}
	}
	return truncateText(strings.Join(hosts, ","), 40)
}
