package livebench

import (
	"testing"
	"time"

	"github.com/skewscope/skewscope/live"
)

// TestPollMovesTheView: each poll makes a vertex view of every partition,
// with one more sparkline sample (up to the store's cap) and moved figures.
func TestPollMovesTheView(t *testing.T) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	src := New(Config{Partitions: 1200, Parallelism: 8}, live.Options{Now: func() time.Time { return at }, SparkPoints: 5})
	src.Fill(4, time.Second, at)
	q := live.VertexQuery{Color: "lag", Highlight: -1}
	before, err := src.Store().State().Vertex(Job, Vertex, q)
	if err != nil {
		t.Fatal(err)
	}
	at = at.Add(time.Second)
	src.Poll(at)
	after, err := src.Store().State().Vertex(Job, Vertex, q)
	if err != nil {
		t.Fatal(err)
	}
	if src.polls != 5 {
		t.Errorf("%d polls, want 5", src.polls)
	}
	if before.Prediction.Total != 1200 || after.Prediction.Total != 1200 {
		t.Errorf("views of %d and %d partitions, want 1200 (3 topics)", before.Prediction.Total, after.Prediction.Total)
	}
	if got := after.Flink.At; !got.Equal(at) {
		t.Errorf("view collected at %v, want the last poll's %v", got, at)
	}
	moved := 0
	for i, r := range after.Subtasks {
		if r.Lag != before.Subtasks[i].Lag || r.Rate != before.Subtasks[i].Rate {
			moved++
		}
	}
	if len(after.Subtasks) != 8 || moved < 6 {
		t.Errorf("%d of %d subtasks' lag or rate moved in a poll, want most of 8", moved, len(after.Subtasks))
	}
	if n, m := len(before.SparkTimes), len(after.SparkTimes); n != 4 || m != 5 {
		t.Errorf("sparklines of %d then %d samples, want 4 then 5", n, m)
	}
}

// BenchmarkPoll10k is one poll of the 10,000-partition source: building
// both snapshots and the store's update.
func BenchmarkPoll10k(b *testing.B) {
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	src := New(Config{Partitions: 10_000, Parallelism: 64}, live.Options{})
	src.Fill(360, time.Second, at)
	for b.Loop() {
		at = at.Add(time.Second)
		src.Poll(at)
	}
}
