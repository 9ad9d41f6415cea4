-- The event feed gains a default partition, as usage events have one, so
-- that a write the months made ahead do not cover lands there instead of
-- failing. Events are written at the database's now, and the job runner
-- makes months three ahead; without a default, a runner stopped (or
-- failing) for that long would fail every operation that writes an event
-- (an invoice paid, a subscription renewed) from the first day of a month
-- nobody made. When the runner makes the month again, partition_add moves
-- the rows the default took into it, as it does for usage events.
--
-- The cost, weighed when the feed was partitioned without one: PostgreSQL
-- reads range partitions in order only when no default partition may hold
-- rows, so the live feed's first page merges the newest entries of every
-- month instead of reading the newest month and stopping, and so do a
-- cursor's later pages. That is one index probe per month kept (two or
-- three at the default retention, plus the months made ahead, which are
-- empty), the count a lookup by id already makes.
--
-- Made like partition_add makes a month (each of the parent's indexes under
-- its name with a _default suffix, so plans read as the index they use),
-- then attached: attaching checks no other partition holds its rows (it is
-- empty) and locks the parent against schema changes only.
DO $$
DECLARE
    idx record;
BEGIN
    CREATE TABLE events_default (LIKE events INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
    FOR idx IN SELECT c.relname, pg_get_indexdef(i.indexrelid) AS def FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
        WHERE i.indrelid = 'events'::regclass AND NOT i.indisprimary LOOP
        EXECUTE format('CREATE INDEX %I ON events_default %s', idx.relname || '_default', substring(idx.def FROM ' USING .*$'));
    END LOOP;
    ALTER TABLE events ATTACH PARTITION events_default DEFAULT;
END
$$;
