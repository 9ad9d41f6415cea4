-- Usage events become a table partitioned by event_timestamp, one
-- partition per week (weeks start on Monday, UTC), so that retention drops
-- a week at a time instead of deleting rows, and a read of recent usage
-- (windows, billing periods, buckets rebuilt) touches recent weeks only.
--
-- Why a week: at 1,000 events a second a week is 600 million rows, a size
-- whose indexes still build and vacuum in reasonable time; a day would mean
-- about 400 partitions at a 400-day retention, and every statement that
-- cannot prune (a lookup by id) would open all of them. The accepted
-- backdate (35 days) spans six weeks, so ingestion writes to at most six
-- partitions plus the default.
--
-- The default partition takes what no weekly partition covers yet: in test
-- mode, events stamped by an advanced test clock, past the weeks the job
-- runner creates ahead. When the runner later creates the week they fall
-- in, partition_add moves them into it. Live timestamps are at most five
-- minutes ahead of the daemon's clock, always inside a created week.
--
-- The primary key (merchant_id, id, event_timestamp) was already laid out
-- for this: it leads with the merchant and holds the partition column.
-- Idempotency keys (meter_event_keys) stay one table: a key must be unique
-- whatever time its events carry, which PostgreSQL can only enforce in a
-- table whose partitions the key itself selects; they are pruned daily
-- after 35 days, so the table stays bounded.

-- partition_add makes parent's partition for [lo, hi) named
-- parent_pYYYYMMDD (lo's date in UTC), unless one exists, and moves into
-- it the rows of parent's default partition that fall in that range. It
-- returns whether it made one. The job runner calls it ahead of time, never
-- a request. The new table is attached rather than created as a
-- partition: attaching locks the parent only against schema changes, so
-- writes go on meanwhile.
CREATE FUNCTION partition_add(parent text, keycol text, lo timestamptz, hi timestamptz) RETURNS boolean
LANGUAGE plpgsql AS $$
DECLARE
    suffix text := 'p' || to_char(lo AT TIME ZONE 'UTC', 'YYYYMMDD');
    name text := parent || '_' || suffix;
    def text := parent || '_default';
    moved bigint := 0;
    idx record;
BEGIN
    IF to_regclass(name) IS NOT NULL THEN
        RETURN false;
    END IF;
    EXECUTE format('CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name, parent);
    -- The parent's indexes, made here under names that keep the parent
    -- index's (events_list_p20261101), so plans read as the index they
    -- use; attaching adopts them, and makes the primary key's.
    FOR idx IN SELECT c.relname, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = parent::regclass AND NOT i.indisprimary LOOP
        EXECUTE format('CREATE INDEX %I ON %I %s', idx.relname || '_' || suffix, name, substring(idx.def FROM ' USING .*$'));
    END LOOP;
    IF to_regclass(def) IS NOT NULL THEN
        EXECUTE format('CREATE TEMP TABLE partition_moved ON COMMIT DROP AS WITH d AS (DELETE FROM %I WHERE %I >= $1 AND %I < $2 RETURNING *) SELECT * FROM d',
            def, keycol, keycol) USING lo, hi;
        GET DIAGNOSTICS moved = ROW_COUNT;
    END IF;
    EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', parent, name, lo, hi);
    IF to_regclass(def) IS NOT NULL THEN
        IF moved > 0 THEN
            EXECUTE format('INSERT INTO %I OVERRIDING SYSTEM VALUE SELECT * FROM partition_moved', parent);
        END IF;
        DROP TABLE partition_moved;
    END IF;
    RETURN true;
END
$$;

-- The table as it stands becomes the partition of everything before next
-- week (meter_events_p00000000, from MINVALUE), attached rather than
-- copied: its indexes match the new table's and are adopted as they are,
-- so the conversion costs one read of the table (to check its rows fit
-- the range), not a rewrite. Weekly partitions start next week; the old
-- partition is dropped whole once all of it is past the retention.
-- Events stamped at or after next week (a test clock run ahead) move to
-- the new partitions.
ALTER TABLE meter_events RENAME TO meter_events_p00000000;
ALTER TABLE meter_events_p00000000 RENAME CONSTRAINT meter_events_pkey TO meter_events_p00000000_pkey;
ALTER INDEX meter_events_usage RENAME TO meter_events_usage_p00000000;

CREATE TABLE meter_events (
    merchant_id      text NOT NULL,
    mode             text NOT NULL CONSTRAINT meter_events_mode_check CHECK (mode IN ('test', 'live')),
    id               text NOT NULL,
    meter_id         text NOT NULL,
    -- NULL: an event without a customer, stored but counted for nobody.
    customer_id      text,
    value            bigint NOT NULL CONSTRAINT meter_events_value_check CHECK (value >= 0),
    event_timestamp  timestamptz NOT NULL,
    properties       jsonb,
    idempotency_key  text,
    created_at       timestamptz NOT NULL DEFAULT now(),
    cancelled_at     timestamptz,
    PRIMARY KEY (merchant_id, id, event_timestamp)
) PARTITION BY RANGE (event_timestamp);
CREATE INDEX meter_events_usage ON meter_events (merchant_id, mode, customer_id, meter_id, event_timestamp);
CREATE TABLE meter_events_default PARTITION OF meter_events DEFAULT;

DO $$
DECLARE
    next_week timestamptz := date_trunc('week', now(), 'UTC') + interval '1 week';
    w timestamptz;
BEGIN
    CREATE TEMP TABLE meter_events_ahead ON COMMIT DROP AS
        WITH d AS (DELETE FROM meter_events_p00000000 WHERE event_timestamp >= next_week RETURNING *) SELECT * FROM d;
    EXECUTE format('ALTER TABLE meter_events ATTACH PARTITION meter_events_p00000000 FOR VALUES FROM (MINVALUE) TO (%L)', next_week);
    w := next_week;
    WHILE w <= next_week + interval '6 weeks' LOOP
        PERFORM partition_add('meter_events', 'event_timestamp', w, w + interval '1 week');
        w := w + interval '1 week';
    END LOOP;
    INSERT INTO meter_events SELECT * FROM meter_events_ahead;
    DROP TABLE meter_events_ahead;
END
$$;
