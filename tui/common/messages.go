package common

import (
	"context"
	"errors"
	"net/http"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tollgatehq/tollgate/client"
)

// StatusMsg asks the frame to show Text in the status line, as an error
// when Err is set.
type StatusMsg struct {
	Text string
	Err  bool
}

// Status returns a command that shows text in the status line.
func Status(text string, isErr bool) tea.Cmd {
	return func() tea.Msg { return StatusMsg{Text: text, Err: isErr} }
}

// ErrorText describes err for the status line: the API's code and message,
// or a hint when the daemon cannot be reached.
func ErrorText(err error) string {
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		if apiErr.Status == http.StatusUnauthorized {
			return "unauthorized: the API key was refused (check --api-key)"
		}
		return Clean(apiErr.Error())
	}
	return Clean(err.Error())
}

// NotFound reports whether err is the API's 404 for a resource or path
// that does not exist on this daemon.
func NotFound(err error) bool {
	var apiErr *client.Error
	return errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound &&
		(apiErr.Code == client.CodeResourceNotFound || apiErr.Code == "")
}

// After returns a command that waits d (or until ctx ends), then runs cmd.
// Retries use it to wait without a ticking timer.
func After(ctx context.Context, d time.Duration, cmd tea.Cmd) tea.Cmd {
	return func() tea.Msg {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		return cmd()
	}
}
