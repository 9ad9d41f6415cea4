-- Plan changes: a change waiting for the period's end, what the payer
-- authorized per period, and a counter of immediate changes (the key of a
-- proration charge, so a retry after a crash settles under the same key).
ALTER TABLE subscriptions
    ADD COLUMN pending_plan_id    text,
    ADD COLUMN pending_change_at  timestamptz,
    -- NULL until the first change: the payer authorized the amount the
    -- subscription was sold at, which is its amount until a change.
    ADD COLUMN authorized_amount  numeric(39, 0),
    ADD COLUMN changes            integer NOT NULL DEFAULT 0,
    ADD CONSTRAINT subscriptions_pending CHECK ((pending_plan_id IS NULL) = (pending_change_at IS NULL));
-- A plan's subscribers, in order, for a plan migration's batches.
CREATE INDEX subscriptions_by_plan ON subscriptions (merchant_id, mode, plan_id, seq);
