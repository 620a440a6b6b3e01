package live

import (
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
)

// Partitions that appear around a rescale with no Kafka metadata read in
// between may have been discovered on either side of it. Once every
// reader is determined and Kafka lists the same partitions, the observed
// layout settles the question when it is exactly one of the two layouts.
// Here events grows 10 → 13 around the rescale 5 → 2; the two layouts
// differ on events-0, -10 and -11.

var (
	// discoveredBefore: found at p = 5, dealt out by the restore.
	discoveredBefore = assign.RestoreInput{Topics: events13, History: []int{5, 2}, ConnectorLine: assign.ConnectorLine5}
	// discoveredAfter: found at p = 2 by KafkaSourceEnumerator.getSplitOwner.
	discoveredAfter = assign.RestoreInput{Topics: events10, NewTopics: events13, History: []int{5, 2}, ConnectorLine: assign.ConnectorLine5}
)

// growAroundRescale feeds a fresh start at p = 5 over 10 partitions, then
// the rescale to p = 2 showing 13 with Kafka's metadata still at 10 (the
// lineage is unsure), then a poll at which Kafka lists 13 and the readers
// are owner. It returns the ongoing store and the rescale's checkpoint.
func growAroundRescale(t *testing.T, owner func(assign.TopicPartition) int) (*Store, *flink.RestoreInfo) {
	t.Helper()
	s := New(Options{Now: func() time.Time { return t0 }})
	cur := func(assign.TopicPartition) int64 { return 50 }
	s.UpdateKafka(kafkaSnap(t0, eventEnds(10)))
	s.UpdateFlink(flinkSnap(t0, job("aa", nil, sourceVertex("src", 5, events10, freshOwner(5), cur))))
	ck := &flink.RestoreInfo{CheckpointID: 4, At: t0.Add(25 * time.Second)}
	s.UpdateFlink(flinkSnap(t0.Add(30*time.Second), job("aa", ck, sourceVertex("src", 2, events13, owner, cur))))
	if pr := mustVertex(t, s, "aa", "src").Prediction; pr.Headline.Kind != BasisUncertain {
		t.Fatalf("Kafka still at 10: headline %q (%s), want uncertain", says(pr), pr.Headline.Kind)
	}
	s.UpdateKafka(kafkaSnap(t0.Add(40*time.Second), eventEnds(13)))
	s.UpdateFlink(flinkSnap(t0.Add(40*time.Second), job("aa", ck, sourceVertex("src", 2, events13, owner, cur))))
	return s, ck
}

// wantSettled fails unless the prediction is exact over the 13 partitions
// and says which side of the rescale the readers settled.
func wantSettled(t *testing.T, what string, vv VertexView, side string) {
	t.Helper()
	wantExact(t, vv, ModeRestore, []int{5, 2})
	if !hasNote(vv.Prediction, NoteDiscoverySettled, func(n Note) bool {
		return n.Partitions == 3 && n.Before == (side == "before") && n.Step == EventRescale && n.From == 5 && n.To == 2
	}) {
		t.Errorf("%s: notes %q, want one saying the 3 new partitions were discovered %s the rescale from p = 5 to p = 2", what, noteWords(vv.Prediction), side)
	}
	if hasNote(vv.Prediction, NoteUnsureDiscovery, nil) {
		t.Errorf("%s: notes %q still call the discovery time unknown", what, noteWords(vv.Prediction))
	}
}

func TestObservedReadersSettleDiscoveryAfterTheRescale(t *testing.T) {
	after := restoreOwner(t, discoveredAfter)
	s, _ := growAroundRescale(t, after)
	wantSettled(t, "readers as discovered at p = 2", mustVertex(t, s, "aa", "src"), "after")

	// ?history= gives the same parallelisms: the same settlement.
	vh, err := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1, History: []int{5}})
	if err != nil {
		t.Fatal(err)
	}
	wantSettled(t, "?history=5", vh, "after")
}

func TestObservedReadersSettleDiscoveryBeforeTheRescale(t *testing.T) {
	before := restoreOwner(t, discoveredBefore)
	s, _ := growAroundRescale(t, before)
	wantSettled(t, "readers as discovered at p = 5", mustVertex(t, s, "aa", "src"), "before")
}

// Readers that are neither layout leave the discovery time open: the
// cells that depend on it stay uncertain, none is drift.
func TestObservedReadersMatchingNeitherDiscoveryStayUncertain(t *testing.T) {
	after, before := restoreOwner(t, discoveredAfter), restoreOwner(t, discoveredBefore)
	mixed := func(tp assign.TopicPartition) int {
		if tp.Partition == 0 {
			return before(tp) // the rest as after: neither layout
		}
		return after(tp)
	}
	s, _ := growAroundRescale(t, mixed)
	vv := mustVertex(t, s, "aa", "src")
	pr := vv.Prediction
	if pr.Drift != 0 || pr.Headline.Kind != BasisUncertain || pr.Total != 13 {
		t.Errorf("drift %d headline %q (%s) over %d, want no drift, uncertain, 13 partitions", pr.Drift, says(pr), pr.Headline.Kind, pr.Total)
	}
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			if (c.Partition == 0 || c.Partition >= 10) && c.Basis != BasisUncertain {
				t.Errorf("events-%d is %s, want uncertain: its owner depends on when the new partitions were found", c.Partition, c.Basis)
			}
		}
	}
	if hasNote(pr, NoteDiscoverySettled, nil) {
		t.Errorf("notes %q settle a discovery time no layout shows", noteWords(pr))
	}
}

// A settled discovery time outlives the observation that settled it while
// the source stays at this step (metric ids that no longer decide some
// readers do not bring the doubt back), and goes with the next rescale.
func TestSettledDiscoveryKeptUntilTheNextStep(t *testing.T) {
	before := restoreOwner(t, discoveredBefore)
	s, ck := growAroundRescale(t, before)
	wantSettled(t, "readers as discovered at p = 5", mustVertex(t, s, "aa", "src"), "before")

	// A later poll: events-10 and -11 are listed under both subtasks with
	// values no current attempt wrote, so their readers are not determined.
	v := sourceVertex("src", 2, events13, before, func(assign.TopicPartition) int64 { return 50 })
	undecided := map[int32]bool{10: true, 11: true}
	var stale []flink.KafkaPartitionState
	for i := range v.Kafka.States {
		st := &v.Kafka.States[i]
		st.Evidence = flink.EvidenceCurrent
		if undecided[st.Partition] {
			st.Evidence = flink.EvidenceUnconfirmed
			dup := *st
			dup.Subtask = 1 - st.Subtask
			stale = append(stale, dup)
		}
	}
	v.Kafka.States = append(v.Kafka.States, stale...)
	s.UpdateFlink(flinkSnap(t0.Add(50*time.Second), job("aa", ck, v)))
	vv := mustVertex(t, s, "aa", "src")
	pr := vv.Prediction
	if pr.Drift != 0 || pr.Headline.Exact != 11 || pr.Headline.Uncertain != 2 {
		t.Errorf("two readers undetermined: drift %d, %d exact, %d uncertain (%s), want 11 exact and the 2 undetermined uncertain", pr.Drift, pr.Headline.Exact, pr.Headline.Uncertain, says(pr))
	}
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			tp := assign.TopicPartition{Topic: c.Topic, Partition: c.Partition}
			if c.OwnerUndetermined != undecided[c.Partition] {
				t.Errorf("events-%d undetermined %v", c.Partition, c.OwnerUndetermined)
			}
			if !c.OwnerUndetermined && c.Basis != BasisExact {
				t.Errorf("events-%d, reader determined, is %s: the settled discovery time was forgotten", c.Partition, c.Basis)
			}
			if c.Predicted != before(tp) {
				t.Errorf("events-%d predicted on %d, want %d (discovered before the rescale)", c.Partition, c.Predicted, before(tp))
			}
		}
	}
	if !hasNote(pr, NoteDiscoverySettled, func(n Note) bool { return n.Before && n.Step == EventRescale && n.To == 2 }) {
		t.Errorf("notes %q, want the settled discovery time", noteWords(pr))
	}

	// The next rescale, 2 → 3, with 3 more partitions first seen with it:
	// a new question, and with two restores the model cannot place
	// partitions found between them, so every cell is uncertain again.
	events16 := []assign.Topic{{Name: "events", Partitions: 16}}
	ck2 := &flink.RestoreInfo{CheckpointID: 9, At: t0.Add(55 * time.Second)}
	s.UpdateFlink(flinkSnap(t0.Add(60*time.Second), job("aa", ck2, sourceVertex("src", 3, events16, freshOwner(3), func(assign.TopicPartition) int64 { return 50 }))))
	s.UpdateKafka(kafkaSnap(t0.Add(60*time.Second), eventEnds(16)))
	pr = mustVertex(t, s, "aa", "src").Prediction
	if pr.Drift != 0 || pr.Uncertain != 16 || pr.Headline.Kind != BasisUncertain {
		t.Errorf("after the next rescale: drift %d, %d of %d uncertain (%s), want all 16 uncertain", pr.Drift, pr.Uncertain, pr.Total, says(pr))
	}
	if hasNote(pr, NoteDiscoverySettled, nil) {
		t.Errorf("after the next rescale: notes %q keep the last step's settled discovery", noteWords(pr))
	}
}

// Partitions found around the rescale 5 → 2, on whichever side, joined the
// readers' lists between the fresh start and the next rescale 2 → 3, as
// partitions discovered while the job runs do: the model does not know
// those lists' order, so after the next rescale every owner is its best
// guess, not exact, and none is drift.
func TestPartitionsFoundAroundARescaleAreGuessesAfterTheNext(t *testing.T) {
	for _, side := range []struct {
		name string
		in   assign.RestoreInput
	}{{"after", discoveredAfter}, {"before", discoveredBefore}} {
		t.Run(side.name, func(t *testing.T) {
			s, _ := growAroundRescale(t, restoreOwner(t, side.in))
			wantSettled(t, "at p = 2", mustVertex(t, s, "aa", "src"), side.name)
			o523 := restoreOwner(t, assign.RestoreInput{Topics: events13, History: []int{5, 2, 3}, ConnectorLine: assign.ConnectorLine5})
			ck2 := &flink.RestoreInfo{CheckpointID: 9, At: t0.Add(55 * time.Second)}
			s.UpdateFlink(flinkSnap(t0.Add(60*time.Second), job("aa", ck2, sourceVertex("src", 3, events13, o523, func(assign.TopicPartition) int64 { return 50 }))))
			pr := mustVertex(t, s, "aa", "src").Prediction
			if pr.Drift != 0 || pr.Headline.Kind != BasisUncertain || pr.Uncertain != 13 {
				t.Errorf("after the next rescale: drift %d, %d of %d uncertain, headline %q (%s); want every owner a best guess", pr.Drift, pr.Uncertain, pr.Total, says(pr), pr.Headline.Kind)
			}
			if !hasNote(pr, NoteDiscoveredBeforeRestore, nil) {
				t.Errorf("after the next rescale: notes %q do not say the lists are not known", noteWords(pr))
			}
		})
	}
}

// Over an inferred history the settled layout is inferred, not exact: a
// dashboard started after a restore 6 → 4 whose last metadata read
// predates the restore sees the topic grow 10 → 14, and the readers show
// the discovery after the restore.
func TestObservedReadersSettleDiscoveryOverAnInferredHistory(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	cur := func(assign.TopicPartition) int64 { return 50 }
	events14 := []assign.Topic{{Name: "events", Partitions: 14}}
	o64 := restoreOwner(t, assign.RestoreInput{Topics: events10, History: []int{6, 4}, ConnectorLine: assign.ConnectorLine5})
	sp := &flink.RestoreInfo{CheckpointID: 8, IsSavepoint: true, ExternalPath: "file:/sp/2", At: t0.Add(-time.Minute)}
	s.UpdateKafka(kafkaSnap(t0.Add(-2*time.Minute), eventEnds(10)))
	s.UpdateFlink(flinkSnap(t0, job("bb", sp, sourceVertex("src", 4, events10, o64, cur))))
	if pr := mustVertex(t, s, "bb", "src").Prediction; pr.Mode != ModeInferred || pr.Drift != 0 {
		t.Fatalf("first sight: mode %s drift %d (%s), want 6 → 4 inferred", pr.Mode, pr.Drift, says(pr))
	}
	after := restoreOwner(t, assign.RestoreInput{Topics: events10, NewTopics: events14, History: []int{6, 4}, ConnectorLine: assign.ConnectorLine5})
	s.UpdateKafka(kafkaSnap(t0.Add(10*time.Second), eventEnds(14)))
	s.UpdateFlink(flinkSnap(t0.Add(10*time.Second), job("bb", sp, sourceVertex("src", 4, events14, after, cur))))
	vv := mustVertex(t, s, "bb", "src")
	pr := vv.Prediction
	if pr.Mode != ModeInferred || pr.Drift != 0 || pr.Total != 14 || pr.Headline.Kind != BasisInferred || pr.Headline.Inferred != 14 {
		t.Errorf("grown to 14: mode %s drift %d, headline %q (%s, %d inferred) over %d; want inferred over all 14", pr.Mode, pr.Drift, says(pr), pr.Headline.Kind, pr.Headline.Inferred, pr.Total)
	}
	if !hasNote(pr, NoteDiscoverySettled, func(n Note) bool {
		return n.Partitions == 4 && !n.Before && n.Step == EventRestore && n.To == 4
	}) {
		t.Errorf("notes %q, want the settled discovery time", noteWords(pr))
	}
}
