// Package tui is tollgate's terminal UI for operators: a live event tail
// with replay to a local webhook handler, paged lists of invoices, payments,
// subscriptions and meters, a customer view, an invoice form and the test
// clock. It talks to the daemon only through package client, the same API
// the CLI uses, and runs every call as a tea.Cmd so the screen never waits
// on the network.
//
// The package is split like soft-serve's UI: common (styles, keys,
// formatting, messages), components (rows, panes, forms) and pages (one per
// tab); this file is the frame around them.
package tui

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/tollgatehq/tollgate/client"
	"github.com/tollgatehq/tollgate/tui/common"
	"github.com/tollgatehq/tollgate/tui/pages"
)

// Options configure the UI.
type Options struct {
	// Client calls the API; APIURL and APIKey are what it was built with,
	// shown in the header (the key only for its mode).
	Client *client.Client
	APIURL string
	APIKey string
	// ForwardTo and Secret are where `r` replays an event and the whsec_
	// secret it signs with; UserAgent is sent with replays.
	ForwardTo, Secret, UserAgent string
	// HTTP sends replays (default: a client with a 30 s timeout).
	HTTP *http.Client
	// Output is the terminal; the clipboard copy (OSC 52) is written to it.
	// Default os.Stdout.
	Output io.Writer
	// Color false draws without colour or emphasis (NO_COLOR).
	Color bool
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// tabNames are the tab bar's short names, in page order.
var tabNames = []string{"Events", "Invoices", "Payments", "Subs", "Meters", "Customer", "New", "Clock"}

// Model is the root model: header, tab bar, the active page, status line
// and key help.
type Model struct {
	c      *common.Common
	cancel context.CancelFunc
	apiURL string

	pages    []pages.Page
	events   *pages.Events
	invoices pages.Page
	active   int

	status    string
	statusErr bool
	showHelp  bool
	help      help.Model

	width, height int
	// colour false strips every style from the screen (NO_COLOR).
	colour bool
}

// New returns the UI's model. Its commands run under ctx; Close ends them.
func New(ctx context.Context, o Options) *Model {
	ctx, cancel := context.WithCancel(ctx)
	if o.Output == nil {
		o.Output = os.Stdout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{Timeout: 30 * time.Second}
	}
	styles := common.NewStyles(o.Color)
	c := &common.Common{Ctx: ctx, Client: o.Client, Styles: styles, Keys: common.DefaultKeyMap(), Now: o.Now,
		Live: strings.HasPrefix(o.APIKey, "sk_live_")}
	out := o.Output
	copyFn := func(s string) error {
		// One write: the kernel does not interleave it with the renderer's
		// writes to the same terminal.
		_, err := fmt.Fprintf(out, "\x1b]52;c;%s\x07", base64.StdEncoding.EncodeToString([]byte(s)))
		return err
	}
	m := &Model{c: c, cancel: cancel, apiURL: o.APIURL, help: help.New(), width: 80, height: 24, colour: o.Color}
	m.help.Styles.ShortKey = styles.Bold
	m.help.Styles.ShortDesc = styles.Help
	m.help.Styles.ShortSeparator = styles.Help
	m.help.Styles.Ellipsis = styles.Help
	m.events = pages.NewEvents(c, pages.Replay{URL: o.ForwardTo, Secret: o.Secret, UserAgent: o.UserAgent, HTTP: o.HTTP}, copyFn)
	m.invoices = pages.NewInvoices(c)
	m.pages = []pages.Page{m.events, m.invoices, pages.NewPayments(c), pages.NewSubscriptions(c), pages.NewMeters(c),
		pages.NewCustomer(c), pages.NewInvoiceForm(c), pages.NewTestClock(c)}
	m.resize(m.width, m.height)
	return m
}

// Close ends the model's running commands.
func (m *Model) Close() { m.cancel() }

// Events is the tail page (for tests and figures).
func (m *Model) Events() *pages.Events { return m.events }

// Init starts the tail and loads the first page of each list.
func (m *Model) Init() tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(m.pages))
	for _, p := range m.pages {
		cmds = append(cmds, p.Init())
	}
	return tea.Batch(cmds...)
}

// bodyHeight is what pages get: all but header, tabs, status and help.
func (m *Model) bodyHeight() int { return max(m.height-4, 1) }

func (m *Model) resize(w, h int) {
	m.width, m.height = max(w, 20), max(h, 6)
	m.help.SetWidth(m.width)
	for _, p := range m.pages {
		p.SetSize(m.width, m.bodyHeight())
	}
}

func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case common.StatusMsg:
		m.status, m.statusErr = msg.Text, msg.Err
		return m, nil
	case pages.InvoiceCreatedMsg:
		return m, m.invoices.Activate()
	}
	cmds := make([]tea.Cmd, 0, 2)
	for _, p := range m.pages {
		if cmd := p.Update(msg); cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	return m, tea.Batch(cmds...)
}

func (m *Model) key(msg tea.KeyPressMsg) tea.Cmd {
	k := m.c.Keys
	if key.Matches(msg, k.ForceQuit) {
		m.cancel()
		return tea.Quit
	}
	if m.showHelp {
		m.showHelp = false
		return nil
	}
	if key.Matches(msg, k.AltTabs) {
		return m.switchTo(int(msg.Code - '1'))
	}
	page := m.pages[m.active]
	if page.Capturing() {
		return page.Update(msg)
	}
	switch {
	case key.Matches(msg, k.Quit):
		m.cancel()
		return tea.Quit
	case key.Matches(msg, k.Help):
		m.showHelp = true
		return nil
	case key.Matches(msg, k.NextTab):
		return m.switchTo((m.active + 1) % len(m.pages))
	case key.Matches(msg, k.PrevTab):
		return m.switchTo((m.active + len(m.pages) - 1) % len(m.pages))
	case key.Matches(msg, k.Tabs):
		return m.switchTo(int(msg.Code - '1'))
	}
	return page.Update(msg)
}

func (m *Model) switchTo(i int) tea.Cmd {
	if i < 0 || i >= len(m.pages) {
		return nil
	}
	m.active = i
	return m.pages[i].Activate()
}
