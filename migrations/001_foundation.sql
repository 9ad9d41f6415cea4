-- Foundation: merchants, API keys, webhook endpoints, invoices, meters,
-- payments, subscriptions and the event outbox.
--
-- Every merchant table's primary key and unique constraints lead with
-- merchant_id (ready for distribution by merchant), every row carries
-- (merchant_id, mode), and lists walk (created_at, seq) newest first: seq
-- breaks ties between rows created in one transaction.

CREATE TABLE merchants (
    id          text PRIMARY KEY,
    name        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
    id           text PRIMARY KEY,
    merchant_id  text NOT NULL REFERENCES merchants (id),
    mode         text NOT NULL CHECK (mode IN ('test', 'live')),
    -- SHA-256 of the full key; the key itself is never stored.
    key_hash     bytea NOT NULL UNIQUE,
    -- first characters and last four, to recognise a key in lists.
    hint         text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    revoked_at   timestamptz
);
CREATE INDEX api_keys_merchant ON api_keys (merchant_id, mode);

CREATE TABLE webhook_endpoints (
    merchant_id     text NOT NULL REFERENCES merchants (id),
    mode            text NOT NULL CHECK (mode IN ('test', 'live')),
    id              text NOT NULL,
    url             text NOT NULL,
    secret          text NOT NULL,
    -- empty means every event type.
    event_types     text[] NOT NULL DEFAULT '{}',
    allow_insecure  boolean NOT NULL DEFAULT false,
    enabled         boolean NOT NULL DEFAULT true,
    created_at      timestamptz NOT NULL DEFAULT now(),
    removed_at      timestamptz,
    PRIMARY KEY (merchant_id, id)
);
CREATE UNIQUE INDEX webhook_endpoints_id ON webhook_endpoints (id);

CREATE TABLE invoices (
    merchant_id     text NOT NULL REFERENCES merchants (id),
    mode            text NOT NULL CHECK (mode IN ('test', 'live')),
    id              text NOT NULL,
    seq             bigint GENERATED ALWAYS AS IDENTITY,
    amount          numeric(39, 0) NOT NULL CHECK (amount > 0),
    description     text NOT NULL,
    memo            text,
    invoice_number  text,
    recipient       text,
    due_at          timestamptz,
    status          text NOT NULL DEFAULT 'open',
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id)
);
CREATE UNIQUE INDEX invoices_id ON invoices (id);
CREATE INDEX invoices_list ON invoices (merchant_id, mode, created_at DESC, seq DESC);

CREATE TABLE meters (
    merchant_id      text NOT NULL REFERENCES merchants (id),
    mode             text NOT NULL CHECK (mode IN ('test', 'live')),
    id               text NOT NULL,
    seq              bigint GENERATED ALWAYS AS IDENTITY,
    key              text NOT NULL,
    display_name     text NOT NULL,
    aggregation      text NOT NULL CHECK (aggregation IN ('sum', 'count', 'max', 'last')),
    event_value_key  text,
    unit_label       text,
    description      text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id),
    CONSTRAINT meters_key UNIQUE (merchant_id, mode, key)
);
CREATE INDEX meters_list ON meters (merchant_id, mode, created_at DESC, seq DESC);

-- Confirmed on-chain payments; filled by the checkout issue.
CREATE TABLE payments (
    merchant_id   text NOT NULL REFERENCES merchants (id),
    mode          text NOT NULL CHECK (mode IN ('test', 'live')),
    id            text NOT NULL,
    seq           bigint GENERATED ALWAYS AS IDENTITY,
    invoice_id    text,
    subscription_id text,
    amount        numeric(39, 0) NOT NULL CHECK (amount > 0),
    payer         text,
    tx_hash       text,
    status        text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id)
);
CREATE INDEX payments_list ON payments (merchant_id, mode, created_at DESC, seq DESC);

-- Subscriptions; filled by the subscriptions issue.
CREATE TABLE subscriptions (
    merchant_id   text NOT NULL REFERENCES merchants (id),
    mode          text NOT NULL CHECK (mode IN ('test', 'live')),
    id            text NOT NULL,
    seq           bigint GENERATED ALWAYS AS IDENTITY,
    plan_id       text NOT NULL,
    customer_id   text,
    status        text NOT NULL,
    current_period_start timestamptz,
    current_period_end   timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id)
);
CREATE INDEX subscriptions_list ON subscriptions (merchant_id, mode, created_at DESC, seq DESC);

-- The outbox: every event-emitting change inserts its event here in the same
-- transaction; webhook deliveries and GET /v1/events read from it.
CREATE TABLE events (
    merchant_id  text NOT NULL REFERENCES merchants (id),
    mode         text NOT NULL CHECK (mode IN ('test', 'live')),
    id           text NOT NULL,
    seq          bigint GENERATED ALWAYS AS IDENTITY,
    type         text NOT NULL,
    data         jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id)
);
CREATE INDEX events_list ON events (merchant_id, mode, created_at DESC, seq DESC);
