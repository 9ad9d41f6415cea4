package oauth

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/lib/pq"

	"github.com/tollgatehq/tollgate/internal/ssrf"
	"github.com/tollgatehq/tollgate/internal/store"
)

// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document,
// the registration method the current MCP revision prefers): the client_id
// is an https URL serving the client's metadata as JSON, whose client_id is
// that very URL. The document is fetched through the SSRF-safe client, size-
// and time-bounded, and cached in oauth_clients for DocumentTTL.

// ValidateDocumentURL checks that clientID can name a metadata document: an
// https URL with a path, without fragment, user info or dot segments.
// Fails with invalid_client.
func ValidateDocumentURL(clientID string) error {
	bad := func(why string) error {
		return oerr(InvalidClient, "client_id %q is not a valid client metadata document URL: %s", clip(clientID), why)
	}
	if len(clientID) > MaxRedirectURIBytes {
		return bad("too long")
	}
	u, err := url.Parse(clientID)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Opaque != "" {
		return bad("it must be an absolute https URL")
	}
	if strings.Contains(clientID, "#") || u.User != nil {
		return bad("it must have no fragment and no user info")
	}
	if u.Path == "" || u.Path == "/" {
		return bad("it must have a path")
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if seg == "." || seg == ".." {
			return bad("it must not have dot segments")
		}
	}
	if strings.ContainsFunc(clientID, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '"' || r == '\\' }) {
		return bad("it must not contain spaces, quotes or control characters")
	}
	return nil
}

// ParseMetadataDocument decodes and validates the document fetched from
// docURL: client metadata whose client_id equals docURL, with valid
// redirect_uris, for a public client. Fails with invalid_client.
func ParseMetadataDocument(docURL string, body []byte) (ClientMetadata, error) {
	m, err := ParseClientMetadata(body)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return m, oerr(InvalidClient, "the client metadata document at %s is invalid: %s", clip(docURL), e.Description)
		}
		return m, err
	}
	if m.ClientID != docURL {
		return m, oerr(InvalidClient, "the client metadata document at %s names client_id %q, not its own URL", clip(docURL), clip(m.ClientID))
	}
	if m.TokenEndpointAuthMethod != "" && m.TokenEndpointAuthMethod != "none" {
		return m, oerr(InvalidClient, "the client metadata document at %s asks for token_endpoint_auth_method %q; this server serves public clients only (none)",
			clip(docURL), clip(m.TokenEndpointAuthMethod))
	}
	return m, nil
}

// documentClient returns the client described by the metadata document at
// clientID, from the cache while it is fresh, else fetched and cached.
func (s *Service) documentClient(ctx context.Context, clientID string) (Client, error) {
	if err := ValidateDocumentURL(clientID); err != nil {
		return Client{}, err
	}
	var row struct {
		Client
		Fresh bool `db:"fresh"`
	}
	err := s.DB.GetContext(ctx, &row, `SELECT `+clientColumns+`, coalesce(fetched_at > now() - make_interval(secs => $2), false) AS fresh
		FROM oauth_clients WHERE id = $1`, clientID, seconds(s.documentTTL()))
	switch {
	case store.NotFound(err):
	case err != nil:
		return Client{}, store.Translate(err)
	case row.RevokedAt != nil:
		return Client{}, oerr(InvalidClient, "client %q has been revoked", clip(clientID))
	case row.Fresh:
		return row.Client, nil
	}
	m, err := s.fetchDocument(ctx, clientID)
	if err != nil {
		return Client{}, err
	}
	var c Client
	err = s.DB.GetContext(ctx, &c, `INSERT INTO oauth_clients (id, kind, client_name, redirect_uris, fetched_at)
		VALUES ($1, 'metadata_document', $2, $3, now())
		ON CONFLICT (id) DO UPDATE SET client_name = EXCLUDED.client_name, redirect_uris = EXCLUDED.redirect_uris, fetched_at = now()
		RETURNING `+clientColumns, clientID, m.ClientName, pq.StringArray(m.RedirectURIs))
	if err != nil {
		return Client{}, store.Translate(err)
	}
	if c.RevokedAt != nil {
		return Client{}, oerr(InvalidClient, "client %q has been revoked", clip(clientID))
	}
	return c, nil
}

// fetchDocument GETs the document at docURL: only a 200 with at most
// MaxDocumentBytes of valid metadata is accepted.
func (s *Service) fetchDocument(ctx context.Context, docURL string) (ClientMetadata, error) {
	fail := func(why string) (ClientMetadata, error) {
		return ClientMetadata{}, oerr(InvalidClient, "the client metadata document at %s %s", clip(docURL), why)
	}
	if s.FetchErr != nil {
		return fail("cannot be fetched: " + s.FetchErr.Error())
	}
	if s.Fetch == nil {
		return fail("cannot be fetched: this server fetches no documents")
	}
	ctx, cancel := ctxTimeout(ctx, s.FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, docURL, nil)
	if err != nil {
		return fail("is not a fetchable URL")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.Fetch.Do(req)
	if err != nil {
		if errors.Is(err, ssrf.ErrRefused) {
			return fail("is on an address this server does not fetch from (loopback, private, link-local or reserved)")
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fail("took too long to fetch")
		}
		return fail("could not be fetched: " + clip(unwrapURLError(err).Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fail("answered HTTP " + resp.Status + ", not 200")
	}
	limit := s.MaxDocumentBytes
	if limit <= 0 {
		limit = 8 << 10
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return fail("could not be read: " + clip(err.Error()))
	}
	if int64(len(body)) > limit {
		return fail("is larger than the " + strconv.FormatInt(limit, 10) + " bytes allowed")
	}
	return ParseMetadataDocument(docURL, body)
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
