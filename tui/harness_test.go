package tui_test

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/daemon"
	"github.com/tollgatehq/tollgate/internal/auth"
	"github.com/tollgatehq/tollgate/internal/store"
	"github.com/tollgatehq/tollgate/internal/tenant"
	"github.com/tollgatehq/tollgate/internal/testdb"
	"github.com/tollgatehq/tollgate/tui"
)

var update = flag.Bool("update", false, "rewrite the golden screens in testdata/")

func TestMain(m *testing.M) { testdb.Main(m) }

// env is a daemon on :0 over a fresh database and a test key for it.
type env struct {
	url, key string
	client   *client.Client
	d        *daemon.Daemon
	cfg      daemon.Config
	db       *store.DB
}

func startDaemon(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	db := testdb.Open(t)
	cfg := daemon.Defaults()
	cfg.Listen = "127.0.0.1:0"
	cfg.RateLimits = false
	d, err := daemon.Start(cfg, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shutdown(d) })
	m, err := auth.CreateMerchant(ctx, db, "acme")
	if err != nil {
		t.Fatal(err)
	}
	_, key, err := auth.CreateKey(ctx, db, m.ID, tenant.Test)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{url: d.URL, key: key, d: d, cfg: cfg, db: db}
	e.client = client.New(d.URL, key, client.WithMaxRetries(0))
	return e
}

func shutdown(d *daemon.Daemon) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = d.Shutdown(ctx)
}

// harness runs a model as tea.Program would, without a terminal: commands
// run in goroutines and their messages are fed back one at a time, on the
// test's goroutine, by until.
type harness struct {
	t    *testing.T
	m    *tui.Model
	msgs chan tea.Msg
	done chan struct{}
}

func newHarness(t *testing.T, o tui.Options) *harness {
	t.Helper()
	if o.Output == nil {
		o.Output = io.Discard
	}
	m := tui.New(context.Background(), o)
	h := &harness{t: t, m: m, msgs: make(chan tea.Msg, 64), done: make(chan struct{})}
	t.Cleanup(func() { close(h.done); m.Close() })
	h.update(tea.WindowSizeMsg{Width: 80, Height: 24})
	h.run(m.Init())
	return h
}

// options are a model's options for e's key.
func (e *env) options() tui.Options {
	return tui.Options{Client: e.client, APIURL: e.url, APIKey: e.key}
}

func (h *harness) run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		if msg := cmd(); msg != nil {
			select {
			case h.msgs <- msg:
			case <-h.done:
			}
		}
	}()
}

func (h *harness) update(msg tea.Msg) {
	if batch, ok := msg.(tea.BatchMsg); ok {
		for _, c := range batch {
			h.run(c)
		}
		return
	}
	_, cmd := h.m.Update(msg)
	h.run(cmd)
}

// keys sends each argument as a key: a named key (enter, tab, esc,
// shift+tab, ctrl+s, ctrl+u) or runes to type.
func (h *harness) keys(keys ...string) {
	named := map[string]tea.KeyPressMsg{"enter": {Code: tea.KeyEnter}, "tab": {Code: tea.KeyTab}, "esc": {Code: tea.KeyEscape},
		"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift},
		"ctrl+s":    {Code: 's', Mod: tea.ModCtrl}, "ctrl+u": {Code: 'u', Mod: tea.ModCtrl},
		"ctrl+d": {Code: 'd', Mod: tea.ModCtrl}, "ctrl+r": {Code: 'r', Mod: tea.ModCtrl}}
	for _, k := range keys {
		if msg, ok := named[k]; ok {
			h.update(msg)
			continue
		}
		// A terminal sends typed text one key at a time.
		for _, r := range k {
			h.update(tea.KeyPressMsg{Code: r, Text: string(r)})
		}
	}
}

// until feeds messages to the model until its screen satisfies cond, and
// returns that screen.
func (h *harness) until(what string, cond func(screen string) bool) string {
	h.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		v := h.m.Screen()
		if cond(v) {
			return v
		}
		select {
		case msg := <-h.msgs:
			h.update(msg)
		case <-deadline:
			h.t.Fatalf("timed out waiting for %s; screen:\n%s", what, v)
		}
	}
}

// shows waits until the screen contains every one of subs.
func (h *harness) shows(subs ...string) string {
	h.t.Helper()
	return h.until(strings.Join(subs, ", "), func(s string) bool {
		for _, sub := range subs {
			if !strings.Contains(s, sub) {
				return false
			}
		}
		return true
	})
}

var (
	idRe    = regexp.MustCompile(`\b(evt|inv|cus|pay|sub|meter|feat|ent|cle|price|prod)_([0-9A-Za-z]{24}\b|[0-9A-Za-z]{1,23}…)`)
	fullRe  = regexp.MustCompile(`\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?( UTC|Z)?`)
	shortRe = regexp.MustCompile(`\b(\d{2}-\d{2} \d{2}:\d{2}|\d{2}:\d{2}:\d{2})\b`)
	portRe  = regexp.MustCompile(`127\.0\.0\.1:\d+`)
)

// normalise masks what differs between runs (ids, times, the port) with
// text of the same width, so the layout is compared exactly.
func normalise(screen string) string {
	screen = idRe.ReplaceAllStringFunc(screen, func(id string) string {
		p, rest, _ := strings.Cut(id, "_")
		if cut, ok := strings.CutSuffix(rest, "…"); ok { // an id cut to fit a column
			return p + "_" + strings.Repeat("x", len(cut)) + "…"
		}
		return p + "_" + strings.Repeat("x", 24)
	})
	screen = fullRe.ReplaceAllStringFunc(screen, func(s string) string { return strings.Repeat("T", len(s)) })
	screen = shortRe.ReplaceAllStringFunc(screen, func(s string) string { return strings.Repeat("t", len(s)) })
	return portRe.ReplaceAllStringFunc(screen, func(s string) string { return "127.0.0.1:" + strings.Repeat("P", len(s)-len("127.0.0.1:")) })
}

// golden compares a screen with testdata/name.golden (-update rewrites it)
// and checks it is 80×24.
func golden(t *testing.T, name, screen string) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) != 24 {
		t.Errorf("%s: %d lines, want 24", name, len(lines))
	}
	for i, l := range lines {
		if w := len([]rune(l)); w > 80 {
			t.Errorf("%s: line %d is %d cells wide: %q", name, i+1, w, l)
		}
	}
	got := normalise(screen)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, path, got, want)
	}
}

func regexpMust(re string) *regexp.Regexp { return regexp.MustCompile(re) }
