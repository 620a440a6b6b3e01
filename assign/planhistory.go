package assign

import "fmt"

// MakePlanAfterRestores is MakePlan for a KafkaSource that has already been
// restored: history lists the source's parallelisms from its fresh start on
// and ends at in.Current (a history of one entry is a fresh start, and the
// plan is MakePlan's). The current layout is then the restore model's for
// history, not a fresh start at in.Current, and the restore target (see
// PlanInput.CompareRestore) continues history with in.Target; the
// fresh-start target is unchanged. It also returns the restore result of
// the current layout (nil for a fresh start), whose Uncertain partitions
// the caller may mark.
func MakePlanAfterRestores(in PlanInput, history []int) (Plan, *RestoreResult, error) {
	if len(history) == 0 || history[len(history)-1] != in.Current {
		return Plan{}, nil, fmt.Errorf("restore history %v: it must end at the current parallelism %d", history, in.Current)
	}
	if len(history) == 1 {
		pl, err := MakePlan(in)
		return pl, nil, err
	}
	return makePlan(in, history)
}
