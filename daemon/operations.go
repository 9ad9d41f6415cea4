package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/apperr"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/fields"
	"github.com/tollgatehq/tollgate/internal/idempotency"
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
	// movesFunds marks an operation that may move money (an immediate plan
	// change charges its proration). No tool may: the tool server's
	// instructions promise as much, and a test holds that a tool over such
	// an operation has a run of its own that refuses to.
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
	// ownKeys marks a POST whose body carries its own idempotency key,
	// kept with its rows (credits, meter events): the Idempotency-Key
	// header stands in for it. Every other POST is keyed by the table: the
	// first answer to a request with the header is recorded with its write,
	// in its transaction (the run writes in c.tx), and a retry with the key
	// answers it again.
	ownKeys bool
	// secret marks a POST whose answer carries a secret shown once (a
	// portal link): it is never recorded, so the Idempotency-Key header is
	// checked but not kept, and a retry makes a new secret.
	secret bool
	// body is what a POST's body may be: required (the default), optional
	// (empty means {}) or none (not read).
	body bodyKind
	// rest serves REST itself where its request is richer than the tool's
	// (a batch, query filters, a path with a body); nil: run.
	rest restFunc
	// tool, when set, makes the operation a tool of the tool server.
	tool *toolSpec
	// tools are further tools over the same operation, each with a run of
	// its own that narrows it (a plan change's preview; a change at the
	// period's end only, since a tool never moves funds).
	tools []*toolSpec
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
	// run, when set, replaces the operation's run for the tool.
	run func(s *Server, c *call) (any, error)
	// readOnly marks a tool over a POST that changes nothing (a preview):
	// it needs only billing:read.
	readOnly bool
}

// toolSpecs are the operation's tools.
func (o operation) toolSpecs() []*toolSpec {
	if o.tool == nil {
		return o.tools
	}
	return append([]*toolSpec{o.tool}, o.tools...)
}

// bodyKind is what a POST's body may be.
type bodyKind int

const (
	bodyRequired bodyKind = iota
	bodyOptional
	bodyNone
)

// restFunc is a REST handler of the table: a method expression such as
// (*Server).getCustomer, bound to the server when the routes are built.
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
	// tx, for a keyed request, is the transaction its Idempotency-Key
	// record is written in: the run writes in it (nil: as it will).
	tx *store.Tx
	// path is a REST request's path values (nil for a tool call).
	path func(name string) string
}

// objectID is the object a call names: the {id} of a REST path, or a
// tool's id argument.
func (c *call) objectID() (string, error) {
	if c.path != nil {
		return c.path("id"), nil
	}
	a, err := wire.DecodeObjectArgs(c.args)
	return a.ID, err
}

// q is where the run reads and writes: the keyed request's transaction,
// or the pool.
func (c *call) q(s *Server) store.Querier {
	if c.tx != nil {
		return c.tx
	}
	return s.db
}

// apiOperations is the operation table, by noun. The order is the API
// description's order of tags (the first use of each).
func apiOperations() []operation {
	var ops []operation
	for _, noun := range [][]operation{
		invoiceOperations(), meterOperations(), meterEventOperations(), creditOperations(), paymentOperations(),
		subscriptionOperations(), subscriptionChangeOperations(), eventOperations(), featureOperations(), entitlementOperations(),
		customerOperations(), planOperations(), testClockOperations(), usageOperations(), alertOperations(), couponOperations(),
		portalOperations(),
	} {
		ops = append(ops, noun...)
	}
	return ops
}

// writes reports whether the operation changes something (a POST).
func (o operation) writes() bool { return strings.HasPrefix(o.pattern, "POST ") }

// keyed reports whether the table records the operation's Idempotency-Key.
func (o operation) keyed() bool { return o.writes() && !o.ownKeys && !o.secret }

// route is the operation's row of the route table.
func (o operation) route(s *Server) route {
	api := o.serve(s)
	if o.rest != nil {
		api = func(w http.ResponseWriter, r *http.Request, p auth.Principal) error { return o.rest(s, w, r, p) }
	}
	if o.writes() {
		api = checkIdempotencyKey(api)
	}
	return route{pattern: o.pattern, class: o.class, creates: o.writes(), api: api, compress: o.compress}
}

// serve is REST over run: the body of a POST, or the path's values of a
// GET, as the arguments. A keyed operation sent an Idempotency-Key runs
// through keyed.
func (o operation) serve(s *Server) apiFunc {
	status := o.status
	if status == 0 {
		status = http.StatusOK
	}
	segments := wildcards(o.pattern)
	write := o.writes()
	return func(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
		c := &call{ctx: r.Context(), p: p, idempotencyKey: r.Header.Get("Idempotency-Key"), path: r.PathValue}
		if !write {
			c.args = pathArgs(r, segments)
		} else {
			var body []byte
			if o.body != bodyNone {
				var err error
				if body, err = readBody(w, r, s.cfg.MaxBodyBytes); err != nil {
					return err
				}
			}
			var err error
			if c.args, err = decodeArgs(body, o.body); err != nil {
				return err
			}
			if o.keyed() && c.idempotencyKey != "" {
				return o.runKeyed(s, w, r, c, body, status)
			}
		}
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

// decodeArgs parses a request body as the arguments: none, or an empty
// optional one, is {}.
func decodeArgs(body []byte, kind bodyKind) (*fields.Object, error) {
	if kind == bodyNone || (kind == bodyOptional && len(bytes.TrimSpace(body)) == 0) {
		return fields.FromMap(nil), nil
	}
	return fields.Decode(body)
}

// runKeyed runs a keyed request once per key: the first answer is recorded
// in the transaction of the operation's write (c.tx), and a retry with the
// same key and parameters (path and body) gets it back, whatever became
// of the first answer on its way: a 503 after the commit, a dropped
// connection. The same key with other parameters is invalid_request.
func (o operation) runKeyed(s *Server, w http.ResponseWriter, r *http.Request, c *call, body []byte, status int) error {
	req := idempotency.Request{Scope: c.p.Scope, Operation: o.doc.ID, Key: c.idempotencyKey,
		Fingerprint: idempotency.Fingerprint([]byte(r.URL.Path), canonicalJSON(body))}
	a, err := idempotency.Do(c.ctx, s.db, req, func(tx *store.Tx) (int, []byte, error) {
		c.tx = tx
		out, err := o.run(s, c)
		if err != nil {
			return 0, nil, err
		}
		raw, err := json.Marshal(out)
		if err != nil {
			return 0, nil, err
		}
		if c.replayed {
			return http.StatusOK, append(raw, '\n'), nil
		}
		return status, append(raw, '\n'), nil
	})
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.Status)
	_, _ = w.Write(a.Body)
	return nil
}

// canonicalJSON is a body with its keys sorted and its spacing dropped, so
// a retry that encodes the same parameters differently is the same
// request. A body that is not JSON is taken as it is.
func canonicalJSON(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return body
	}
	out, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return out
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

// checkIdempotencyKey refuses, before the body is read, a write whose
// Idempotency-Key header is not a key: more than one, too long, or not
// text.
func checkIdempotencyKey(next apiFunc) apiFunc {
	return func(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
		keys := r.Header.Values("Idempotency-Key")
		var err error
		switch {
		case len(keys) > 1:
			err = apperr.Field("Idempotency-Key", "send one header, not %d", len(keys))
		case len(keys) == 1:
			err = idempotency.CheckKey(keys[0])
		}
		if err != nil {
			dropBody(w, r)
			return err
		}
		return next(w, r, p)
	}
}

// toolTable is the tool server's registry, built from the operations with
// a tool, by name (the order tools/list gives them).
func toolTable() []tool {
	var out []tool
	for _, o := range apiOperations() {
		for _, t := range o.toolSpecs() {
			run := o.run
			if t.run != nil {
				run = t.run
			}
			out = append(out, tool{name: t.name, title: t.title, doc: t.doc, rest: o.pattern, write: o.writes() && !t.readOnly,
				idempotent: t.idempotent, in: t.in, out: t.out, list: t.list, testOnly: t.testOnly, run: run})
		}
	}
	slices.SortFunc(out, func(a, b tool) int { return strings.Compare(a.name, b.name) })
	return out
}

// operationDocs is the API description's entry of each operation, by
// route pattern.
func operationDocs() map[string]apispec.Operation {
	ops := map[string]apispec.Operation{}
	for _, o := range apiOperations() {
		doc := o.doc
		switch {
		case o.keyed():
			doc.Params = append(slices.Clip(doc.Params), keyHeader)
		case o.secret:
			doc.Params = append(slices.Clip(doc.Params), unrecordedKeyHeader)
		}
		// Every write refuses an Idempotency-Key that is not a key.
		if o.writes() && !slices.ContainsFunc(doc.Errors, func(e apispec.ErrorCase) bool { return e.Code == string(apperr.InvalidRequest) }) {
			doc.Errors = append(slices.Clip(doc.Errors), errs(apperr.InvalidRequest)...)
		}
		ops[o.pattern] = doc
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
