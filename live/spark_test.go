package live

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
)

// sparkPolls feeds the store one Kafka and one Flink poll at each offset
// from t0 (the fake clock follows) and returns the vertex's view.
func sparkPolls(t *testing.T, opts Options, p int, at ...time.Duration) VertexView {
	t.Helper()
	now := t0
	opts.Now = func() time.Time { return now }
	s := New(opts)
	for i, d := range at {
		now = t0.Add(d)
		s.UpdateKafka(kafkaSnap(now, ends(int64(2000+i))))
		cur := func(assign.TopicPartition) int64 { return 999 }
		v := sourceVertex("src", p, testTopics, freshOwner(p), cur)
		s.UpdateFlink(flinkSnap(now, flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", Vertices: []flink.VertexSnapshot{v}}))
	}
	vv, err := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	return vv
}

func every(step time.Duration, n int) []time.Duration {
	var ds []time.Duration
	for i := range n {
		ds = append(ds, time.Duration(i)*step)
	}
	return ds
}

func secs(ds ...time.Duration) []float64 {
	var xs []float64
	for _, d := range ds {
		xs = append(xs, float64(t0.Add(d).UnixMilli())/1000)
	}
	return xs
}

func TestSparkKeepsTheWindow(t *testing.T) {
	// Polls every 60 s for 20 minutes: the window (15 min) bounds them,
	// not the cap.
	vv := sparkPolls(t, Options{}, 4, every(time.Minute, 21)...)
	want := secs(every(time.Minute, 21)[5:]...) // 5 min … 20 min
	if diff := cmp.Diff(want, vv.SparkTimes); diff != "" {
		t.Errorf("SparkTimes (-want +got):\n%s", diff)
	}
	for _, r := range vv.Subtasks {
		if len(r.SparkLag) != len(want) || len(r.SparkRate) != len(want) {
			t.Errorf("subtask %d: %d lag and %d rate samples, want %d (one per time)", r.Subtask, len(r.SparkLag), len(r.SparkRate), len(want))
		}
	}
}

func TestSparkCapsTheCount(t *testing.T) {
	// Polls every second: the cap bounds them, well inside the window.
	vv := sparkPolls(t, Options{SparkPoints: 10}, 2, every(time.Second, 25)...)
	if diff := cmp.Diff(secs(every(time.Second, 25)[15:]...), vv.SparkTimes); diff != "" {
		t.Errorf("SparkTimes (-want +got):\n%s", diff)
	}
	for _, r := range vv.Subtasks {
		if len(r.SparkLag) != 10 || len(r.SparkRate) != 10 {
			t.Errorf("subtask %d: %d lag and %d rate samples, want 10", r.Subtask, len(r.SparkLag), len(r.SparkRate))
		}
	}
	// The newest lag is the newest poll's: end 2024, current 999.
	if got := vv.Subtasks[0].SparkLag[9]; got == 0 {
		t.Errorf("newest lag sample = %v, want the last poll's lag", got)
	}
}

func TestSparkUnevenPollsAndAWindowOfOne(t *testing.T) {
	at := []time.Duration{0, 2 * time.Second, 9 * time.Second, 40 * time.Minute}
	vv := sparkPolls(t, Options{}, 2, at...)
	// After a 40-minute gap only the newest sample is in the window.
	if diff := cmp.Diff(secs(40*time.Minute), vv.SparkTimes); diff != "" {
		t.Errorf("SparkTimes (-want +got):\n%s", diff)
	}
	vv = sparkPolls(t, Options{}, 2, at[:3]...)
	if diff := cmp.Diff(secs(at[:3]...), vv.SparkTimes); diff != "" {
		t.Errorf("SparkTimes of uneven polls (-want +got):\n%s", diff)
	}
}

func TestSparkStartsOverOnANewParallelism(t *testing.T) {
	now := t0
	s := New(Options{Now: func() time.Time { return now }})
	poll := func(p int) {
		now = now.Add(5 * time.Second)
		s.UpdateKafka(kafkaSnap(now, ends(2000)))
		v := sourceVertex("src", p, testTopics, freshOwner(p), func(assign.TopicPartition) int64 { return 999 })
		s.UpdateFlink(flinkSnap(now, flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", Vertices: []flink.VertexSnapshot{v}}))
	}
	for range 5 {
		poll(4)
	}
	poll(2)
	vv, err := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(vv.SparkTimes) != 1 || len(vv.Subtasks) != 2 || len(vv.Subtasks[0].SparkLag) != 1 || len(vv.Subtasks[1].SparkRate) != 1 {
		t.Errorf("after 4 → 2: %d times, %d subtasks, want 1 sample of each of 2", len(vv.SparkTimes), len(vv.Subtasks))
	}
}
