// Package browsertest drives headless Chromium from Go tests, with chromedp.
// It is a test helper: import it only from _test.go files, normally ones with
// the build tag "browser" so that the fast `go test ./...` loop needs no
// browser (`make test` runs them through the Makefile target browser).
//
// A test starts a browser with New, serves the handler under test with
// StartServer, and drives the page with chromedp actions on b.Ctx():
//
//	b := browsertest.New(t)
//	base := browsertest.StartServer(t, handler)
//	b.Navigate(t, base+"/")
//	text := b.Text(t, "body")
//	b.Screenshot(t, "index")
//	b.NoConsoleErrors(t)
//	b.NoDialogs(t)
//
// While the page runs, the Browser records console errors, uncaught
// exceptions, browser log errors (failed loads, Content-Security-Policy
// violations) and JavaScript dialogs. A dialog (alert, confirm, prompt,
// beforeunload) is recorded and dismissed at once, so a page never hangs on
// it; in a test an alert() usually means injected script ran.
//
// The browser is Debian's Chromium, /usr/bin/chromium, or the executable that
// $SKEWSCOPE_CHROMIUM names. When it is missing, New fails the test: run
// scripts/ensure-chromium.sh (or `make test`, which does) to install it.
package browsertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// DefaultChromium is the browser used when $SKEWSCOPE_CHROMIUM is not set.
const DefaultChromium = "/usr/bin/chromium"

// DefaultTimeout bounds everything one Browser does, from the start of
// Chromium to the last action: past it the browser is stopped and every
// action fails with context.DeadlineExceeded.
const DefaultTimeout = 60 * time.Second

// Size of the window and of the viewport of every page, in CSS pixels.
const (
	WindowWidth  = 1440
	WindowHeight = 1100
)

// Message is one problem that the page reported: a console.error or
// console.assert call, an uncaught exception or promise rejection, or an
// error entry of the browser log (a failed load, a CSP violation, ...).
type Message struct {
	// Kind is "console.error", "console.assert", "exception", or "log/SOURCE"
	// for a browser log entry, e.g. "log/network" or "log/security".
	Kind string
	Text string
	// URL and Line tell where it came from, when the browser says.
	URL  string
	Line int64
}

func (m Message) String() string {
	s := m.Kind + ": " + m.Text
	if m.URL != "" {
		s += fmt.Sprintf(" (%s:%d)", m.URL, m.Line+1)
	}
	return s
}

// IsCSPViolation reports whether the message is a Content-Security-Policy
// violation.
func (m Message) IsCSPViolation() bool {
	return strings.Contains(m.Text, "Content Security Policy")
}

// Dialog is a JavaScript dialog that a page opened.
type Dialog struct {
	// Type is "alert", "confirm", "prompt" or "beforeunload".
	Type    string
	Message string
	URL     string
}

func (d Dialog) String() string { return fmt.Sprintf("%s(%q) on %s", d.Type, d.Message, d.URL) }

// Option configures New.
type Option func(*config)

type config struct {
	timeout time.Duration
}

// WithTimeout replaces DefaultTimeout for this browser.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// Browser is one headless Chromium with one tab, for one test.
type Browser struct {
	ctx     context.Context
	timeout time.Duration

	mu       sync.Mutex
	problems []Message
	dialogs  []Dialog
	closed   bool // set by the cleanup: no more t.Logf from chromedp

	dismiss sync.WaitGroup // goroutines that close dialogs
}

// New starts headless Chromium for the test and returns it with one blank
// tab open. The browser, its temporary profile and its tab go away when the
// test ends; if the test failed by then, a screenshot of the page is saved
// first (see [Browser.Screenshot]). New fails the test, and never skips it, when
// Chromium is missing or does not start.
func New(t testing.TB, opts ...Option) *Browser {
	t.Helper()
	cfg := config{timeout: DefaultTimeout}
	for _, o := range opts {
		o(&cfg)
	}

	execPath, err := ChromiumPath()
	if err != nil {
		t.Fatalf("browsertest: %v\n\tInstall it with scripts/ensure-chromium.sh (or run `make test`, which does), "+
			"or point SKEWSCOPE_CHROMIUM at a Chromium or Chrome executable.", err)
	}

	b := &Browser{timeout: cfg.timeout}
	output := &tailBuffer{max: 16 << 10}

	// The deadline covers the whole browser: chromedp stops the browser when
	// the context of its first Run ends, which is what a per-test timeout
	// should do.
	base, cancelBase := context.WithTimeout(context.Background(), cfg.timeout)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(base,
		chromedp.ExecPath(execPath),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests run as root, where the sandbox cannot start
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.WindowSize(WindowWidth, WindowHeight),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("font-render-hinting", "none"),
		chromedp.Flag("lang", "en-US"),
		// No user-data-dir flag: chromedp makes a temporary profile and
		// removes it, after killing any helper process still writing to it.
		chromedp.CombinedOutput(output),
	)
	logf := func(format string, args ...any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		if !b.closed {
			t.Logf("chromedp: "+format, args...)
		}
	}
	tabCtx, cancelTab := chromedp.NewContext(allocCtx,
		chromedp.WithListener(b.listen),
		chromedp.WithErrorf(logf),
		chromedp.WithLogf(func(string, ...any) {}),
	)
	b.ctx = tabCtx

	t.Cleanup(func() {
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		cancelTab()
		cancelAlloc() // waits for Chromium to exit and its profile to go
		b.dismiss.Wait()
		cancelBase()
	})

	// Start the browser and open the tab now, so that a browser that cannot
	// start fails here with its own output. The window's size includes the
	// browser's own bars; the viewport, which layouts see, is set exactly.
	if err := chromedp.Do(tabCtx, chromedp.EmulateViewport(WindowWidth, WindowHeight)); err != nil {
		t.Fatalf("browsertest: starting %s: %v\n\tbrowser output:\n%s\n\tIf Chromium is broken, reinstall it with scripts/ensure-chromium.sh.",
			execPath, err, indent(output.String()))
	}

	// Registered after the one above, so it runs first: the page is still
	// there to be photographed.
	t.Cleanup(func() {
		if t.Failed() && tabCtx.Err() == nil {
			b.screenshot(t, "failed")
		}
	})
	return b
}

// ChromiumPath returns the Chromium executable that New starts:
// $SKEWSCOPE_CHROMIUM (a path, or a name looked up in PATH) or
// DefaultChromium. It returns an error naming what is missing.
func ChromiumPath() (string, error) {
	p := os.Getenv("SKEWSCOPE_CHROMIUM")
	from := "SKEWSCOPE_CHROMIUM=" + p
	if p == "" {
		p, from = DefaultChromium, DefaultChromium
	}
	if !strings.Contains(p, "/") {
		lp, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("no Chromium executable: %s is not in PATH", from)
		}
		return lp, nil
	}
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("no Chromium executable: %s does not exist", from)
	case err != nil:
		return "", fmt.Errorf("cannot use Chromium: %w", err)
	case fi.IsDir() || fi.Mode()&0o111 == 0:
		return "", fmt.Errorf("cannot use Chromium: %s is not an executable file", from)
	}
	return p, nil
}

// Ctx is the chromedp context of the tab: use it with chromedp.Run and
// chromedp.Do. It ends when the test ends or the timeout passes.
func (b *Browser) Ctx() context.Context { return b.ctx }

// listen runs on chromedp's reading goroutine for every event of the tab: it
// must be quick and must not send commands itself.
func (b *Browser) listen(ev any) {
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert {
			return
		}
		m := Message{Kind: "console." + string(ev.Type), Text: argsText(ev.Args)}
		if st := ev.StackTrace; st != nil && len(st.CallFrames) > 0 {
			m.URL, m.Line = st.CallFrames[0].URL, st.CallFrames[0].LineNumber
		}
		b.addProblem(m)
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		if d == nil {
			return
		}
		m := Message{Kind: "exception", Text: d.Text, URL: d.URL, Line: d.LineNumber}
		if d.Exception != nil && d.Exception.Description != "" {
			desc, _, _ := strings.Cut(d.Exception.Description, "\n    at ")
			m.Text += " " + desc
		}
		b.addProblem(m)
	case *cdplog.EventEntryAdded:
		e := ev.Entry
		if e == nil || e.Level != cdplog.EntryLevelError || isFaviconFetch(e) {
			return
		}
		b.addProblem(Message{Kind: "log/" + string(e.Source), Text: e.Text, URL: e.URL, Line: e.LineNumber})
	case *page.EventJavascriptDialogOpening:
		b.mu.Lock()
		b.dialogs = append(b.dialogs, Dialog{Type: string(ev.Type), Message: ev.Message, URL: ev.URL})
		b.mu.Unlock()
		// A dialog blocks the page, and the action that waits on it, until
		// it is closed; closing it is a command, which this goroutine must
		// not send.
		b.dismiss.Add(1)
		go func() {
			defer b.dismiss.Done()
			chromedp.Call(b.ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}()
	}
}

// isFaviconFetch reports whether the entry is the failed load of
// /favicon.ico that Chromium makes on its own for a page that names no icon:
// the browser's doing, not the page's, and timed by nothing the test waits
// for. A page that names an icon which fails to load is still reported.
func isFaviconFetch(e *cdplog.Entry) bool {
	if e.Source != cdplog.EntrySourceNetwork {
		return false
	}
	u, err := url.Parse(e.URL)
	return err == nil && u.Path == "/favicon.ico"
}

func (b *Browser) addProblem(m Message) {
	b.mu.Lock()
	b.problems = append(b.problems, m)
	b.mu.Unlock()
}

// argsText renders console arguments roughly as DevTools does.
func argsText(args []*runtime.RemoteObject) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		switch {
		case a == nil:
			parts = append(parts, "null")
		case a.Type == runtime.RemoteObjectTypeString:
			var s string
			if err := json.Unmarshal([]byte(a.Value), &s); err == nil {
				parts = append(parts, s)
			} else {
				parts = append(parts, string(a.Value))
			}
		case a.UnserializableValue != "":
			parts = append(parts, string(a.UnserializableValue))
		case a.Description != "":
			parts = append(parts, a.Description)
		case len(a.Value) > 0:
			parts = append(parts, string(a.Value))
		default:
			parts = append(parts, string(a.Type))
		}
	}
	return strings.Join(parts, " ")
}

// sync waits for the events the browser sent so far: an event sent before
// the reply to a command reaches the listener before that command returns.
func (b *Browser) sync() {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	chromedp.Run(ctx, chromedp.Evaluate[int]("0"))
}

// ConsoleErrors returns the problems recorded so far: console errors,
// uncaught exceptions, and browser log errors (failed loads, CSP
// violations).
func (b *Browser) ConsoleErrors() []Message {
	b.sync()
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Message(nil), b.problems...)
}

// NoConsoleErrors fails the test (without stopping it) if the page reported
// any console error, uncaught exception, failed load or CSP violation.
func (b *Browser) NoConsoleErrors(t testing.TB) {
	t.Helper()
	if ms := b.ConsoleErrors(); len(ms) > 0 {
		var sb strings.Builder
		for _, m := range ms {
			sb.WriteString("\n\t" + m.String())
		}
		t.Errorf("browser reported %d console error(s):%s", len(ms), sb.String())
	}
}

// ResetConsole forgets the problems recorded so far, for a test that
// expects some and checks the ones that follow.
func (b *Browser) ResetConsole() {
	b.sync()
	b.mu.Lock()
	b.problems = nil
	b.mu.Unlock()
}

// Dialogs returns the JavaScript dialogs opened so far (each was dismissed).
func (b *Browser) Dialogs() []Dialog {
	b.sync()
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Dialog(nil), b.dialogs...)
}

// WaitDialog waits up to within for the page to have opened a JavaScript
// dialog, for a test that expects one from an event that fires later (an
// image's onerror, a timer). It returns the first dialog, or false.
func (b *Browser) WaitDialog(within time.Duration) (Dialog, bool) {
	deadline := time.Now().Add(within)
	for {
		if ds := b.Dialogs(); len(ds) > 0 {
			return ds[0], true
		}
		if time.Now().After(deadline) || b.ctx.Err() != nil {
			return Dialog{}, false
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// NoDialogs fails the test (without stopping it) if any page opened a
// JavaScript dialog: on a page that shows untrusted text, an alert means
// that text ran as script.
func (b *Browser) NoDialogs(t testing.TB) {
	t.Helper()
	if ds := b.Dialogs(); len(ds) > 0 {
		t.Errorf("page opened %d JavaScript dialog(s), so script ran that should not have: %v", len(ds), ds)
	}
}

// Do runs chromedp actions on the tab, failing the test on error.
func (b *Browser) Do(t testing.TB, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		t.Fatalf("browser: %v", b.explain(err))
	}
}

// Navigate loads url in the tab, waits for its load event and returns the
// HTTP status of the document. It fails the test if the page did not load.
func (b *Browser) Navigate(t testing.TB, url string) int {
	t.Helper()
	resp, err := chromedp.Run(b.ctx, chromedp.NavigateResponse(url))
	if err != nil {
		t.Fatalf("browser: navigating to %s: %v", url, b.explain(err))
	}
	if resp == nil {
		return 0
	}
	return int(resp.Status)
}

// Text returns the visible text of the first element matching the CSS
// selector, waiting for it to be visible. It fails the test if there is none
// before the timeout.
func (b *Browser) Text(t testing.TB, selector string) string {
	t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(selector)))
	if err != nil {
		t.Fatalf("browser: text of %q: %v", selector, b.explain(err))
	}
	return s
}

// Eval evaluates a JavaScript expression in the page and decodes its JSON
// value into a T.
func Eval[T any](t testing.TB, b *Browser, expression string) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expression))
	if err != nil {
		t.Fatalf("browser: evaluating %q: %v", expression, b.explain(err))
	}
	return v
}

func (b *Browser) explain(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w (the browser's %v timeout passed; see browsertest.WithTimeout)", err, b.timeout)
	}
	return err
}

// Screenshot saves a full-page PNG of the tab as
// <artifacts>/<test>--<name>.png, logs the path and returns it. <artifacts>
// is $SKEWSCOPE_ARTIFACTS (relative to the repository root when relative) or
// <repo>/artifacts. A failure to take or save it is logged, and does not fail
// the test.
func (b *Browser) Screenshot(t testing.TB, name string) string {
	t.Helper()
	return b.screenshot(t, name)
}

// ViewportScreenshot saves, as Screenshot does, only what the viewport
// shows: a page's first screen.
func (b *Browser) ViewportScreenshot(t testing.TB, name string) string {
	t.Helper()
	return b.capture(t, name, chromedp.CaptureScreenshot())
}

func (b *Browser) screenshot(t testing.TB, name string) string {
	t.Helper()
	return b.capture(t, name, chromedp.FullScreenshot(100))
}

func (b *Browser) capture(t testing.TB, name string, shot chromedp.Action[[]byte]) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, shot)
	if err != nil {
		t.Logf("screenshot %q not taken: %v", name, err)
		return ""
	}
	dir, err := ArtifactsDir()
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		t.Logf("screenshot %q not saved: %v", name, err)
		return ""
	}
	path := filepath.Join(dir, fileName(t.Name())+"--"+fileName(name)+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Logf("screenshot %q not saved: %v", name, err)
		return ""
	}
	t.Logf("screenshot: %s", path)
	return path
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func fileName(s string) string {
	s = strings.Trim(unsafeFileChars.ReplaceAllString(s, "_"), "_.")
	if s == "" {
		s = "page"
	}
	return s
}

// ArtifactsDir returns where screenshots go: $SKEWSCOPE_ARTIFACTS, or
// <repo>/artifacts, where <repo> is the nearest directory above the working
// directory that holds go.mod.
func ArtifactsDir() (string, error) {
	dir := os.Getenv("SKEWSCOPE_ARTIFACTS")
	if filepath.IsAbs(dir) {
		return dir, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	if dir == "" {
		dir = "artifacts"
	}
	return filepath.Join(root, dir), nil
}

func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above %s: set SKEWSCOPE_ARTIFACTS", wd)
		}
		dir = parent
	}
}

// StartServer serves handler on a loopback port for the test and returns its
// base URL (no trailing slash). The server closes when the test ends.
func StartServer(t testing.TB, handler http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv.URL
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (w *tailBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if over := len(w.buf) - w.max; over > 0 {
		w.buf = append(w.buf[:0], w.buf[over:]...)
	}
	return len(p), nil
}

func (w *tailBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "\t\t(none)"
	}
	return "\t\t" + strings.ReplaceAll(s, "\n", "\n\t\t")
}
