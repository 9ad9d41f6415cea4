-- The event feed becomes a table partitioned by created_at (when the event
-- was written, the daemon's clock), one partition per calendar month in
-- UTC, so that retention drops a month at a time instead of deleting rows.
--
-- Why a month: the feed is kept 30 days by default (--event-retention), so
-- two or three partitions are live, and a lookup by id (GET /v1/events/ID,
-- a cursor's position), which carries no time, probes each of them: few
-- enough to cost nothing, at any retention up to years. The live feed is
-- ordered by created_at, the partition key, so its first page reads the
-- newest month only. Test mode's feed is ordered by the test clock
-- (occurred_at), which may run years ahead of created_at: it probes the
-- newest entries of each month's index, a handful of rows.
--
-- The partition key joins the primary key (merchant_id, id, created_at):
-- PostgreSQL requires it. Ids stay unique by construction (time-led random
-- ids). Deliveries lose their foreign key to events, which a partitioned
-- key would make carry created_at: webhook_deliveries stays one table, the
-- work queue, which workers claim by row position (ctid) and which must
-- stay one cheap index walk to claim from. Retention deletes a month's
-- deliveries (with their attempts) before dropping the month, and keeps a
-- month while any of its deliveries is still pending.
--
-- There is no default partition: with one, PostgreSQL cannot read the
-- months in order (the default could hold any time), and the live feed's
-- first page would probe every month instead of the newest. Events are
-- written at the database's now, so months made ahead (by the migration
-- and then by the job runner every few hours, and at start) cover every
-- write.

ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_merchant_id_event_id_fkey;

-- As with usage events, the table as it stands becomes the partition of
-- everything before next month (events_p00000000, from MINVALUE),
-- attached with its indexes rather than copied; months start next month.
-- It keeps its seq values; the new table's sequence continues after them.
ALTER TABLE events RENAME TO events_p00000000;
-- The one index built again: the key gains created_at. The feed is kept
-- a month by default, so this table is small.
ALTER TABLE events_p00000000 DROP CONSTRAINT events_pkey;
ALTER TABLE events_p00000000 ADD CONSTRAINT events_p00000000_pkey PRIMARY KEY (merchant_id, id, created_at);
ALTER INDEX events_list RENAME TO events_list_p00000000;
ALTER INDEX events_test_feed RENAME TO events_test_feed_p00000000;
ALTER INDEX events_payment_failed RENAME TO events_payment_failed_p00000000;
ALTER TABLE events_p00000000 ALTER COLUMN seq DROP IDENTITY;
-- Retention walked this index to delete old events; it drops months now.
DROP INDEX events_created;

CREATE TABLE events (
    merchant_id  text NOT NULL,
    mode         text NOT NULL CONSTRAINT events_mode_check CHECK (mode IN ('test', 'live')),
    id           text NOT NULL,
    seq          bigint GENERATED ALWAYS AS IDENTITY,
    type         text NOT NULL,
    data         jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    occurred_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, id, created_at)
) PARTITION BY RANGE (created_at);
CREATE INDEX events_list ON events (merchant_id, mode, created_at DESC, seq DESC);
CREATE INDEX events_test_feed ON events (merchant_id, occurred_at DESC, seq DESC) WHERE mode = 'test';
CREATE INDEX events_payment_failed ON events (merchant_id, mode, occurred_at) WHERE type = 'subscription.payment_failed';

DO $$
DECLARE
    next_month timestamptz := date_trunc('month', now(), 'UTC') + interval '1 month';
    m timestamptz;
BEGIN
    EXECUTE format('ALTER TABLE events ATTACH PARTITION events_p00000000 FOR VALUES FROM (MINVALUE) TO (%L)', next_month);
    m := next_month;
    WHILE m <= next_month + interval '3 months' LOOP
        PERFORM partition_add('events', 'created_at', m, m + interval '1 month');
        m := m + interval '1 month';
    END LOOP;
    PERFORM setval(pg_get_serial_sequence('events', 'seq'), greatest((SELECT max(seq) FROM events_p00000000), 1));
END
$$;
