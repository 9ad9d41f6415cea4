package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/metering"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// meterOperations are meters: create (idempotent by key) and list.
func meterOperations() []operation {
	return []operation{
		{
			// A repeat of an existing key returns that meter with the same
			// status: 201 is the endpoint's documented status, and idempotent
			// means a retry cannot tell the difference.
			pattern: "POST /v1/meters", class: ratelimit.ClassCatalog, status: http.StatusCreated,
			doc: apispec.Operation{ID: "createMeter", Tag: "Usage", Summary: "Create a meter",
				Doc:  "Idempotent by key: a repeat returns the existing meter (201 all the same).",
				Body: typeOf[wire.MeterRequest](), Responses: created[wire.Meter]("The meter."), Errors: invalidErrs()},
			tool: &toolSpec{name: "create_meter", title: "Create a meter", idempotent: true,
				doc: "Creates a meter, the named thing usage is recorded against (its key is the event_name of usage events). " +
					"Idempotent by key: a repeat returns the existing meter. Create the meter before a metered plan or feature refers to it.",
				in: typeOf[wire.MeterRequest](), out: typeOf[wire.Meter]()},
			run: func(s *Server, c *call) (any, error) {
				in, err := metering.Decode(c.args)
				if err != nil {
					return nil, err
				}
				m, _, err := metering.Create(c.ctx, c.q(s), c.p.Scope, in, s.now(c.p))
				return wireOf(m, err, metering.Meter.Wire)
			},
		},
		listOperation("GET /v1/meters", "list_meters", "meters", "Lists meters, newest first.",
			apispec.Operation{ID: "listMeters", Tag: "Usage", Summary: "List meters", Query: listParams,
				Responses: listed[wire.Meter]("meters"), Errors: errs(apperr.InvalidRequest)},
			nil, metering.List, func(_ *Server, x metering.Meter) wire.Meter { return x.Wire() }),
	}
}
