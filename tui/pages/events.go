package pages

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/tui/common"
	"github.com/tollgatehq/tollgate/tui/components"
)

// MaxEvents is how many events the tail keeps: the newest, never all, so
// memory stays flat however long it follows a busy feed.
const MaxEvents = 5000

// windows are the time windows `w` cycles through.
var windows = []struct {
	name string
	d    time.Duration
}{{"1 h", time.Hour}, {"24 h", 24 * time.Hour}, {"7 d", 7 * 24 * time.Hour}}

// Replay says where `r` sends an event: the handler's URL and the whsec_
// secret to sign with, as for `events tail --forward-to`.
type Replay struct {
	URL, Secret, UserAgent string
	HTTP                   *http.Client
}

// Events is the live tail: catch up on the window, then follow.
type Events struct {
	c      *common.Common
	replay Replay
	copy   func(string) error

	rows       []eventRow
	vis        []int // indices of rows matching the filter; nil: all
	cur        components.Rows
	detail     components.Pane
	zoom       bool
	autoscroll bool
	window     int
	filter     textinput.Model

	gen      int
	skew     time.Duration // the test clock minus the wall clock; 0 in live mode
	after    string
	caughtUp bool
	idle     time.Duration
	conn     Conn
	replayed *replayMsg

	width, height int
}

type replayMsg struct {
	id, typ string
	status  int
	body    []byte
	err     error
}

type copiedMsg struct {
	id  string
	err error
}

// NewEvents returns the tail page. copyFn puts text on the clipboard.
func NewEvents(c *common.Common, r Replay, copyFn func(string) error) *Events {
	f := textinput.New()
	f.Prompt = "/"
	f.Placeholder = "type prefix or id"
	// Tab completes an event type.
	f.ShowSuggestions = true
	f.SetSuggestions(client.EventTypes())
	f.CharLimit = 100
	common.StaticCursor(&f)
	return &Events{c: c, replay: r, copy: copyFn, autoscroll: true, window: 1, filter: f, conn: Conn{State: "connecting"}}
}

func (e *Events) Title() string { return "Events" }

// Conn is the daemon's state as the tail last saw it.
func (e *Events) Conn() Conn { return e.conn }

// Len is how many events are kept.
func (e *Events) Len() int { return len(e.rows) }

func (e *Events) Init() tea.Cmd { return e.restart() }

func (e *Events) Activate() tea.Cmd { return nil }

// restart empties the tail and catches up on the current window.
func (e *Events) restart() tea.Cmd {
	e.gen++
	e.rows, e.vis, e.caughtUp, e.idle = nil, nil, false, 0
	e.layout()
	return e.catchUp(e.gen)
}

// catchUp reads the current window, measured by the merchant's test clock
// in test mode and by the wall clock in live mode.
func (e *Events) catchUp(gen int) tea.Cmd {
	return catchUp(e.c.Ctx, e.c.Client, gen, windows[e.window].d, !e.c.Live, e.c.Now, MaxEvents)
}

func (e *Events) Capturing() bool { return e.filter.Focused() }

func (e *Events) SetSize(w, h int) { e.width, e.height = w, h; e.layout() }

// listHeight and detailHeight split the page below its two title lines.
func (e *Events) listHeight() int {
	if e.zoom {
		return 0
	}
	return max(e.height-2-e.detailHeight()-1, 1)
}

func (e *Events) detailHeight() int {
	if e.zoom {
		return max(e.height-1, 1)
	}
	return max((e.height-3)*2/5, 1)
}

func (e *Events) layout() {
	e.cur.SetSize(e.count(), e.listHeight())
	e.detail.SetHeight(e.detailHeight())
	e.showDetail()
}

func (e *Events) count() int {
	if e.vis != nil {
		return len(e.vis)
	}
	return len(e.rows)
}

func (e *Events) at(i int) *eventRow {
	if e.vis != nil {
		i = e.vis[i]
	}
	return &e.rows[i]
}

func (e *Events) selected() *eventRow {
	if e.count() == 0 {
		return nil
	}
	return e.at(e.cur.Cursor)
}

func (e *Events) showDetail() {
	r := e.selected()
	if r == nil {
		e.detail.SetText("")
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s  %s\n", r.id, common.Clean(r.typ), common.Timestamp(r.at))
	if rp := e.replayed; rp != nil && rp.id == r.id {
		b.WriteString(replayLine(e.replay.URL, rp) + "\n")
		if len(rp.body) > 0 {
			b.WriteString("handler answered: " + common.Clean(strings.TrimSpace(string(rp.body))) + "\n")
		}
	}
	if e.zoom {
		b.WriteString(components.PrettyJSON(r.raw))
	} else {
		// The split view shows the payload; enter shows the whole event.
		var ev struct {
			Data json.RawMessage `json:"data"`
		}
		if json.Unmarshal(r.raw, &ev) == nil && len(ev.Data) > 0 {
			b.WriteString("data: " + components.PrettyJSON(ev.Data))
		} else {
			b.WriteString(components.PrettyJSON(r.raw))
		}
	}
	e.detail.SetText(b.String())
}

func (e *Events) matches(r *eventRow) bool {
	f := strings.TrimSpace(e.filter.Value())
	return f == "" || strings.HasPrefix(r.typ, f) || strings.Contains(r.id, f) || strings.Contains(r.obj, f)
}

// refilter recomputes which rows match, keeping the selected event.
func (e *Events) refilter() {
	sel := e.selected()
	var keep string
	if sel != nil {
		keep = sel.id
	}
	e.vis = nil
	if strings.TrimSpace(e.filter.Value()) != "" {
		e.vis = []int{}
		for i := range e.rows {
			if e.matches(&e.rows[i]) {
				e.vis = append(e.vis, i)
			}
		}
	}
	e.cur.SetSize(e.count(), e.listHeight())
	for i := 0; keep != "" && i < e.count(); i++ {
		if e.at(i).id == keep {
			e.cur.Cursor = i
			e.cur.Move(0)
		}
	}
}

// add appends events, dropping the oldest past MaxEvents.
func (e *Events) add(rows []eventRow) {
	if len(rows) == 0 {
		return
	}
	prevCount, prevCursor := e.count(), e.cur.Cursor
	e.rows = append(e.rows, rows...)
	dropped := 0
	if over := len(e.rows) - MaxEvents; over > 0 {
		clear(e.rows[:over]) // release their JSON now
		e.rows = e.rows[over:]
		dropped = over
		// Re-slicing keeps the old array; copy once it holds twice the
		// window so memory stays bounded.
		if cap(e.rows) > 2*MaxEvents {
			e.rows = append(make([]eventRow, 0, MaxEvents+tailPage), e.rows...)
		}
	}
	if e.vis != nil {
		e.refilter()
	} else {
		e.cur.SetSize(e.count(), e.listHeight())
	}
	switch {
	case e.autoscroll:
		e.cur.Bottom()
	case dropped > 0 && e.vis == nil:
		e.cur.Cursor = prevCursor - dropped
		e.cur.Move(0)
	}
	if e.count() != prevCount || e.autoscroll {
		e.showDetail()
	}
}
