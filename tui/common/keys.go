package common

import "charm.land/bubbles/v2/key"

// KeyMap is every key binding of the UI; pages pick the ones they use for
// their help.
type KeyMap struct {
	Quit, Help, NextTab, PrevTab, Tabs key.Binding
	// AltTabs and ForceQuit work even while a text field has focus, when
	// digits, q and tab belong to the field.
	AltTabs, ForceQuit key.Binding

	Up, Down, Top, Bottom, HalfDown, HalfUp, Enter, Back, Reload key.Binding

	Autoscroll, Filter, Window, Copy, Replay key.Binding

	NextField, PrevField, Submit key.Binding
}

// DefaultKeyMap returns the UI's key bindings.
func DefaultKeyMap() KeyMap {
	b := func(help, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return KeyMap{
		Quit:    b("q", "quit", "q", "ctrl+c"),
		Help:    b("?", "all keys", "?"),
		NextTab: b("tab", "next tab", "tab"),
		PrevTab: b("shift+tab", "previous tab", "shift+tab"),
		Tabs:    b("1-8", "go to tab", "1", "2", "3", "4", "5", "6", "7", "8"),

		AltTabs:   b("alt+1-8", "go to tab", "alt+1", "alt+2", "alt+3", "alt+4", "alt+5", "alt+6", "alt+7", "alt+8"),
		ForceQuit: b("ctrl+c", "quit", "ctrl+c"),

		Up:       b("k/↑", "up", "k", "up"),
		Down:     b("j/↓", "down", "j", "down"),
		Top:      b("g", "first", "g", "home"),
		Bottom:   b("G", "last", "G", "end"),
		HalfDown: b("ctrl+d", "half page down", "ctrl+d", "pgdown"),
		HalfUp:   b("ctrl+u", "half page up", "ctrl+u", "pgup"),
		Enter:    b("enter", "details", "enter"),
		Back:     b("esc", "back", "esc"),
		Reload:   b("ctrl+r", "reload", "ctrl+r"),

		Autoscroll: b("s", "autoscroll", "s"),
		Filter:     b("/", "filter", "/"),
		Window:     b("w", "time window", "w"),
		Copy:       b("y", "copy id", "y"),
		Replay:     b("r", "replay to handler", "r"),

		NextField: b("tab/↓", "next field", "tab", "down"),
		PrevField: b("shift+tab/↑", "previous field", "shift+tab", "up"),
		Submit:    b("ctrl+s", "submit", "ctrl+s"),
	}
}
