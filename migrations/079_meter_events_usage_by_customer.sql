-- Every event adds an entry to the usage index, and every reader of it
-- names the customer and the meter. Led by merchant_id and mode, which one
-- merchant's events all share, each comparison on the way down walked past
-- those two columns before reaching one that differs, and each entry
-- carried them. Customer ids are unique across merchants and modes, so
-- the index leads with the customer; readers still say merchant and mode,
-- now checked on the rows the index finds. An index that enforces nothing
-- (no key, no unique constraint) need not lead with merchant_id to be
-- spread over nodes by it.
--
-- Dropping the partitioned index drops each partition's; the new one is
-- built on every partition, under a lock that holds writes for as long.
DROP INDEX meter_events_usage;
CREATE INDEX meter_events_usage ON meter_events (customer_id, meter_id, event_timestamp);
