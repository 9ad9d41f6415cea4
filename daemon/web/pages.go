package web

import (
	"bytes"
	_ "embed"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"sync"
)

//go:embed layout.html
var layoutHTML string

// Frame is what the layout shows around a page: its title, who the page is
// for, the navigation, a test-mode banner, a notice, and the page's own
// data (Body), which its "content" template renders. CSRF is the session's
// form token for the page's forms.
type Frame struct {
	Title   string // the document's title, before " · " + Product
	Product string // "customer portal", "dashboard"
	Brand   string // the merchant's name
	Test    bool   // test mode: the banner
	Nav     []Link
	Notice  *Notice
	CSRF    string
	Footer  string
	Body    any
}

// Link is a navigation entry; Current marks the page shown.
type Link struct {
	Href, Text string
	Current    bool
}

// Notice is a message above the page: a success (Done) or a problem.
type Notice struct {
	ID, Text string
	Done     bool
}

// Pages is a family of pages over the layout: each page is a file that
// defines "content" (and may define "head" for extra <head> elements).
// It renders whole into a pooled buffer before anything is sent, so a
// template error is a clean 500.
type Pages struct {
	pages    map[string]*template.Template
	policy   string
	policies map[string]string // a page's own policy, when it runs a script
	buffers  sync.Pool
}

// funcs are the functions every page's templates may call: svg draws a
// Chart.
func funcs() template.FuncMap {
	return template.FuncMap{"svg": func(c Chart) template.HTML { return c.SVG() }}
}

// NewPages parses the layout with each of files (paths in fsys; a page's
// name is its path) and funcs added to the defaults. It panics on a
// template error: pages are embedded, so that is a bug.
func NewPages(fsys fs.FS, extra template.FuncMap, files ...string) *Pages {
	base := template.Must(template.New("layout").Funcs(funcs()).Funcs(extra).Parse(layoutHTML))
	p := &Pages{pages: map[string]*template.Template{}, policies: map[string]string{}, policy: Policy(Hash([]byte(InlineStyle(layoutHTML))))}
	p.buffers.New = func() any { return new(bytes.Buffer) }
	for _, f := range files {
		t := template.Must(base.Clone())
		p.pages[f] = template.Must(t.ParseFS(fsys, f))
	}
	p.pages[messagePage] = template.Must(template.Must(base.Clone()).Parse(messageHTML))
	return p
}

// AllowScript lets page run script, the exact content of its one inline
// <script> element, by its hash in that page's policy alone; every other
// page still runs none. Call it while setting the pages up, before any
// Render.
func (p *Pages) AllowScript(page, script string) {
	p.policies[page] = Policy(Hash([]byte(InlineStyle(layoutHTML))), Hash([]byte(script)))
}

// Policy is the pages' Content-Security-Policy.
func (p *Pages) Policy() string { return p.policy }

// Render writes page with the frame f in status, with the security
// headers. Rendering failures become a plain 500 page and are returned for
// the caller to log.
func (p *Pages) Render(w http.ResponseWriter, status int, page string, f Frame) error {
	buf := p.buffers.Get().(*bytes.Buffer)
	defer func() { buf.Reset(); p.buffers.Put(buf) }()
	t, ok := p.pages[page]
	var err error
	if !ok {
		err = errNoPage(page)
	} else {
		err = t.ExecuteTemplate(buf, "layout", f)
	}
	if err != nil {
		buf.Reset()
		status = http.StatusInternalServerError
		_ = p.pages[messagePage].ExecuteTemplate(buf, "layout", Frame{Title: "Error", Product: f.Product,
			Body: Message{Heading: "Something went wrong", Paragraphs: []string{"This page could not be shown. Please try again."}}})
	}
	h := w.Header()
	policy := p.policy
	if own, ok := p.policies[page]; ok && err == nil {
		policy = own
	}
	SetHeaders(h, policy)
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	return err
}

type errNoPage string

func (e errNoPage) Error() string { return "web: no page " + strconv.Quote(string(e)) }

// Message is the body of a page that only says something: not found,
// expired, forbidden, too many requests, unavailable.
type Message struct {
	ID         string // the heading's id, for tests and links
	Heading    string
	Paragraphs []string
	// Link, when set, is one way on (the merchant's return URL).
	Link *Link
}

const messagePage = "message"

const messageHTML = `{{define "content"}}{{with .Body}}<h1{{if .ID}} id="{{.ID}}"{{end}}>{{.Heading}}</h1>
{{range .Paragraphs}}<p>{{.}}</p>
{{end}}{{with .Link}}<p><a href="{{.Href}}" id="return-link">{{.Text}}</a></p>
{{end}}{{end}}{{end}}`

// RenderMessage writes a message page in status.
func (p *Pages) RenderMessage(w http.ResponseWriter, status int, f Frame, m Message) error {
	f.Body = m
	return p.Render(w, status, messagePage, f)
}
