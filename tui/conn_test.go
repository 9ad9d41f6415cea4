package tui_test

import (
	"io"
	"log/slog"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/tollgatehq/tollgate/daemon"
)

// When the daemon goes away the header says the UI is reconnecting, and
// when it is back the tail carries on and picks up new events.
func TestReconnects(t *testing.T) {
	t.Parallel()
	e := startDaemon(t)
	h := newHarness(t, e.options())
	h.shows("● connected")
	shutdown(e.d)
	h.shows("○ reconnecting: try 1", "lost the API")

	// A new daemon on the same address and database.
	cfg := e.cfg
	cfg.Listen = strings.TrimPrefix(e.url, "http://")
	d, err := daemon.Start(cfg, e.db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(d) })
	h.shows("● connected", "reconnected")
	g := grant(t, e.client, "u_back", "1000000")
	h.shows(g.CustomerID, "1.00 USDC")
}

// The frame draws exactly the terminal's size, after a resize too, and
// without colour nothing but text reaches the screen.
func TestResizeAndNoColor(t *testing.T) {
	t.Parallel()
	e := startDaemon(t)
	h := newHarness(t, e.options())
	h.shows("● connected")
	for _, size := range [][2]int{{100, 30}, {80, 24}, {60, 15}} {
		h.update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
		screen := h.m.Screen()
		lines := strings.Split(screen, "\n")
		if len(lines) != size[1] {
			t.Fatalf("%dx%d: %d lines", size[0], size[1], len(lines))
		}
		for i, l := range lines {
			if w := len([]rune(l)); w > size[0] {
				t.Fatalf("%dx%d: line %d is %d wide: %q", size[0], size[1], i+1, w, l)
			}
		}
		if strings.Contains(screen, "\x1b[") {
			t.Fatalf("escape codes without colour: %q", screen)
		}
	}
}
