package daemon

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tollgatehq/tollgate/internal/apperr"
)

// GET /docs: the API reference for people, rendered from the very bytes
// /openapi.json serves, so the page and the document cannot disagree. It
// needs no key, loads nothing from elsewhere and runs no script; its only
// style is inline, allowed by its hash.

// apiDocs serves the reference page.
func (s *Server) apiDocs(w http.ResponseWriter, r *http.Request) {
	var page bytes.Buffer
	if err := renderDocs(&page, s.openapi); err != nil {
		writeError(w, r, s.log, apperr.New(apperr.Internal, "the API reference could not be rendered; see the daemon's log"))
		s.log.Error("rendering /docs", "err", err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", docsCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(page.Bytes())
}

// The subset of an OpenAPI document the page shows. Schemas stay maps:
// they nest and combine (anyOf, oneOf, $ref) in ways a struct would lose.
type (
	oaDoc struct {
		Info struct {
			Title, Description, Version string
		}
		Tags       []struct{ Name, Description string }
		Paths      map[string]map[string]oaOp
		Webhooks   map[string]map[string]oaOp
		Components struct{ Schemas map[string]oaSchema }
	}
	oaOp struct {
		OperationID string `json:"operationId"`
		Summary     string
		Description string
		Tags        []string
		Parameters  []struct {
			Name, In, Description string
			Required              bool
			Schema                oaSchema
		}
		RequestBody *struct {
			Content map[string]struct{ Schema oaSchema }
		} `json:"requestBody"`
		Responses map[string]struct {
			Description string
			Content     map[string]struct{ Schema oaSchema }
		}
	}
	oaSchema map[string]any
)

// What the template shows.
type (
	docsPage struct {
		Title, Intro, Version string
		Groups                []docsGroup
		Schemas               []docsSchema
		Events                []docsEvent
		Signature             string
		CSS                   template.CSS
	}
	docsGroup struct {
		Name, About string
		Ops         []docsOp
	}
	docsOp struct {
		ID, Method, Path, Summary, Doc string
		Params                         []docsField
		Bodies                         []docsSchema
		Responses                      []docsResponse
		Errors                         []docsResponse
	}
	docsField struct {
		Name, In, Doc, Limits string
		Type                  template.HTML
		Required              bool
	}
	docsSchema struct {
		Name   string
		Fields []docsField
	}
	docsResponse struct {
		Status, Doc string
		Type        template.HTML
		Codes       []string
	}
	docsEvent struct {
		Type, Doc string
		Data      template.HTML
	}
)

// renderDocs writes the page for the OpenAPI document raw.
func renderDocs(w *bytes.Buffer, raw []byte) error {
	var doc oaDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("reading the API description: %w", err)
	}
	page := docsPage{Title: doc.Info.Title, Intro: doc.Info.Description, Version: doc.Info.Version, CSS: template.CSS(docsCSS)}
	byTag := map[string][]docsOp{}
	for _, path := range docsKeys(doc.Paths) {
		for _, method := range docsKeys(doc.Paths[path]) {
			op := doc.Paths[path][method]
			tag := ""
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			byTag[tag] = append(byTag[tag], docsOperation(strings.ToUpper(method), path, op, doc.Components.Schemas))
		}
	}
	for _, t := range doc.Tags {
		if ops := byTag[t.Name]; len(ops) > 0 {
			page.Groups = append(page.Groups, docsGroup{Name: t.Name, About: t.Description, Ops: ops})
		}
	}
	for _, name := range docsKeys(doc.Components.Schemas) {
		page.Schemas = append(page.Schemas, docsSchema{Name: name, Fields: docsFields(doc.Components.Schemas[name])})
	}
	for _, typ := range docsKeys(doc.Webhooks) {
		op := doc.Webhooks[typ]["post"]
		ev := docsEvent{Type: typ, Doc: op.Description}
		if op.RequestBody != nil {
			body := op.RequestBody.Content["application/json"].Schema
			if data := docsObj(docsObj(body["properties"])["data"]); data != nil {
				ev.Data = docsType(data)
			}
		}
		for _, p := range op.Parameters {
			if p.Name == "x-wc-signature" {
				page.Signature = p.Description
			}
		}
		page.Events = append(page.Events, ev)
	}
	return docsTemplate.Execute(w, page)
}

// docsOperation is one operation as the page shows it.
func docsOperation(method, path string, op oaOp, schemas map[string]oaSchema) docsOp {
	d := docsOp{ID: op.OperationID, Method: method, Path: path, Summary: op.Summary, Doc: op.Description}
	for _, p := range op.Parameters {
		d.Params = append(d.Params, docsField{Name: p.Name, In: p.In, Doc: p.Description,
			Type: docsType(p.Schema), Limits: docsLimits(p.Schema), Required: p.Required || p.In == "path"})
	}
	if op.RequestBody != nil {
		body := op.RequestBody.Content["application/json"].Schema
		for _, alt := range docsAlternatives(body) {
			fields := alt
			if name := docsRef(alt); name != "" {
				fields = schemas[name]
			}
			d.Bodies = append(d.Bodies, docsSchema{Name: docsRef(alt), Fields: docsFields(fields)})
		}
	}
	statuses := docsKeys(op.Responses)
	slices.SortFunc(statuses, func(a, b string) int { return strings.Compare(docsStatusOrder(a), docsStatusOrder(b)) })
	for _, status := range statuses {
		resp := op.Responses[status]
		body := resp.Content["application/json"].Schema
		r := docsResponse{Status: status, Doc: resp.Description}
		if codes := docsErrorCodes(body); len(codes) > 0 {
			r.Codes = codes
			d.Errors = append(d.Errors, r)
			continue
		}
		if status == "default" {
			d.Errors = append(d.Errors, r)
			continue
		}
		r.Type = docsType(body)
		d.Responses = append(d.Responses, r)
	}
	return d
}

// docsStatusOrder sorts "default" after every status code.
func docsStatusOrder(status string) string {
	if status == "default" {
		return "999"
	}
	return status
}

// docsAlternatives are a body's possible shapes: the members of a oneOf, or
// the body itself.
func docsAlternatives(s oaSchema) []oaSchema {
	if out := docsMembers(s, "oneOf"); len(out) > 0 {
		return out
	}
	return []oaSchema{s}
}

// docsFields lists an object schema's properties, required ones first.
func docsFields(s oaSchema) []docsField {
	props := docsObj(s["properties"])
	required := map[string]bool{}
	for _, r := range docsList(s["required"]) {
		if name, ok := r.(string); ok {
			required[name] = true
		}
	}
	var out []docsField
	for _, name := range docsKeys(props) {
		p := docsObj(props[name])
		out = append(out, docsField{Name: name, Type: docsType(p), Limits: docsLimits(p), Required: required[name],
			Doc: docsStr(p["description"])})
	}
	slices.SortStableFunc(out, func(a, b docsField) int {
		switch {
		case a.Required == b.Required:
			return 0
		case a.Required:
			return -1
		}
		return 1
	})
	return out
}

// docsType is a schema's type in words, with named schemas linked to their
// section of the page.
func docsType(s oaSchema) template.HTML {
	if name := docsRef(s); name != "" {
		return template.HTML(`<a href="#schema-` + template.HTMLEscapeString(name) + `">` + template.HTMLEscapeString(name) + `</a>`)
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if ms := docsMembers(s, key); len(ms) > 0 {
			parts := make([]string, len(ms))
			for i, m := range ms {
				parts[i] = string(docsType(m))
			}
			return template.HTML(strings.Join(parts, " or "))
		}
	}
	if props := docsObj(s["properties"]); props["has_more"] != nil && docsObj(props["data"]) != nil {
		return "list of " + docsType(docsObj(docsObj(props["data"])["items"]))
	}
	var types []string
	for _, t := range docsList(s["type"]) {
		types = append(types, docsStr(t))
	}
	if t := docsStr(s["type"]); t != "" {
		types = []string{t}
	}
	for i, t := range types {
		switch t {
		case "array":
			types[i] = "array of " + string(docsType(docsObj(s["items"])))
		case "string":
			if f := docsStr(s["format"]); f != "" {
				types[i] = "string (" + template.HTMLEscapeString(f) + ")"
			}
		default:
			types[i] = template.HTMLEscapeString(t)
		}
	}
	if len(types) == 0 {
		return "any"
	}
	return template.HTML(strings.Join(types, " or "))
}

// docsLimits is what a schema admits beyond its type: lengths, bounds,
// patterns, sizes and allowed values, its anyOf members' included.
func docsLimits(s oaSchema) string {
	var out []string
	if lo, hi := s["minLength"], s["maxLength"]; lo != nil || hi != nil {
		out = append(out, docsBounds(lo, hi, " characters"))
	}
	if lo, hi := s["minimum"], s["maximum"]; lo != nil || hi != nil {
		out = append(out, docsBounds(lo, hi, ""))
	}
	if lo, hi := s["minItems"], s["maxItems"]; lo != nil || hi != nil {
		out = append(out, docsBounds(lo, hi, " items"))
	}
	if p := docsStr(s["pattern"]); p != "" {
		out = append(out, "matches "+p)
	}
	if vals := docsList(s["enum"]); len(vals) > 0 {
		words := make([]string, len(vals))
		for i, v := range vals {
			words[i] = fmt.Sprint(v)
		}
		out = append(out, "one of "+strings.Join(words, ", "))
	}
	for _, m := range docsMembers(s, "anyOf") {
		if l := docsLimits(m); l != "" {
			out = append(out, docsStr(m["type"])+": "+l)
		}
	}
	return strings.Join(out, "; ")
}

// docsBounds words a range: "1 to 500 characters", "at least 0", "at most 100".
func docsBounds(lo, hi any, unit string) string {
	switch {
	case lo != nil && hi != nil:
		return docsNum(lo) + " to " + docsNum(hi) + unit
	case lo != nil:
		return "at least " + docsNum(lo) + unit
	}
	return "at most " + docsNum(hi) + unit
}

// docsErrorCodes are the error codes an error response's envelope admits.
func docsErrorCodes(s oaSchema) []string {
	code := docsObj(docsObj(docsObj(docsObj(s["properties"])["error"])["properties"])["code"])
	var out []string
	for _, c := range docsList(code["enum"]) {
		out = append(out, docsStr(c))
	}
	return out
}

func docsRef(s oaSchema) string {
	name, _ := strings.CutPrefix(docsStr(s["$ref"]), "#/components/schemas/")
	return name
}

func docsMembers(s oaSchema, key string) []oaSchema {
	var out []oaSchema
	for _, m := range docsList(s[key]) {
		if mm := docsObj(m); mm != nil {
			out = append(out, mm)
		}
	}
	return out
}

// docsSlug makes a tag's name an id: "Test clocks" is test-clocks.
func docsSlug(name string) string { return strings.ReplaceAll(strings.ToLower(name), " ", "-") }

// docsObj is v as a JSON object, or nil.
func docsObj(v any) map[string]any { o, _ := v.(map[string]any); return o }

func docsList(v any) []any { l, _ := v.([]any); return l }

func docsStr(v any) string { s, _ := v.(string); return s }

// docsNum prints a JSON number without a fraction when it has none.
func docsNum(v any) string {
	if f, ok := v.(float64); ok {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

func docsKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// The page's template and its one style sheet, inlined into it.
var (
	//go:embed pages/docs.css
	docsCSS string
	//go:embed pages/docs.html
	docsHTML     string
	docsTemplate = template.Must(template.New("docs").Funcs(template.FuncMap{"lower": strings.ToLower, "slug": docsSlug}).Parse(docsHTML))
)

// docsCSP allows the page's one inline style by its hash, and nothing else.
var docsCSP = func() string {
	sum := sha256.Sum256([]byte(docsCSS))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
}()
