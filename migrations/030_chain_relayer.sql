-- The on-chain relayer (internal/chain/relayer). Operator-level, not merchant
-- data: one relayer key pays gas for every merchant, so these rows carry no
-- (merchant_id, mode); the idempotency key the live rail chooses names the
-- merchant's object. Addresses and hashes are lowercase 0x hex.

-- One row per call to carry out: what to send, and where it stands.
CREATE TABLE chain_intents (
    chain_id           bigint NOT NULL,
    idempotency_key    text NOT NULL,
    sender             text NOT NULL,
    -- NULL when someone else's transaction carried the authorization out
    -- and we never signed one.
    nonce              bigint,
    to_address         text NOT NULL,
    data               bytea NOT NULL,
    gas_limit          bigint NOT NULL,
    -- Transfer logs the receipt must hold: [{"token","from","to","value"}].
    expect             jsonb NOT NULL DEFAULT '[]',
    -- The EIP-3009 authorization the call uses: {"token","authorizer","nonce"}.
    authorization_ref  jsonb,
    -- Reconciliation searches logs from this block (the head at submit).
    search_from        bigint NOT NULL,
    status             text NOT NULL DEFAULT 'pending'
                       CHECK (status IN ('pending', 'mined', 'confirmed', 'reverted', 'failed')),
    -- The transaction that carried the call out (ours, or another relayer's).
    tx_hash            text,
    block_number       bigint,
    block_hash         text,
    confirmations      bigint NOT NULL DEFAULT 0,
    failure            text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chain_id, idempotency_key),
    CONSTRAINT chain_intents_nonce UNIQUE (chain_id, sender, nonce)
);
CREATE INDEX chain_intents_open ON chain_intents (chain_id, sender, nonce) WHERE status IN ('pending', 'mined');

-- Every signed transaction, stored BEFORE it is broadcast: a restarted
-- relayer rebroadcasts these bytes instead of signing again. Replacements
-- (same nonce, higher tip) are further attempts of the same intent.
CREATE TABLE chain_transactions (
    chain_id          bigint NOT NULL,
    hash              text NOT NULL,
    idempotency_key   text NOT NULL,
    attempt           integer NOT NULL,
    nonce             bigint NOT NULL,
    raw               bytea NOT NULL,
    gas_tip_cap       numeric NOT NULL,
    gas_fee_cap       numeric NOT NULL,
    broadcast_at      timestamptz,
    broadcast_block   bigint,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (chain_id, hash),
    CONSTRAINT chain_transactions_attempt UNIQUE (chain_id, idempotency_key, attempt),
    FOREIGN KEY (chain_id, idempotency_key) REFERENCES chain_intents (chain_id, idempotency_key)
);
