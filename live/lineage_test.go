package live

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
)

// restoreOwner is the restore model's owner after history.
func restoreOwner(t *testing.T, in assign.RestoreInput) func(assign.TopicPartition) int {
	t.Helper()
	res, err := assign.Restore(in)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Exact {
		t.Fatalf("restore %v is not exact for the test topics; pick others", in.History)
	}
	return func(tp assign.TopicPartition) int {
		o, ok := res.Assignment.OwnerOf(tp)
		if !ok {
			t.Fatalf("%v has no owner", tp)
		}
		return o
	}
}

func job(id string, restored *flink.RestoreInfo, v flink.VertexSnapshot) flink.JobSnapshot {
	return flink.JobSnapshot{ID: id, Name: "enrich", State: "RUNNING", StartTime: t0, Vertices: []flink.VertexSnapshot{v}, Restored: restored}
}

func eventKinds(vv VertexView) string {
	if vv.Lineage == nil {
		return "<no lineage>"
	}
	var k []string
	for _, e := range vv.Lineage.Events {
		k = append(k, fmt.Sprintf("%s:%d→%d", e.Kind, e.From, e.To))
	}
	return strings.Join(k, " ")
}

// noFalseNote fails when a note claims skewscope missed something it saw.
func noFalseNote(t *testing.T, pr *Prediction) {
	t.Helper()
	if pr.NotModelled != nil && pr.NotModelled.Reason == ReasonRestoredUnseen {
		t.Errorf("not modelled as restored before skewscope first saw it: %s", says(pr))
	}
	for _, n := range noteWords(pr) {
		for _, bad := range []string{"did not see", "before skewscope first saw", "earlier job of this lineage", "discovered before the latest restore"} {
			if strings.Contains(n, bad) {
				t.Errorf("false note %q", n)
			}
		}
	}
}

func mustVertex(t *testing.T, s *Store, jobID, vertexID string) VertexView {
	t.Helper()
	vv, err := s.State().Vertex(jobID, vertexID, VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	return vv
}

func wantExact(t *testing.T, vv VertexView, mode Mode, history []int) {
	t.Helper()
	pr := vv.Prediction
	if pr.Mode != mode || !slices.Equal(pr.History, history) || pr.Drift != 0 || pr.Matched != pr.Total || pr.Total == 0 {
		t.Fatalf("prediction = mode %s history %v drift %d matched %d/%d (%s), want %s %v exact", pr.Mode, pr.History, pr.Drift, pr.Matched, pr.Total, says(pr), mode, history)
	}
	if pr.Headline.Kind != BasisExact || pr.Headline.Exact != pr.Total {
		t.Errorf("headline = %+v, want exact over all %d cells", pr.Headline, pr.Total)
	}
	noFalseNote(t, pr)
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			if c.Uncertain || c.Basis != BasisExact {
				t.Errorf("%s-%d basis %q uncertain %v, want exact", c.Topic, c.Partition, c.Basis, c.Uncertain)
			}
		}
	}
}

// An in-place rescale by the adaptive scheduler keeps the job id; the
// vertex parallelism changes and latest.restored names the checkpoint.
func TestInPlaceRescaleEntersTheHistory(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	s.UpdateKafka(kafkaSnap(t0, ends(100)))
	cur := func(assign.TopicPartition) int64 { return 50 }
	s.UpdateFlink(flinkSnap(t0, job("aa", nil, sourceVertex("src", 4, testTopics, freshOwner(4), cur))))
	wantExact(t, mustVertex(t, s, "aa", "src"), ModeFresh, nil)

	// Mid-rescale: the new subtasks deploy; nothing is recorded yet.
	mid := sourceVertex("src", 6, testTopics, freshOwner(4), cur)
	for i := range mid.Subtasks {
		mid.Subtasks[i].Status = "DEPLOYING"
	}
	s.UpdateFlink(flinkSnap(t0.Add(10*time.Second), job("aa", nil, mid)))

	ck1 := &flink.RestoreInfo{CheckpointID: 12, At: t0.Add(15 * time.Second)}
	o46 := restoreOwner(t, assign.RestoreInput{Topics: testTopics, History: []int{4, 6}, ConnectorLine: assign.ConnectorLine5})
	s.UpdateFlink(flinkSnap(t0.Add(20*time.Second), job("aa", ck1, sourceVertex("src", 6, testTopics, o46, cur))))
	vv := mustVertex(t, s, "aa", "src")
	wantExact(t, vv, ModeRestore, []int{4, 6})
	if got := eventKinds(vv); got != "start:0→4 rescale:4→6" {
		t.Errorf("events %s", got)
	}
	if e := vv.Lineage.Events[1]; e.CheckpointID != 12 || e.MovedCount <= 0 || len(e.Moved) == 0 {
		t.Errorf("rescale event %+v, want checkpoint 12 and the partitions it moved", e)
	}

	ck2 := &flink.RestoreInfo{CheckpointID: 20, At: t0.Add(35 * time.Second)}
	o463 := restoreOwner(t, assign.RestoreInput{Topics: testTopics, History: []int{4, 6, 3}, ConnectorLine: assign.ConnectorLine5})
	s.UpdateFlink(flinkSnap(t0.Add(40*time.Second), job("aa", ck2, sourceVertex("src", 3, testTopics, o463, cur))))
	vv = mustVertex(t, s, "aa", "src")
	wantExact(t, vv, ModeRestore, []int{4, 6, 3})
	if got := eventKinds(vv); got != "start:0→4 rescale:4→6 rescale:6→3" {
		t.Errorf("events %s", got)
	}
}

// REST can name the checkpoint of a rescale a poll after the new
// parallelism shows: that is one rescale, not a rescale and a failover.
func TestRescaleCheckpointNamedLaterIsNotAFailover(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	cur := func(assign.TopicPartition) int64 { return 50 }
	s.UpdateKafka(kafkaSnap(t0, ends(100)))
	ck0 := &flink.RestoreInfo{CheckpointID: 3, At: t0}
	s.UpdateFlink(flinkSnap(t0, job("aa", nil, sourceVertex("src", 4, testTopics, freshOwner(4), cur))))
	// A failover first: same parallelism, a new restore.
	s.UpdateFlink(flinkSnap(t0.Add(5*time.Second), job("aa", ck0, sourceVertex("src", 4, testTopics, freshOwner(4), cur))))
	vv := mustVertex(t, s, "aa", "src")
	wantExact(t, vv, ModeFresh, nil)
	if got := eventKinds(vv); got != "start:0→4 failover:4→4" {
		t.Errorf("events %s", got)
	}
	o46 := restoreOwner(t, assign.RestoreInput{Topics: testTopics, History: []int{4, 6}, ConnectorLine: assign.ConnectorLine5})
	// The parallelism shows before the restore does …
	s.UpdateFlink(flinkSnap(t0.Add(10*time.Second), job("aa", ck0, sourceVertex("src", 6, testTopics, o46, cur))))
	// … and the restore a poll later.
	ck1 := &flink.RestoreInfo{CheckpointID: 9, At: t0.Add(9 * time.Second)}
	s.UpdateFlink(flinkSnap(t0.Add(20*time.Second), job("aa", ck1, sourceVertex("src", 6, testTopics, o46, cur))))
	vv = mustVertex(t, s, "aa", "src")
	wantExact(t, vv, ModeRestore, []int{4, 6})
	if got := eventKinds(vv); got != "start:0→4 failover:4→4 rescale:4→6" {
		t.Errorf("events %s", got)
	}
}

// A failover at the same parallelism restores every split to the subtask
// that saved it: the prediction stays.
func TestFailoverKeepsThePrediction(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	s.UpdateKafka(kafkaSnap(t0, ends(100)))
	cur := func(assign.TopicPartition) int64 { return 50 }
	s.UpdateFlink(flinkSnap(t0, job("aa", nil, sourceVertex("src", 4, testTopics, freshOwner(4), cur))))
	ck := &flink.RestoreInfo{CheckpointID: 5, At: t0.Add(time.Second)}
	s.UpdateFlink(flinkSnap(t0.Add(10*time.Second), job("aa", ck, sourceVertex("src", 4, testTopics, freshOwner(4), cur))))
	vv := mustVertex(t, s, "aa", "src")
	wantExact(t, vv, ModeFresh, nil)
	if got := eventKinds(vv); got != "start:0→4 failover:4→4" {
		t.Errorf("events %s", got)
	}
	if e := vv.Lineage.Events[1]; e.CheckpointID != 5 {
		t.Errorf("failover event %+v, want checkpoint 5", e)
	}
}

// Partitions discovered after a restore skewscope saw are assigned at the
// current parallelism and modelled exactly; partitions discovered before
// a restore make every owner a guess.
func TestPartitionsDiscoveredAfterAndBeforeARestore(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	s.UpdateKafka(kafkaSnap(t0, ends(100)))
	cur := func(assign.TopicPartition) int64 { return 50 }
	s.UpdateFlink(flinkSnap(t0, job("aa", nil, sourceVertex("src", 4, testTopics, freshOwner(4), cur))))
	sp := &flink.RestoreInfo{CheckpointID: 7, IsSavepoint: true, ExternalPath: "file:/sp/1", At: t0.Add(time.Minute)}
	o46 := restoreOwner(t, assign.RestoreInput{Topics: testTopics, History: []int{4, 6}, ConnectorLine: assign.ConnectorLine5})
	s.UpdateFlink(flinkSnap(t0.Add(time.Minute), job("bb", sp, sourceVertex("src2", 6, testTopics, o46, cur))))
	wantExact(t, mustVertex(t, s, "bb", "src2"), ModeRestore, []int{4, 6})

	grown := []assign.Topic{{Name: "orders", Partitions: 16}, {Name: "payments.v1", Partitions: 6}}
	oGrown := restoreOwner(t, assign.RestoreInput{Topics: testTopics, History: []int{4, 6}, ConnectorLine: assign.ConnectorLine5,
		NewTopics: []assign.Topic{{Name: "orders", Partitions: 16}}})
	// Kafka's metadata, read after the restore, still has 12 partitions
	// of orders: the 4 that follow were created, and found, after it.
	s.UpdateKafka(kafkaSnap(t0.Add(90*time.Second), ends(100)))
	e := ends(100)
	e["orders"] = append(e["orders"], 100, 100, 100, 100)
	s.UpdateKafka(kafkaSnap(t0.Add(2*time.Minute), e))
	s.UpdateFlink(flinkSnap(t0.Add(2*time.Minute), job("bb", sp, sourceVertex("src2", 6, grown, oGrown, cur))))
	vv := mustVertex(t, s, "bb", "src2")
	wantExact(t, vv, ModeRestore, []int{4, 6})
	if vv.Prediction.Total != 22 {
		t.Errorf("total %d, want 22 partitions", vv.Prediction.Total)
	}
	if got := eventKinds(vv); got != "start:0→4 restore:4→6 partitions:6→6" {
		t.Errorf("events %s", got)
	}

	// Restored again from a savepoint of that run: the discovered
	// partitions' places in the saved lists are not known.
	sp2 := &flink.RestoreInfo{CheckpointID: 9, IsSavepoint: true, At: t0.Add(3 * time.Minute)}
	s.UpdateFlink(flinkSnap(t0.Add(3*time.Minute), job("cc", sp2, sourceVertex("src3", 3, grown, freshOwner(3), cur))))
	vv = mustVertex(t, s, "cc", "src3")
	pr := vv.Prediction
	if pr.Mode != ModeRestore || pr.Drift != 0 || pr.Headline.Kind != BasisUncertain || pr.Headline.Uncertain != 22 {
		t.Fatalf("after a restore following discovery: %+v", pr)
	}
}

// Without Kafka metadata a metric-id topic with '_' may be a topic with
// '.': its partitions are not modelled rather than reported as drift, and
// unknown lag is not "caught up".
func TestWithoutKafkaAnUnderscoreTopicIsNotGuessed(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	topics := []assign.Topic{{Name: "inventory.events", Partitions: 20}, {Name: "orders", Partitions: 4}}
	v := sourceVertex("src", 3, topics, freshOwner(3), func(assign.TopicPartition) int64 { return 5 })
	s.UpdateFlink(flinkSnap(t0, job("aa", nil, v)))
	vv := mustVertex(t, s, "aa", "src")
	pr := vv.Prediction
	if pr.Drift != 0 || pr.Headline.NotModelled != 20 || pr.Headline.Exact != 4 || pr.Headline.Kind != BasisUncertain {
		t.Fatalf("prediction %+v headline %+v, want 20 not modelled, 4 exact, no drift", pr, pr.Headline)
	}
	if !strings.Contains(strings.Join(noteWords(pr), " "), "inventory_events") {
		t.Errorf("notes %q should name the ambiguous topic", noteWords(pr))
	}
	for _, f := range vv.Figures {
		if f.Name == FigureMaxLagTime && f.Value != -1 {
			t.Errorf("max lag in time %+v with no Kafka offsets, want unknown (not caught up)", f)
		}
	}
	// A restored job: every owner depends on the real names.
	s.UpdateFlink(flinkSnap(t0.Add(time.Minute), job("bb", &flink.RestoreInfo{CheckpointID: 3}, sourceVertex("src", 5, topics, freshOwner(5), func(assign.TopicPartition) int64 { return 5 }))))
	vv = mustVertex(t, s, "bb", "src")
	if vv.Prediction.Mode != ModeNone || vv.Prediction.Drift != 0 {
		t.Errorf("restored without names: %+v", vv.Prediction)
	}
}

// A job that is no longer running is not compared: its metric ids are
// its last layout.
func TestFinishedJobIsNotComparedAsPredicted(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	s.UpdateKafka(kafkaSnap(t0, ends(100)))
	j := job("aa", nil, sourceVertex("src", 4, testTopics, freshOwner(4), func(assign.TopicPartition) int64 { return 1 }))
	j.State = "FINISHED"
	s.UpdateFlink(flinkSnap(t0, j))
	vv := mustVertex(t, s, "aa", "src")
	if vv.Prediction.Mode != ModeNone || vv.Prediction.Headline.Kind != BasisNotModelled || (vv.Prediction.NotModelled == nil || vv.Prediction.NotModelled.Reason != ReasonNotRunning || vv.Prediction.NotModelled.JobState != "FINISHED") {
		t.Errorf("finished job prediction %+v", vv.Prediction)
	}
}

// After an in-place rescale Flink's REST still lists a moved partition
// under its old subtask; only values the current attempts wrote decide.
// A partition the ids do not settle is outlined, counted as uncertain and
// never as drift.
func TestStaleMetricIdsNeverDecideAnOwner(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	s.UpdateKafka(kafkaSnap(t0, ends(100)))
	cur := func(assign.TopicPartition) int64 { return 50 }
	s.UpdateFlink(flinkSnap(t0, job("aa", nil, sourceVertex("src", 4, testTopics, freshOwner(4), cur))))

	o46 := restoreOwner(t, assign.RestoreInput{Topics: testTopics, History: []int{4, 6}, ConnectorLine: assign.ConnectorLine5})
	v := sourceVertex("src", 6, testTopics, o46, func(assign.TopicPartition) int64 { return -1 })
	// The old owners' frozen ids, with their old values.
	var stale []flink.KafkaPartitionState
	undecided := map[assign.TopicPartition]bool{}
	for _, tp := range assign.Partitions(testTopics) {
		old, now := freshOwner(4)(tp), o46(tp)
		if old == now {
			continue
		}
		kp := flink.KafkaPartition{Topic: flink.SanitizeMetricName(tp.Topic), Partition: tp.Partition}
		stale = append(stale, flink.KafkaPartitionState{KafkaPartition: kp, Subtask: old, Operator: "Source__Kafka_Source",
			CurrentOffset: 50, CommittedOffset: 45, Evidence: flink.EvidenceUnconfirmed})
		if len(undecided) < 2 {
			// Neither entry shows the new attempt yet.
			undecided[tp] = true
		}
	}
	if len(stale) < 4 {
		t.Fatalf("only %d partitions move at 4→6; pick other topics", len(stale))
	}
	for i := range v.Kafka.States {
		st := &v.Kafka.States[i]
		st.Evidence = flink.EvidenceCurrent
		if undecided[assign.TopicPartition{Topic: s.resolveForTest(st.Topic), Partition: st.Partition}] {
			st.Evidence = flink.EvidenceUnconfirmed
		}
	}
	v.Kafka.States = append(v.Kafka.States, stale...)
	ck := &flink.RestoreInfo{CheckpointID: 4, At: t0.Add(5 * time.Second)}
	s.UpdateFlink(flinkSnap(t0.Add(10*time.Second), job("aa", ck, v)))

	vv := mustVertex(t, s, "aa", "src")
	pr := vv.Prediction
	if pr.Mode != ModeRestore || pr.Drift != 0 || pr.Total != 18 || pr.Headline.Kind != BasisUncertain || pr.Headline.Uncertain != 2 || pr.Headline.Exact != 16 {
		t.Fatalf("prediction %+v headline %+v, want restore, 16 exact, 2 uncertain, no drift", pr, pr.Headline)
	}
	seen := 0
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			seen++
			tp := assign.TopicPartition{Topic: c.Topic, Partition: c.Partition}
			if c.OwnerUndetermined != undecided[tp] {
				t.Errorf("%v undetermined = %v", tp, c.OwnerUndetermined)
			}
			if c.OwnerUndetermined {
				if !slices.Contains(c.Candidates, o46(tp)) || !slices.Contains(c.Candidates, freshOwner(4)(tp)) || c.Basis != BasisUncertain {
					t.Errorf("%v candidates %v basis %s, want both subtasks, uncertain", tp, c.Candidates, c.Basis)
				}
			}
			// Every cell sits under the true owner: a determined one by the
			// evidence, an undetermined one under the model's candidate.
			if r.Subtask != o46(tp) {
				t.Errorf("%v shown under %d, the reader is %d", tp, r.Subtask, o46(tp))
			}
		}
	}
	if seen != 18 {
		t.Errorf("%d cells, want each of 18 partitions once", seen)
	}
	if !hasNote(pr, NoteUndetermined, func(n Note) bool { return n.Partitions == 2 }) {
		t.Errorf("notes %q should say two owners are not determined", noteWords(pr))
	}
}

// Two runs of one name listed together (an old one not yet expired, or a
// blue/green pair): only the newer one is the lineage's current run.
func TestOlderRunDoesNotTakeTheLineageBack(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	s.UpdateKafka(kafkaSnap(t0, ends(100)))
	cur := func(assign.TopicPartition) int64 { return 50 }
	old := job("aa", nil, sourceVertex("src", 4, testTopics, freshOwner(4), cur))
	s.UpdateFlink(flinkSnap(t0, old))
	o46 := restoreOwner(t, assign.RestoreInput{Topics: testTopics, History: []int{4, 6}, ConnectorLine: assign.ConnectorLine5})
	newer := job("bb", &flink.RestoreInfo{CheckpointID: 7, IsSavepoint: true}, sourceVertex("src", 6, testTopics, o46, cur))
	newer.StartTime = t0.Add(time.Minute)
	for i := range 3 {
		// Both running, listed in either order.
		jobs := []flink.JobSnapshot{old, newer}
		if i%2 == 1 {
			jobs = []flink.JobSnapshot{newer, old}
		}
		s.UpdateFlink(flinkSnap(t0.Add(time.Duration(i+1)*time.Minute), jobs...))
	}
	vv := mustVertex(t, s, "bb", "src")
	wantExact(t, vv, ModeRestore, []int{4, 6})
	if got := eventKinds(vv); got != "start:0→4 restore:4→6" {
		t.Errorf("events %s", got)
	}
}

// A job with two sources, one rescaled in place 4 → 6: the adaptive
// scheduler restarts the whole job from a checkpoint, so the other source
// restarts at its own parallelism. Its event names the rescale elsewhere,
// not a failover, also when REST names the checkpoint a poll after the
// new parallelism; a restart with no rescale stays a failover.
func TestRestartForARescaleElsewhereIsNotAFailover(t *testing.T) {
	orders := []assign.Topic{{Name: "orders", Partitions: 12}}
	clicks := []assign.Topic{{Name: "clicks", Partitions: 6}}
	cur := func(assign.TopicPartition) int64 { return 50 }
	two := func(restored *flink.RestoreInfo, pa int) flink.JobSnapshot {
		a := sourceVertex("srcA", pa, orders, freshOwner(pa), cur)
		a.Name = "Source: orders"
		if pa != 4 {
			a.Kafka = sourceVertex("srcA", pa, orders, restoreOwner(t, assign.RestoreInput{Topics: orders, History: []int{4, pa}, ConnectorLine: assign.ConnectorLine5}), cur).Kafka
		}
		b := sourceVertex("srcB", 3, clicks, freshOwner(3), cur)
		b.Name = "Source: clicks"
		j := job("aa", restored, a)
		j.Vertices = append(j.Vertices, b)
		return j
	}
	for _, late := range []bool{false, true} {
		s := New(Options{Now: func() time.Time { return t0 }})
		s.UpdateKafka(kafkaSnap(t0, ends(100)))
		s.UpdateFlink(flinkSnap(t0, two(nil, 4)))
		ck := &flink.RestoreInfo{CheckpointID: 9, At: t0.Add(9 * time.Second)}
		if late {
			s.UpdateFlink(flinkSnap(t0.Add(10*time.Second), two(nil, 6)))
		}
		s.UpdateFlink(flinkSnap(t0.Add(20*time.Second), two(ck, 6)))
		if got := eventKinds(mustVertex(t, s, "aa", "srcA")); got != "start:0→4 rescale:4→6" {
			t.Errorf("late %v: rescaled source's events %s", late, got)
		}
		vv := mustVertex(t, s, "aa", "srcB")
		if got := eventKinds(vv); got != "start:0→3 rescale-elsewhere:3→3" {
			t.Fatalf("late %v: other source's events %s, want its restart named for the rescale elsewhere", late, got)
		}
		e := vv.Lineage.Events[1]
		if len(e.Rescaled) != 1 || e.Rescaled[0] != (VertexRescale{Name: "Source: orders", From: 4, To: 6}) || e.CheckpointID != 9 {
			t.Errorf("late %v: event %+v, want Source: orders 4→6 from checkpoint 9", late, e)
		}
		// A later restart with nothing rescaled is a failover.
		ck2 := &flink.RestoreInfo{CheckpointID: 12, At: t0.Add(40 * time.Second)}
		s.UpdateFlink(flinkSnap(t0.Add(50*time.Second), two(ck2, 6)))
		if got := eventKinds(mustVertex(t, s, "aa", "srcB")); got != "start:0→3 rescale-elsewhere:3→3 failover:3→3" {
			t.Errorf("late %v: after a plain restart, events %s", late, got)
		}
	}
}
