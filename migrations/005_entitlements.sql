-- Features and entitlements.
--
-- entitlement_grants is the history: one row per grant, never replaced.
-- entitlements is the current state: one row per (customer, feature), which
-- a new grant overwrites; checks read it by primary key.

CREATE TABLE features (
    merchant_id  text NOT NULL REFERENCES merchants (id),
    mode         text NOT NULL CHECK (mode IN ('test', 'live')),
    id           text NOT NULL,
    seq          bigint GENERATED ALWAYS AS IDENTITY,
    key          text NOT NULL,
    name         text NOT NULL,
    type         text NOT NULL CHECK (type IN ('boolean', 'metered')),
    meter_id     text,
    unit_label   text,
    description  text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id),
    CONSTRAINT features_key UNIQUE (merchant_id, mode, key),
    CHECK ((type = 'metered') = (meter_id IS NOT NULL))
);

CREATE TABLE entitlement_grants (
    merchant_id   text NOT NULL REFERENCES merchants (id),
    mode          text NOT NULL CHECK (mode IN ('test', 'live')),
    id            text NOT NULL,
    seq           bigint GENERATED ALWAYS AS IDENTITY,
    customer_id   text NOT NULL,
    feature_id    text NOT NULL,
    limit_value   numeric(39, 0) CHECK (limit_value >= 0),
    starts_at     timestamptz NOT NULL,
    active_until  timestamptz,
    -- who made it: api (POST /v1/entitlement_grants), later plan.
    source        text NOT NULL DEFAULT 'api',
    revoked_at    timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id)
);
CREATE UNIQUE INDEX entitlement_grants_id ON entitlement_grants (id);
CREATE INDEX entitlement_grants_history ON entitlement_grants (merchant_id, mode, customer_id, feature_id, created_at);

CREATE TABLE entitlements (
    merchant_id   text NOT NULL REFERENCES merchants (id),
    mode          text NOT NULL CHECK (mode IN ('test', 'live')),
    customer_id   text NOT NULL,
    feature_id    text NOT NULL,
    grant_id      text NOT NULL,
    limit_value   numeric(39, 0),
    starts_at     timestamptz NOT NULL,
    active_until  timestamptz,
    -- set by subscriptions (dunning): entitled past active_until until then.
    grace_until   timestamptz,
    revoked_at    timestamptz,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, mode, customer_id, feature_id)
);
