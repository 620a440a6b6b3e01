package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/sandbox"
)

// TestSandboxWhyTargetPartsTheHotPartitions follows the "why is it hot?"
// panel of the sandbox's orders source as an on-call engineer would: it
// opens the panel's planner link, checks that the planner opens on the
// restore from a savepoint the job will take, applies the planner's target
// through the sandbox's restore (stop with a savepoint, start from it) and
// checks, from the restored job's observed owners, that the partitions the
// panel named land on different subtasks. When the panel says no restore
// target exists (the hottest orders partition alone needs more than a
// subtask's capacity, which the sandbox's drifting rates make likely), it
// must say so and offer none.
//
// The waits are on conditions; the deadlines are hang guards.
func TestSandboxWhyTargetPartsTheHotPartitions(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the sandbox for a while")
	}
	feed := startSandboxFeed(t, sandbox.Options{Seed: 21}, nil)
	feed.pollInBackground(t)
	st := feed.st
	ts := newLiveServer(t, st, feed.sb)
	orders := feed.job(t, "orders-enrichment")
	page := ts.URL + "/jobs/" + orders.ID + "/vertices/" + orders.SourceVertexID

	// The panel's hot line, once every figure is known, it names
	// partitions a rescale could part and the capacity judges the load
	// (the first polls see idle subtasks, whose capacity is unknown).
	var line *goquery.Selection
	guard := time.Now().Add(4 * time.Minute)
	for line == nil {
		if time.Now().After(guard) {
			t.Fatalf("no hot line with a rescale judgement on %s within 4 minutes; sandbox stats %+v", page, feed.sb.Stats())
		}
		if vv, err := st.State().Vertex(orders.ID, orders.SourceVertexID, live.VertexQuery{Highlight: -1}); err == nil && figuresKnown(vv) {
			doc := getDoc(t, page, 200)
			doc.Find(`[data-testid=why-line][data-kind=hot-partitions]`).EachWithBreak(func(_ int, s *goquery.Selection) bool {
				judged := !strings.Contains(s.Text(), "is not judged")
				if judged && (strings.Contains(s.Text(), "Restored from a savepoint at p =") || strings.Contains(s.Text(), "No parallelism carries") || strings.Contains(s.Text(), "No restore")) {
					line = s
					return false
				}
				return true
			})
		}
		if line == nil {
			time.Sleep(200 * time.Millisecond)
		}
	}
	text := line.Text()
	link := line.Find("[data-testid=why-planner]")
	if !strings.Contains(text, "Restored from a savepoint at p =") {
		// No restore target: the panel says so and what would help, and
		// its link opens no target.
		t.Logf("the panel offers no restore target: %s", text)
		if strings.Contains(link.Text(), "at p =") || !strings.Contains(text, "would") {
			t.Errorf("the panel says no restore target exists but links %q: %s", link.Text(), text)
		}
		return
	}
	var named []string
	for _, w := range strings.Fields(text) {
		w = strings.Trim(w, "\u2068\u2069,.()")
		if strings.HasPrefix(w, "orders-") && !contains(named, w) {
			named = append(named, w)
		}
	}
	if len(named) < 2 {
		t.Fatalf("the hot line names %v: %s", named, text)
	}
	href, _ := link.Attr("href")
	u, err := url.Parse(href)
	if err != nil || u.Path != "/plan" {
		t.Fatalf("the panel's planner link %q", href)
	}
	q := u.Query()
	if q.Get("mode") != "restore" || q.Get("busy") == "" || q.Get("rates") == "" || q.Get("observed") == "" {
		t.Errorf("the panel's planner link does not ask the planner the panel's question (restore, rates, busy ratios, records/s): %s", href)
	}
	pdoc := getDoc(t, ts.URL+href, 200)
	target, _ := strconv.Atoi(pdoc.Find("[data-testid=in-target]").AttrOr("value", ""))
	if !strings.Contains(link.Text(), "at p = "+strconv.Itoa(target)+",") || target <= orders.Parallelism {
		t.Fatalf("the planner opens at p = %d, the panel's link says %q", target, link.Text())
	}
	t.Logf("the panel: %s; the planner: %s", text, pdoc.Find("[data-testid=target-verdict]").Text())

	resp, err := http.PostForm(ts.URL+"/sandbox/restore", url.Values{"job": {orders.Name}, "parallelism": {strconv.Itoa(target)}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	restored := feed.job(t, "orders-enrichment")
	if restored.ID == orders.ID || restored.Parallelism != target {
		t.Fatalf("after the restore: %+v, want a new job at p = %d", restored, target)
	}
	// The observed owners of the named partitions, once Flink's metric ids
	// determine them for the restored job.
	owners := map[string]int{}
	guard = time.Now().Add(2 * time.Minute)
	for len(owners) < len(named) {
		if time.Now().After(guard) {
			t.Fatalf("the restored job's owners of %v not determined within 2 minutes: %v", named, owners)
		}
		time.Sleep(200 * time.Millisecond)
		vv, err := st.State().Vertex(restored.ID, restored.SourceVertexID, live.VertexQuery{Highlight: -1})
		if err != nil || len(vv.Subtasks) != target {
			continue
		}
		clear(owners)
		for _, r := range vv.Subtasks {
			for _, c := range r.Partitions {
				if name := c.Topic + "-" + strconv.Itoa(int(c.Partition)); contains(named, name) && !c.OwnerUndetermined {
					owners[name] = r.Subtask
				}
			}
		}
	}
	seen := map[int]string{}
	for _, name := range named {
		if other, ok := seen[owners[name]]; ok {
			t.Errorf("restored at p = %d as the panel proposed, %s and %s are both on subtask %d: %v", target, other, name, owners[name], owners)
		}
		seen[owners[name]] = name
	}
	t.Logf("restored at p = %d: %v", target, owners)
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
