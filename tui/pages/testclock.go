package pages

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/tui/common"
	"github.com/tollgatehq/tollgate/tui/components"
)

// Unavailable is what the clock tab says when the daemon has no test clocks.
const Unavailable = "test clocks are not available on this daemon"

type clockMsg struct {
	clock    *client.TestClock
	advanced bool
	err      error
}

// TestClock shows the test-mode clock and advances it.
type TestClock struct {
	c       *common.Common
	form    components.Form
	clock   *client.TestClock
	busy    bool
	missing bool
	err     string
	note    string

	width, height int
}

// NewTestClock returns the test clock page.
func NewTestClock(c *common.Common) *TestClock {
	p := &TestClock{c: c}
	p.form.Fields = []*components.Field{components.NewField("by", "Advance by", "30d, 12h, 90m, 45s, or a date-time to move to", 40)}
	return p
}

func (p *TestClock) Title() string    { return "Test clock" }
func (p *TestClock) Init() tea.Cmd    { return nil }
func (p *TestClock) Capturing() bool  { return p.form.Active() }
func (p *TestClock) SetSize(w, h int) { p.width, p.height = w, h }

// Activate reads the clock each time the tab is shown.
func (p *TestClock) Activate() tea.Cmd {
	if p.c.Live {
		return nil
	}
	p.form.Activate()
	ctx, c := p.c.Ctx, p.c.Client
	return func() tea.Msg {
		clock, err := c.GetTestClock(ctx)
		return clockMsg{clock: clock, err: err}
	}
}

func (p *TestClock) Update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case clockMsg:
		p.busy = false
		p.missing = msg.err != nil && common.NotFound(msg.err)
		if msg.err != nil {
			p.err = common.ErrorText(msg.err)
			if p.missing {
				p.err = Unavailable
				p.form.Deactivate()
			}
			return common.Status(p.err, true)
		}
		p.clock, p.err = msg.clock, ""
		if msg.advanced {
			p.note = "advanced; renewals and expiries due by then have run (see the Events tab)"
			return common.Status("test clock now "+common.Timestamp(msg.clock.Now), false)
		}
		return nil
	case tea.KeyPressMsg:
		k := p.c.Keys
		if !p.form.Active() {
			if key.Matches(msg, k.Enter) && !p.c.Live {
				p.form.Activate()
			}
			return nil
		}
		switch {
		case key.Matches(msg, k.Back):
			p.form.Deactivate()
			return nil
		case key.Matches(msg, k.Enter):
			return p.advance()
		}
		return p.form.Update(msg)
	}
	return nil
}

// advance moves the clock by a duration, or to a date-time.
func (p *TestClock) advance() tea.Cmd {
	v := strings.TrimSpace(p.form.Fields[0].Input.Value())
	p.form.ClearErrors()
	if v == "" {
		p.form.SetError("by", "enter a duration such as 30d, or a date-time")
		return nil
	}
	params := client.TestClockAdvanceParams{By: v}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		params = client.TestClockAdvanceParams{To: &t}
	}
	p.busy, p.note = true, ""
	ctx, c := p.c.Ctx, p.c.Client
	return func() tea.Msg {
		clock, err := c.AdvanceTestClock(ctx, params)
		return clockMsg{clock: clock, advanced: true, err: err}
	}
}

func (p *TestClock) View() string {
	st := p.c.Styles
	var b strings.Builder
	b.WriteString(st.Bold.Render("Test clock") + "\n\n")
	switch {
	case p.c.Live:
		b.WriteString("  Test clocks exist in test mode only; this is a LIVE key.\n")
		return common.Lines(b.String(), p.height)
	case p.missing:
		b.WriteString(st.Warn.Render("  "+Unavailable) + "\n")
		return common.Lines(b.String(), p.height)
	case p.clock != nil:
		b.WriteString("  Now  " + st.Bold.Render(common.Timestamp(p.clock.Now)) + "\n\n")
	case p.err == "":
		b.WriteString("  reading the clock…\n\n")
	}
	b.WriteString(p.form.View(st, p.width) + "\n")
	switch {
	case p.busy:
		b.WriteString("  advancing… (renewals, retries and expiries due run first)\n")
	case p.err != "":
		b.WriteString(st.Error.Render(common.Fit("  ✗ "+p.err, p.width)) + "\n")
	case p.note != "":
		b.WriteString(st.OK.Render(common.Fit("  ✓ "+p.note, p.width)) + "\n")
	}
	return common.Lines(b.String(), p.height)
}

func (p *TestClock) ShortHelp() []key.Binding {
	return []key.Binding{key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "advance")), p.c.Keys.Back}
}

func (p *TestClock) FullHelp() []key.Binding { return p.ShortHelp() }
