-- Meter events, their idempotency keys, and the running usage aggregates
-- that keep entitlement checks O(1).
--
-- meter_events is laid out to be partitioned by event_timestamp later: its
-- primary key includes the timestamp, and nothing refers to an event row
-- except through (id, event_timestamp). Idempotency keys live in their own
-- table, so old event partitions can be archived without losing dedup.
--
-- The two hot tables have no foreign key to merchants (merchants are never
-- deleted): a key check per row takes a share lock on the one merchant row,
-- which under concurrent batches costs more than the insert itself.

CREATE TABLE meter_events (
    merchant_id      text NOT NULL,
    mode             text NOT NULL CHECK (mode IN ('test', 'live')),
    id               text NOT NULL,
    meter_id         text NOT NULL,
    -- NULL: an event without a customer, stored but counted for nobody.
    customer_id      text,
    value            bigint NOT NULL CHECK (value >= 0),
    event_timestamp  timestamptz NOT NULL,
    properties       jsonb,
    idempotency_key  text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id, event_timestamp)
);
-- Usage of one customer on one meter over a time range (windows, billing).
CREATE INDEX meter_events_usage ON meter_events (merchant_id, mode, customer_id, meter_id, event_timestamp);

-- One row per idempotency key, kept at least 35 days (the oldest timestamp
-- an event may carry), independent of the event rows. created_at has no
-- index: pruning is a rare scan (or, at scale, dropping old partitions),
-- while an index would cost every ingested key.
CREATE TABLE meter_event_keys (
    merchant_id      text NOT NULL,
    mode             text NOT NULL CHECK (mode IN ('test', 'live')),
    idempotency_key  text NOT NULL,
    event_id         text NOT NULL,
    event_timestamp  timestamptz NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, mode, idempotency_key)
);

-- A usage window: the running aggregates (count, sum, max, last) of one
-- customer's events on one meter with event_timestamp >= since, kept for an
-- owner (an entitlement: the feature id). Ingestion updates every window an
-- event falls in, in the same transaction, so reading usage is one row.
CREATE TABLE usage_windows (
    merchant_id    text NOT NULL REFERENCES merchants (id),
    mode           text NOT NULL CHECK (mode IN ('test', 'live')),
    customer_id    text NOT NULL,
    meter_id       text NOT NULL,
    owner          text NOT NULL,
    since          timestamptz NOT NULL,
    event_count    bigint NOT NULL DEFAULT 0,
    value_sum      numeric(39, 0) NOT NULL DEFAULT 0,
    value_max      bigint,
    -- the value of the event with the greatest (event_timestamp, id).
    last_value     bigint,
    last_at        timestamptz,
    last_event_id  text,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, mode, customer_id, meter_id, owner)
);
