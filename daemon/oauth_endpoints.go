package daemon

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/tollgatehq/tollgate/internal/oauth"
)

// maxRegistrationBytes bounds a registration request body.
const maxRegistrationBytes = 16 << 10

// registrationJSON is the answer to a registration (RFC 7591 §3.2.1).
type registrationJSON struct {
	ClientID                string   `json:"client_id"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientName              string   `json:"client_name,omitempty"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	Scope                   string   `json:"scope"`
}

// register is dynamic client registration (RFC 7591) of public clients.
func (o *oauthServer) register(w http.ResponseWriter, r *http.Request) {
	if !hasMediaType(r, "application/json") {
		dropBody(w, r)
		o.writeOAuthError(w, r, &oauth.Error{Code: oauth.InvalidClientMetadata, Description: "the body must be JSON (Content-Type: application/json)"})
		return
	}
	body, err := readLimited(w, r, maxRegistrationBytes)
	if err != nil {
		o.writeOAuthError(w, r, &oauth.Error{Code: oauth.InvalidClientMetadata, Description: err.Error()})
		return
	}
	m, err := oauth.ParseClientMetadata(body)
	if err != nil {
		o.writeOAuthError(w, r, err)
		return
	}
	c, err := oauth.RegisterClient(r.Context(), o.s.db, m)
	if err != nil {
		o.writeOAuthError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, registrationJSON{
		ClientID: c.ID, ClientIDIssuedAt: c.CreatedAt.Unix(), ClientName: c.Name, RedirectURIs: c.RedirectURIs,
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: "none", Scope: oauth.ScopeString(oauth.Scopes()),
	})
}

// token is the token endpoint: authorization_code with PKCE, and
// refresh_token.
func (o *oauthServer) token(w http.ResponseWriter, r *http.Request) {
	body, err := o.formBody(w, r)
	if err != nil {
		o.writeOAuthError(w, r, err)
		return
	}
	req, err := oauth.ParseTokenRequest(body)
	if err != nil {
		o.writeOAuthError(w, r, err)
		return
	}
	if req.ClientID, err = basicClientID(r, req.ClientID); err != nil {
		o.writeOAuthError(w, r, err)
		return
	}
	resp, err := o.svc.Token(r.Context(), req)
	if err != nil {
		o.writeOAuthError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, resp)
}

// revoke is token revocation (RFC 7009): 200 whether or not the token was
// known.
func (o *oauthServer) revoke(w http.ResponseWriter, r *http.Request) {
	body, err := o.formBody(w, r)
	if err != nil {
		o.writeOAuthError(w, r, err)
		return
	}
	req, err := oauth.ParseRevocationRequest(body)
	if err != nil {
		o.writeOAuthError(w, r, err)
		return
	}
	if req.ClientID, err = basicClientID(r, req.ClientID); err != nil {
		o.writeOAuthError(w, r, err)
		return
	}
	if err := o.svc.Revoke(r.Context(), req); err != nil {
		o.writeOAuthError(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}

// formBody reads a form-encoded request body, bounded.
func (o *oauthServer) formBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if !hasMediaType(r, "application/x-www-form-urlencoded") {
		// Answered from the headers: the body is not waited for.
		dropBody(w, r)
		return nil, &oauth.Error{Code: oauth.InvalidRequest, Description: "the body must be application/x-www-form-urlencoded"}
	}
	body, err := readLimited(w, r, oauth.MaxTokenRequestBytes)
	if err != nil {
		return nil, &oauth.Error{Code: oauth.InvalidRequest, Description: err.Error()}
	}
	return body, nil
}

// basicClientID reconciles the client_id parameter with HTTP Basic
// credentials, which some clients send for public clients too (the Go oauth2
// package tries them first): the user name is the client id (form-encoded,
// RFC 6749 §2.3.1) and the password must be empty, as there are no client
// secrets here.
func basicClientID(r *http.Request, param string) (string, error) {
	user, pass, ok := r.BasicAuth()
	if !ok {
		return param, nil
	}
	id, err := url.QueryUnescape(user)
	switch {
	case err != nil:
		return "", &oauth.Error{Code: oauth.InvalidRequest, Description: "the Basic credentials are not form-encoded"}
	case pass != "":
		return "", &oauth.Error{Code: oauth.InvalidClient, Description: "this server issues no client secrets: send client_id alone (token_endpoint_auth_method none)"}
	case param != "" && param != id:
		return "", &oauth.Error{Code: oauth.InvalidRequest, Description: "client_id differs from the Basic credentials' user name"}
	}
	return id, nil
}

// hasMediaType reports whether the request body is of media type want.
func hasMediaType(r *http.Request, want string) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == want
}

// readLimited reads at most limit bytes of the body; a longer body is an
// error saying so.
func readLimited(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, errors.New("the request body is too large")
	}
	if err != nil {
		return nil, errors.New("the request body could not be read")
	}
	return body, nil
}
