// Package common holds what every part of the terminal UI shares: styles,
// key bindings, formatting of API values, and the messages pages send to the
// frame around them.
package common

import (
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Styles are the UI's lipgloss styles, all from one renderer so that colour
// follows the output (and NO_COLOR), not the process's stdout.
type Styles struct {
	Renderer *lipgloss.Renderer

	App, Title, Dim, Bold, Selected, Error, OK, Warn, Info lipgloss.Style
	TabActive, TabInactive                                 lipgloss.Style
	ModeTest, ModeLive                                     lipgloss.Style
	Label, FieldError, Input                               lipgloss.Style
	Header, StatusErr, StatusInfo, Help                    lipgloss.Style
}

// NewStyles returns styles rendering through r. With color false nothing is
// coloured or emphasised: every state must then read from its words alone.
func NewStyles(r *lipgloss.Renderer, color bool) *Styles {
	if !color {
		r.SetColorProfile(termenv.Ascii)
	}
	n := r.NewStyle
	return &Styles{
		Renderer:    r,
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
	case "paid", "succeeded", "active", "connected", "entitled":
		return s.OK
	case "open", "past_due", "partially_refunded", "grace", "pending":
		return s.Warn
	case "void", "canceled", "revoked", "expired", "refunded", "failed", "not entitled":
		return s.Error
	}
	return s.App
}
