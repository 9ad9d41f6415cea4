package events

import "time"

// DefaultRetention is how long events are kept: consumers page
// GET /v1/events to catch up after an outage, and are promised 30 days.
// The feed is stored a month per partition, and a month is dropped once
// all of it is older than the retention (internal/partitions).
const DefaultRetention = 30 * 24 * time.Hour
