package assign

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

func planTopics10k() []Topic {
	topics := make([]Topic, 20)
	for i := range topics {
		topics[i] = Topic{Name: fmt.Sprintf("events-%02d", i), Partitions: 500}
	}
	return topics
}

// BenchmarkPlan10k is the planner's core at its scale target: 10,000
// partitions over 20 topics, p = 1024 → 1280, maxParallelism 32768.
func BenchmarkPlan10k(b *testing.B) {
	in := PlanInput{Topics: planTopics10k(), Current: 1024, Target: 1280, MaxParallelism: 32768}
	for b.Loop() {
		if _, err := MakePlan(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/plan")
}

// BenchmarkFreshAssignment10k is one fresh-start layout at that scale.
func BenchmarkFreshAssignment10k(b *testing.B) {
	topics := planTopics10k()
	for b.Loop() {
		if _, err := FreshAssignment(topics, 1024); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
}

// BenchmarkPlan10kRates is BenchmarkPlan10k with a rate for every partition.
func BenchmarkPlan10kRates(b *testing.B) {
	topics := planTopics10k()
	rates := make(map[TopicPartition]float64)
	for i, tp := range Partitions(topics) {
		rates[tp] = float64(100 + (i*37)%900)
	}
	in := PlanInput{Topics: topics, Rates: rates, Current: 1024, Target: 1280, MaxParallelism: 32768}
	for b.Loop() {
		if _, err := MakePlan(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/plan")
}

// BenchmarkPlan10kRestore is BenchmarkPlan10k restored from a savepoint,
// which runs the restore model.
func BenchmarkPlan10kRestore(b *testing.B) {
	in := PlanInput{Topics: planTopics10k(), Current: 1024, Target: 1280, MaxParallelism: 32768, Start: StartRestore}
	for b.Loop() {
		if _, err := MakePlan(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/plan")
}

// TestMakePlanCompareRestore: a fresh-start plan models the restore only
// when asked, and then as RestoreAssignment (or Restore after the history)
// does; a restore start always models it.
func TestMakePlanCompareRestore(t *testing.T) {
	topics := []Topic{{Name: "orders", Partitions: 12}, {Name: "payments.v1", Partitions: 7}}
	in := PlanInput{Topics: topics, Current: 4, Target: 6}
	pl, err := MakePlan(in)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Restore != nil || len(pl.MovesRestore.Moves) != 0 {
		t.Errorf("MakePlan(fresh) Restore = %v, want nil unless CompareRestore", pl.Restore)
	}
	want, err := RestoreAssignment(topics, 4, 6)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		start   StartMode
		compare bool
	}{{StartFresh, true}, {StartRestore, false}, {StartRestore, true}} {
		in.Start, in.CompareRestore = c.start, c.compare
		pl, err := MakePlan(in)
		if err != nil {
			t.Fatal(err)
		}
		if pl.Restore == nil || !slices.Equal(pl.Restore.Assignment.Owners, want.Assignment.Owners) {
			t.Fatalf("MakePlan(%s, compare %v).Restore = %v, want RestoreAssignment's %v", c.start, c.compare, pl.Restore, want.Assignment.Owners)
		}
		if got, w := pl.MovesRestore, SourceRescale(pl.Now.Assignment, want.Assignment); !slices.Equal(got.Moves, w.Moves) {
			t.Errorf("MakePlan(%s, compare %v).MovesRestore = %v, want %v", c.start, c.compare, got.Moves, w.Moves)
		}
	}

	in.Start, in.CompareRestore = StartFresh, false
	pl, _, err = MakePlanAfterRestores(in, []int{3, 4})
	if err != nil {
		t.Fatal(err)
	}
	if pl.Restore != nil {
		t.Errorf("MakePlanAfterRestores(fresh, 3→4).Restore = %v, want nil unless CompareRestore", pl.Restore)
	}
	in.CompareRestore = true
	pl, now, err := MakePlanAfterRestores(in, []int{3, 4})
	if err != nil {
		t.Fatal(err)
	}
	then, _ := Restore(RestoreInput{Topics: topics, History: []int{3, 4, 6}})
	if pl.Restore == nil || !slices.Equal(pl.Restore.Assignment.Owners, then.Assignment.Owners) {
		t.Fatalf("MakePlanAfterRestores(fresh, 3→4, compare).Restore = %v, want the restore 3→4→6 %v", pl.Restore, then.Assignment.Owners)
	}
	if got, w := pl.MovesRestore, SourceRescale(now.Assignment, then.Assignment); !slices.Equal(got.Moves, w.Moves) {
		t.Errorf("MakePlanAfterRestores(fresh, 3→4, compare).MovesRestore = %v, want %v", got.Moves, w.Moves)
	}
	if !slices.Equal(pl.Target.Assignment.Owners, pl.TargetFresh.Owners) {
		t.Error("a fresh-start plan's target must be the fresh layout")
	}
}

// TestMakePlanLoads: the per-subtask loads are the sums of the rates along
// each side's Subtasks lists, in list order, bit for bit, whatever the start
// mode and strategy; missing rates count 0 and rates of other partitions
// are ignored.
func TestMakePlanLoads(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	strategies := []func([]Topic, int) (Assignment, error){nil, NaiveModuloAssignment, DynamicGlobalAssignment}
	for iter := range 200 {
		topics := recRandomTopics(r, 6, 80)
		rates := map[TopicPartition]float64{{Topic: "not-a-topic", Partition: 0}: 5, {Topic: topics[0].Name, Partition: -1}: 7}
		for _, tp := range Partitions(topics) {
			if r.IntN(4) > 0 {
				rates[tp] = r.ExpFloat64() * 1000
			}
		}
		in := PlanInput{Topics: topics, Rates: rates, Current: 1 + r.IntN(60), Target: 1 + r.IntN(60),
			Assign: strategies[iter%3], Start: StartFresh}
		if in.Assign == nil && r.IntN(2) == 0 {
			in.Start = StartRestore
		}
		pl, err := MakePlan(in)
		if err != nil {
			t.Fatal(err)
		}
		for _, side := range []PlanSide{pl.Now, pl.Target} {
			for j, ps := range side.Assignment.Subtasks {
				var want float64
				for _, tp := range ps {
					want += rates[tp]
				}
				if side.Load[j] != want {
					t.Fatalf("MakePlan(%v, %s, p=%d).Load[%d] = %v, want %v", topics, in.Start, side.Parallelism, j, side.Load[j], want)
				}
			}
		}
	}
}

// TestMakePlanRestoreLarge: at 10,000 partitions (where the restore is
// modelled beside the rest of the plan) the plan's restore side is the
// restore model's result and its moves, as computed one after the other.
func TestMakePlanRestoreLarge(t *testing.T) {
	topics := planTopics10k()
	pl, err := MakePlan(PlanInput{Topics: topics, Current: 1024, Target: 1280, MaxParallelism: 32768, Start: StartRestore})
	if err != nil {
		t.Fatal(err)
	}
	rr, err := RestoreAssignment(topics, 1024, 1280)
	if err != nil {
		t.Fatal(err)
	}
	now, err := FreshAssignment(topics, 1024)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Restore == nil || !reflect.DeepEqual(*pl.Restore, rr) {
		t.Fatal("MakePlan(restore, 10k partitions).Restore differs from RestoreAssignment")
	}
	if !reflect.DeepEqual(pl.MovesRestore, SourceRescale(now, rr.Assignment)) || !reflect.DeepEqual(pl.Target.Assignment, rr.Assignment) {
		t.Fatal("MakePlan(restore, 10k partitions) moves or target differ from the restore model's")
	}
}
