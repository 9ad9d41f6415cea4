package apispec

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Version is the description's info.version.
const Version = "1.0.0"

// Param is a path, query or header parameter.
type Param struct {
	Name     string
	In       string // "path", "query" or "header"
	Doc      string
	Required bool
	Schema   Schema // nil: a string
}

// Response is one success answer of an operation.
type Response struct {
	Status int
	Doc    string
	// Body is the wire type answered; with List, the type of the list
	// envelope's items. Schema, when set, replaces both: it builds the
	// schema with the document's generator.
	Body   reflect.Type
	List   bool
	Schema func(*Generator) Schema
}

// ErrorCase is an error an operation answers: the code and its status.
type ErrorCase struct {
	Status int
	Code   string
}

// Operation describes one route of the REST API.
type Operation struct {
	ID      string // operationId, e.g. createInvoice
	Tag     string
	Summary string
	Doc     string
	Params  []Param
	// Query is a struct (wire.ListParams) whose fields are query parameters.
	Query reflect.Type
	// Body is the request body type; BodySchema, when set, replaces it.
	Body       reflect.Type
	BodySchema func(*Generator) Schema
	Responses  []Response
	Errors     []ErrorCase
	// Public operations take no key.
	Public bool
}

// Document is an OpenAPI 3.1 document being built.
type Document struct {
	gen      *Generator
	paths    map[string]map[string]any
	webhooks map[string]any
	tags     []string
	tagDocs  map[string]string
	info     map[string]any
	servers  []any
	headers  map[string]any
}

// NewDocument starts the description of the API served at baseURL.
// versionHeader is the wc-version every response carries.
func NewDocument(baseURL, title, description, versionHeader string) *Document {
	return &Document{
		gen:      WithRefs("#/components/schemas/"),
		paths:    map[string]map[string]any{},
		webhooks: map[string]any{},
		tagDocs:  map[string]string{"Webhooks": "Signed deliveries of the event feed to your endpoints."},
		info:     map[string]any{"title": title, "version": Version, "description": description},
		servers:  []any{map[string]any{"url": baseURL}},
		headers: map[string]any{"wc-version": map[string]any{
			"description": "The API version of the response, currently " + versionHeader + ".",
			"schema":      Schema{"type": "string", "example": versionHeader},
		}},
	}
}

// Tag describes a tag operations name.
func (d *Document) Tag(name, description string) { d.tagDocs[name] = description }

// Add describes the route method path (path in ServeMux form, {id}).
func (d *Document) Add(method, path string, op Operation) {
	if d.paths[path] == nil {
		d.paths[path] = map[string]any{}
	}
	if op.Tag != "" && !slices.Contains(d.tags, op.Tag) {
		d.tags = append(d.tags, op.Tag)
	}
	o := map[string]any{"operationId": op.ID, "summary": op.Summary}
	if op.Doc != "" {
		o["description"] = op.Doc
	}
	if op.Tag != "" {
		o["tags"] = []string{op.Tag}
	}
	if op.Public {
		o["security"] = []any{}
	}
	var params []any
	for _, p := range op.Params {
		params = append(params, d.param(p))
	}
	if op.Query != nil {
		s := Inline().Request(op.Query)
		props := s["properties"].(Schema)
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			ps := props[n].(Schema)
			doc, _ := ps["description"].(string)
			delete(ps, "description")
			params = append(params, d.param(Param{Name: n, In: "query", Doc: doc, Schema: ps}))
		}
	}
	if len(params) > 0 {
		o["parameters"] = params
	}
	var body Schema
	switch {
	case op.BodySchema != nil:
		body = op.BodySchema(d.gen)
	case op.Body != nil:
		body = d.gen.Request(op.Body)
	}
	if body != nil {
		o["requestBody"] = map[string]any{"required": true, "content": jsonContent(body)}
	}
	responses := map[string]any{}
	for _, r := range op.Responses {
		var s Schema
		switch {
		case r.Schema != nil:
			s = r.Schema(d.gen)
		case r.List:
			s = ListSchema(d.gen.Response(r.Body))
		default:
			s = d.gen.Response(r.Body)
		}
		responses[strconv.Itoa(r.Status)] = map[string]any{"description": r.Doc, "headers": d.headers, "content": jsonContent(s)}
	}
	byStatus := map[int][]string{}
	for _, e := range op.Errors {
		if !slices.Contains(byStatus[e.Status], e.Code) {
			byStatus[e.Status] = append(byStatus[e.Status], e.Code)
		}
	}
	for status, codes := range byStatus {
		h := d.headers
		if status == 429 {
			h = map[string]any{"wc-version": d.headers["wc-version"], "retry-after": map[string]any{
				"description": "Seconds to wait before retrying.", "schema": Schema{"type": "integer"},
			}}
		}
		responses[strconv.Itoa(status)] = map[string]any{
			"description": "Error: " + strings.Join(codes, ", "), "headers": h, "content": jsonContent(ErrorSchema(codes...)),
		}
	}
	responses["default"] = map[string]any{"description": "Any other error (e.g. 503 service_unavailable, 500 internal), in the error envelope.",
		"headers": d.headers, "content": jsonContent(Schema{"$ref": "#/components/schemas/Error"})}
	o["responses"] = responses
	d.paths[path][strings.ToLower(method)] = o
}

func (d *Document) param(p Param) map[string]any {
	s := p.Schema
	if s == nil {
		s = Schema{"type": "string"}
	}
	m := map[string]any{"name": p.Name, "in": p.In, "schema": s}
	if p.Doc != "" {
		m["description"] = p.Doc
	}
	if p.Required || p.In == "path" {
		m["required"] = true
	}
	return m
}

// Webhook describes the delivery of eventType, whose data is the wire form
// data (nil: any object).
func (d *Document) Webhook(eventType, doc string, data reflect.Type) {
	dataSchema := Schema{"type": "object"}
	if data != nil {
		dataSchema = d.gen.Response(data)
	}
	dataSchema["description"] = "The object the event is about, after the change."
	body := Schema{
		"type": "object", "required": []string{"id", "type", "created_at", "data"},
		"properties": Schema{
			"object":     Schema{"type": "string", "enum": []any{"event"}},
			"id":         Schema{"type": "string", "description": "evt_…; deliveries may repeat, so key on it."},
			"type":       Schema{"type": "string", "enum": []any{eventType}},
			"created_at": Schema{"type": "string", "format": "date-time"},
			"data":       dataSchema,
			"livemode":   Schema{"type": "boolean"},
		},
	}
	d.webhooks[eventType] = map[string]any{"post": map[string]any{
		"operationId": "webhook_" + strings.ReplaceAll(eventType, ".", "_"),
		"summary":     eventType, "description": doc, "tags": []string{"Webhooks"}, "security": []any{},
		"parameters": []any{
			d.param(Param{Name: "x-wc-signature", In: "header", Required: true,
				Doc: "t=<unix seconds>,v1=<hex HMAC-SHA256 of \"<t>.<raw body>\" keyed with the endpoint's whsec_ secret>; reject a t more than 300 s from now."}),
			d.param(Param{Name: "wc-event-type", In: "header", Required: true, Schema: Schema{"type": "string", "enum": []any{eventType}}}),
		},
		"requestBody": map[string]any{"required": true, "content": jsonContent(body)},
		"responses": map[string]any{"2XX": map[string]any{
			"description": "Acknowledged. Any other answer is retried 1, 5, 30 and 120 minutes later (5 attempts in all).",
		}},
	}}
}

// JSON returns the OpenAPI 3.1 document.
func (d *Document) JSON() ([]byte, error) {
	schemas := map[string]any{"Error": ErrorSchema()}
	for name, s := range d.gen.Defs {
		if s == nil {
			return nil, fmt.Errorf("apispec: schema %s left unfinished", name)
		}
		schemas[name] = s
	}
	tags := make([]any, 0, len(d.tags)+1)
	for _, t := range append(d.tags, "Webhooks") {
		tag := map[string]any{"name": t}
		if doc := d.tagDocs[t]; doc != "" {
			tag["description"] = doc
		}
		tags = append(tags, tag)
	}
	return json.MarshalIndent(map[string]any{
		"openapi":  "3.1.0",
		"info":     d.info,
		"servers":  d.servers,
		"tags":     tags,
		"paths":    d.paths,
		"webhooks": d.webhooks,
		"security": []any{map[string]any{"bearer": []any{}}},
		"components": map[string]any{
			"schemas": schemas,
			"securitySchemes": map[string]any{"bearer": map[string]any{
				"type": "http", "scheme": "bearer",
				"description": "A secret key: sk_test_… (test mode) or sk_live_… (live mode). It fixes the merchant and the mode of everything the request reads or creates.",
			}},
		},
	}, "", "  ")
}

func jsonContent(s Schema) map[string]any {
	return map[string]any{"application/json": map[string]any{"schema": s}}
}
