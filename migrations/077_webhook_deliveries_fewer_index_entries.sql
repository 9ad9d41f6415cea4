-- A delivery's row is written twice in the common case: made pending with
-- its event, then moved out of pending by the answer to its first attempt.
-- That move changes the due index's predicate, so it is never made in place
-- (HOT): both writes add an entry to every index of the table, and each
-- attempt row locked its delivery (FOR KEY SHARE) to check its foreign key,
-- while each new delivery locked its endpoint's row, the one row that every
-- transaction writing that merchant's events shares.
--
-- Deliveries of an event are found with their merchant (the pair key): the
-- index on event_id alone goes. The index on id alone stays, for the admin
-- commands that name a delivery and nothing else.
DROP INDEX webhook_deliveries_event;

-- The foreign keys go; what they held is kept by the code. Endpoints are
-- never deleted (removed endpoints keep their history) and a delivery is
-- made from its endpoint's row in the statement that inserts it. Attempts
-- are recorded for deliveries that are claimed, so still there (retention
-- deletes only deliveries that are no longer pending), and retention
-- deletes a delivery's attempts with it.
ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_merchant_id_delivery_id_fkey;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_merchant_id_endpoint_id_fkey;

-- When the delivery's event was written: the events table's partition key,
-- so that a claim probes one partition for the event, not each of them.
-- Deliveries made before this column existed leave it empty, and their
-- claims probe every partition as before.
ALTER TABLE webhook_deliveries ADD COLUMN event_created_at timestamptz;
