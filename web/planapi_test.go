package web

import (
	"encoding/json"
	"html"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// planQuery is a sandbox-like plan: orders (12 partitions, Zipf-like
// rates) and inventory.events (3), p = 4, with busy ratios that put a source
// subtask's capacity at 120 records/s.
func planQuery() url.Values {
	q := url.Values{"topic": {"orders:12", "inventory.events:3"}, "parallelism": {"4"}, "target": {"6"}}
	var rates strings.Builder
	for p := range 12 {
		rates.WriteString("orders," + strconv.Itoa(p) + "," + strconv.Itoa(5+(p*37)%60) + "\n")
	}
	for p := range 3 {
		rates.WriteString("inventory.events," + strconv.Itoa(p) + ",15\n")
	}
	q.Set("rates", rates.String())
	q.Set("busy", "0.5,0.6,0.7,0.8")
	return q
}

func getJSON(t *testing.T, s *Server, target string, into any) int {
	t.Helper()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
	if into != nil && rec.Code == 200 {
		if err := json.Unmarshal(rec.Body.Bytes(), into); err != nil {
			t.Fatalf("GET %s: %v\n%.300s", target, err, rec.Body)
		}
	}
	if rec.Code != 200 {
		var e apiErrorBody
		json.Unmarshal(rec.Body.Bytes(), &e)
		if into, ok := into.(*apiErrorBody); ok {
			*into = e
		}
	}
	return rec.Code
}

// TestPlanAPIMatchesPage: /api/v1/plan and /plan answer the same query with
// the same candidates, in the same order, with the same recommendation.
func TestPlanAPIMatchesPage(t *testing.T) {
	s := newTestServer(t)
	q := planQuery()
	var resp planResponse
	if code := getJSON(t, s, "/api/v1/plan?"+q.Encode(), &resp); code != 200 {
		t.Fatalf("GET /api/v1/plan = %d", code)
	}
	if resp.Sizing.Basis != "capacity" || resp.Capacity.Source.Kind != "observed" || resp.Capacity.SourceRates != "estimated" {
		t.Fatalf("plan sizing basis %q, capacity %+v", resp.Sizing.Basis, resp.Capacity)
	}
	if len(resp.Now.Subtasks) != 4 || len(resp.Target.Subtasks) != 6 || resp.Moves.Restore == nil {
		t.Fatalf("plan sides %d → %d subtasks, restore moves %v", len(resp.Now.Subtasks), len(resp.Target.Subtasks), resp.Moves.Restore)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/plan?"+q.Encode(), nil))
	page := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("GET /plan = %d", rec.Code)
	}
	last := 0
	for _, c := range resp.Sizing.Candidates {
		i := strings.Index(page, `data-testid="cand-row-`+strconv.Itoa(c.Parallelism)+`"`)
		if i < 0 || i < last {
			t.Fatalf("candidate p=%d: page position %d after %d; the page's order must be the API's", c.Parallelism, i, last)
		}
		last = i
		if !strings.Contains(page, html.EscapeString(c.Verdict)) {
			t.Errorf("candidate p=%d: the page lacks the API's verdict %q", c.Parallelism, c.Verdict)
		}
	}
	if !strings.Contains(page, html.EscapeString(resp.Summary)) {
		t.Errorf("the page lacks the API's summary %q", resp.Summary)
	}
}

func TestPlanAPIBadInput(t *testing.T) {
	s := newTestServer(t)
	for _, tc := range []struct{ query, want string }{
		{"parallelism=4", "topics: required"},
		{"topic=a:4&parallelism=0", "parallelism: \"0\" is not a parallelism"},
		{"topic=a:4&parallelism=2&busy=0.5", "busy: 1 values for 2 current subtasks"},
		{"topic=a:4&parallelism=2&busy=0.5,1.5&rates=a,0,1", "busy ratio is at most 1"},
		{"topic=a:4&parallelism=2&utilization=170", "utilization: \"170\" is not a target utilisation"},
		{"topic=a:4&parallelism=2&keyedIn=1,x", "keyedIn: value 2"},
	} {
		var e apiErrorBody
		if code := getJSON(t, s, "/api/v1/plan?"+tc.query, &e); code != 400 || !strings.Contains(e.Error, tc.want) {
			t.Errorf("GET /api/v1/plan?%s = %d %q, want 400 containing %q", tc.query, code, e.Error, tc.want)
		}
	}
}

// TestOpenAPIPlanSchema checks real /api/v1/plan answers (by capacity, by
// the target's load, restore and comparison layouts) against openapi.json's
// PlanResponse, key by key.
func TestOpenAPIPlanSchema(t *testing.T) {
	doc := oaLiveLoad(t)
	s := newTestServer(t)
	c := &oaLiveChecker{t: t, doc: doc, partial: true, seen: map[string]bool{}}
	restore := planQuery()
	restore.Set("mode", "restore")
	restore.Set("state", "1 GiB")
	restore.Set("keyedIn", "40,50,60,70")
	restore.Set("keyedBusy", "0.4,0.5,0.6,0.7")
	restore.Set("backlog", "orders,3,27000\n")
	restore.Set("retention", "orders,120000\n")
	for _, q := range []string{
		planQuery().Encode(),
		restore.Encode(),
		"topic=a:12&topic=b:5&parallelism=3&target=8",
		"topic=a:12&parallelism=3&target=8&strategy=naive-modulo",
	} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/plan?"+q, nil))
		if rec.Code != 200 {
			t.Fatalf("GET /api/v1/plan?%s = %d: %s", q, rec.Code, rec.Body)
		}
		var v any
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		sch := oaLiveResponseSchema(t, doc, "/api/v1/plan")
		c.check("/api/v1/plan?"+q, sch, v)
	}
	for _, name := range []string{"PlanResponse", "Sizing", "Candidate", "CapacityEstimate", "KeyedRescaleDiff", "SourceRescaleDiff", "PlanSide", "SubtaskBacklog"} {
		if !c.seen[name] {
			t.Errorf("schema %s is not reached from /api/v1/plan's answers", name)
		}
	}
}

// A plan given the source's backlog says when each candidate's backlog
// clears and whether its loss stops, and the autoscaler's catch-up term
// reads the backlog (Lag / catch-up.duration) as the operator's does.
func TestPlanBacklogAndCatchUp(t *testing.T) {
	s := newTestServer(t)
	q := planQuery()
	var before planResponse
	if code := getJSON(t, s, "/api/v1/plan?"+q.Encode(), &before); code != 200 {
		t.Fatalf("GET /api/v1/plan = %d", code)
	}
	q.Set("backlog", "orders,3,27000\norders,7,9000\n")
	q.Set("retention", "orders,120000\ninventory.events,-1")
	var resp planResponse
	if code := getJSON(t, s, "/api/v1/plan?"+q.Encode(), &resp); code != 200 {
		t.Fatalf("GET /api/v1/plan with a backlog = %d", code)
	}
	if len(resp.Capacity.Autoscaler) == 0 || len(before.Capacity.Autoscaler) == 0 {
		t.Fatalf("no autoscaler computation: %+v", resp.Capacity)
	}
	src := resp.Capacity.Autoscaler[0]
	// 36,000 records over catch-up.duration's 1800 s: 20 records/s.
	if src.Vertex != "source" || src.Lag != 36000 || src.CatchUpRate == nil || *src.CatchUpRate != 20 {
		t.Errorf("source autoscaler lag %v, catch-up %v; want 36000, 20 records/s", src.Lag, src.CatchUpRate)
	}
	if *src.TargetCapacity <= *before.Capacity.Autoscaler[0].TargetCapacity {
		t.Errorf("target capacity with a backlog %v, without %v: want the catch-up term added", *src.TargetCapacity, *before.Capacity.Autoscaler[0].TargetCapacity)
	}
	if !strings.Contains(strings.Join(src.Steps, "\n"), "catch-up 20") {
		t.Errorf("steps %q do not show the catch-up term 20", src.Steps)
	}
	for _, c := range resp.Sizing.Candidates {
		if len(c.Backlog) != c.Parallelism {
			t.Errorf("candidate p=%d has %d subtask backlogs, want one per subtask", c.Parallelism, len(c.Backlog))
			continue
		}
		total := 0.0
		for _, b := range c.Backlog {
			total += b.Records
			want := assignClear(b.Records, resp.Capacity.Source.PerSubtask, b.InputRate)
			if b.ClearSeconds != want {
				t.Errorf("candidate p=%d subtask %d clears in %v s, want %v", c.Parallelism, b.Subtask, b.ClearSeconds, want)
			}
		}
		if total != 36000 {
			t.Errorf("candidate p=%d backlog sums to %v, want 36000", c.Parallelism, total)
		}
		if !strings.Contains(c.Verdict, "backlog") {
			t.Errorf("candidate p=%d verdict %q says nothing of the backlog", c.Parallelism, c.Verdict)
		}
	}
	q.Set("backlog", "orders,99,5")
	var e apiErrorBody
	if code := getJSON(t, s, "/api/v1/plan?"+q.Encode(), &e); code != 400 || !strings.Contains(e.Error, "backlog") {
		t.Errorf("backlog on a partition orders lacks: %d %q, want 400 naming backlog", code, e.Error)
	}
}

// assignClear is the clearance the candidate table should show.
func assignClear(records, capacity, in float64) float64 {
	switch {
	case records <= 0:
		return 0
	case capacity <= in:
		return -1
	}
	return records / (capacity - in)
}
