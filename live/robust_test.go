package live

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
)

// marshalEveryView builds and encodes every view of the store: the
// overview, each job, each vertex and each topic.
func marshalEveryView(t *testing.T, s *Store) {
	t.Helper()
	check := func(what string, v any, err error) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
			return
		}
		if _, err := json.Marshal(v); err != nil {
			t.Errorf("json.Marshal(%s) = %v", what, err)
		}
	}
	check("Overview", s.State().Overview(), nil)
	for _, r := range s.State().JobRefs() {
		jv, err := s.State().Job(r.Endpoint, r.ID)
		check("Job "+r.ID, jv, err)
		jv, vvs, err := s.State().JobDetail(r.Endpoint, r.ID)
		check("JobDetail "+r.ID, []any{jv, vvs}, err)
	}
	for _, jv := range s.State().Vertices() {
		vv, err := s.State().Vertex(jv[0], jv[1], VertexQuery{Highlight: -1})
		check("Vertex "+jv[1], vv, err)
	}
	s.mu.Lock()
	var topics [][2]string
	for name, ks := range s.kafka {
		for _, tp := range ks.Topics {
			topics = append(topics, [2]string{name, tp.Name})
		}
	}
	s.mu.Unlock()
	for _, tp := range topics {
		tv, err := s.State().Topic(tp[0], tp[1])
		check("Topic "+tp[1], tv, err)
	}
}

// TestViewsOfNonFiniteValues: a poll where Flink and the Kafka rates answer
// ±Inf and NaN still gives views that encode as JSON; non-finite values are
// unknown (-1).
func TestViewsOfNonFiniteValues(t *testing.T) {
	inf, ninf, nan := math.Inf(1), math.Inf(-1), math.NaN()
	s := New(Options{Now: func() time.Time { return t0 }})
	ks := kafkaSnap(t0, ends(1000))
	for i := range ks.Topics {
		for j := range ks.Topics[i].Partitions {
			ks.Topics[i].Partitions[j].Rate = []float64{inf, ninf, nan}[j%3]
		}
	}
	s.UpdateKafka(ks)
	src := sourceVertex("src", 4, testTopics, freshOwner(4), func(tp assign.TopicPartition) int64 { return 500 })
	keyed := flink.VertexSnapshot{ID: "keyed", Name: "Key Router", Parallelism: 4, MaxParallelism: 128, Keyed: true}
	for _, v := range []*flink.VertexSnapshot{&src, &keyed} {
		v.Subtasks = nil
		for i := range v.Parallelism {
			odd := []float64{inf, ninf, nan, 0.5}[i]
			v.Subtasks = append(v.Subtasks, flink.SubtaskSnapshot{Index: i, Status: "RUNNING", BusyRatio: odd, BackPressuredRatio: odd,
				IdleRatio: odd, RecordsInPerSecond: odd, RecordsOutPerSecond: odd, StateSize: -1})
		}
	}
	s.UpdateFlink(flinkSnap(t0, flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", NumRestarts: -1,
		Vertices: []flink.VertexSnapshot{src, keyed}}))
	s.UpdateFlink(flinkSnap(t0, flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", NumRestarts: -1,
		Vertices: []flink.VertexSnapshot{src, keyed}}))
	marshalEveryView(t, s)

	vv, err := s.State().Vertex("aa", "keyed", VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range vv.Subtasks[:3] {
		if r.Busy != -1 || r.RecordsIn != -1 || r.RecordsOut != -1 {
			t.Errorf("subtask %d: busy %v, in %v, out %v; want -1 (unknown) for non-finite values", r.Subtask, r.Busy, r.RecordsIn, r.RecordsOut)
		}
	}
}

// TestViewsOfImpossibleNumbers: a vertex with a parallelism Flink cannot
// have (negative, beyond 2^15, not matching its subtasks) does not panic
// the store or its views, and is not shown with those numbers.
func TestViewsOfImpossibleNumbers(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	s.UpdateKafka(kafkaSnap(t0, ends(1000)))
	neg := sourceVertex("neg", 4, testTopics, freshOwner(4), func(assign.TopicPartition) int64 { return 500 })
	neg.Parallelism = -1
	huge := sourceVertex("huge", 4, testTopics, freshOwner(4), func(assign.TopicPartition) int64 { return 500 })
	huge.Parallelism = 200000
	keyed := flink.VertexSnapshot{ID: "keyed", Name: "Key Router", Parallelism: -3, MaxParallelism: -1, Keyed: true}
	s.UpdateFlink(flinkSnap(t0, flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", NumRestarts: -1,
		Vertices: []flink.VertexSnapshot{neg, huge, keyed}}))
	marshalEveryView(t, s)
	for _, id := range []string{"neg", "huge", "keyed"} {
		vv, err := s.State().Vertex("aa", id, VertexQuery{Highlight: -1})
		if err != nil {
			t.Fatal(err)
		}
		if vv.Parallelism < 0 || vv.Parallelism > flink.MaxParallelism || len(vv.Subtasks) > 4 || vv.Error == "" || !vv.Flink.Stale {
			t.Errorf("Vertex(%s): parallelism %d, %d subtasks, error %q, stale %v; want no impossible numbers, an error, stale",
				id, vv.Parallelism, len(vv.Subtasks), vv.Error, vv.Flink.Stale)
		}
	}
}

var _ = kafka.Snapshot{}
