package web

import (
	"encoding/xml"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFormsCheck(t *testing.T) {
	t.Parallel()
	f := NewForms("https://pay.example.com")
	const session = "s3cr3t"
	good := url.Values{CSRFField: {CSRFToken(session)}}.Encode()
	for _, c := range []struct {
		name, method, body string
		headers            map[string]string
		ok                 bool
	}{
		{"same origin", "POST", good, map[string]string{"Sec-Fetch-Site": "same-origin"}, true},
		{"no browser headers", "POST", good, nil, true},
		{"trusted base origin", "POST", good, map[string]string{"Origin": "https://pay.example.com"}, true},
		{"cross-site", "POST", good, map[string]string{"Sec-Fetch-Site": "cross-site"}, false},
		{"foreign origin", "POST", good, map[string]string{"Origin": "https://evil.example"}, false},
		{"no token", "POST", "", nil, false},
		{"another session's token", "POST", url.Values{CSRFField: {CSRFToken("other")}}.Encode(), nil, false},
		{"two tokens", "POST", good + "&" + good, nil, false},
		{"GET", "GET", "", nil, false},
	} {
		r := httptest.NewRequest(c.method, "http://internal:8080/portal/x/subscriptions/sub_1/cancel", strings.NewReader(c.body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range c.headers {
			r.Header.Set(k, v)
		}
		err := f.Check(httptest.NewRecorder(), r, session)
		if (err == nil) != c.ok || (err != nil && !Forbidden(err)) {
			t.Errorf("%s: %v, want ok=%v", c.name, err, c.ok)
		}
	}
}

func TestPagesHeadersAndPolicy(t *testing.T) {
	t.Parallel()
	p := NewPages(nil, nil)
	w := httptest.NewRecorder()
	if err := p.RenderMessage(w, http.StatusNotFound, Frame{Title: "Gone <b>", Product: "customer portal"}, Message{Heading: "<script>x</script>"}); err != nil {
		t.Fatal(err)
	}
	h := w.Header()
	if w.Code != 404 || h.Get("Cache-Control") != "no-store" || h.Get("X-Frame-Options") != "DENY" ||
		!strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") || !strings.Contains(h.Get("Content-Security-Policy"), Hash([]byte(InlineStyle(layoutHTML)))) {
		t.Fatalf("%d %v", w.Code, h)
	}
	if body := w.Body.String(); strings.Contains(body, "<script>") || !strings.Contains(body, "&lt;script&gt;") {
		t.Fatalf("not escaped:\n%s", body)
	}
}

func TestChartSVG(t *testing.T) {
	t.Parallel()
	svg := string(Chart{Label: `Calls <&>`, Unit: "calls", Bars: []Bar{{"1 Nov", "0"}, {"2 Nov", "120"}, {"3 Nov", "x"}, {"4 Nov", "60"}}}.SVG())
	if strings.Count(svg, "<rect") != 4 || !strings.Contains(svg, "Calls &lt;&amp;&gt;") || !strings.Contains(svg, "2 Nov: 120 calls") ||
		!strings.Contains(svg, `>200<`) || strings.Contains(svg, "style=") {
		t.Fatalf("%s", svg)
	}
	if empty := string(Chart{Label: "none"}.SVG()); !strings.Contains(empty, "<svg") || strings.Contains(empty, "<rect") {
		t.Fatal(empty)
	}
}

// FuzzChart draws arbitrary bars: never a panic, and the SVG is
// well-formed with only the chart's own elements, whatever the text (no
// data escapes into markup).
func FuzzChart(f *testing.F) {
	f.Add("label", "1 Nov", "12", "2 Nov", "1e308")
	f.Add("<x>", "<script>", "-1", "\"'", "NaN")
	f.Fuzz(func(t *testing.T, label, l1, v1, l2, v2 string) {
		for _, s := range []string{label, l1, l2, v1, v2} {
			if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0xFFFE || r == 0xFFFF }) {
				return // not text a page holds
			}
		}
		svg := string(Chart{Label: label, Bars: []Bar{{l1, v1}, {l2, v2}}}.SVG())
		d := xml.NewDecoder(strings.NewReader(svg))
		for {
			tok, err := d.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%v in %s", err, svg)
			}
			if el, ok := tok.(xml.StartElement); ok && !slices.Contains([]string{"svg", "title", "line", "text", "rect"}, el.Name.Local) {
				t.Fatalf("element %s in %s", el.Name.Local, svg)
			}
		}
	})
}
