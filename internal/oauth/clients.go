package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/store"
)

// Client kinds.
const (
	KindRegistered       = "registered"
	KindMetadataDocument = "metadata_document"
)

// Bounds on client metadata.
const (
	MaxRedirectURIs     = 10
	MaxRedirectURIBytes = 2000
	MaxClientNameChars  = 100
)

// Client is an OAuth client: a public client (no secret) that sends its
// users back to one of its redirect URIs.
type Client struct {
	ID           string         `db:"id" json:"id"`
	Kind         string         `db:"kind" json:"kind"`
	Name         string         `db:"client_name" json:"client_name"`
	RedirectURIs pq.StringArray `db:"redirect_uris" json:"redirect_uris"`
	CreatedAt    time.Time      `db:"created_at" json:"created_at"`
	FetchedAt    *time.Time     `db:"fetched_at" json:"fetched_at"`
	RevokedAt    *time.Time     `db:"revoked_at" json:"revoked_at"`
}

// DisplayName is what the consent page calls the client: its name, else the
// host of its metadata document, else its id.
func (c Client) DisplayName() string {
	if c.Name != "" {
		return c.Name
	}
	if c.Kind == KindMetadataDocument {
		if u, err := url.Parse(c.ID); err == nil {
			return u.Host
		}
	}
	return c.ID
}

// ClientMetadata is the part of RFC 7591 client metadata this server uses.
// Everything else a client sends (logo_uri, contacts, …) is ignored, as RFC
// 7591 §2 asks of metadata a server does not understand.
type ClientMetadata struct {
	// ClientID is set only in metadata documents, where it must equal the
	// document's URL.
	ClientID                string   `json:"client_id"`
	RedirectURIs            []string `json:"redirect_uris"`
	ClientName              string   `json:"client_name"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	Scope                   string   `json:"scope"`
}

// ParseClientMetadata decodes and validates a registration request body.
// Fails with invalid_client_metadata (not a JSON object, wrong types, a
// grant or response type this server cannot serve, a bad client_name) or
// invalid_redirect_uri.
func ParseClientMetadata(body []byte) (ClientMetadata, error) {
	var m ClientMetadata
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return m, oerr(InvalidClientMetadata, "the body must be a JSON object of client metadata")
	}
	if err := json.Unmarshal(body, &m); err != nil {
		return m, oerr(InvalidClientMetadata, "the body is not valid client metadata: %s", jsonProblem(err))
	}
	// encoding/json would have turned malformed text into U+FFFD silently.
	if p := fields.JSONProblem(body); p != "" {
		return m, oerr(InvalidClientMetadata, "the client metadata: a value %s", p)
	}
	return m, m.validate()
}

func (m *ClientMetadata) validate() error {
	if len(m.RedirectURIs) == 0 {
		return oerr(InvalidRedirectURI, "redirect_uris is required: at least one https or loopback http URI")
	}
	if len(m.RedirectURIs) > MaxRedirectURIs {
		return oerr(InvalidRedirectURI, "redirect_uris may hold at most %d URIs", MaxRedirectURIs)
	}
	for _, u := range m.RedirectURIs {
		if err := ValidateRedirectURI(u); err != nil {
			return err
		}
	}
	name := strings.TrimSpace(m.ClientName)
	if !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl) {
		return oerr(InvalidClientMetadata, "client_name must be printable text")
	}
	if utf8.RuneCountInString(name) > MaxClientNameChars {
		return oerr(InvalidClientMetadata, "client_name may be at most %d characters", MaxClientNameChars)
	}
	m.ClientName = name
	for _, g := range m.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			return oerr(InvalidClientMetadata, "grant_types: %q is not supported (authorization_code and refresh_token are)", clip(g))
		}
	}
	if len(m.GrantTypes) > 0 && !slices.Contains(m.GrantTypes, "authorization_code") {
		return oerr(InvalidClientMetadata, "grant_types must include authorization_code")
	}
	for _, r := range m.ResponseTypes {
		if r != "code" {
			return oerr(InvalidClientMetadata, "response_types: %q is not supported (only code is)", clip(r))
		}
	}
	return nil
}

// ValidateRedirectURI checks one redirect URI: absolute, no fragment and no
// user info, and https, or http on a loopback address (RFC 8252 §7.3).
// Fails with invalid_redirect_uri.
func ValidateRedirectURI(raw string) error {
	if len(raw) > MaxRedirectURIBytes {
		return oerr(InvalidRedirectURI, "a redirect URI may be at most %d bytes", MaxRedirectURIBytes)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "" {
		return oerr(InvalidRedirectURI, "%q is not an absolute URI", clip(raw))
	}
	if strings.Contains(raw, "#") {
		return oerr(InvalidRedirectURI, "%q: a redirect URI must not have a fragment", clip(raw))
	}
	if u.User != nil {
		return oerr(InvalidRedirectURI, "%q: a redirect URI must not carry user info", clip(raw))
	}
	if strings.ContainsFunc(raw, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '"' || r == '\\' }) {
		return oerr(InvalidRedirectURI, "%q: a redirect URI must not contain spaces, quotes or control characters", clip(raw))
	}
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && isLoopback(u.Hostname()):
		return nil
	}
	return oerr(InvalidRedirectURI, "%q: redirect URIs must be https, or http on a loopback address (127.0.0.1, [::1] or localhost)", clip(raw))
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// MatchRedirectURI returns the redirect URI an authorization request answers
// at: requested when it is registered, or, for a loopback http URI, when it
// differs from a registered one in its port only (native clients listen on
// whatever port is free, RFC 8252 §7.3); the only registered URI when the
// request names none. ok is false when nothing matches.
func MatchRedirectURI(registered []string, requested string) (string, bool) {
	if requested == "" {
		if len(registered) == 1 {
			return registered[0], true
		}
		return "", false
	}
	if slices.Contains(registered, requested) {
		return requested, true
	}
	ru, err := url.Parse(requested)
	if err != nil || ru.Scheme != "http" || !isLoopback(ru.Hostname()) || ValidateRedirectURI(requested) != nil {
		return "", false
	}
	for _, r := range registered {
		gu, err := url.Parse(r)
		if err != nil || gu.Scheme != "http" {
			continue
		}
		if strings.EqualFold(gu.Hostname(), ru.Hostname()) && gu.EscapedPath() == ru.EscapedPath() && gu.RawQuery == ru.RawQuery {
			return requested, true
		}
	}
	return "", false
}

const clientColumns = `id, kind, client_name, redirect_uris, created_at, fetched_at, revoked_at`

// RegisterClient stores a dynamically registered public client and returns
// it. Whatever token_endpoint_auth_method the client asked for, it is
// registered as "none" (RFC 7591 §3.2.1 lets the server substitute values):
// this server has no client secrets.
func RegisterClient(ctx context.Context, q store.Querier, m ClientMetadata) (Client, error) {
	if err := m.validate(); err != nil {
		return Client{}, err
	}
	var c Client
	err := q.GetContext(ctx, &c, `INSERT INTO oauth_clients (id, kind, client_name, redirect_uris)
		VALUES ($1, 'registered', $2, $3) RETURNING `+clientColumns,
		id.New(strings.TrimSuffix(ClientIDPrefix, "_")), m.ClientName, pq.StringArray(m.RedirectURIs))
	return c, store.Translate(err)
}

// getClient reads a client by id; ok is false when there is none.
func getClient(ctx context.Context, q store.Querier, clientID string) (Client, bool, error) {
	var c Client
	err := q.GetContext(ctx, &c, `SELECT `+clientColumns+` FROM oauth_clients WHERE id = $1`, clientID)
	if store.NotFound(err) {
		return c, false, nil
	}
	return c, err == nil, store.Translate(err)
}

// Client returns the client clientID names: a registered client, or, for an
// https URL, the client its metadata document describes (fetched, or from
// the copy cached in the database while it is fresh). Fails with
// invalid_client for an unknown, revoked or unfetchable client.
func (s *Service) Client(ctx context.Context, clientID string) (Client, error) {
	if clientID == "" {
		return Client{}, oerr(InvalidClient, "client_id is required")
	}
	if strings.HasPrefix(clientID, "https://") {
		return s.documentClient(ctx, clientID)
	}
	c, ok, err := getClient(ctx, s.DB, clientID)
	if err != nil {
		return Client{}, err
	}
	if !ok || c.Kind != KindRegistered {
		return Client{}, oerr(InvalidClient, "unknown client_id %q: register the client first (POST /oauth/register) or use a client ID metadata document URL", clip(clientID))
	}
	if c.RevokedAt != nil {
		return Client{}, oerr(InvalidClient, "client %q has been revoked", clientID)
	}
	return c, nil
}

// ListClients returns every client, newest first.
func ListClients(ctx context.Context, q store.Querier) ([]Client, error) {
	cs := []Client{}
	err := q.SelectContext(ctx, &cs, `SELECT `+clientColumns+` FROM oauth_clients ORDER BY created_at DESC, id`)
	return cs, store.Translate(err)
}

// RevokeClient revokes a client: it gets no new codes and every token issued
// to it stops working on its next use. Revoking twice is harmless; an
// unknown id is invalid_request.
func RevokeClient(ctx context.Context, q store.Querier, clientID string) error {
	res, err := q.ExecContext(ctx, `UPDATE oauth_clients SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1`, clientID)
	if err != nil {
		return store.Translate(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return apperr.Field("client", "no OAuth client %q", clientID)
	}
	return nil
}

// clip shortens attacker-supplied text quoted in error messages.
func clip(s string) string {
	if len(s) <= 80 {
		return s
	}
	cut := 80
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// jsonProblem describes a decoding error without echoing input at length.
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return te.Field + " has the wrong type"
	}
	return clip(err.Error())
}
