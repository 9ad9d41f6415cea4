// Package pages holds the UI's tabs: the event tail, the paged lists, the
// customer view, the invoice form and the test clock. Each page draws the
// area between the frame's header and footer and runs every API call as a
// tea.Cmd.
package pages

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// Page is one tab. Pages are pointers updated in place; the frame sends
// them every message that is not a key, and keys only while they are shown.
type Page interface {
	// Title is the tab's name.
	Title() string
	// Init starts the page's first loads; called once, at start.
	Init() tea.Cmd
	// Activate is called each time the tab is shown.
	Activate() tea.Cmd
	Update(msg tea.Msg) tea.Cmd
	// View draws the page in exactly the size last given to SetSize.
	View() string
	SetSize(width, height int)
	// Capturing reports whether the page takes every key (text is being
	// typed), so the frame's own keys (q, tab, 1-8) go to it instead; only
	// alt+1-8 and ctrl+c still reach the frame.
	Capturing() bool
	// ShortHelp is the page's most useful keys; FullHelp all of them.
	ShortHelp() []key.Binding
	FullHelp() []key.Binding
}
