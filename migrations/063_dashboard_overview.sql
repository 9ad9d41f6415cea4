-- When each API key was last used, to the minute: the dashboard shows it,
-- so a merchant can tell a key in use from one that can be revoked.
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;

-- The dashboard overview counts a merchant's failed subscription charges
-- of the last 30 days (by the time events show: the test clock in test
-- mode) without reading its other events.
CREATE INDEX events_payment_failed ON events (merchant_id, mode, occurred_at)
    WHERE type = 'subscription.payment_failed';
