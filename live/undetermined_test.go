package live

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
)

// staleRescale is the source at p = 6 after an in-place rescale from p = 4
// whose new readers list every partition where the restore model puts it,
// while the old readers' frozen ids still list the moved ones at their old
// values. Neither entry of a moved partition shows the new attempt yet
// (EvidenceUnconfirmed), so its reader is undetermined; it returns the
// vertex and those partitions.
func staleRescale(t *testing.T, s *Store) (flink.VertexSnapshot, map[assign.TopicPartition]bool) {
	t.Helper()
	o46 := restoreOwner(t, assign.RestoreInput{Topics: testTopics, History: []int{4, 6}, ConnectorLine: assign.ConnectorLine5})
	v := sourceVertex("src", 6, testTopics, o46, func(assign.TopicPartition) int64 { return 50 })
	moved := map[assign.TopicPartition]bool{}
	var frozen []flink.KafkaPartitionState
	for _, tp := range assign.Partitions(testTopics) {
		if old := freshOwner(4)(tp); old != o46(tp) {
			moved[tp] = true
			frozen = append(frozen, flink.KafkaPartitionState{KafkaPartition: flink.KafkaPartition{Topic: flink.SanitizeMetricName(tp.Topic), Partition: tp.Partition},
				Subtask: old, Operator: "Source__Kafka_Source", CurrentOffset: 50, CommittedOffset: 45, Evidence: flink.EvidenceUnconfirmed})
		}
	}
	for i := range v.Kafka.States {
		st := &v.Kafka.States[i]
		st.Evidence = flink.EvidenceCurrent
		if moved[assign.TopicPartition{Topic: s.resolveForTest(st.Topic), Partition: st.Partition}] {
			st.Evidence = flink.EvidenceUnconfirmed
		}
	}
	v.Kafka.States = append(v.Kafka.States, frozen...)
	if len(moved) < 4 {
		t.Fatalf("only %d partitions move at 4→6; pick other topics", len(moved))
	}
	return v, moved
}

// wantUndeterminedMarked fails unless every cell whose reader is not
// determined carries the uncertain mark, in the view and in its JSON, and
// there are want of them.
func wantUndeterminedMarked(t *testing.T, what string, vv VertexView, want int) {
	t.Helper()
	n := 0
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			if !c.OwnerUndetermined {
				continue
			}
			n++
			b, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Uncertain || !strings.Contains(string(b), `"uncertain":true`) {
				t.Errorf("%s: %s-%d under subtask %d is undetermined but not marked uncertain: %s", what, c.Topic, c.Partition, r.Subtask, b)
			}
		}
	}
	if n != want {
		t.Errorf("%s: %d undetermined cells, want %d", what, n, want)
	}
}

// Mid-rescale (a subtask still deploying) the layout is not modelled, and
// the cells whose reader the stale ids leave open are drawn where an id
// lists them: they must be marked uncertain all the same.
func TestUndeterminedCellsAreMarkedWhenNotModelled(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	s.UpdateKafka(kafkaSnap(t0, ends(100)))
	s.UpdateFlink(flinkSnap(t0, job("aa", nil, sourceVertex("src", 4, testTopics, freshOwner(4), func(assign.TopicPartition) int64 { return 50 }))))

	v, moved := staleRescale(t, s)
	v.Subtasks[5].Status = "DEPLOYING"
	s.UpdateFlink(flinkSnap(t0.Add(10*time.Second), job("aa", nil, v)))
	vv := mustVertex(t, s, "aa", "src")
	if vv.Prediction.Mode != ModeNone {
		t.Fatalf("mid-rescale mode %s, want none", vv.Prediction.Mode)
	}
	wantUndeterminedMarked(t, "mid-rescale, not modelled", vv, len(moved))
}

// A dashboard whose first polls of a job at p = 4 found none of its
// source's reader ids listed (an idle JobManager fetches metrics only
// once asked) follows the job all the same: an in-place rescale to 6
// under the same job id is a rescale 4 → 6, not a first sight at 6.
func TestRescaleAfterPollsWithoutIdsIsARescale(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	s.UpdateKafka(kafkaSnap(t0, ends(100)))
	cur := func(assign.TopicPartition) int64 { return 50 }
	for i := range 2 {
		bare := sourceVertex("src", 4, testTopics, freshOwner(4), cur)
		bare.Kafka = nil
		s.UpdateFlink(flinkSnap(t0.Add(time.Duration(i)*5*time.Second), job("aa", nil, bare)))
	}
	o46 := restoreOwner(t, assign.RestoreInput{Topics: testTopics, History: []int{4, 6}, ConnectorLine: assign.ConnectorLine5})
	ck := &flink.RestoreInfo{CheckpointID: 3, At: t0.Add(15 * time.Second)}
	s.UpdateFlink(flinkSnap(t0.Add(20*time.Second), job("aa", ck, sourceVertex("src", 6, testTopics, o46, cur))))
	vv := mustVertex(t, s, "aa", "src")
	if got := eventKinds(vv); got != "start:0→4 rescale:4→6" {
		t.Errorf("lineage events %s, want start:0→4 rescale:4→6", got)
	}
	pr := vv.Prediction
	if pr.Mode != ModeRestore || !slices.Equal(pr.History, []int{4, 6}) || pr.Drift != 0 {
		t.Errorf("prediction mode %s history %v drift %d (%s), want the restore model for 4→6 without drift", pr.Mode, pr.History, pr.Drift, says(pr))
	}
}

// A dashboard that starts polling a JobManager left idle for minutes: the
// JobManager fetches metrics only once asked, so its first answers list
// none of a running source's reader ids, however long the job has run.
// The source's topics are known (its consumer group, linked by
// configuration, commits on them): the page shows the fresh start's
// prediction as a prediction only, puts the missing ids down to the
// metric fetch rather than to a dump over the frame size, and names no
// owner as observed.
func TestIdleJobManagerFirstPollsShowThePredictionOnly(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0.Add(10 * time.Second) }, Links: []Link{{Job: "enrich", Group: "enrich"}}})
	g := kafka.Group{Name: "enrich", State: "Empty"}
	for _, tp := range assign.Partitions(testTopics) {
		g.Partitions = append(g.Partitions, kafka.GroupPartition{Topic: tp.Topic, Partition: tp.Partition, Committed: 90, Lag: 10})
	}
	s.UpdateKafka(kafkaSnap(t0, ends(100), g))
	for i := range 2 {
		bare := sourceVertex("src", 4, testTopics, freshOwner(4), func(assign.TopicPartition) int64 { return 50 })
		bare.Kafka = nil
		j := job("aa", nil, bare)
		j.StartTime = t0.Add(-10 * time.Minute)
		s.UpdateFlink(flinkSnap(t0.Add(time.Duration(1+4*i)*time.Second), j))
		vv := mustVertex(t, s, "aa", "src")
		what := fmt.Sprintf("poll %d", i+1)
		if w := vv.Withheld; w == nil || w.Cause != CauseNotYetListed || w.Pending != PendingFirstPoll || !w.All || w.Missing != 18 {
			t.Errorf("%s: withheld %+v, want the not-yet-listed cause after skewscope's first poll, for all 18 partitions", what, w)
		}
		pr := vv.Prediction
		if pr == nil || pr.Mode != ModeFresh || pr.Total != 18 || pr.Headline.Kind == BasisExact {
			t.Fatalf("%s: prediction %+v, want the fresh start over 18 partitions, not exact", what, pr)
		}
		if hasNote(pr, NoteUndetermined, func(n Note) bool { return !n.Withheld }) {
			t.Errorf("%s: notes %q blame stale ids where Flink lists none", what, noteWords(pr))
		}
		for _, r := range vv.Subtasks {
			for _, c := range r.Partitions {
				tp := assign.TopicPartition{Topic: c.Topic, Partition: c.Partition}
				if !c.OwnerUndetermined || !c.Uncertain || c.Predicted != freshOwner(4)(tp) || r.Subtask != c.Predicted {
					t.Errorf("%s: %v under %d undetermined %v uncertain %v predicted %d, want an outlined prediction on %d", what, tp, r.Subtask, c.OwnerUndetermined, c.Uncertain, c.Predicted, freshOwner(4)(tp))
				}
			}
		}
	}
}

// After an in-place rescale 2 → 7 an old reader's id of a partition,
// listed for the first time, looks as current as its new reader's; only
// the new reader's value advanced since its attempt's first poll. The
// store takes that reader as observed, not undetermined.
func TestAdvancedListingSettlesTheReader(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	topics := []assign.Topic{{Name: "events", Partitions: 16}}
	s.UpdateKafka(kafkaSnap(t0, map[string][]int64{"events": make([]int64, 16)}))
	cur := func(assign.TopicPartition) int64 { return 50 }
	v := sourceVertex("src", 7, topics, freshOwner(7), cur)
	tp := assign.TopicPartition{Topic: "events", Partition: 13}
	reader := freshOwner(7)(tp)
	old := (reader + 1) % 7
	for i := range v.Kafka.States {
		st := &v.Kafka.States[i]
		st.Evidence = flink.EvidenceCurrent
		st.Advanced = st.Partition == 13
	}
	v.Kafka.States = append(v.Kafka.States, flink.KafkaPartitionState{KafkaPartition: flink.KafkaPartition{Topic: "events", Partition: 13},
		Subtask: old, Operator: "Source__Kafka_Source", CurrentOffset: 40, CommittedOffset: 35, Evidence: flink.EvidenceCurrent})
	s.UpdateFlink(flinkSnap(t0, job("aa", nil, v)))
	vv := mustVertex(t, s, "aa", "src")
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			if c.Partition == 13 && (c.OwnerUndetermined || r.Subtask != reader || c.Current != 50) {
				t.Errorf("events-13 under %d, undetermined %v, current %d; want read by %d at 50", r.Subtask, c.OwnerUndetermined, c.Current, reader)
			}
		}
	}
}

// The collectors' first polls end in any order: a Flink poll listing no
// reader id, handed in before the Kafka poll whose group commits name the
// source's topics, shows the prediction once that Kafka poll is in, not
// only after the next Flink poll.
func TestFlinkPollBeforeKafkaShowsThePredictionOnceKafkaIsIn(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0.Add(10 * time.Second) }, Links: []Link{{Job: "enrich", Group: "enrich"}}})
	bare := sourceVertex("src", 4, testTopics, freshOwner(4), func(assign.TopicPartition) int64 { return 50 })
	bare.Kafka = nil
	s.UpdateFlink(flinkSnap(t0, job("aa", nil, bare)))
	g := kafka.Group{Name: "enrich", State: "Empty"}
	for _, tp := range assign.Partitions(testTopics) {
		g.Partitions = append(g.Partitions, kafka.GroupPartition{Topic: tp.Topic, Partition: tp.Partition, Committed: 90, Lag: 10})
	}
	s.UpdateKafka(kafkaSnap(t0.Add(2*time.Second), ends(100), g))
	vv := mustVertex(t, s, "aa", "src")
	if w := vv.Withheld; w == nil || w.Cause != CauseNotYetListed {
		t.Errorf("withheld %+v, want the not-yet-listed cause", w)
	}
	pr := vv.Prediction
	if pr == nil || pr.Mode != ModeFresh || pr.Total != 18 {
		t.Fatalf("prediction %+v, want the fresh start over 18 partitions", pr)
	}
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			if !c.OwnerUndetermined || !c.Uncertain {
				t.Errorf("%s-%d under %d: undetermined %v uncertain %v, want an outlined prediction", c.Topic, c.Partition, r.Subtask, c.OwnerUndetermined, c.Uncertain)
			}
		}
	}
}
