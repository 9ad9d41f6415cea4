-- The merchant dashboard: its users, their setup links, sign-in failures,
-- sessions, and the audit log of every change made from it or by `admin`.

-- A dashboard user belongs to one merchant and sees both of its modes.
-- An email is unique per merchant, compared case-insensitively; the same
-- address may be a user of several merchants.
CREATE TABLE dashboard_users (
    merchant_id    text NOT NULL REFERENCES merchants (id),
    id             text NOT NULL,
    email          text NOT NULL,
    -- argon2id in PHC form; NULL until the setup link is used.
    password_hash  text,
    -- RFC 6238 secret once enrolled; a pending one waits for its first code.
    totp_secret    bytea,
    totp_pending   bytea,
    -- the last time step a code was accepted for: a code is never used twice.
    totp_last_step bigint,
    created_at     timestamptz NOT NULL DEFAULT now(),
    disabled_at    timestamptz,
    PRIMARY KEY (merchant_id, id)
);
CREATE UNIQUE INDEX dashboard_users_email ON dashboard_users (merchant_id, lower(email));
-- Sign-in knows only the email: like an API key's hash, the one lookup
-- across merchants.
CREATE INDEX dashboard_users_sign_in ON dashboard_users (lower(email));

-- Single-use setup links: only a SHA-256 of the token is stored.
CREATE TABLE dashboard_setup_tokens (
    token_hash  bytea PRIMARY KEY,
    merchant_id text NOT NULL,
    user_id     text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz,
    FOREIGN KEY (merchant_id, user_id) REFERENCES dashboard_users (merchant_id, id)
);
CREATE INDEX dashboard_setup_tokens_user ON dashboard_setup_tokens (merchant_id, user_id);

-- Failed (and in-flight) sign-ins per lowercased email, whether or not a
-- user has it, for the lockout. Not merchant data: an email may be no
-- merchant's, or several merchants'.
CREATE TABLE dashboard_sign_in_failures (
    email_key  text NOT NULL,
    id         text NOT NULL,
    failed_at  timestamptz NOT NULL,
    PRIMARY KEY (email_key, id)
);
CREATE INDEX dashboard_sign_in_failures_recent ON dashboard_sign_in_failures (email_key, failed_at);
CREATE TABLE dashboard_sign_in_locks (
    email_key    text PRIMARY KEY,
    locked_until timestamptz NOT NULL
);

-- Sessions: only a SHA-256 of the 256-bit token is stored. The mode is the
-- dashboard's test/live switch.
CREATE TABLE dashboard_sessions (
    token_hash   bytea PRIMARY KEY,
    merchant_id  text NOT NULL,
    user_id      text NOT NULL,
    mode         text NOT NULL DEFAULT 'test' CHECK (mode IN ('test', 'live')),
    created_at   timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    ended_at     timestamptz,
    FOREIGN KEY (merchant_id, user_id) REFERENCES dashboard_users (merchant_id, id)
);
CREATE INDEX dashboard_sessions_user ON dashboard_sessions (merchant_id, user_id) WHERE ended_at IS NULL;

-- The audit log is append-only: the database refuses UPDATE, DELETE and
-- TRUNCATE, as it does for the credit ledger. merchant_id is '' for a
-- change that concerns no merchant (a sign-in failure for an unknown email,
-- an OAuth client).
CREATE TABLE audit_log (
    merchant_id text NOT NULL,
    id          text NOT NULL,
    seq         bigint GENERATED ALWAYS AS IDENTITY,
    mode        text CHECK (mode IN ('test', 'live')),
    -- usr_… for a dashboard user, 'admin' for the admin commands.
    actor       text NOT NULL,
    ip          text NOT NULL DEFAULT '',
    action      text NOT NULL,
    target      text NOT NULL DEFAULT '',
    detail      text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    PRIMARY KEY (merchant_id, id)
);
CREATE INDEX audit_log_list ON audit_log (merchant_id, created_at DESC, seq DESC);
CREATE INDEX audit_log_all ON audit_log (created_at DESC, seq DESC);

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the audit log is append-only: % on % is not allowed', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation';
END
$$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
