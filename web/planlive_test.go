package web

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/plan"
)

// TestPlanRescaleFromLivePage follows "plan a rescale" from a source and a
// keyed page: the planner opens with the job's observed rates, busy ratios
// and records/s filled in, says when they were observed, and sizes by the
// capacity they imply (records/s over busy: 10·(i+1) / 0.2·(i+1) = 50 per
// subtask). Every partition produces 200 records/s, four times that, so no
// parallelism can carry the load and the page says which partition.
func TestPlanRescaleFromLivePage(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := liveStore(t, at)
	ts := newLiveServer(t, st, nil)
	for _, vertex := range []string{tSource, tKeyed} {
		doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+vertex, 200)
		link, ok := doc.Find("[data-testid=plan-rescale]").Attr("href")
		if !ok || link != "/jobs/"+tJob+"/vertices/"+vertex+"/plan" {
			t.Fatalf("vertex %s: plan-rescale link %q", vertex, link)
		}
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(ts.URL + link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("GET %s = %d, want 303 to the planner", link, resp.StatusCode)
		}
		u, err := url.Parse(resp.Header.Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		if u.Path != "/plan" || q.Get("busy") != "0.2,0.4,0.6,0.8" || q.Get("observed") != "10,20,30,40" ||
			q.Get("parallelism") != "4" || q.Get("maxParallelism") != "128" || !strings.Contains(q.Get("rates"), "orders,0,200\n") || q.Get("job") != "orders <enrichment>" {
			t.Fatalf("vertex %s: planner URL %s", vertex, u)
		}
		// The keyed vertex runs at p = 3, not the source's 4: its figures are
		// not given as if it ran at 4.
		if q.Has("keyedIn") || q.Has("state") {
			t.Errorf("vertex %s: the keyed vertex at p=3 is given per subtask of p=4: %s", vertex, u.RawQuery)
		}
		pdoc := getDoc(t, ts.URL+u.String(), 200)
		if note := pdoc.Find("[data-testid=live-note]").Text(); !strings.Contains(note, "Filled in from the live job orders <enrichment> as observed at 12:00:10 UTC") {
			t.Errorf("vertex %s: live note %q", vertex, note)
		}
		if c := pdoc.Find("[data-testid=capacity-line]").First().Text(); !strings.Contains(c, "about 50 records/s at 100% busy: the median over 4 subtasks") {
			t.Errorf("vertex %s: capacity line %q", vertex, c)
		}
		if s := pdoc.Find("[data-testid=sizing-summary]").Text(); !strings.Contains(s, `No parallelism is recommended: partition "orders-0" alone needs 400% of a source subtask`) {
			t.Errorf("vertex %s: sizing summary %q", vertex, s)
		}
		if pdoc.Find("[data-testid=capacity-inputs][open]").Length() != 1 {
			t.Errorf("vertex %s: the capacity inputs are folded although filled in", vertex)
		}
	}
	// A vertex id that is not in the job: 404.
	getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/cccccccccccccccccccccccccccccccc/plan", 404)
}

// TestPlanRescaleOpensOnTheAnswer: "plan a rescale" opens the planner at
// the recommended parallelism, not at the current one, with the
// recommendation and the verdict on the target shown before the grids;
// when no parallelism carries the load it opens at the best candidate and
// says why none is recommended first.
func TestPlanRescaleOpensOnTheAnswer(t *testing.T) {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	open := func(t *testing.T, base, job, vertex string) (*url.URL, planResponse) {
		t.Helper()
		resp, err := client.Get(base + "/jobs/" + job + "/vertices/" + vertex + "/plan")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		u, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("plan a rescale: %d %q", resp.StatusCode, resp.Header.Get("Location"))
		}
		var pr planResponse
		getJSONInto(t, base+"/api/v1/plan?"+u.RawQuery, &pr)
		return u, pr
	}
	// order is the page's answer, grids and candidates in document order.
	order := func(t *testing.T, base string, u *url.URL) []string {
		t.Helper()
		doc := getDoc(t, base+u.String(), 200)
		var got []string
		doc.Find("[data-testid=plan-answer], [data-testid=grid-now], [data-testid=grid-target], [data-testid=candidates]").Each(func(_ int, s *goquery.Selection) {
			got = append(got, s.AttrOr("data-testid", ""))
		})
		if doc.Find("[data-testid=plan-answer] [data-testid=sizing-summary]").Length() != 1 || doc.Find("[data-testid=sizing-summary]").Length() != 1 {
			t.Errorf("the recommendation is not (only) in the answer block")
		}
		if want := []string{"plan-answer", "grid-now", "grid-target", "candidates"}; !slices.Equal(got, want) {
			t.Errorf("planner blocks in order %v, want %v", got, want)
		}
		return append(got, doc.Find("[data-testid=sizing-summary]").Text(), doc.Find("[data-testid=target-verdict]").Text(), doc.Find("[data-testid=in-target]").AttrOr("value", ""))
	}

	t.Run("recommended", func(t *testing.T) {
		at := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
		st, _ := sandboxStore(t, at)
		ts := newLiveServer(t, st, nil)
		u, pr := open(t, ts.URL, sbOrdersJob, sbOrdersSrc)
		rec := pr.Sizing.Recommended
		if rec == 0 || rec == 4 || u.Query().Get("target") != strconv.Itoa(rec) || u.Query().Get("mode") != "restore" {
			t.Fatalf("plan a rescale opens at %s (mode %s), the plan recommends p = %d: %s", u.Query().Get("target"), u.Query().Get("mode"), rec, pr.Summary)
		}
		got := order(t, ts.URL, u)
		summary, verdict, target := got[4], got[5], got[6]
		if !strings.Contains(summary, "Recommended: p = "+strconv.Itoa(rec)) || target != strconv.Itoa(rec) ||
			!strings.Contains(verdict, "Shown: p = 4 → "+strconv.Itoa(rec)+" (restored from a savepoint taken at p = 4), the recommended parallelism: busiest") {
			t.Errorf("answer %q / %q at target %s, want p = %d recommended and shown", summary, verdict, target, rec)
		}
	})
	t.Run("none carries the load", func(t *testing.T) {
		at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		ts := newLiveServer(t, liveStore(t, at), nil)
		u, pr := open(t, ts.URL, tJob, tSource)
		best := 0
		for _, c := range pr.Sizing.Candidates {
			if slices.Contains(c.Roles, "best") {
				best = c.Parallelism
			}
		}
		if pr.Sizing.Recommended != 0 || best == 0 || u.Query().Get("target") != strconv.Itoa(best) {
			t.Fatalf("plan a rescale opens at %s; recommended %d, best %d", u.Query().Get("target"), pr.Sizing.Recommended, best)
		}
		got := order(t, ts.URL, u)
		if summary, verdict := got[4], got[5]; !strings.Contains(summary, "No parallelism is recommended: partition") ||
			!strings.Contains(verdict, "the lowest busiest subtask any parallelism reaches: cannot carry the load") {
			t.Errorf("answer %q / %q, want the reason first, then the best candidate's verdict", summary, verdict)
		}
	})
	// A target the link names is kept; a bad one is a 400 naming it.
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ts := newLiveServer(t, liveStore(t, at), nil)
	resp, err := client.Get(ts.URL + "/jobs/" + tJob + "/vertices/" + tSource + "/plan?target=7")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if u, _ := url.Parse(resp.Header.Get("Location")); u == nil || u.Query().Get("target") != "7" {
		t.Errorf("?target=7 redirects to %q", resp.Header.Get("Location"))
	}
	getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource+"/plan?target=seven", 400)
}

// "Plan a rescale" carries the source's observed backlog per partition and
// its topics' retention, so the planner's candidates say when their
// backlog clears and the autoscaler's catch-up term reads it.
func TestPlanRescaleCarriesBacklogAndRetention(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ts := newLiveServer(t, retentionStore(t, at, 120000), nil)
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(ts.URL + "/jobs/" + tJob + "/vertices/" + tSource + "/plan")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	u, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	// At 90 s partition 1's reader is at 4500 of 9000; the others keep up.
	if !strings.Contains(q.Get("backlog"), "orders,1,4500\n") || !strings.Contains(q.Get("backlog"), "orders,0,0\n") || q.Get("retention") != "orders,120000\n" {
		t.Fatalf("planner URL backlog %q retention %q, want orders-1 at 4500 and orders at 120000 ms", q.Get("backlog"), q.Get("retention"))
	}
	pdoc := getDoc(t, ts.URL+u.String(), 200)
	if v := pdoc.Find("[data-testid=in-backlog]").Text(); !strings.Contains(v, "orders,1,4500") {
		t.Errorf("planner backlog input %q, want the observed backlog", v)
	}
}

// TestLivePlanRequestReadsBack: the request "plan a rescale" and the why
// panel's links build from a live source (and a keyed vertex at its
// parallelism) reads back from its own query unchanged, at the current
// parallelism, at a target and as a fresh start, with its figures rounded
// as the links carry them.
func TestLivePlanRequestReadsBack(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := liveStore(t, at)
	src, err := st.State().Vertex(tJob, tSource, live.VertexQuery{})
	if err != nil {
		t.Fatal(err)
	}
	keyed, err := st.State().Vertex(tJob, tKeyed, live.VertexQuery{})
	if err != nil {
		t.Fatal(err)
	}
	// The keyed vertex at the source's parallelism, so that its figures
	// are given; a busy ratio and a rate with more decimals than a link
	// carries.
	keyed.Subtasks = append(slices.Clone(keyed.Subtasks), keyed.Subtasks[0])[:src.Parallelism]
	src.Subtasks = slices.Clone(src.Subtasks)
	src.Subtasks[0].Busy, src.Subtasks[0].RecordsOut = 0.123456, 10.0049
	base := livePlanRequest(src, &keyed, at)
	if base.Busy[0] != 0.123 || base.Observed[0] != 10 || base.KeyedIn == nil || base.ObservedAt.IsZero() {
		t.Fatalf("livePlanRequest = busy %v, observed %v, keyed in %v, observed at %v; want rounded figures, the keyed vertex's, dated", base.Busy, base.Observed, base.KeyedIn, base.ObservedAt)
	}
	atTarget, fresh := base, base
	atTarget.Target = 7
	fresh.Target, fresh.Mode = 5, assign.StartFresh
	for name, pr := range map[string]plan.Request{"current": base, "target": atTarget, "fresh": fresh} {
		if errs := pr.Validate(); errs != nil {
			t.Errorf("%s: Validate() = %v", name, errs)
		}
		got, errs := plan.FromQuery(pr.Query())
		if diff := cmp.Diff(pr, got); errs != nil || diff != "" {
			t.Errorf("%s: FromQuery(Query()) = %v (-built +read back):\n%s", name, errs, diff)
		}
	}
}
