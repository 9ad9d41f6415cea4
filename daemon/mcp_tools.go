package daemon

import (
	"reflect"

	"github.com/tollgatehq/tollgate/internal/apispec"
	"github.com/tollgatehq/tollgate/internal/ratelimit"
	"github.com/tollgatehq/tollgate/internal/wire"
)

// The tool registry: one entry per operation of the table that names a
// tool (toolTable). Each entry's run is its operation's, the very adapter
// REST calls: the same decoder (fields from the tool's argument object),
// the same domain call, the same wire form. Schemas come from the entry's
// in and out types through package apispec, like the OpenAPI document's.

// tool is one entry of the registry.
type tool struct {
	name  string
	title string
	doc   string
	// rest is the route pattern of the REST counterpart.
	rest string
	// write tools need billing:write and are subject to mode_mismatch;
	// the others need billing:read and are read-only.
	write      bool
	idempotent bool
	in         reflect.Type
	// out is the result's wire type; with list, the type of the list
	// envelope's items.
	out  reflect.Type
	list bool
	// testOnly tools are listed for test-mode credentials only.
	testOnly bool
	run      func(s *Server, c *call) (any, error)
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// getOperation declares a read of one object by {id}: the tool takes {id}
// as its argument.
func getOperation(pattern, tool, noun, toolDoc string, doc apispec.Operation, out reflect.Type,
	get func(s *Server, c *call, id string) (any, error)) operation {
	return operation{pattern: pattern, class: ratelimit.ClassList, doc: doc,
		tool: &toolSpec{name: tool, title: "Get " + noun, doc: toolDoc, in: typeOf[wire.ObjectArgs](), out: out},
		run: func(s *Server, c *call) (any, error) {
			a, err := wire.DecodeObjectArgs(c.args)
			if err != nil {
				return nil, err
			}
			return get(s, c, a.ID)
		},
	}
}

// wireOf returns v's wire form, or err.
func wireOf[T, W any](v T, err error, conv func(T) W) (any, error) {
	if err != nil {
		return nil, err
	}
	return conv(v), nil
}
