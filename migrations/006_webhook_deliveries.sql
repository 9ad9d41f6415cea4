-- Webhook deliveries: one row per (event, endpoint), written by events.Emit
-- in the event's own transaction (the outbox), claimed by the daemon's
-- workers with FOR UPDATE SKIP LOCKED, and one attempt row per HTTP request
-- sent.

-- Secret rotation: for an overlap after rotate-secret, deliveries are signed
-- with both the new secret and this previous one.
ALTER TABLE webhook_endpoints
    ADD COLUMN previous_secret             text,
    ADD COLUMN previous_secret_expires_at  timestamptz;

CREATE TABLE webhook_deliveries (
    merchant_id      text NOT NULL,
    mode             text NOT NULL CHECK (mode IN ('test', 'live')),
    id               text NOT NULL,
    seq              bigint GENERATED ALWAYS AS IDENTITY,
    event_id         text NOT NULL,
    endpoint_id      text NOT NULL,
    status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
    -- attempts sent and recorded so far; the next one is attempts + 1.
    attempts         integer NOT NULL DEFAULT 0,
    -- attempts at the start of the current retry cycle: a manual retry
    -- starts a new cycle of 1 + len(schedule) attempts.
    cycle_start      integer NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    last_attempt_at  timestamptz,
    last_status      integer,
    last_error       text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id),
    CONSTRAINT webhook_deliveries_pair UNIQUE (merchant_id, event_id, endpoint_id),
    FOREIGN KEY (merchant_id, event_id) REFERENCES events (merchant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (merchant_id, endpoint_id) REFERENCES webhook_endpoints (merchant_id, id)
);
CREATE UNIQUE INDEX webhook_deliveries_id ON webhook_deliveries (id);
-- The work queue: workers of every replica scan due pending rows across
-- merchants (like an API key's hash, a deliberate global lookup).
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (merchant_id, endpoint_id, created_at DESC);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

CREATE TABLE webhook_attempts (
    merchant_id    text NOT NULL,
    mode           text NOT NULL CHECK (mode IN ('test', 'live')),
    delivery_id    text NOT NULL,
    attempt        integer NOT NULL,
    started_at     timestamptz NOT NULL,
    -- HTTP status, NULL when no response arrived (network error, refusal).
    status         integer,
    latency_us     bigint NOT NULL,
    error          text,
    -- the first 4 KiB of the response body, as text.
    response_body  text NOT NULL DEFAULT '',
    PRIMARY KEY (merchant_id, delivery_id, attempt),
    FOREIGN KEY (merchant_id, delivery_id) REFERENCES webhook_deliveries (merchant_id, id) ON DELETE CASCADE
);

-- Retention: the daemon deletes events (with their deliveries and attempts)
-- older than the retention period, oldest first.
CREATE INDEX events_created ON events (created_at);
