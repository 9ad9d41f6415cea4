package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/alerts"
	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// usageQuery is GET /v1/customers/{id}/usage's query.
var usageQuery = []apispec.Param{
	{Name: "meter", In: "query", Required: true, Doc: "The meter: its id (meter_…) or its key."},
	{Name: "from", In: "query", Doc: "Start of the span, included (ISO-8601 date-time); default the start of the customer's current period on a live subscription whose plan uses the meter, else 30 days before to."},
	{Name: "to", In: "query", Doc: "End of the span, excluded (ISO-8601 date-time); default now."},
	{Name: "window", In: "query", Doc: "hour, day or month: also answer every UTC window that overlaps the span, at most 1000."},
}

// usageOperations let people see usage and take back an event sent by
// mistake: the usage summary and meter event cancellation.
func usageOperations() []operation {
	return []operation{
		{
			pattern: "GET /v1/customers/{customer}/usage", class: ratelimit.ClassCreditBalance, rest: (*Server).getUsage,
			doc: apispec.Operation{ID: "getUsage", Tag: "Usage", Summary: "Get a customer's usage of a meter",
				Doc: "The meter's aggregation (sum, count, max, last) over the customer's events with event_timestamp in [from, to), \"0\" when none; " +
					"with window, per UTC hour, day or month too. Answered from running totals, whatever the number of events stored. Cancelled events count nowhere.",
				Params: append([]apispec.Param{customerPath}, usageQuery...), Responses: ok[wire.UsageSummary]("The usage summary."),
				Errors: append(errs(apperr.InvalidRequest, apperr.UnknownMeter), unknownCustomerPath)},
			tool: &toolSpec{name: "get_usage", title: "Get a customer's usage of a meter",
				doc: "Returns a customer's usage of a meter (by id or key) over [from, to) by the meter's aggregation, and with window " +
					"(hour, day, month) per UTC window. from defaults to the start of the current period, to to now.",
				in: typeOf[wire.UsageArgs](), out: typeOf[wire.UsageSummary]()},
			run: func(s *Server, c *call) (any, error) {
				cust, in, err := metering.DecodeUsageArgs(c.args)
				if err != nil {
					return nil, err
				}
				u, err := metering.Usage(c.ctx, s.db, c.p.Scope, cust, in, s.now(c.p))
				return wireOf(u, err, metering.Summary.Wire)
			},
		},
		{
			pattern: "POST /v1/meter-events/{id}/cancel", class: ratelimit.ClassMeterEvents, body: bodyNone,
			doc: apispec.Operation{ID: "cancelMeterEvent", Tag: "Usage", Summary: "Cancel a meter event",
				Doc: "No body. The event then counts nowhere (usage, entitlement used, upcoming charges, rating, alerts) and carries cancelled_at; " +
					"cancelling it again answers the same. Its idempotency key stays used. Emits meter_event.cancelled.",
				Params: idPath("meter event"), Responses: ok[wire.MeterEvent]("The cancelled meter event."),
				Errors: errs(apperr.InvalidRequest, apperr.ResourceNotFound, apperr.UsageAlreadyBilled)},
			tool: &toolSpec{name: "cancel_meter_event", title: "Cancel a meter event", idempotent: true,
				doc: "Cancels a meter event sent by mistake: it then counts nowhere (usage, entitlements, charges, alerts). Emits meter_event.cancelled; " +
					"cancelling again answers the same. An event in a period already billed is usage_already_billed.",
				in: typeOf[wire.ObjectArgs](), out: typeOf[wire.MeterEvent]()},
			run: func(s *Server, c *call) (any, error) {
				id, err := c.objectID()
				if err != nil {
					return nil, err
				}
				var e metering.Event
				if c.tx != nil {
					e, err = metering.CancelTx(c.ctx, c.tx, c.p.Scope, id, s.now(c.p))
				} else {
					e, err = metering.Cancel(c.ctx, s.db, c.p.Scope, id, s.now(c.p))
				}
				return wireOf(e, err, metering.Event.Wire)
			},
		},
	}
}

// alertOperations are alerts: create, list and archive.
func alertOperations() []operation {
	return []operation{
		{
			pattern: "POST /v1/alerts", class: ratelimit.ClassCreate, status: http.StatusCreated,
			doc: apispec.Operation{ID: "createAlert", Tag: "Usage", Summary: "Create an alert",
				Doc: "usage_threshold, credit_balance_below or spend_threshold, for one customer or every customer. Each fires alert.triggered " +
					"once per alert, customer (or subscription) and period, or once per drop of a balance below the threshold.",
				Body: typeOf[wire.AlertRequest](), Responses: created[wire.Alert]("The active alert."),
				Errors: append(invalidErrs(), errs(apperr.UnknownMeter, apperr.UnknownCustomer)...)},
			tool: &toolSpec{name: "create_alert", title: "Create an alert",
				doc: "Creates an alert that emits alert.triggered: usage_threshold (meter id and threshold quantity), credit_balance_below " +
					"(threshold in base units) or spend_threshold (percent 1 to 100 of a metered plan's cap), for customer_id or every customer.",
				in: typeOf[wire.AlertRequest](), out: typeOf[wire.Alert]()},
			run: func(s *Server, c *call) (any, error) {
				in, err := alerts.Decode(c.args)
				if err != nil {
					return nil, err
				}
				a, err := alerts.Create(c.ctx, s.db, c.p.Scope, in, s.now(c.p))
				return wireOf(a, err, alerts.Alert.Wire)
			},
		},
		listOperation("GET /v1/alerts", "list_alerts", "alerts", "Lists alerts, newest first.",
			apispec.Operation{ID: "listAlerts", Tag: "Usage", Summary: "List alerts", Query: listParams,
				Responses: listed[wire.Alert]("alerts"), Errors: errs(apperr.InvalidRequest)},
			nil, alerts.List, func(_ *Server, x alerts.Alert) wire.Alert { return x.Wire() }),
		{
			pattern: "POST /v1/alerts/{id}/archive", class: ratelimit.ClassCreate, body: bodyNone,
			doc: apispec.Operation{ID: "archiveAlert", Tag: "Usage", Summary: "Archive an alert",
				Doc: "No body. The alert fires no more; archiving it again answers the same.", Params: idPath("alert"),
				Responses: ok[wire.Alert]("The archived alert."), Errors: errs(apperr.InvalidRequest, apperr.ResourceNotFound)},
			run: func(s *Server, c *call) (any, error) {
				a, err := alerts.Archive(c.ctx, c.q(s), c.p.Scope, c.path("id"), s.now(c.p))
				return wireOf(a, err, alerts.Alert.Wire)
			},
		},
	}
}

func (s *Server) getUsage(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	in, err := metering.ParseUsageQuery(r.URL.Query())
	if err != nil {
		return err
	}
	u, err := metering.Usage(r.Context(), s.db, p.Scope, r.PathValue("customer"), in, s.now(p))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, u.Wire())
	return nil
}
