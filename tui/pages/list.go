package pages

import (
	"context"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/tui/common"
	"github.com/tollgatehq/tollgate/tui/components"
)

// Column is one column of a list: a fixed width, or 0 for the one column
// that takes what is left.
type Column[T any] struct {
	Title  string
	Width  int
	Right  bool
	Status bool // coloured by value
	Cell   func(T) string
}

// ListSpec says how a list page fetches and shows one resource.
type ListSpec[T any] struct {
	Title   string
	Plural  string
	Fetch   func(ctx context.Context, c *client.Client, p client.ListParams) (*client.List[T], error)
	Columns []Column[T]
	Raw     func(T) []byte
}

// nearEnd is how close to the last row the cursor gets before the next page
// is fetched.
const nearEnd = 5

// List is a paged list over the cursor API.
type List[T any] struct {
	c    *common.Common
	spec ListSpec[T]

	items   []T
	next    string
	hasMore bool
	loading bool
	loaded  bool
	gen     int
	err     string

	cur    components.Rows
	detail components.Pane
	zoom   bool

	width, height int
}

type listMsg[T any] struct {
	title  string
	gen    int
	before string
	page   *client.List[T]
	err    error
}

// NewList returns a list page for spec.
func NewList[T any](c *common.Common, spec ListSpec[T]) *List[T] {
	return &List[T]{c: c, spec: spec}
}

func (l *List[T]) Title() string   { return l.spec.Title }
func (l *List[T]) Capturing() bool { return false }
func (l *List[T]) Init() tea.Cmd   { return l.load("") }

// Activate reloads the first page, so a tab shows what is new.
func (l *List[T]) Activate() tea.Cmd { return l.load("") }

// Items is what the list holds.
func (l *List[T]) Items() []T { return l.items }

// load fetches the page before `before` ("" starts again at the newest).
func (l *List[T]) load(before string) tea.Cmd {
	if before == "" {
		l.gen++
	} else if l.loading {
		return nil
	}
	l.loading = true
	ctx, c, gen, title, fetch := l.c.Ctx, l.c.Client, l.gen, l.spec.Title, l.spec.Fetch
	return func() tea.Msg {
		page, err := fetch(ctx, c, client.ListParams{Limit: 50, Before: before})
		return listMsg[T]{title: title, gen: gen, before: before, page: page, err: err}
	}
}

func (l *List[T]) SetSize(w, h int) {
	l.width, l.height = w, h
	l.cur.SetSize(len(l.items), h-2)
	l.detail.SetHeight(h - 1)
}

func (l *List[T]) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case listMsg[T]:
		if msg.title != l.spec.Title || msg.gen != l.gen {
			return nil
		}
		l.loading = false
		if msg.err != nil {
			l.err = common.ErrorText(msg.err)
			return common.Status(l.spec.Plural+": "+l.err, true)
		}
		l.err, l.loaded = "", true
		if msg.before == "" {
			l.items = nil
		}
		l.items = append(l.items, msg.page.Data...)
		l.next, l.hasMore = msg.page.NextCursor, msg.page.HasMore
		l.cur.SetSize(len(l.items), l.height-2)
		return l.more()
	case tea.KeyPressMsg:
		return l.key(msg)
	}
	return nil
}

// more fetches the next page when the cursor nears the end.
func (l *List[T]) more() tea.Cmd {
	if l.hasMore && !l.loading && l.cur.Near(nearEnd) {
		return l.load(l.next)
	}
	return nil
}

func (l *List[T]) key(msg tea.KeyPressMsg) tea.Cmd {
	k := l.c.Keys
	if l.zoom {
		switch {
		case key.Matches(msg, k.Back), key.Matches(msg, k.Enter):
			l.zoom = false
		case key.Matches(msg, k.Up):
			l.detail.Scroll(-1)
		case key.Matches(msg, k.Down):
			l.detail.Scroll(1)
		case key.Matches(msg, k.HalfDown):
			l.detail.Scroll(l.height / 2)
		case key.Matches(msg, k.HalfUp):
			l.detail.Scroll(-l.height / 2)
		}
		return nil
	}
	switch {
	case key.Matches(msg, k.Up):
		l.cur.Move(-1)
	case key.Matches(msg, k.Down):
		l.cur.Move(1)
	case key.Matches(msg, k.Top):
		l.cur.Top()
	case key.Matches(msg, k.Bottom):
		l.cur.Bottom()
	case key.Matches(msg, k.HalfDown):
		l.cur.Move(l.cur.Half())
	case key.Matches(msg, k.HalfUp):
		l.cur.Move(-l.cur.Half())
	case key.Matches(msg, k.Reload):
		return l.load("")
	case key.Matches(msg, k.Enter):
		if len(l.items) > 0 {
			l.zoom = true
			l.detail.SetText(components.PrettyJSON(l.spec.Raw(l.items[l.cur.Cursor])))
		}
		return nil
	}
	return l.more()
}

func (l *List[T]) View() string {
	st := l.c.Styles
	var b strings.Builder
	title := st.Bold.Render(l.spec.Title) + "  " + fmt.Sprintf("%d loaded", len(l.items))
	switch {
	case l.loading:
		title += " · loading…"
	case l.hasMore:
		title += " · more below"
	case l.loaded:
		title += " · all"
	}
	if l.zoom {
		b.WriteString(common.Fit(title+" · details (esc to go back)", l.width) + "\n")
		b.WriteString(l.detail.View(l.width))
		return common.Lines(b.String(), l.height)
	}
	b.WriteString(common.Fit(title, l.width) + "\n")
	widths := l.widths()
	head := make([]string, len(l.spec.Columns))
	for i, col := range l.spec.Columns {
		head[i] = common.Pad(col.Title, widths[i], col.Right)
	}
	b.WriteString(st.Dim.Render(common.Fit("  "+strings.Join(head, " "), l.width)) + "\n")
	var lines []string
	switch {
	case l.err != "" && len(l.items) == 0:
		lines = append(lines, st.Error.Render(common.Fit("  "+l.err, l.width)))
	case l.loaded && len(l.items) == 0:
		lines = append(lines, st.Dim.Render("  No "+l.spec.Plural+"."))
	}
	from, to := l.cur.Visible()
	for i := from; i < to; i++ {
		lines = append(lines, l.row(i, widths))
	}
	b.WriteString(common.Lines(strings.Join(lines, "\n"), l.height-2))
	return b.String()
}

func (l *List[T]) widths() []int {
	w := make([]int, len(l.spec.Columns))
	used, flex := 2, -1
	for i, col := range l.spec.Columns {
		w[i] = col.Width
		used += col.Width + 1
		if col.Width == 0 {
			flex = i
		}
	}
	if flex >= 0 {
		w[flex] = max(l.width-used+1, 4)
	}
	return w
}

func (l *List[T]) row(i int, widths []int) string {
	st := l.c.Styles
	item := l.items[i]
	selected := i == l.cur.Cursor
	cells := make([]string, len(l.spec.Columns))
	for j, col := range l.spec.Columns {
		v := common.Pad(common.Clean(col.Cell(item)), widths[j], col.Right)
		if col.Status && !selected {
			v = st.Status(strings.TrimSpace(v)).Render(v)
		}
		cells[j] = v
	}
	mark := "  "
	if selected {
		mark = "› "
	}
	line := common.Fit(mark+strings.Join(cells, " "), l.width)
	if selected {
		line = st.Selected.Render(line)
	}
	return line
}

func (l *List[T]) ShortHelp() []key.Binding {
	k := l.c.Keys
	return []key.Binding{k.Up, k.Down, k.Top, k.Bottom, k.HalfDown, k.Enter, k.Reload}
}

func (l *List[T]) FullHelp() []key.Binding {
	k := l.c.Keys
	return []key.Binding{k.Up, k.Down, k.Top, k.Bottom, k.HalfDown, k.HalfUp, k.Enter, k.Back, k.Reload}
}
