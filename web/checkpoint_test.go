package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/live"
)

func TestWhySlowCheckpointSentence(t *testing.T) {
	view := func(facts ...live.WhyFact) live.VertexView {
		return live.VertexView{JobID: "j1", ID: "v1", Parallelism: 4, Keyed: true, MaxParallelism: 128,
			Subtasks: []live.SubtaskRow{{Subtask: 0}, {Subtask: 1}, {Subtask: 2}, {Subtask: 3}},
			Why:      &live.WhyView{Lines: []live.WhyLine{{Kind: live.WhySlowCheckpoint, Subtasks: []int{3}, Facts: facts}}}}
	}
	base := []live.WhyFact{obs(live.FactCheckpointMs, 480), {Name: live.FactOthersCheckpointMs, Value: 120, Kind: live.Computed},
		{Name: live.FactSlowFactor, Value: 4, Kind: live.Computed}, obs(live.FactCheckpointID, 42)}
	for _, tc := range []struct {
		name  string
		facts []live.WhyFact
		want  string
	}{
		{"with the state share", append(base, obs(live.FactStateShare, 0.61)),
			"Subtask 3's checkpoints take 4× the others' (480 ms against 120 ms on average, checkpoint 42): it holds 61% of the vertex's state."},
		{"state sizes unknown", base,
			"Subtask 3's checkpoints take 4× the others' (480 ms against 120 ms on average, checkpoint 42)."},
		{"a fractional factor", []live.WhyFact{obs(live.FactCheckpointMs, 250), {Name: live.FactOthersCheckpointMs, Value: 100, Kind: live.Computed},
			{Name: live.FactSlowFactor, Value: 2.5, Kind: live.Computed}, obs(live.FactCheckpointID, 7), obs(live.FactStateShare, 0.3)},
			"Subtask 3's checkpoints take 2.5× the others' (250 ms against 100 ms on average, checkpoint 7): it holds 30% of the vertex's state."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := whyPanel("/sk", view(tc.facts...), nil, time.Time{}, true)
			if w == nil || len(w.Causes) != 1 || len(w.Causes[0].Clauses) != 1 {
				t.Fatalf("whyPanel = %+v, want one cause of one sentence", w)
			}
			cl := w.Causes[0].Clauses[0]
			if cl.Text.Text != tc.want || cl.Kind != string(live.Observed) {
				t.Errorf("sentence %q (%s)\nwant     %q (observed)", cl.Text.Text, cl.Kind, tc.want)
			}
		})
	}
}

// TestWhySlowCheckpointHasNoPlannerLink: on a Kafka source the line is
// about state, not the layout the planner draws.
func TestWhySlowCheckpointHasNoPlannerLink(t *testing.T) {
	vv := live.VertexView{JobID: "j1", ID: "v1", Parallelism: 2, Kafka: true, Source: true, Topics: []string{"orders"},
		Subtasks: []live.SubtaskRow{{Subtask: 0}, {Subtask: 1}},
		Why: &live.WhyView{Lines: []live.WhyLine{{Kind: live.WhySlowCheckpoint, Subtasks: []int{1}, Facts: []live.WhyFact{obs(live.FactCheckpointMs, 300),
			{Name: live.FactOthersCheckpointMs, Value: 100, Kind: live.Computed}, {Name: live.FactSlowFactor, Value: 3, Kind: live.Computed}, obs(live.FactCheckpointID, 3)}}}}}
	w := whyPanel("/sk", vv, nil, time.Time{}, true)
	if c := w.Causes[0]; !c.Hot || c.Planner != nil || w.Calm {
		t.Errorf("cause hot %v, planner %+v, calm %v; want a hot cause without a planner link", c.Hot, c.Planner, w.Calm)
	}
}

func TestCauseText(t *testing.T) {
	at := time.Date(2026, 12, 2, 14, 3, 7, 0, time.UTC)
	for _, tc := range []struct {
		in   *live.FailureCause
		want string
	}{
		{nil, ""},
		{&live.FailureCause{Class: ""}, ""},
		{&live.FailureCause{At: at, Class: "java.lang.RuntimeException", Message: "fail-once marker seen", Task: "Source: Kafka Source", Subtask: 2,
			Endpoint: "localhost:0", Labels: []live.FailureLabel{{Key: "type", Value: "user"}}, Concurrent: 1},
			"Root cause: java.lang.RuntimeException: fail-once marker seen, in Source: Kafka Source subtask 2 on localhost:0 at 14:03:07Z (1 other failure at the same time); labels type=user."},
		// Without a task name nothing is said of where it happened: the
		// adaptive scheduler names no task even for a task's failure.
		{&live.FailureCause{Class: "org.apache.flink.util.FlinkException", Subtask: -1},
			"Root cause: org.apache.flink.util.FlinkException."},
		// The innermost cause the trace names, as the real 1.20–2.3
		// MiniClusters record a user exception thrown in deserialization.
		{&live.FailureCause{Class: "java.io.IOException", Message: "Failed to deserialize consumer record due to", Subtask: -1,
			Cause: "java.lang.RuntimeException: failover-1 read by source subtask 2 from life12-0"},
			"Root cause: java.io.IOException: Failed to deserialize consumer record due to, caused by java.lang.RuntimeException: failover-1 read by source subtask 2 from life12-0."},
		{&live.FailureCause{Class: "E", Task: "Sink (9/4)", Subtask: -1, Concurrent: 3},
			"Root cause: E, in Sink (9/4) (3 other failures at the same time)."},
		{&live.FailureCause{Class: "E", Message: "שגיאה", Subtask: -1},
			"Root cause: E: \u2068שגיאה\u2069."},
	} {
		if got := causeText(tc.in); got != tc.want {
			t.Errorf("causeText(%+v)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// ckptJob is a job whose keyed vertex's subtask 3 checkpoints slowest and
// holds most of the state, and whose source failed over once, the
// exception history naming the failure.
func ckptJob(at time.Time) flink.JobSnapshot {
	var ids []string
	var vals []flink.Metric
	for _, tp := range assign.Partitions(liveTopics) {
		o, _ := assign.KafkaSplitOwner(tp, 4)
		base := fmt.Sprintf("%d.Source__Kafka_Source.KafkaSourceReader.topic.%s.partition.%d.", o, flink.SanitizeMetricName(tp.Topic), tp.Partition)
		ids = append(ids, base+"currentOffset", base+"committedOffset")
		vals = append(vals, flink.Metric{ID: base + "currentOffset", Raw: "1999"}, flink.Metric{ID: base + "committedOffset", Raw: "1500"})
	}
	obs := flink.ParseKafkaSourceMetricIDs(ids)
	obs.ApplyValues(vals)
	src := flink.VertexSnapshot{ID: tSource, Name: "Source: Kafka Source", Parallelism: 4, MaxParallelism: 128, Source: true, Kafka: obs}
	keyed := flink.VertexSnapshot{ID: tKeyed, Name: "Enrich Orders", Parallelism: 4, MaxParallelism: 128, Keyed: true,
		StateCheckpointID: 42, StateCheckpointAt: at.Add(-2 * time.Second), StateFreshness: flink.Freshness{UpdatedAt: at}}
	ms := []int64{120, 130, 110, 480}
	state := []int64{10_000, 12_000, 11_000, 52_000}
	for i := range 4 {
		src.Subtasks = append(src.Subtasks, flink.SubtaskSnapshot{Index: i, Status: "RUNNING", BusyRatio: 0.2, IdleRatio: 0.7,
			RecordsInPerSecond: 10, RecordsOutPerSecond: 10, StateSize: -1})
		keyed.Subtasks = append(keyed.Subtasks, flink.SubtaskSnapshot{Index: i, Status: "RUNNING", BusyRatio: 0.2, IdleRatio: 0.7,
			RecordsInPerSecond: 100, RecordsOutPerSecond: 100, StateSize: state[i],
			Checkpoint: &flink.SubtaskCheckpoint{Index: i, Completed: true, StateSize: state[i], CheckpointedSize: state[i], SyncMs: 1, AsyncMs: ms[i] - 1,
				AlignmentMs: 3 + int64(i), AlignmentBuffered: -1, StartDelayMs: 10 + int64(i), EndToEndDuration: ms[i] + 15, Unaligned: i == 2}})
	}
	return flink.JobSnapshot{ID: tJob, Name: "orders <enrichment>", State: "RUNNING", StartTime: at.Add(-time.Hour),
		Vertices: []flink.VertexSnapshot{src, keyed}, NumRestarts: 0}
}

// TestVertexPagesShowCheckpointsAndFailoverCause: the keyed vertex's
// table shows each subtask's checkpoint figures, the checkpoint they are
// of and the slowest subtask, and the JSON carries them; the source's
// lineage names the failover's root cause.
func TestVertexPagesShowCheckpointsAndFailoverCause(t *testing.T) {
	at := time.Date(2026, 12, 2, 14, 0, 0, 0, time.UTC)
	st := live.New(live.Options{Now: func() time.Time { return at.Add(5 * time.Second) }})
	j := ckptJob(at)
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: at, FlinkVersion: "2.2.1", Jobs: []flink.JobSnapshot{j}})
	j = ckptJob(at)
	j.Restored = &flink.RestoreInfo{CheckpointID: 41, At: at.Add(2 * time.Second)}
	j.NumRestarts = 1
	j.Failures = []flink.Failure{{At: at.Add(time.Second), Class: "java.lang.RuntimeException", Message: "fail-once <marker>", Task: "Source: Kafka Source",
		Subtask: 1, Attempt: 0, Endpoint: "tm-1:6121"}}
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: at.Add(3 * time.Second), FlinkVersion: "2.2.1", Jobs: []flink.JobSnapshot{j}})
	ts := newLiveServer(t, st, nil)

	doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tKeyed, http.StatusOK)
	if got := doc.Find(testid("checkpoint-of")).Text(); got != "checkpoint 42, completed 7 s ago" {
		t.Errorf("checkpoint-of = %q, want %q", got, "checkpoint 42, completed 7 s ago")
	}
	var durations []string
	rows := doc.Find(testid("subtask-row"))
	if rows.Length() != 4 {
		t.Fatalf("%d subtask rows, want 4", rows.Length())
	}
	for i := range 4 {
		r := rows.Eq(i)
		durations = append(durations, strings.TrimSpace(r.Find(testid("checkpoint-duration")).Text()))
		if slow := r.Find(testid("slowest")).Length() == 1; slow != (i == 3) || r.HasClass("slow") != (i == 3) {
			t.Errorf("subtask %d marked slowest %v, want %v", i, slow, i == 3)
		}
	}
	if want := "120 ms|130 ms|110 ms|480 ms slowest"; strings.Join(durations, "|") != want {
		t.Errorf("checkpoint durations %q, want %q", strings.Join(durations, "|"), want)
	}
	third := rows.Eq(2).Find("td")
	if got := third.Eq(third.Length() - 2).Text(); got != "5 ms (unaligned)" {
		t.Errorf("subtask 2 alignment = %q, want 5 ms (unaligned)", got)
	}
	if got := third.Last().Text(); got != "12 ms" {
		t.Errorf("subtask 2 start delay = %q, want 12 ms", got)
	}
	why := doc.Find(testid("why")).Text()
	if !strings.Contains(why, "Subtask 3's checkpoints take 4× the others' (480 ms against 120 ms on average, checkpoint 42): it holds 61% of the vertex's state.") {
		t.Errorf("why panel %q lacks the slow-checkpoint sentence", why)
	}

	resp, err := http.Get(ts.URL + "/api/v1/jobs/" + tJob + "/vertices/" + tKeyed)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var vv struct {
		Checkpoint struct {
			ID      int64 `json:"id"`
			Slowest int   `json:"slowestSubtask"`
		} `json:"checkpoint"`
		Subtasks []struct {
			Checkpoint *struct {
				DurationMs   int64 `json:"durationMs"`
				AlignmentMs  int64 `json:"alignmentMs"`
				StartDelayMs int64 `json:"startDelayMs"`
				Unaligned    bool  `json:"unaligned"`
			} `json:"checkpoint"`
		} `json:"subtasks"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&vv); err != nil {
		t.Fatal(err)
	}
	if vv.Checkpoint.ID != 42 || vv.Checkpoint.Slowest != 3 || len(vv.Subtasks) != 4 || vv.Subtasks[3].Checkpoint == nil ||
		vv.Subtasks[3].Checkpoint.DurationMs != 480 || vv.Subtasks[2].Checkpoint.AlignmentMs != 5 || !vv.Subtasks[2].Checkpoint.Unaligned ||
		vv.Subtasks[1].Checkpoint.StartDelayMs != 11 {
		t.Errorf("JSON checkpoint %+v, subtasks %+v", vv.Checkpoint, vv.Subtasks)
	}

	doc = getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource, http.StatusOK)
	ev := doc.Find(testid("lineage-event") + `[data-kind="failover"]`)
	if ev.Length() != 1 {
		t.Fatalf("%d failover events, want 1", ev.Length())
	}
	want := "Root cause: java.lang.RuntimeException: fail-once <marker>, in Source: Kafka Source subtask 1 on tm-1:6121 at 14:00:01Z. observed"
	if got := strings.Join(strings.Fields(ev.Find(testid("lineage-cause")).Text()), " "); got != want {
		t.Errorf("lineage cause %q\nwant %q", got, want)
	}
}
