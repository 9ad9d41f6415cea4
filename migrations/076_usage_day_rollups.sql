-- Day buckets of a finished day are rolled up from its hour buckets by the
-- job runner, instead of being upserted by every ingested batch: the second
-- upsert per customer and batch cost ingestion about a tenth of its
-- PostgreSQL time.
--
-- usage_rollups.through says, per scope, up to where the day buckets are
-- complete: every day before it has its day rows (kept exact from then on:
-- a late event of such a day, or a cancelled one, updates its day row as
-- before). Readers take whole days before it from the day rows and the
-- days from it on from the hour rows. A scope without a row has no
-- complete day yet. The job moves it forward under the scope's usage lock,
-- held exclusively, so no batch adds to an hour between its read and the
-- move.
CREATE TABLE usage_rollups (
    merchant_id  text NOT NULL,
    mode         text NOT NULL CHECK (mode IN ('test', 'live')),
    through      timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, mode)
);

-- Until now every batch upserted its day rows, so every day is complete:
-- the boundary starts at today, whose day the job rolls up once it ends.
INSERT INTO usage_rollups (merchant_id, mode, through)
SELECT DISTINCT merchant_id, mode, date_trunc('day', now(), 'UTC') FROM meters;

-- The roll-up reads a day's hour rows of one scope, all customers; the
-- primary key leads with the customer. New hour rows only are indexed
-- (updates of a bucket leave its key alone).
CREATE INDEX usage_buckets_hours ON usage_buckets (merchant_id, mode, start_at) WHERE grain = 'hour';
