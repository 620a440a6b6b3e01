//go:build browser

package web

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skewscope/skewscope/internal/browsertest"
)

const whyKindsJS = `[...document.querySelectorAll('[data-testid="why-line"]')].map(e => e.dataset.kind)`

// whyLineJS is the text of the panel's line i.
func whyLineJS(i string) string {
	return `(document.querySelectorAll('[data-testid="why-line"]')[` + i + `] || {}).textContent || ""`
}

// TestBrowserWhyPanel shows the "why is it hot?" panel on the sandbox-like
// store's pages (light, dark, 390 px), its texts updating in place and
// its lines changing the page when the causes change.
func TestBrowserWhyPanel(t *testing.T) {
	at := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	st, _ := sandboxStore(t, at)
	base := serveLive(t, Options{Live: st, LiveInterval: 50 * time.Millisecond, Now: func() time.Time { return at.Add(20 * time.Second) }})
	b := browsertest.New(t)
	open := func(job, vertex string, kinds ...string) {
		t.Helper()
		if code := b.Navigate(t, base+"/jobs/"+job+"/vertices/"+vertex); code != 200 {
			t.Fatalf("vertex page = %d", code)
		}
		b.Do(t, chromedp.WaitVisible(`[data-testid="why"]`))
		if got := browsertest.Eval[[]string](t, b, whyKindsJS); !slices.Equal(got, kinds) {
			t.Errorf("%s: why lines %v, want %v", vertex, got, kinds)
		}
	}

	// The orders source: the hot subtask and the backpressure, each
	// sentence marked.
	open(sbOrdersJob, sbOrdersSrc, "hot-partitions", "backpressured")
	first := browsertest.Eval[string](t, b, whyLineJS("0"))
	for _, want := range []string{"Subtask 3 carries 48% of the produced records, most of it from orders-0 and orders-4 (37%).",
		"“orders” starts at subtask 3.", "So its lag grows by about 42/s.",
		"Restored from a savepoint at p = 8 (p 4 → 8, the path a running job takes), they land on different subtasks",
		"open in planner at p = 8, restored from a savepoint"} {
		if !strings.Contains(first, want) {
			t.Errorf("the hot line reads %q, want %q in it", first, want)
		}
	}
	kinds := browsertest.Eval[[]string](t, b, `[...document.querySelectorAll('[data-testid="why-line"]')[0].querySelectorAll('.kind')].map(e => e.textContent)`)
	if want := []string{"observed", "computed", "observed", "estimated", "estimated", "computed"}; !slices.Equal(kinds, want) {
		t.Errorf("the hot line's provenance marks %v, want %v", kinds, want)
	}
	if calm := browsertest.Eval[bool](t, b, `document.querySelector('[data-testid="why"]').classList.contains("calm")`); calm {
		t.Error("a panel with hot lines is calm")
	}
	if href := browsertest.Eval[string](t, b, `document.querySelector('[data-testid="why-planner"]').getAttribute("href")`); !strings.Contains(href, "target=8") || !strings.Contains(href, "mode=restore") || !strings.Contains(href, "busy=") {
		t.Errorf("the hot line's planner link %s does not open the planner at p = 8 restored from a savepoint with the busy ratios", href)
	}
	screenshots(t, b, "why-orders-source", `[data-testid="why"]`)

	// A figure changes: its sentence updates in place.
	browsertest.Eval[bool](t, b, `(window.__skewscopeNoReload = true)`)
	slower := sbOrdersFig
	slower.in = []float64{61.4, 84.4, 45.4, 100}
	st.UpdateFlink(sbFlink(at.Add(12*time.Second), slower, sbEnrichFig))
	waitFor(t, "the hot line to say its lag grows by 62/s", 10*time.Second, func() bool {
		return strings.Contains(browsertest.Eval[string](t, b, whyLineJS("0")), "So its lag grows by about 62/s.")
	})
	if !browsertest.Eval[bool](t, b, `window.__skewscopeNoReload === true`) {
		t.Error("the page reloaded for a changed figure; it should update in place")
	}

	// The backpressure ends: the line goes, the page shows its new lines.
	calm := sbEnrichFig
	calm.busy = []float64{0.5, 0.6, 0.45, 0.52}
	freed := slower
	freed.bp = []float64{0, 0, 0, 0}
	st.UpdateFlink(sbFlink(at.Add(14*time.Second), freed, calm))
	waitFor(t, "the panel to show only the hot line once the backpressure ended", 10*time.Second, func() bool {
		return slices.Equal(browsertest.Eval[[]string](t, b, whyKindsJS), []string{"hot-partitions"})
	})

	// The keyed vertex: the imbalance is in the keys, and its busy
	// subtask holds the source up.
	st.UpdateFlink(sbFlink(at.Add(16*time.Second), sbOrdersFig, sbEnrichFig))
	open(sbOrdersJob, sbEnrich, "keyed-keys", "backpressuring")
	if txt := browsertest.Eval[string](t, b, whyLineJS("0")); !strings.Contains(txt, "the imbalance is in the keys, not in the range sizes") {
		t.Errorf("the keyed line reads %q", txt)
	}
	screenshots(t, b, "why-keyed", `[data-testid="why"]`)

	// Idle subtasks explained by the topics' start indexes.
	open(sbClickJob, sbClickSrc, "hot-partitions", "hot-partitions", "idle-subtasks")
	if txt := browsertest.Eval[string](t, b, whyLineJS("2")); !strings.Contains(txt, "“clicks” (2 partitions) and “pageviews” (2 partitions) both start at subtask 1") {
		t.Errorf("the idle line reads %q", txt)
	}
	screenshots(t, b, "why-idle", `[data-testid="why"]`)

	// Nothing skewed: said plainly, not as a warning.
	open(sbClickJob, sbSession, "balanced")
	if calm := browsertest.Eval[bool](t, b, `document.querySelector('[data-testid="why"]').classList.contains("calm")`); !calm {
		t.Error("the balanced panel is not calm")
	}
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll('[data-testid="why-line"].hot').length`); n != 0 {
		t.Errorf("%d lines of the balanced panel are marked hot", n)
	}
	screenshots(t, b, "why-calm", `[data-testid="why"]`)

	// "Plan a rescale" opens on the answer: the recommended target, the
	// recommendation and its verdict above the grids.
	if code := b.Navigate(t, base+"/jobs/"+sbOrdersJob+"/vertices/"+sbOrdersSrc+"/plan"); code != 200 {
		t.Fatalf("plan a rescale = %d", code)
	}
	b.Do(t, chromedp.WaitVisible(`[data-testid="plan-answer"]`))
	if above := browsertest.Eval[bool](t, b, `document.querySelector('[data-testid="plan-answer"]').getBoundingClientRect().bottom <= document.querySelector('[data-testid="grid-now"]').getBoundingClientRect().top`); !above {
		t.Error("the plan's answer is not above the grids")
	}
	if txt := browsertest.Eval[string](t, b, `document.querySelector('[data-testid="plan-answer"]').textContent`); !strings.Contains(txt, "Recommended: p = ") || !strings.Contains(txt, "the recommended parallelism") {
		t.Errorf("the plan's answer reads %q", txt)
	}
	if tgt := browsertest.Eval[string](t, b, `document.querySelector('[data-testid="in-target"]').value`); tgt == "4" {
		t.Error("plan a rescale opened at the current parallelism 4")
	}
	screenshots(t, b, "plan-rescale", `[data-testid="plan-answer"]`)
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
}
