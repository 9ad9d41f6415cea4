// Package apispec generates the machine-readable descriptions of the API
// from the typed request and response forms of package wire: the JSON
// Schemas of the MCP tools' inputs and outputs, and the OpenAPI 3.1
// document. Both come from the same Go types through the same Generator, so
// the tool server and the REST description cannot drift.
package apispec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/tollgatehq/tollgate/internal/wire"
)

// Schema is a JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1 and of
// MCP tool schemas) as a JSON object.
type Schema = map[string]any

// Generator turns Go types into Schemas. Inline generators write every
// object in place (tool schemas: clients need no $ref resolution); a
// generator with a ref prefix names each struct of package wire once, under
// Defs, and refers to it ("#/components/schemas/Invoice").
type Generator struct {
	refPrefix string
	// Defs holds the named schemas a ref generator has written.
	Defs map[string]Schema
}

// Inline returns a generator that writes every schema in place.
func Inline() *Generator { return &Generator{} }

// WithRefs returns a generator that names the structs of package wire under
// prefix and collects their schemas in Defs.
func WithRefs(prefix string) *Generator {
	return &Generator{refPrefix: prefix, Defs: map[string]Schema{}}
}

var (
	amountType = reflect.TypeFor[wire.Amount]()
	timeType   = reflect.TypeFor[wire.Time]()
	// featureEntryType is a plan feature: a bare key or an object.
	featureEntryType = reflect.TypeFor[wire.PlanFeatureEntry]()
	rawType          = reflect.TypeFor[json.RawMessage]()
	wirePackage      = amountType.PkgPath()
)

// Request returns the schema of a request type: objects are closed
// (additionalProperties false), as the decoders reject unknown fields.
func (g *Generator) Request(t reflect.Type) Schema { return g.of(t, true) }

// Response returns the schema of a response (wire) type: objects are open,
// since the API may add fields to its answers.
func (g *Generator) Response(t reflect.Type) Schema { return g.of(t, false) }

// RequestOf is Request for T.
func RequestOf[T any](g *Generator) Schema { return g.Request(reflect.TypeFor[T]()) }

// ResponseOf is Response for T.
func ResponseOf[T any](g *Generator) Schema { return g.Response(reflect.TypeFor[T]()) }

func (g *Generator) of(t reflect.Type, closed bool) Schema {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case amountType:
		return Schema{"anyOf": []any{
			Schema{"type": "integer", "minimum": 0},
			Schema{"type": "string", "pattern": "^[0-9]+$"},
		}}
	case timeType:
		return Schema{"type": "string", "format": "date-time"}
	case featureEntryType:
		return Schema{"anyOf": []any{Schema{"type": "string"}, g.of(reflect.TypeFor[wire.PlanFeatureRequest](), closed)}}
	case rawType:
		return Schema{"type": "object"}
	}
	switch t.Kind() {
	case reflect.String:
		return Schema{"type": "string"}
	case reflect.Bool:
		return Schema{"type": "boolean"}
	case reflect.Int, reflect.Int32, reflect.Int64:
		return Schema{"type": "integer"}
	case reflect.Slice, reflect.Array:
		return Schema{"type": "array", "items": g.of(t.Elem(), closed)}
	case reflect.Map:
		return Schema{"type": "object"}
	case reflect.Interface:
		return Schema{}
	case reflect.Struct:
		if g.refPrefix == "" || t.PkgPath() != wirePackage {
			return g.object(t, closed)
		}
		if _, ok := g.Defs[t.Name()]; !ok {
			g.Defs[t.Name()] = nil // a placeholder against recursion
			g.Defs[t.Name()] = g.object(t, closed)
		}
		return Schema{"$ref": g.refPrefix + t.Name()}
	}
	panic(fmt.Sprintf("apispec: no schema for %s", t))
}

// object is the schema of a struct: its fields by JSON name, those without
// omitempty required, pointers without omitempty nullable.
func (g *Generator) object(t reflect.Type, closed bool) Schema {
	props := Schema{}
	required := []string{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		optional := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
		s := g.of(f.Type, closed)
		if f.Type.Kind() == reflect.Pointer && !optional {
			s = nullable(s)
		}
		if doc := f.Tag.Get("doc"); doc != "" {
			s["description"] = doc
		}
		if err := applyKeywords(s, f.Tag.Get("schema")); err != nil {
			panic(fmt.Sprintf("apispec: %s.%s: %v", t.Name(), f.Name, err))
		}
		props[name] = s
		if !optional {
			required = append(required, name)
		}
	}
	s := Schema{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	if closed {
		s["additionalProperties"] = false
	}
	return s
}

// nullable lets s also be null.
func nullable(s Schema) Schema {
	switch typ := s["type"].(type) {
	case string:
		s["type"] = []any{typ, "null"}
		return s
	}
	if alts, ok := s["anyOf"].([]any); ok {
		s["anyOf"] = append(alts, Schema{"type": "null"})
		return s
	}
	return Schema{"anyOf": []any{s, Schema{"type": "null"}}}
}

// applyKeywords adds a `schema` tag's keywords to s.
func applyKeywords(s Schema, tag string) error {
	if tag == "" {
		return nil
	}
	for _, kv := range strings.Split(tag, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return fmt.Errorf("schema tag %q: want key=value", kv)
		}
		switch k {
		case "minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems":
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("schema tag %s: %v", k, err)
			}
			s[k] = n
		case "pattern", "format":
			s[k] = v
		case "enum":
			vals := []any{}
			for _, e := range strings.Split(v, "|") {
				vals = append(vals, e)
			}
			s[k] = vals
		default:
			return fmt.Errorf("schema tag: unknown keyword %q", k)
		}
	}
	return nil
}

// ErrorSchema is the error envelope {"error":{"code","message"}}; with
// codes, code is limited to them.
func ErrorSchema(codes ...string) Schema {
	code := Schema{"type": "string", "description": "A machine-readable error code; the message says more."}
	if len(codes) > 0 {
		vals := make([]any, len(codes))
		for i, c := range codes {
			vals[i] = c
		}
		code["enum"] = vals
	}
	return Schema{
		"type": "object", "required": []string{"error"},
		"properties": Schema{"error": Schema{
			"type": "object", "required": []string{"code", "message"},
			"properties": Schema{"code": code, "message": Schema{"type": "string", "description": "What went wrong, naming the offending field where there is one."}},
		}},
	}
}

// ListSchema is the list envelope whose data are items.
func ListSchema(items Schema) Schema {
	return Schema{
		"type": "object", "required": []string{"object", "data", "has_more", "next_cursor"},
		"properties": Schema{
			"object":   Schema{"type": "string", "enum": []any{"list"}},
			"data":     Schema{"type": "array", "items": items, "description": "Newest first."},
			"has_more": Schema{"type": "boolean"},
			"next_cursor": Schema{"type": []any{"string", "null"}, "format": "date-time",
				"description": "Pass as before to get the next page; null on the last page."},
		},
	}
}
