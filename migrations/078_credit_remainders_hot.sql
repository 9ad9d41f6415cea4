-- A debit lowers a grant's remainder and the account's balance. The
-- remainder's indexes were partial on remaining > 0, so every decrement
-- changed a column an index depends on and could never be made in place
-- on its page (HOT): each wrote a new entry in all four of the table's
-- indexes. They now depend on live, which PostgreSQL keeps equal to
-- remaining > 0 and which changes only when a grant is used up or
-- expires: a decrement that leaves something touches no index. Readers
-- say live where they said remaining > 0, the same rows.
--
-- Pages keep room for new versions (fillfactor) in both tables, so an
-- update finds space on its own page. Adding the column rewrites the
-- remainders at the new fill; accounts move to such pages as they are
-- updated.
ALTER TABLE credit_grant_balances SET (fillfactor = 80);
ALTER TABLE credit_accounts SET (fillfactor = 80);
ALTER TABLE credit_grant_balances ADD COLUMN live boolean GENERATED ALWAYS AS (remaining > 0) STORED;

DROP INDEX credit_grant_balances_draw;
DROP INDEX credit_grant_balances_due;
DROP INDEX credit_grant_balances_merchant_due;
-- Drawing order: soonest expiry first, never-expiring last, then oldest.
CREATE INDEX credit_grant_balances_draw ON credit_grant_balances (merchant_id, account_id, expires_at NULLS LAST, seq)
    WHERE live;
-- The expiry sweep's work list, and each merchant's part of it.
CREATE INDEX credit_grant_balances_due ON credit_grant_balances (expires_at)
    WHERE live AND expires_at IS NOT NULL;
CREATE INDEX credit_grant_balances_merchant_due ON credit_grant_balances (merchant_id, mode, expires_at)
    WHERE live AND expires_at IS NOT NULL;
