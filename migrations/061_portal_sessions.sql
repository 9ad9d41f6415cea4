-- Customer portal sessions: a link that lets one customer of one merchant
-- and mode see and manage their subscriptions for an hour.
CREATE TABLE portal_sessions (
    merchant_id  text NOT NULL REFERENCES merchants (id),
    mode         text NOT NULL CHECK (mode IN ('test', 'live')),
    id           text NOT NULL,
    -- SHA-256 of the link's token; the token itself is never stored.
    token_hash   bytea NOT NULL,
    customer_id  text NOT NULL,
    return_url   text,
    -- the plans (price_ ids) the customer may switch to.
    plans        text[] NOT NULL DEFAULT '{}',
    created_at   timestamptz NOT NULL,
    -- by the merchant's clock (the test clock in test mode).
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, id),
    FOREIGN KEY (merchant_id, customer_id) REFERENCES customers (merchant_id, id)
);
-- A link's one global lookup, as an API key's by its hash.
CREATE UNIQUE INDEX portal_sessions_token ON portal_sessions (token_hash);
CREATE INDEX portal_sessions_expiry ON portal_sessions (expires_at);

-- One customer's payments, newest first: the portal's payment list pages
-- through them without scanning the merchant's.
CREATE INDEX payments_customer ON payments (merchant_id, mode, customer_id, created_at DESC, seq DESC);
