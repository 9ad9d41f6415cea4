-- Why and when an endpoint was disabled: by an operator, or by the
-- delivery workers when the receiver answered 410 Gone (it says the
-- endpoint is gone for good; retrying it only adds load). `admin webhook
-- list` and `show` display it; enabling clears it.
ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason text, ADD COLUMN disabled_at timestamptz;
