package tui

import (
	"context"
	"errors"
	"io"

	tea "charm.land/bubbletea/v2"
)

// Run shows the UI on the terminal (in and o.Output) until the operator
// quits or ctx ends. It returns nil on an ordinary quit.
func Run(ctx context.Context, in io.Reader, o Options) error {
	m := New(ctx, o)
	defer m.Close()
	opts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(in)}
	if o.Output != nil {
		opts = append(opts, tea.WithOutput(o.Output))
	}
	_, err := tea.NewProgram(m, opts...).Run()
	if err != nil && ctx.Err() != nil && errors.Is(err, tea.ErrProgramKilled) {
		return nil // interrupted: an ordinary way to leave
	}
	return err
}
