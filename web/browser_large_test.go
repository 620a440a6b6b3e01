//go:build browser

package web

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/browsertest"
)

// largeGrid is what a compact planner grid shows, read from the page.
type largeGrid struct {
	Rows  int `json:"rows"`
	Cells int `json:"cells"`
	// Drawn counts the rows whose cells are drawn (into a canvas),
	// Texts the rows that list their partitions as text.
	Drawn int `json:"drawn"`
	Texts int `json:"texts"`
	// Busy counts the rows that have partitions.
	Busy int `json:"busy"`
	// Elements is the number of elements in the grid.
	Elements int `json:"elements"`
}

func readLargeGrid(t testing.TB, b *browsertest.Browser, id string) largeGrid {
	t.Helper()
	// The script lists the rows' partitions in idle time, with the table
	// aria-busy until it is done.
	deadline := time.Now().Add(30 * time.Second)
	for browsertest.Eval[bool](t, b, `!!document.querySelector('[data-testid="grid-`+id+`"] table[aria-busy]')`) {
		if time.Now().After(deadline) {
			t.Fatalf("grid-%s is still aria-busy after 30 s", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return browsertest.Eval[largeGrid](t, b, `(() => {
		const g = document.querySelector('[data-testid="grid-`+id+`"]');
		if (!g) return {};
		const tds = [...g.querySelectorAll("tbody td[data-cells]")];
		return {
			rows: g.querySelectorAll("tbody tr").length,
			cells: tds.reduce((n, td) => n + td.dataset.cells.split(" ").filter(Boolean).length, 0),
			drawn: g.querySelectorAll("tbody td canvas").length,
			texts: g.querySelectorAll("tbody td[data-cells] .sr-only").length,
			busy: tds.filter(td => td.dataset.cells).length,
			elements: g.querySelectorAll("*").length,
		};
	})()`)
}

// TestBrowserPlannerLargeStaysResponsive opens the planner at its scale
// target (10,000 partitions over 20 topics, p = 1024 → 1280, maxParallelism
// 32768, a rate for every partition), then changes the target parallelism
// and waits for the grid to follow. It checks the page's structure at that
// size and logs how long the browser took: DOM ready, and the re-render
// after the change (the user timing measure "plan-update" of app.js, from
// the request to the frame after the swap, and from typing, which includes
// the 250 ms input debounce). The times are measurements to read, not
// thresholds.
func TestBrowserPlannerLargeStaysResponsive(t *testing.T) {
	s := newTestServer(t)
	var mu sync.Mutex
	var served []string // the planner requests' server times
	base := browsertest.StartServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.ServeHTTP(w, r)
		if r.URL.Path == "/plan" {
			mu.Lock()
			served = append(served, fmt.Sprintf("target=%s %v", r.URL.Query().Get("target"), time.Since(start).Round(time.Millisecond)))
			mu.Unlock()
		}
	}))
	b := browsertest.New(t, browsertest.WithTimeout(3*time.Minute))

	start := time.Now()
	if code := b.Navigate(t, base+"/plan?"+bigPlanQuery()); code != 200 {
		t.Fatalf("GET large plan = %d", code)
	}
	loaded := time.Since(start)
	timing := browsertest.Eval[map[string]float64](t, b, `(() => {
		const n = performance.getEntriesByType("navigation")[0];
		return {responseEnd: n.responseEnd, domInteractive: n.domInteractive, domReady: n.domContentLoadedEventEnd, loadEventEnd: n.loadEventEnd, transfer: n.transferSize, decoded: n.decodedBodySize, elements: document.getElementsByTagName("*").length};
	})()`)
	now, target := readLargeGrid(t, b, "now"), readLargeGrid(t, b, "target")
	if now.Rows != 1024 || target.Rows != 1280 {
		t.Fatalf("grids have %d and %d rows, want 1024 and 1280", now.Rows, target.Rows)
	}
	if now.Cells != 10000 || target.Cells != 10000 {
		t.Fatalf("grids have %d and %d partition cells, want 10000 each", now.Cells, target.Cells)
	}
	// Every row lists its partitions as text; only rows near the view are
	// drawn; and a row costs a handful of elements, not one per partition.
	for _, g := range []struct {
		id string
		largeGrid
	}{{"now", now}, {"target", target}} {
		if g.Texts != g.Busy || g.Busy == 0 {
			t.Errorf("grid-%s: %d of %d rows with partitions list them as text", g.id, g.Texts, g.Busy)
		}
		if g.Drawn == 0 || g.Drawn >= g.Rows {
			t.Errorf("grid-%s: %d of %d rows are drawn, want those in view only", g.id, g.Drawn, g.Rows)
		}
		if g.Elements > 10*g.Rows {
			t.Errorf("grid-%s has %d elements for %d rows, want at most 10 a row", g.id, g.Elements, g.Rows)
		}
	}

	// Live update: 1280 → 1536. A long-task observer sees what blocks
	// the page meanwhile.
	browsertest.Eval[bool](t, b, `(() => {
		window.__longTasks = [];
		new PerformanceObserver(l => { for (const e of l.getEntries()) window.__longTasks.push(e.duration); }).observe({type: "longtask"});
		document.querySelector('[data-testid="grid-now"]').__kept = true;
		return true;
	})()`)
	rows := func() int {
		return browsertest.Eval[int](t, b, `document.querySelectorAll('[data-testid="grid-target"] tbody tr').length`)
	}
	b.Do(t, chromedp.Clear(`[data-testid="in-target"]`), chromedp.SendKeys(`[data-testid="in-target"]`, "1536"))
	changed := time.Now()
	deadline := changed.Add(60 * time.Second)
	for rows() != 1536 {
		if time.Now().After(deadline) {
			t.Fatalf("target grid still has %d rows 60 s after typing 1536", rows())
		}
		time.Sleep(20 * time.Millisecond)
	}
	update := time.Since(changed)
	type rerender struct {
		Measure   float64   `json:"measure"`
		Render    float64   `json:"render"`
		LongTasks []float64 `json:"longTasks"`
		Kept      bool      `json:"kept"`
	}
	var rr rerender
	for {
		rr = browsertest.Eval[rerender](t, b, `(() => {
			const m = performance.getEntriesByName("plan-update", "measure");
			const r = performance.getEntriesByName("plan-update-render", "measure");
			return {measure: m.length ? m[m.length - 1].duration : -1, render: r.length ? r[r.length - 1].duration : -1, longTasks: window.__longTasks, kept: document.querySelector('[data-testid="grid-now"]').__kept === true};
		})()`)
		if rr.Measure >= 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !rr.Kept {
		t.Errorf("changing the target replaced the now grid, which did not change")
	}
	if g := readLargeGrid(t, b, "target"); g.Cells != 10000 || g.Texts != g.Busy {
		t.Errorf("after the update the target grid has %d cells and %d row texts for %d rows with partitions, want 10000 and one a row", g.Cells, g.Texts, g.Busy)
	}
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
	t.Logf("large plan: navigation %v (response end %.0f ms, DOM interactive %.0f ms, DOM ready %.0f ms, load end %.0f ms), %s KB transferred, %s KB decoded, %.0f elements",
		loaded.Round(time.Millisecond), timing["responseEnd"], timing["domInteractive"], timing["domReady"], timing["loadEventEnd"],
		strconv.Itoa(int(timing["transfer"])/1024), strconv.Itoa(int(timing["decoded"])/1024), timing["elements"])
	t.Logf("large plan: target 1280 → 1536 re-rendered in %.0f ms from the request (plan-update; %.0f ms of it from the response on, plan-update-render), %v from typing (with the 250 ms debounce); long tasks meanwhile %v ms (longest %.0f ms)",
		rr.Measure, rr.Render, update.Round(time.Millisecond), rr.LongTasks, slices.Max(append(rr.LongTasks, 0)))
	mu.Lock()
	t.Logf("large plan: server time of the planner requests: %s", strings.Join(served, ", "))
	mu.Unlock()
}

// TestBrowserPlannerLargeMarks: at the scale target, a highlighted
// partition is drawn with its mark in a highlighted row brought into the
// grid's view, the cells say which partition they are on a click, moved
// partitions are marked in the target grid, the row headers give Flink's
// key-group ranges, and the page is photographed in the light and dark
// schemes and at a phone's 390 px.
func TestBrowserPlannerLargeMarks(t *testing.T) {
	s := newTestServer(t)
	base := browsertest.StartServer(t, s)
	b := browsertest.New(t, browsertest.WithTimeout(3*time.Minute))

	q, err := url.ParseQuery(bigPlanQuery())
	if err != nil {
		t.Fatal(err)
	}
	q.Set("highlight", "partition:events-03:417")
	if code := b.Navigate(t, base+"/plan?"+q.Encode()); code != 200 {
		t.Fatalf("GET large plan = %d", code)
	}
	type mark struct {
		Row     string `json:"row"`
		Code    string `json:"code"`
		Drawn   bool   `json:"drawn"`
		InView  bool   `json:"inView"`
		Readout string `json:"readout"`
		Title   string `json:"title"`
		Moved   int    `json:"moved"`
	}
	for _, id := range []string{"now", "target"} {
		readLargeGrid(t, b, id) // waits for the rows' texts
		deadline := time.Now().Add(30 * time.Second)
		for !browsertest.Eval[bool](t, b, `!!document.querySelector('[data-testid="grid-`+id+`"] tbody tr.hl canvas')`) {
			if time.Now().After(deadline) {
				t.Fatalf("grid-%s: the highlighted row is not drawn 30 s after loading", id)
			}
			time.Sleep(20 * time.Millisecond)
		}
		m := browsertest.Eval[mark](t, b, `(() => {
			const g = document.querySelector('[data-testid="grid-`+id+`"]');
			const tr = g.querySelector("tbody tr.hl");
			if (!tr) return {};
			const td = tr.querySelector("td[data-cells]");
			const codes = td.dataset.cells.split(" ");
			const i = codes.findIndex(c => c.split(":")[3]?.includes("h"));
			const box = g.getBoundingClientRect(), r = tr.getBoundingClientRect();
			const canvas = td.querySelector("canvas");
			let readout = "";
			if (canvas && i >= 0) {
				const cols = Math.max(1, Math.floor((td.clientWidth - 8 + 1) / 11));
				const cr = canvas.getBoundingClientRect();
				canvas.dispatchEvent(new MouseEvent("click", {bubbles: true, clientX: cr.left + (i % cols) * 11 + 5, clientY: cr.top + Math.floor(i / cols) * 16 + 7}));
				readout = g.querySelector(".cell-readout").textContent;
			}
			return {
				row: tr.id, code: codes[i] || "", drawn: !!canvas, inView: r.top >= box.top && r.bottom <= box.bottom, readout,
				title: tr.querySelector("th .st").title,
				moved: [...g.querySelectorAll("td[data-cells]")].reduce((n, td) => n + td.dataset.cells.split(" ").filter(c => c.split(":")[3]?.includes("m")).length, 0),
			};
		})()`)
		if m.Row == "" {
			t.Errorf("grid-%s: no highlighted row for partition events-03-417", id)
			continue
		}
		if !strings.HasPrefix(m.Code, "3:417:") {
			t.Errorf("grid-%s: the highlighted cell's code is %q, want events-03 (topic 3) partition 417", id, m.Code)
		}
		if !m.Drawn || !m.InView {
			t.Errorf("grid-%s: highlighted row %s drawn=%v, in the grid's view=%v; want both", id, m.Row, m.Drawn, m.InView)
		}
		if !strings.HasPrefix(m.Readout, "events-03-417 · ") {
			t.Errorf("grid-%s: a click on the highlighted cell reads %q, want it to name events-03-417", id, m.Readout)
		}
		sub, _ := strconv.Atoi(m.Row[strings.LastIndexByte(m.Row, '-')+1:])
		p := map[string]int{"now": 1024, "target": 1280}[id]
		kr, err := assign.KeyGroupRangeFor(32768, p, sub)
		if err != nil {
			t.Fatal(err)
		}
		if want := "subtask " + strconv.Itoa(sub) + " · key groups " + strconv.Itoa(kr.Start) + "–" + strconv.Itoa(kr.End); !strings.HasPrefix(m.Title, want) {
			t.Errorf("grid-%s: row %s's header title is %q, want it to start %q (assign.KeyGroupRangeFor)", id, m.Row, m.Title, want)
		}
		if id == "now" && m.Moved != 0 || id == "target" && m.Moved == 0 {
			t.Errorf("grid-%s marks %d partitions as moved", id, m.Moved)
		}
	}
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
	for _, width := range []int64{1400, 390} {
		b.Do(t, chromedp.EmulateViewport(width, 900), colorScheme("light"))
		browsertest.Eval[bool](t, b, `(document.querySelector('[data-testid="grid-now"]').scrollIntoView(), true)`)
		time.Sleep(300 * time.Millisecond) // the rows now in view are drawn
		name := "large-" + strconv.Itoa(int(width)) + "px"
		b.Screenshot(t, name+"-light")
		viewportShot(t, b, name+"-light-grid")
		b.Do(t, colorScheme("dark"))
		time.Sleep(300 * time.Millisecond)
		b.Screenshot(t, name+"-dark")
		viewportShot(t, b, name+"-dark-grid")
	}
}

// viewportShot saves what the viewport shows (the grids, scrolled into
// view) beside the full-page screenshots, at full scale.
func viewportShot(t *testing.T, b *browsertest.Browser, name string) {
	t.Helper()
	png, err := chromedp.Run(b.Ctx(), chromedp.CaptureScreenshot())
	if err != nil {
		t.Logf("screenshot %q not taken: %v", name, err)
		return
	}
	dir, err := browsertest.ArtifactsDir()
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err == nil {
		path := filepath.Join(dir, t.Name()+"--"+name+".png")
		err = os.WriteFile(path, png, 0o644)
		t.Logf("screenshot: %s", path)
	}
	if err != nil {
		t.Logf("screenshot %q not saved: %v", name, err)
	}
}
