-- Idempotency-Key records: the first answer to a keyed create or change,
-- written in the transaction of the write itself, so a request whose
-- answer was lost (a 503 after its commit, a dropped connection) finds it
-- when it is retried with the same key. Scoped per merchant, mode and
-- operation; fingerprint is a hash of the request's parameters, which a
-- reuse of the key must match. Meter events and credit grants and debits
-- keep their keys with their rows, as before.
CREATE TABLE idempotency_keys (
    merchant_id text NOT NULL,
    mode text NOT NULL,
    operation text NOT NULL,
    key text NOT NULL,
    fingerprint bytea NOT NULL,
    status integer NOT NULL DEFAULT 0,
    body bytea NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, mode, operation, key)
);
