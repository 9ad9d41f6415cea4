package daemon_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Driving Chromium for checkout_browser_test.go: the browser, a tab that
// records what its pages did, and the in-browser audit.

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

// startChromium starts the machine's Chromium (never a downloaded one) for the
// test and returns its context.
func startChromium(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox,
		chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return bctx
}

// tab is a browser tab that records what its pages did: every request, and
// the problems (CSP violations, console errors, failed loads) the browser
// logged.
type tab struct {
	t    *testing.T
	ctx  context.Context
	base string // the daemon's origin: every request must go there
	// shots prefixes the screenshots' names ("checkout"); narrow is the
	// phone width pages are opened and audited at (375).
	shots  string
	narrow int64

	mu       sync.Mutex
	requests []string
	problems []string
}

// cspProbe records every CSP violation of a page in window.__csp; DevTools
// adds it to each document outside the page's policy.
const cspProbe = `window.__csp = []; document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));`

func newTab(t *testing.T, browser context.Context, base string) *tab {
	t.Helper()
	tb := &tab{t: t, base: base, shots: "checkout", narrow: 375}
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithListener(tb.record))
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(cancelTimeout)
	tb.ctx = ctx
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: cspProbe}); err != nil {
		t.Fatal(err)
	}
	return tb
}

// record runs in the tab's event loop: it only appends.
func (tb *tab) record(ev any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		tb.requests = append(tb.requests, ev.Request.URL)
	case *cdplog.EventEntryAdded:
		// A page answered 402/404 on purpose is logged as a failed load;
		// anything else the browser complains about is a problem.
		if !strings.Contains(ev.Entry.Text, "the server responded with a status of") {
			tb.problems = append(tb.problems, fmt.Sprintf("%s %s: %s", ev.Entry.Source, ev.Entry.Level, ev.Entry.Text))
		}
	}
}

// forget drops what was recorded so far.
func (tb *tab) forget() {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.requests, tb.problems = nil, nil
}

// open loads u at phone width and returns the document's status.
func (tb *tab) open(u string) int64 {
	tb.t.Helper()
	if err := chromedp.Do(tb.ctx, phoneAt(tb.narrow)); err != nil {
		tb.t.Fatal(err)
	}
	resp, err := chromedp.Run(tb.ctx, chromedp.NavigateResponse(u))
	if err != nil {
		tb.t.Fatalf("open %s: %v", u, err)
	}
	return resp.Status
}

// submit activates a control (a click, or a key) that posts a form and
// returns the status of the document it lands on.
func (tb *tab) submit(trigger chromedp.Action[chromedp.Void]) int64 {
	tb.t.Helper()
	resp, err := chromedp.RunResponse(tb.ctx, trigger)
	if err != nil {
		tb.t.Fatalf("submit: %v", err)
	}
	return resp.Status
}

func (tb *tab) text(id string) string {
	tb.t.Helper()
	s, err := chromedp.Run(tb.ctx, chromedp.TextContent(chromedp.ID(id)))
	if err != nil {
		tb.t.Fatalf("#%s: %v", id, err)
	}
	return strings.TrimSpace(s)
}

func (tb *tab) eval(js string) string {
	tb.t.Helper()
	s, err := chromedp.Run(tb.ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("evaluate: %v", err)
	}
	return s
}

func (tb *tab) location() string {
	tb.t.Helper()
	u, err := chromedp.Run(tb.ctx, chromedp.Location())
	if err != nil {
		tb.t.Fatal(err)
	}
	return u
}

func phone() chromedp.Action[chromedp.Void] { return phoneAt(375) }

func phoneAt(width int64) chromedp.Action[chromedp.Void] {
	return chromedp.EmulateViewport(width, 812, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulatePortrait)
}

// audit checks the page as rendered, at phone width and on a desktop
// screen, then captures both as shots-name-375.png (or the tab's narrow
// width) and shots-name-1280.png.
func (tb *tab) audit(name string) {
	tb.t.Helper()
	for _, width := range []int64{tb.narrow, 1280} {
		vp := phoneAt(tb.narrow)
		if width == 1280 {
			vp = chromedp.EmulateViewport(1280, 900)
		}
		if err := chromedp.Do(tb.ctx, vp); err != nil {
			tb.t.Fatal(err)
		}
		if found := tb.eval(auditJS); found != "" {
			tb.t.Fatalf("%s at %d px:\n%s", name, width, found)
		}
		shot, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
		if err != nil {
			tb.t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(shot))
		if err != nil || int64(cfg.Width) != width {
			tb.t.Fatalf("screenshot of %s at %d px: %v, %d px wide", name, width, err, cfg.Width)
		}
		if err := os.WriteFile(filepath.Join(screenshotDir(tb.t), fmt.Sprintf("%s-%s-%d.png", tb.shots, name, width)), shot, 0o644); err != nil {
			tb.t.Fatal(err)
		}
	}
	if v := tb.eval(`window.__csp.join('\n')`); v != "" {
		tb.t.Fatalf("%s: CSP violations:\n%s", name, v)
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if len(tb.problems) > 0 {
		tb.t.Fatalf("%s: the browser logged:\n%s", name, strings.Join(tb.problems, "\n"))
	}
	for _, r := range tb.requests {
		if !strings.HasPrefix(r, tb.base+"/") {
			tb.t.Fatalf("%s: a request left the daemon: %s", name, r)
		}
	}
}

// auditJS returns what is wrong with the page, one finding a line ("" when
// nothing is): landmarks, one h1, heading levels, labels, unique ids, text
// on controls and tap targets, WCAG AA contrast of every text node against
// its nearest opaque background, horizontal overflow.
const auditJS = `(() => {
  const out = [];
  const all = s => [...document.querySelectorAll(s)];
  if (!document.documentElement.lang) out.push('no lang');
  if (!document.title.trim()) out.push('no title');
  for (const l of ['header', 'main', 'footer']) if (all('body > ' + l).length !== 1) out.push('landmark ' + l);
  if (all('h1').length !== 1) out.push(all('h1').length + ' h1');
  let level = 0;
  for (const h of all('h1,h2,h3,h4,h5,h6')) { const n = +h.tagName[1]; if (n > level + 1) out.push('heading jumps to ' + h.tagName); level = n; }
  for (const el of all('button,a')) {
    if (!el.innerText.trim()) out.push('control without text: ' + el.outerHTML.slice(0, 80));
    const r = el.getBoundingClientRect();
    if (el.tagName === 'BUTTON' && r.height < 44) out.push('tap target ' + r.height + 'px: ' + el.id);
  }
  for (const i of all('input,select,textarea')) if (i.type !== 'hidden' && !i.labels.length && !i.getAttribute('aria-label')) out.push('unlabelled ' + i.name);
  const ids = all('[id]').map(e => e.id);
  for (const id of ids) if (ids.indexOf(id) !== ids.lastIndexOf(id)) { out.push('duplicate id ' + id); break; }
  const rgba = s => { const m = s.match(/rgba?\(([^)]+)\)/); if (!m) return null; const p = m[1].split(/[\s,\/]+/).filter(Boolean).map(Number); return { c: p.slice(0, 3), a: p.length > 3 ? p[3] : 1 }; };
  const lum = c => { const [r, g, b] = c.map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const bg = el => { for (let e = el; e; e = e.parentElement) { const c = rgba(getComputedStyle(e).backgroundColor); if (c && c.a > 0.5) return c.c; } return [255, 255, 255]; };
  const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let texts = 0;
  while (w.nextNode()) {
    const n = w.currentNode, el = n.parentElement, s = getComputedStyle(el);
    if (!n.textContent.trim() || s.visibility === 'hidden' || s.display === 'none') continue;
    texts++;
    const fg = rgba(s.color);
    if (!fg) { out.push('unreadable colour ' + s.color); continue; }
    const a = lum(fg.c), b = lum(bg(el)), ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    const px = parseFloat(s.fontSize), large = px >= 24 || (+s.fontWeight >= 700 && px >= 18.66);
    if (ratio < (large ? 3 : 4.5)) out.push('contrast ' + ratio.toFixed(2) + ': ' + n.textContent.trim().slice(0, 40));
    if (px < 12) out.push('text of ' + px + 'px: ' + n.textContent.trim().slice(0, 40));
  }
  if (texts < 3) out.push('only ' + texts + ' text nodes');
  const sw = document.documentElement.scrollWidth;
  if (sw > window.innerWidth) out.push('scrolls sideways: ' + sw + ' > ' + window.innerWidth);
  return out.join('\n');
})()`

// screenshotDir is where browser tests keep their screenshots as artifacts:
// $TOLLGATE_SCREENSHOT_DIR, or artifacts/screenshots at the repository's
// root (ignored by git), so a CI run leaves them to look at.
func screenshotDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("TOLLGATE_SCREENSHOT_DIR")
	if dir == "" {
		dir = filepath.Join("..", "artifacts", "screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
