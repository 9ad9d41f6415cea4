-- Every key of a merchant table leads with merchant_id, so the table can be
-- spread over database nodes by merchant (a distributed table's unique
-- indexes must contain its distribution column). The tables that stay
-- global (API keys, OAuth, dashboard users and their sessions) are listed
-- in the test that checks this.

-- An alert check is claimed within its merchant.
ALTER TABLE alert_checks DROP CONSTRAINT alert_checks_pkey;
ALTER TABLE alert_checks ADD PRIMARY KEY (merchant_id, id);

-- Ids are random and unique by construction; the indexes on id alone stay
-- for the lookups that start from an id (a checkout or portal page), but no
-- longer as unique indexes.
DROP INDEX invoices_id;
CREATE INDEX invoices_id ON invoices (id);
DROP INDEX entitlement_grants_id;
CREATE INDEX entitlement_grants_id ON entitlement_grants (id);
DROP INDEX plans_id;
CREATE INDEX plans_id ON plans (id);
DROP INDEX payments_id;
CREATE INDEX payments_id ON payments (id);
DROP INDEX subscriptions_id;
CREATE INDEX subscriptions_id ON subscriptions (id);
DROP INDEX refunds_id;
CREATE INDEX refunds_id ON refunds (id);
DROP INDEX webhook_endpoints_id;
CREATE INDEX webhook_endpoints_id ON webhook_endpoints (id);

-- A portal link is found by its token's hash (random, 32 bytes) before its
-- merchant is known.
DROP INDEX portal_sessions_token;
CREATE INDEX portal_sessions_token ON portal_sessions (token_hash);

-- The delivery queue stays one table (not partitioned); its rows are found
-- by merchant and id.
DROP INDEX webhook_deliveries_id;
CREATE INDEX webhook_deliveries_id ON webhook_deliveries (id);
