package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tollgatehq/tollgate/tui/common"
)

// View is the screen on the terminal's alternate screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Screen())
	v.AltScreen = true
	return v
}

// Screen draws header, tab bar, page (or the full key help), status line
// and short help, in exactly the terminal's size.
func (m *Model) Screen() string {
	body := m.pages[m.active].View()
	if m.showHelp {
		body = m.fullHelp()
	}
	screen := strings.Join([]string{
		m.header(),
		m.tabs(),
		common.Lines(body, m.bodyHeight()),
		m.statusLine(),
		common.Fit(m.help.ShortHelpView(m.shortHelp()), m.width),
	}, "\n")
	if !m.colour {
		// The text inputs' own styles (cursor, placeholder) are not ours.
		return ansi.Strip(screen)
	}
	return screen
}

// header shows the API URL, the mode in words and colour, and the
// connection as the tail sees it.
func (m *Model) header() string {
	st := m.c.Styles
	mode := st.ModeTest.Render(" TEST MODE ")
	if m.c.Live {
		mode = st.ModeLive.Render(" LIVE MODE ")
	}
	conn := m.events.Conn()
	var state string
	switch conn.State {
	case "connected":
		state = st.OK.Render("● connected")
	case "connecting":
		state = st.Warn.Render("… connecting")
	default:
		state = st.Error.Render(fmt.Sprintf("○ %s: try %d, next in %s", conn.State, conn.Attempt, conn.Retry))
	}
	return common.Fit(st.Header.Render("tollgate")+"  "+common.Clean(m.apiURL)+"  "+mode+"  "+state, m.width)
}

// tabs draws "[1 Events]  2 Invoices  …": the active tab in brackets as
// well as style, so it shows without colour.
func (m *Model) tabs() string {
	st := m.c.Styles
	var b strings.Builder
	for i, name := range tabNames {
		label := fmt.Sprintf("%d %s", i+1, name)
		if i == m.active {
			b.WriteString(st.TabActive.Render("[" + label + "]"))
		} else {
			b.WriteString(st.TabInactive.Render(" " + label + " "))
		}
	}
	return common.Fit(b.String(), m.width)
}

func (m *Model) statusLine() string {
	if m.status == "" {
		return ""
	}
	if m.statusErr {
		return m.c.Styles.StatusErr.Render(common.Fit("✗ "+m.status, m.width))
	}
	return m.c.Styles.StatusInfo.Render(common.Fit(m.status, m.width))
}

// everywhereKeys work whatever has focus; frameKeys only outside a text
// field, where digits, q and tab are typed into the field instead.
func (m *Model) everywhereKeys() []key.Binding {
	k := m.c.Keys
	return []key.Binding{k.AltTabs, k.ForceQuit}
}

func (m *Model) frameKeys() []key.Binding {
	k := m.c.Keys
	return []key.Binding{k.Tabs, k.NextTab, k.PrevTab, k.Help, k.Quit}
}

func (m *Model) shortHelp() []key.Binding {
	k := m.c.Keys
	page := m.pages[m.active]
	if page.Capturing() {
		// First, so a narrow footer never hides how to leave a field's tab.
		return append(append([]key.Binding{k.AltTabs}, page.ShortHelp()...), k.ForceQuit)
	}
	return append(page.ShortHelp(), k.Help, k.Quit)
}

// fullHelp lists every key: the frame's, then the page's.
func (m *Model) fullHelp() string {
	st := m.c.Styles
	var b strings.Builder
	b.WriteString(st.Bold.Render("Keys") + st.Dim.Render("  (any key closes)") + "\n")
	section := func(title string, ks []key.Binding) {
		b.WriteString(st.Bold.Render(title) + "\n")
		// Two columns when there is room, so every page's keys fit 80×24.
		cols, colW := 1, m.width
		if m.width >= 60 {
			cols, colW = 2, m.width/2
		}
		for i := 0; i < len(ks); i += cols {
			var line strings.Builder
			for j := i; j < min(i+cols, len(ks)); j++ {
				h := ks[j].Help()
				line.WriteString(common.Pad("  "+common.Pad(h.Key, 12, false)+h.Desc, colW, false))
			}
			b.WriteString(common.Fit(strings.TrimRight(line.String(), " "), m.width) + "\n")
		}
	}
	section("Everywhere", m.everywhereKeys())
	section("Outside a text field (in one, these keys type)", m.frameKeys())
	section(m.pages[m.active].Title(), m.pages[m.active].FullHelp())
	return b.String()
}
