package pages

import (
	"context"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tollgatehq/tollgate/client/webhook"
	"github.com/tollgatehq/tollgate/tui/common"
)

func (e *Events) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tailMsg:
		return e.onTail(msg)
	case clockMsg:
		return e.onClock(msg)
	case replayMsg:
		e.replayed = &msg
		e.showDetail()
		return common.Status(replayLine(e.replay.URL, &msg), msg.err != nil || msg.status < 200 || msg.status > 299)
	case copiedMsg:
		if msg.err != nil {
			return common.Status("copy: "+msg.err.Error(), true)
		}
		return common.Status("copied "+msg.id+" (OSC 52)", false)
	case tea.KeyPressMsg:
		if e.filter.Focused() {
			return e.filterKey(msg)
		}
		return e.key(msg)
	}
	return nil
}

func (e *Events) onTail(m tailMsg) tea.Cmd {
	if m.gen != e.gen {
		return nil // an answer for a window since replaced
	}
	if m.err != nil {
		var status tea.Cmd
		if e.conn.State != "reconnecting" && e.conn.State != "failing" {
			status = common.Status("lost the API ("+common.ErrorText(m.err)+"); reconnecting with backoff", true)
		}
		e.conn.Attempt++
		e.conn.State = "reconnecting"
		if !unreachable(m.err) {
			e.conn.State = "failing"
		}
		e.conn.Err = common.ErrorText(m.err)
		e.conn.Retry = min(minRetry<<min(e.conn.Attempt-1, 5), maxRetry)
		if !e.caughtUp {
			return tea.Batch(status, common.After(e.c.Ctx, e.conn.Retry, e.catchUp(m.gen)))
		}
		return tea.Batch(status, poll(e.c.Ctx, e.c.Client, e.gen, e.after, e.conn.Retry))
	}
	var status tea.Cmd
	if e.conn.Attempt > 0 {
		status = common.Status("reconnected", false)
	}
	e.conn = Conn{State: "connected"}
	if m.catchUp {
		e.caughtUp, e.skew = true, m.skew
	}
	e.after = m.after
	rows := make([]eventRow, len(m.events))
	for i, ev := range m.events {
		rows[i] = rowOf(ev)
	}
	e.add(rows)
	switch {
	case m.hasMore:
		e.idle = 0
	case len(m.events) > 0:
		e.idle = pollInterval
	default:
		e.idle = min(max(2*e.idle, pollInterval), maxIdleInterval)
	}
	return tea.Batch(status, poll(e.c.Ctx, e.c.Client, e.gen, e.after, e.idle))
}

func (e *Events) filterKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "enter":
		e.filter.Blur()
		return nil
	case "esc":
		e.filter.Blur()
		e.filter.SetValue("")
		e.refilter()
		e.showDetail()
		return nil
	}
	var cmd tea.Cmd
	e.filter, cmd = e.filter.Update(msg)
	e.refilter()
	e.showDetail()
	return cmd
}

func (e *Events) key(msg tea.KeyPressMsg) tea.Cmd {
	k := e.c.Keys
	moved := true
	switch {
	case e.zoom && key.Matches(msg, k.Up):
		e.detail.Scroll(-1)
		return nil
	case e.zoom && key.Matches(msg, k.Down):
		e.detail.Scroll(1)
		return nil
	case e.zoom && key.Matches(msg, k.HalfDown):
		e.detail.Scroll(e.detailHeight() / 2)
		return nil
	case e.zoom && key.Matches(msg, k.HalfUp):
		e.detail.Scroll(-e.detailHeight() / 2)
		return nil
	case key.Matches(msg, k.Enter), e.zoom && key.Matches(msg, k.Back):
		e.zoom = !e.zoom
		e.layout()
		return nil
	case key.Matches(msg, k.Up):
		e.cur.Move(-1)
	case key.Matches(msg, k.Down):
		e.cur.Move(1)
	case key.Matches(msg, k.Top):
		e.cur.Top()
	case key.Matches(msg, k.Bottom):
		e.cur.Bottom()
	case key.Matches(msg, k.HalfDown):
		e.cur.Move(e.cur.Half())
	case key.Matches(msg, k.HalfUp):
		e.cur.Move(-e.cur.Half())
	case key.Matches(msg, k.Autoscroll):
		e.autoscroll = !e.autoscroll
		if e.autoscroll {
			e.cur.Bottom()
		}
	case key.Matches(msg, k.Filter):
		e.filter.Focus()
		return nil
	case key.Matches(msg, k.Back):
		if e.filter.Value() != "" {
			e.filter.SetValue("")
			e.refilter()
		}
	case key.Matches(msg, k.Window):
		e.window = (e.window + 1) % len(windows)
		return tea.Batch(e.restart(), common.Status("window: last "+windows[e.window].name, false))
	case key.Matches(msg, k.Copy):
		return e.copyID()
	case key.Matches(msg, k.Replay):
		return e.replayCmd()
	default:
		moved = false
	}
	if moved {
		e.showDetail()
	}
	return nil
}

func (e *Events) copyID() tea.Cmd {
	r := e.selected()
	if r == nil {
		return common.Status("no event selected", true)
	}
	id, copyFn := r.id, e.copy
	return func() tea.Msg { return copiedMsg{id: id, err: copyFn(id)} }
}

func (e *Events) replayCmd() tea.Cmd {
	r := e.selected()
	switch {
	case r == nil:
		return common.Status("no event selected", true)
	case e.replay.URL == "" || e.replay.Secret == "":
		return common.Status("replay needs --forward-to URL and --secret whsec_… (flags, TOLLGATE_* or the config file)", true)
	}
	rp, ctx := e.replay, e.c.Ctx
	id, typ, raw := r.id, r.typ, r.raw
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		status, body, err := webhook.Forward(ctx, rp.HTTP, rp.URL, rp.Secret, rp.UserAgent, typ, id, raw)
		return replayMsg{id: id, typ: typ, status: status, body: body, err: err}
	}
}

// replayLine reports a replay as `events tail --forward-to` does:
// "[200] POST url evt_… type".
func replayLine(url string, m *replayMsg) string {
	what := fmt.Sprintf("POST %s %s %s", url, m.id, common.Clean(m.typ))
	if m.err != nil {
		return "[ERR] " + what + ": " + common.ErrorText(m.err)
	}
	line := fmt.Sprintf("[%d] %s", m.status, what)
	if b := strings.TrimSpace(string(m.body)); b != "" {
		line += " → " + common.Clean(b)
	}
	return line
}

func (e *Events) ShortHelp() []key.Binding {
	k := e.c.Keys
	return []key.Binding{k.Up, k.Down, k.Enter, k.Filter, k.Window, k.Autoscroll, k.Copy, k.Replay}
}

func (e *Events) FullHelp() []key.Binding {
	k := e.c.Keys
	return []key.Binding{k.Up, k.Down, k.Top, k.Bottom, k.HalfDown, k.HalfUp, k.Enter, k.Back, k.Filter, k.Window, k.Autoscroll, k.Copy, k.Replay}
}
