package live

import (
	"fmt"
	"testing"
	"time"

	"github.com/skewscope/skewscope/collectors/flink"
)

// A job that ended keeps the vertices Flink last reported while it ran,
// for the latest MaxEndedRuns runs of its name; the runs of jobs Flink no
// longer lists are dropped.
func TestEndedRunsKeepTheirLastVerticesBounded(t *testing.T) {
	st := New(Options{Now: func() time.Time { return t0.Add(24 * time.Hour) }})
	runs := MaxEndedRuns + 2
	id := func(i int) string { return fmt.Sprintf("%032x", i+1) }
	run := func(i int, state flink.JobState) flink.JobSnapshot {
		j := flink.JobSnapshot{ID: id(i), Name: "orders", State: state, StartTime: t0.Add(time.Duration(i) * time.Hour), NumRestarts: -1}
		if state == "RUNNING" {
			j.Vertices = []flink.VertexSnapshot{{ID: "v" + id(i), Name: "Enrich", Parallelism: i + 1, MaxParallelism: 128, Keyed: true}}
			j.NumRestarts = 0
		}
		return j
	}
	var ended []flink.JobSnapshot
	for i := range runs {
		st.UpdateFlink(flinkSnap(t0.Add(time.Duration(i)*time.Hour+time.Minute), append([]flink.JobSnapshot{run(i, "RUNNING")}, ended...)...))
		ended = append(ended, run(i, "FINISHED"))
	}
	st.UpdateFlink(flinkSnap(t0.Add(time.Duration(runs)*time.Hour), ended...))
	for i := range runs {
		jv, err := st.State().Job("", id(i))
		if err != nil {
			t.Fatal(err)
		}
		kept := i >= runs-MaxEndedRuns
		if got := len(jv.Vertices) == 1 && jv.LastReported != nil; got != kept {
			t.Errorf("run %d: vertices %d, lastReported %v; want kept = %v (the latest %d ended runs)", i, len(jv.Vertices), jv.LastReported, kept, MaxEndedRuns)
		}
		if kept {
			if want := t0.Add(time.Duration(i)*time.Hour + time.Minute); !jv.LastReported.Equal(want) || jv.Vertices[0].Parallelism != i+1 {
				t.Errorf("run %d: last reported %v at p = %d, want %v at p = %d", i, jv.LastReported, jv.Vertices[0].Parallelism, want, i+1)
			}
			vv, err := st.State().Vertex(id(i), "v"+id(i), VertexQuery{Highlight: -1})
			if err != nil || vv.LastReported == nil || len(vv.Subtasks) != i+1 {
				t.Errorf("run %d: vertex view %v, %d subtasks; want the last reported %d", i, err, len(vv.Subtasks), i+1)
			}
		}
	}
	// Flink forgets the job: its last run goes too.
	st.UpdateFlink(flinkSnap(t0.Add(time.Duration(runs+1)*time.Hour), ended[:runs-1]...))
	st.mu.Lock()
	_, has := st.runs[succKey{"jm", id(runs - 1)}]
	n := len(st.runs)
	st.mu.Unlock()
	if has || n != MaxEndedRuns-1 {
		t.Errorf("after Flink forgot run %d: kept %v, %d runs; want it dropped and %d left", runs-1, has, n, MaxEndedRuns-1)
	}
}
