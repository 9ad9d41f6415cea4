-- Test mode's event feed is ordered by the time it shows, the merchant's
-- test clock (occurred_at), so that the events of a clock advance sit at
-- the times they fell due and cursors mean what a reader sees. Live mode's
-- stays on events_list (its two times are one). Partial, so live events
-- pay for no second index.
CREATE INDEX events_test_feed ON events (merchant_id, occurred_at DESC, seq DESC) WHERE mode = 'test';
