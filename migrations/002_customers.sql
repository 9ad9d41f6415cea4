-- Customers: referenced by the service's cus_ id or upserted from the
-- merchant's own external_customer_id (unique per merchant and mode).
CREATE TABLE customers (
    merchant_id           text NOT NULL REFERENCES merchants (id),
    mode                  text NOT NULL CHECK (mode IN ('test', 'live')),
    id                    text NOT NULL,
    external_customer_id  text,
    created_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id),
    CONSTRAINT customers_external UNIQUE (merchant_id, mode, external_customer_id)
);
