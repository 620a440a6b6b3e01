package assign

import (
	"slices"
	"testing"
)

func TestMakePlanAfterRestoresStartsFromTheRestoredLayout(t *testing.T) {
	topics := []Topic{{Name: "orders", Partitions: 12}, {Name: "payments.v1", Partitions: 6}}
	in := PlanInput{Topics: topics, Current: 6, Target: 8, Start: StartRestore}
	pl, now, err := MakePlanAfterRestores(in, []int{4, 6})
	if err != nil {
		t.Fatal(err)
	}
	want, err := Restore(RestoreInput{Topics: topics, History: []int{4, 6}})
	if err != nil {
		t.Fatal(err)
	}
	if now == nil || !slices.Equal(now.Assignment.Owners, want.Assignment.Owners) {
		t.Fatalf("MakePlanAfterRestores(4,6) now = %v, want the restore model's %v", now, want.Assignment.Owners)
	}
	if !slices.Equal(pl.Now.Assignment.Owners, want.Assignment.Owners) {
		t.Errorf("Plan.Now owners = %v, want %v (restored 4→6, not a fresh start at 6)", pl.Now.Assignment.Owners, want.Assignment.Owners)
	}
	then, _ := Restore(RestoreInput{Topics: topics, History: []int{4, 6, 8}})
	if !slices.Equal(pl.Target.Assignment.Owners, then.Assignment.Owners) {
		t.Errorf("Plan.Target owners = %v, want the restore 4→6→8 %v", pl.Target.Assignment.Owners, then.Assignment.Owners)
	}
	if got := len(pl.MovesRestore.Moves); got != len(SourceRescale(want.Assignment, then.Assignment).Moves) {
		t.Errorf("restore moves %d, want those from the restored layout", got)
	}

	fresh, _, err := MakePlanAfterRestores(in, []int{6})
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := MakePlan(in)
	if !slices.Equal(fresh.Now.Assignment.Owners, plain.Now.Assignment.Owners) {
		t.Error("a one-entry history is a fresh start: the plan must be MakePlan's")
	}
	if _, _, err := MakePlanAfterRestores(in, []int{4, 5}); err == nil {
		t.Error("a history that does not end at the current parallelism must be an error")
	}
}
