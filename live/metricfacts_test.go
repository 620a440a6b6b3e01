package live

import (
	"fmt"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
)

// TestMetricFactsAreTheViewsFigures checks MetricFacts against the views
// of a source whose readers of two partitions drift: the same drift and
// mode as its page, a lag per partition under the subtask its page shows
// it in, and no view built.
func TestMetricFactsAreTheViewsFigures(t *testing.T) {
	now := t0.Add(20 * time.Second)
	s := New(Options{Now: func() time.Time { return now }})
	s.UpdateKafka(kafkaSnap(t0, ends(1000)))
	s.UpdateKafka(kafkaSnap(t0.Add(10*time.Second), ends(2000)))
	off := func(tp assign.TopicPartition) int {
		o := freshOwner(4)(tp)
		if tp.Topic == "orders" && tp.Partition < 2 {
			o = (o + 1) % 4
		}
		return o
	}
	v := sourceVertex("src", 4, testTopics, off, func(tp assign.TopicPartition) int64 { return 1499 - int64(tp.Partition) })
	s.UpdateFlink(flinkSnap(t0.Add(10*time.Second), flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", Vertices: []flink.VertexSnapshot{v}}))

	before := s.ViewsBuilt()
	mf := s.State().MetricFacts()
	if n := s.ViewsBuilt() - before; n != 0 {
		t.Errorf("MetricFacts built %d views, want none", n)
	}
	vv, err := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(mf.Vertices) != 1 {
		t.Fatalf("MetricFacts lists %d vertices, want 1", len(mf.Vertices))
	}
	vf := mf.Vertices[0]
	if vf.Drift != vv.Prediction.Drift || vf.PredictionMode != vv.Prediction.Mode || vf.Drift != 2 {
		t.Errorf("facts: drift %d mode %q; page: drift %d mode %q; want drift 2", vf.Drift, vf.PredictionMode, vv.Prediction.Drift, vv.Prediction.Mode)
	}
	want := map[string]PartitionCell{}
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			want[fmt.Sprintf("%d/%s-%d", r.Subtask, c.Topic, c.Partition)] = c
		}
	}
	if len(vf.Partitions) != len(want) {
		t.Errorf("facts list %d partitions, the page %d", len(vf.Partitions), len(want))
	}
	for _, p := range vf.Partitions {
		c, ok := want[fmt.Sprintf("%d/%s-%d", p.Subtask, p.Topic, p.Partition)]
		if !ok || c.Lag != p.Lag || c.LagSeconds != p.LagSeconds || c.TimeToRetentionSeconds != p.TimeToRetentionSeconds {
			t.Errorf("facts %+v, page cell %+v (found %v)", p, c, ok)
		}
	}
}

// BenchmarkMetricFacts reads the /metrics figures of 50 running jobs of
// 3 vertices at p = 64, each source reading a topic of 256 partitions
// with a consumer group: the store's share of a scrape, computed afresh
// (a State computes it once, for the first scrape after an update).
func BenchmarkMetricFacts(b *testing.B) {
	const jobs, p, parts = 50, 64, 256
	s := New(Options{Now: func() time.Time { return t0.Add(20 * time.Second) }})
	for i, end := range []int64{1_000_000, 1_050_000} {
		ks := &kafka.Snapshot{Cluster: "prod", CollectedAt: t0.Add(time.Duration(i) * 10 * time.Second)}
		for j := range jobs {
			kt := kafka.Topic{Name: fmt.Sprintf("topic-%02d", j)}
			g := kafka.Group{Name: fmt.Sprintf("group-%02d", j), Freshness: kafka.Freshness{UpdatedAt: ks.CollectedAt}}
			for q := range int32(parts) {
				kt.Partitions = append(kt.Partitions, kafka.Partition{Partition: q, End: end + int64(q), Rate: 1, RateOK: i > 0,
					Freshness: kafka.Freshness{UpdatedAt: ks.CollectedAt}})
				g.Partitions = append(g.Partitions, kafka.GroupPartition{Topic: kt.Name, Partition: q, Committed: 990_000, Lag: end + int64(q) - 990_000})
			}
			ks.Topics, ks.Groups = append(ks.Topics, kt), append(ks.Groups, g)
		}
		s.UpdateKafka(ks)
	}
	var fs []flink.JobSnapshot
	for j := range jobs {
		topics := []assign.Topic{{Name: fmt.Sprintf("topic-%02d", j), Partitions: parts}}
		src := sourceVertex("src", p, topics, freshOwner(p), func(tp assign.TopicPartition) int64 { return 990_000 + int64(tp.Partition) })
		keyed, sink := src, src
		keyed.ID, keyed.Name, keyed.Source, keyed.Keyed, keyed.Kafka = "keyed", "Enrich", false, true, nil
		sink.ID, sink.Name, sink.Source, sink.Kafka = "sink", "Sink", false, nil
		fs = append(fs, flink.JobSnapshot{ID: fmt.Sprintf("job%02d", j), Name: fmt.Sprintf("big-%02d", j), State: "RUNNING", Vertices: []flink.VertexSnapshot{src, keyed, sink}})
	}
	s.UpdateFlink(flinkSnap(t0.Add(15*time.Second), fs...))
	if mf := s.State().MetricFacts(); len(mf.Vertices) != 3*jobs || len(mf.Vertices[0].Partitions) != parts {
		b.Fatalf("%d vertices, %d partitions of the first", len(mf.Vertices), len(mf.Vertices[0].Partitions))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s.State().metricFacts()
	}
}
