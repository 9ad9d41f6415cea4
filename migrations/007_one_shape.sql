-- One shape for every operation: the event feed's position is split from
-- the event's business time, merchants get test clocks, and periodic jobs
-- get a schedule shared by replicas.

-- events.created_at stays the feed's position (the emitting transaction's
-- start, which tails rely on); occurred_at is when the change happened by
-- the merchant's clock, shown as the event's created_at.
ALTER TABLE events ADD COLUMN occurred_at timestamptz;
UPDATE events SET occurred_at = created_at;
ALTER TABLE events ALTER COLUMN occurred_at SET NOT NULL, ALTER COLUMN occurred_at SET DEFAULT now();

-- A merchant's test-mode clock runs ahead of the wall clock by ahead_us
-- microseconds; it only ever moves forward. No row: the wall clock.
CREATE TABLE test_clocks (
    merchant_id  text PRIMARY KEY REFERENCES merchants (id),
    ahead_us     bigint NOT NULL DEFAULT 0 CHECK (ahead_us >= 0),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- Periodic jobs: one row per job, claimed by the replica that moves
-- next_run_at forward, so each due run happens once however many replicas
-- share the database.
CREATE TABLE job_schedule (
    name              text PRIMARY KEY,
    next_run_at       timestamptz NOT NULL,
    runs              bigint NOT NULL DEFAULT 0,
    last_started_at   timestamptz,
    last_finished_at  timestamptz,
    last_error        text
);
