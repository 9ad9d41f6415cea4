// Package alerts owns alerts: thresholds on a customer's usage of a meter,
// credit balance or metered spend, which emit alert.triggered when crossed.
// Changes that may cross one (ingestion, credit debits) leave a check in
// alert_checks in their own transaction; the alert job (Evaluator) claims
// checks and fires, keyed in alert_firings, so each alert fires once per
// customer (or subscription) and period, or per balance crossing.
package alerts

import (
	"context"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/customers"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/id"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/money"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// Alert types.
const (
	UsageThreshold     = "usage_threshold"
	CreditBalanceBelow = "credit_balance_below"
	SpendThreshold     = "spend_threshold"
)

// Alert statuses.
const (
	Active   = "active"
	Archived = "archived"
)

// MaxNameLen bounds an alert's name, in characters.
const MaxNameLen = 200

// Alert is a stored alert.
type Alert struct {
	MerchantID string      `db:"merchant_id"`
	Mode       tenant.Mode `db:"mode"`
	ID         string      `db:"id"`
	Seq        int64       `db:"seq"`
	Type       string      `db:"type"`
	Name       *string     `db:"name"`
	CustomerID *string     `db:"customer_id"`
	MeterID    *string     `db:"meter_id"`
	Threshold  *string     `db:"threshold"` // numeric as text
	Percent    *int64      `db:"percent"`
	Status     string      `db:"status"`
	CreatedAt  time.Time   `db:"created_at"`
	ArchivedAt *time.Time  `db:"archived_at"`
}

const columns = `merchant_id, mode, id, seq, type, name, customer_id, meter_id, threshold::text AS threshold, percent, status, created_at, archived_at`

// Wire returns the alert's public form.
func (a Alert) Wire() wire.Alert {
	return wire.Alert{Object: "alert", ID: a.ID, Type: a.Type, Name: a.Name, CustomerID: a.CustomerID, Meter: a.MeterID,
		Threshold: a.Threshold, Percent: a.Percent, Status: a.Status, CreatedAt: wire.Timestamp(a.CreatedAt),
		ArchivedAt: wire.OptTimestamp(a.ArchivedAt), Livemode: a.Mode == tenant.Live}
}

// Position is the alert's place in the list, for cursors.
func (a Alert) Position() page.Cursor { return page.Cursor{At: a.CreatedAt, Seq: a.Seq} }

// Input is a create request.
type Input struct {
	Type      string
	Meter     *string
	Threshold *money.Amount
	Percent   *int64
	Customer  customers.Ref
	Name      *string
}

// Decode reads POST /v1/alerts' schema from a JSON object (a REST body or
// tool arguments); errors are invalid_request naming the field.
func Decode(o *fields.Object) (Input, error) {
	in := Input{
		Type:     o.RequiredString("type", 0, 0),
		Meter:    o.String("meter", 0, 0),
		Customer: customers.DecodeRef(o),
		Name:     o.String("name", 0, 0),
	}
	if o.Has("threshold") {
		if a, ok := o.Amount("threshold"); ok {
			in.Threshold = &a
		}
	}
	if o.Has("percent") {
		in.Percent = o.Int("percent", 1, 100)
	}
	return in, o.Err()
}

// Validate applies the rules that need no database.
func (in *Input) Validate() error {
	need := func(field string, present bool, what string) error {
		if !present {
			return apperr.Field(field, "is required for a %s alert (%s)", in.Type, what)
		}
		return nil
	}
	refuse := func(field string, present bool) error {
		if present {
			return apperr.Field(field, "does not apply to a %s alert", in.Type)
		}
		return nil
	}
	var errs []error
	switch in.Type {
	case UsageThreshold:
		errs = []error{need("meter", in.Meter != nil, "a meter id"), need("threshold", in.Threshold != nil, "a quantity"), refuse("percent", in.Percent != nil)}
	case CreditBalanceBelow:
		errs = []error{need("threshold", in.Threshold != nil, "base units"), refuse("meter", in.Meter != nil), refuse("percent", in.Percent != nil)}
	case SpendThreshold:
		errs = []error{need("percent", in.Percent != nil, "1 to 100"), refuse("meter", in.Meter != nil), refuse("threshold", in.Threshold != nil)}
	case "":
		return apperr.Field("type", "is required")
	default:
		return apperr.Field("type", "must be one of usage_threshold, credit_balance_below, spend_threshold")
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if in.Name != nil && utf8.RuneCountInString(*in.Name) > MaxNameLen {
		return apperr.Field("name", "must be at most %d characters", MaxNameLen)
	}
	return nil
}

// Create stores an active alert created at now. The meter must be the
// scope's (else 404 unknown_meter) and the customer too (else 400
// unknown_customer; an external id is upserted).
func Create(ctx context.Context, db *store.DB, s tenant.Scope, in Input, now time.Time) (Alert, error) {
	if err := in.Validate(); err != nil {
		return Alert{}, err
	}
	return store.InTx(ctx, db, func(tx *store.Tx) (Alert, error) {
		var meterID *string
		if in.Meter != nil {
			m, ok, err := metering.ByID(ctx, tx, s, *in.Meter)
			if err != nil {
				return Alert{}, err
			}
			if !ok {
				return Alert{}, apperr.New(apperr.UnknownMeter, "meter: no meter %s", strconv.Quote(apperr.Clip(*in.Meter)))
			}
			meterID = &m.ID
		}
		var custID *string
		if !in.Customer.Empty() {
			if in.Customer.ExternalID != nil && in.Customer.ID == nil {
				// Upserting a customer writes a row ingestion may also write.
				if err := metering.LockUsage(ctx, tx, s); err != nil {
					return Alert{}, err
				}
			}
			c, _, err := customers.Resolve(ctx, tx, s, in.Customer, false, now)
			if err != nil {
				return Alert{}, err
			}
			custID = &c.ID
		}
		var threshold *string
		if in.Threshold != nil {
			t := strconv.FormatInt(int64(*in.Threshold), 10)
			threshold = &t
		}
		var a Alert
		err := tx.GetContext(ctx, &a, `INSERT INTO alerts (merchant_id, mode, id, type, name, customer_id, meter_id, threshold, percent, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING `+columns,
			s.MerchantID, s.Mode, id.New("alert"), in.Type, in.Name, custID, meterID, threshold, in.Percent, now)
		return a, store.Translate(err)
	})
}

// List returns a page of the scope's alerts, newest first.
func List(ctx context.Context, q store.Querier, s tenant.Scope, p page.Params) (page.Result[Alert], error) {
	return page.Select(ctx, q, "alerts", columns, s, p, Alert.Position)
}

// Archive stops the scope's alert alertID from firing again (at now); an
// archived alert is answered as it is. Unknown is 404 resource_not_found.
func Archive(ctx context.Context, q store.Querier, s tenant.Scope, alertID string, now time.Time) (Alert, error) {
	if p := fields.TextProblem(alertID); p != "" {
		return Alert{}, apperr.Field("id", "%s", p)
	}
	var as []Alert
	err := q.SelectContext(ctx, &as, `UPDATE alerts SET status = 'archived', archived_at = coalesce(archived_at, $4)
		WHERE merchant_id = $1 AND mode = $2 AND id = $3 RETURNING `+columns, s.MerchantID, s.Mode, alertID, now)
	if err != nil {
		return Alert{}, store.Translate(err)
	}
	if len(as) == 0 {
		return Alert{}, &apperr.Error{Code: apperr.ResourceNotFound, Status: 404, Message: "no alert " + strconv.Quote(apperr.Clip(alertID))}
	}
	return as[0], nil
}
