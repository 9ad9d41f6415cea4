-- Usage people can see: hourly and daily aggregates of each customer's
-- usage on each meter, kept by ingestion in the event's transaction, so a
-- usage summary reads a bounded number of rows however many events are
-- stored. A bucket is split into shards: a batch writes one shard, picked
-- at random, so concurrent batches of one busy customer rarely wait on the
-- same row; readers add the shards up.
--
-- A cancelled meter event keeps its row (and its idempotency key) with
-- cancelled_at set, and counts nowhere.

ALTER TABLE meter_events ADD COLUMN cancelled_at timestamptz;

CREATE TABLE usage_buckets (
    merchant_id    text NOT NULL,
    mode           text NOT NULL CHECK (mode IN ('test', 'live')),
    customer_id    text NOT NULL,
    meter_id       text NOT NULL,
    grain          text NOT NULL CHECK (grain IN ('hour', 'day')),
    start_at       timestamptz NOT NULL,
    shard          smallint NOT NULL,
    event_count    bigint NOT NULL,
    value_sum      numeric(39, 0) NOT NULL,
    value_max      bigint NOT NULL,
    -- the value of the event with the greatest (event_timestamp, id).
    last_value     bigint NOT NULL,
    last_at        timestamptz NOT NULL,
    last_event_id  text NOT NULL,
    PRIMARY KEY (merchant_id, mode, customer_id, meter_id, grain, start_at, shard)
);

-- The events stored before this migration.
INSERT INTO usage_buckets (merchant_id, mode, customer_id, meter_id, grain, start_at, shard,
        event_count, value_sum, value_max, last_value, last_at, last_event_id)
SELECT e.merchant_id, e.mode, e.customer_id, e.meter_id, g.grain, date_trunc(g.grain, e.event_timestamp, 'UTC'), 0,
    count(*), sum(e.value), max(e.value),
    (array_agg(e.value ORDER BY e.event_timestamp DESC, e.id DESC))[1], max(e.event_timestamp),
    (array_agg(e.id ORDER BY e.event_timestamp DESC, e.id DESC))[1]
FROM meter_events e CROSS JOIN (VALUES ('hour'), ('day')) AS g (grain)
WHERE e.customer_id IS NOT NULL
GROUP BY e.merchant_id, e.mode, e.customer_id, e.meter_id, g.grain, date_trunc(g.grain, e.event_timestamp, 'UTC');
