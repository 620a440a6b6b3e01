package flink

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// listCounter counts, per vertex metrics path, the id-list requests (no
// get=) and the value requests, and can drop ids from value answers.
type listCounter struct {
	f      *fakeFlink
	mu     sync.Mutex
	lists  map[string]int
	values map[string]int
	// edit, when set, changes the items of value answers; false drops one.
	edit func(it map[string]any) bool
}

func countLists(f *fakeFlink, paths ...string) *listCounter {
	lc := &listCounter{f: f, lists: map[string]int{}, values: map[string]int{}}
	for _, p := range paths {
		f.setFault(p, func(w http.ResponseWriter, r *http.Request) {
			lc.mu.Lock()
			edit := lc.edit
			if r.URL.Query().Has("get") {
				lc.values[p]++
			} else {
				lc.lists[p]++
			}
			lc.mu.Unlock()
			if edit == nil || !r.URL.Query().Has("get") {
				f.rs.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			f.rs.ServeHTTP(rec, r)
			var items []map[string]any
			if err := json.Unmarshal(rec.Body.Bytes(), &items); err != nil {
				f.t.Errorf("values answer: %v", err)
			}
			kept := items[:0]
			for _, it := range items {
				if edit(it) {
					kept = append(kept, it)
				}
			}
			json.NewEncoder(w).Encode(kept)
		})
	}
	return lc
}

func (lc *listCounter) setEdit(edit func(map[string]any) bool) {
	lc.mu.Lock()
	lc.edit = edit
	lc.mu.Unlock()
}

func (lc *listCounter) counts(path string) (lists, values int) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.lists[path], lc.values[path]
}

func TestMetricIDListsReadOnlyWhenTheyCanChange(t *testing.T) {
	f := newFakeFlink(t, "2.3.0")
	srv := f.start()
	src, keyed := f.jobPath("vertices", f.sourceID, "metrics"), f.jobPath("vertices", f.keyedID, "metrics")
	lc := countLists(f, src, keyed)
	clock := newTestClock()
	c := newTestCollector(t, Config{URL: srv.URL, PollInterval: 10 * time.Second})
	clock.install(c)

	poll := func(step string) *KafkaSourceObservation {
		t.Helper()
		s := c.PollOnce(context.Background())
		if len(s.Jobs) == 0 {
			t.Fatalf("%s: no jobs", step)
		}
		v := findVertex(t, s.Jobs[0], f.sourceID)
		if v.Err != nil || v.Stale || v.Kafka == nil || len(v.Kafka.States) == 0 {
			t.Fatalf("%s: source vertex err %v, stale %v, kafka %+v", step, v.Err, v.Stale, v.Kafka)
		}
		clock.add(10 * time.Second)
		return v.Kafka
	}
	want := func(step string, srcLists, srcValues int) {
		t.Helper()
		if l, v := lc.counts(src); l != srcLists || v != srcValues {
			t.Errorf("%s: source vertex: %d id lists and %d value requests, want %d and %d", step, l, v, srcLists, srcValues)
		}
		if l, _ := lc.counts(keyed); l != 0 {
			t.Errorf("%s: keyed vertex: %d id lists, want none (its metric ids have fixed names)", step, l)
		}
	}

	first := poll("first poll")
	want("first poll", 1, 1)
	for i := range 3 {
		if got := poll("steady"); len(got.States) != len(first.States) {
			t.Errorf("steady poll %d: %d Kafka entries, want the first poll's %d", i, len(got.States), len(first.States))
		}
	}
	want("three more polls, nothing changed", 1, 4)

	// IDRefresh passes: the list is read again, once.
	clock.add(DefaultIDRefresh)
	poll("after IDRefresh")
	poll("after IDRefresh, next poll")
	want("IDRefresh passed", 2, 6)

	// An offset id goes missing from the values: the next poll reads the
	// list again.
	var dropped string
	for _, s := range first.States {
		if s.CurrentID != "" {
			dropped = s.CurrentID
			break
		}
	}
	lc.setEdit(func(it map[string]any) bool { return it["id"] != dropped })
	poll("an offset id missing")
	lc.setEdit(nil)
	want("the poll that saw an offset id missing", 2, 7)
	poll("after a missing id")
	poll("after a missing id, settled")
	want("the polls after a missing id", 3, 9)

	// Subtask 0 restarts (a new start-time): the list is read on this
	// poll and, while the tracker waits for the new attempt's dump (the
	// recorded values never change), on every poll.
	details := f.recordedBody("vertex-source")
	var d struct {
		Subtasks []struct {
			StartTime int64 `json:"start-time"`
		} `json:"subtasks"`
	}
	if err := json.Unmarshal(details, &d); err != nil || len(d.Subtasks) == 0 {
		t.Fatalf("vertex-source recording: %v", err)
	}
	old := strconv.FormatInt(d.Subtasks[0].StartTime, 10)
	restarted := bytes.ReplaceAll(details, []byte(old), []byte(strconv.FormatInt(d.Subtasks[0].StartTime+60_000, 10)))
	f.setFault(f.jobPath("vertices", f.sourceID), func(w http.ResponseWriter, r *http.Request) { w.Write(restarted) })
	for i := range settlePolls + 2 {
		if k := poll("after a restart"); !slices.Equal(k.AwaitingRefresh, []int{0}) {
			t.Errorf("poll %d after the restart: AwaitingRefresh = %v, want [0]", i, k.AwaitingRefresh)
		}
	}
	lists := 3 + settlePolls + 2
	want("restart awaiting the new attempt", lists, 9+settlePolls+2)

	// The new attempt's dump shows (its offsets registered anew at −1):
	// that poll still reads the list (the last one awaited the dump), the
	// settle polls are used up, so the polls after it read none.
	lc.setEdit(func(it map[string]any) bool {
		if id, _ := it["id"].(string); strings.HasPrefix(id, "0.") && strings.HasSuffix(id, ".currentOffset") {
			it["value"] = "-1"
		}
		return true
	})
	if k := poll("the new attempt shows"); len(k.AwaitingRefresh) != 0 {
		t.Errorf("the new attempt shows: AwaitingRefresh = %v, want none", k.AwaitingRefresh)
	}
	for range settlePolls + 2 {
		poll("settled")
	}
	want("settled after the restart", lists+1, 9+settlePolls+2+1+settlePolls+2)
}

// TestMetricIDListsSettleAfterARestart: a restart whose new attempt shows
// on the first poll after it reads the list on settlePolls polls, then
// uses it.
func TestMetricIDListsSettleAfterARestart(t *testing.T) {
	f := newFakeFlink(t, "2.3.0")
	srv := f.start()
	src := f.jobPath("vertices", f.sourceID, "metrics")
	lc := countLists(f, src)
	c := newTestCollector(t, Config{URL: srv.URL})
	c.PollOnce(context.Background())

	details := f.recordedBody("vertex-source")
	var d struct {
		Subtasks []struct {
			StartTime int64 `json:"start-time"`
		} `json:"subtasks"`
	}
	if err := json.Unmarshal(details, &d); err != nil || len(d.Subtasks) < 2 {
		t.Fatalf("vertex-source recording: %v", err)
	}
	old := strconv.FormatInt(d.Subtasks[1].StartTime, 10)
	restarted := bytes.ReplaceAll(details, []byte(old), []byte(strconv.FormatInt(d.Subtasks[1].StartTime+60_000, 10)))
	f.setFault(f.jobPath("vertices", f.sourceID), func(w http.ResponseWriter, r *http.Request) { w.Write(restarted) })
	lc.setEdit(func(it map[string]any) bool {
		if id, _ := it["id"].(string); strings.HasPrefix(id, "1.") && strings.HasSuffix(id, "Offset") {
			it["value"] = "-1"
		}
		return true
	})
	for i := range settlePolls + 3 {
		v := findVertex(t, c.PollOnce(context.Background()).Jobs[0], f.sourceID)
		if v.Kafka == nil || len(v.Kafka.AwaitingRefresh) != 0 {
			t.Fatalf("poll %d after the restart: kafka %+v, want the new attempt seen at once", i, v.Kafka)
		}
	}
	if l, _ := lc.counts(src); l != 1+settlePolls {
		t.Errorf("%d id lists, want 1 before the restart and %d after it", l, settlePolls)
	}
}

func TestBackpressureLevel(t *testing.T) {
	sub := func(ratios ...float64) []SubtaskSnapshot {
		var out []SubtaskSnapshot
		for _, r := range ratios {
			out = append(out, SubtaskSnapshot{BackPressuredRatio: r})
		}
		return out
	}
	cases := []struct {
		subs  []SubtaskSnapshot
		level string
		ok    bool
	}{
		{sub(0, 0.1), "ok", true},
		{sub(0, 0.101), "low", true},
		{sub(0.5, 0.2), "low", true},
		{sub(0.501), "high", true},
		{sub(1, 0), "high", true},
		{sub(0.2, math.NaN()), "", false},
		{nil, "", false},
	}
	for _, tc := range cases {
		if level, ok := backpressureLevel(tc.subs); level != tc.level || ok != tc.ok {
			t.Errorf("backpressureLevel(%v) = %q, %v, want %q, %v", tc.subs, level, ok, tc.level, tc.ok)
		}
	}
}

// TestBackpressureFromMetrics: with every subtask's backpressured time in
// the values, /backpressure is not asked; the level computed from them is
// the one the recorded Flink answered on its /backpressure.
func TestBackpressureFromMetrics(t *testing.T) {
	for _, version := range []string{"1.20.5", "2.2.1", "2.3.0"} {
		t.Run(version, func(t *testing.T) {
			f := newFakeFlink(t, version)
			srv := f.start()
			c := newTestCollector(t, Config{URL: srv.URL})
			j := c.PollOnce(context.Background()).Jobs[0]
			for _, id := range []string{f.sourceID, f.keyedID} {
				v := findVertex(t, j, id)
				if n := f.requests(f.jobPath("vertices", id, "backpressure")); n != 0 {
					t.Errorf("vertex %s: /backpressure asked %d times, want none", v.Name, n)
				}
				// What the recorded Flink answered on its /backpressure.
				flinkSaid, err := c.client.Backpressure(context.Background(), f.jobID, id)
				if err != nil || flinkSaid.Level == "" {
					t.Fatalf("vertex %s: recorded /backpressure: %v, level %+v", v.Name, err, flinkSaid)
				}
				if v.BackpressureLevel != flinkSaid.Level {
					t.Errorf("vertex %s: level %q, Flink's /backpressure said %q", v.Name, v.BackpressureLevel, flinkSaid.Level)
				}
			}
		})
	}
}

// TestHintMetricIDs: a hint reads the list again on the next poll at
// least a poll interval after the last read; while the lists read for
// hints stay the same, the wait doubles, for maxHints reads; without a
// hint the list waits for IDRefresh.
func TestHintMetricIDs(t *testing.T) {
	f := newFakeFlink(t, "2.3.0")
	srv := f.start()
	src := f.jobPath("vertices", f.sourceID, "metrics")
	lc := countLists(f, src)
	clock := newTestClock()
	c := newTestCollector(t, Config{URL: srv.URL, IDRefresh: time.Hour, PollInterval: 10 * time.Second})
	clock.install(c)
	var readAt []time.Duration
	start := clock.now()
	poll := func(d time.Duration) {
		before, _ := lc.counts(src)
		at := clock.now().Sub(start)
		c.PollOnce(context.Background())
		if n, _ := lc.counts(src); n > before {
			readAt = append(readAt, at)
		}
		clock.add(d)
	}
	poll(10 * time.Second)
	poll(10 * time.Second)
	c.HintMetricIDs(f.jobID, f.sourceID)
	poll(2 * time.Second) // the next poll, at 20 s
	c.HintMetricIDs(f.jobID, f.sourceID)
	poll(8 * time.Second) // at 22 s: within the poll interval; the hint is kept
	for range 60 {        // a hint before every poll, for 10 minutes
		c.HintMetricIDs(f.jobID, f.sourceID)
		poll(10 * time.Second)
	}
	want := []time.Duration{0, 20 * time.Second, 40 * time.Second, 80 * time.Second, 160 * time.Second, 320 * time.Second, 640 * time.Second}
	// The first read, then maxHints reads for hints, the waits doubling
	// from 20 s, then nothing until IDRefresh.
	want = want[:1+maxHints]
	if !slices.Equal(readAt, want) {
		t.Errorf("lists read at %v, want %v", readAt, want)
	}
}

// TestKeyedVertexDetailsReadWhenTheyCanChange: a vertex that is not a
// source has its subtask details read on the first poll, then again only
// when numRestarts changes or detailsRefresh passes; the snapshot keeps
// the subtasks' status and TaskManager meanwhile. A source's are read on
// every poll.
func TestKeyedVertexDetailsReadWhenTheyCanChange(t *testing.T) {
	f := newFakeFlink(t, "2.3.0")
	srv := f.start()
	restarts := "0"
	var mu sync.Mutex
	f.setFault(f.jobPath("metrics"), func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Write([]byte(`[{"id":"numRestarts","value":"` + restarts + `"}]`))
	})
	clock := newTestClock()
	c := newTestCollector(t, Config{URL: srv.URL})
	clock.install(c)
	keyedPath, srcPath := f.jobPath("vertices", f.keyedID), f.jobPath("vertices", f.sourceID)
	poll := func(step string, wantKeyed, wantSource int) {
		t.Helper()
		j := c.PollOnce(context.Background()).Jobs[0]
		clock.add(10 * time.Second)
		k := findVertex(t, j, f.keyedID)
		if k.Err != nil || k.Stale || k.Subtasks[0].Status != "RUNNING" || k.Subtasks[0].Endpoint == "" {
			t.Errorf("%s: keyed vertex err %v, stale %v, subtask 0 %q on %q", step, k.Err, k.Stale, k.Subtasks[0].Status, k.Subtasks[0].Endpoint)
		}
		if n := f.requests(keyedPath); n != wantKeyed {
			t.Errorf("%s: keyed vertex details read %d times, want %d", step, n, wantKeyed)
		}
		if n := f.requests(srcPath); n != wantSource {
			t.Errorf("%s: source vertex details read %d times, want %d", step, n, wantSource)
		}
	}
	poll("first poll", 1, 1)
	poll("second poll", 1, 2)
	poll("third poll", 1, 3)
	mu.Lock()
	restarts = "1"
	mu.Unlock()
	poll("numRestarts changed", 2, 4)
	poll("after that", 2, 5)
	clock.add(detailsRefresh)
	poll("detailsRefresh passed", 3, 6)
}

// TestMetricIDListsProbedForTheAlignmentGauge: a young source (a subtask
// started within alignProbeWindow) that reports event time while its list
// names no watermarkAlignmentDrift gauge has the list read again as for a
// hint (10 s, 20 s, 40 s... after the last read, at most maxHints times,
// while it is young): Flink registers the gauge of a source with alignment
// some seconds after its others. A source without event time, one running
// for longer, or one whose list names the gauge, is not probed.
func TestMetricIDListsProbedForTheAlignmentGauge(t *testing.T) {
	c := newTestCollector(t, Config{URL: "http://127.0.0.1:1", IDRefresh: time.Hour, PollInterval: 10 * time.Second})
	key := stateKey{"job", "src"}
	start := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	source := func(wm int64, started time.Time) *VertexSnapshot {
		v := &VertexSnapshot{Source: true, Parallelism: 1, Subtasks: []SubtaskSnapshot{{EventTime: NoEventTime(), StartTime: started}}}
		v.Subtasks[0].EventTime.Read, v.Subtasks[0].EventTime.OutputWatermark = true, wm
		return v
	}
	withET, without := source(1_800_000_000_000, start), source(WatermarkNone, start)
	old := source(1_800_000_000_000, start.Add(-time.Hour))
	ids := []string{"0.Source__Kafka_Source.currentOutputWatermark"}
	probes := func(prev *VertexSnapshot, ids []string) []time.Duration {
		e := &idEntry{ids: ids, par: 1, attempts: map[int]attemptID{}, readAt: start}
		var at []time.Duration
		for s := 10 * time.Second; s <= 10*time.Minute; s += 10 * time.Second {
			if r := c.idReason(e, key, 1, map[int]subtaskPoll{}, true, prev, start.Add(s)); r != "" {
				if r != probeReason {
					t.Fatalf("read at %v for %q, want only probes", s, r)
				}
				at = append(at, s)
				e.readAt, e.probes = start.Add(s), e.probes+1
			}
		}
		return at
	}
	// 10 s, then 20, 40 and 80 s later; the next, 160 s later, is past
	// the window.
	want := []time.Duration{10 * time.Second, 30 * time.Second, 70 * time.Second}
	if got := probes(withET, ids); !slices.Equal(got, want) {
		t.Errorf("event time without the gauge: lists read at %v, want %v", got, want)
	}
	if got := probes(without, ids); len(got) != 0 {
		t.Errorf("no event time: lists read at %v, want none", got)
	}
	if got := probes(old, ids); len(got) != 0 {
		t.Errorf("a source running for an hour: lists read at %v, want none", got)
	}
	if got := probes(withET, append(ids, "0.Source__Kafka_Source.watermarkAlignmentDrift")); len(got) != 0 {
		t.Errorf("gauge listed: lists read at %v, want none", got)
	}
}
