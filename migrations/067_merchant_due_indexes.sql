-- The periodic work (renewals, credit expiry, alert checks) finds the
-- merchants with something due by a read that locks nothing, then claims
-- each merchant's rows with a statement filtered on that merchant: these
-- indexes serve those claims, as the due indexes without merchant_id serve
-- the first read.
CREATE INDEX subscriptions_merchant_due ON subscriptions (merchant_id, next_action_at)
    WHERE next_action_at IS NOT NULL;
CREATE INDEX credit_grant_balances_merchant_due ON credit_grant_balances (merchant_id, mode, expires_at)
    WHERE remaining > 0 AND expires_at IS NOT NULL;
