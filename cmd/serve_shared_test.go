package cmd

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func readyz(addr string) int {
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Issue 9: a second `serve` on the embedded cluster another one started
// must not shut it down on its way out (whether it failed to start or ran
// and stopped), nor may admin commands; the last process out stops it. And
// admin commands keep stderr quiet.
func TestSharedEmbeddedCluster(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "tgshr") // short: the socket path is limited
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	data := filepath.Join(dir, "d")
	cfg := filepath.Join(dir, "config.yaml")
	first := startServe(t, "--config", cfg, "--data-dir", data, "--listen", "127.0.0.1:0", "--rate-limits=false")
	t.Cleanup(first.cancel) // on failure; the test stops it itself
	addr := first.listening(t, 90*time.Second)
	waitUntil(t, "the first daemon", 90*time.Second, func() bool { return readyz(addr) == 200 })

	// A second serve on the same data dir and port fails to listen.
	code, _, errOut := run("serve", "--config", cfg, "--data-dir", data, "--listen", addr)
	if code != 1 || !strings.Contains(errOut, "already in use") {
		t.Fatalf("second serve on a taken port: %d %q", code, errOut)
	}
	if s := readyz(addr); s != 200 {
		t.Fatalf("after the second serve failed, the first answers /readyz %d: %s", s, first.stderr.String())
	}

	// A second serve on another port runs beside it, then stops.
	second := startServe(t, "--config", cfg, "--data-dir", data, "--listen", "127.0.0.1:0")
	t.Cleanup(second.cancel)
	addr2 := second.listening(t, 60*time.Second)
	waitUntil(t, "the second daemon", 60*time.Second, func() bool { return readyz(addr2) == 200 })
	if code := second.stop(t); code != 0 {
		t.Fatalf("second serve exited %d: %s", code, second.stderr.String())
	}
	if s := readyz(addr); s != 200 {
		t.Fatalf("after the second serve stopped, the first answers /readyz %d", s)
	}
	if !strings.Contains(second.stderr.String(), "leaving PostgreSQL running") {
		t.Errorf("the second serve does not say it left the cluster running:\n%s", second.stderr.String())
	}

	// Admin commands attach quietly and leave it running.
	code, out, errOut := run("admin", "merchant", "list", "--json", "--data-dir", data)
	if code != 0 || !strings.Contains(out, `"default"`) || errOut != "" {
		t.Fatalf("admin merchant list: %d %s stderr %q", code, out, errOut)
	}
	if s := readyz(addr); s != 200 {
		t.Fatalf("after an admin command, the first answers /readyz %d", s)
	}

	// The last one out stops the cluster.
	if code := first.stop(t); code != 0 {
		t.Fatalf("first serve exited %d: %s", code, first.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(data, "pg", "postmaster.pid")); !os.IsNotExist(err) {
		t.Fatal("the last daemon out left the cluster running")
	}
	// An admin command with no daemon starts it for its own run, quietly.
	code, out, errOut = run("admin", "merchant", "list", "--json", "--data-dir", data)
	if code != 0 || !strings.Contains(out, `"default"`) || errOut != "" {
		t.Fatalf("admin merchant list alone: %d %s stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(data, "pg", "postmaster.pid")); !os.IsNotExist(err) {
		t.Fatal("an admin command left the cluster it started running")
	}
}
