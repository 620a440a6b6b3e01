package fakejm_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/internal/fakejm"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/web"
)

// startFake serves a fake JobManager and returns a collector polling it.
func startFake(t testing.TB, cfg fakejm.Config) (*fakejm.Handler, *flink.Collector) {
	return startFakeWith(t, cfg, flink.Config{})
}

// startFakeWith is startFake with the collector's configuration fc (its
// name, URL and request timeout filled in).
func startFakeWith(t testing.TB, cfg fakejm.Config, fc flink.Config) (*fakejm.Handler, *flink.Collector) {
	t.Helper()
	h, err := fakejm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	fc.Name, fc.URL, fc.RequestTimeout = "fake", srv.URL, time.Minute
	c, err := flink.NewCollector(fc, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return h, c
}

// TestCollectorReadsFake: the collector gets a complete snapshot from the
// fake, asks it nothing it cannot answer, and observes every partition
// under the subtask Flink's KafkaSource assigns it to.
func TestCollectorReadsFake(t *testing.T) {
	cfg := fakejm.Config{Jobs: 3, Parallelism: 8, Partitions: 30, Topics: []assign.Topic{{Name: "orders"}, {Name: "payments.v1"}, {Name: "refunds"}}, EventTime: true}
	h, c := startFake(t, cfg)
	topics := []string{"orders", "payments.v1", "refunds"}
	var prevOffsets map[flink.KafkaPartition]int64
	for poll := range 3 {
		before := h.Stats()
		s := c.PollOnce(context.Background())
		st := h.Stats().Sub(before)
		if st.Failed() != 0 {
			t.Fatalf("poll %d: the fake could not answer %d requests: %q", poll, st.Failed(), st.Unanswered)
		}
		if s.Err != nil || s.FlinkVersion != fakejm.FlinkVersion || len(s.Jobs) != cfg.Jobs {
			t.Fatalf("poll %d: snapshot err %v, version %q, %d jobs; want no error, %s, %d jobs", poll, s.Err, s.FlinkVersion, len(s.Jobs), fakejm.FlinkVersion, cfg.Jobs)
		}
		// One id list per source vertex on the first poll, none after:
		// nothing restarts.
		want := int64(cfg.Jobs)
		if poll > 0 {
			want = 0
		}
		if got := st.Kind(fakejm.KindMetricList).Requests; got != want {
			t.Errorf("poll %d: %d id list requests, want %d", poll, got, want)
		}
		offsets := map[flink.KafkaPartition]int64{}
		for _, j := range s.Jobs {
			if j.Err != nil || j.State != "RUNNING" || len(j.Vertices) != 3 || j.NumRestarts != 0 || j.LatestCheckpoint == nil {
				t.Fatalf("poll %d: job %s: err %v, state %s, %d vertices, %d restarts, checkpoint %v", poll, j.Name, j.Err, j.State, len(j.Vertices), j.NumRestarts, j.LatestCheckpoint)
			}
			src, keyed, sink := j.Vertices[0], j.Vertices[1], j.Vertices[2]
			if !src.Source || src.Keyed || !keyed.Keyed || keyed.Source || sink.Keyed || sink.Source {
				t.Errorf("job %s: vertex roles source %v/%v keyed %v/%v sink %v/%v", j.Name, src.Source, src.Keyed, keyed.Source, keyed.Keyed, sink.Source, sink.Keyed)
			}
			for _, v := range j.Vertices {
				if v.Err != nil || v.Parallelism != cfg.Parallelism || v.MaxParallelism != 128 || len(v.Subtasks) != cfg.Parallelism || v.BackpressureLevel == "" {
					t.Fatalf("job %s vertex %s: err %v, parallelism %d, max %d, %d subtasks, backpressure %q", j.Name, v.Name, v.Err, v.Parallelism, v.MaxParallelism, len(v.Subtasks), v.BackpressureLevel)
				}
				for _, st := range v.Subtasks {
					if sum := st.BusyRatio + st.IdleRatio + st.BackPressuredRatio; math.Abs(sum-1) > 1e-9 || st.RecordsInPerSecond <= 0 || st.Status != "RUNNING" {
						t.Errorf("job %s vertex %s subtask %d: busy+idle+backpressured %v, in %v/s, status %s", j.Name, v.Name, st.Index, sum, st.RecordsInPerSecond, st.Status)
					}
					if (v.Source || v.Keyed) && st.StateSize <= 0 {
						t.Errorf("job %s vertex %s subtask %d: state size %d", j.Name, v.Name, st.Index, st.StateSize)
					}
				}
			}
			if src.Kafka == nil || len(src.Kafka.States) != cfg.Partitions {
				t.Fatalf("job %s: Kafka observation %v, want %d partitions", j.Name, src.Kafka, cfg.Partitions)
			}
			owners := src.Kafka.Owners()
			if len(owners) != cfg.Partitions {
				t.Fatalf("job %s: %d partition owners, want %d", j.Name, len(owners), cfg.Partitions)
			}
			for _, o := range owners {
				real := flink.ResolveTopic(o.Topic, topics)
				if len(real) != 1 {
					t.Fatalf("topic %q in the ids resolves to %q", o.Topic, real)
				}
				want, err := assign.KafkaSplitOwner(assign.TopicPartition{Topic: real[0], Partition: o.Partition}, cfg.Parallelism)
				if err != nil || o.Owner != want {
					t.Errorf("job %s: %s-%d owned by %d (%s), KafkaSplitOwner = %d", j.Name, real[0], o.Partition, o.Owner, o.Reason, want)
				}
			}
			if j.Name == s.Jobs[0].Name {
				for _, ps := range src.Kafka.States {
					offsets[ps.KafkaPartition] = ps.CurrentOffset
					if ps.CurrentOffset < 0 || ps.CommittedOffset < 0 || ps.CommittedOffset > ps.CurrentOffset+1 {
						t.Errorf("%v: current %d committed %d", ps.KafkaPartition, ps.CurrentOffset, ps.CommittedOffset)
					}
				}
			}
		}
		for p, off := range prevOffsets {
			if offsets[p] <= off {
				t.Errorf("poll %d: %v offset %d, was %d: want growing offsets", poll, p, offsets[p], off)
			}
		}
		prevOffsets = offsets
	}
}

// TestCollectorReadsFakeEventTime: with Config.EventTime every watermark
// a poll reads is of one instant: each vertex downstream reads the lowest
// source output, which is one of that reader's splits', so the dashboard
// names a holder; the next poll reads them ten seconds on. Without it the
// collector finds no event time and the job has none.
func TestCollectorReadsFakeEventTime(t *testing.T) {
	for _, on := range []bool{true, false} {
		cfg := fakejm.Config{Jobs: 2, Parallelism: 6, Partitions: 20, EventTime: on}
		h, c := startFake(t, cfg)
		st := live.New(live.Options{Flink: []live.Endpoint{{Name: "fake"}}})
		var prev int64
		for poll := range 2 {
			s := c.PollOnce(context.Background())
			if n := h.Stats().Failed(); s.Err != nil || n != 0 {
				t.Fatalf("event time %v, poll %d: %v, %d requests unanswered", on, poll, s.Err, n)
			}
			st.UpdateFlink(s)
			for _, j := range s.Jobs {
				src := j.Vertices[0]
				low := int64(math.MaxInt64)
				for _, sub := range src.Subtasks {
					low = min(low, sub.EventTime.OutputWatermark)
				}
				for _, v := range j.Vertices[1:] {
					for _, sub := range v.Subtasks {
						if w := sub.EventTime.InputWatermark; on && w != low || !on && w != flink.WatermarkUnread {
							t.Errorf("event time %v, poll %d: %s %s subtask %d input watermark %d, want %d", on, poll, j.Name, v.Name, sub.Index, w, low)
						}
					}
				}
				jv, err := st.State().Job("fake", j.ID)
				if err != nil {
					t.Fatal(err)
				}
				if !on {
					if jv.EventTime != nil {
						t.Errorf("without event time, %s has event time %+v", j.Name, *jv.EventTime)
					}
					continue
				}
				if et := jv.EventTime; et == nil || et.WatermarkMs != low || et.Holder == nil || et.Holder.Cause == live.HoldUndetermined || et.Holder.Partition < 0 {
					t.Errorf("poll %d: %s event time %+v, want watermark %d and a partition holding it", poll, j.Name, et, low)
				} else if j.Name == s.Jobs[0].Name {
					if poll > 0 && low-prev != 10_000 {
						t.Errorf("poll %d: the watermark moved %d ms, want 10 s", poll, low-prev)
					}
					prev = low
				}
			}
		}
	}
}

// BenchmarkPoll measures one collector poll of a small fake cluster (the
// fake's cost included: it runs in the same process). cmd/jmload measures
// the large shapes with the collector alone.
func BenchmarkPoll(b *testing.B) {
	cfg := fakejm.Config{Jobs: 5, Parallelism: 16, Partitions: 64, EventTime: true}
	h, c := startFake(b, cfg)
	ctx := context.Background()
	c.PollOnce(ctx) // the first poll reads the checkpoint details
	h.Reset()
	b.ReportAllocs()
	for b.Loop() {
		if s := c.PollOnce(ctx); s.Err != nil || len(s.Jobs) != cfg.Jobs {
			b.Fatalf("poll: %v, %d jobs", s.Err, len(s.Jobs))
		}
	}
	st := h.Stats()
	if st.Failed() != 0 {
		b.Fatalf("unanswered requests: %q", st.Unanswered)
	}
	n := float64(b.N)
	b.ReportMetric(float64(st.Total.Requests)/n, "requests/op")
	b.ReportMetric(float64(st.Total.Bytes)/n, "resp-B/op")
	b.ReportMetric(float64(st.Kind(fakejm.KindMetricList).Bytes)/n, "list-B/op")
}

// TestCollectorCapsFinishedJobs: a session cluster listing 50,000 finished
// jobs besides its running ones. The snapshot keeps every running job and
// the most recently ended finished ones up to MaxJobs, counts the others,
// and asks the JobManager about nothing but the running jobs.
func TestCollectorCapsFinishedJobs(t *testing.T) {
	cfg := fakejm.Config{Jobs: 3, Parallelism: 2, Partitions: 4, Finished: 50_000}
	for _, c := range []struct {
		maxJobs, wantJobs int
	}{
		{0, flink.DefaultMaxJobs}, // the default
		{2, 3},                    // fewer than the running jobs: all of them, no finished one
	} {
		h, col := startFakeWith(t, cfg, flink.Config{MaxJobs: c.maxJobs})
		s := col.PollOnce(context.Background())
		st := h.Stats()
		if s.Err != nil || len(s.Jobs) != c.wantJobs || s.DroppedJobs != cfg.Jobs+cfg.Finished-c.wantJobs {
			t.Fatalf("maxJobs %d: snapshot err %v, %d jobs, %d dropped; want no error, %d jobs, %d dropped",
				c.maxJobs, s.Err, len(s.Jobs), s.DroppedJobs, c.wantJobs, cfg.Jobs+cfg.Finished-c.wantJobs)
		}
		running, newest := 0, map[string]bool{}
		for i := range c.wantJobs - cfg.Jobs {
			newest[fakejm.FinishedJobID(i)] = true
		}
		for _, j := range s.Jobs {
			switch {
			case j.State == "RUNNING":
				running++
			case !newest[j.ID]:
				t.Errorf("maxJobs %d: kept finished job %s (%s), not one of the %d most recently ended", c.maxJobs, j.Name, j.ID, len(newest))
			}
		}
		if running != cfg.Jobs {
			t.Errorf("maxJobs %d: %d running jobs kept, want all %d", c.maxJobs, running, cfg.Jobs)
		}
		if got := st.Kind(fakejm.KindJob).Requests; got != int64(cfg.Jobs) {
			t.Errorf("maxJobs %d: %d job detail requests, want %d (the running jobs only)", c.maxJobs, got, cfg.Jobs)
		}
		if st.Failed() != 0 || st.Kind(fakejm.KindJobsOverview).Requests != 1 {
			t.Errorf("maxJobs %d: %d unanswered requests (%q), %d job lists; want none, 1", c.maxJobs, st.Failed(), st.Unanswered, st.Kind(fakejm.KindJobsOverview).Requests)
		}
	}
}

// flapping serves h, with the first job left out of the job lists that
// omit says to (counted from 1).
type flapping struct {
	h     *fakejm.Handler
	mu    sync.Mutex
	lists int
	omit  func(list int) bool
}

func (f *flapping) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/jobs/overview" {
		f.h.ServeHTTP(w, r)
		return
	}
	f.mu.Lock()
	f.lists++
	omit := f.omit(f.lists)
	f.mu.Unlock()
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, r)
	var body struct {
		Jobs []json.RawMessage `json:"jobs"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if omit {
		body.Jobs = body.Jobs[1:]
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body)
}

// TestCollectorKeepsFlappingJob: a JobManager whose job list leaves a
// running job out every other poll. The job stays in every snapshot, marked
// as not listed (stale, its last values) in the polls that missed it, and
// is not asked about then; once lists leave it out more than
// MaxUnlistedPolls times in a row, it goes.
func TestCollectorKeepsFlappingJob(t *testing.T) {
	h, err := fakejm.New(fakejm.Config{Jobs: 3, Parallelism: 2, Partitions: 4})
	if err != nil {
		t.Fatal(err)
	}
	const alternating = 5 // polls 2 and 4 miss the job, 5 lists it, 6 on miss it
	f := &flapping{h: h, omit: func(list int) bool { return list <= alternating && list%2 == 0 || list > alternating }}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	col, err := flink.NewCollector(flink.Config{Name: "fake", URL: srv.URL, RequestTimeout: time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(col.Close)
	first := col.PollOnce(context.Background())
	if len(first.Jobs) != 3 {
		t.Fatalf("first poll: %d jobs, want 3", len(first.Jobs))
	}
	flapper := ""
	for poll := 2; poll <= alternating+flink.MaxUnlistedPolls+1; poll++ {
		before := h.Stats()
		s := col.PollOnce(context.Background())
		jobDetails := h.Stats().Sub(before).Kind(fakejm.KindJob).Requests
		omitted := poll <= alternating && poll%2 == 0 || poll > alternating
		gone := poll > alternating+flink.MaxUnlistedPolls
		want := 3
		if gone {
			want = 2
		}
		if s.Err != nil || len(s.Jobs) != want {
			t.Fatalf("poll %d: err %v, %d jobs; want no error, %d jobs", poll, s.Err, len(s.Jobs), want)
		}
		unlisted := 0
		for _, j := range s.Jobs {
			if j.Unlisted == 0 {
				if j.Stale || j.Err != nil {
					t.Errorf("poll %d: listed job %s stale %v, err %v; want fresh", poll, j.Name, j.Stale, j.Err)
				}
				continue
			}
			unlisted++
			if flapper == "" {
				flapper = j.ID
			}
			wantUnlisted := 1
			if poll > alternating {
				wantUnlisted = poll - alternating
			}
			if j.ID != flapper || !j.Stale || j.State != "RUNNING" || len(j.Vertices) != 3 || j.Unlisted != wantUnlisted {
				t.Errorf("poll %d: unlisted job %s (%s): stale %v, state %s, %d vertices, unlisted %d; want the omitted job, stale, RUNNING, 3 vertices, unlisted %d",
					poll, j.Name, j.ID, j.Stale, j.State, len(j.Vertices), j.Unlisted, wantUnlisted)
			}
		}
		if wantN := map[bool]int{true: 1, false: 0}[omitted && !gone]; unlisted != wantN {
			t.Errorf("poll %d: %d unlisted jobs, want %d", poll, unlisted, wantN)
		}
		wantDetails := int64(3)
		if omitted {
			wantDetails = 2
		}
		if jobDetails != wantDetails {
			t.Errorf("poll %d: %d job detail requests, want %d (the listed jobs)", poll, jobDetails, wantDetails)
		}
	}
}

// BenchmarkOverviewManyFinishedJobs measures a session cluster listing
// 50,000 finished jobs besides 3 running ones, from the JobManager to the
// rendered overview: one poll, the store update, GET / and GET
// /api/v1/overview, at the default maxJobs and with the limit at its
// largest (every job kept, as before there was one). It reports the jobs
// kept, the page's bytes and the heap in use afterwards (after a GC, with
// the fake's own encoded answers in it).
func BenchmarkOverviewManyFinishedJobs(b *testing.B) {
	for _, maxJobs := range []int{0, flink.MaxMaxJobs} {
		b.Run("maxJobs="+strconv.Itoa(maxJobs), func(b *testing.B) {
			_, col := startFakeWith(b, fakejm.Config{Jobs: 3, Parallelism: 2, Partitions: 4, Finished: 50_000}, flink.Config{MaxJobs: maxJobs})
			var page, api int
			var jobs int
			var heap uint64
			b.ReportAllocs()
			for b.Loop() {
				st := live.New(live.Options{})
				srv, err := web.NewServer(web.Options{Live: st})
				if err != nil {
					b.Fatal(err)
				}
				s := col.PollOnce(context.Background())
				st.UpdateFlink(s)
				jobs = len(s.Jobs)
				page = len(get(b, srv, "/"))
				api = len(get(b, srv, "/api/v1/overview"))
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				heap = ms.HeapInuse
				runtime.KeepAlive(st)
			}
			b.ReportMetric(float64(jobs), "jobs")
			b.ReportMetric(float64(page), "page-B")
			b.ReportMetric(float64(api), "api-B")
			b.ReportMetric(float64(heap)/(1<<20), "heap-MiB")
			if hwm := peakRSS(); hwm > 0 {
				b.ReportMetric(float64(hwm)/(1<<20), "peak-rss-MiB") // the process's, so run one case per process
			}
		})
	}
}

// peakRSS is the process's peak resident set (Linux VmHWM), 0 when unknown.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

func get(b *testing.B, h http.Handler, path string) []byte {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		b.Fatalf("GET %s = %d", path, rec.Code)
	}
	return rec.Body.Bytes()
}
