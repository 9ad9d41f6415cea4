-- The OAuth 2.1 authorization server of the tool server: clients, single-use
-- authorization codes, grants (one per consent: the family of tokens a code
-- exchange starts) and tokens. Codes and tokens are stored only as SHA-256
-- hashes. Looking a code or token up by its hash is a global lookup, like an
-- API key's; everything else about a grant is merchant data and leads with
-- merchant_id.

-- Clients are not merchant data: one client (an MCP host) is used by any
-- number of merchants, each of whom consents with a key of their own.
CREATE TABLE oauth_clients (
    -- tgc_… for dynamically registered clients; the document's https URL
    -- for clients identified by a Client ID Metadata Document.
    id             text PRIMARY KEY,
    kind           text NOT NULL CHECK (kind IN ('registered', 'metadata_document')),
    client_name    text NOT NULL DEFAULT '',
    redirect_uris  text[] NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    -- metadata documents: when the cached copy was fetched.
    fetched_at     timestamptz,
    -- a revoked client gets no new codes and its tokens stop working; the
    -- row stays so that a revoked metadata-document client stays revoked.
    revoked_at     timestamptz
);

-- A grant is what the merchant consented to: a client acting for the
-- merchant and mode of the API key that consented, with scopes, for one
-- resource. Revoking it ends every token it issued (refresh-token reuse,
-- code replay, RFC 7009 revocation of a refresh token, the operator).
CREATE TABLE oauth_grants (
    merchant_id     text NOT NULL REFERENCES merchants (id),
    mode            text NOT NULL CHECK (mode IN ('test', 'live')),
    id              text NOT NULL,
    seq             bigint GENERATED ALWAYS AS IDENTITY,
    -- deleting the key (or the client) deletes the grant and its tokens.
    key_id          text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    client_id       text NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    scopes          text[] NOT NULL,
    resource        text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    revoked_at      timestamptz,
    revoked_reason  text,
    PRIMARY KEY (merchant_id, id)
);
CREATE UNIQUE INDEX oauth_grants_id ON oauth_grants (id);
CREATE INDEX oauth_grants_list ON oauth_grants (created_at DESC, seq DESC);
CREATE INDEX oauth_grants_key ON oauth_grants (key_id);
CREATE INDEX oauth_grants_client ON oauth_grants (client_id);

CREATE TABLE oauth_codes (
    code_hash             bytea PRIMARY KEY,
    merchant_id           text NOT NULL REFERENCES merchants (id),
    mode                  text NOT NULL CHECK (mode IN ('test', 'live')),
    key_id                text NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    client_id             text NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
    redirect_uri          text NOT NULL,
    -- whether the authorization request named redirect_uri (then the token
    -- request must repeat it).
    redirect_uri_given    boolean NOT NULL,
    code_challenge        text NOT NULL,
    resource              text NOT NULL,
    scopes                text[] NOT NULL,
    created_at            timestamptz NOT NULL DEFAULT now(),
    expires_at            timestamptz NOT NULL,
    used_at               timestamptz,
    -- the grant the code's exchange created: revoked if the code is replayed.
    grant_id              text
);
CREATE INDEX oauth_codes_expiry ON oauth_codes (expires_at);

CREATE TABLE oauth_tokens (
    token_hash   bytea PRIMARY KEY,
    merchant_id  text NOT NULL,
    grant_id     text NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('access', 'refresh')),
    scopes       text[] NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    -- refresh tokens: when it was exchanged for a new pair. Presenting it
    -- again is reuse and revokes the grant.
    used_at      timestamptz,
    -- access tokens revoked one by one (RFC 7009).
    revoked_at   timestamptz,
    FOREIGN KEY (merchant_id, grant_id) REFERENCES oauth_grants (merchant_id, id) ON DELETE CASCADE
);
CREATE INDEX oauth_tokens_grant ON oauth_tokens (merchant_id, grant_id);
CREATE INDEX oauth_tokens_expiry ON oauth_tokens (expires_at);
