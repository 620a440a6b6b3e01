package live

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
)

// sourceStore holds one Kafka source reading topics at parallelism p, with
// two Kafka polls and one Flink poll.
func sourceStore(topics []assign.Topic, p int) *Store {
	s := New(Options{Now: func() time.Time { return t0.Add(20 * time.Second) }})
	for i, end := range []int64{1_000_000, 1_050_000} {
		ks := &kafka.Snapshot{Cluster: "prod", CollectedAt: t0.Add(time.Duration(i) * 10 * time.Second)}
		for _, t := range topics {
			kt := kafka.Topic{Name: t.Name}
			for q := range t.Partitions {
				kt.Partitions = append(kt.Partitions, kafka.Partition{Partition: int32(q), End: end + int64(q), Rate: float64(q % 7), RateOK: true,
					Freshness: kafka.Freshness{UpdatedAt: ks.CollectedAt}})
			}
			ks.Topics = append(ks.Topics, kt)
		}
		s.UpdateKafka(ks)
	}
	v := sourceVertex("src", p, topics, freshOwner(p), func(tp assign.TopicPartition) int64 { return 1_020_000 + int64(tp.Partition) })
	s.UpdateFlink(flinkSnap(t0.Add(10*time.Second), flink.JobSnapshot{ID: "aa", Name: "big", State: "RUNNING", Vertices: []flink.VertexSnapshot{v}}))
	return s
}

// The source-vertex view makes a bounded number of allocations, not some
// per partition: a source of 4,000 partitions costs about as many as one
// of 1,000.
func TestVertexViewAllocationsDoNotGrowWithPartitions(t *testing.T) {
	allocs := func(partitions int) float64 {
		s := sourceStore([]assign.Topic{{Name: "orders", Partitions: partitions / 2}, {Name: "payments", Partitions: partitions / 2}}, 16)
		return testing.AllocsPerRun(5, func() {
			if _, err := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1}); err != nil {
				t.Fatal(err)
			}
		})
	}
	small, large := allocs(1000), allocs(4000)
	if large-small > 100 {
		t.Errorf("a view of 4,000 partitions makes %.0f allocations, one of 1,000 makes %.0f: %.1f more per added partition",
			large, small, (large-small)/3000)
	}
}

// Partitions the per-topic index cannot hold densely (numbers far apart,
// listed twice) show the figures the Kafka snapshot gives, the later
// listing of a partition winning, as through the partition map.
func TestVertexViewOfSparseAndTwiceListedPartitions(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0.Add(20 * time.Second) }})
	topics := []assign.Topic{{Name: "dense", Partitions: 2}, {Name: "sparse", Partitions: 2}}
	for i := range 2 {
		at := t0.Add(time.Duration(i) * 10 * time.Second)
		ks := &kafka.Snapshot{Cluster: "prod", CollectedAt: at}
		fresh := kafka.Freshness{UpdatedAt: at}
		ks.Topics = []kafka.Topic{
			{Name: "dense", Partitions: []kafka.Partition{
				{Partition: 0, End: 100, Rate: 1, RateOK: true, Freshness: fresh},
				{Partition: 1, End: 200, Rate: 2, RateOK: true, Freshness: fresh},
				{Partition: 1, End: 250, Rate: 3, RateOK: true, Freshness: fresh}, // listed again: this one counts
			}},
			{Name: "sparse", Partitions: []kafka.Partition{
				{Partition: 0, End: 300, Rate: 4, RateOK: true, Freshness: fresh},
				{Partition: 1, End: 400, Rate: 5, RateOK: true, Freshness: fresh},
				{Partition: 1_000_000, End: 500, Rate: 6, RateOK: true, Freshness: fresh},
			}},
		}
		s.UpdateKafka(ks)
	}
	v := sourceVertex("src", 2, topics, func(tp assign.TopicPartition) int { return int(tp.Partition) % 2 },
		func(assign.TopicPartition) int64 { return 49 })
	s.UpdateFlink(flinkSnap(t0.Add(10*time.Second), flink.JobSnapshot{ID: "aa", Name: "j", State: "RUNNING", Vertices: []flink.VertexSnapshot{v}}))
	vv, err := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]float64{}
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			got[fmt.Sprintf("%s-%d", c.Topic, c.Partition)] = [2]float64{float64(c.End), c.Rate}
		}
	}
	want := map[string][2]float64{"dense-0": {100, 1}, "dense-1": {250, 3}, "sparse-0": {300, 4}, "sparse-1": {400, 5}}
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Errorf("cells (end offset, rate) = %s, want %s", g, w)
	}
	if vv.Prediction.Missing != 1 {
		t.Errorf("prediction counts %d partitions missing, want 1 (sparse-1000000, read by no listed id)", vv.Prediction.Missing)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
