-- Ingestion updates a bucket row (hour and day) and, where an entitlement
-- watches, a window row for every customer of a batch: about 800 updates
-- for a 500-event batch over 1,000 customers, more rows than it inserts.
-- None of the updated columns is indexed, so each update could be made in
-- place on its page (HOT), but full pages left room for none and most
-- updates wrote a new row version elsewhere plus an entry in the primary
-- key. Pages now keep room for new versions. The setting applies to pages
-- written from now on; existing rows move to such pages as they are
-- updated.
ALTER TABLE usage_buckets SET (fillfactor = 70);
ALTER TABLE usage_windows SET (fillfactor = 70);
