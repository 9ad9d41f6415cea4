-- The customer list seeks the merchant's customers of one mode instead of
-- walking both modes' and filtering: a merchant with a million live
-- customers and a handful in test mode read every live one for test
-- mode's first page. One index per mode, partial on it, in place of the
-- one without mode. Partial, not led by (merchant_id, mode): such an index
-- ties in cost with customers_external on a table without statistics and,
-- as the newer index, wins the generic plans of the hot external-id probes
-- (which pass the mode as a parameter, so they cannot match a partial
-- index). The list names its mode as a literal to match one.
CREATE INDEX customers_list_test ON customers (merchant_id, created_at DESC, seq DESC) WHERE mode = 'test';
CREATE INDEX customers_list_live ON customers (merchant_id, created_at DESC, seq DESC) WHERE mode = 'live';
DROP INDEX customers_list;
