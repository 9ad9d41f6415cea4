package tui_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
)

// magicWallet is the test-mode payer whose every payment succeeds (README,
// "Magic wallets").
const magicWallet = "0x4242424242424242424242424242424242424242"

// tmuxBin returns tmux. CI installs it (.ci/run); on a developer machine
// without it the test is skipped, but never under CI=true.
func tmuxBin(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("tmux"); err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatal("tmux not found: apt-get install tmux")
	}
	t.Skip("tmux not found (apt-get install tmux)")
	return ""
}

// session is a private tmux server running one program at 80×24.
type session struct {
	t      *testing.T
	tmux   string
	socket string
}

func (s *session) cmd(args ...string) string {
	s.t.Helper()
	out, err := exec.Command(s.tmux, append([]string{"-S", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

func (s *session) send(keys ...string) { s.cmd(append([]string{"send-keys", "-t", "tui"}, keys...)...) }

func (s *session) screen() string { return s.cmd("capture-pane", "-p", "-t", "tui") }

// waitFor polls the screen until it holds every one of subs.
func (s *session) waitFor(subs ...string) string {
	s.t.Helper()
	return s.waitUntil(fmt.Sprintf("%q", subs), func(screen string) bool {
		for _, sub := range subs {
			if !strings.Contains(screen, sub) {
				return false
			}
		}
		return true
	})
}

// waitUntil polls the screen (every 100 ms, for at most 30 s) until ok
// holds, and returns that screen.
func (s *session) waitUntil(what string, ok func(screen string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		screen := s.screen()
		if ok(screen) {
			return screen
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %s; screen:\n%s", what, screen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cpuTicks is the process's user+system time in clock ticks.
func cpuTicks(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.Atoi(f[11])
	stime, _ := strconv.Atoi(f[12])
	return utime + stime
}

// The real binary in a real terminal: type an invoice into the form, see it
// in the Invoices list, pay it at its checkout with the magic wallet and
// see its invoice.paid arrive in the event tail, then check the idle UI
// does not busy-poll.
func TestEndToEndInTmux(t *testing.T) {
	t.Parallel()
	tmux := tmuxBin(t)
	e := startDaemon(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", "tollgate") // not dir/tollgate: that is the config directory
	build := exec.Command("go", "build", "-o", bin, "../cmd/tollgate")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	s := &session{t: t, tmux: tmux, socket: filepath.Join(dir, "tmux.sock")}
	// The environment is passed on the command line: a tmux server does not
	// hand its client's environment to the programs it starts.
	command := fmt.Sprintf("env -i PATH=%q HOME=%q XDG_CONFIG_HOME=%q TERM=xterm-256color TOLLGATE_API_URL=%q TOLLGATE_API_KEY=%q %q tui",
		os.Getenv("PATH"), dir, dir, e.url, e.key, bin)
	s.cmd("-f", "/dev/null", "new-session", "-d", "-s", "tui", "-x", "80", "-y", "24", command)
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", s.socket, "kill-server").Run() })

	s.waitFor("TEST MODE", "● connected", "[1 Events]")
	s.send("7")
	s.waitFor("[7 New]", "Amount (USDC)")
	// In a text field digits are typed, as the footer and ? say; alt+digit
	// still goes to a tab, and back, with the typing kept.
	s.send("-l", "42.5")
	s.waitFor("[7 New]", "Amount (USDC)  42.5", "alt+1-8 go to tab")
	s.send("M-3")
	s.waitFor("[3 Payments]")
	s.send("M-7")
	s.waitFor("[7 New]", "Amount (USDC)  42.5")
	s.send("Tab")
	s.send("-l", "Consulting via tmux")
	s.send("C-s")
	screen := s.waitFor("✓ created inv_", "checkout URL")
	inv := regexpFind(t, screen, `inv_[0-9A-Za-z]{24}`)
	s.send("Escape")
	s.waitFor("enter: edit the form")
	s.send("?")
	s.waitFor("Everywhere", "alt+1-8", "Outside a text field (in one, these keys type)", "1-8         go to tab")
	s.send("Escape")
	s.waitFor("enter: edit the form")
	s.send("2")
	s.waitFor("[2 Invoices]", inv, "42.50 USDC", "Consulting via")

	// Creating an invoice emits no event; paying it emits invoice.paid with
	// the invoice as its object, so the tail shows the typed invoice's id.
	if _, err := e.client.Pay(context.Background(), inv, client.CheckoutParams{Payer: magicWallet}); err != nil {
		t.Fatalf("pay %s: %v", inv, err)
	}
	s.send("1")
	paid := regexp.MustCompile(`invoice\.paid +` + inv + ` +42\.50 USDC`)
	s.waitUntil("invoice.paid of "+inv+" in the Events tab", func(screen string) bool {
		return strings.Contains(screen, "[1 Events]") && paid.MatchString(screen)
	})

	// Idle: the daemon has nothing new; the UI should sleep between polls.
	pid, err := strconv.Atoi(strings.TrimSpace(s.cmd("display-message", "-p", "-t", "tui", "#{pane_pid}")))
	if err != nil {
		t.Fatal(err)
	}
	window := 3 * time.Second
	if os.Getenv("TOLLGATE_TUI_FIGURES") != "" {
		window = 10 * time.Second
	}
	hz := 100.0 // USER_HZ on Linux
	start, t0 := cpuTicks(t, pid), time.Now()
	time.Sleep(window) // measuring idleness is waiting, by definition
	used := float64(cpuTicks(t, pid)-start) / hz
	share := used / time.Since(t0).Seconds()
	t.Logf("idle CPU of tollgate tui over %v: %.2f s (%.2f%% of one core)", window, used, 100*share)
	if share > 0.05 {
		t.Fatalf("idle UI used %.1f%% of a core: it is busy-polling", 100*share)
	}

	s.send("q")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if err := exec.Command(tmux, "-S", s.socket, "has-session", "-t", "tui").Run(); err != nil {
			break // the program quit, so the session ended
		}
		if time.Now().After(deadline) {
			t.Fatalf("q did not quit; screen:\n%s", s.screen())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
