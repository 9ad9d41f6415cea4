package testdb

import "testing"

func TestViolation(t *testing.T) {
	tables := map[string]bool{"webhook_deliveries": true, "webhook_endpoints": true, "events": true, "credit_accounts": true, "customers": true, "alert_checks": true}
	ok := []string{
		`SELECT * FROM credit_accounts WHERE merchant_id = $1 AND mode = $2 AND customer_id = $3 FOR UPDATE`,
		`SELECT a.* FROM credit_accounts a JOIN customers c ON c.merchant_id = a.merchant_id AND c.id = a.customer_id
			WHERE c.merchant_id = $1 AND c.external_customer_id = $3 FOR UPDATE OF a`,
		`SELECT name FROM job_schedule WHERE due_at <= now() FOR UPDATE SKIP LOCKED`,
		`SELECT d.id FROM webhook_deliveries d JOIN events e USING (merchant_id, id) WHERE d.mode = $2`,
		`WITH x AS (SELECT merchant_id, id FROM alert_checks WHERE merchant_id = $1 -- a comment, FOR UPDATE
			LIMIT 10 FOR UPDATE SKIP LOCKED) DELETE FROM alert_checks c USING x WHERE c.merchant_id = x.merchant_id AND c.id = x.id`,
		`SELECT d.id, 'FOR UPDATE' FROM webhook_deliveries d WHERE EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.merchant_id = d.merchant_id)`,
		`SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'`,
		`SELECT mode FROM webhook_deliveries WHERE id = $1 UNION ALL SELECT mode FROM events WHERE id = $1`,
		`UPDATE webhook_deliveries d SET status = v.status FROM (SELECT x.row, v.* FROM unnest($1::text[], $2::text[]) AS v (id, status)
			CROSS JOIN LATERAL (SELECT f.ctid AS row FROM webhook_deliveries f WHERE f.merchant_id = $3 AND f.id = v.id OFFSET 0) x) v
			WHERE d.ctid = v.row`,
	}
	bad := []string{
		// a claim across merchants
		`SELECT id FROM alert_checks LIMIT $1 FOR UPDATE SKIP LOCKED`,
		`UPDATE webhook_deliveries d SET attempts = 1 WHERE d.ctid = ANY (ARRAY(SELECT x.row FROM unnest($1::text[], $2::text[]) AS c(merchant_id, id)
			CROSS JOIN LATERAL (SELECT f.ctid AS row FROM webhook_deliveries f WHERE f.id = c.id AND f.merchant_id = c.merchant_id FOR UPDATE SKIP LOCKED) x))`,
		// a join that does not equate merchant_id
		`SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id WHERE d.merchant_id = $1`,
		`SELECT d.id FROM webhook_deliveries d, events e WHERE e.id = d.event_id`,
		`SELECT * FROM credit_accounts WHERE customer_id = $1 FOR UPDATE`,
		`SELECT 1 FROM events WHERE id = $1 UNION SELECT d.id FROM webhook_deliveries d JOIN events e ON e.id = d.event_id`,
	}
	for _, q := range ok {
		if why := Violation(q, tables); why != "" {
			t.Errorf("%s: %s", q, why)
		}
	}
	for _, q := range bad {
		if Violation(q, tables) == "" {
			t.Errorf("not caught: %s", q)
		}
	}
}

func TestViolationInsertedMerchant(t *testing.T) {
	tables := map[string]bool{"invoices": true, "events": true, "webhook_endpoints": true}
	q := `WITH inv AS (UPDATE invoices SET status = 'paid' WHERE merchant_id = $1 AND id = $3 RETURNING id
	), ev AS (INSERT INTO events (merchant_id, mode, id) SELECT $1, $2, $11 FROM inv RETURNING merchant_id, mode, id
	), d AS (SELECT w.id FROM ev CROSS JOIN LATERAL (SELECT w.id FROM webhook_endpoints w WHERE w.merchant_id = ev.merchant_id OFFSET 0) w)
	SELECT count(*) FROM d`
	if why := Violation(q, tables); why != "" {
		t.Error(why)
	}
	other := `WITH ev AS (INSERT INTO events (mode, merchant_id, id) VALUES ($2, $5, $11) RETURNING merchant_id)
	SELECT w.id FROM ev CROSS JOIN LATERAL (SELECT w.id FROM webhook_endpoints w WHERE w.merchant_id = ev.merchant_id OFFSET 0) w,
		invoices i WHERE i.merchant_id = $1`
	if Violation(other, tables) == "" {
		t.Error("an insert of another merchant's event joined to an invoice was not caught")
	}
}
