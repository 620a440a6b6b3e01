//go:build browser

package web

import (
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skewscope/skewscope/internal/browsertest"
)

// TestBrowserPlannerLargeStaysResponsive opens the planner at its scale
// target (10,000 partitions over 20 topics, p = 1024 → 1280, maxParallelism
// 32768, a rate for every partition), then changes the target parallelism
// and waits for the grid to follow. It checks the page works at that size
// and reports how long the browser took; the figures are measurements to
// read, not thresholds.
func TestBrowserPlannerLargeStaysResponsive(t *testing.T) {
	s := newTestServer(t)
	base := browsertest.StartServer(t, s)
	b := browsertest.New(t, browsertest.WithTimeout(3*time.Minute))

	start := time.Now()
	if code := b.Navigate(t, base+"/plan?"+bigPlanQuery()); code != 200 {
		t.Fatalf("GET large plan = %d", code)
	}
	loaded := time.Since(start)
	timing := browsertest.Eval[map[string]float64](t, b, `(() => {
		const n = performance.getEntriesByType("navigation")[0];
		return {responseEnd: n.responseEnd, domInteractive: n.domInteractive, loadEventEnd: n.loadEventEnd, transfer: n.transferSize, decoded: n.decodedBodySize};
	})()`)
	rows := func() int {
		return browsertest.Eval[int](t, b, `document.querySelectorAll('[data-testid="grid-target"] tbody tr').length`)
	}
	if n := rows(); n != 1280 {
		t.Fatalf("target grid has %d rows, want 1280", n)
	}
	cells := browsertest.Eval[int](t, b, `document.querySelectorAll('[data-testid="grid-target"] td.parts i').length`)
	if cells != 10000 {
		t.Fatalf("target grid has %d partition cells, want 10000", cells)
	}

	// Live update: 1280 → 1536.
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
	// Input stays usable: the page answers a trivial script at once.
	probe := time.Now()
	browsertest.Eval[bool](t, b, `true`)
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
	t.Logf("large plan: navigation %v (response end %.0f ms, DOM interactive %.0f ms, load end %.0f ms), %s KB transferred, %s KB decoded",
		loaded.Round(time.Millisecond), timing["responseEnd"], timing["domInteractive"], timing["loadEventEnd"],
		strconv.Itoa(int(timing["transfer"])/1024), strconv.Itoa(int(timing["decoded"])/1024))
	t.Logf("large plan: target 1280 → 1536 re-rendered in %v (including the 250 ms input debounce); event loop probe %v", update.Round(time.Millisecond), time.Since(probe).Round(time.Millisecond))
}
