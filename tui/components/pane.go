package components

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/tollgatehq/tollgate/tui/common"
)

// Pane is a scrolling block of text, e.g. an object's JSON.
type Pane struct {
	lines  []string
	offset int
	height int
}

// SetText replaces the text and scrolls to its top.
func (p *Pane) SetText(s string) {
	p.lines = strings.Split(strings.TrimRight(s, "\n"), "\n")
	p.offset = 0
}

// SetHeight sets the lines available.
func (p *Pane) SetHeight(h int) { p.height = max(h, 1); p.Scroll(0) }

// Scroll moves the view by d lines.
func (p *Pane) Scroll(d int) {
	p.offset = max(min(p.offset+d, len(p.lines)-p.height), 0)
}

// Top and Bottom jump to either end.
func (p *Pane) Top()    { p.offset = 0 }
func (p *Pane) Bottom() { p.Scroll(len(p.lines)) }

// View returns the visible lines, each fitted to width.
func (p *Pane) View(width int) string {
	end := min(p.offset+p.height, len(p.lines))
	out := make([]string, 0, p.height)
	for _, l := range p.lines[p.offset:end] {
		out = append(out, common.Fit(l, width))
	}
	return common.Lines(strings.Join(out, "\n"), p.height)
}

// PrettyJSON indents raw JSON for reading, with control characters made
// harmless; text that is not JSON is returned cleaned.
func PrettyJSON(raw []byte) string {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return common.Clean(string(raw))
	}
	// json.Indent keeps string escapes, so no raw control character
	// survives inside strings; tabs from indentation are not used.
	return b.String()
}
