package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/sandbox"
)

// TestSandboxRecommendationCarriesTheLoad plans a rescale of the sandbox's
// clickstream job from its live page, applies the recommended parallelism
// through the sandbox's restore and checks, against the restored job's own
// busy ratios once it has caught up, that every source and keyed subtask
// stays under the target utilisation the planner promised. The orders job
// gets no recommendation: its hottest partition alone needs more than a
// source subtask's capacity, and the planner names it.
//
// The waits are on conditions (the figures known, the lag drained); the
// deadlines are hang guards.
func TestSandboxRecommendationCarriesTheLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the sandbox for a while")
	}
	feed := startSandboxFeed(t, sandbox.Options{Seed: 21}, nil)
	feed.pollInBackground(t)
	sb, st := feed.sb, feed.st
	ts := newLiveServer(t, st, sb)

	job := func(name string) sandbox.JobInfo { return feed.job(t, name) }
	// known waits until a vertex has a busy ratio for every subtask and a
	// produced rate for every partition, and cond holds.
	wait := func(what string, j sandbox.JobInfo, cond func(src, keyed live.VertexView) bool) (live.VertexView, live.VertexView) {
		guard := time.Now().Add(4 * time.Minute)
		for {
			src, err1 := st.State().Vertex(j.ID, j.SourceVertexID, live.VertexQuery{Highlight: -1})
			keyed, err2 := st.State().Vertex(j.ID, j.KeyedVertexID, live.VertexQuery{Highlight: -1})
			if err1 == nil && err2 == nil && len(src.Subtasks) == j.Parallelism && figuresKnown(src) && figuresKnown(keyed) && cond(src, keyed) {
				return src, keyed
			}
			if time.Now().After(guard) {
				t.Fatalf("%s: not reached within 4 minutes; sandbox stats %+v", what, sb.Stats())
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	plan := func(j sandbox.JobInfo) planResponse {
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Get(ts.URL + "/jobs/" + j.ID + "/vertices/" + j.SourceVertexID + "/plan")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		u, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || resp.StatusCode != http.StatusSeeOther {
			t.Fatalf("plan a rescale of %s: %d %q", j.Name, resp.StatusCode, resp.Header.Get("Location"))
		}
		var pr planResponse
		getJSONInto(t, ts.URL+"/api/v1/plan?"+u.RawQuery, &pr)
		return pr
	}
	// running: every partition has a produced rate and the hot subtasks
	// are busy, for ten Flink polls in a row (the first polls see rates of
	// 0 and idle subtasks, then the bursts of a start from earliest).
	running := func() func(src, _ live.VertexView) bool {
		var last time.Time
		held := 0
		return func(src, _ live.VertexView) bool {
			busy := 0.0
			for _, r := range src.Subtasks {
				busy = max(busy, r.Busy)
				for _, c := range r.Partitions {
					if c.Rate <= 0 {
						held = 0
						return false
					}
				}
			}
			if busy < 0.5 {
				held = 0
				return false
			}
			if src.Flink.At != last {
				last = src.Flink.At
				held++
			}
			return held >= 10
		}
	}
	// The orders job's verdict follows its hottest partition, whose rate
	// drifts by ±35 %: either no parallelism (and the partition is named)
	// or one whose busiest subtask is predicted under the target.
	orders := job("orders-enrichment")
	wait("orders figures", orders, running())
	if pr := plan(orders); pr.Sizing.Recommended == 0 && !strings.Contains(pr.Summary, `partition "orders-`) {
		t.Errorf("orders plan: no recommendation, but the summary %q does not name the orders partition no subtask can carry", pr.Summary)
	} else if pr.Sizing.Recommended > 0 && (len(pr.Sizing.Candidates) == 0 || pr.Sizing.Candidates[0].Utilization > pr.Sizing.Utilization) {
		t.Errorf("orders plan: recommended %d with candidates %+v", pr.Sizing.Recommended, pr.Sizing.Candidates)
	}

	clicks := job("clickstream-sessions")
	before, beforeKeyed := wait("clickstream figures", clicks, running())
	pr := plan(clicks)
	if pr.Capacity.Source.Kind != "observed" || pr.Capacity.Source.PerSubtask < 110 || pr.Capacity.Source.PerSubtask > 130 {
		t.Fatalf("clickstream plan: source capacity %+v, want observed ≈ 120 records/s (the sandbox's)", pr.Capacity.Source)
	}
	p := pr.Sizing.Recommended
	if p == 0 || pr.Sizing.Layout != "restore" {
		t.Fatalf("clickstream plan: recommended %d under %q: %s", p, pr.Sizing.Layout, pr.Summary)
	}
	var predicted float64
	for _, c := range pr.Sizing.Candidates {
		if c.Parallelism == p {
			predicted = c.Utilization
		}
	}
	for _, c := range pr.Sizing.Candidates {
		if c.Parallelism == clicks.Parallelism {
			b, _ := busiestOf(before)
			k, _ := busiestOf(beforeKeyed)
			t.Logf("clickstream-sessions now at p = %d: busiest source subtask predicted at %.0f%%, observed %.0f%%; busiest keyed observed %.0f%%", c.Parallelism, 100*c.Utilization, 100*b, 100*k)
		}
	}
	t.Logf("clickstream-sessions: recommended p = %d, busiest predicted at %.0f%% (%s)", p, 100*predicted, pr.Summary)

	form := url.Values{"job": {clicks.Name}, "parallelism": {strconv.Itoa(p)}}
	resp, err := http.PostForm(ts.URL+"/sandbox/restore", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	restored := job("clickstream-sessions")
	if restored.Parallelism != p || restored.ID == clicks.ID {
		t.Fatalf("after the restore: %+v, want a new job at p = %d", restored, p)
	}
	// Caught up: no partition more than a second of records behind, every
	// reading subtask busy, and so for ten Flink polls in a row (the busy
	// ratio is a windowed figure that still holds the catch-up at first).
	var lastPoll time.Time
	held := 0
	src, keyed := wait("restored clickstream caught up", restored, func(src, _ live.VertexView) bool {
		for _, r := range src.Subtasks {
			if len(r.Partitions) > 0 && r.Busy <= 0 {
				held = 0
				return false
			}
			for _, c := range r.Partitions {
				if c.Lag < 0 || c.Rate <= 0 || float64(c.Lag) > c.Rate {
					held = 0
					return false
				}
			}
		}
		if src.Flink.At != lastPoll {
			lastPoll = src.Flink.At
			held++
		}
		return held >= 10
	})
	sb1, sat := busiestOf(src)
	kb, kat := busiestOf(keyed)
	t.Logf("restored at p = %d: busiest source subtask %d at %.0f%%, busiest keyed subtask %d at %.0f%% (observed)", p, sat, 100*sb1, kat, 100*kb)
	if sb1 > pr.Sizing.Utilization || kb > pr.Sizing.Utilization {
		t.Errorf("after applying p = %d the busiest source subtask is at %.0f%% and the busiest keyed at %.0f%%; the plan promised every subtask under %.0f%%",
			p, 100*sb1, 100*kb, 100*pr.Sizing.Utilization)
	}
	b, _ := json.Marshal(pr.Sizing.Candidates[0])
	t.Logf("recommended candidate: %s", b)
}

// figuresKnown reports that every subtask of v has a busy ratio and, for a
// source, every partition a produced rate.
func figuresKnown(v live.VertexView) bool {
	if len(v.Subtasks) == 0 {
		return false
	}
	for _, r := range v.Subtasks {
		if r.Busy < 0 {
			return false
		}
		for _, c := range r.Partitions {
			if c.Rate < 0 {
				return false
			}
		}
	}
	return true
}

// busiestOf is the highest busy ratio of v's subtasks and its subtask.
func busiestOf(v live.VertexView) (float64, int) {
	b, at := -1.0, -1
	for _, r := range v.Subtasks {
		if r.Busy > b {
			b, at = r.Busy, r.Subtask
		}
	}
	return b, at
}
