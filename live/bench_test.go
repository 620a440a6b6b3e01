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
	return sourceStore(topics, 64)
}

// BenchmarkVertexView10k builds the source-vertex view of 10,000 partitions
// (observed layout, prediction, lag, lag in time, group, figures): the work
// behind one page render, one JSON twin or one websocket push.
func BenchmarkVertexView10k(b *testing.B) {
	s := bigStore(b)
	b.ResetTimer()
	for b.Loop() {
		vv, err := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
		if err != nil || vv.Prediction.Total != 10_000 || vv.Prediction.Drift != 0 {
			b.Fatalf("%v %+v", err, vv.Prediction)
		}
	}
}

// BenchmarkPagesAfterUpdate10k is one Kafka update followed by the views a
// running dashboard builds from it: the overview, and every job's page and
// source-vertex page of 50 jobs, each reading a topic of 200 partitions at
// p = 64 (10,000 partitions in all), as a /metrics scrape and a few open
// pages do between two polls.
func BenchmarkPagesAfterUpdate10k(b *testing.B) {
	const jobs = 50
	s := New(Options{Now: func() time.Time { return t0.Add(20 * time.Second) }})
	ks := &kafka.Snapshot{Cluster: "prod", CollectedAt: t0, MetadataAt: t0}
	var fs []flink.JobSnapshot
	for i := range jobs {
		topics := []assign.Topic{{Name: fmt.Sprintf("topic-%02d", i), Partitions: 200}}
		kt := kafka.Topic{Name: topics[0].Name}
		for p := range 200 {
			kt.Partitions = append(kt.Partitions, kafka.Partition{Partition: int32(p), End: 1_000_000 + int64(p), Rate: float64(p % 97), RateOK: true,
				Freshness: kafka.Freshness{UpdatedAt: t0}})
		}
		ks.Topics = append(ks.Topics, kt)
		v := sourceVertex("src", 64, topics, freshOwner(64), func(tp assign.TopicPartition) int64 { return 990_000 + int64(tp.Partition) })
		fs = append(fs, flink.JobSnapshot{ID: fmt.Sprintf("job%02d", i), Name: fmt.Sprintf("big-%02d", i), State: "RUNNING", Vertices: []flink.VertexSnapshot{v}})
	}
	s.UpdateKafka(ks)
	s.UpdateFlink(flinkSnap(t0.Add(5*time.Second), fs...))
	at := t0
	b.ResetTimer()
	for b.Loop() {
		at = at.Add(10 * time.Second)
		next := *ks
		next.CollectedAt, next.MetadataAt = at, at
		s.UpdateKafka(&next)
		if ov := s.State().Overview(); len(ov.Jobs) != jobs {
			b.Fatalf("overview lists %d jobs", len(ov.Jobs))
		}
		for _, j := range fs {
			if _, err := s.State().Job("jm", j.ID); err != nil {
				b.Fatal(err)
			}
			if _, err := s.State().Vertex(j.ID, "src", VertexQuery{Highlight: -1}); err != nil {
				b.Fatal(err)
			}
		}
	}
}
