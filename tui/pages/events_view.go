package pages

import (
	"fmt"
	"strings"

	"github.com/tollgatehq/tollgate/tui/common"
)

// Column widths of an event row; with the cursor mark they fill 80 cells.
const (
	evTimeW   = 11
	evTypeW   = 22
	evObjW    = 28
	evAmountW = 14
)

func (e *Events) View() string {
	st := e.c.Styles
	var b strings.Builder
	b.WriteString(common.Fit(e.titleLine(), e.width) + "\n")
	if e.zoom {
		b.WriteString(e.detail.View(e.width))
		return common.Lines(b.String(), e.height)
	}
	head := "  " + common.Pad("TIME", evTimeW, false) + " " + common.Pad("TYPE", evTypeW, false) + " " +
		common.Pad("OBJECT", evObjW, false) + " " + common.Pad("AMOUNT", evAmountW, true)
	b.WriteString(st.Dim.Render(common.Fit(head, e.width)) + "\n")
	lines := make([]string, 0, e.listHeight())
	if e.count() == 0 {
		lines = append(lines, st.Dim.Render("  "+e.emptyText()))
	}
	from, to := e.cur.Visible()
	now := e.now()
	for i := from; i < to; i++ {
		r := e.at(i)
		mark := "  "
		if i == e.cur.Cursor {
			mark = "› "
		}
		line := mark + common.Pad(common.When(r.at, now), evTimeW, false) + " " +
			common.Pad(common.Clean(r.typ), evTypeW, false) + " " +
			common.Pad(common.Clean(r.obj), evObjW, false) + " " +
			common.Pad(common.USDC(r.amount), evAmountW, true)
		line = common.Fit(line, e.width)
		if i == e.cur.Cursor {
			line = st.Selected.Render(line)
		}
		lines = append(lines, line)
	}
	b.WriteString(common.Lines(strings.Join(lines, "\n"), e.listHeight()) + "\n")
	b.WriteString(st.Dim.Render(strings.Repeat("─", e.width)) + "\n")
	b.WriteString(e.detail.View(e.width))
	return common.Lines(b.String(), e.height)
}

func (e *Events) emptyText() string {
	switch {
	case !e.caughtUp:
		return "catching up on the last " + windows[e.window].name + "…"
	case e.vis != nil:
		return "no event matches the filter"
	}
	return "no events in the last " + windows[e.window].name + "; waiting for new ones"
}

// titleLine says what is shown: window, counts, autoscroll and filter.
func (e *Events) titleLine() string {
	st := e.c.Styles
	parts := []string{"last " + windows[e.window].name}
	n := fmt.Sprintf("%d events", len(e.rows))
	if e.vis != nil {
		n = fmt.Sprintf("%d of %d events", len(e.vis), len(e.rows))
	}
	if len(e.rows) >= MaxEvents {
		n += fmt.Sprintf(" (newest %d kept)", MaxEvents)
	}
	parts = append(parts, n)
	if e.autoscroll {
		parts = append(parts, "autoscroll on")
	} else {
		parts = append(parts, "autoscroll off")
	}
	line := st.Bold.Render("Events") + "  " + strings.Join(parts, " · ")
	switch {
	case e.filter.Focused():
		line += "  " + e.filter.View()
	case e.filter.Value() != "":
		line += "  filter: " + common.Clean(e.filter.Value())
	}
	return line
}
