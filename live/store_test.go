package live

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/format"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// kafkaSnap builds a Kafka snapshot with the given end offsets per topic,
// its metadata read by the same poll.
func kafkaSnap(at time.Time, ends map[string][]int64, groups ...kafka.Group) *kafka.Snapshot {
	s := &kafka.Snapshot{Cluster: "prod", CollectedAt: at, MetadataAt: at, Groups: groups}
	for _, name := range sortedKeys(ends) {
		t := kafka.Topic{Name: name}
		for p, end := range ends[name] {
			t.Partitions = append(t.Partitions, kafka.Partition{Partition: int32(p), End: end, Rate: 10, RateOK: true,
				Freshness: kafka.Freshness{UpdatedAt: at}})
		}
		s.Topics = append(s.Topics, t)
	}
	return s
}

// sourceVertex builds a Kafka source vertex whose metric ids place each
// partition on owner(tp), with currentOffset = cur(tp).
func sourceVertex(id string, p int, topics []assign.Topic, owner func(assign.TopicPartition) int, cur func(assign.TopicPartition) int64) flink.VertexSnapshot {
	var ids []string
	var values []flink.Metric
	for _, tp := range assign.Partitions(topics) {
		o := owner(tp)
		base := fmt.Sprintf("%d.Source__Kafka_Source.KafkaSourceReader.topic.%s.partition.%d.", o, flink.SanitizeMetricName(tp.Topic), tp.Partition)
		ids = append(ids, base+"currentOffset", base+"committedOffset")
		c := cur(tp)
		values = append(values,
			flink.Metric{ID: base + "currentOffset", Raw: fmt.Sprint(c), Value: float64(c)},
			flink.Metric{ID: base + "committedOffset", Raw: fmt.Sprint(c - 5), Value: float64(c - 5)})
	}
	obs := flink.ParseKafkaSourceMetricIDs(ids)
	obs.ApplyValues(values)
	v := flink.VertexSnapshot{ID: id, Name: "Source: Kafka Source", Parallelism: p, MaxParallelism: 128, Source: true, Kafka: obs}
	for i := range p {
		v.Subtasks = append(v.Subtasks, flink.SubtaskSnapshot{Index: i, Status: "RUNNING", BusyRatio: 0.1 * float64(i+1),
			BackPressuredRatio: 0, IdleRatio: 0.5, RecordsInPerSecond: math.NaN(), RecordsOutPerSecond: float64(100 * (i + 1)), StateSize: -1})
	}
	return v
}

func freshOwner(p int) func(assign.TopicPartition) int {
	return func(tp assign.TopicPartition) int {
		o, err := assign.KafkaSplitOwner(tp, p)
		if err != nil {
			panic(err)
		}
		return o
	}
}

var testTopics = []assign.Topic{{Name: "orders", Partitions: 12}, {Name: "payments.v1", Partitions: 6}}

func ends(n int64) map[string][]int64 {
	m := map[string][]int64{}
	for _, t := range testTopics {
		for range t.Partitions {
			m[t.Name] = append(m[t.Name], n)
		}
	}
	return m
}

func flinkSnap(at time.Time, jobs ...flink.JobSnapshot) *flink.Snapshot {
	return &flink.Snapshot{Endpoint: "jm", CollectedAt: at, FlinkVersion: "2.2.1", Jobs: jobs}
}

func TestVertexFreshStartMatchesAndLag(t *testing.T) {
	now := t0.Add(20 * time.Second)
	s := New(Options{Now: func() time.Time { return now }})
	s.UpdateKafka(kafkaSnap(t0, ends(1000)))
	s.UpdateKafka(kafkaSnap(t0.Add(10*time.Second), ends(2000)))
	cur := func(tp assign.TopicPartition) int64 { return 1499 - int64(tp.Partition) }
	v := sourceVertex("src", 4, testTopics, freshOwner(4), cur)
	s.UpdateFlink(flinkSnap(t0.Add(10*time.Second), flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", Vertices: []flink.VertexSnapshot{v}}))

	vv, err := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	if vv.Cluster != "prod" {
		t.Errorf("cluster = %q, want prod (the only cluster)", vv.Cluster)
	}
	if got := strings.Join(vv.Topics, ","); got != "orders,payments.v1" {
		t.Errorf("topics = %s; the sanitised payments_v1 must resolve to payments.v1", got)
	}
	pr := vv.Prediction
	if pr.Mode != "fresh" || pr.Total != 18 || pr.Matched != 18 || pr.Drift != 0 {
		t.Fatalf("prediction = %+v, want fresh 18/18", pr)
	}
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			want := int64(2000 - (1499 - int64(c.Partition) + 1))
			if c.Lag != want {
				t.Errorf("%s-%d lag = %d, want end − (current+1) = %d", c.Topic, c.Partition, c.Lag, want)
			}
			if c.Predicted != r.Subtask {
				t.Errorf("%s-%d predicted %d, on %d", c.Topic, c.Partition, c.Predicted, r.Subtask)
			}
			// 1000 → 2000 in 10 s; offset ~1500 was the end ~5 s before t0+10s,
			// so ~15 s before now.
			if c.LagKind != kafka.TimeLagInterpolated || c.LagSeconds < 14 || c.LagSeconds > 16.1 {
				t.Errorf("%s-%d lag seconds = %v (%s), want ≈15 interpolated", c.Topic, c.Partition, c.LagSeconds, c.LagKind)
			}
		}
	}
	if vv.Figures[0].Kind != Observed || vv.Figures[1].Kind != Estimated {
		t.Errorf("figures = %+v: total lag must be observed, lag in time estimated", vv.Figures[:2])
	}
}

func TestVertexDriftIsFlagged(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	s.UpdateKafka(kafkaSnap(t0, ends(100)))
	// Everything on subtask 0: not what a fresh start does.
	v := sourceVertex("src", 4, testTopics, func(assign.TopicPartition) int { return 0 }, func(assign.TopicPartition) int64 { return 10 })
	s.UpdateFlink(flinkSnap(t0, flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", Vertices: []flink.VertexSnapshot{v}}))
	vv, err := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := assign.FreshAssignment(testTopics, 4)
	want := 0
	for _, o := range fresh.Owners {
		if o != 0 {
			want++
		}
	}
	if vv.Prediction.Drift != want || vv.Subtasks[0].Drift != want {
		t.Fatalf("drift = %d (row 0: %d), want %d", vv.Prediction.Drift, vv.Subtasks[0].Drift, want)
	}
	if vv.Prediction.Mode != ModeFresh || vv.Prediction.NotModelled != nil {
		t.Errorf("prediction %s (%s), want drift from a fresh start (package web names the usual cause)", vv.Prediction.Mode, says(vv.Prediction))
	}
}

func TestRestoreFollowsObservedLineage(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	s.UpdateKafka(kafkaSnap(t0, ends(100)))
	cur := func(assign.TopicPartition) int64 { return 50 }
	old := sourceVertex("src", 4, testTopics, freshOwner(4), cur)
	s.UpdateFlink(flinkSnap(t0, flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", Vertices: []flink.VertexSnapshot{old}}))

	res, err := assign.RestoreAssignment(testTopics, 4, 6)
	if err != nil {
		t.Fatal(err)
	}
	owner := func(tp assign.TopicPartition) int { o, _ := res.Assignment.OwnerOf(tp); return o }
	restored := sourceVertex("src2", 6, testTopics, owner, cur)
	job := flink.JobSnapshot{ID: "bb", Name: "enrich", State: "RUNNING", Vertices: []flink.VertexSnapshot{restored},
		Restored: &flink.RestoreInfo{CheckpointID: 7, IsSavepoint: true, ExternalPath: "file:/sp/1"}}
	s.UpdateFlink(flinkSnap(t0.Add(time.Minute), job))

	vv, err := s.State().Vertex("bb", "src2", VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	pr := vv.Prediction
	if pr.Mode != "restore" || fmt.Sprint(pr.History) != "[4 6]" || pr.Drift != 0 || pr.Matched != 18 {
		t.Fatalf("prediction = %+v, want restore 4→6 with 18/18 matching", pr)
	}
	if vv.Restored == nil || !vv.Restored.Savepoint {
		t.Errorf("restored = %+v, want the savepoint", vv.Restored)
	}
	fresh, _ := assign.FreshAssignment(testTopics, 6)
	differs := 0
	for tp, o := range res.Assignment.All() {
		if f, _ := fresh.OwnerOf(tp); f != o {
			differs++
		}
	}
	if differs == 0 {
		t.Fatal("test topics do not tell the restore layout from a fresh start; pick others")
	}
}

func TestRestoreWithUnknownHistoryIsInferredNotGuessed(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	s.UpdateKafka(kafkaSnap(t0, ends(100)))
	res, _ := assign.RestoreAssignment(testTopics, 4, 6)
	owner := func(tp assign.TopicPartition) int { o, _ := res.Assignment.OwnerOf(tp); return o }
	v := sourceVertex("src", 6, testTopics, owner, func(assign.TopicPartition) int64 { return 1 })
	job := flink.JobSnapshot{ID: "bb", Name: "enrich", State: "RUNNING", Vertices: []flink.VertexSnapshot{v},
		Restored: &flink.RestoreInfo{IsSavepoint: true}}
	s.UpdateFlink(flinkSnap(t0, job))
	vv, _ := s.State().Vertex("bb", "src", VertexQuery{Highlight: -1})
	pr := vv.Prediction
	if pr.Mode != ModeInferred || fmt.Sprint(pr.History) != "[4 6]" || pr.Drift != 0 || pr.Headline.Kind != BasisInferred || pr.Headline.Inferred != 18 {
		t.Fatalf("prediction = %+v, want the history 4→6 inferred from the layout", pr)
	}
	if !hasNote(pr, NoteInferred, func(n Note) bool {
		return n.Inference != nil && n.Inference.Outcome == InferOne && len(n.Inference.Fits) == 1 && fmt.Sprint(n.Inference.Fits[0]) == "[4 6]"
	}) {
		t.Errorf("notes %q should say the history 4→6 is the only one that fits", noteWords(pr))
	}
	if vv.Lineage == nil || vv.Lineage.Known {
		t.Errorf("lineage %+v: the history was not witnessed", vv.Lineage)
	}

	// A layout no history of ≤ 2 restores makes: not modelled, not guessed.
	s = New(Options{Now: func() time.Time { return t0 }})
	s.UpdateKafka(kafkaSnap(t0, ends(100)))
	v = sourceVertex("src", 6, testTopics, func(tp assign.TopicPartition) int { return int(tp.Partition) % 2 }, func(assign.TopicPartition) int64 { return 1 })
	job.Vertices = []flink.VertexSnapshot{v}
	s.UpdateFlink(flinkSnap(t0, job))
	vv, _ = s.State().Vertex("bb", "src", VertexQuery{Highlight: -1})
	if vv.Prediction.Mode != "none" || vv.Prediction.Drift != 0 || vv.Prediction.NotModelled == nil || vv.Prediction.NotModelled.Reason != ReasonRestoredUnseen ||
		vv.Prediction.NotModelled.Inference == nil || vv.Prediction.NotModelled.Inference.Outcome != InferNoFit || vv.Prediction.NotModelled.Inference.Observed != 18 {
		t.Fatalf("prediction = %+v, want no model, what the search found and a way to give the history", vv.Prediction)
	}
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			if c.Predicted != -1 {
				t.Fatalf("%s-%d shows predicted %d without a model", c.Topic, c.Partition, c.Predicted)
			}
		}
	}
	if ov := s.State().Overview(); len(ov.Jobs) != 1 || ov.Jobs[0].NotModelled != 1 || ov.Jobs[0].Drift != 0 {
		t.Errorf("overview job = %+v, want one source not modelled", ov.Jobs)
	}
	// With the history from the URL the restore model applies.
	vv, _ = s.State().Vertex("bb", "src", VertexQuery{Highlight: -1, History: []int{4}})
	if vv.Prediction.Mode != "restore" || vv.Prediction.Drift == 0 {
		t.Fatalf("with ?history=4: %+v", vv.Prediction)
	}
}

func TestGroupDiscoveredByCommittedOffsets(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	cur := func(tp assign.TopicPartition) int64 { return 40 + int64(tp.Partition) }
	var flinkGroup, other kafka.Group
	flinkGroup.Name, other.Name = "enrich-group", "audit"
	for _, tp := range assign.Partitions(testTopics) {
		flinkGroup.Partitions = append(flinkGroup.Partitions, kafka.GroupPartition{Topic: tp.Topic, Partition: tp.Partition, Committed: cur(tp) - 5})
		other.Partitions = append(other.Partitions, kafka.GroupPartition{Topic: tp.Topic, Partition: tp.Partition, Committed: 1})
	}
	s.UpdateKafka(kafkaSnap(t0, ends(100), other, flinkGroup))
	v := sourceVertex("src", 4, testTopics, freshOwner(4), cur)
	s.UpdateFlink(flinkSnap(t0, flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", Vertices: []flink.VertexSnapshot{v}}))
	vv, _ := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	if vv.Group == nil || vv.Group.Name != "enrich-group" || vv.Group.Found != GroupCommitsEqual || vv.Group.Matched != 18 || vv.Group.Partitions != 18 {
		t.Fatalf("group = %+v, want enrich-group found by equal commits on 18 of 18", vv.Group)
	}
	s2 := New(Options{Links: []Link{{Job: "enrich", Group: "configured"}}})
	s2.UpdateKafka(kafkaSnap(t0, ends(100), flinkGroup))
	s2.UpdateFlink(flinkSnap(t0, flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", Vertices: []flink.VertexSnapshot{v}}))
	vv, _ = s2.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	if vv.Group == nil || vv.Group.Name != "configured" || vv.Group.Found != GroupConfigured {
		t.Fatalf("group = %+v, want the configured one", vv.Group)
	}
}

func TestNotFound(t *testing.T) {
	s := New(Options{})
	if _, err := s.State().Job("", "ff"); err == nil {
		t.Error("unknown job: no error")
	}
	if _, err := s.State().Topic("nope", "t"); err == nil {
		t.Error("unknown cluster: no error")
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{format.Count(978), "978"}, {format.Count(49_400), "49k"}, {format.Count(186_000), "186k"}, {format.Count(1_234_567), "1.2M"},
		{format.Count(-1), "–"}, {format.Int(412838), "412,838"}, {format.Int(0), "0"}, {format.Rate(3647.4), "3,647/s"},
		{format.Seconds(200), "3 m 20 s"}, {format.Seconds(4), "4 s"}, {format.Ratio(0.97), "97%"}, {format.Bytes(6962), "6.8 KiB"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func TestConnectorLineFollowsFlinkVersion(t *testing.T) {
	for v, want := range map[string]string{"1.20.5": assign.ConnectorLine34, "2.0.1": assign.ConnectorLine34, "2.0": assign.ConnectorLine34,
		"2.2.1": assign.ConnectorLine5, "2.1.0": assign.ConnectorLine5, "": assign.ConnectorLine5, "2.10.0": assign.ConnectorLine5} {
		if got := connectorLine(v); got != want {
			t.Errorf("connectorLine(%q) = %q, want %q", v, got, want)
		}
	}
}

// resolveForTest maps a metric-id topic to the test cluster's topic.
func (s *Store) resolveForTest(idTopic string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resolve("prod", idTopic)
}

// says is what a prediction found, for test messages: its headline's kind
// and verdicts, and why it is not modelled (package web writes the words).
func says(pr *Prediction) string {
	if pr == nil {
		return "no prediction"
	}
	s := fmt.Sprintf("%s %+v", pr.Headline.Kind, pr.Headline.Verdicts)
	if n := pr.NotModelled; n != nil {
		s += fmt.Sprintf(", not modelled: %+v", *n)
	}
	return s
}

// noteWords are a prediction's notes for tests to search: a note the
// model words as it is, the others as their kind and data (package web
// writes their words).
func noteWords(pr *Prediction) []string {
	var out []string
	for _, n := range pr.Notes {
		switch {
		case n.Kind == NoteModel:
			out = append(out, n.Text)
		case n.Inference != nil:
			out = append(out, fmt.Sprintf("%+v %+v", n, *n.Inference))
		default:
			out = append(out, fmt.Sprintf("%+v", n))
		}
	}
	return out
}

// hasNote reports whether a prediction has a note of the kind.
func hasNote(pr *Prediction, kind NoteKind, match func(Note) bool) bool {
	for _, n := range pr.Notes {
		if n.Kind == kind && (match == nil || match(n)) {
			return true
		}
	}
	return false
}
