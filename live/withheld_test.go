package live

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/internal/bidi"
)

// withheldStore is a store that saw the source at p = 4 list every
// partition of testTopics (at t0), then got snap.
func withheldStore(t *testing.T, snap func(v *flink.VertexSnapshot)) *Store {
	t.Helper()
	now := t0.Add(time.Minute)
	s := New(Options{Now: func() time.Time { return now }})
	s.UpdateKafka(kafkaSnap(t0, ends(1000)))
	cur := func(tp assign.TopicPartition) int64 { return 900 }
	job := func() flink.JobSnapshot {
		return flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", Vertices: []flink.VertexSnapshot{sourceVertex("src", 4, testTopics, freshOwner(4), cur)}}
	}
	s.UpdateFlink(flinkSnap(t0, job()))
	j := job()
	snap(&j.Vertices[0])
	s.UpdateFlink(flinkSnap(t0.Add(40*time.Second), j))
	return s
}

// checkWithheldCells checks that the cells of the subtasks in silent are
// judged withheld (prediction only) under the model's subtask, and the
// others as predicted; it returns how many are withheld.
func checkWithheldCells(t *testing.T, vv VertexView, silent map[int]bool) int {
	t.Helper()
	n := 0
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			o, _ := assign.KafkaSplitOwner(assign.TopicPartition{Topic: c.Topic, Partition: c.Partition}, 4)
			want := VerdictMatch
			if silent[o] {
				want, n = VerdictWithheld, n+1
			}
			if got := Judge(c, r.Subtask); got != want || r.Subtask != o || c.Withheld != (want == VerdictWithheld) {
				t.Errorf("%s-%d under subtask %d: verdict %q, withheld %v; want %q under subtask %d", c.Topic, c.Partition, r.Subtask, got, c.Withheld, want, o)
			}
		}
	}
	return n
}

// checkNoUndeterminedWords checks that nothing calls the withheld readers
// undetermined or blames a restart.
func checkNoUndeterminedWords(t *testing.T, pr *Prediction) {
	t.Helper()
	if hasNote(pr, NoteUndetermined, nil) {
		t.Errorf("notes %q call readers undetermined", noteWords(pr))
	}
	for _, s := range noteWords(pr) {
		for _, bad := range []string{"do not determine", "not determined", "before the latest restart", "0 of 18"} {
			if strings.Contains(s, bad) {
				t.Errorf("prediction says %q, which holds %q", s, bad)
			}
		}
	}
}

// A source whose ids Flink withheld entirely has no observed owner: the
// headline says the page shows the prediction only, why, and the model;
// no cell is counted as undetermined or matched; the job and the overview
// count the withheld partitions.
func TestWithheldSourceHeadlineSaysPredictionOnly(t *testing.T) {
	s := withheldStore(t, func(v *flink.VertexSnapshot) { v.Kafka = nil })
	vv, err := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	if err != nil || vv.Withheld == nil || vv.Prediction == nil {
		t.Fatalf("Vertex = withheld %+v, prediction %+v, %v; want both", vv.Withheld, vv.Prediction, err)
	}
	pr := vv.Prediction
	if n := checkWithheldCells(t, vv, map[int]bool{0: true, 1: true, 2: true, 3: true}); n != 18 {
		t.Errorf("%d withheld cells, want 18", n)
	}
	want := Tally{Withheld: 18}
	if pr.Headline.Verdicts != want || pr.Withheld != 18 || pr.Matched != 0 || pr.Uncertain != 0 || pr.Total != 18 {
		t.Errorf("verdicts %+v, withheld %d, matched %d, uncertain %d, total %d; want %+v, 18, 0, 0, 18",
			pr.Headline.Verdicts, pr.Withheld, pr.Matched, pr.Uncertain, pr.Total, want)
	}
	if pr.Mode != ModeFresh || pr.NotModelled != nil || vv.Withheld.Cause != CauseMetricDumpLimit {
		t.Errorf("mode %s (%s), withheld cause %s; want a fresh start's prediction, withheld by the metric dump", pr.Mode, says(pr), vv.Withheld.Cause)
	}
	checkNoUndeterminedWords(t, pr)
	for _, f := range vv.Figures {
		if f.Name == FigureAssignment && (f.Value != -1 || f.Kind != Computed) {
			t.Errorf("assignment figure %+v, want no matched count (prediction only), computed", f)
		}
	}
	jv, err := s.State().Job("jm", "aa")
	if err != nil || len(jv.Vertices) != 1 || jv.Vertices[0].WithheldPartitions != 18 {
		t.Errorf("Job: %+v (%v), want the source's 18 withheld partitions", jv.Vertices, err)
	}
	if ov := s.State().Overview(); len(ov.Jobs) != 1 || ov.Jobs[0].WithheldPartitions != 18 {
		t.Errorf("Overview jobs %+v, want 18 withheld partitions", ov.Jobs)
	}
}

// A source one of whose subtasks lists no id: that subtask's partitions
// are prediction only, the others' judged; the headline counts both.
func TestPartlyWithheldSourceHeadlineCountsBoth(t *testing.T) {
	s := withheldStore(t, func(v *flink.VertexSnapshot) {
		var kept []flink.KafkaPartitionState
		for _, st := range v.Kafka.States {
			if st.Subtask != 3 {
				kept = append(kept, st)
			}
		}
		v.Kafka.States = kept
	})
	vv, err := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	if err != nil || vv.Withheld == nil || vv.Prediction == nil {
		t.Fatalf("Vertex = withheld %+v, prediction %+v, %v; want both", vv.Withheld, vv.Prediction, err)
	}
	n := checkWithheldCells(t, vv, map[int]bool{3: true})
	pr := vv.Prediction
	if v := pr.Headline.Verdicts; v.Withheld != n || v.Match != 18-n || v.Undetermined != 0 || n == 0 {
		t.Errorf("verdicts %+v, want %d withheld and %d matched", v, n, 18-n)
	}
	if pr.Mode != ModeFresh || vv.Withheld.All || !slices.Equal(vv.Withheld.Subtasks, []int{3}) {
		t.Errorf("mode %s, withheld %+v; want a fresh start's prediction, subtask 3 withheld", pr.Mode, vv.Withheld)
	}
	checkNoUndeterminedWords(t, pr)
}

// Listed ids whose values no longer come (the collector's Unreported):
// those subtasks' readers are withheld, the cause said as REST tells it.
func TestUnreportedSubtasksAreWithheld(t *testing.T) {
	unreport := func(silent, unlisted map[int]bool) func(v *flink.VertexSnapshot) {
		return func(v *flink.VertexSnapshot) {
			var kept []flink.KafkaPartitionState
			for _, st := range v.Kafka.States {
				if unlisted[st.Subtask] {
					continue
				}
				if silent[st.Subtask] {
					st.CurrentOffset, st.CommittedOffset = -1, -1
					v.Kafka.Unreported = append(v.Kafka.Unreported, st)
				} else {
					kept = append(kept, st)
				}
			}
			v.Kafka.States = kept
		}
	}
	for _, tc := range []struct {
		name     string
		silent   map[int]bool // listed, no values
		unlisted map[int]bool // no id listed
		all      bool
		subtasks []int
	}{
		{"one subtask", map[int]bool{1: true}, nil, false, []int{1}},
		{"one subtask, another listing none", map[int]bool{1: true}, map[int]bool{2: true}, false, []int{1, 2}},
		{"every subtask", map[int]bool{0: true, 1: true, 2: true, 3: true}, nil, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := withheldStore(t, unreport(tc.silent, tc.unlisted))
			vv, err := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
			if err != nil || vv.Withheld == nil || vv.Prediction == nil {
				t.Fatalf("Vertex = withheld %+v, prediction %+v, %v; want both", vv.Withheld, vv.Prediction, err)
			}
			w := vv.Withheld
			if w.Cause != CauseNoValues || w.All != tc.all || w.Pending != "" || !slices.Equal(w.Topics, []string{"orders", "payments.v1"}) {
				t.Errorf("withheld %+v, want cause %q, all %v, topics orders and payments.v1", w, CauseNoValues, tc.all)
			}
			var unlisted []int
			for i := range 4 {
				if tc.unlisted[i] {
					unlisted = append(unlisted, i)
				}
			}
			if !slices.Equal(w.Subtasks, tc.subtasks) || !slices.Equal(w.Unlisted, unlisted) {
				t.Errorf("withheld subtasks %v, unlisted %v; want %v, %v unlisted", w.Subtasks, w.Unlisted, tc.subtasks, unlisted)
			}
			withheld := maps.Clone(tc.silent)
			maps.Copy(withheld, tc.unlisted)
			n := checkWithheldCells(t, vv, withheld)
			if pr := vv.Prediction; pr.Headline.Verdicts.Withheld != n || n == 0 {
				t.Errorf("headline %s, verdicts %+v, want %d withheld", says(pr), pr.Headline.Verdicts, n)
			}
			checkNoUndeterminedWords(t, vv.Prediction)
		})
	}
}

// Unreported entries seen on a source's first poll name its partitions:
// the page shows them, withheld, with no earlier poll to go on.
func TestUnreportedOnFirstPollShowsThePartitions(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0.Add(time.Minute) }})
	s.UpdateKafka(kafkaSnap(t0, ends(1000)))
	v := sourceVertex("src", 4, testTopics, freshOwner(4), func(assign.TopicPartition) int64 { return 900 })
	v.Kafka.Unreported, v.Kafka.States = v.Kafka.States, nil
	s.UpdateFlink(flinkSnap(t0.Add(40*time.Second), flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", Vertices: []flink.VertexSnapshot{v}}))
	vv, err := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	if err != nil || vv.Withheld == nil || vv.Withheld.Cause != CauseNoValues || !vv.Withheld.All {
		t.Fatalf("Vertex = withheld %+v, %v; want every reader withheld, no values", vv.Withheld, err)
	}
	if n := checkWithheldCells(t, vv, map[int]bool{0: true, 1: true, 2: true, 3: true}); n != 18 {
		t.Errorf("%d withheld cells, want 18", n)
	}
}

// A topic name with a bidi control in an unreported entry is escaped like
// every other text Flink sends, in the note's topics and the cells.
func TestUnreportedTopicNamesAreEscaped(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0.Add(time.Minute) }})
	topics := []assign.Topic{{Name: "evil\u202eorders", Partitions: 4}}
	v := sourceVertex("src", 4, topics, freshOwner(4), func(assign.TopicPartition) int64 { return 900 })
	v.Kafka.Unreported, v.Kafka.States = v.Kafka.States, nil
	s.UpdateFlink(flinkSnap(t0.Add(40*time.Second), flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", Vertices: []flink.VertexSnapshot{v}}))
	vv, err := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	if err != nil || vv.Withheld == nil {
		t.Fatalf("Vertex = withheld %+v, %v; want the note", vv.Withheld, err)
	}
	if len(vv.Withheld.Topics) != 1 || bidi.HasControl(vv.Withheld.Topics[0]) {
		t.Errorf("note topics %q, want the one topic, no bidi control", vv.Withheld.Topics)
	}
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			if bidi.HasControl(c.Topic) {
				t.Errorf("cell topic %q holds a bidi control", c.Topic)
			}
		}
	}
}
