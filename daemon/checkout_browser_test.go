package daemon_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tollgatehq/tollgate/client"
)

// chromium returns the headless browser to test pages with. CI installs it
// (.ci/run); on a developer machine without one the test is skipped, but
// never under CI=true.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("headless Chromium not found: apt-get install chromium")
	}
	t.Skip("headless Chromium not found (apt-get install chromium)")
	return ""
}

// headless runs Chromium against url with extra flags and returns stdout.
func headless(t *testing.T, bin, url string, flags ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}, flags...)
	out, err := exec.CommandContext(ctx, bin, append(args, url)...).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	return string(out)
}

// The hosted checkout page as a browser renders it.
func TestCheckoutPageInChromium(t *testing.T) {
	t.Parallel()
	bin := chromium(t)
	b := setup(t)
	c, _ := b.testClient()
	inv, err := c.CreateInvoice(context.Background(), client.InvoiceParams{Amount: "12340000", Description: "Annual licence", InvoiceNumber: "INV-77"})
	if err != nil {
		t.Fatal(err)
	}
	dom := headless(t, bin, inv.CheckoutURL, "--dump-dom")
	for _, want := range []string{`id="amount">12.34 USDC`, `id="description">Annual licence`, `id="status">open`, "INV-77", `id="test-mode"`} {
		if !strings.Contains(dom, want) {
			t.Fatalf("rendered page lacks %q:\n%s", want, dom)
		}
	}
	shot := filepath.Join(t.TempDir(), "checkout.png")
	headless(t, bin, inv.CheckoutURL, "--screenshot="+shot, "--window-size=800,600")
	if st, err := os.Stat(shot); err != nil || st.Size() < 1000 {
		t.Fatalf("no screenshot: %v", err)
	}
	if dir := os.Getenv("TOLLGATE_SCREENSHOT_DIR"); dir != "" {
		data, _ := os.ReadFile(shot)
		_ = os.WriteFile(filepath.Join(dir, "checkout.png"), data, 0o644)
	}
}
