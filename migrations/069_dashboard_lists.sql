-- The dashboard lists a merchant's customers newest first, paged by the
-- same (created_at, seq) cursor as every other list: customers get the
-- tiebreak the other tables have, and the list its index. The index leaves
-- mode out (the list filters it): led by (merchant_id, mode) it would tie
-- in cost with customers_external on a table without statistics, and as
-- the newer index win the generic plans of the hot external-id probes
-- (meter events, credits), which would then walk a merchant's customers.
ALTER TABLE customers ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY;
CREATE INDEX customers_list ON customers (merchant_id, created_at DESC, seq DESC);

-- A subscription's page lists its payments without reading the
-- merchant's others.
CREATE INDEX payments_subscription ON payments (merchant_id, mode, subscription_id, created_at DESC, seq DESC)
    WHERE subscription_id IS NOT NULL;
