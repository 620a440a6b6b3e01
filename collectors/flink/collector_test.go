package flink

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/skewscope/skewscope/collectors"
)

// fakeFlink serves the recorded responses of one Flink version at the
// paths Flink would have served them (recServer), and lets a test replace
// single paths with faults. It fails the test on any non-GET request and
// tracks the requests in flight.
type fakeFlink struct {
	t                         *testing.T
	rs                        *recServer
	jobID, sourceID, keyedID  string
	checkpointID              string
	mu                        sync.Mutex
	faults                    map[string]http.HandlerFunc
	delay                     time.Duration
	count                     map[string]int
	auth                      []string
	inFlight, maxInFlightSeen int
}

func newFakeFlink(t *testing.T, version string) *fakeFlink {
	rs := loadRecordings(t, version)
	return &fakeFlink{
		t: t, rs: rs,
		jobID:        rs.vars["job"]["jobid"],
		sourceID:     rs.vars["vertex-source"]["vertexid"],
		keyedID:      rs.vars["vertex-keyed"]["vertexid"],
		checkpointID: rs.vars["checkpoint-subtasks-keyed"]["checkpointid"],
		faults:       map[string]http.HandlerFunc{},
		count:        map[string]int{},
	}
}

func (f *fakeFlink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		f.t.Errorf("%s %s: the collector must only GET", r.Method, r.URL.Path)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	f.mu.Lock()
	f.inFlight++
	f.maxInFlightSeen = max(f.maxInFlightSeen, f.inFlight)
	f.count[r.URL.Path]++
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	h, d := f.faults[r.URL.Path], f.delay
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	if d > 0 {
		time.Sleep(d)
	}
	if h != nil {
		h(w, r)
		return
	}
	f.rs.ServeHTTP(w, r)
}

func (f *fakeFlink) setFault(path string, h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if h == nil {
		delete(f.faults, path)
		return
	}
	f.faults[path] = h
}

func (f *fakeFlink) requests(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count[path]
}

func (f *fakeFlink) start() *httptest.Server {
	f.rs.prefix = ""
	srv := httptest.NewServer(f)
	f.t.Cleanup(srv.Close)
	return srv
}

func (f *fakeFlink) jobPath(rest ...string) string {
	return "/" + strings.Join(append([]string{"jobs", f.jobID}, rest...), "/")
}

// recordedBody returns a recording's body.
func (f *fakeFlink) recordedBody(name string) []byte {
	for _, r := range f.rs.recs {
		if r.name == name {
			return r.body
		}
	}
	f.t.Fatalf("no recording %s", name)
	return nil
}

// testClock is a settable clock for Freshness ages.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time         { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) add(d time.Duration)    { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }
func newTestClock() *testClock              { return &testClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)} }
func (c *testClock) install(col *Collector) { col.now = c.now }

// published is the last snapshot the collector published, nil before the
// first poll ends. The dashboard receives snapshots through OnSnapshot.
func (c *Collector) published() *Snapshot { return c.latest.Load() }

func newTestCollector(t *testing.T, cfg Config, opts ...Option) *Collector {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "test"
	}
	paced := cfg.MaxRequestsPerSecond != 0
	c, err := newCollector(cfg, nil, opts...)
	if err != nil {
		t.Fatalf("newCollector(%v) = %v", cfg, err)
	}
	if !paced {
		// Unpaced unless the test is about pacing (budget_test.go): the
		// tests are about what is asked and answered.
		c.client.pace = nil
	}
	t.Cleanup(c.Close)
	return c
}

func findVertex(t *testing.T, j JobSnapshot, id string) VertexSnapshot {
	t.Helper()
	for _, v := range j.Vertices {
		if v.ID == id {
			return v
		}
	}
	t.Fatalf("job %s has no vertex %s", j.ID, id)
	return VertexSnapshot{}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func nearAll(got, want []float64) bool { return slices.EqualFunc(got, want, near) }

func column(v VertexSnapshot, f func(SubtaskSnapshot) float64) []float64 {
	out := make([]float64, len(v.Subtasks))
	for i, s := range v.Subtasks {
		out[i] = f(s)
	}
	return out
}

func stateSizes(v VertexSnapshot) []int64 {
	out := make([]int64, len(v.Subtasks))
	for i, s := range v.Subtasks {
		out[i] = s.StateSize
	}
	return out
}

// partitionsBySubtask renders the observed assignment as
// "subtask: topic-partition …" lines, and offsets as "topic-p=cur/committed".
func partitionsBySubtask(k *KafkaSourceObservation) (assign []string, offsets map[string]string) {
	offsets = map[string]string{}
	by := k.BySubtask()
	for st := range len(by) {
		var ps []string
		for _, p := range by[st] {
			ps = append(ps, fmt.Sprintf("%s-%d", p.Topic, p.Partition))
		}
		assign = append(assign, fmt.Sprintf("%d: %s", st, strings.Join(ps, " ")))
	}
	for _, s := range k.States {
		offsets[fmt.Sprintf("%s-%d", s.Topic, s.Partition)] = fmt.Sprintf("%d/%d", s.CurrentOffset, s.CommittedOffset)
	}
	return assign, offsets
}

// TestPollRecorded checks one poll against figures read from the recorded
// responses of each recorded Flink version.
func TestPollRecorded(t *testing.T) {
	type want struct {
		jobID                                   string
		latestCheckpoint                        int64
		sourceBusy, sourceIdle, sourceIn        []float64
		sourceOut                               []float64
		keyedBusy, keyedIdle, keyedIn, keyedOut []float64
		keyedState, sourceState                 []int64
		offsets                                 map[string]string
	}
	wants := map[string]want{
		"1.20.5": {
			jobID: "3f34d7245ef2c24b2205bd55be41574e", latestCheckpoint: 10,
			sourceBusy: []float64{0.142, 0, 0}, sourceIdle: []float64{0.858, 1, 1},
			// Task-scope numRecordsInPerSecond of a source is 0 up to 1.20.
			sourceIn:  []float64{0, 0, 0},
			sourceOut: []float64{80, 80, 53.333333333333336},
			keyedBusy: []float64{0.045, 0, 0, 0}, keyedIdle: []float64{0.955, 1, 1, 1},
			keyedIn:    []float64{132.01666666666668, 25.766666666666666, 27.833333333333332, 26.8},
			keyedOut:   []float64{0, 0, 0, 0},
			keyedState: []int64{6962, 6687, 6940, 6666}, sourceState: []int64{359, 359, 319},
			offsets: map[string]string{
				"orders-0": "1919/1775", "orders-3": "1919/1775", "payments_v1-0": "1924/1775",
				"orders-1": "1924/1775", "orders-4": "1924/1775", "payments_v1-1": "1919/1775",
				"orders-2": "1919/1775", "payments_v1-2": "1919/1775",
			},
		},
		"2.2.1": {
			jobID: "97b6107c9344f10adec9f7e761fd488b", latestCheckpoint: 11,
			sourceBusy: []float64{0, 0, 0}, sourceIdle: []float64{1, 1, 1},
			sourceIn:  []float64{97.75, 97.75, 65.16666666666667},
			sourceOut: []float64{97.75, 97.75, 65.16666666666667},
			keyedBusy: []float64{0.035, 0.007, 0.005, 0}, keyedIdle: []float64{0.965, 0.993, 0.995, 1},
			keyedIn:    []float64{161.71666666666667, 32.13333333333333, 33.983333333333334, 32.583333333333336},
			keyedOut:   []float64{161.71666666666667, 32.13333333333333, 33.983333333333334, 32.583333333333336},
			keyedState: []int64{6934, 6659, 6912, 6638}, sourceState: []int64{359, 359, 319},
			offsets: map[string]string{
				"orders-0": "1999/1930", "orders-3": "1999/1930", "payments_v1-0": "1999/1930",
				"orders-1": "1999/1930", "orders-4": "1999/1930", "payments_v1-1": "1999/1930",
				"orders-2": "1999/1930", "payments_v1-2": "1999/1930",
			},
		},
		// The 2.3.0 recording's source vertex chains a "Source Tagger"
		// operator after the Kafka source ("Source: Kafka Source -> Source
		// Tagger"); its metrics do not change which ids the figures come from.
		"2.3.0": {
			jobID: "4c16096701c9bcc32929a18dd142b315", latestCheckpoint: 11,
			sourceBusy: []float64{0.142, 0.099, 0.116}, sourceIdle: []float64{0.858, 0.901, 0.884},
			sourceIn:  []float64{62.75, 62.75, 41.833333333333336},
			sourceOut: []float64{62.75, 62.75, 41.833333333333336},
			keyedBusy: []float64{0.265, 0.258, 0.201, 0.208}, keyedIdle: []float64{0.735, 0.742, 0.799, 0.792},
			keyedIn:    []float64{102.91666666666667, 20.583333333333332, 21.716666666666665, 20.783333333333335},
			keyedOut:   []float64{102.91666666666667, 20.583333333333332, 21.716666666666665, 20.783333333333335},
			keyedState: []int64{6916, 6641, 6912, 6638}, sourceState: []int64{359, 359, 319},
			offsets: map[string]string{
				"orders-0": "1409/1335", "orders-3": "1409/1335", "payments_v1-0": "1409/1335",
				"orders-1": "1409/1335", "orders-4": "1409/1335", "payments_v1-1": "1409/1335",
				"orders-2": "1409/1335", "payments_v1-2": "1409/1335",
			},
		},
	}
	const sourceID, keyedID = "61252f73469d3ffba207c548d29a0267", "fbab2d2399396810dd2c19cb542bd418"
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			w := wants[version]
			f := newFakeFlink(t, version)
			f.delay = 5 * time.Millisecond // let requests overlap (TestPollRequestsInParallel counts them)
			srv := f.start()
			c := newTestCollector(t, Config{Name: "rec", URL: srv.URL + "/"})
			if c.published() != nil {
				t.Fatal("published() before the first poll is not nil")
			}
			s := c.PollOnce(context.Background())
			if c.published() != s {
				t.Error("PollOnce did not publish its snapshot")
			}
			if s.Err != nil || s.FlinkVersion != version || s.Endpoint != "rec" || s.URL != srv.URL+"/" {
				t.Fatalf("snapshot = {Err: %v, FlinkVersion: %q, Endpoint: %q, URL: %q}", s.Err, s.FlinkVersion, s.Endpoint, s.URL)
			}
			if len(s.Jobs) != 1 {
				t.Fatalf("%d jobs, want 1", len(s.Jobs))
			}
			j := s.Jobs[0]
			if j.ID != w.jobID || j.Name != "skewscope-recording" || j.State != "RUNNING" || j.Err != nil || j.Stale {
				t.Fatalf("job = %s %q %s err=%v stale=%v", j.ID, j.Name, j.State, j.Err, j.Stale)
			}
			if j.LatestCheckpoint == nil || j.LatestCheckpoint.ID != w.latestCheckpoint || j.Restored != nil {
				t.Errorf("LatestCheckpoint = %+v, Restored = %+v; want id %d, not restored", j.LatestCheckpoint, j.Restored, w.latestCheckpoint)
			}
			if j.NumRestarts != 0 {
				t.Errorf("NumRestarts = %d, want the recorded 0", j.NumRestarts)
			}
			// Topological order: the source first (the plan lists it last).
			if len(j.Vertices) != 2 || j.Vertices[0].ID != sourceID || j.Vertices[1].ID != keyedID {
				t.Fatalf("vertices = %v", j.Vertices)
			}
			src, kd := j.Vertices[0], j.Vertices[1]
			if src.Inputs != nil || !slices.Equal(kd.Inputs, []string{sourceID}) {
				t.Errorf("inputs: source %v, keyed %v; want none and [%s] (the plan's edge)", src.Inputs, kd.Inputs, sourceID)
			}
			for _, v := range []struct {
				v                  VertexSnapshot
				par                int
				source, keyed      bool
				busy, idle, in, ot []float64
				state              []int64
			}{
				{src, 3, true, false, w.sourceBusy, w.sourceIdle, w.sourceIn, w.sourceOut, w.sourceState},
				{kd, 4, false, true, w.keyedBusy, w.keyedIdle, w.keyedIn, w.keyedOut, w.keyedState},
			} {
				if v.v.Parallelism != v.par || v.v.MaxParallelism != 128 || v.v.Source != v.source || v.v.Keyed != v.keyed {
					t.Errorf("vertex %s: parallelism %d, maxParallelism %d, source %v, keyed %v; want %d, 128, %v, %v",
						v.v.Name, v.v.Parallelism, v.v.MaxParallelism, v.v.Source, v.v.Keyed, v.par, v.source, v.keyed)
				}
				if v.v.Err != nil || v.v.Stale || v.v.BackpressureLevel != "ok" {
					t.Errorf("vertex %s: err %v, stale %v, backpressure %q", v.v.Name, v.v.Err, v.v.Stale, v.v.BackpressureLevel)
				}
				if len(v.v.Subtasks) != v.par {
					t.Fatalf("vertex %s: %d subtasks", v.v.Name, len(v.v.Subtasks))
				}
				for i, st := range v.v.Subtasks {
					if st.Index != i || st.Status != "RUNNING" || st.Endpoint != "localhost:-1" || st.Attempt != 0 ||
						st.StartTime.Before(j.StartTime) || st.StartTime.After(s.CollectedAt) {
						t.Errorf("vertex %s subtask %d = %+v, want attempt 0 started after the job (%v)", v.v.Name, i, st, j.StartTime)
					}
				}
				checks := []struct {
					name string
					f    func(SubtaskSnapshot) float64
					want []float64
				}{
					{"BusyRatio", func(s SubtaskSnapshot) float64 { return s.BusyRatio }, v.busy},
					{"IdleRatio", func(s SubtaskSnapshot) float64 { return s.IdleRatio }, v.idle},
					{"BackPressuredRatio", func(s SubtaskSnapshot) float64 { return s.BackPressuredRatio }, make([]float64, v.par)},
					{"RecordsInPerSecond", func(s SubtaskSnapshot) float64 { return s.RecordsInPerSecond }, v.in},
					{"RecordsOutPerSecond", func(s SubtaskSnapshot) float64 { return s.RecordsOutPerSecond }, v.ot},
				}
				for _, ch := range checks {
					if got := column(v.v, ch.f); !nearAll(got, ch.want) {
						t.Errorf("vertex %s %s = %v, want %v", v.v.Name, ch.name, got, ch.want)
					}
				}
				if got := stateSizes(v.v); !slices.Equal(got, v.state) {
					t.Errorf("vertex %s StateSize = %v, want %v", v.v.Name, got, v.state)
				}
				if v.v.StateCheckpointID != w.latestCheckpoint || v.v.StateFreshness.Stale {
					t.Errorf("vertex %s state from checkpoint %d (stale %v), want %d", v.v.Name, v.v.StateCheckpointID, v.v.StateFreshness.Stale, w.latestCheckpoint)
				}
			}
			if kd.Kafka != nil {
				t.Errorf("keyed vertex has a Kafka observation: %+v", kd.Kafka)
			}
			if src.Kafka == nil {
				t.Fatal("source vertex has no Kafka observation")
			}
			assign, offsets := partitionsBySubtask(src.Kafka)
			wantAssign := []string{
				"0: orders-0 orders-3 payments_v1-0",
				"1: orders-1 orders-4 payments_v1-1",
				"2: orders-2 payments_v1-2",
			}
			if !slices.Equal(assign, wantAssign) {
				t.Errorf("observed assignment = %q, want %q", assign, wantAssign)
			}
			if fmt.Sprint(offsets) != fmt.Sprint(w.offsets) {
				t.Errorf("offsets (current/committed) = %v, want %v", offsets, w.offsets)
			}
			// The first poll has no history to judge the entries by.
			for _, st := range src.Kafka.States {
				if st.Evidence != EvidenceUnknown {
					t.Errorf("first poll: %s-%d under %d has evidence %v, want unknown", st.Topic, st.Partition, st.Subtask, st.Evidence)
				}
			}
			if src.Kafka.Parallelism != 3 || src.Kafka.AwaitingRefresh != nil {
				t.Errorf("first poll: Parallelism %d, AwaitingRefresh %v", src.Kafka.Parallelism, src.Kafka.AwaitingRefresh)
			}

			f.rs.mu.Lock()
			missing := slices.Clone(f.rs.missingPaths)
			f.rs.mu.Unlock()
			if len(missing) > 0 {
				t.Errorf("requests without a recording: %v", missing)
			}

			// A second poll with the same latest checkpoint reuses the sizes.
			cpPath := f.jobPath("checkpoints", "details", f.checkpointID, "subtasks", keyedID)
			if n := f.requests(cpPath); n != 1 {
				t.Fatalf("%s requested %d times in the first poll", cpPath, n)
			}
			s2 := c.PollOnce(context.Background())
			if n := f.requests(cpPath); n != 1 {
				t.Errorf("%s requested again for the same checkpoint (%d requests)", cpPath, n)
			}
			if got := stateSizes(findVertex(t, s2.Jobs[0], keyedID)); !slices.Equal(got, w.keyedState) {
				t.Errorf("second poll StateSize = %v, want %v", got, w.keyedState)
			}
		})
	}
}

// TestPollJobsOverviewDownThenUp: a 500 on /jobs/overview keeps the
// previous jobs, stale with their age, and sets Snapshot.Err; the next good
// poll is fresh again.
func TestPollJobsOverviewDownThenUp(t *testing.T) {
	f := newFakeFlink(t, "2.2.1")
	srv := f.start()
	c := newTestCollector(t, Config{URL: srv.URL})
	clock := newTestClock()
	clock.install(c)

	s1 := c.PollOnce(context.Background())
	if s1.Err != nil || len(s1.Jobs) != 1 {
		t.Fatalf("first poll: err %v, %d jobs", s1.Err, len(s1.Jobs))
	}
	f.setFault("/jobs/overview", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"errors":["Internal server error.","<Exception on server side: boom>"]}`))
	})
	clock.add(25 * time.Second)
	s2 := c.PollOnce(context.Background())
	var ae *APIError
	if !errors.As(s2.Err, &ae) || ae.StatusCode != 500 || !strings.Contains(s2.Err.Error(), "boom") {
		t.Fatalf("Snapshot.Err = %v, want the 500 with Flink's message", s2.Err)
	}
	if len(s2.Jobs) != 1 || !s2.Jobs[0].Stale || s2.Jobs[0].Age != 25*time.Second || s2.Jobs[0].UpdatedAt != s1.CollectedAt {
		t.Fatalf("jobs after failure = %+v", s2.Jobs)
	}
	for _, v := range s2.Jobs[0].Vertices {
		if !v.Stale || v.Age != 25*time.Second || len(v.Subtasks) != v.Parallelism {
			t.Errorf("vertex %s: stale %v age %v subtasks %d", v.ID, v.Stale, v.Age, len(v.Subtasks))
		}
	}
	if s2.FlinkVersion != "2.2.1" {
		t.Errorf("FlinkVersion = %q", s2.FlinkVersion)
	}
	// The published snapshot of the first poll is unchanged.
	if s1.Jobs[0].Stale || s1.Jobs[0].Vertices[0].Stale {
		t.Error("carrying jobs over modified the previous snapshot")
	}

	f.setFault("/jobs/overview", nil)
	clock.add(10 * time.Second)
	s3 := c.PollOnce(context.Background())
	if s3.Err != nil || s3.Jobs[0].Stale || s3.Jobs[0].Age != 0 || s3.Jobs[0].UpdatedAt != s3.CollectedAt {
		t.Errorf("after recovery: err %v, job %+v", s3.Err, s3.Jobs[0].Freshness)
	}
}

// TestPollVertexDownThenUp: one vertex failing keeps its last values,
// stale with age and its error, while the other vertex is fresh.
func TestPollVertexDownThenUp(t *testing.T) {
	f := newFakeFlink(t, "1.20.5")
	srv := f.start()
	c := newTestCollector(t, Config{URL: srv.URL})
	clock := newTestClock()
	clock.install(c)

	s1 := c.PollOnce(context.Background())
	k1 := findVertex(t, s1.Jobs[0], f.keyedID)

	f.setFault(f.jobPath("vertices", f.keyedID, "metrics"), func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"errors":["metrics unavailable"]}`))
	})
	clock.add(12 * time.Second)
	s2 := c.PollOnce(context.Background())
	k2 := findVertex(t, s2.Jobs[0], f.keyedID)
	if k2.Err == nil || !strings.Contains(k2.Err.Error(), "metrics unavailable") {
		t.Errorf("keyed vertex Err = %v", k2.Err)
	}
	if !k2.Stale || k2.Age != 12*time.Second {
		t.Errorf("keyed vertex freshness = %+v, want stale, 12s", k2.Freshness)
	}
	if !nearAll(column(k2, func(s SubtaskSnapshot) float64 { return s.RecordsInPerSecond }), column(k1, func(s SubtaskSnapshot) float64 { return s.RecordsInPerSecond })) {
		t.Error("stale vertex did not keep its last values")
	}
	if s2.Jobs[0].Err == nil || !strings.Contains(s2.Jobs[0].Err.Error(), f.keyedID) {
		t.Errorf("job Err = %v, want the vertex's error", s2.Jobs[0].Err)
	}
	if src := findVertex(t, s2.Jobs[0], f.sourceID); src.Stale || src.Err != nil {
		t.Errorf("source vertex: stale %v, err %v", src.Stale, src.Err)
	}

	// Still down: the age grows from the last good poll.
	clock.add(10 * time.Second)
	if k := findVertex(t, c.PollOnce(context.Background()).Jobs[0], f.keyedID); k.Age != 22*time.Second {
		t.Errorf("second failure: age %v, want 22s", k.Age)
	}

	f.setFault(f.jobPath("vertices", f.keyedID, "metrics"), nil)
	clock.add(10 * time.Second)
	s4 := c.PollOnce(context.Background())
	if k := findVertex(t, s4.Jobs[0], f.keyedID); k.Stale || k.Err != nil || k.Age != 0 {
		t.Errorf("after recovery: %+v err %v", k.Freshness, k.Err)
	}
}

// TestPollRequestsInParallel: a poll has more than one request in flight
// at a time, and never more than DefaultMaxInFlight. In a synctest bubble
// every request the collector has sent is in flight while the fake
// JobManager's 5 ms pass, so the count does not depend on the machine.
func TestPollRequestsInParallel(t *testing.T) {
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFakeFlink(t, version)
				f.delay = 5 * time.Millisecond
				c := newTestCollector(t, Config{URL: "http://flink.test"}, WithHTTPClient(&http.Client{Transport: handlerTransport{f}}))
				if s := c.PollOnce(context.Background()); s.Err != nil || len(s.Jobs) != 1 {
					t.Fatalf("poll: err %v, %d jobs", s.Err, len(s.Jobs))
				}
				f.mu.Lock()
				seen := f.maxInFlightSeen
				f.mu.Unlock()
				if seen > DefaultMaxInFlight || seen < 2 {
					t.Errorf("max requests in flight = %d, want 2..%d", seen, DefaultMaxInFlight)
				}
			})
		})
	}
}

// TestPollTimeout: a request that never answers ends the poll after
// RequestTimeout, and the poll is published with the vertex stale and its
// deadline error. In a synctest bubble the other requests take no time,
// so the poll takes exactly RequestTimeout.
func TestPollTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeFlink(t, "2.2.1")
		f.setFault(f.jobPath("vertices", f.sourceID, "metrics"), func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		})
		const timeout = 300 * time.Millisecond
		c := newTestCollector(t, Config{URL: "http://flink.test", RequestTimeout: timeout},
			WithHTTPClient(&http.Client{Transport: handlerTransport{f}}))
		start := time.Now()
		s := c.PollOnce(context.Background())
		if d := time.Since(start); d != timeout {
			t.Errorf("PollOnce took %v with a %v RequestTimeout, want %[2]v", d, timeout)
		}
		if c.published() != s {
			t.Error("a poll cut short by RequestTimeout was not published")
		}
		if len(s.Jobs) != 1 {
			t.Fatalf("poll: err %v, %d jobs, want 1", s.Err, len(s.Jobs))
		}
		src := findVertex(t, s.Jobs[0], f.sourceID)
		if !errors.Is(src.Err, context.DeadlineExceeded) || !src.Stale {
			t.Errorf("source vertex: err %v, stale %v; want a deadline error, stale", src.Err, src.Stale)
		}
	})
}

func TestPollBadResponses(t *testing.T) {
	job, err := os.ReadFile(filepath.Join("..", "testdata", "flink", "2.2.1", "job.json"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		path    func(f *fakeFlink) string
		body    func(w http.ResponseWriter)
		check   func(t *testing.T, f *fakeFlink, s *Snapshot)
		wantErr string
		// noBackpressureMetric leaves backPressuredTimeMsPerSecond out of
		// the keyed vertex's values, so that the collector asks
		// /backpressure for the level.
		noBackpressureMetric bool
	}{
		{
			name: "truncated job",
			path: func(f *fakeFlink) string { return f.jobPath() },
			body: func(w http.ResponseWriter) { w.Write(job[:len(job)/2]) },
			check: func(t *testing.T, f *fakeFlink, s *Snapshot) {
				j := s.Jobs[0]
				if j.Err == nil || !strings.Contains(j.Err.Error(), "unexpected end of JSON") || !j.Stale || len(j.Vertices) != 0 {
					t.Errorf("job: err %v, stale %v, %d vertices", j.Err, j.Stale, len(j.Vertices))
				}
			},
		},
		{
			name: "wrong types in the job list",
			path: func(*fakeFlink) string { return "/jobs/overview" },
			body: func(w http.ResponseWriter) { w.Write([]byte(`{"jobs":[{"jid":5,"state":["RUNNING"]}]}`)) },
			check: func(t *testing.T, f *fakeFlink, s *Snapshot) {
				if s.Err == nil || !strings.Contains(s.Err.Error(), "jid") || len(s.Jobs) != 0 {
					t.Errorf("Snapshot.Err = %v, %d jobs", s.Err, len(s.Jobs))
				}
			},
		},
		{
			name: "wrong types in checkpoints",
			path: func(f *fakeFlink) string { return f.jobPath("checkpoints") },
			body: func(w http.ResponseWriter) { w.Write([]byte(`{"latest":{"completed":{"id":"eleven"}}}`)) },
			check: func(t *testing.T, f *fakeFlink, s *Snapshot) {
				j := s.Jobs[0]
				if j.Err == nil || !strings.Contains(j.Err.Error(), "checkpoints") || j.LatestCheckpoint != nil {
					t.Errorf("job: err %v, latest %+v", j.Err, j.LatestCheckpoint)
				}
				// The vertices are still read; without a checkpoint no sizes.
				if k := findVertex(t, j, f.keyedID); k.Stale || k.Subtasks[0].StateSize != -1 || math.IsNaN(k.Subtasks[0].BusyRatio) {
					t.Errorf("keyed vertex: %+v", k)
				}
			},
		},
		{
			name:                 "huge backpressure body",
			noBackpressureMetric: true,
			path:                 func(f *fakeFlink) string { return f.jobPath("vertices", f.keyedID, "backpressure") },
			body: func(w http.ResponseWriter) {
				chunk := bytes.Repeat([]byte(" "), 1<<20)
				w.Write([]byte(`{"status":"ok","subtasks":[`))
				for range 40 {
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
			},
			check: func(t *testing.T, f *fakeFlink, s *Snapshot) {
				k := findVertex(t, s.Jobs[0], f.keyedID)
				var se *SizeLimitError
				if !errors.As(k.Err, &se) {
					t.Errorf("keyed vertex Err = %v, want a SizeLimitError", k.Err)
				}
				// Backpressure is optional: the metrics are still current.
				if k.Stale || k.BackpressureLevel != "" || !near(k.Subtasks[0].BusyRatio, 0.035) {
					t.Errorf("keyed vertex: stale %v, level %q, busy %v", k.Stale, k.BackpressureLevel, k.Subtasks[0].BusyRatio)
				}
			},
		},
		{
			name:                 "backpressure deprecated without data",
			noBackpressureMetric: true,
			path:                 func(f *fakeFlink) string { return f.jobPath("vertices", f.keyedID, "backpressure") },
			body:                 func(w http.ResponseWriter) { w.Write([]byte(`{"status":"deprecated"}`)) },
			check: func(t *testing.T, f *fakeFlink, s *Snapshot) {
				k := findVertex(t, s.Jobs[0], f.keyedID)
				if k.Err != nil || k.BackpressureLevel != "" {
					t.Errorf("keyed vertex: err %v, level %q", k.Err, k.BackpressureLevel)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeFlink(t, "2.2.1")
			srv := f.start()
			if tc.noBackpressureMetric {
				countLists(f, f.jobPath("vertices", f.keyedID, "metrics")).setEdit(func(it map[string]any) bool {
					id, _ := it["id"].(string)
					return !strings.HasSuffix(id, "."+metricBackPressured)
				})
			}
			f.setFault(tc.path(f), func(w http.ResponseWriter, r *http.Request) { tc.body(w) })
			c := newTestCollector(t, Config{URL: srv.URL})
			s := c.PollOnce(context.Background())
			tc.check(t, f, s)
		})
	}
}

// TestPollNaNMetrics: "NaN", non-numeric and missing metric values are NaN
// ratios, filled from /backpressure when it has data.
func TestPollNaNMetrics(t *testing.T) {
	values := `[{"id":"0.busyTimeMsPerSecond","value":"NaN"},{"id":"1.busyTimeMsPerSecond","value":"x"},{"id":"2.busyTimeMsPerSecond","value":"250"}]`
	for _, withBackpressure := range []bool{false, true} {
		t.Run(fmt.Sprint("backpressure=", withBackpressure), func(t *testing.T) {
			f := newFakeFlink(t, "2.2.1")
			srv := f.start()
			list := f.recordedBody("vertex-keyed-metrics-list")
			f.setFault(f.jobPath("vertices", f.keyedID, "metrics"), func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Query().Has("get") {
					w.Write([]byte(values))
					return
				}
				w.Write(list)
			})
			if !withBackpressure {
				f.setFault(f.jobPath("vertices", f.keyedID, "backpressure"), func(w http.ResponseWriter, r *http.Request) {
					w.Write([]byte(`{"status":"deprecated"}`))
				})
			}
			c := newTestCollector(t, Config{URL: srv.URL})
			k := findVertex(t, c.PollOnce(context.Background()).Jobs[0], f.keyedID)
			if k.Err != nil || k.Stale {
				t.Fatalf("keyed vertex: err %v, stale %v", k.Err, k.Stale)
			}
			busy := column(k, func(s SubtaskSnapshot) float64 { return s.BusyRatio })
			idle := column(k, func(s SubtaskSnapshot) float64 { return s.IdleRatio })
			in := column(k, func(s SubtaskSnapshot) float64 { return s.RecordsInPerSecond })
			// From the 2.2.1 recording of /backpressure.
			wantBusy, wantIdle := []float64{0.035, 0.007, 0.25, 0}, []float64{0.965, 0.993, 0.995, 1}
			if !withBackpressure {
				nan := math.NaN()
				wantBusy, wantIdle = []float64{nan, nan, 0.25, nan}, []float64{nan, nan, nan, nan}
			}
			same := func(got, want []float64) bool {
				return slices.EqualFunc(got, want, func(a, b float64) bool { return near(a, b) || math.IsNaN(a) && math.IsNaN(b) })
			}
			if !same(busy, wantBusy) || !same(idle, wantIdle) {
				t.Errorf("busy = %v, idle = %v; want %v, %v", busy, idle, wantBusy, wantIdle)
			}
			if !slices.ContainsFunc(in, math.IsNaN) || len(slices.DeleteFunc(slices.Clone(in), math.IsNaN)) != 0 {
				t.Errorf("RecordsInPerSecond = %v, want all NaN", in)
			}
		})
	}
}

func TestPollJobFilterAndOrder(t *testing.T) {
	extra := `{"jid":"%s","name":"%s","state":"%s","start-time":1,"end-time":2,"duration":1,"last-modification":2,"tasks":{}}`
	jobsOverview := func(f *fakeFlink) []byte {
		var o struct {
			Jobs []json.RawMessage `json:"jobs"`
		}
		if err := json.Unmarshal(f.recordedBody("jobs-overview"), &o); err != nil {
			t.Fatal(err)
		}
		o.Jobs = append(o.Jobs,
			json.RawMessage(fmt.Sprintf(extra, "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "b-canceled", "CANCELED")),
			json.RawMessage(fmt.Sprintf(extra, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "a-finished", "FINISHED")),
			json.RawMessage(fmt.Sprintf(extra, "cccccccccccccccccccccccccccccccc", "a-finished", "FINISHED")),
		)
		b, _ := json.Marshal(o)
		return b
	}
	cases := []struct {
		jobs []string
		want []string // names/ids in order
	}{
		{nil, []string{"skewscope-recording", "a-finished/aaaa", "a-finished/cccc", "b-canceled"}},
		{[]string{"skewscope-recording"}, []string{"skewscope-recording"}},
		{[]string{"cccccccccccccccccccccccccccccccc", "b-canceled"}, []string{"a-finished/cccc", "b-canceled"}},
		{[]string{"no-such-job"}, nil},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.jobs, ","), func(t *testing.T) {
			f := newFakeFlink(t, "2.2.1")
			srv := f.start()
			body := jobsOverview(f)
			f.setFault("/jobs/overview", func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
			c := newTestCollector(t, Config{URL: srv.URL, Jobs: tc.jobs})
			s := c.PollOnce(context.Background())
			var got []string
			for _, j := range s.Jobs {
				name := j.Name
				if j.Name == "a-finished" {
					name += "/" + j.ID[:4]
				}
				got = append(got, name)
				if j.State != "RUNNING" && (len(j.Vertices) != 0 || j.Err != nil || j.Stale) {
					t.Errorf("%s job %s has details: %+v", j.State, j.ID, j)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Jobs = %q, want %q", got, tc.want)
			}
			for _, id := range []string{"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"} {
				if n := f.requests("/jobs/" + id); n != 0 {
					t.Errorf("details of a non-running job requested %d times", n)
				}
			}
			wantDetails := 0
			if slices.Contains(tc.want, "skewscope-recording") {
				wantDetails = 1
			}
			if n := f.requests(f.jobPath()); n != wantDetails {
				t.Errorf("running job details requested %d times, want %d", n, wantDetails)
			}
		})
	}
}

// TestStateSizesCheckpointGone: a new latest checkpoint whose details are
// no longer in Flink's history keeps the last sizes, stale, and is asked for
// once; a restore is reported.
func TestStateSizesCheckpointGone(t *testing.T) {
	f := newFakeFlink(t, "2.2.1")
	srv := f.start()
	c := newTestCollector(t, Config{URL: srv.URL})
	clock := newTestClock()
	clock.install(c)
	s1 := c.PollOnce(context.Background())
	want := stateSizes(findVertex(t, s1.Jobs[0], f.keyedID))

	var cps map[string]any
	if err := json.Unmarshal(f.recordedBody("job-checkpoints"), &cps); err != nil {
		t.Fatal(err)
	}
	latest := cps["latest"].(map[string]any)
	latest["completed"].(map[string]any)["id"] = 12
	latest["restored"] = map[string]any{"id": 7, "restore_timestamp": 1796006880000, "is_savepoint": true, "external_path": "s3://bucket/sp-7"}
	body, _ := json.Marshal(cps)
	f.setFault(f.jobPath("checkpoints"), func(w http.ResponseWriter, r *http.Request) { w.Write(body) })

	clock.add(10 * time.Second)
	s2 := c.PollOnce(context.Background())
	k := findVertex(t, s2.Jobs[0], f.keyedID)
	if got := stateSizes(k); !slices.Equal(got, want) {
		t.Errorf("StateSize = %v, want the last good %v", got, want)
	}
	if k.StateCheckpointID != 11 || !k.StateFreshness.Stale || k.StateFreshness.Age != 10*time.Second || k.Err != nil {
		t.Errorf("state from %d, freshness %+v, err %v; want 11, stale 10s, no error", k.StateCheckpointID, k.StateFreshness, k.Err)
	}
	if k.Stale {
		t.Error("the vertex itself is stale")
	}
	r := s2.Jobs[0].Restored
	if r == nil || r.CheckpointID != 7 || !r.IsSavepoint || r.ExternalPath != "s3://bucket/sp-7" || r.At.UnixMilli() != 1796006880000 {
		t.Errorf("Restored = %+v", r)
	}
	gone := f.jobPath("checkpoints", "details", "12", "subtasks", f.keyedID)
	c.PollOnce(context.Background())
	if n := f.requests(gone); n != 1 {
		t.Errorf("%s requested %d times, want once", gone, n)
	}
}

func TestPollAuth(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFakeFlink(t, "2.2.1")
	srv := f.start()
	c := newTestCollector(t, Config{URL: srv.URL, BearerTokenFile: tokenFile})
	headers := func() []string {
		f.mu.Lock()
		defer f.mu.Unlock()
		h := slices.Compact(slices.Clone(f.auth))
		f.auth = nil
		return h
	}
	if s := c.PollOnce(context.Background()); s.Err != nil {
		t.Fatal(s.Err)
	}
	if h := headers(); !slices.Equal(h, []string{"Bearer first"}) {
		t.Errorf("Authorization headers = %q, want Bearer first", h)
	}
	if err := os.WriteFile(tokenFile, []byte("second"), 0o600); err != nil {
		t.Fatal(err)
	}
	c.PollOnce(context.Background())
	if h := headers(); !slices.Equal(h, []string{"Bearer second"}) {
		t.Errorf("after rotation Authorization headers = %q, want Bearer second", h)
	}
	// A vanished token file fails the requests without sending them.
	os.Remove(tokenFile)
	s := c.PollOnce(context.Background())
	if s.Err == nil || !strings.Contains(s.Err.Error(), "bearer token") || !strings.Contains(s.Err.Error(), tokenFile) {
		t.Errorf("Snapshot.Err = %v", s.Err)
	}
	if h := headers(); len(h) != 0 {
		t.Errorf("requests sent without a token: %q", h)
	}

	passFile := filepath.Join(dir, "pass")
	if err := os.WriteFile(passFile, []byte("pw1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	basic := func(u, p string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p)) }
	c = newTestCollector(t, Config{URL: srv.URL, BasicAuth: &BasicAuth{Username: "flink", PasswordFile: passFile}})
	c.PollOnce(context.Background())
	if h := headers(); !slices.Equal(h, []string{basic("flink", "pw1")}) {
		t.Errorf("basic auth headers = %q", h)
	}
	c = newTestCollector(t, Config{URL: srv.URL, BasicAuth: &BasicAuth{Username: "flink", Password: "inline"}})
	c.PollOnce(context.Background())
	if h := headers(); !slices.Equal(h, []string{basic("flink", "inline")}) {
		t.Errorf("basic auth headers = %q", h)
	}
}

func TestPollTLS(t *testing.T) {
	f := newFakeFlink(t, "1.20.5")
	srv := httptest.NewUnstartedServer(f)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the rejected handshakes below
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	c := newTestCollector(t, Config{URL: srv.URL, TLS: TLSConfig{CAFile: ca}})
	if s := c.PollOnce(context.Background()); s.Err != nil || s.FlinkVersion != "1.20.5" || len(s.Jobs) != 1 || s.Jobs[0].Err != nil {
		t.Fatalf("poll over TLS with the CA: err %v, version %q", s.Err, s.FlinkVersion)
	}
	// The test certificate is valid for example.com too.
	c = newTestCollector(t, Config{URL: srv.URL, TLS: TLSConfig{CAFile: ca, ServerName: "example.com"}})
	if s := c.PollOnce(context.Background()); s.Err != nil {
		t.Errorf("ServerName example.com: %v", s.Err)
	}
	c = newTestCollector(t, Config{URL: srv.URL, TLS: TLSConfig{CAFile: ca, ServerName: "flink.invalid"}})
	if s := c.PollOnce(context.Background()); s.Err == nil || !strings.Contains(s.Err.Error(), "certificate") {
		t.Errorf("wrong ServerName: err %v, want a certificate error", s.Err)
	}
	c = newTestCollector(t, Config{URL: srv.URL})
	if s := c.PollOnce(context.Background()); s.Err == nil || !strings.Contains(s.Err.Error(), "certificate") {
		t.Errorf("without the CA: err %v, want a certificate error", s.Err)
	}
	c = newTestCollector(t, Config{URL: srv.URL, TLS: TLSConfig{InsecureSkipVerify: true}})
	if s := c.PollOnce(context.Background()); s.Err != nil {
		t.Errorf("InsecureSkipVerify: %v", s.Err)
	}
}

// handlerTransport serves requests in memory, so that polling runs inside
// a synctest bubble. A request whose context ended while the handler ran
// fails with the context's error, as over a real connection.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.RequestURI = r.URL.RequestURI()
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

// TestRunSchedule: Run polls at once, then PollInterval after each poll
// ends; polls never overlap; Run returns when ctx is cancelled.
func TestRunSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeFlink(t, "2.2.1")
		var mu sync.Mutex
		var starts []time.Duration
		active, overlapped := 0, false
		t0 := time.Now()
		f.setFault("/overview", func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			starts = append(starts, time.Since(t0))
			active++
			overlapped = overlapped || active > 1
			mu.Unlock()
			time.Sleep(3 * time.Second) // a slow poll
			mu.Lock()
			active--
			mu.Unlock()
			f.rs.ServeHTTP(w, r)
		})
		c := newTestCollector(t, Config{URL: "http://flink.test", PollInterval: 10 * time.Second},
			WithHTTPClient(&http.Client{Transport: handlerTransport{f}}))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { c.Run(ctx); close(done) }()
		time.Sleep(30 * time.Second)
		synctest.Wait()
		if s := c.published(); s == nil || s.Err != nil || len(s.Jobs) != 1 {
			t.Errorf("published() = %+v", s)
		}
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		want := []time.Duration{0, 13 * time.Second, 26 * time.Second}
		if !slices.Equal(starts, want) || overlapped {
			t.Errorf("polls started at %v (overlap %v), want %v", starts, overlapped, want)
		}
	})
}

// TestRunStopsPromptly: cancelling Run during a hanging request returns
// at once, without waiting for RequestTimeout (an hour) or any other
// timer: in a synctest bubble no time passes between the cancel and Run's
// return. A cancelled poll is not published, and Close also stops a Run
// whose context lives on.
func TestRunStopsPromptly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeFlink(t, "2.2.1")
		f.setFault("/jobs/overview", func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		})
		hc := &http.Client{Transport: handlerTransport{f}}
		c := newTestCollector(t, Config{Name: "stop", URL: "http://flink.test", RequestTimeout: time.Hour}, WithHTTPClient(hc))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { c.Run(ctx); close(done) }()
		synctest.Wait() // the poll hangs on /jobs/overview
		start := time.Now()
		cancel()
		<-done
		if d := time.Since(start); d != 0 {
			t.Errorf("Run returned %v after cancel, want at once", d)
		}
		if c.published() != nil {
			t.Error("a cancelled poll was published")
		}

		f.setFault("/jobs/overview", nil)
		c2 := newTestCollector(t, Config{Name: "close", URL: "http://flink.test", PollInterval: time.Hour}, WithHTTPClient(hc))
		done2 := make(chan struct{})
		go func() { c2.Run(context.Background()); close(done2) }()
		synctest.Wait() // the first poll is done; Run waits an hour for the next
		if c2.published() == nil {
			t.Fatal("no poll published before Close")
		}
		start = time.Now()
		c2.Close()
		<-done2
		if d := time.Since(start); d != 0 {
			t.Errorf("Run returned %v after Close, want at once", d)
		}
	})
}

// TestRunCancelLeavesNoGoroutines: after Run is cancelled during a hanging
// request to a real HTTP server, and Close, nothing of the collector is
// left running.
func TestRunCancelLeavesNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	f := newFakeFlink(t, "2.2.1")
	srv := httptest.NewServer(f)
	arrived := make(chan struct{}, 1)
	f.setFault("/jobs/overview", func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	})
	c, err := NewCollector(Config{Name: "stop", URL: srv.URL, RequestTimeout: time.Hour}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	<-arrived
	cancel()
	select {
	case <-done:
	case <-time.After(time.Minute): // a hang guard: TestRunStopsPromptly checks that it is at once
		t.Fatal("Run did not return after cancel")
	}
	c.Close()
	srv.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after Run and Close, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

func TestConfigValidate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "present")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	ok := Config{Name: "prod-1", URL: "https://flink.example/api/"}
	cases := []struct {
		name string
		edit func(*Config)
		want string // "" = valid
	}{
		{"valid", func(*Config) {}, ""},
		{"valid with everything", func(c *Config) {
			c.BearerTokenFile = file
			c.TLS = TLSConfig{CAFile: file, CertFile: file, KeyFile: file, ServerName: "x"}
			c.Jobs = []string{"a"}
			c.PollInterval, c.RequestTimeout = time.Second, time.Second
		}, ""},
		{"no name", func(c *Config) { c.Name = "" }, "name: required"},
		{"bad name", func(c *Config) { c.Name = "prod 1" }, `name: "prod 1" must match ^[A-Za-z0-9._-]{1,64}$`},
		{"long name", func(c *Config) { c.Name = strings.Repeat("a", 65) }, `name: "` + strings.Repeat("a", 65) + `" must match ^[A-Za-z0-9._-]{1,64}$`},
		{"no url", func(c *Config) { c.URL = "" }, "url: required"},
		{"relative url", func(c *Config) { c.URL = "flink:8081" }, `url: "flink:8081": scheme must be http or https`},
		{"no host", func(c *Config) { c.URL = "http:///x" }, `url: "http:///x": must be absolute (scheme://host[:port]/…)`},
		{"user info", func(c *Config) { c.URL = "https://admin:hunter2@flink.example/" }, "url: must not contain user info; use basicAuth"},
		{"unparsable", func(c *Config) { c.URL = "http://a b:pw@x/%zz" }, "url: not a URL"},
		{"two auth forms", func(c *Config) { c.BearerToken = "t"; c.BasicAuth = &BasicAuth{Username: "u"} }, "authorization.bearerToken, authorization.bearerTokenFile, basicAuth: at most one may be set"},
		{"basic auth", func(c *Config) { c.BasicAuth = &BasicAuth{Password: "p", PasswordFile: missing} }, strings.Join([]string{
			"basicAuth.username: required",
			"basicAuth.password, basicAuth.passwordFile: at most one may be set",
			"basicAuth.passwordFile: stat " + missing + ": no such file or directory",
		}, "\n")},
		{"cert without key", func(c *Config) { c.TLS.CertFile = file }, "tls.certFilepath, tls.keyFilepath: set both or neither"},
		{"files missing", func(c *Config) { c.BearerTokenFile = missing; c.TLS.CAFile = missing }, strings.Join([]string{
			"authorization.bearerTokenFile: stat " + missing + ": no such file or directory",
			"tls.caFilepath: stat " + missing + ": no such file or directory",
		}, "\n")},
		{"empty job", func(c *Config) { c.Jobs = []string{"a", " "} }, "jobs[1]: empty"},
		{"fast poll", func(c *Config) { c.PollInterval = 500 * time.Millisecond }, "pollInterval: 500ms is below the minimum of 1s"},
		{"negative maxJobs", func(c *Config) { c.MaxJobs = -1 }, "maxJobs: -1 is outside 1..100000 (0 means 500)"},
		{"huge maxJobs", func(c *Config) { c.MaxJobs = 100_001 }, "maxJobs: 100001 is outside 1..100000 (0 means 500)"},
		{"negative durations", func(c *Config) { c.PollInterval, c.RequestTimeout = -time.Second, -time.Second }, "pollInterval: -1s is below the minimum of 1s\nrequestTimeout: -1s is negative"},
		{"everything wrong", func(c *Config) { *c = Config{BearerToken: "t", BearerTokenFile: file} }, "name: required\nurl: required\nauthorization.bearerToken, authorization.bearerTokenFile, basicAuth: at most one may be set"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("Validate() = %q, want %q", got, tc.want)
			}
			var errs collectors.FieldErrors
			if err != nil && (!errors.As(fmt.Errorf("wrapped: %w", err), &errs) || len(errs) != strings.Count(tc.want, "\n")+1) {
				t.Errorf("Validate() = %#v, want one collectors.FieldError a line", err)
			}
			if strings.Contains(got, "hunter2") {
				t.Errorf("Validate() leaks the password: %q", got)
			}
		})
	}
}

func TestConfigWithDefaults(t *testing.T) {
	c := Config{}.WithDefaults()
	if c.PollInterval != 10*time.Second || c.RequestTimeout != 10*time.Second {
		t.Errorf("WithDefaults() = %v, %v; want 10s, 10s", c.PollInterval, c.RequestTimeout)
	}
	c = Config{PollInterval: 2 * time.Second, RequestTimeout: time.Second}.WithDefaults()
	if c.PollInterval != 2*time.Second || c.RequestTimeout != time.Second {
		t.Errorf("WithDefaults() changed set values: %v, %v", c.PollInterval, c.RequestTimeout)
	}
}

func TestConfigRedacted(t *testing.T) {
	cfgs := []Config{
		{Name: "a", URL: "https://flink.example/", BearerToken: "sekrit-token"},
		{Name: "b", URL: "https://flink.example/", BasicAuth: &BasicAuth{Username: "u", Password: "sekrit-pass"}},
	}
	for _, c := range cfgs {
		var logBuf bytes.Buffer
		slog.New(slog.NewTextHandler(&logBuf, nil)).Info("endpoint", "config", c)
		for _, out := range []string{c.String(), fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), logBuf.String()} {
			if strings.Contains(out, "sekrit") {
				t.Errorf("secret in %q", out)
			}
			if !strings.Contains(out, "[redacted]") || !strings.Contains(out, "flink.example") {
				t.Errorf("%q lacks the redacted marker or the URL", out)
			}
		}
	}
}

// TestOnSnapshotGetsEveryPublishedSnapshot: the callback receives the
// snapshot of each published poll, and none from a poll cut short by the
// caller's cancellation.
func TestOnSnapshotGetsEveryPublishedSnapshot(t *testing.T) {
	f := newFakeFlink(t, "2.2.1")
	srv := f.start()
	c := newTestCollector(t, Config{URL: srv.URL})
	var got []*Snapshot
	c.OnSnapshot(func(s *Snapshot) { got = append(got, s) })
	s1 := c.PollOnce(context.Background())
	s2 := c.PollOnce(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.PollOnce(ctx)
	if len(got) != 2 || got[0] != s1 || got[1] != s2 || c.published() != s2 {
		t.Fatalf("OnSnapshot got %d snapshots, want exactly the two published ones, in order", len(got))
	}
}

// TestSourceRecordsInPrefersOperator: up to Flink 1.20 a source task's
// numRecordsInPerSecond is 0 (FLINK-33681), so the source operator's own
// meter is used where it has a value; a subtask whose operator value is
// "NaN" or missing keeps the task-scope value.
func TestSourceRecordsInPrefersOperator(t *testing.T) {
	f := newFakeFlink(t, "1.20.5")
	srv := f.start()
	operatorIn := map[string]string{
		"0.Source__Kafka_Source.numRecordsInPerSecond": "80.0",
		"1.Source__Kafka_Source.numRecordsInPerSecond": "NaN",
	}
	f.setFault(f.jobPath("vertices", f.sourceID, "metrics"), func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		f.rs.ServeHTTP(rec, r)
		get := r.URL.Query().Get("get")
		if get == "" {
			w.Write(rec.Body.Bytes())
			return
		}
		var ms []map[string]string
		if err := json.Unmarshal(rec.Body.Bytes(), &ms); err != nil {
			t.Errorf("recorded metric values: %v", err)
		}
		for _, id := range strings.Split(get, ",") {
			if v, ok := operatorIn[id]; ok {
				ms = append(ms, map[string]string{"id": id, "value": v})
			}
		}
		json.NewEncoder(w).Encode(ms)
	})
	c := newTestCollector(t, Config{URL: srv.URL})
	s := c.PollOnce(context.Background())
	if s.Err != nil || len(s.Jobs) != 1 || len(s.Jobs[0].Vertices) == 0 {
		t.Fatalf("PollOnce() = %+v", s)
	}
	src := s.Jobs[0].Vertices[0]
	got := column(src, func(s SubtaskSnapshot) float64 { return s.RecordsInPerSecond })
	if want := []float64{80, 0, 0}; !src.Source || !nearAll(got, want) {
		t.Errorf("source vertex (Source %v) RecordsInPerSecond = %v, want %v", src.Source, got, want)
	}
}

// TestPollRestartSignals: numRestarts and latest.restored as the job
// reports them, and what is done with impossible values.
func TestPollRestartSignals(t *testing.T) {
	restored := `{"id":%d,"restore_timestamp":%d,"is_savepoint":false,"external_path":"file:/chk"}`
	cases := []struct {
		name         string
		numRestarts  string // body of /jobs/:id/metrics, "" for a 500
		restored     string // latest.restored, "" to keep the recording's null
		wantRestarts int64
		wantRestored int64 // checkpoint id, -1 for nil
		wantErr      bool
	}{
		{"counted", `[{"id":"numRestarts","value":"3"}]`, fmt.Sprintf(restored, 11, 1796006880000), 3, 11, false},
		{"metric missing", `[]`, "", -1, -1, false},
		{"negative", `[{"id":"numRestarts","value":"-2"}]`, "", -1, -1, false},
		{"not a number", `[{"id":"numRestarts","value":"many"}]`, "", -1, -1, false},
		{"metrics down", "", "", -1, -1, true},
		{"restore with a negative id", `[{"id":"numRestarts","value":"1"}]`, fmt.Sprintf(restored, -1, 1796006880000), 1, -1, false},
		{"restore with a negative time", `[{"id":"numRestarts","value":"1"}]`, fmt.Sprintf(restored, 4, -5), 1, -1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeFlink(t, "2.2.1")
			srv := f.start()
			f.setFault(f.jobPath("metrics"), func(w http.ResponseWriter, r *http.Request) {
				if tc.numRestarts == "" {
					w.WriteHeader(http.StatusInternalServerError)
					w.Write([]byte(`{"errors":["metrics down"]}`))
					return
				}
				w.Write([]byte(tc.numRestarts))
			})
			if tc.restored != "" {
				body := bytes.Replace(f.recordedBody("job-checkpoints"), []byte(`"restored": null`), []byte(`"restored": `+tc.restored), 1)
				if bytes.Equal(body, f.recordedBody("job-checkpoints")) {
					t.Fatal("the recording has no null latest.restored to replace")
				}
				f.setFault(f.jobPath("checkpoints"), func(w http.ResponseWriter, r *http.Request) { w.Write(body) })
			}
			c := newTestCollector(t, Config{URL: srv.URL})
			j := c.PollOnce(context.Background()).Jobs[0]
			if j.NumRestarts != tc.wantRestarts {
				t.Errorf("NumRestarts = %d, want %d", j.NumRestarts, tc.wantRestarts)
			}
			switch {
			case tc.wantRestored < 0 && j.Restored != nil:
				t.Errorf("Restored = %+v, want nil", j.Restored)
			case tc.wantRestored >= 0 && (j.Restored == nil || j.Restored.CheckpointID != tc.wantRestored):
				t.Errorf("Restored = %+v, want checkpoint %d", j.Restored, tc.wantRestored)
			}
			if (j.Err != nil) != tc.wantErr || (tc.wantErr && !strings.Contains(j.Err.Error(), "metrics down")) {
				t.Errorf("job Err = %v, want error %v", j.Err, tc.wantErr)
			}
			if v := findVertex(t, j, f.sourceID); v.Stale || v.Err != nil {
				t.Errorf("source vertex: stale %v, err %v", v.Stale, v.Err)
			}
		})
	}
}
