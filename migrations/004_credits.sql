-- Prepaid credits: one account per customer, an append-only ledger, and two
-- projections kept in the same transaction as the entries they summarise.
--
--   credit_operations  one row per grant or debit request (the result a
--                      replay returns; idempotency keys live here)
--   credit_entries     the ledger: signed amounts, one entry per grant
--                      touched; balance = sum of an account's entries
--   credit_accounts    projection: balance, lifetime granted and consumed,
--                      and debt (what allow_negative debits took beyond the
--                      grants, repaid first by the next grants)
--   credit_grant_balances  projection: what is left of each grant
--
-- The ledger tables refuse UPDATE, DELETE and TRUNCATE (trigger below), so a
-- balance can always be re-derived from what was written.

CREATE TABLE credit_accounts (
    merchant_id  text NOT NULL REFERENCES merchants (id),
    mode         text NOT NULL CHECK (mode IN ('test', 'live')),
    id           text NOT NULL,
    customer_id  text NOT NULL,
    balance      numeric(39, 0) NOT NULL DEFAULT 0,
    granted      numeric(39, 0) NOT NULL DEFAULT 0 CHECK (granted >= 0),
    consumed     numeric(39, 0) NOT NULL DEFAULT 0 CHECK (consumed >= 0),
    debt         numeric(39, 0) NOT NULL DEFAULT 0 CHECK (debt >= 0),
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id),
    CONSTRAINT credit_accounts_customer UNIQUE (merchant_id, mode, customer_id),
    FOREIGN KEY (merchant_id, customer_id) REFERENCES customers (merchant_id, id)
);

CREATE TABLE credit_operations (
    merchant_id      text NOT NULL REFERENCES merchants (id),
    mode             text NOT NULL CHECK (mode IN ('test', 'live')),
    id               text NOT NULL,
    seq              bigint GENERATED ALWAYS AS IDENTITY,
    account_id       text NOT NULL,
    customer_id      text NOT NULL,
    kind             text NOT NULL CHECK (kind IN ('grant', 'debit')),
    -- granted, or requested for a debit.
    amount           numeric(39, 0) NOT NULL CHECK (amount > 0),
    -- what the debit covered (= amount for a grant); shortfall = amount - covered.
    covered          numeric(39, 0) NOT NULL CHECK (covered >= 0 AND covered <= amount),
    -- the balance right after the operation.
    balance          numeric(39, 0) NOT NULL,
    -- a grant's ledger entry.
    entry_id         text,
    reason           text NOT NULL,
    allow_negative   boolean NOT NULL DEFAULT false,
    expires_at       timestamptz,
    idempotency_key  text,
    created_at       timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, id),
    FOREIGN KEY (merchant_id, account_id) REFERENCES credit_accounts (merchant_id, id)
);
-- One namespace per merchant and mode for grant and debit keys.
CREATE UNIQUE INDEX credit_operations_key ON credit_operations (merchant_id, mode, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

CREATE TABLE credit_entries (
    merchant_id   text NOT NULL REFERENCES merchants (id),
    mode          text NOT NULL CHECK (mode IN ('test', 'live')),
    id            text NOT NULL,
    seq           bigint GENERATED ALWAYS AS IDENTITY,
    account_id    text NOT NULL,
    -- the request that wrote it; NULL for expiry entries.
    operation_id  text,
    kind          text NOT NULL CHECK (kind IN ('grant', 'debit', 'expiry')),
    -- signed: positive for a grant, negative for a debit or an expiry.
    amount        numeric(39, 0) NOT NULL CHECK (amount <> 0),
    -- the grant a debit or expiry draws from (a grant entry's id); NULL for
    -- grants and for the part of an allow_negative debit beyond the grants.
    grant_id      text,
    -- grant entries: when the grant expires, and how much of it repaid debt
    -- at once (so a grant's remainder is amount - settled + its draws).
    expires_at    timestamptz,
    settled       numeric(39, 0) NOT NULL DEFAULT 0 CHECK (settled >= 0),
    -- when the entry changes the balance: created_at, except an expiry,
    -- which takes effect at the grant's expires_at even if written later.
    effective_at  timestamptz NOT NULL,
    created_at    timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, id),
    FOREIGN KEY (merchant_id, account_id) REFERENCES credit_accounts (merchant_id, id),
    CHECK ((kind = 'grant') = (amount > 0)),
    CHECK (kind <> 'expiry' OR grant_id IS NOT NULL)
);
CREATE INDEX credit_entries_account ON credit_entries (merchant_id, account_id, seq);
-- A grant expires once: two sweeping replicas can never both write it.
CREATE UNIQUE INDEX credit_entries_expiry ON credit_entries (merchant_id, grant_id) WHERE kind = 'expiry';

CREATE TABLE credit_grant_balances (
    merchant_id  text NOT NULL REFERENCES merchants (id),
    mode         text NOT NULL CHECK (mode IN ('test', 'live')),
    grant_id     text NOT NULL,
    account_id   text NOT NULL,
    amount       numeric(39, 0) NOT NULL CHECK (amount > 0),
    remaining    numeric(39, 0) NOT NULL CHECK (remaining >= 0 AND remaining <= amount),
    expires_at   timestamptz,
    -- the grant entry's seq: oldest first among grants expiring together.
    seq          bigint NOT NULL,
    PRIMARY KEY (merchant_id, grant_id),
    FOREIGN KEY (merchant_id, account_id) REFERENCES credit_accounts (merchant_id, id)
);
-- Drawing order: soonest expiry first, never-expiring last, then oldest.
CREATE INDEX credit_grant_balances_draw ON credit_grant_balances (merchant_id, account_id, expires_at NULLS LAST, seq)
    WHERE remaining > 0;
-- The expiry sweep's work list.
CREATE INDEX credit_grant_balances_due ON credit_grant_balances (expires_at)
    WHERE remaining > 0 AND expires_at IS NOT NULL;

CREATE FUNCTION credit_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the credit ledger is append-only: % on % is not allowed', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation';
END
$$;

CREATE TRIGGER credit_entries_append_only BEFORE UPDATE OR DELETE ON credit_entries
    FOR EACH ROW EXECUTE FUNCTION credit_ledger_append_only();
CREATE TRIGGER credit_entries_no_truncate BEFORE TRUNCATE ON credit_entries
    FOR EACH STATEMENT EXECUTE FUNCTION credit_ledger_append_only();
CREATE TRIGGER credit_operations_append_only BEFORE UPDATE OR DELETE ON credit_operations
    FOR EACH ROW EXECUTE FUNCTION credit_ledger_append_only();
CREATE TRIGGER credit_operations_no_truncate BEFORE TRUNCATE ON credit_operations
    FOR EACH STATEMENT EXECUTE FUNCTION credit_ledger_append_only();
