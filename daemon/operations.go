package daemon

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/page"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// The operation table: one declaration per /v1 operation feeds the route
// table (NewServer), the API description (/openapi.json) and, for an
// operation with a tool, the MCP tool list. Adding an operation is one
// entry in its noun's file (invoices.go, credits.go, …) plus its domain
// function.

// operation declares one API operation.
type operation struct {
	// pattern is the route: "METHOD /v1/…". A POST changes something: it
	// needs a write credential and is subject to mode_mismatch.
	pattern string
	// class is the rate-limit class ("" means not rate limited).
	class ratelimit.Class
	// compress gzips answers that run to kilobytes (lists).
	compress bool
	// movesFunds marks an operation that may move money. None of the API's
	// operations does (payments happen at the hosted checkout); the tool
	// server's instructions promise as much, and a test holds it.
	movesFunds bool
	// doc is the operation's entry in the API description; the
	// declaration adds 401, and 429 and mode_mismatch from class and
	// method.
	doc apispec.Operation
	// run is the operation's one adapter, shared by REST and the tool:
	// decode args (the JSON body of a POST, the path's values of a GET, or
	// the tool's arguments), make the domain call, return the wire form.
	run func(s *Server, c *call) (any, error)
	// status is REST's status on success (0: 200); a replay answers 200.
	status int
	// rest serves REST itself where its request is richer than the tool's
	// (a batch, query filters, a path with a body); nil: run.
	rest restFunc
	// tool, when set, makes the operation a tool of the tool server.
	tool *toolSpec
}

// toolSpec is what the tool list says of an operation's tool.
type toolSpec struct {
	name, title, doc string
	// idempotent: a repeat of a call has no further effect.
	idempotent bool
	// testOnly tools are listed for test-mode credentials only.
	testOnly bool
	// in is the arguments' type; out the result's (with list, the type of
	// the list envelope's items).
	in, out reflect.Type
	list    bool
}

// restFunc is a REST handler of the table: a method expression such as
// (*Server).voidInvoice, bound to the server when the routes are built.
type restFunc func(s *Server, w http.ResponseWriter, r *http.Request, p auth.Principal) error

// call is what an operation's run works with.
type call struct {
	ctx  context.Context
	p    auth.Principal
	args *fields.Object
	// idempotencyKey is the Idempotency-Key header ("" for a tool call).
	idempotencyKey string
	// replayed is set by a run whose answer repeats an earlier one.
	replayed bool
}

// apiOperations is the operation table, by noun. The order is the API
// description's order of tags (the first use of each).
func apiOperations() []operation {
	var ops []operation
	for _, noun := range [][]operation{
		invoiceOperations(), meterOperations(), meterEventOperations(), creditOperations(), paymentOperations(),
		subscriptionOperations(), eventOperations(), featureOperations(), entitlementOperations(),
		customerOperations(), planOperations(), testClockOperations(),
	} {
		ops = append(ops, noun...)
	}
	return ops
}

// writes reports whether the operation changes something (a POST).
func (o operation) writes() bool { return strings.HasPrefix(o.pattern, "POST ") }

// route is the operation's row of the route table.
func (o operation) route(s *Server) route {
	api := o.serve(s)
	if o.rest != nil {
		api = func(w http.ResponseWriter, r *http.Request, p auth.Principal) error { return o.rest(s, w, r, p) }
	}
	return route{pattern: o.pattern, class: o.class, creates: o.writes(), api: api, compress: o.compress}
}

// serve is REST over run: the body of a POST, or the path's values of a
// GET, as the arguments.
func (o operation) serve(s *Server) apiFunc {
	status := o.status
	if status == 0 {
		status = http.StatusOK
	}
	segments := wildcards(o.pattern)
	write := o.writes()
	return func(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
		var args *fields.Object
		if write {
			o, err := s.decodeBody(w, r)
			if err != nil {
				return err
			}
			args = o
		} else {
			args = pathArgs(r, segments)
		}
		c := &call{ctx: r.Context(), p: p, args: args, idempotencyKey: r.Header.Get("Idempotency-Key")}
		out, err := o.run(s, c)
		if err != nil {
			return err
		}
		if c.replayed {
			writeJSON(w, http.StatusOK, out)
			return nil
		}
		writeJSON(w, status, out)
		return nil
	}
}

// pathArgs are a GET's path values as the arguments of its tool: {id} is
// id, {customer} is customer_id, others keep their names.
func pathArgs(r *http.Request, segments []string) *fields.Object {
	raw := make(map[string]json.RawMessage, len(segments))
	for _, name := range segments {
		arg := name
		if name == "customer" {
			arg = "customer_id"
		}
		raw[arg], _ = json.Marshal(r.PathValue(name))
	}
	return fields.FromMap(raw)
}

// toolTable is the tool server's registry, built from the operations with
// a tool, by name (the order tools/list gives them).
func toolTable() []tool {
	var out []tool
	for _, o := range apiOperations() {
		if o.tool == nil {
			continue
		}
		t := o.tool
		out = append(out, tool{name: t.name, title: t.title, doc: t.doc, rest: o.pattern, write: o.writes(), idempotent: t.idempotent,
			in: t.in, out: t.out, list: t.list, testOnly: t.testOnly, run: o.run})
	}
	slices.SortFunc(out, func(a, b tool) int { return strings.Compare(a.name, b.name) })
	return out
}

// operationDocs is the API description's entry of each operation, by
// route pattern.
func operationDocs() map[string]apispec.Operation {
	ops := map[string]apispec.Operation{}
	for _, o := range apiOperations() {
		ops[o.pattern] = o.doc
	}
	return ops
}

// listOperation declares a list operation: GET with limit and before (as
// query parameters, or as the tool's arguments), one page of the domain's
// list in its list envelope. rest may serve REST's richer query (nil: the
// plain list).
func listOperation[T, W any](pattern, tool, noun, toolDoc string, doc apispec.Operation, rest restFunc,
	fetch func(context.Context, store.Querier, tenant.Scope, page.Params) (page.Result[T], error),
	conv func(*Server, T) W) operation {
	fetchWire := func(s *Server, ctx context.Context, p auth.Principal, params page.Params) (wire.List, error) {
		res, err := fetch(ctx, s.db, p.Scope, params)
		if err != nil {
			return wire.List{}, err
		}
		return toList(res, func(x T) W { return conv(s, x) }), nil
	}
	op := operation{pattern: pattern, class: ratelimit.ClassList, compress: true, doc: doc, rest: rest,
		run: func(s *Server, c *call) (any, error) {
			params, err := page.DecodeArgs(c.args)
			if err != nil {
				return nil, err
			}
			return fetchWire(s, c.ctx, c.p, params)
		},
		tool: &toolSpec{name: tool, title: "List " + noun,
			doc: toolDoc + " Page with limit (1 to 100, default 25) and before (the previous page's next_cursor) until has_more is false.",
			in:  typeOf[wire.ListParams](), out: typeOf[W](), list: true},
	}
	if op.rest == nil {
		op.rest = func(s *Server, w http.ResponseWriter, r *http.Request, p auth.Principal) error {
			params, err := page.ParseQuery(r.URL.Query())
			if err != nil {
				return err
			}
			l, err := fetchWire(s, r.Context(), p, params)
			if err != nil {
				return err
			}
			writeJSON(w, http.StatusOK, l)
			return nil
		}
	}
	return op
}
