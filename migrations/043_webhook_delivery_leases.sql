-- A claim's lease is its own column. It moved next_attempt_at, which the
-- due index holds, so every lease was an update that PostgreSQL could not
-- make in place (HOT): a new version of the row with an entry in each of
-- the table's six indexes, on top of the record's. leased_until is in no
-- index, and pages keep room for the new versions (fillfactor), so a lease
-- rewrites the row on its page and adds no index entry. The due scan skips
-- leased rows, at most the attempts in flight. Leases taken before this
-- migration (next_attempt_at moved past them) still hold. A daemon from
-- before it does not see leased_until: a replica left running on the old
-- version while new ones start may repeat an attempt in flight (delivery
-- is at least once, keyed by the event id; attempt numbers stay unique).
ALTER TABLE webhook_deliveries ADD COLUMN leased_until timestamptz;
ALTER TABLE webhook_deliveries SET (fillfactor = 70);

-- The delivery workers' scan for due deliveries, planned with sequential
-- and bitmap scans off: its right plan is known (walk the due index in
-- order, stop at the limit), and the planner's own choice depends on
-- statistics that a queue outruns. Analysed while most deliveries were
-- pending, the table looked cheaper to read whole and sort than through
-- the due index, and every claim then read every delivery ever made
-- (2.6 ms a claim at 5,000 deliveries in the shared harness, two fifths of
-- a core), until autovacuum analysed it again.
--
-- Full endpoints (those with as many attempts in flight as they may have)
-- are skipped; the caller spreads what it gets over the endpoints' room.
-- PL/pgSQL on its generic plan, not SQL: it keeps the statement's plan for
-- the session, where a SQL function is planned again on every call (0.3 ms
-- a claim).
CREATE FUNCTION webhook_due_deliveries(max_rows integer, full_endpoints text[])
RETURNS TABLE (merchant_id text, id text, endpoint_id text)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
    RETURN QUERY SELECT d.merchant_id, d.id, d.endpoint_id FROM webhook_deliveries d
    WHERE d.status = 'pending' AND d.next_attempt_at <= now() AND NOT (d.endpoint_id = ANY (full_endpoints))
        AND (d.leased_until IS NULL OR d.leased_until <= now())
        AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.merchant_id = d.merchant_id AND w.id = d.endpoint_id AND w.enabled)
    ORDER BY d.next_attempt_at LIMIT max_rows;
END
$$;
