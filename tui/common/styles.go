// Package common holds what every part of the terminal UI shares: styles,
// key bindings, formatting of API values, and the messages pages send to the
// frame around them.
package common

import (
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
)

// Styles are the UI's lipgloss styles. Every colour is a fixed ANSI one that
// reads on a dark or a light background, so the UI never needs to ask the
// terminal for its background.
type Styles struct {
	App, Title, Dim, Bold, Selected, Error, OK, Warn, Info lipgloss.Style
	TabActive, TabInactive                                 lipgloss.Style
	ModeTest, ModeLive                                     lipgloss.Style
	Label, FieldError, Input                               lipgloss.Style
	Header, StatusErr, StatusInfo, Help                    lipgloss.Style
}

// NewStyles returns the UI's styles. With color false nothing is coloured
// or emphasised: every state must then read from its words alone.
func NewStyles(colour bool) *Styles {
	s := newStyles()
	if !colour {
		plain := lipgloss.NewStyle()
		for _, st := range []*lipgloss.Style{&s.App, &s.Title, &s.Dim, &s.Bold, &s.Selected, &s.Error, &s.OK, &s.Warn, &s.Info,
			&s.TabActive, &s.TabInactive, &s.ModeTest, &s.ModeLive, &s.Label, &s.FieldError, &s.Input,
			&s.Header, &s.StatusErr, &s.StatusInfo, &s.Help} {
			*st = plain
		}
	}
	return s
}

func newStyles() *Styles {
	n := lipgloss.NewStyle
	return &Styles{
		App:         n(),
		Title:       n().Bold(true),
		Dim:         n().Foreground(lipgloss.Color("245")),
		Bold:        n().Bold(true),
		Selected:    n().Reverse(true),
		Error:       n().Foreground(lipgloss.Color("9")),
		OK:          n().Foreground(lipgloss.Color("10")),
		Warn:        n().Foreground(lipgloss.Color("11")),
		Info:        n().Foreground(lipgloss.Color("12")),
		TabActive:   n().Bold(true).Underline(true).Foreground(lipgloss.Color("14")),
		TabInactive: n().Foreground(lipgloss.Color("245")),
		ModeTest:    n().Bold(true).Foreground(lipgloss.Color("0")).Background(lipgloss.Color("11")),
		ModeLive:    n().Bold(true).Foreground(lipgloss.Color("15")).Background(lipgloss.Color("9")),
		Label:       n().Bold(true),
		FieldError:  n().Foreground(lipgloss.Color("9")),
		Input:       n(),
		Header:      n().Bold(true),
		StatusErr:   n().Foreground(lipgloss.Color("9")),
		StatusInfo:  n().Foreground(lipgloss.Color("10")),
		Help:        n().Foreground(lipgloss.Color("245")),
	}
}

// Status returns the style of an object status: green for money that
// arrived or access that holds, yellow for waiting, red for failed or
// ended. The status word itself is always shown.
func (s *Styles) Status(status string) lipgloss.Style {
	switch status {
	case "paid", "succeeded", "active", "trialing", "connected", "entitled":
		return s.OK
	case "open", "past_due", "partially_refunded", "grace", "pending":
		return s.Warn
	case "void", "canceled", "revoked", "expired", "refunded", "failed", "not entitled":
		return s.Error
	}
	return s.App
}

// StaticCursor stops a text input's cursor from blinking: a blink is a
// timer firing twice a second, and an idle UI must not wake up that often.
func StaticCursor(m *textinput.Model) {
	st := m.Styles()
	st.Cursor.Blink = false
	m.SetStyles(st)
}
