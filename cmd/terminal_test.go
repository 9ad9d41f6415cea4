package cmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// runOnSilentTerminal runs the CLI (this test binary, as tollgate) as a
// process whose stdin, stdout and stderr are a terminal that never answers
// a query, and returns everything the process wrote to it.
func runOnSilentTerminal(t *testing.T, env []string, args ...string) string {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	// The process leads a session whose controlling terminal is this one,
	// so it is in the foreground, as in a shell: terminal queries are only
	// sent from the foreground.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	cmd.Env = []string{"TOLLGATE_TEST_RUN_MAIN=1", "TERM=xterm-256color", "HOME=" + t.TempDir(),
		"XDG_CONFIG_HOME=" + t.TempDir()} // no CI: termenv skips queries under CI
	cmd.Env = append(cmd.Env, env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close() // the child holds its own copy: reads end when it exits
	var out bytes.Buffer
	_, err = io.Copy(&out, ptmx)
	var pathErr *os.PathError
	if err != nil && !(errors.As(err, &pathErr) && errors.Is(err, syscall.EIO)) {
		t.Fatal(err)
	}
	_ = cmd.Wait() // the exit code is the command's business, not this test's
	if ctx.Err() != nil {
		t.Fatalf("%v did not return; wrote %q", args, out.String())
	}
	return out.String()
}

// On a terminal that never answers, a command neither asks the terminal
// for its colours or cursor (OSC 10/11, CSI 6n) nor waits for a reply, with
// or without NO_COLOR.
func TestNoTerminalQueries(t *testing.T) {
	t.Parallel()
	for _, env := range [][]string{nil, {"NO_COLOR=1"}} {
		for _, args := range [][]string{
			{"version"},
			{"invoice", "list", "--api-url", "http://127.0.0.1:1", "--api-key", "sk_test_x"},
			{"help"},
		} {
			out := runOnSilentTerminal(t, env, args...)
			if out == "" {
				t.Errorf("%v %v printed nothing", env, args)
			}
			for _, q := range []string{"\x1b]10;?", "\x1b]11;?", "\x1b[6n", "\x1b[c"} {
				if strings.Contains(out, q) {
					t.Errorf("%v %v sent the terminal query %q: %q", env, args, q, out)
				}
			}
		}
	}
}
