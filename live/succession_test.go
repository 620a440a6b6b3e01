package live

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
)

const (
	oldJob = "0000000000000000000000000000000a"
	newJob = "0000000000000000000000000000000b"
	newer  = "0000000000000000000000000000000c"
)

// restoredPair is a job stopped with a savepoint (FINISHED) and its
// resubmission an hour later. The new job's vertex ids differ, as they do
// when the job graph is rebuilt, so that only names connect them.
func restoredPair() (old, cur flink.JobSnapshot) {
	src := sourceVertex("a1", 4, testTopics, freshOwner(4), func(assign.TopicPartition) int64 { return 100 })
	old = flink.JobSnapshot{ID: oldJob, Name: "orders enrichment", State: "FINISHED", StartTime: t0,
		Vertices: []flink.VertexSnapshot{src, {ID: "b1", Name: "Enrich", Parallelism: 4, MaxParallelism: 128, Keyed: true}}}
	src2 := sourceVertex("a2", 6, testTopics, freshOwner(6), func(assign.TopicPartition) int64 { return 100 })
	cur = flink.JobSnapshot{ID: newJob, Name: "orders enrichment", State: "RUNNING", StartTime: t0.Add(time.Hour),
		Restored: &flink.RestoreInfo{CheckpointID: 9, IsSavepoint: true},
		Vertices: []flink.VertexSnapshot{src2, {ID: "b2", Name: "Enrich", Parallelism: 6, MaxParallelism: 128, Keyed: true}}}
	return old, cur
}

func TestSuccessorOfRestoredJob(t *testing.T) {
	st := New(Options{Now: func() time.Time { return t0.Add(2 * time.Hour) }})
	old, cur := restoredPair()
	st.UpdateFlink(flinkSnap(t0.Add(time.Hour), cur, old))

	rep, ok := st.State().Successor("", oldJob)
	want := Replacement{OldID: oldJob, Endpoint: "jm", Name: "orders enrichment", NewID: newJob, At: t0.Add(time.Hour),
		Chain: []string{newJob}, Current: newJob}
	if !ok {
		t.Fatalf("Successor(%q) = not replaced, want %v", oldJob, want)
	}
	if d := cmp.Diff(want, rep); d != "" {
		t.Errorf("Successor(%q) (-want +got):\n%s", oldJob, d)
	}
	if _, ok := st.State().Successor("", newJob); ok {
		t.Errorf("Successor(%q) = replaced, want the running job not replaced", newJob)
	}
	if _, ok := st.State().Successor("other", oldJob); ok {
		t.Errorf("Successor(other, %q) = replaced, want nothing on another endpoint", oldJob)
	}

	jv, err := st.State().Job("", oldJob)
	if err != nil {
		t.Fatal(err)
	}
	if jv.ReplacedBy == nil || jv.ReplacedBy.NewID != newJob {
		t.Errorf("Job(%q).ReplacedBy = %+v, want %s", oldJob, jv.ReplacedBy, newJob)
	}
	if jv, _ := st.State().Job("", newJob); jv.ReplacedBy != nil {
		t.Errorf("Job(%q).ReplacedBy = %+v, want nil", newJob, jv.ReplacedBy)
	}
	vv, err := st.State().Vertex(oldJob, "b1", VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	if vv.ReplacedBy == nil || vv.ReplacedBy.VertexID != "b2" || vv.ReplacedBy.VertexName != "Enrich" {
		t.Errorf("Vertex(%q, b1).ReplacedBy = %+v, want the successor's vertex b2 named Enrich", oldJob, vv.ReplacedBy)
	}

	ov := st.State().Overview()
	var order []string
	for _, j := range ov.Jobs {
		order = append(order, j.ID)
	}
	if !slices.Equal(order, []string{newJob, oldJob}) || ov.Jobs[1].ReplacedBy == nil || ov.Jobs[0].ReplacedBy != nil {
		t.Errorf("Overview().Jobs = %v, want the running job first and the replaced one last, marked", order)
	}
}

func TestSuccessorOutlivesFlinksJobHistory(t *testing.T) {
	st := New(Options{Now: func() time.Time { return t0.Add(3 * time.Hour) }})
	old, cur := restoredPair()
	st.UpdateFlink(flinkSnap(t0.Add(time.Hour), cur, old))
	// Flink's job store expired the old job.
	st.UpdateFlink(flinkSnap(t0.Add(2*time.Hour), cur))

	if _, err := st.State().Job("", oldJob); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Job(%q) error = %v, want ErrNotFound once Flink forgot it", oldJob, err)
	}
	rep, ok := st.State().SuccessorVertex("", oldJob, "a1")
	if !ok || rep.Current != newJob || rep.VertexName != "Source: Kafka Source" || rep.VertexID != "a2" {
		t.Errorf("SuccessorVertex(%q, a1) = %+v, %v; want the source a2 of %s", oldJob, rep, ok, newJob)
	}
	rep, ok = st.State().SuccessorVertex("jm", oldJob, "ffff")
	if !ok || rep.VertexName != "" || rep.VertexID != "" {
		t.Errorf("SuccessorVertex(%q, unknown vertex) = %+v, %v; want the job's replacement without a vertex", oldJob, rep, ok)
	}
}

func TestSuccessorFollowsChainToCurrentRun(t *testing.T) {
	st := New(Options{})
	old, cur := restoredPair()
	st.UpdateFlink(flinkSnap(t0.Add(time.Hour), cur, old))
	cur.State = "CANCELED"
	third := cur
	third.ID, third.State, third.StartTime = newer, "RUNNING", t0.Add(2*time.Hour)
	st.UpdateFlink(flinkSnap(t0.Add(2*time.Hour), third, cur))

	rep, ok := st.State().Successor("jm", oldJob)
	if !ok || rep.NewID != newJob || !slices.Equal(rep.Chain, []string{newJob, newer}) || rep.Current != newer {
		t.Errorf("Successor(%q) = %+v, %v; want %s, then %s as the current run", oldJob, rep, ok, newJob, newer)
	}
	run, err := st.State().CurrentRun("", "orders enrichment")
	if err != nil || run.ID != newer {
		t.Errorf("CurrentRun(orders enrichment) = %+v, %v; want %s", run, err, newer)
	}
}

func TestSuccessionNeedsALaterStart(t *testing.T) {
	st := New(Options{})
	old, cur := restoredPair()
	// A job that ended with no later job of its name was not replaced, and
	// an earlier job does not replace a later one.
	cur.State = "FAILED"
	old.State = "RUNNING"
	st.UpdateFlink(flinkSnap(t0.Add(time.Hour), cur, old))
	for _, id := range []string{oldJob, newJob} {
		if rep, ok := st.State().Successor("", id); ok {
			t.Errorf("Successor(%q) = %+v, want not replaced", id, rep)
		}
	}
	other := cur
	other.ID, other.Name, other.StartTime, other.State = newer, "another job", t0.Add(2*time.Hour), "RUNNING"
	st.UpdateFlink(flinkSnap(t0.Add(2*time.Hour), cur, other))
	if rep, ok := st.State().Successor("", newJob); ok {
		t.Errorf("Successor(%q) = %+v, want no replacement by a job of another name", newJob, rep)
	}
}

func TestRecoveredJobIsNotReplaced(t *testing.T) {
	st := New(Options{})
	old, cur := restoredPair()
	old.State = "SUSPENDED"
	st.UpdateFlink(flinkSnap(t0.Add(time.Hour), cur, old))
	if _, ok := st.State().Successor("", oldJob); !ok {
		t.Fatalf("Successor(%q) = not replaced, want the suspended job replaced by %s", oldJob, newJob)
	}
	old.State = "RUNNING"
	st.UpdateFlink(flinkSnap(t0.Add(2*time.Hour), cur, old))
	if rep, ok := st.State().Successor("", oldJob); ok {
		t.Errorf("Successor(%q) = %+v, want none once the job runs again under its own id", oldJob, rep)
	}
}

func TestReplacementsAreBounded(t *testing.T) {
	st := New(Options{})
	const extra = 10
	id := func(kind string, i int) string { return fmt.Sprintf("%s%031x", kind, i) }
	for i := range MaxReplacements + extra {
		name := fmt.Sprint("job ", i)
		st.UpdateFlink(flinkSnap(t0,
			flink.JobSnapshot{ID: id("a", i), Name: name, State: "FINISHED", StartTime: t0},
			flink.JobSnapshot{ID: id("b", i), Name: name, State: "RUNNING", StartTime: t0.Add(time.Minute)}))
	}
	remembered := 0
	for i := range MaxReplacements + extra {
		_, ok := st.State().Successor("jm", id("a", i))
		if ok {
			remembered++
		}
		if ok != (i >= extra) {
			t.Errorf("Successor(job %d) remembered = %v, want %v (the oldest %d are forgotten)", i, ok, i >= extra, extra)
		}
	}
	if remembered != MaxReplacements {
		t.Errorf("%d replacements remembered, want %d", remembered, MaxReplacements)
	}
}

func TestCurrentRunAndVertexByName(t *testing.T) {
	st := New(Options{})
	old, cur := restoredPair()
	twin := cur
	twin.ID, twin.StartTime = newer, t0.Add(30*time.Minute) // an older submission that still runs
	st.UpdateFlink(flinkSnap(t0.Add(time.Hour), old, twin, cur))

	run, err := st.State().CurrentRun("", "orders enrichment")
	if err != nil || run != (JobRef{"jm", newJob, "orders enrichment", "RUNNING"}) {
		t.Errorf("CurrentRun = %+v, %v; want the latest started RUNNING job %s", run, err, newJob)
	}
	v, err := st.State().VertexByName("jm", "orders enrichment", "Enrich")
	if err != nil || v.ID != "b2" || v.Job.ID != newJob {
		t.Errorf("VertexByName(Enrich) = %+v, %v; want b2 of %s", v, err, newJob)
	}
	if _, err := st.State().VertexByName("", "orders enrichment", "Nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("VertexByName(Nope) error = %v, want ErrNotFound", err)
	}
	if _, err := st.State().CurrentRun("", "unknown"); !errors.Is(err, ErrNotFound) {
		t.Errorf("CurrentRun(unknown) error = %v, want ErrNotFound", err)
	}

	// The same name on a second endpoint needs ?endpoint=.
	other := flinkSnap(t0, cur)
	other.Endpoint = "jm-2"
	st.UpdateFlink(other)
	if _, err := st.State().CurrentRun("", "orders enrichment"); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("CurrentRun on two endpoints: error = %v, want ErrAmbiguous", err)
	}
	if run, err := st.State().CurrentRun("jm-2", "orders enrichment"); err != nil || run.Endpoint != "jm-2" {
		t.Errorf("CurrentRun(jm-2) = %+v, %v", run, err)
	}

	// Two vertices with one name cannot be told apart by name.
	dup := cur
	dup.Vertices = append(slices.Clone(cur.Vertices), flink.VertexSnapshot{ID: "b3", Name: "Enrich"})
	st.UpdateFlink(flinkSnap(t0.Add(time.Hour), dup))
	if _, err := st.State().VertexByName("jm", "orders enrichment", "Enrich"); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("VertexByName with two vertices named Enrich: error = %v, want ErrAmbiguous", err)
	}
}
