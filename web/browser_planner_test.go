//go:build browser

// Browser tests of the planner (/plan): the page as Chromium renders it from
// a URL, the live form that re-renders the results as inputs change, bad
// input, hostile topic names, the embed view and its headers. Expected
// placements come from package assign, never from numbers written here.

package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/browsertest"
	"github.com/skewscope/skewscope/web"
)

// liveUpdateTimeout bounds how long a test waits for the planner's script
// to fetch and swap in new results after an input changes (it debounces
// for 250 ms, then makes one request to a local server).
const liveUpdateTimeout = 5 * time.Second

// startPages serves a ready web.Server on loopback for the test.
func startPages(t *testing.T) string {
	t.Helper()
	s, err := web.NewServer(web.Options{Version: "browser-test"})
	if err != nil {
		t.Fatalf("web.NewServer: %v", err)
	}
	s.SetReady(true)
	return browsertest.StartServer(t, s)
}

// tid is the CSS selector of the element with data-testid id.
func tid(id string) string { return `[data-testid="` + id + `"]` }

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// planQuery builds a /plan URL: topics as repeated topic=NAME:N, then the
// other parameters in pairs.
func planQuery(base string, topics []assign.Topic, kv ...string) string {
	q := url.Values{}
	for _, tp := range topics {
		q.Add("topic", tp.Name+":"+strconv.Itoa(tp.Partitions))
	}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return base + "/plan?" + q.Encode()
}

var ordersPayments = []assign.Topic{{Name: "orders", Partitions: 12}, {Name: "payments", Partitions: 6}}

// gridCell and gridRow are a partition grid as the page shows it.
type gridCell struct {
	Label string `json:"label"`
	Title string `json:"title"`
	Class string `json:"class"`
}

type gridRow struct {
	Subtask string     `json:"subtask"`
	Cells   []gridCell `json:"cells"`
}

// readGrid returns the rows of the grid with data-testid grid-<id>, or nil
// when the page has no such grid.
func readGrid(t testing.TB, b *browsertest.Browser, id string) []gridRow {
	t.Helper()
	return browsertest.Eval[[]gridRow](t, b, `(() => {
		const g = document.querySelector(`+jsString(tid("grid-"+id))+`);
		if (!g) return [];
		return [...g.querySelectorAll("tbody tr")].map(tr => ({
			subtask: tr.dataset.subtask || "",
			cells: [...tr.querySelectorAll("td.parts i")].map(i => ({label: i.textContent, title: i.title, class: i.className})),
		}));
	})()`)
}

// cellPartition reads "topic-partition" from the start of a cell's title,
// "orders-3 · subtask 0 · ...". A topic name with right-to-left characters
// is wrapped in Unicode isolates (U+2068 … U+2069) so it cannot reorder the
// rest of the title; they are not part of the name.
func cellPartition(c gridCell) (assign.TopicPartition, bool) {
	head, _, _ := strings.Cut(c.Title, " · ")
	head = strings.NewReplacer("\u2068", "", "\u2069", "").Replace(head)
	i := strings.LastIndexByte(head, '-')
	if i <= 0 {
		return assign.TopicPartition{}, false
	}
	n, err := strconv.Atoi(head[i+1:])
	if err != nil {
		return assign.TopicPartition{}, false
	}
	return assign.TopicPartition{Topic: head[:i], Partition: int32(n)}, true
}

// checkGridMatchesFlink fails the test unless the grid has p rows, subtask
// i in row i, and exactly the partitions that KafkaSplitOwner gives subtask
// i in that row, each labelled with its partition number.
func checkGridMatchesFlink(t *testing.T, b *browsertest.Browser, id string, topics []assign.Topic, p int) {
	t.Helper()
	rows := readGrid(t, b, id)
	if len(rows) != p {
		t.Errorf("grid-%s: want %d subtask rows (p = %d), the page shows %d rows: %+v", id, p, p, len(rows), rows)
		return
	}
	want := make([][]string, p)
	for _, tp := range assign.Partitions(topics) {
		owner, err := assign.KafkaSplitOwner(tp, p)
		if err != nil {
			t.Fatalf("KafkaSplitOwner(%v, %d): %v", tp, p, err)
		}
		want[owner] = append(want[owner], tp.SplitID())
	}
	for i, r := range rows {
		if r.Subtask != strconv.Itoa(i) {
			t.Errorf("grid-%s row %d: data-subtask=%q, want %d", id, i, r.Subtask, i)
		}
		var got []string
		for _, c := range r.Cells {
			tp, ok := cellPartition(c)
			if !ok {
				t.Errorf("grid-%s subtask %d: cell %+v has a title that does not start with TOPIC-PARTITION", id, i, c)
				continue
			}
			if c.Label != strconv.Itoa(int(tp.Partition)) {
				t.Errorf("grid-%s subtask %d: the cell of %s is labelled %q, want %q", id, i, tp.SplitID(), c.Label, strconv.Itoa(int(tp.Partition)))
			}
			got = append(got, tp.SplitID())
		}
		slices.Sort(got)
		slices.Sort(want[i])
		if !slices.Equal(got, want[i]) {
			t.Errorf("grid-%s subtask %d: KafkaSourceEnumerator.getSplitOwner (assign.KafkaSplitOwner, p = %d) puts %v there; the page shows %v",
				id, i, p, want[i], got)
		}
	}
}

// planState is what the planner page shows, in brief, for polling and for
// failure messages.
type planState struct {
	Href          string            `json:"href"`
	NowRows       int               `json:"nowRows"`
	TargetRows    int               `json:"targetRows"`
	Figures       string            `json:"figures"`
	TargetHeading string            `json:"targetHeading"`
	Errors        map[string]string `json:"errors"`
	// Marker is a flag the test sets on window; it is gone after a page
	// navigation.
	Marker bool `json:"marker"`
	Busy   bool `json:"busy"`
}

func (s planState) String() string {
	return fmt.Sprintf("href=%s now rows=%d target rows=%d target heading=%q figures=%q errors=%v marker=%v busy=%v",
		s.Href, s.NowRows, s.TargetRows, s.TargetHeading, s.Figures, s.Errors, s.Marker, s.Busy)
}

func readPlanState(t testing.TB, b *browsertest.Browser) planState {
	t.Helper()
	return browsertest.Eval[planState](t, b, `(() => {
		const rows = id => document.querySelectorAll('[data-testid="grid-' + id + '"] tbody tr').length;
		const errors = {};
		for (const el of document.querySelectorAll('[data-testid^="err-"]')) {
			const s = el.textContent.trim();
			if (s) errors[el.dataset.testid] = s;
		}
		const fig = document.querySelector('[data-testid="figures"]');
		const h = document.querySelector('[data-testid="grid-target"] h2');
		return {
			href: location.href, nowRows: rows("now"), targetRows: rows("target"),
			figures: fig ? fig.innerText.replace(/\s+/g, " ").trim() : "",
			targetHeading: h ? h.textContent.replace(/\s+/g, " ").trim() : "",
			errors, marker: window.__skewscopeTestMarker === true,
			busy: document.body.classList.contains("busy"),
		};
	})()`)
}

// setMarker flags the current document, so a test can tell that a later
// change happened without a navigation.
func setMarker(t testing.TB, b *browsertest.Browser) {
	t.Helper()
	browsertest.Eval[bool](t, b, `window.__skewscopeTestMarker = true`)
}

// waitPlan polls the page until ok accepts its state, for at most within,
// and returns that state. On timeout it fails the test with what it waited
// for and what the page showed last.
func waitPlan(t testing.TB, b *browsertest.Browser, what string, within time.Duration, ok func(planState) bool) planState {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		s := readPlanState(t, b)
		if ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s; the page shows: %v", within, what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// hrefParam returns the query parameter k of the page URL href.
func hrefParam(href, k string) string {
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	return u.Query().Get(k)
}

// typeInto replaces the value of a fresh input (one the user has not typed
// into yet) by typing text, as a user would.
func typeInto(t testing.TB, b *browsertest.Browser, testid, text string) {
	t.Helper()
	sel := chromedp.CSS(tid(testid))
	doWithin(t, b, "clearing "+testid, chromedp.Clear(sel))
	if v := browsertest.Eval[string](t, b, `document.querySelector(`+jsString(tid(testid))+`).value`); v != "" {
		t.Fatalf("chromedp.Clear left %q in %s, want it empty (was the input typed into before?)", v, testid)
	}
	doWithin(t, b, "typing into "+testid, chromedp.SendKeys(sel, text))
}

// actionTimeout bounds one chromedp action on an element, which otherwise
// waits for the element (to exist, to be visible) until the browser's own
// timeout.
const actionTimeout = 5 * time.Second

// doWithin runs actions on the tab, failing the test if they do not finish
// within actionTimeout.
func doWithin(t testing.TB, b *browsertest.Browser, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Ctx(), actionTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v (is the element on the page and visible?)", what, err)
	}
}

// retype erases n characters of an input with Backspace and types text.
func retype(t testing.TB, b *browsertest.Browser, testid string, n int, text string) {
	t.Helper()
	doWithin(t, b, "retyping "+testid, chromedp.SendKeys(chromedp.CSS(tid(testid)), strings.Repeat(kb.Backspace, n)+text))
}

// figureValues returns the text of .fig-value of each fig-* figure.
func figureValues(t testing.TB, b *browsertest.Browser) map[string]string {
	t.Helper()
	return browsertest.Eval[map[string]string](t, b, `(() => {
		const out = {};
		for (const f of document.querySelectorAll('[data-testid^="fig-"]')) {
			const v = f.querySelector(".fig-value");
			out[f.dataset.testid] = v ? v.textContent.replace(/\s+/g, " ").trim() : "";
		}
		return out;
	})()`)
}

// partitionCounts is how many partitions KafkaSplitOwner gives each of p
// subtasks.
func partitionCounts(t testing.TB, topics []assign.Topic, p int) []int {
	t.Helper()
	counts := make([]int, p)
	for _, tp := range assign.Partitions(topics) {
		o, err := assign.KafkaSplitOwner(tp, p)
		if err != nil {
			t.Fatal(err)
		}
		counts[o]++
	}
	return counts
}

func maxOverMean(counts []int) float64 {
	total, hi := 0, 0
	for _, c := range counts {
		total += c
		hi = max(hi, c)
	}
	return float64(hi) / (float64(total) / float64(len(counts)))
}

func idleCount(counts []int) int {
	n := 0
	for _, c := range counts {
		if c == 0 {
			n++
		}
	}
	return n
}

// checkFigures compares the headline figures with what assign computes for
// topics at now → target with Flink's default max parallelism.
func checkFigures(t *testing.T, b *browsertest.Browser, topics []assign.Topic, now, target int) map[string]string {
	t.Helper()
	figs := figureValues(t, b)
	for _, id := range []string{"fig-skew", "fig-maxmean", "fig-idle", "fig-keygroups"} {
		if strings.TrimSpace(figs[id]) == "" {
			t.Errorf("figure %s shows no value; figures on the page: %v", id, figs)
		}
	}
	if !regexp.MustCompile(`^\d+(\.\d+)?% → \d+(\.\d+)?%$`).MatchString(figs["fig-skew"]) {
		t.Errorf(`fig-skew shows %q, want "N%% → M%%"`, figs["fig-skew"])
	}
	nc, tc := partitionCounts(t, topics, now), partitionCounts(t, topics, target)
	if want := fmt.Sprintf("%.2f → %.2f", maxOverMean(nc), maxOverMean(tc)); figs["fig-maxmean"] != want {
		t.Errorf("fig-maxmean shows %q; partitions per subtask %v → %v give %q", figs["fig-maxmean"], nc, tc, want)
	}
	if want := fmt.Sprintf("%d → %d", idleCount(nc), idleCount(tc)); figs["fig-idle"] != want {
		t.Errorf("fig-idle shows %q; partitions per subtask %v → %v give %q", figs["fig-idle"], nc, tc, want)
	}
	maxP, err := assign.DefaultMaxParallelism(now)
	if err != nil {
		t.Fatal(err)
	}
	moved := 0
	for kg := range maxP {
		if assign.OperatorIndex(maxP, now, kg) != assign.OperatorIndex(maxP, target, kg) {
			moved++
		}
	}
	if want := fmt.Sprintf("%d / %d", moved, maxP); figs["fig-keygroups"] != want {
		t.Errorf("fig-keygroups shows %q; %d of %d key groups change operator index from p=%d to p=%d (OperatorIndex): want %q",
			figs["fig-keygroups"], moved, maxP, now, target, want)
	}
	return figs
}

// 1. The planner opened from a URL places every partition where Flink
// does, in both grids, and shows the headline figures.
func TestBrowserPlannerFromURL(t *testing.T) {
	base := startPages(t)
	b := browsertest.New(t)

	u := planQuery(base, ordersPayments, "parallelism", "4", "target", "6")
	if status := b.Navigate(t, u); status != http.StatusOK {
		t.Fatalf("GET %s answered %d, want 200; page shows: %v", u, status, readPlanState(t, b))
	}
	checkGridMatchesFlink(t, b, "now", ordersPayments, 4)
	checkGridMatchesFlink(t, b, "target", ordersPayments, 6)
	checkFigures(t, b, ordersPayments, 4, 6)
	if s := readPlanState(t, b); len(s.Errors) > 0 {
		t.Errorf("valid input shows field errors: %v", s.Errors)
	}
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
}

// 2. Typing a new target re-renders the results in place and the URL
// follows, without console errors or a navigation.
func TestBrowserPlannerLiveTargetChange(t *testing.T) {
	base := startPages(t)
	b := browsertest.New(t)

	b.Navigate(t, planQuery(base, ordersPayments, "parallelism", "4", "target", "6"))
	before := waitPlan(t, b, "the page to show the 6-row target grid", liveUpdateTimeout, func(s planState) bool { return s.TargetRows == 6 })
	setMarker(t, b)

	typeInto(t, b, "in-target", "8")
	after := waitPlan(t, b, "the target grid to have 8 rows, new figures and target=8 in the URL", liveUpdateTimeout, func(s planState) bool {
		return s.TargetRows == 8 && s.Figures != before.Figures && hrefParam(s.Href, "target") == "8" && !s.Busy
	})
	if !after.Marker {
		t.Errorf("the page navigated (the test's marker on window is gone); it should update in place: %v", after)
	}
	if after.NowRows != 4 {
		t.Errorf("after changing only the target, the now grid has %d rows, want 4", after.NowRows)
	}
	if hrefParam(after.Href, "parallelism") != "4" || len(mustQuery(t, after.Href)["topic"]) != 2 {
		t.Errorf("the URL after the update lost inputs: %s", after.Href)
	}
	if !strings.Contains(after.TargetHeading, "p = 8") {
		t.Errorf("target grid heading is %q, want it to say p = 8", after.TargetHeading)
	}
	checkGridMatchesFlink(t, b, "now", ordersPayments, 4)
	checkGridMatchesFlink(t, b, "target", ordersPayments, 8)
	checkFigures(t, b, ordersPayments, 4, 8)
	t.Logf("figures at target 6: %s", before.Figures)
	t.Logf("figures at target 8: %s", after.Figures)

	// The URL the script wrote is a working permalink: loading it shows
	// the same target grid.
	shown := readGrid(t, b, "target")
	b.Navigate(t, after.Href)
	if reloaded := readGrid(t, b, "target"); !gridsEqual(shown, reloaded) {
		t.Errorf("reloading %s shows another target grid than the live update did:\nlive:   %+v\nloaded: %+v", after.Href, shown, reloaded)
	}
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
}

func mustQuery(t testing.TB, href string) url.Values {
	t.Helper()
	u, err := url.Parse(href)
	if err != nil {
		t.Fatalf("page URL %q: %v", href, err)
	}
	return u.Query()
}

func gridsEqual(a, b []gridRow) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Subtask != b[i].Subtask || !slices.Equal(a[i].Cells, b[i].Cells) {
			return false
		}
	}
	return true
}

// 3. Restored from a savepoint, the target grid says so and still holds
// every partition exactly once.
func TestBrowserPlannerRestoreMode(t *testing.T) {
	base := startPages(t)
	b := browsertest.New(t)

	u := planQuery(base, ordersPayments, "parallelism", "4", "target", "6", "mode", "restore")
	if status := b.Navigate(t, u); status != http.StatusOK {
		t.Fatalf("GET %s answered %d, want 200; page shows: %v", u, status, readPlanState(t, b))
	}
	s := readPlanState(t, b)
	if !strings.Contains(strings.ToLower(s.TargetHeading), "restored") {
		t.Errorf("target grid heading is %q, want it to say restored", s.TargetHeading)
	}
	if mode := browsertest.Eval[string](t, b, `document.getElementById("f-mode").value`); mode != "restore" {
		t.Errorf("the Start select shows %q, want restore", mode)
	}
	rows := readGrid(t, b, "target")
	if len(rows) != 6 {
		t.Fatalf("target grid has %d rows, want 6: %+v", len(rows), rows)
	}
	seen := map[string][]string{} // partition → subtasks showing it
	for _, r := range rows {
		for _, c := range r.Cells {
			tp, ok := cellPartition(c)
			if !ok {
				t.Errorf("subtask %s: cell %+v has no TOPIC-PARTITION title", r.Subtask, c)
				continue
			}
			seen[tp.SplitID()] = append(seen[tp.SplitID()], r.Subtask)
		}
	}
	for _, tp := range assign.Partitions(ordersPayments) {
		if got := seen[tp.SplitID()]; len(got) != 1 {
			t.Errorf("%s appears in target rows %v, want exactly one row", tp.SplitID(), got)
		}
		delete(seen, tp.SplitID())
	}
	for id, subs := range seen {
		t.Errorf("target grid shows %s (subtasks %v), which the topics do not have", id, subs)
	}
	// The now grid is the running job's fresh layout.
	checkGridMatchesFlink(t, b, "now", ordersPayments, 4)
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
}

// expected400 drops the browser's "Failed to load resource ... 400" log
// entries, which a test that sends bad input on purpose causes, and returns
// the other problems.
func unexpectedProblems(ms []browsertest.Message) []browsertest.Message {
	var out []browsertest.Message
	for _, m := range ms {
		if m.Kind == "log/network" && strings.Contains(m.Text, "status of 400") {
			if u, err := url.Parse(m.URL); err == nil && u.Path == "/plan" {
				continue
			}
		}
		out = append(out, m)
	}
	return out
}

// badPlanInputs are bad planner URLs for topic orders:12: the field that is
// wrong, its input's data-testid, and the text its message must contain.
var badPlanInputs = []struct {
	name, field, input, mention string
	kv                          []string
}{
	{"parallelism 0", "parallelism", "in-parallelism", `"0"`, []string{"parallelism", "0", "target", "6"}},
	{"maxParallelism 40000", "maxParallelism", "in-maxp", "40000", []string{"parallelism", "4", "target", "6", "maxParallelism", "40000"}},
	{"malformed rates", "rates", "f-rates", `"x"`, []string{"parallelism", "4", "target", "6", "rates", "orders,x,1"}},
}

// 4. Bad input: an inline message on the field, status 400, never a 500;
// and in the live form, an inline message without a navigation.
func TestBrowserPlannerBadInput(t *testing.T) {
	base := startPages(t)
	b := browsertest.New(t)
	orders := []assign.Topic{{Name: "orders", Partitions: 12}}

	for _, c := range badPlanInputs {
		t.Run(c.name, func(t *testing.T) {
			u := planQuery(base, orders, c.kv...)
			status := b.Navigate(t, u)
			s := readPlanState(t, b)
			if status != http.StatusBadRequest {
				t.Errorf("GET %s answered %d, want 400 (page: %v)", u, status, s)
			}
			msg := s.Errors["err-"+c.field]
			if msg == "" {
				t.Errorf("GET %s: err-%s is empty, want an inline message; field messages on the page: %v", u, c.field, s.Errors)
			} else if !strings.Contains(msg, c.mention) {
				t.Errorf("err-%s says %q, want it to name the bad value %s", c.field, msg, c.mention)
			}
			if len(s.Errors) != 1 {
				t.Errorf("want a message on %s only, the page shows %v", c.field, s.Errors)
			}
			if s.TargetRows != 0 {
				t.Errorf("bad input still shows a target grid of %d rows", s.TargetRows)
			}
			if len(b.Dialogs()) > 0 {
				t.Errorf("dialogs: %v", b.Dialogs())
			}
		})
	}

	// Every case above through net/http too: the exact status, and no
	// 500 or error page.
	for _, c := range badPlanInputs {
		u := planQuery(base, orders, c.kv...)
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("net/http GET %s: %d, want 400", u, resp.StatusCode)
		}
	}

	t.Run("live form", func(t *testing.T) {
		b.Navigate(t, planQuery(base, orders, "parallelism", "4", "target", "6"))
		waitPlan(t, b, "the 6-row target grid", liveUpdateTimeout, func(s planState) bool { return s.TargetRows == 6 })
		setMarker(t, b)
		typeInto(t, b, "in-target", "0")
		s := waitPlan(t, b, "an inline message in err-target", liveUpdateTimeout, func(s planState) bool { return s.Errors["err-target"] != "" && !s.Busy })
		if !s.Marker {
			t.Errorf("typing an invalid target navigated the page (the test's marker on window is gone): %v", s)
		}
		if !strings.Contains(s.Errors["err-target"], `"0"`) {
			t.Errorf("err-target says %q, want it to name the bad value \"0\"", s.Errors["err-target"])
		}
		if inv := browsertest.Eval[string](t, b, `document.querySelector(`+jsString(tid("in-target"))+`).getAttribute("aria-invalid") || ""`); inv != "true" {
			t.Errorf("in-target has aria-invalid=%q after the error, want true", inv)
		}
		// Typing a valid value again clears the message and brings the
		// grid back, still without a navigation.
		retype(t, b, "in-target", 1, "6")
		s = waitPlan(t, b, "err-target to clear and the 6-row grid to return", liveUpdateTimeout, func(s planState) bool {
			return s.Errors["err-target"] == "" && s.TargetRows == 6 && !s.Busy
		})
		if !s.Marker {
			t.Errorf("the page navigated while correcting the input: %v", s)
		}
	})

	if ms := unexpectedProblems(b.ConsoleErrors()); len(ms) > 0 {
		t.Errorf("browser reported problems besides the expected 400 loads: %v", ms)
	}
	b.NoDialogs(t)
}

// hostileTopics are topic names that would run script if the page built
// HTML from them, plus a right-to-left override.
var hostileTopics = []assign.Topic{
	{Name: `<script>alert(1)</script>`, Partitions: 3},
	{Name: `"><img src=x onerror=alert(2)>`, Partitions: 2},
	{Name: "invoice\u202Egpj.exe", Partitions: 4},
}

// checkInert fails the test if the page made elements out of hostile text:
// a dialog, a script or img in the results, or a topic name that is not
// in the legend as plain text.
func checkInert(t *testing.T, b *browsertest.Browser, when string) {
	t.Helper()
	if d, ok := b.WaitDialog(500 * time.Millisecond); ok {
		t.Errorf("%s: a dialog opened, so a topic name ran as script: %v", when, d)
	}
	type counts struct {
		ResultsScripts int    `json:"resultsScripts"`
		ResultsImgs    int    `json:"resultsImgs"`
		DocScripts     int    `json:"docScripts"`
		DocImgs        int    `json:"docImgs"`
		Legend         string `json:"legend"`
		Topics         string `json:"topics"`
	}
	c := browsertest.Eval[counts](t, b, `(() => {
		const r = document.getElementById("plan-results");
		const legend = r && r.querySelector(".legend");
		return {
			resultsScripts: r ? r.querySelectorAll("script").length : -1,
			resultsImgs: r ? r.querySelectorAll("img").length : -1,
			docScripts: document.querySelectorAll("script").length,
			docImgs: document.querySelectorAll("img").length,
			legend: legend ? legend.textContent : "",
			topics: document.getElementById("f-topics").value,
		};
	})()`)
	if c.ResultsScripts != 0 || c.ResultsImgs != 0 {
		t.Errorf("%s: #plan-results holds %d script and %d img elements, want none", when, c.ResultsScripts, c.ResultsImgs)
	}
	if c.DocScripts != 1 || c.DocImgs != 0 {
		t.Errorf("%s: the document holds %d script elements (want 1, the page's own module) and %d img elements (want 0)", when, c.DocScripts, c.DocImgs)
	}
	for _, tp := range hostileTopics {
		if want := fmt.Sprintf("%s × %d", tp.Name, tp.Partitions); !strings.Contains(c.Legend, want) {
			t.Errorf("%s: the legend does not show %q literally; legend text: %q", when, want, c.Legend)
		}
		if !strings.Contains(c.Topics, tp.Name) {
			t.Errorf("%s: the topics box does not hold %q literally; it holds %q", when, tp.Name, c.Topics)
		}
	}
}

// 5. Hostile topic names stay text, on the server-rendered page and after
// the script re-renders the results.
func TestBrowserPlannerHostileTopicNames(t *testing.T) {
	base := startPages(t)
	b := browsertest.New(t)

	u := planQuery(base, hostileTopics, "parallelism", "2", "target", "3")
	if status := b.Navigate(t, u); status != http.StatusOK {
		t.Fatalf("GET %s answered %d, want 200 (page: %v)", u, status, readPlanState(t, b))
	}
	checkGridMatchesFlink(t, b, "target", hostileTopics, 3)
	checkInert(t, b, "server-rendered")

	typeInto(t, b, "in-target", "5")
	s := waitPlan(t, b, "the re-rendered 5-row target grid", liveUpdateTimeout, func(s planState) bool {
		return s.TargetRows == 5 && hrefParam(s.Href, "target") == "5" && !s.Busy
	})
	var names []string
	for _, tp := range mustQuery(t, s.Href)["topic"] {
		name, _, _ := strings.Cut(tp, ":")
		names = append(names, name)
	}
	for _, tp := range hostileTopics {
		if !slices.Contains(names, tp.Name) {
			t.Errorf("the URL after the update lost topic %q; its topics: %q", tp.Name, names)
		}
	}
	checkGridMatchesFlink(t, b, "target", hostileTopics, 5)
	checkInert(t, b, "after the live update")
	b.Screenshot(t, "hostile-names")
	b.NoDialogs(t)
	b.NoConsoleErrors(t)
}

// 6. The embed view has no navigation and no footer, and its permalink
// opens the same plan; pages send a CSP with a nonce and frame-ancestors.
func TestBrowserPlannerEmbed(t *testing.T) {
	base := startPages(t)
	b := browsertest.New(t)

	u := planQuery(base, ordersPayments, "parallelism", "4", "target", "6", "embed", "1")
	if status := b.Navigate(t, u); status != http.StatusOK {
		t.Fatalf("GET %s answered %d, want 200", u, status)
	}
	type chrome struct {
		Nav       int    `json:"nav"`
		Footer    int    `json:"footer"`
		Permalink string `json:"permalink"`
		Embed     bool   `json:"embed"`
	}
	readChrome := func() chrome {
		return browsertest.Eval[chrome](t, b, `(() => {
			const a = document.querySelector('[data-testid="permalink"]');
			return {
				nav: document.querySelectorAll('[data-testid="nav"]').length,
				footer: document.querySelectorAll("footer").length,
				permalink: a ? a.href : "",
				embed: document.body.classList.contains("embed"),
			};
		})()`)
	}
	c := readChrome()
	if c.Nav != 0 || c.Footer != 0 {
		t.Errorf("embed view shows %d nav and %d footer elements, want none", c.Nav, c.Footer)
	}
	if !c.Embed {
		t.Errorf("embed view: body lacks the embed class")
	}
	if c.Permalink == "" {
		t.Fatalf("embed view has no permalink (data-testid permalink)")
	}
	if vis := browsertest.Eval[bool](t, b, `(() => { const f = document.getElementById("plan-form"); return !!f && f.getClientRects().length > 0; })()`); vis {
		t.Errorf("embed view shows the input form; it should show only the results")
	}
	embedGrid := readGrid(t, b, "target")
	if len(embedGrid) != 6 {
		t.Errorf("embed view: target grid has %d rows, want 6", len(embedGrid))
	}

	// The form is hidden in the embed view, so the permalink is how a
	// reader gets to the full planner: it drops embed=1 and keeps the rest.
	pq := mustQuery(t, c.Permalink)
	if pq.Has("embed") {
		t.Errorf("the embed view's permalink %s keeps embed; it should open the full page", c.Permalink)
	}
	for _, k := range []string{"parallelism", "target"} {
		if pq.Get(k) != mustQuery(t, u).Get(k) {
			t.Errorf("the embed view's permalink %s has %s=%q, want %q", c.Permalink, k, pq.Get(k), mustQuery(t, u).Get(k))
		}
	}

	// The permalink opens the same plan, as a full page.
	if status := b.Navigate(t, c.Permalink); status != http.StatusOK {
		t.Fatalf("the permalink %s answered %d, want 200", c.Permalink, status)
	}
	if full := readGrid(t, b, "target"); !gridsEqual(full, embedGrid) {
		t.Errorf("the permalink %s shows another target grid than the embed view:\nembed:     %+v\npermalink: %+v", c.Permalink, embedGrid, full)
	}
	if c := readChrome(); c.Nav != 1 || c.Footer != 1 || c.Embed {
		t.Errorf("the permalink %s opens a page with %d nav and %d footer elements (embed class %v), want the full page with one of each", c.Permalink, c.Nav, c.Footer, c.Embed)
	}
	checkGridMatchesFlink(t, b, "target", ordersPayments, 6)
	b.NoConsoleErrors(t)
	b.NoDialogs(t)

	t.Run("CSP header", func(t *testing.T) {
		nonceRE := regexp.MustCompile(`(?:^|;)\s*script-src\s[^;]*'nonce-([A-Za-z0-9+/_=-]{16,})'`)
		faRE := regexp.MustCompile(`(?:^|;)\s*frame-ancestors\s+'self'\s*(?:;|$)`)
		nonces := map[string]string{}
		for _, path := range []string{
			"/plan?" + mustQuery(t, u).Encode(),
			"/plan?topic=orders:12&parallelism=4&target=6",
			"/plan",
			"/keys?keys=a",
			"/",
		} {
			resp, err := http.Get(base + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			csp := resp.Header.Get("Content-Security-Policy")
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s: %d, want 200", path, resp.StatusCode)
			}
			if !faRE.MatchString(csp) {
				t.Errorf("GET %s: Content-Security-Policy %q lacks frame-ancestors 'self'", path, csp)
			}
			m := nonceRE.FindStringSubmatch(csp)
			if m == nil {
				t.Errorf("GET %s: Content-Security-Policy %q has no nonce in script-src", path, csp)
				continue
			}
			if prev, dup := nonces[m[1]]; dup {
				t.Errorf("GET %s and GET %s got the same nonce %q; a nonce must be fresh per response", prev, path, m[1])
			}
			nonces[m[1]] = path
		}
	})
}

// 8. A screenshot of a planner with hot partitions, for a person to look
// at; the test checks only that the page rendered what it was given.
func TestBrowserPlannerScreenshot(t *testing.T) {
	base := startPages(t)
	b := browsertest.New(t)

	rates := []string{"orders,0,920", "orders,1,710"}
	for p := 2; p < 12; p++ {
		rates = append(rates, fmt.Sprintf("orders,%d,%d", p, 90+13*p))
	}
	for p := range 6 {
		rates = append(rates, fmt.Sprintf("payments,%d,%d", p, 40+7*p))
	}
	u := planQuery(base, ordersPayments, "parallelism", "4", "target", "6", "rates", strings.Join(rates, "\n"))
	if status := b.Navigate(t, u); status != http.StatusOK {
		t.Fatalf("GET %s answered %d, want 200 (page: %v)", u, status, readPlanState(t, b))
	}
	checkGridMatchesFlink(t, b, "target", ordersPayments, 6)
	why := browsertest.Eval[string](t, b, `(document.querySelector('[data-testid="why"]') || {textContent: ""}).textContent`)
	if !strings.Contains(why, "orders-0") {
		t.Errorf(`the "why" section does not name the hottest partition orders-0: %q`, why)
	}
	if kind := browsertest.Eval[string](t, b, `document.querySelector('[data-testid="fig-skew"] .kind').textContent`); kind != "given" {
		t.Errorf("fig-skew is marked %q, want given (it comes from the given rates)", kind)
	}
	if path := b.Screenshot(t, "planner-rates"); path == "" {
		t.Errorf("the screenshot was not saved")
	}
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
}

// An input whose value is wrong must say so to assistive technology:
// aria-invalid="true". WAI-ARIA treats an empty aria-invalid as false, so a
// bare attribute does not announce anything. The live form sets "true";
// the server-rendered page must too.
func TestBrowserPlannerAriaInvalid(t *testing.T) {
	base := startPages(t)
	b := browsertest.New(t)
	orders := []assign.Topic{{Name: "orders", Partitions: 12}}
	for _, c := range badPlanInputs {
		u := planQuery(base, orders, c.kv...)
		b.Navigate(t, u)
		sel := tid(c.input)
		if c.input == "f-rates" {
			sel = "#f-rates"
		}
		type attr struct {
			Has   bool   `json:"has"`
			Value string `json:"value"`
		}
		a := browsertest.Eval[attr](t, b, `(() => { const el = document.querySelector(`+jsString(sel)+`); return {has: !!el && el.hasAttribute("aria-invalid"), value: el ? el.getAttribute("aria-invalid") || "" : ""}; })()`)
		if !a.Has || a.Value != "true" {
			t.Errorf("%s: GET %s renders %s with aria-invalid present=%v value=%q; want aria-invalid=\"true\" (an empty value means false in WAI-ARIA, so screen readers do not announce the error)",
				c.name, u, sel, a.Has, a.Value)
		}
	}
}
