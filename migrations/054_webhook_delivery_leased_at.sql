-- When the attempt in flight was claimed, which is when it was sent. A
-- daemon that dies mid-attempt leaves it unrecorded; the next claim
-- records it as interrupted at this time, not at its own (the lease's
-- length later). Not indexed, so setting it keeps a claim's update in
-- place (HOT). Leases taken before this column existed are dated from
-- leased_until less the lease's length.
ALTER TABLE webhook_deliveries ADD COLUMN leased_at timestamptz;
