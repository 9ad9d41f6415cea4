package daemon

import (
	"net/http"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/events"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// eventOperations are the event feed behind the webhooks.
func eventOperations() []operation {
	return []operation{
		listOperation("GET /v1/events", "list_events", "events",
			"Lists the event feed behind the webhooks (invoice.paid, credit.granted, …), newest first.",
			apispec.Operation{ID: "listEvents", Tag: "Events", Summary: "List events", Query: listParams,
				Doc: "The feed behind the webhooks, newest first; with after, the events after that position, oldest first (for tailing).",
				Params: []apispec.Param{{Name: "after", In: "query",
					Doc: "An event id or a next_cursor: return the events after it, oldest first; not with before."}},
				Responses: listed[wire.Event]("events"), Errors: errs(apperr.InvalidRequest)},
			(*Server).listEvents, events.List, func(_ *Server, x events.Event) wire.Event { return x.Wire() }),
	}
}

// listEvents serves GET /v1/events: newest first with `limit` and `before`
// as the spec says, or, with `after` (an event id or a date-time cursor),
// the events after that position oldest first, which is how `tollgate
// events tail` follows the feed; its next_cursor is then the `after` of the
// next page.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	q := r.URL.Query()
	if !q.Has("after") {
		return list(w, r, func(params page.Params) (page.Result[events.Event], error) {
			return events.List(r.Context(), s.db, p.Scope, params)
		}, events.Event.Wire)
	}
	if q.Has("before") {
		return apperr.Field("after", "cannot be combined with before")
	}
	params, err := page.ParseQuery(q)
	if err != nil {
		return err
	}
	after, err := events.ParseAfter(r.Context(), s.db, p.Scope, q.Get("after"))
	if err != nil {
		return err
	}
	res, err := events.ListAfter(r.Context(), s.db, p.Scope, after, params.Limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, toList(res, events.Event.Wire))
	return nil
}
