-- The billing engine claims one merchant's subscriptions of one mode at a
-- time, oldest due first, up to that scope's clock (the wall clock, or a
-- test clock ahead of it). subscriptions_scope_due holds exactly those rows
-- in that order, so a claim reads the rows it takes and stops at its limit,
-- however many subscriptions are stored, of that merchant or of others. It
-- replaces the index on (merchant_id, next_action_at), which left the mode
-- to a filter.
--
-- The due index without merchant_id serves the reads that span merchants
-- (which merchants have work; when the next falls due). On next_action_at
-- itself, it tied in cost with the scope's index for the claims, and won
-- them: a claim then walked every merchant's subscriptions due up to its
-- time, all of them for a test clock far ahead. Keyed by the same instant
-- as a UTC timestamp, in the same order, it serves only the statements
-- written against that expression.
CREATE INDEX subscriptions_scope_due ON subscriptions (merchant_id, mode, next_action_at)
    WHERE next_action_at IS NOT NULL;
DROP INDEX subscriptions_merchant_due;
DROP INDEX subscriptions_due;
CREATE INDEX subscriptions_due ON subscriptions ((next_action_at AT TIME ZONE 'UTC'))
    WHERE next_action_at IS NOT NULL;
