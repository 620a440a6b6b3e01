package live

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
)

// ckptFigures is a subtask's checkpoint figures with sync + async = ms.
func ckptFigures(i int, ms, state int64) *flink.SubtaskCheckpoint {
	return &flink.SubtaskCheckpoint{Index: i, Status: "completed", Completed: true, CheckpointedSize: state / 2, StateSize: state,
		AckTimestamp: t0.UnixMilli(), EndToEndDuration: ms + 20, SyncMs: 2, AsyncMs: ms - 2, AlignmentMs: 5 * int64(i), AlignmentBuffered: -1,
		AlignmentProcessed: 100, AlignmentPersisted: 0, StartDelayMs: 10 + int64(i), Unaligned: i == 1}
}

// keyedWithCheckpoint is a running keyed vertex at 4 whose subtask 3's
// checkpoints take 4× the others' and hold most of the state.
func keyedWithCheckpoint() flink.VertexSnapshot {
	v := flink.VertexSnapshot{ID: "keyed", Name: "Key Router", Parallelism: 4, MaxParallelism: 128, Keyed: true,
		StateCheckpointID: 42, StateCheckpointAt: t0.Add(-3 * time.Second), StateFreshness: flink.Freshness{UpdatedAt: t0}}
	ms := []int64{120, 130, 110, 480}
	state := []int64{10_000, 12_000, 11_000, 52_000}
	for i := range 4 {
		v.Subtasks = append(v.Subtasks, flink.SubtaskSnapshot{Index: i, Status: "RUNNING", BusyRatio: 0.2, BackPressuredRatio: 0, IdleRatio: 0.7,
			RecordsInPerSecond: 100, RecordsOutPerSecond: 100, StateSize: state[i], Checkpoint: ckptFigures(i, ms[i], state[i])})
	}
	return v
}

// TestStoreCarriesCheckpointFigures: the vertex view shows each subtask's
// figures of the checkpoint its state sizes are from, the checkpoint's id
// and age, and the slowest subtask.
func TestStoreCarriesCheckpointFigures(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0.Add(5 * time.Second) }})
	s.UpdateFlink(flinkSnap(t0, job("aa", nil, keyedWithCheckpoint())))
	vv := mustVertex(t, s, "aa", "keyed")
	want := &SubtaskCheckpoint{DurationMs: 130, SyncMs: 2, AsyncMs: 128, AlignmentMs: 5, AlignmentProcessed: 100, AlignmentPersisted: 0,
		StartDelayMs: 11, EndToEndMs: 150, CheckpointedSize: 6000, Unaligned: true}
	if diff := cmp.Diff(want, vv.Subtasks[1].Checkpoint); diff != "" {
		t.Errorf("subtask 1 checkpoint (-want +got):\n%s", diff)
	}
	c := vv.Checkpoint
	if c == nil {
		t.Fatal("no vertex checkpoint")
	}
	if c.ID != 42 || !c.CompletedAt.Equal(t0.Add(-3*time.Second)) || c.Age.Seconds != 5 || c.Age.Stale || c.Slowest != 3 {
		t.Errorf("checkpoint = %+v, want id 42, completed 3 s before t0, 5 s old, slowest 3", c)
	}
	if f := c.SlowFactor; f < 3.99 || f > 4.01 {
		t.Errorf("SlowFactor = %v, want 480 / mean(120, 130, 110) = 4", f)
	}
}

func TestSlowestSubtask(t *testing.T) {
	row := func(i int, ms int64) SubtaskRow {
		r := SubtaskRow{Subtask: i}
		if ms >= -1 {
			r.Checkpoint = &SubtaskCheckpoint{DurationMs: ms}
		}
		return r
	}
	cases := []struct {
		name string
		ms   []int64 // -2: no figures
		want int
	}{
		{"stands out", []int64{100, 110, 450, 90}, 2},
		{"twice is the bound", []int64{100, 100, 200}, 2},
		{"just under", []int64{100, 100, 199}, -1},
		{"all fast: jitter", []int64{1, 0, 40, 2}, -1},
		{"others under a millisecond", []int64{0, 0, 500}, 2},
		{"one subtask", []int64{900}, -1},
		{"unknown durations left out", []int64{-1, 120, -2, 600}, 3},
		{"none known", []int64{-1, -2}, -1},
	}
	for _, tc := range cases {
		var rows []SubtaskRow
		for i, ms := range tc.ms {
			rows = append(rows, row(i, ms))
		}
		if got, _ := slowest(rows); got != tc.want {
			t.Errorf("%s: slowest(%v) = %d, want %d", tc.name, tc.ms, got, tc.want)
		}
	}
}

// TestWhySlowCheckpoint: the panel names the slow subtask with its
// duration, the others', and its share of the state, all with their
// provenance; without every state size the share is left out.
func TestWhySlowCheckpoint(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	s.UpdateFlink(flinkSnap(t0, job("aa", nil, keyedWithCheckpoint())))
	vv := mustVertex(t, s, "aa", "keyed")
	var got *WhyLine
	for i, l := range vv.Why.Lines {
		if l.Kind == WhySlowCheckpoint {
			got = &vv.Why.Lines[i]
		}
	}
	if got == nil {
		t.Fatalf("no %s line in %+v", WhySlowCheckpoint, vv.Why.Lines)
	}
	want := WhyLine{Kind: WhySlowCheckpoint, Subtasks: []int{3}, Facts: []WhyFact{
		observed(FactCheckpointMs, 480), computed(FactOthersCheckpointMs, 120), computed(FactSlowFactor, 4),
		observed(FactCheckpointID, 42), observed(FactStateShare, 52_000.0/85_000),
	}}
	if diff := cmp.Diff(want, *got, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
		t.Errorf("slow-checkpoint line (-want +got):\n%s", diff)
	}

	vv.Subtasks[0].StateSize = -1
	l := slowCheckpoint(&vv)
	for _, f := range l.Facts {
		if f.Name == FactStateShare {
			t.Errorf("a state share with subtask 0's size unknown: %+v", f)
		}
	}
	vv.Checkpoint.Slowest = -1
	if l := slowCheckpoint(&vv); l != nil {
		t.Errorf("no slowest subtask, line %+v", l)
	}
}

// TestFailoverCarriesItsRootCause: a failover event takes the newest
// failure of the job's exception history before its restore, also when
// the history arrives a poll after the restore; an older failure (of an
// earlier failover) is not taken again.
func TestFailoverCarriesItsRootCause(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	cur := func(assign.TopicPartition) int64 { return 50 }
	src := func() flink.VertexSnapshot { return sourceVertex("src", 4, testTopics, freshOwner(4), cur) }
	first := flink.Failure{At: t0.Add(500 * time.Millisecond), Class: "java.lang.RuntimeException", Message: "fail-once marker seen",
		Task: "Source: Kafka Source", Subtask: 2, Attempt: 0, Endpoint: "tm-1:6121", Labels: []flink.FailureLabel{{Key: "type", Value: "user"}}}
	s.UpdateFlink(flinkSnap(t0, job("aa", nil, src())))

	// The restore shows; the history (numRestarts) a poll later.
	ck := &flink.RestoreInfo{CheckpointID: 5, At: t0.Add(time.Second)}
	s.UpdateFlink(flinkSnap(t0.Add(10*time.Second), job("aa", ck, src())))
	if e := mustVertex(t, s, "aa", "src").Lineage.Events[1]; e.Kind != EventFailover || e.Cause != nil {
		t.Fatalf("event %+v, want a failover without a cause yet", e)
	}
	j := job("aa", ck, src())
	j.Failures = []flink.Failure{first}
	s.UpdateFlink(flinkSnap(t0.Add(20*time.Second), j))
	want := &FailureCause{At: first.At, Class: first.Class, Message: first.Message, Task: first.Task, Subtask: 2, Endpoint: "tm-1:6121",
		Labels: []FailureLabel{{Key: "type", Value: "user"}}}
	if diff := cmp.Diff(want, mustVertex(t, s, "aa", "src").Lineage.Events[1].Cause); diff != "" {
		t.Errorf("failover cause (-want +got):\n%s", diff)
	}

	// A second failover whose failure is not in the history yet: the
	// first one's is not taken for it.
	ck2 := &flink.RestoreInfo{CheckpointID: 9, At: t0.Add(time.Minute)}
	j = job("aa", ck2, src())
	j.Failures = []flink.Failure{first}
	s.UpdateFlink(flinkSnap(t0.Add(70*time.Second), j))
	ev := mustVertex(t, s, "aa", "src").Lineage.Events
	if len(ev) != 3 || ev[2].Cause != nil || ev[1].Cause == nil {
		t.Fatalf("events %+v, want the second failover without a cause", ev)
	}
	second := flink.Failure{At: t0.Add(59 * time.Second), Class: "java.io.IOException", Subtask: -1}
	j.Failures = []flink.Failure{second, first}
	s.UpdateFlink(flinkSnap(t0.Add(80*time.Second), j))
	ev = mustVertex(t, s, "aa", "src").Lineage.Events
	if ev[2].Cause == nil || ev[2].Cause.Class != "java.io.IOException" || ev[2].Cause.Subtask != -1 || ev[1].Cause.Class != first.Class {
		t.Errorf("causes %+v, %+v; want the IOException for the second, the first kept", ev[1].Cause, ev[2].Cause)
	}
}
