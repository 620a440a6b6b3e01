package live

import (
	"errors"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
)

// Views are built from a snapshot while the collectors go on updating the
// store: under -race this finds any state the two share and one changes.
func TestViewsBuildWhileTheStoreUpdates(t *testing.T) {
	now := t0
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := New(Options{Now: clock})
	cur := func(assign.TopicPartition) int64 { return 50 }
	s.UpdateKafka(kafkaSnap(t0, ends(100)))
	s.UpdateFlink(flinkSnap(t0, flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING",
		Vertices: []flink.VertexSnapshot{sourceVertex("src", 4, testTopics, freshOwner(4), cur)}}))

	const updates = 60
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range updates {
			at := t0.Add(time.Duration(i+1) * 10 * time.Second)
			mu.Lock()
			now = at
			mu.Unlock()
			s.UpdateKafka(kafkaSnap(at, ends(int64(100+10*i))))
			// The job restores at another parallelism every tenth poll:
			// lineage events, new sparklines, a replacement remembered.
			p := 4 + 2*(i/10%2)
			id := []string{"aa", "bb"}[i/10%2]
			res, err := assign.RestoreAssignment(testTopics, 4, p)
			if err != nil {
				t.Error(err)
				return
			}
			owner := func(tp assign.TopicPartition) int { o, _ := res.Assignment.OwnerOf(tp); return o }
			s.UpdateFlink(flinkSnap(at, flink.JobSnapshot{ID: id, Name: "enrich", State: "RUNNING", StartTime: at,
				Vertices: []flink.VertexSnapshot{sourceVertex("src", p, testTopics, owner, cur)}}))
		}
	}()
	views := 0
	for views < 4*updates {
		ov := s.State().Overview()
		for _, j := range ov.Jobs {
			if _, vvs, err := s.State().JobDetail("", j.ID); err == nil {
				for _, vv := range vvs {
					// The job may have been replaced since.
					if _, err := s.State().Vertex(j.ID, vv.ID, VertexQuery{Highlight: -1, Color: "rate"}); err != nil && !errors.Is(err, ErrNotFound) {
						t.Errorf("vertex %s: %v", vv.ID, err)
					}
				}
			}
		}
		if _, err := s.State().Topic("prod", "orders"); err != nil {
			t.Error(err)
		}
		views++
	}
	wg.Wait()
}

// A State does not change when the store does. (The offset→time tables
// are shared; here the positions predate every sample, so their lag in
// time is a lower bound from the oldest sample, which later polls keep.)
func TestStateIsStable(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	cur := func(assign.TopicPartition) int64 { return 50 }
	s.UpdateKafka(kafkaSnap(t0, ends(100)))
	s.UpdateFlink(flinkSnap(t0, flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING",
		Vertices: []flink.VertexSnapshot{sourceVertex("src", 4, testTopics, freshOwner(4), cur)}}))
	snap := s.State()
	before, err := snap.Vertex("aa", "src", VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		at := t0.Add(time.Duration(i+1) * 10 * time.Second)
		s.UpdateKafka(kafkaSnap(at, ends(int64(200+100*i))))
		s.UpdateFlink(flinkSnap(at, flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING",
			Vertices: []flink.VertexSnapshot{sourceVertex("src", 4, testTopics, freshOwner(4), func(assign.TopicPartition) int64 { return int64(60 + i) })}}))
	}
	after, err := snap.Vertex("aa", "src", VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(before, after) {
		t.Error("a view of the same State changed after the store was updated")
	}
	if now, _ := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1}); reflect.DeepEqual(before, now) {
		t.Error("the store's own view did not move on")
	}
}

// Views between two updates share one State, and build from it
// at once without writing to it: under -race this finds a view that does.
// An update publishes a new State.
func TestViewsShareOneCopyPerUpdate(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0 }})
	cur := func(assign.TopicPartition) int64 { return 50 }
	s.UpdateKafka(kafkaSnap(t0, ends(100)))
	res, err := assign.RestoreAssignment(testTopics, 4, 6)
	if err != nil {
		t.Fatal(err)
	}
	owner := func(tp assign.TopicPartition) int { o, _ := res.Assignment.OwnerOf(tp); return o }
	s.UpdateFlink(flinkSnap(t0, flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING",
		Vertices: []flink.VertexSnapshot{sourceVertex("src", 4, testTopics, freshOwner(4), cur)}}))
	s.UpdateFlink(flinkSnap(t0.Add(10*time.Second), flink.JobSnapshot{ID: "bb", Name: "enrich", State: "RUNNING", StartTime: t0.Add(5 * time.Second),
		Restored: &flink.RestoreInfo{CheckpointID: 3, IsSavepoint: true, At: t0.Add(5 * time.Second)},
		Vertices: []flink.VertexSnapshot{sourceVertex("src", 6, testTopics, owner, cur)}}))
	if a, b := s.State(), s.State(); a != b {
		t.Error("two views at the same Seq built two copies")
	}
	want, err := s.State().Vertex("bb", "src", VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 10 {
				got, err := s.State().Vertex("bb", "src", VertexQuery{Highlight: -1, History: []int{4, 6}})
				if err != nil {
					t.Error(err)
					return
				}
				if got.Prediction == nil || got.Prediction.Mode != want.Prediction.Mode && got.Prediction.Mode != ModeRestore {
					t.Errorf("concurrent view: prediction %+v", got.Prediction)
				}
				s.State().Overview()
				s.State().JobDetail("", "bb")
				s.State().Job("", "aa")
				s.State().Topic("prod", "orders")
			}
		})
	}
	wg.Wait()
	again, err := s.State().Vertex("bb", "src", VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(want, again) {
		t.Error("a view changed after other views shared its copy")
	}
	before := s.State()
	s.UpdateKafka(kafkaSnap(t0.Add(20*time.Second), ends(200)))
	if s.State() == before {
		t.Error("the copy was kept across an update")
	}
}
