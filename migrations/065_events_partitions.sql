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
-- written at the database's now, so months made ahead (three, by the
-- migration and then by the job runner every few hours, and at start)
-- cover every write.

ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_merchant_id_event_id_fkey;

ALTER TABLE events RENAME TO events_unpartitioned;
ALTER TABLE events_unpartitioned RENAME CONSTRAINT events_pkey TO events_unpartitioned_pkey;
ALTER INDEX events_list RENAME TO events_unpartitioned_list;
ALTER INDEX events_test_feed RENAME TO events_unpartitioned_test_feed;
ALTER INDEX events_payment_failed RENAME TO events_unpartitioned_payment_failed;
-- Retention walked this index to delete old events; it drops months now.
DROP INDEX events_created;

CREATE TABLE events (
    merchant_id  text NOT NULL,
    mode         text NOT NULL CHECK (mode IN ('test', 'live')),
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

-- A month per month from the oldest stored event's (at most two years
-- back: older ones share one partition; at least two months back) to
-- three months ahead; then the
-- events are copied with their seq, and the sequence continues after it.
DO $$
DECLARE
    now_month timestamptz := date_trunc('month', now(), 'UTC');
    floor_month timestamptz := now_month - interval '24 months';
    first_month timestamptz;
    m timestamptz;
BEGIN
    SELECT date_trunc('month', min(created_at), 'UTC') INTO first_month FROM events_unpartitioned;
    first_month := LEAST(coalesce(first_month, now_month), now_month - interval '2 months');
    IF first_month < floor_month THEN
        EXECUTE format('CREATE TABLE events_p00000000 PARTITION OF events FOR VALUES FROM (MINVALUE) TO (%L)', floor_month);
        first_month := floor_month;
    END IF;
    m := first_month;
    WHILE m <= now_month + interval '3 months' LOOP
        PERFORM partition_add('events', 'created_at', m, m + interval '1 month');
        m := m + interval '1 month';
    END LOOP;
END
$$;

INSERT INTO events (merchant_id, mode, id, seq, type, data, created_at, occurred_at) OVERRIDING SYSTEM VALUE
SELECT merchant_id, mode, id, seq, type, data, created_at, occurred_at FROM events_unpartitioned;
SELECT setval(pg_get_serial_sequence('events', 'seq'), greatest((SELECT max(seq) FROM events_unpartitioned), 1));
DROP TABLE events_unpartitioned;
