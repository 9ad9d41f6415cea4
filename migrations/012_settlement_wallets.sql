-- Settlement wallets: where a merchant's payments go, per mode. A wallet is
-- set only with the wallet's own signature (EIP-191 personal_sign) over a
-- single-use challenge, never over the API, and every wallet a
-- merchant ever had is kept with its times.

-- A challenge is the exact message the wallet signs. Only a merchant's
-- newest challenge for an address counts; it expires 10 minutes after it
-- was issued and is used at most once.
CREATE TABLE wallet_challenges (
    merchant_id  text NOT NULL REFERENCES merchants (id),
    mode         text NOT NULL CHECK (mode IN ('test', 'live')),
    id           text NOT NULL,
    seq          bigint GENERATED ALWAYS AS IDENTITY,
    -- EIP-55 checksummed form, so lookups compare equal strings.
    address      text NOT NULL CHECK (address ~ '^0x[0-9a-fA-F]{40}$'),
    message      text NOT NULL,
    issued_at    timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL CHECK (expires_at > issued_at),
    used_at      timestamptz,
    PRIMARY KEY (merchant_id, id)
);
CREATE INDEX wallet_challenges_newest ON wallet_challenges (merchant_id, mode, address, issued_at DESC, seq DESC);

-- One row per wallet a merchant set in a mode; the current one has no
-- replaced_at. The challenge and the signature are the merchant's proof of
-- consent, kept for audits.
CREATE TABLE settlement_wallets (
    merchant_id   text NOT NULL REFERENCES merchants (id),
    mode          text NOT NULL CHECK (mode IN ('test', 'live')),
    id            text NOT NULL,
    seq           bigint GENERATED ALWAYS AS IDENTITY,
    address       text NOT NULL CHECK (address ~ '^0x[0-9a-fA-F]{40}$'),
    challenge_id  text NOT NULL,
    signature     bytea NOT NULL,
    verified_at   timestamptz NOT NULL,
    replaced_at   timestamptz,
    PRIMARY KEY (merchant_id, id),
    FOREIGN KEY (merchant_id, challenge_id) REFERENCES wallet_challenges (merchant_id, id)
);
CREATE UNIQUE INDEX settlement_wallets_current ON settlement_wallets (merchant_id, mode) WHERE replaced_at IS NULL;
CREATE INDEX settlement_wallets_history ON settlement_wallets (merchant_id, mode, seq DESC);
