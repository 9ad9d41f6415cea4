-- Trials: a plan may start its subscriptions with free days. A trialing
-- subscription is live (it holds the plan's features and blocks a second
-- checkout of the plan) until trial_end, when its first period starts.
ALTER TABLE plans
    ADD COLUMN trial_days integer CHECK (trial_days BETWEEN 1 AND 730);
ALTER TABLE subscriptions
    ADD COLUMN trial_end timestamptz,
    DROP CONSTRAINT subscriptions_status,
    ADD CONSTRAINT subscriptions_status CHECK (status IN ('trialing', 'active', 'past_due', 'canceled', 'revoked', 'expired'));
-- One live subscription per customer and plan, a trialing one included.
DROP INDEX subscriptions_live;
CREATE UNIQUE INDEX subscriptions_live ON subscriptions (merchant_id, mode, plan_id, customer_id)
    WHERE status IN ('trialing', 'active', 'past_due');
