-- Alerts: thresholds on usage, credit balance and spend that emit
-- alert.triggered when crossed.
CREATE TABLE alerts (
    merchant_id  text NOT NULL REFERENCES merchants (id),
    mode         text NOT NULL CHECK (mode IN ('test', 'live')),
    id           text NOT NULL,
    seq          bigint GENERATED ALWAYS AS IDENTITY,
    type         text NOT NULL CHECK (type IN ('usage_threshold', 'credit_balance_below', 'spend_threshold')),
    name         text,
    customer_id  text,
    meter_id     text,
    threshold    numeric(39, 0) CHECK (threshold >= 0),
    percent      integer CHECK (percent BETWEEN 1 AND 100),
    status       text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    archived_at  timestamptz,
    PRIMARY KEY (merchant_id, id)
);
CREATE INDEX alerts_list ON alerts (merchant_id, mode, created_at DESC, seq DESC);
-- What ingestion asks: is any active alert watching this meter?
CREATE INDEX alerts_active ON alerts (merchant_id, mode, meter_id, customer_id) WHERE status = 'active';

-- Work for the alert job: a customer whose usage on a meter, or whose
-- credit balance, changed. Each changing transaction writes its own rows
-- (never waiting on another's), so a crash loses no check and a check
-- commits with the change it stands for; the job claims and deletes them in
-- its transaction together with any firing, one evaluation per customer
-- and subject however many rows. A credit check carries the balance before
-- its debit.
CREATE TABLE alert_checks (
    id            text PRIMARY KEY,
    merchant_id   text NOT NULL,
    mode          text NOT NULL CHECK (mode IN ('test', 'live')),
    customer_id   text NOT NULL,
    -- a meter id, or 'credits' for the credit balance.
    subject       text NOT NULL,
    prev_balance  numeric(39, 0),
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- Whether a customer's balance was last seen below a balance alert's
-- threshold: a drop below fires only from above.
CREATE TABLE alert_balance_states (
    merchant_id  text NOT NULL,
    alert_id     text NOT NULL,
    customer_id  text NOT NULL,
    below        boolean NOT NULL,
    crossings    bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (merchant_id, alert_id, customer_id)
);

-- One row per firing: the primary key is what makes an alert fire once per
-- customer (or subscription) and period, or per balance crossing, however
-- many workers race.
CREATE TABLE alert_firings (
    merchant_id  text NOT NULL,
    mode         text NOT NULL CHECK (mode IN ('test', 'live')),
    alert_id     text NOT NULL,
    -- the customer, or the subscription for spend alerts.
    subject      text NOT NULL,
    -- the period's start, or the crossing's number for a balance.
    period_key   text NOT NULL,
    event_id     text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, alert_id, subject, period_key)
);
