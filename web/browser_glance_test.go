//go:build browser

package web

import (
	"encoding/json"
	"fmt"
	"net/url"
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
	{name: "planner-capacity", path: "/plan?topic=orders:12&topic=payments.v1:6&parallelism=4&target=6&mode=restore&busy=0.95,0.4,0.35,0.5&keyedIn=90,60,55,70&keyedBusy=0.6,0.4,0.37,0.47&state=4+GiB&rates=" +
		url.QueryEscape("orders,0,92\norders,1,71\norders,2,20\norders,3,23\norders,4,26\norders,5,29\norders,6,32\norders,7,35\norders,8,38\norders,9,41\norders,10,44\norders,11,47\npayments.v1,0,10\npayments.v1,1,12\npayments.v1,2,14\npayments.v1,3,16\npayments.v1,4,18\npayments.v1,5,20")},
	{name: "keys", path: "/keys?keys=customer-42%0Acustomer-7%0Aa-rather-long-key-without-spaces-0123456789&parallelism=4&target=6"},
	{name: "keys-sql", path: "/keys?type=sql&columns=" + url.QueryEscape("account_id BIGINT, region STRING") + "&keys=" + url.QueryEscape(`[42, "eu-west-1"]`) + "&parallelism=4&target=6"},
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
		b.Do(t, chromedp.WaitVisible(`[data-testid="brief"]`))
		if sx := browsertest.Eval[float64](t, b, `scrollX`); sx != 0 {
			t.Errorf("subtask %s: the page scrolled %v px sideways", n, sx)
		}
		if got := b.Text(t, `[data-testid="brief-subtask"]`); got != "Subtask "+n {
			t.Errorf("subtask %s: the brief names %q", n, got)
		}
		// The first screen holds the job, the subtask and its lag; the
		// highlighted row is one link away.
		for _, part := range []string{`[data-testid="context"] a strong`, `[data-testid="brief-subtask"]`, `[data-testid="brief-lag"]`, `[data-testid="brief-lagtime"]`, `[data-testid="brief-row"]`} {
			r := inView(t, b, part)
			if r.Left < 0 || r.Right > r.Width+0.5 || r.Top < 0 || r.Bottom > r.Height+0.5 {
				t.Errorf("subtask %s: %s is at x %.0f–%.0f, y %.0f–%.0f, want it inside the %v×%v viewport", n, part, r.Left, r.Right, r.Top, r.Bottom, r.Width, r.Height)
			}
		}
		if href := browsertest.Eval[string](t, b, `document.querySelector('[data-testid="brief-row"]').getAttribute("href")`); href != "#subtask-"+n {
			t.Errorf("subtask %s: the brief's row link is %q", n, href)
		}
		if got := browsertest.Eval[string](t, b, `document.querySelector('tr.hl[data-testid="subtask-row"]')?.dataset.subtask || ""`); got != n {
			t.Errorf("subtask %s: the highlighted row is %q", n, got)
		}
	}
	b.Do(t, colorScheme("dark"))
	b.Screenshot(t, "alert-link-390px-dark")
	b.Do(t, colorScheme("light"))
	b.Screenshot(t, "alert-link-390px-light")
	b.NoConsoleErrors(t)
}

// tinyText lists the rendered text under 12 px: every text node of the
// body (SVG text included) with its element's computed font size, with
// every <details> opened so that folded text counts too.
const tinyText = `(() => {
	for (const d of document.querySelectorAll("details")) d.open = true;
	const out = [];
	const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (let n = walk.nextNode(); n; n = walk.nextNode()) {
		const text = n.textContent.trim();
		const el = n.parentElement;
		if (!text || !el || el.getClientRects().length === 0) continue;
		const cs = getComputedStyle(el);
		if (cs.visibility === "hidden") continue;
		const px = parseFloat(cs.fontSize);
		if (px < 12) out.push(el.tagName.toLowerCase() + "." + (el.getAttribute("class") || "") + " " + px + "px: " + text.slice(0, 40));
	}
	return out.slice(0, 20);
})()`

// TestBrowserNoTinyText walks every page's text at desktop and phone
// widths: none is under 12 px.
func TestBrowserNoTinyText(t *testing.T) {
	b := browsertest.New(t)
	for _, width := range []int64{browsertest.WindowWidth, 390} {
		b.Do(t, chromedp.EmulateViewport(width, 844))
		visitGlancePages(t, b, func(p glancePage) {
			if width == browsertest.WindowWidth { // the phone's pictures are TestBrowserPhoneFits's
				browsertest.Eval[bool](t, b, `(scrollTo(0, 0), true)`)
				b.Screenshot(t, p.name+"-light")
				b.Do(t, colorScheme("dark"))
				b.Screenshot(t, p.name+"-dark")
				b.Do(t, colorScheme("light"))
			}
			if tiny := browsertest.Eval[[]string](t, b, tinyText); len(tiny) > 0 {
				t.Errorf("%s at %d px: text under 12 px:\n\t%s", p.name, width, strings.Join(tiny, "\n\t"))
			}
		})
	}
	b.NoDialogs(t)
}

// contrastJS measures, for each colour level of the partition cells
// (-1 unknown, 0–3), the contrast of the cell's text against its
// background, and on the highlighted row the contrast of the cell's
// background and of the highlight ring against the row's background. It
// sets the level on a cell of an ordinary row and of the highlighted row,
// as an update would. Colours are read with getComputedStyle, composited
// over the backgrounds behind them, and compared by WCAG 2.x relative
// luminance.
const contrastJS = `(() => {
	const ctx = document.createElement("canvas").getContext("2d", { willReadFrequently: true });
	const rgba = (css) => {
		ctx.clearRect(0, 0, 1, 1);
		ctx.fillStyle = "#000"; ctx.fillStyle = css; ctx.fillRect(0, 0, 1, 1);
		const d = ctx.getImageData(0, 0, 1, 1).data;
		return [d[0], d[1], d[2], d[3] / 255];
	};
	const over = (top, below) => [0, 1, 2].map(i => top[i] * top[3] + below[i] * (1 - top[3])).concat(1);
	// bg is the colour an element's box shows: its background and those of
	// its ancestors, composited.
	const bg = (el) => {
		const layers = [];
		for (let e = el; e; e = e.parentElement) layers.push(rgba(getComputedStyle(e).backgroundColor));
		let c = getComputedStyle(document.documentElement).colorScheme.includes("dark") && matchMedia("(prefers-color-scheme: dark)").matches ? [18, 18, 18, 1] : [255, 255, 255, 1];
		for (const l of layers.reverse()) c = over(l, c);
		return c;
	};
	const lum = (c) => {
		const f = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
		return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
	};
	const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
	const plain = document.querySelector('tr[data-testid="subtask-row"]:not(.hl) [data-testid="pcell"]');
	const hlRow = document.querySelector('tr.hl[data-testid="subtask-row"]');
	const hot = hlRow && hlRow.querySelector('[data-testid="pcell"]');
	const out = [];
	for (const level of ["-1", "0", "1", "2", "3"]) {
		for (const [where, cell] of [["row", plain], ["highlighted row", hot]]) {
			if (!cell) continue;
			cell.dataset.l = level;
			const back = bg(cell);
			for (const part of cell.querySelectorAll("b, i")) {
				out.push({ level, where, what: part.tagName.toLowerCase() + " text", ratio: ratio(over(rgba(getComputedStyle(part).color), back), back), min: 4.5 });
			}
			if (cell === hot) {
				const row = bg(cell.parentElement);
				if (level === "3") out.push({ level, where, what: "cell against the row", ratio: ratio(back, row), min: 3 });
				cell.classList.add("hl");
				out.push({ level, where, what: "highlight ring against the row", ratio: ratio(rgba(getComputedStyle(cell).outlineColor), row), min: 3 });
				cell.classList.remove("hl");
			}
		}
	}
	for (const sw of document.querySelectorAll('[data-testid="colour-legend"] .pc')) {
		const back = bg(sw);
		out.push({ level: sw.dataset.l, where: "legend", what: "text", ratio: ratio(over(rgba(getComputedStyle(sw.querySelector("i")).color), back), back), min: 4.5 });
	}
	return JSON.stringify(out);
})()`

// TestBrowserCellContrast: every colour level of the partition cells, by
// lag and by rate, keeps its text at WCAG AA (4.5:1) in the light and the
// dark scheme, and on the highlighted row the hottest cell and the
// highlight ring stand out from the row (3:1, WCAG's contrast for parts of
// graphics).
func TestBrowserCellContrast(t *testing.T) {
	base, _ := glanceServer(t)
	b := browsertest.New(t)
	for _, scheme := range []string{"light", "dark"} {
		for _, color := range []string{"lag", "rate"} {
			b.Do(t, colorScheme(scheme))
			b.Navigate(t, base+"/jobs/"+tNewJob+"/vertices/"+tNewSource+"?color="+color+"&highlight=subtask:3")
			b.Do(t, chromedp.WaitVisible(`tr.hl`))
			var got []struct {
				Level, Where, What string
				Ratio, Min         float64
			}
			if err := json.Unmarshal([]byte(browsertest.Eval[string](t, b, contrastJS)), &got); err != nil {
				t.Fatal(err)
			}
			if len(got) < 5*3+4 {
				t.Fatalf("%s, by %s: %d measurements, want every level in a row, the highlighted row and the legend", scheme, color, len(got))
			}
			for _, m := range got {
				if m.Ratio < m.Min {
					t.Errorf("%s scheme, cells by %s, level %s, %s: %s contrast %.2f:1, want at least %.1f:1", scheme, color, m.Level, m.Where, m.What, m.Ratio, m.Min)
				}
			}
			// A picture of the levels on the highlighted row, set as above.
			browsertest.Eval[bool](t, b, `(() => {
				const cells = document.querySelectorAll('tr.hl [data-testid="pcell"]');
				cells.forEach((c, i) => c.dataset.l = String(3 - i % 4));
				if (cells[1]) cells[1].classList.add("hl");
				document.querySelector("tr.hl").scrollIntoView({ block: "center" });
				return true;
			})()`)
			b.Screenshot(t, "levels-by-"+color+"-"+scheme)
		}
	}
	b.Do(t, colorScheme("light"))
	b.NoConsoleErrors(t)
}
