//go:build browser

package web

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skewscope/skewscope/internal/browsertest"
)

// Readable at a glance: every page fits a phone's width, its text is at
// least 12 px, and the partition cells' colours keep their text legible.

// glancePage is one page an alert link or a portal opens.
type glancePage struct {
	name, path string
	// status is the page's HTTP status, 0 for 200.
	status int
	// forgotten pages are served after Flink has forgotten the old job.
	forgotten bool
}

// glancePages are the pages of restoredStore: every kind of page skewscope
// serves, the replaced banner and the forgotten job's page included.
var glancePages = []glancePage{
	{name: "overview", path: "/"},
	{name: "job", path: "/jobs/" + tNewJob},
	{name: "source", path: "/jobs/" + tNewJob + "/vertices/" + tNewSource + "?highlight=subtask:3"},
	{name: "source-by-rate", path: "/jobs/" + tNewJob + "/vertices/" + tNewSource + "?color=rate"},
	{name: "keyed", path: "/jobs/" + tNewJob + "/vertices/" + tNewKeyed + "?highlight=subtask:2"},
	{name: "replaced-source", path: "/jobs/" + tJob + "/vertices/" + tSource},
	{name: "topic", path: "/kafka/prod/topics/orders"},
	{name: "planner", path: "/plan?topic=orders:12&topic=payments.v1:6&parallelism=4&target=6"},
	{name: "keys", path: "/keys?keys=customer-42%0Acustomer-7%0Aa-rather-long-key-without-spaces-0123456789&parallelism=4&target=6"},
	{name: "error", path: "/jobs/" + tNewJob + "/vertices/" + tNewSource + "?embed=1&parts=grid,sparklines", status: 400},
	{name: "not-found", path: "/no/such/page", status: 404},
	{name: "embed", path: "/jobs/" + tNewJob + "/vertices/" + tNewSource + "?embed=1&highlight=subtask:3"},
	{name: "embed-parts", path: "/jobs/" + tNewJob + "/vertices/" + tNewSource + "?embed=1&parts=figures,grid,lineage&highlight=partition:orders:3"},
	{name: "forgotten", path: "/jobs/" + tJob + "/vertices/" + tSource, forgotten: true},
}

// glanceServer serves restoredStore with the sandbox's banner and restore
// form, as `make run` shows them; forget makes Flink forget the old job.
func glanceServer(t *testing.T) (base string, forget func()) {
	t.Helper()
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st, later := restoredStore(t, at)
	base = serveLive(t, Options{Live: st, Sandbox: &fakeSandbox{}, Now: func() time.Time { return at.Add(80 * time.Second) }})
	return base, func() { st.UpdateFlink(later) }
}

// visitGlancePages opens every glance page in turn and calls f on it.
func visitGlancePages(t *testing.T, b *browsertest.Browser, f func(p glancePage)) {
	t.Helper()
	base, forget := glanceServer(t)
	forgot := false
	for _, p := range glancePages {
		if p.forgotten && !forgot {
			forget()
			forgot = true
		}
		want := p.status
		if want == 0 {
			want = 200
		}
		if got := b.Navigate(t, base+p.path); got != want {
			t.Errorf("%s (%s): status %d, want %d", p.name, p.path, got, want)
		}
		b.Do(t, chromedp.WaitVisible(`main`))
		f(p)
		if p.status != 0 {
			b.ResetConsole() // the browser reports the 4xx it loaded
		}
	}
}

// overflowers names the elements that stick out of the viewport on the
// right without being inside a scrolling box of their own.
const overflowers = `(() => {
	const out = [];
	for (const el of document.body.querySelectorAll("*")) {
		if (el.closest(".scroll")) continue;
		const r = el.getBoundingClientRect();
		if (r.width > 0 && r.right > innerWidth + 0.5) {
			out.push(el.tagName.toLowerCase() + (el.className && el.className.baseVal === undefined ? "." + el.className.trim().replace(/\s+/g, ".") : "") + (el.dataset.testid ? "[" + el.dataset.testid + "]" : "") + " right " + Math.round(r.right));
		}
	}
	return out.slice(0, 12);
})()`

// TestBrowserPhoneFits opens every page at a phone's 390×844: the page
// never scrolls sideways (a wide table scrolls inside its own box), and an
// alert link's subtask shows its number, partitions and lag in view.
func TestBrowserPhoneFits(t *testing.T) {
	b := browsertest.New(t)
	b.Do(t, chromedp.EmulateViewport(390, 844))
	var widths []string
	visitGlancePages(t, b, func(p glancePage) {
		w := browsertest.Eval[[2]int](t, b, `[document.documentElement.scrollWidth, innerWidth]`)
		widths = append(widths, fmt.Sprintf("%s %d", p.name, w[0]))
		if w[0] > w[1] {
			t.Errorf("%s (%s) at 390 px: the page is %d px wide, want at most %d; sticking out: %s",
				p.name, p.path, w[0], w[1], strings.Join(browsertest.Eval[[]string](t, b, overflowers), ", "))
		}
		// A full-page picture from the top: the page may have scrolled to
		// a highlighted row.
		browsertest.Eval[bool](t, b, `(scrollTo(0, 0), true)`)
		b.Do(t, colorScheme("light"))
		b.Screenshot(t, p.name+"-390px-light")
		b.Do(t, colorScheme("dark"))
		b.Screenshot(t, p.name+"-390px-dark")
		b.Do(t, colorScheme("light"))
	})
	t.Logf("page widths at 390 px: %s", strings.Join(widths, ", "))
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
}

// inView reports where an element is against the viewport.
func inView(t *testing.T, b *browsertest.Browser, selector string) (r struct{ Left, Right, Top, Bottom, Width, Height float64 }) {
	t.Helper()
	sel, _ := json.Marshal(selector)
	raw := browsertest.Eval[string](t, b, `JSON.stringify((() => {
		const el = document.querySelector(`+string(sel)+`);
		if (!el) return null;
		const r = el.getBoundingClientRect();
		return {Left: r.left, Right: r.right, Top: r.top, Bottom: r.bottom, Width: innerWidth, Height: innerHeight};
	})())`)
	if raw == "null" {
		t.Fatalf("no element %s", selector)
	}
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestBrowserPhoneAlertLink follows an alert link on a phone: the
// highlighted subtask's number, its partitions and its lag are on screen
// once the page has scrolled the row into view, without scrolling sideways.
func TestBrowserPhoneAlertLink(t *testing.T) {
	base, _ := glanceServer(t)
	b := browsertest.New(t)
	b.Do(t, chromedp.EmulateViewport(390, 844))
	for _, n := range []string{"0", "3", "5"} {
		b.Navigate(t, base+"/jobs/"+tNewJob+"/vertices/"+tNewSource+"?highlight=subtask:"+n)
		row := `tr.hl[data-subtask="` + n + `"]`
		b.Do(t, chromedp.WaitVisible(row))
		time.Sleep(300 * time.Millisecond) // the page scrolls the row into view as it starts
		if sx := browsertest.Eval[float64](t, b, `scrollX`); sx != 0 {
			t.Errorf("subtask %s: the page scrolled %v px sideways", n, sx)
		}
		for _, part := range []string{`th`, `td.parts`, `[data-testid="row-lag"]`} {
			r := inView(t, b, row+" "+part)
			if r.Left < 0 || r.Right > r.Width+0.5 || r.Top < 0 || r.Bottom > r.Height+0.5 {
				t.Errorf("subtask %s: %s is at x %.0f–%.0f, y %.0f–%.0f, want it inside the %v×%v viewport", n, part, r.Left, r.Right, r.Top, r.Bottom, r.Width, r.Height)
			}
		}
	}
	b.Do(t, colorScheme("dark"))
	b.Screenshot(t, "alert-link-390px-dark")
	b.Do(t, colorScheme("light"))
	b.Screenshot(t, "alert-link-390px-light")
	b.NoConsoleErrors(t)
}
