package live

import (
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
)

// Partition growth around an in-place rescale, as the adaptive scheduler
// does it: a topic grown 10 → 13 at p = 5, then rescaled 5 → 2.

var (
	events10 = []assign.Topic{{Name: "events", Partitions: 10}}
	events13 = []assign.Topic{{Name: "events", Partitions: 13}}
)

func eventEnds(n int) map[string][]int64 {
	e := make([]int64, n)
	for i := range e {
		e[i] = 100
	}
	return map[string][]int64{"events": e}
}

// rescaled5to2 returns a store (opts, at t0) that saw the source read
// events (10 partitions) at p = 5 from its fresh start, then rescaled in
// place to 2 from checkpoint ck at t0 + 30 s, with Kafka's metadata read
// at t0 only; o52 gives the owners at 2.
func rescaled5to2(t *testing.T, opts Options) (s *Store, ck *flink.RestoreInfo, o52 func(assign.TopicPartition) int) {
	t.Helper()
	opts.Now = func() time.Time { return t0 }
	s = New(opts)
	cur := func(assign.TopicPartition) int64 { return 50 }
	s.UpdateKafka(kafkaSnap(t0, eventEnds(10)))
	s.UpdateFlink(flinkSnap(t0, job("aa", nil, sourceVertex("src", 5, events10, freshOwner(5), cur))))
	o52 = restoreOwner(t, assign.RestoreInput{Topics: events10, History: []int{5, 2}, ConnectorLine: assign.ConnectorLine5})
	ck = &flink.RestoreInfo{CheckpointID: 4, At: t0.Add(25 * time.Second)}
	s.UpdateFlink(flinkSnap(t0.Add(30*time.Second), job("aa", ck, sourceVertex("src", 2, events10, o52, cur))))
	return s, ck, o52
}

// notExactWithGaps fails when the headline says exact while the partition
// set is not settled, or does not say how.
func notExactWithGaps(t *testing.T, what string, pr *Prediction, missing, unknown int) {
	t.Helper()
	if pr.Missing != missing || pr.UnknownToKafka != unknown {
		t.Errorf("%s: missing %d, unknown to Kafka %d; want %d and %d", what, pr.Missing, pr.UnknownToKafka, missing, unknown)
	}
	if pr.Headline.Kind == BasisExact || pr.Headline.Kind == BasisInferred {
		t.Errorf("%s: headline %q (%s) with the partition set unsettled, want not exact", what, says(pr), pr.Headline.Kind)
	}
}

// TestGrowthJustBeforeARescaleIsUncertainNotDrift: the dashboard sees the
// 3 new partitions only after the rescale, with no Kafka metadata read in
// between to say they did not exist before it. Flink found them at p = 5,
// so its layout is the restore model over all 13; the page must not call
// that drift (nor the layout exact): the new partitions' cells, and those
// whose owner depends on when they were found, are uncertain. Once Kafka
// lists the 13 too, the readers are exactly the layout of a discovery at
// p = 5 and not that of one at p = 2: that settles it, and the page is
// exact.
func TestGrowthJustBeforeARescaleIsUncertainNotDrift(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	cur := func(assign.TopicPartition) int64 { return 50 }
	s.UpdateKafka(kafkaSnap(t0, eventEnds(10)))
	s.UpdateFlink(flinkSnap(t0, job("aa", nil, sourceVertex("src", 5, events10, freshOwner(5), cur))))
	wantExact(t, mustVertex(t, s, "aa", "src"), ModeFresh, nil)

	truth := restoreOwner(t, assign.RestoreInput{Topics: events13, History: []int{5, 2}, ConnectorLine: assign.ConnectorLine5})
	ck := &flink.RestoreInfo{CheckpointID: 4, At: t0.Add(25 * time.Second)}
	s.UpdateFlink(flinkSnap(t0.Add(30*time.Second), job("aa", ck, sourceVertex("src", 2, events13, truth, cur))))
	vv := mustVertex(t, s, "aa", "src")
	checkUnsure := func(what string, vv VertexView) {
		t.Helper()
		pr := vv.Prediction
		if pr.Mode != ModeRestore || pr.Drift != 0 || pr.Total != 13 {
			t.Errorf("%s: mode %s drift %d total %d (%s), want restore, no drift over 13", what, pr.Mode, pr.Drift, pr.Total, says(pr))
		}
		for _, r := range vv.Subtasks {
			for _, c := range r.Partitions {
				if c.Partition >= 10 && (!c.Uncertain || c.Basis != BasisUncertain) {
					t.Errorf("%s: events-%d, found between the last sight at p=5 and the rescale, is %s (uncertain %v), want uncertain", what, c.Partition, c.Basis, c.Uncertain)
				}
			}
		}
		for _, n := range noteWords(pr) {
			if strings.Contains(n, "discovered after the last restore") {
				t.Errorf("%s: note %q places the new partitions after the restore", what, n)
			}
		}
	}
	checkUnsure("Flink names 13, Kafka's metadata 10", vv)
	notExactWithGaps(t, "Flink names 13, Kafka's metadata 10", vv.Prediction, 0, 3)

	s.UpdateKafka(kafkaSnap(t0.Add(40*time.Second), eventEnds(13)))
	s.UpdateFlink(flinkSnap(t0.Add(40*time.Second), job("aa", ck, sourceVertex("src", 2, events13, truth, cur))))
	vv = mustVertex(t, s, "aa", "src")
	wantSettled(t, "both list 13", vv, "before")
}

// TestGrowthAfterARescaleIsModelledAfterIt: Kafka's metadata read after
// the rescale still had 10 partitions, so the 3 that follow were found at
// p = 2, after it: the restore model with the growth after the restore is
// exact, also with ?history=5, and until both sides name the 13 the page
// is not exact and says how many partitions it may be missing.
func TestGrowthAfterARescaleIsModelledAfterIt(t *testing.T) {
	s, ck, o52 := rescaled5to2(t, Options{})
	cur := func(assign.TopicPartition) int64 { return 50 }
	s.UpdateKafka(kafkaSnap(t0.Add(40*time.Second), eventEnds(10)))
	wantExact(t, mustVertex(t, s, "aa", "src"), ModeRestore, []int{5, 2})

	// Kafka lists 13, the metric ids still 10.
	s.UpdateKafka(kafkaSnap(t0.Add(50*time.Second), eventEnds(13)))
	s.UpdateFlink(flinkSnap(t0.Add(50*time.Second), job("aa", ck, sourceVertex("src", 2, events10, o52, cur))))
	vv := mustVertex(t, s, "aa", "src")
	notExactWithGaps(t, "Kafka lists 13, the ids 10", vv.Prediction, 3, 0)
	jv, err := s.State().Job("jm", "aa")
	if err != nil {
		t.Fatal(err)
	}
	if v := jv.Vertices[0]; v.Partitions != 10 || v.MissingPartitions != 3 {
		t.Errorf("Kafka lists 13, the ids 10: job JSON partitions %d, missing %d; want 10 and 3", v.Partitions, v.MissingPartitions)
	}
	if vv.Prediction.Drift != 0 {
		t.Errorf("Kafka lists 13, the ids 10: drift %d, want 0", vv.Prediction.Drift)
	}

	grown := restoreOwner(t, assign.RestoreInput{Topics: events10, NewTopics: events13, History: []int{5, 2}, ConnectorLine: assign.ConnectorLine5})
	s.UpdateFlink(flinkSnap(t0.Add(60*time.Second), job("aa", ck, sourceVertex("src", 2, events13, grown, cur))))
	vv = mustVertex(t, s, "aa", "src")
	wantExact(t, vv, ModeRestore, []int{5, 2})
	if pr := vv.Prediction; pr.Missing != 0 || pr.UnknownToKafka != 0 {
		t.Errorf("both list 13: missing %d, unknown to Kafka %d, want none", pr.Missing, pr.UnknownToKafka)
	}

	vh, err := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1, History: []int{5}})
	if err != nil {
		t.Fatal(err)
	}
	if pr := vh.Prediction; pr.Drift != 0 || pr.Matched != pr.Total || pr.Total != 13 {
		t.Errorf("?history=5: drift %d, matched %d of %d (%s); want the growth after the restore, no drift", pr.Drift, pr.Matched, pr.Total, says(pr))
	}
}

// TestGrowthAfterAnInferredRestoreIsModelledAfterIt: a dashboard started
// after a restore 6 → 4 infers the history from the layout; the topic then
// grows 10 → 14, after Kafka's metadata (read after the restore) listed 10.
// Flink placed the 4 new partitions at p = 4 after the restore: the page
// models them so, drift 0, instead of as present from the fresh start.
func TestGrowthAfterAnInferredRestoreIsModelledAfterIt(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	cur := func(assign.TopicPartition) int64 { return 50 }
	o64 := restoreOwner(t, assign.RestoreInput{Topics: events10, History: []int{6, 4}, ConnectorLine: assign.ConnectorLine5})
	sp := &flink.RestoreInfo{CheckpointID: 8, IsSavepoint: true, ExternalPath: "file:/sp/2", At: t0.Add(-time.Minute)}
	s.UpdateKafka(kafkaSnap(t0, eventEnds(10)))
	s.UpdateFlink(flinkSnap(t0, job("bb", sp, sourceVertex("src", 4, events10, o64, cur))))
	vv := mustVertex(t, s, "bb", "src")
	if pr := vv.Prediction; pr.Mode != ModeInferred || pr.Drift != 0 {
		t.Fatalf("first sight: mode %s drift %d (%s), want 6 → 4 inferred", pr.Mode, pr.Drift, says(pr))
	}
	events14 := []assign.Topic{{Name: "events", Partitions: 14}}
	grown := restoreOwner(t, assign.RestoreInput{Topics: events10, NewTopics: events14, History: []int{6, 4}, ConnectorLine: assign.ConnectorLine5})
	s.UpdateKafka(kafkaSnap(t0.Add(10*time.Second), eventEnds(14)))
	s.UpdateFlink(flinkSnap(t0.Add(10*time.Second), job("bb", sp, sourceVertex("src", 4, events14, grown, cur))))
	vv = mustVertex(t, s, "bb", "src")
	pr := vv.Prediction
	if pr.Mode != ModeInferred || pr.Drift != 0 || pr.Total != 14 || pr.Matched != 14 {
		t.Errorf("after growth to 14: mode %s drift %d matched %d of %d (%s); want inferred, all 14 matched", pr.Mode, pr.Drift, pr.Matched, pr.Total, says(pr))
	}
	vh, err := s.State().Vertex("bb", "src", VertexQuery{Highlight: -1, History: []int{6}})
	if err != nil {
		t.Fatal(err)
	}
	if pr := vh.Prediction; pr.Drift != 0 || pr.Matched != 14 {
		t.Errorf("?history=6 after growth to 14: drift %d matched %d of %d (%s); want all 14 matched", pr.Drift, pr.Matched, pr.Total, says(pr))
	}
}

// TestGrowthJustBeforeASecondRescaleLeavesEveryCellUncertain: with two
// restores in the history, partitions that may have been found before the
// latest one sit somewhere in the lists the model does not rebuild: every
// cell is uncertain, none is drift.
func TestGrowthJustBeforeASecondRescaleLeavesEveryCellUncertain(t *testing.T) {
	s, _, _ := rescaled5to2(t, Options{})
	cur := func(assign.TopicPartition) int64 { return 50 }
	// Whatever Flink shows after the second rescale: its own owners are
	// not known to the model, so the cells are shown where they are.
	ck2 := &flink.RestoreInfo{CheckpointID: 6, At: t0.Add(55 * time.Second)}
	s.UpdateFlink(flinkSnap(t0.Add(60*time.Second), job("aa", ck2, sourceVertex("src", 3, events13, freshOwner(3), cur))))
	vv := mustVertex(t, s, "aa", "src")
	pr := vv.Prediction
	if pr.Mode != ModeRestore || pr.Drift != 0 || pr.Uncertain != 13 {
		t.Errorf("mode %s drift %d uncertain %d of %d (%s), want restore, no drift, all 13 uncertain", pr.Mode, pr.Drift, pr.Uncertain, pr.Total, says(pr))
	}
}

// TestFollowedTopicReadAfterARescaleSettlesDiscovery: the whole metadata
// was last read before the rescale, but the source's topic was read again
// after it (a followed topic, Topic.ReadAt) with 10 partitions: the 3 that
// follow were found after the rescale, and the page says exact once both
// sides name them. The store also tells OnFollow the topics sources read.
func TestFollowedTopicReadAfterARescaleSettlesDiscovery(t *testing.T) {
	var told [][]string
	s, ck, _ := rescaled5to2(t, Options{OnFollow: func(cluster string, topics []string) {
		if cluster == "prod" {
			told = append(told, topics)
		}
	}})
	cur := func(assign.TopicPartition) int64 { return 50 }
	if len(told) != 1 || len(told[0]) != 1 || told[0][0] != "events" {
		t.Errorf("OnFollow was told %v, want [[events]] once, at the first poll", told)
	}
	ks := kafkaSnap(t0.Add(40*time.Second), eventEnds(10))
	ks.MetadataAt = t0
	for i := range ks.Topics {
		ks.Topics[i].ReadAt = t0.Add(40 * time.Second)
	}
	s.UpdateKafka(ks)
	if len(told) != 1 {
		t.Errorf("OnFollow told again with the same topics: %v", told)
	}

	grown := restoreOwner(t, assign.RestoreInput{Topics: events10, NewTopics: events13, History: []int{5, 2}, ConnectorLine: assign.ConnectorLine5})
	ks = kafkaSnap(t0.Add(60*time.Second), eventEnds(13))
	ks.MetadataAt = t0
	for i := range ks.Topics {
		ks.Topics[i].ReadAt = t0.Add(60 * time.Second)
	}
	s.UpdateKafka(ks)
	s.UpdateFlink(flinkSnap(t0.Add(60*time.Second), job("aa", ck, sourceVertex("src", 2, events13, grown, cur))))
	vv := mustVertex(t, s, "aa", "src")
	wantExact(t, vv, ModeRestore, []int{5, 2})
	// The metadata settled it, not the readers (who would settle it too,
	// once every one is determined).
	for _, n := range noteWords(vv.Prediction) {
		if strings.Contains(n, "The observed readers show") {
			t.Errorf("note %q: the discovery time was left to the readers although a metadata read after the rescale settles it", n)
		}
	}

	ended := job("aa", ck, sourceVertex("src", 2, events13, grown, cur))
	ended.State = "CANCELED"
	s.UpdateFlink(flinkSnap(t0.Add(70*time.Second), ended))
	if n := len(told); n != 2 || len(told[1]) != 0 {
		t.Errorf("no source left: OnFollow told %v, want a second, empty set", told)
	}
}
