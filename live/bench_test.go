package live

import (
	"fmt"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
)

// bigStore holds one Kafka source of 10,000 partitions (20 topics × 500) at
// parallelism 64, with two Kafka polls and one Flink poll.
func bigStore(b *testing.B) *Store {
	var topics []assign.Topic
	for i := range 20 {
		topics = append(topics, assign.Topic{Name: fmt.Sprintf("topic-%02d", i), Partitions: 500})
	}
	s := New(Options{Now: func() time.Time { return t0.Add(20 * time.Second) }})
	for i, end := range []int64{1_000_000, 1_050_000} {
		ks := &kafka.Snapshot{Cluster: "prod", CollectedAt: t0.Add(time.Duration(i) * 10 * time.Second)}
		for _, t := range topics {
			kt := kafka.Topic{Name: t.Name}
			for p := range t.Partitions {
				kt.Partitions = append(kt.Partitions, kafka.Partition{Partition: int32(p), End: end + int64(p), Rate: float64(p % 97), RateOK: true,
					Freshness: kafka.Freshness{UpdatedAt: ks.CollectedAt}})
			}
			ks.Topics = append(ks.Topics, kt)
		}
		s.UpdateKafka(ks)
	}
	v := sourceVertex("src", 64, topics, freshOwner(64), func(tp assign.TopicPartition) int64 { return 1_020_000 + int64(tp.Partition) })
	s.UpdateFlink(flinkSnap(t0.Add(10*time.Second), flink.JobSnapshot{ID: "aa", Name: "big", State: "RUNNING", Vertices: []flink.VertexSnapshot{v}}))
	return s
}

// BenchmarkVertexView10k builds the source-vertex view of 10,000 partitions
// (observed layout, prediction, lag, lag in time, group, figures): the work
// behind one page render, one JSON twin or one websocket push.
func BenchmarkVertexView10k(b *testing.B) {
	s := bigStore(b)
	b.ResetTimer()
	for b.Loop() {
		vv, err := s.Vertex("aa", "src", VertexQuery{Highlight: -1})
		if err != nil || vv.Prediction.Total != 10_000 || vv.Prediction.Drift != 0 {
			b.Fatalf("%v %+v", err, vv.Prediction)
		}
	}
}
