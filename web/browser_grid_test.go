//go:build browser

package web

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/browsertest"
	"github.com/skewscope/skewscope/live"
)

// TestBrowserSortedFilteredGrid: a source of 60 subtasks sorted by lag and
// showing orders' partitions of subtasks 10–40 shows those rows in that
// order, keeps them while updates are applied (the page does not fetch
// itself again), and its controls fit at 1400 px and at a phone's 390 px,
// in the light and the dark scheme.
func TestBrowserSortedFilteredGrid(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := largeSourceStore(t, 60, at)
	base := serveLive(t, Options{Live: st, Now: func() time.Time { return at.Add(20 * time.Second) }, LiveInterval: 50 * time.Millisecond})
	vv, err := st.State().Vertex(tJob, tSource, live.VertexQuery{Color: "lag", Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	grid := gridQuery{Sort: "lag", Topic: "orders", Ranged: true, From: 10, To: 40}
	var want []string
	for _, r := range gridRows(vv.Subtasks, grid) {
		want = append(want, fmt.Sprint("subtask-", r.Subtask))
	}
	const rowIDs = `[...document.querySelectorAll('tr[data-testid="subtask-row"]')].map(r => r.id)`
	b := browsertest.New(t)
	for _, width := range []int64{1400, 390} {
		b.Do(t, chromedp.EmulateViewport(width, 900), colorScheme("light"))
		if code := b.Navigate(t, base+"/jobs/"+tJob+"/vertices/"+tSource+"?sort=lag&topic=orders&subtasks=10-40"); code != 200 {
			t.Fatalf("sorted page = %d", code)
		}
		b.Do(t, chromedp.WaitVisible(`[data-testid="grid-controls"]`))
		// live.js swaps in a new rendering when an update does not fit
		// the page: the marked root must stay.
		browsertest.Eval[bool](t, b, `(document.querySelector("[data-live-topic]").dataset.mark = "rendered", true)`)
		for range 3 { // pushes
			st.UpdateKafka(&kafka.Snapshot{Cluster: "other", CollectedAt: at})
			time.Sleep(200 * time.Millisecond)
		}
		if !browsertest.Eval[bool](t, b, `document.querySelector("[data-live-topic]").dataset.mark === "rendered"`) {
			t.Errorf("%d px: the page fetched itself again while updates came", width)
		}
		if diff := cmp.Diff(want, browsertest.Eval[[]string](t, b, rowIDs)); diff != "" {
			t.Errorf("%d px: rows (-want +got):\n%s", width, diff)
		}
		if txt := b.Text(t, `[data-testid="grid-order"]`); !strings.HasPrefix(txt, "sorted by lag at ") || !strings.HasSuffix(txt, "re-sort") {
			t.Errorf("%d px: order reads %q", width, txt)
		}
		if over := browsertest.Eval[bool](t, b, `(() => { const f = document.querySelector('[data-testid="grid-controls"]'); return f.scrollWidth > f.clientWidth + 1 || f.getBoundingClientRect().right > innerWidth + 1; })()`); over {
			t.Errorf("%d px: the grid's controls overflow", width)
		}
		browsertest.Eval[bool](t, b, `(scrollTo(0, 0), true)`)
		name := fmt.Sprint("sorted-filtered-", width, "px")
		b.Screenshot(t, name+"-light")
		b.Do(t, colorScheme("dark"))
		b.Screenshot(t, name+"-dark")
	}
	// The busiest link highlights its row and scrolls to it.
	b.Do(t, colorScheme("light"), chromedp.EmulateViewport(1400, 900))
	b.Do(t, chromedp.Click(`[data-testid="grid-busiest"]`))
	b.Do(t, chromedp.WaitVisible(`tr.hl[data-testid="subtask-row"]`))
	if loc := browsertest.Eval[string](t, b, `location.search + location.hash`); !strings.Contains(loc, "highlight=subtask%3A") || !strings.Contains(loc, "#subtask-") {
		t.Errorf("busiest link went to %q", loc)
	}
	b.NoDialogs(t)
}
