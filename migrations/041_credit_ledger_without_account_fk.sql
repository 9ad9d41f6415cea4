-- The credit ledger's rows lose their foreign key to credit_accounts, as
-- they lost the one to merchants in 040. Every operation, entry and grant
-- remainder is written in the transaction that holds its account's row
-- FOR UPDATE, with the account_id of that locked row, and accounts are
-- never deleted; yet each inserted row still ran an RI trigger that took
-- FOR KEY SHARE on the account it had already locked: about 30 µs a row,
-- a third of the credits batch's write statement (pg_stat_statements,
-- 124,529 checks in a 40 s run of the shared harness).
ALTER TABLE credit_operations DROP CONSTRAINT credit_operations_merchant_id_account_id_fkey;
ALTER TABLE credit_entries DROP CONSTRAINT credit_entries_merchant_id_account_id_fkey;
ALTER TABLE credit_grant_balances DROP CONSTRAINT credit_grant_balances_merchant_id_account_id_fkey;
