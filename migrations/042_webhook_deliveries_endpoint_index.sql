-- Deliveries by endpoint are found by the endpoint's id alone (ids are
-- unique across merchants; every query also names the merchant). Led by
-- merchant_id, this index tied on a table without statistics with the keys
-- the delivery workers look rows up by, (merchant_id, id), and was picked
-- for them, the most recently made: each attempt's record, and the foreign
-- key check of its attempt row, then walked every delivery of the merchant
-- (1.5 ms and 0.6 ms a delivery in the shared harness, growing with the
-- table) until autovacuum first analysed it.
DROP INDEX webhook_deliveries_endpoint;
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC);
