-- The live rail (internal/chainrail): one row per money-path operation it
-- was asked to carry out on chain, under the rail request's key. The
-- relayer's chain_intents hold the transactions; this row says whose money
-- it is (merchant and mode), what it pays for, and whether the money path
-- has recorded its outcome (payment and invoice.paid, subscription
-- activation, refund.succeeded) yet: the settlement worker records each
-- final row exactly once, in the transaction that sets recorded_at.
CREATE TABLE chain_settlements (
    merchant_id   text NOT NULL,
    mode          text NOT NULL CHECK (mode IN ('test', 'live')),
    key           text NOT NULL,
    chain_id      bigint NOT NULL,
    -- The relayer's idempotency key (merchant and mode prefix the rail's).
    relayer_key   text NOT NULL,
    kind          text NOT NULL CHECK (kind IN ('pay', 'activate', 'charge', 'refund')),
    -- As rail.Request.Nonce: the invoice (pay), the authorization's key
    -- (activate, charge), the refunded settlement's key (refund).
    nonce         text NOT NULL,
    payer         text NOT NULL,
    payee         text NOT NULL,
    amount        numeric(39, 0) NOT NULL CHECK (amount >= 0),
    -- activate: {"plan_id", "customer_id"} of the subscription to create.
    subject       jsonb NOT NULL DEFAULT '{}',
    -- activate: the signed on-chain plan later charges draw on, and its id
    -- (lowercase 0x hex) as PlanManager events name it.
    plan          jsonb,
    plan_id       text,
    status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
    reason        text,
    tx_hash       text,
    requested_at  timestamptz NOT NULL,
    settled_at    timestamptz,
    recorded_at   timestamptz,
    PRIMARY KEY (merchant_id, mode, key)
);
-- The worker's list: rows whose outcome the money path has not recorded.
CREATE INDEX chain_settlements_unrecorded ON chain_settlements (requested_at) WHERE recorded_at IS NULL;
-- An invoice has one live payment in flight or done: a second payer's
-- authorization for it is refused while the first may still settle.
CREATE UNIQUE INDEX chain_settlements_one_payment ON chain_settlements (merchant_id, mode, nonce)
    WHERE kind = 'pay' AND status IN ('pending', 'succeeded');
CREATE INDEX chain_settlements_plan ON chain_settlements (plan_id) WHERE plan_id IS NOT NULL;
CREATE INDEX chain_settlements_payer ON chain_settlements (payer) WHERE kind = 'activate';
