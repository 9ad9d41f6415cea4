-- The money path: products and plans, payments of
-- invoices and subscriptions, subscriptions and their billing state,
-- refunds, and the test-mode settlement rail's ledger.

CREATE TABLE products (
    merchant_id  text NOT NULL REFERENCES merchants (id),
    mode         text NOT NULL CHECK (mode IN ('test', 'live')),
    id           text NOT NULL,
    name         text NOT NULL,
    description  text,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, id)
);

-- A plan is a price of a product (price_ ids). Plans are create-only; the
-- checkout page reads them by id across merchants (ids are unguessable).
CREATE TABLE plans (
    merchant_id    text NOT NULL REFERENCES merchants (id),
    mode           text NOT NULL CHECK (mode IN ('test', 'live')),
    id             text NOT NULL,
    seq            bigint GENERATED ALWAYS AS IDENTITY,
    product_id     text NOT NULL,
    -- per period; for metered plans the per-period cap.
    amount         numeric(39, 0) NOT NULL CHECK (amount >= 1000000),
    interval       text NOT NULL CHECK (interval IN ('week', 'biweekly', 'month', 'year', 'custom')),
    interval_days  integer CHECK (interval_days BETWEEN 1 AND 365),
    usage_type     text NOT NULL CHECK (usage_type IN ('licensed', 'metered')),
    meter_id       text,
    pricing_model  jsonb,
    -- [{"feature_key": K, "limit_value": N|null}]
    features       jsonb NOT NULL DEFAULT '[]',
    created_at     timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, id),
    FOREIGN KEY (merchant_id, product_id) REFERENCES products (merchant_id, id),
    CHECK ((usage_type = 'metered') = (meter_id IS NOT NULL AND pricing_model IS NOT NULL)),
    CHECK ((interval = 'custom') = (interval_days IS NOT NULL))
);
CREATE UNIQUE INDEX plans_id ON plans (id);

-- Invoices: paid (with the payment) or void; the payee is the merchant's
-- settlement wallet when the invoice was created.
ALTER TABLE invoices
    ADD COLUMN payee       text,
    ADD COLUMN paid_at     timestamptz,
    ADD COLUMN payment_id  text,
    ADD COLUMN voided_at   timestamptz,
    ADD CONSTRAINT invoices_status CHECK (status IN ('open', 'paid', 'void'));

-- Payments: confirmed settlements of an invoice or a subscription charge.
ALTER TABLE payments
    ADD COLUMN customer_id      text,
    ADD COLUMN payee            text,
    ADD COLUMN network          text NOT NULL DEFAULT 'test',
    ADD COLUMN amount_refunded  numeric(39, 0) NOT NULL DEFAULT 0,
    ADD COLUMN confirmed_at     timestamptz,
    ADD COLUMN period_start     timestamptz,
    ADD COLUMN period_end       timestamptz,
    -- how a metered charge was computed
    ADD COLUMN lines            jsonb,
    -- the rail settlement this payment records: one payment per settlement
    ADD COLUMN settlement_key   text,
    ADD CONSTRAINT payments_status CHECK (status IN ('succeeded', 'partially_refunded', 'refunded')),
    ADD CONSTRAINT payments_refunded CHECK (amount_refunded >= 0 AND amount_refunded <= amount);
CREATE UNIQUE INDEX payments_id ON payments (id);
CREATE UNIQUE INDEX payments_settlement ON payments (merchant_id, mode, settlement_key);

-- Subscriptions: the plan's terms are copied at checkout, so a subscription
-- bills as it was sold. Periods are computed from the anchor (calendar
-- months anchored on the start). next_action_at is when the billing job must
-- next act (renew, retry, expire), by the merchant's clock; NULL once ended.
ALTER TABLE subscriptions
    ADD COLUMN product_id         text,
    ADD COLUMN payer              text,
    ADD COLUMN usage_type         text,
    ADD COLUMN amount             numeric(39, 0),
    ADD COLUMN interval           text,
    ADD COLUMN interval_days      integer,
    ADD COLUMN meter_id           text,
    ADD COLUMN pricing_model      jsonb,
    ADD COLUMN anchor             timestamptz,
    ADD COLUMN period_index       integer NOT NULL DEFAULT 0,
    ADD COLUMN cancel_at          timestamptz,
    ADD COLUMN ended_at           timestamptz,
    ADD COLUMN latest_payment_id  text,
    ADD COLUMN next_action_at     timestamptz,
    -- dunning: when the outstanding charge first failed, retries made, and
    -- the charge being collected (a metered period's rating is kept, so a
    -- retry charges what was rated)
    ADD COLUMN failed_at           timestamptz,
    ADD COLUMN retries             integer NOT NULL DEFAULT 0,
    ADD COLUMN outstanding_amount  numeric(39, 0),
    ADD COLUMN outstanding_lines   jsonb,
    ADD COLUMN outstanding_start   timestamptz,
    ADD COLUMN outstanding_end     timestamptz,
    -- the rail authorization charges draw on (the first charge's settlement key)
    ADD COLUMN authorization_key  text,
    ADD CONSTRAINT subscriptions_status CHECK (status IN ('active', 'past_due', 'canceled', 'revoked', 'expired'));
CREATE UNIQUE INDEX subscriptions_id ON subscriptions (id);
-- One live subscription per customer and plan.
CREATE UNIQUE INDEX subscriptions_live ON subscriptions (merchant_id, mode, plan_id, customer_id)
    WHERE status IN ('active', 'past_due');
-- The billing job's work list (across merchants, like the delivery queue).
CREATE INDEX subscriptions_due ON subscriptions (next_action_at) WHERE next_action_at IS NOT NULL;
CREATE INDEX subscriptions_customer ON subscriptions (merchant_id, mode, customer_id, created_at DESC, seq DESC);

CREATE TABLE refunds (
    merchant_id     text NOT NULL REFERENCES merchants (id),
    mode            text NOT NULL CHECK (mode IN ('test', 'live')),
    id              text NOT NULL,
    seq             bigint GENERATED ALWAYS AS IDENTITY,
    payment_id      text NOT NULL,
    amount          numeric(39, 0) NOT NULL CHECK (amount > 0),
    reason          text,
    status          text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
    tx_hash         text,
    settlement_key  text NOT NULL,
    created_at      timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, id)
);
CREATE UNIQUE INDEX refunds_id ON refunds (id);
CREATE UNIQUE INDEX refunds_settlement ON refunds (merchant_id, mode, settlement_key);

-- The test-mode rail: a deterministic settlement ledger kept in PostgreSQL,
-- so restarts and replicas agree. One row per operation key; the same key
-- always answers the same settlement.
CREATE TABLE rail_settlements (
    merchant_id  text NOT NULL,
    mode         text NOT NULL CHECK (mode IN ('test', 'live')),
    key          text NOT NULL,
    kind         text NOT NULL CHECK (kind IN ('pay', 'activate', 'charge', 'refund')),
    -- pay: the invoice id; activate and charge: the authorization (the
    -- activation's key); refund: the refunded settlement's key.
    nonce        text NOT NULL,
    payer        text NOT NULL,
    payee        text NOT NULL,
    amount       numeric(39, 0) NOT NULL CHECK (amount >= 0),
    status       text NOT NULL CHECK (status IN ('succeeded', 'failed')),
    reason       text,
    tx_hash      text NOT NULL,
    settled_at   timestamptz NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, mode, key)
);
-- An invoice can be paid once: one succeeded pay per nonce.
CREATE UNIQUE INDEX rail_settlements_paid ON rail_settlements (merchant_id, mode, nonce) WHERE kind = 'pay' AND status = 'succeeded';
CREATE INDEX rail_settlements_nonce ON rail_settlements (merchant_id, mode, nonce, created_at);

-- Entitlements a plan grants follow their subscription: its grants are
-- found by subscription.
ALTER TABLE entitlement_grants ADD COLUMN subscription_id text;
CREATE INDEX entitlement_grants_subscription ON entitlement_grants (merchant_id, subscription_id) WHERE subscription_id IS NOT NULL;
