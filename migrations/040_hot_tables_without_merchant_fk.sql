-- The tables written on every request lose their foreign key to merchants,
-- as meter_events and meter_event_keys never had one. The key check costs
-- each inserted row a trigger and a FOR KEY SHARE lock on the merchant's
-- one row, which concurrent writers of one merchant share through a
-- MultiXact: on an invoice create it was a sixth of the INSERT's time. A
-- merchant is never deleted, and every row's merchant_id comes from an
-- authenticated key or from a row that already carries it. Tables written
-- rarely (keys, endpoints, meters, features, plans, wallets, OAuth) keep
-- theirs.
ALTER TABLE invoices DROP CONSTRAINT invoices_merchant_id_fkey;
ALTER TABLE payments DROP CONSTRAINT payments_merchant_id_fkey;
ALTER TABLE subscriptions DROP CONSTRAINT subscriptions_merchant_id_fkey;
ALTER TABLE refunds DROP CONSTRAINT refunds_merchant_id_fkey;
ALTER TABLE events DROP CONSTRAINT events_merchant_id_fkey;
ALTER TABLE customers DROP CONSTRAINT customers_merchant_id_fkey;
ALTER TABLE usage_windows DROP CONSTRAINT usage_windows_merchant_id_fkey;
ALTER TABLE credit_accounts DROP CONSTRAINT credit_accounts_merchant_id_fkey;
ALTER TABLE credit_operations DROP CONSTRAINT credit_operations_merchant_id_fkey;
ALTER TABLE credit_entries DROP CONSTRAINT credit_entries_merchant_id_fkey;
ALTER TABLE credit_grant_balances DROP CONSTRAINT credit_grant_balances_merchant_id_fkey;
ALTER TABLE entitlement_grants DROP CONSTRAINT entitlement_grants_merchant_id_fkey;
ALTER TABLE entitlements DROP CONSTRAINT entitlements_merchant_id_fkey;
