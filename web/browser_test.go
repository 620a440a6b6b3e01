//go:build browser

// Browser tests: the pages as headless Chromium shows them. They need
// Chromium (scripts/ensure-chromium.sh installs it) and run with
// `go test -tags browser ./web/` or `make browser`; `make test` runs them.
// Every test's name starts with TestBrowser, so `-run Browser` picks them.

package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/internal/browsertest"
	"github.com/skewscope/skewscope/web"
)

// startSkewscope serves a ready web.Server on loopback and returns its URL.
func startSkewscope(t *testing.T) string {
	t.Helper()
	s, err := web.NewServer(web.Options{Version: "browser-test"})
	if err != nil {
		t.Fatal(err)
	}
	s.SetReady(true)
	return browsertest.StartServer(t, s)
}

func TestBrowserIndexLoads(t *testing.T) {
	base := startSkewscope(t)
	b := browsertest.New(t)

	if status := b.Navigate(t, base+"/"); status != http.StatusOK {
		t.Fatalf("GET / answered %d in the browser, want 200", status)
	}
	if text := b.Text(t, "body"); !strings.Contains(strings.ToLower(text), "skewscope") {
		t.Errorf("the page at / does not say skewscope; its text is %q", text)
	}
	b.Screenshot(t, "index")
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
}

func TestBrowserOpenAPILoads(t *testing.T) {
	base := startSkewscope(t)
	b := browsertest.New(t)

	if status := b.Navigate(t, base+"/api/v1/openapi.json"); status != http.StatusOK {
		t.Fatalf("GET /api/v1/openapi.json answered %d in the browser, want 200", status)
	}
	// Chromium shows JSON as text in a <pre>; it must parse as the
	// OpenAPI document it is.
	raw := browsertest.Eval[string](t, b, `(document.querySelector("pre") || document.body).textContent`)
	var doc struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	if err := json.Unmarshal([]byte(raw), &doc); err != nil {
		t.Fatalf("the browser shows /api/v1/openapi.json as text that is not JSON: %v\n%.300s", err, raw)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") || len(doc.Paths) == 0 {
		t.Errorf("openapi.json in the browser: openapi=%q with %d paths, want 3.x with paths", doc.OpenAPI, len(doc.Paths))
	}
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
}

// The tests below prove the harness itself, on test-only pages.

// page serves one fixed HTML document with the given CSP ("" for none).
func page(csp, html string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if csp != "" {
			w.Header().Set("Content-Security-Policy", csp)
		}
		w.Write([]byte(html))
	})
}

// hostile is what an attacker would put in a topic or job name.
const hostile = `<img src=x onerror=alert(1)><script>alert(2)</script>"'><svg onload=alert(3)>`

func TestBrowserHarnessDetectsAlert(t *testing.T) {
	base := browsertest.StartServer(t, page("", `<!doctype html><title>alert</title>
<p id="after">before</p>
<script>alert("injected"); document.getElementById("after").textContent = "after";</script>`))
	b := browsertest.New(t)

	b.Navigate(t, base+"/") // returns only because the alert was dismissed
	ds := b.Dialogs()
	if len(ds) != 1 || ds[0].Type != "alert" || ds[0].Message != "injected" {
		t.Fatalf("dialogs = %v, want one alert(\"injected\")", ds)
	}
	if got := b.Text(t, "#after"); got != "after" {
		t.Errorf("script after the alert did not run on (dismissed dialog should resume the page): #after = %q", got)
	}
}

func TestBrowserHarnessTextContentIsInert(t *testing.T) {
	// Control: the same string through innerHTML does run, and the
	// detector sees it.
	t.Run("innerHTML runs it", func(t *testing.T) {
		base := browsertest.StartServer(t, page("", hostilePage("innerHTML")))
		b := browsertest.New(t)
		b.Navigate(t, base+"/")
		d, ok := b.WaitDialog(10 * time.Second)
		if !ok {
			t.Fatal("innerHTML of the hostile string opened no dialog: the detector is blind")
		}
		if d.Type != "alert" {
			t.Errorf("dialog = %v, want an alert", d)
		}
	})

	t.Run("textContent shows it", func(t *testing.T) {
		base := browsertest.StartServer(t, page("", hostilePage("textContent")))
		b := browsertest.New(t)
		b.Navigate(t, base+"/")
		if got := b.Text(t, "#out"); got != hostile {
			t.Errorf("#out shows %q, want the hostile string as text: %q", got, hostile)
		}
		if n := browsertest.Eval[int](t, b, `document.querySelectorAll("#out *").length`); n != 0 {
			t.Errorf("textContent made %d elements out of the hostile string, want 0", n)
		}
		// Give a late handler (an image's onerror) time to fire.
		if d, ok := b.WaitDialog(time.Second); ok {
			t.Errorf("textContent of the hostile string opened a dialog: %v", d)
		}
		b.Screenshot(t, "hostile-as-text")
		b.NoDialogs(t)
		b.NoConsoleErrors(t)
	})
}

// hostilePage puts the hostile string into #out through the DOM property
// prop ("textContent" or "innerHTML").
func hostilePage(prop string) string {
	lit, _ := json.Marshal(hostile) // a JS string literal; <>& are \u-escaped
	return `<!doctype html><title>hostile</title><div id="out"></div>
<script>document.getElementById("out").` + prop + ` = ` + string(lit) + `;</script>`
}

func TestBrowserHarnessReportsCSPViolation(t *testing.T) {
	base := browsertest.StartServer(t, page("default-src 'none'",
		`<!doctype html><title>csp</title><p>inline script is blocked</p><script>alert("csp bypassed")</script>`))
	b := browsertest.New(t)
	b.Navigate(t, base+"/")

	b.NoDialogs(t)
	var csp []browsertest.Message
	for _, m := range b.ConsoleErrors() {
		if m.IsCSPViolation() {
			csp = append(csp, m)
		}
	}
	if len(csp) == 0 {
		t.Errorf("an inline script under default-src 'none' was blocked, but no CSP violation was recorded; recorded: %v", b.ConsoleErrors())
	}
}
