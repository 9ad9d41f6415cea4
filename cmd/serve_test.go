package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/internal/testdb"
)

func TestMain(m *testing.M) {
	// With this set the test binary is the tollgate binary (same packages,
	// same init), so a test can run it as a real process on a terminal.
	if os.Getenv("TOLLGATE_TEST_RUN_MAIN") == "1" {
		os.Exit(Main())
	}
	testdb.Main(m)
}

// syncBuffer is a bytes.Buffer safe to read while a command writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// server is a `tollgate serve` running in this process.
type server struct {
	cancel context.CancelFunc
	done   chan int
	stderr *syncBuffer
}

func startServe(t *testing.T, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{cancel: cancel, done: make(chan int, 1), stderr: &syncBuffer{}}
	go func() {
		s.done <- Run(ctx, append([]string{"serve"}, args...), &IO{In: strings.NewReader(""), Out: &syncBuffer{}, Err: s.stderr})
	}()
	return s
}

func (s *server) stop(t *testing.T) int {
	t.Helper()
	s.cancel()
	select {
	case code := <-s.done:
		return code
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not stop")
		return -1
	}
}

// servingLine is the log line a daemon writes once it listens.
var servingLine = regexp.MustCompile(`msg="tollgate serving" url=http://(\S+)`)

// listening waits for the daemon to say it serves and returns the address
// it listens on. A daemon started with --listen 127.0.0.1:0 is given a
// port by the kernel as it listens; a port picked before it starts (the
// embedded cluster takes seconds) may be taken meanwhile by another test's
// daemon, which would then answer for it.
func (s *server) listening(t *testing.T, limit time.Duration) string {
	t.Helper()
	var addr string
	waitUntil(t, "the daemon to serve", limit, func() bool {
		select {
		case code := <-s.done:
			t.Fatalf("serve exited %d before serving: %s", code, s.stderr.String())
		default:
		}
		if m := servingLine.FindStringSubmatch(s.stderr.String()); m != nil {
			addr = m[1]
		}
		return addr != ""
	})
	return addr
}

func waitUntil(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// run runs the CLI in this process; without an explicit --config it reads
// an empty one, so the developer's own config never leaks into a test.
func run(args ...string) (int, string, string) {
	if !slices.Contains(args, "--config") {
		args = append([]string{"--config", os.DevNull}, args...)
	}
	var out, errOut bytes.Buffer
	code := Run(context.Background(), args, &IO{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return code, out.String(), errOut.String()
}

// The embedded default as a newcomer meets it: the first start creates a
// cluster, a merchant and a test key saved for the CLI; the CLI works at
// once; after a restart the data is still there.
func TestEmbeddedDefault(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "tgemb")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cfg := filepath.Join(dir, "config.yaml")
	data := filepath.Join(dir, "d")
	s := startServe(t, "--config", cfg, "--data-dir", data, "--listen", "127.0.0.1:0")
	// The restart below listens where this one did, which the saved
	// api_url names.
	addr := s.listening(t, 90*time.Second)
	waitUntil(t, "the key to be saved", 90*time.Second, func() bool {
		select {
		case code := <-s.done:
			t.Fatalf("serve exited %d: %s", code, s.stderr.String())
		default:
		}
		b, _ := os.ReadFile(cfg)
		return strings.Contains(string(b), "sk_test_")
	})
	st, err := os.Stat(cfg)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config file mode %v (%v)", st.Mode(), err)
	}
	if !strings.Contains(s.stderr.String(), "sk_test_") {
		t.Fatal("the key was not printed")
	}
	code, out, errOut := run("--config", cfg, "invoice", "create", "--amount", "9usdc", "--description", "first", "--json")
	if code != 0 {
		t.Fatalf("invoice create: %d %s", code, errOut)
	}
	var inv struct{ ID, Amount string }
	if err := json.Unmarshal([]byte(out), &inv); err != nil || inv.Amount != "9000000" {
		t.Fatalf("invoice create output %q", out)
	}
	if code := s.stop(t); code != 0 {
		t.Fatalf("serve exited %d: %s", code, s.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(data, "pg", "postmaster.pid")); !os.IsNotExist(err) {
		t.Fatal("the embedded cluster was not stopped with the daemon")
	}

	s = startServe(t, "--config", cfg, "--data-dir", data, "--listen", addr)
	defer s.stop(t)
	waitUntil(t, "the daemon to answer", 60*time.Second, func() bool {
		code, _, _ := run("--config", cfg, "invoice", "list", "--json")
		return code == 0
	})
	code, out, _ = run("--config", cfg, "invoice", "list", "--json")
	if code != 0 || !strings.Contains(out, inv.ID) {
		t.Fatalf("after restart the invoice is gone: %s", out)
	}
	if strings.Count(s.stderr.String(), "sk_test_") != 0 {
		t.Fatal("a second start created another key")
	}
	// Admin commands share the running cluster.
	code, out, errOut = run("admin", "merchant", "list", "--json", "--data-dir", data)
	if code != 0 || !strings.Contains(out, `"default"`) {
		t.Fatalf("admin merchant list: %d %s %s", code, out, errOut)
	}
}

func TestServeErrorsAreOneLine(t *testing.T) {
	t.Parallel()
	code, _, errOut := run("serve", "--database-url", "postgres://tollgate@127.0.0.1:1/x?sslmode=disable&connect_timeout=2")
	if code != 1 || !strings.Contains(errOut, "database unreachable") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("unreachable database: %d %q", code, errOut)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	code, _, errOut = run("serve", "--database-url", testdb.New(t), "--listen", ln.Addr().String())
	if code != 1 || !strings.Contains(errOut, "already in use") {
		t.Fatalf("port taken: %d %q", code, errOut)
	}
	code, _, errOut = run("serve", "--environment", "prod")
	if code != 2 || !strings.Contains(errOut, "--environment") {
		t.Fatalf("bad environment: %d %q", code, errOut)
	}
}

// The admin commands of the operator contract, with --json as scripts use them.
func TestAdminContract(t *testing.T) {
	t.Parallel()
	url := testdb.New(t)
	code, out, errOut := run("admin", "merchant", "create", "--name", "Acme", "--json", "--database-url", url)
	var m struct{ ID string }
	if code != 0 || json.Unmarshal([]byte(out), &m) != nil || m.ID == "" {
		t.Fatalf("merchant create: %d %s %s", code, out, errOut)
	}
	code, out, _ = run("admin", "key", "create", "--merchant", m.ID, "--mode", "live", "--json", "--database-url", url)
	var k struct{ ID, Key string }
	if code != 0 || json.Unmarshal([]byte(out), &k) != nil || !strings.HasPrefix(k.Key, "sk_live_") {
		t.Fatalf("key create: %d %s", code, out)
	}
	code, out, _ = run("admin", "webhook", "add", "--merchant", m.ID, "--mode", "test", "--url", "https://example.com/hook", "--json", "--database-url", url)
	var w struct{ ID, Secret string }
	if code != 0 || json.Unmarshal([]byte(out), &w) != nil || !strings.HasPrefix(w.Secret, "whsec_") {
		t.Fatalf("webhook add: %d %s", code, out)
	}
	if code, _, errOut := run("admin", "webhook", "add", "--merchant", m.ID, "--mode", "test", "--url", "http://example.com/hook", "--database-url", url); code == 0 || !strings.Contains(errOut, "https") {
		t.Fatalf("http URL accepted without --allow-insecure-webhooks: %s", errOut)
	}
	if code, _, _ := run("admin", "webhook", "add", "--merchant", m.ID, "--mode", "test", "--url", "http://127.0.0.1:9/hook", "--allow-insecure-webhooks", "--database-url", url); code != 0 {
		t.Fatal("--allow-insecure-webhooks did not admit http")
	}
	code, out, _ = run("admin", "key", "list", "--json", "--database-url", url)
	if code != 0 || !strings.Contains(out, k.ID) || strings.Contains(out, k.Key) {
		t.Fatalf("key list must show the key's id but never the key: %s", out)
	}
	if code, _, _ := run("admin", "key", "revoke", k.ID, "--database-url", url); code != 0 {
		t.Fatal("revoke failed")
	}
	if code, _, errOut := run("admin", "key", "revoke", "key_nope", "--database-url", url); code != 1 || !strings.Contains(errOut, "key_nope") {
		t.Fatalf("revoke unknown: %d %s", code, errOut)
	}
	if code, _, _ := run("admin", "key", "create", "--merchant", m.ID, "--mode", "prod", "--database-url", url); code != 2 {
		t.Fatalf("bad mode: %d", code)
	}
	if code, _, _ := run("admin", "merchant", "create", "--database-url", url); code != 2 {
		t.Fatalf("missing --name: %d", code)
	}
}
