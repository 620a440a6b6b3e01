//go:build browser

// Browser tests of the dashboard binary running its sandbox: the live pages
// as headless Chromium shows them, updated over the websocket. They need
// Chromium (scripts/ensure-chromium.sh installs it) and run with
// scripts/browser-tests.sh or `go test -tags browser -run Browser ./cmd/dashboard/`.

package main

import (
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/skewscope/skewscope/internal/browsertest"
)

// rowLagsJS returns the texts of the subtask rows' lag cells, queried anew
// each time: a layout change swaps the table.
const rowLagsJS = `Array.from(document.querySelectorAll("[data-testid=subtask-row] [data-testid=row-lag]")).map(e => e.textContent)`

// checkLiveVertexPage checks a vertex page that the tab shows: subtask hot
// is highlighted, live.js gets updates over the websocket (the live state
// says live, the update time moves) and a row's lag text changes in place,
// without a reload.
func checkLiveVertexPage(t *testing.T, b *browsertest.Browser, hot int) {
	t.Helper()
	hlJS := `Array.from(document.querySelectorAll("[data-testid=subtask-row].hl")).map(r => r.dataset.subtask)`
	if got := browsertest.Eval[[]string](t, b, hlJS); !slices.Equal(got, []string{strconv.Itoa(hot)}) {
		t.Errorf("highlighted rows (tr.hl) = %q, want only subtask %d", got, hot)
	}

	// A mark that a reload or navigation would lose.
	browsertest.Eval[bool](t, b, `(window.__skewscopeNoReload = true)`)
	initialLags := browsertest.Eval[[]string](t, b, rowLagsJS)
	initialAt := browsertest.Eval[string](t, b, `document.querySelector(":is([data-testid=livebar], [data-testid=embed-head]) [data-age]").dataset.at || ""`)
	if len(initialLags) == 0 {
		t.Fatalf("the page has no [data-testid=row-lag] cells")
	}

	var state, at string
	var lags []string
	changed := waitUntil(t, 20*time.Second, 250*time.Millisecond, func() bool {
		state = browsertest.Eval[string](t, b, `(document.querySelector(":is([data-testid=livebar], [data-testid=embed-head]) [data-live-state]") || {}).textContent || ""`)
		at = browsertest.Eval[string](t, b, `(document.querySelector(":is([data-testid=livebar], [data-testid=embed-head]) [data-age]") || {dataset: {}}).dataset.at || ""`)
		lags = browsertest.Eval[[]string](t, b, rowLagsJS)
		return state == "live" && at != initialAt && !slices.Equal(lags, initialLags)
	})
	if !changed {
		t.Errorf("within 20s: live state %q (want live), update time %q (was %q), row lags %q (were %q, want a change)", state, at, initialAt, lags, initialLags)
	}
	if !browsertest.Eval[bool](t, b, `window.__skewscopeNoReload === true`) {
		t.Errorf("the page reloaded while it was live; it should update in place")
	}
	// The sparklines drew, at one scale per column, under the window the
	// updates write.
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll("[data-testid=subtask-row] .spark canvas").length`); n == 0 {
		t.Errorf("after live updates, no sparkline is drawn")
	}
	if w := browsertest.Eval[string](t, b, `(document.querySelector("[data-testid=spark-window]") || {}).textContent || ""`); !regexp.MustCompile(`^last \d+ (s|min)$`).MatchString(w) {
		t.Errorf("after live updates, the sparklines' window = %q, want last N s or last N min", w)
	}
	for _, col := range []struct{ name, sel string }{{"lag", ".spark:not(.rate):not(.wm)"}, {"event-time lag", ".spark.wm"}} {
		maxJS := `Array.from(new Set(Array.from(document.querySelectorAll("[data-testid=subtask-row] ` + col.sel + `")).map(e => e.dataset.sparkMax)))`
		if got := browsertest.Eval[[]string](t, b, maxJS); len(got) != 1 {
			t.Errorf("the %s sparklines' scales (data-spark-max) = %q, want one for the column", col.name, got)
		}
	}
	if got := browsertest.Eval[[]string](t, b, hlJS); !slices.Equal(got, []string{strconv.Itoa(hot)}) {
		t.Errorf("after live updates, highlighted rows = %q, want only subtask %d", got, hot)
	}
}

func TestBrowserSandboxVertexLive(t *testing.T) {
	bin := buildDashboard(t)
	d := startDashboard(t, bin, "--listen", "127.0.0.1:0")
	jobs := sandboxJobs(t, d.Base)
	orders, ok := jobs["orders-enrichment"]
	if !ok {
		t.Fatalf("the sandbox has no orders-enrichment job: %+v", jobs)
	}
	vertexID, _, _ := sourceVertex(t, d.Base, orders.ID)
	path := "/jobs/" + orders.ID + "/vertices/" + vertexID

	// The hot subtask, as the JSON twin tells it.
	var v apiVertex
	if !waitUntil(t, 20*time.Second, 500*time.Millisecond, func() bool {
		v = apiVertex{}
		status, _ := getJSON(t, d.Base, "/api/v1"+path, &v)
		return status == http.StatusOK && lagsKnown(v)
	}) {
		t.Fatalf("GET /api/v1%s had no lag and busy for every subtask within 20s: %+v", path, v)
	}
	hot, hotLag, maxLag := hotSubtask(v)
	if hotLag != maxLag {
		t.Errorf("busiest subtask %d has lag %d, the largest lag is %d", hot, hotLag, maxLag)
	}
	highlight := "?highlight=subtask:" + strconv.Itoa(hot)

	b := browsertest.New(t, browsertest.WithTimeout(150*time.Second))

	if status := b.Navigate(t, d.Base+path+highlight); status != http.StatusOK {
		t.Fatalf("GET %s in the browser = %d, want 200", path+highlight, status)
	}
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll("nav").length`); n == 0 {
		t.Errorf("the full vertex page has no nav")
	}
	checkLiveVertexPage(t, b, hot)
	b.Screenshot(t, "vertex")
	b.NoConsoleErrors(t)
	b.NoDialogs(t)

	// The embed view: no navigation, the same live updates.
	b.ResetConsole()
	embed := path + highlight + "&embed=1"
	if status := b.Navigate(t, d.Base+embed); status != http.StatusOK {
		t.Fatalf("GET %s in the browser = %d, want 200", embed, status)
	}
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll("nav, [data-testid=nav]").length`); n != 0 {
		t.Errorf("the embed view %s has %d nav elements, want none", embed, n)
	}
	if !browsertest.Eval[bool](t, b, `document.body.classList.contains("embed")`) {
		t.Errorf("the embed view's body has no class embed")
	}
	checkLiveVertexPage(t, b, hot)
	b.Screenshot(t, "vertex-embed")
	b.NoConsoleErrors(t)
	b.NoDialogs(t)

	if err := d.stop(t, 15*time.Second); err != nil {
		t.Errorf("dashboard exit after SIGTERM with a browser connected = %v, want code 0", err)
	}
}
