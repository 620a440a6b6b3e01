package assign

import (
	"errors"
	"fmt"
	"slices"
)

// MakePlanAfterRestores is MakePlan for a KafkaSource that has already been
// restored: history lists the source's parallelisms from its fresh start on
// and ends at in.Current (a history of one entry is a fresh start, and the
// plan is MakePlan's). The current layout is then the restore model's for
// history, not a fresh start at in.Current, and the restore target
// continues history with in.Target; the fresh-start target is unchanged.
// It also returns the restore result of the current layout (nil for a
// fresh start), whose Uncertain partitions the caller may mark.
func MakePlanAfterRestores(in PlanInput, history []int) (Plan, *RestoreResult, error) {
	if len(history) == 0 || history[len(history)-1] != in.Current {
		return Plan{}, nil, fmt.Errorf("restore history %v: it must end at the current parallelism %d", history, in.Current)
	}
	pl, err := MakePlan(in)
	if err != nil || len(history) == 1 {
		return pl, nil, err
	}
	if in.Assign != nil {
		return Plan{}, nil, errors.New("a restore history is modelled for Flink's KafkaSource only; choose the Flink strategy")
	}
	now, err := Restore(RestoreInput{Topics: in.Topics, History: history})
	if err != nil {
		return Plan{}, nil, err
	}
	target, err := Restore(RestoreInput{Topics: in.Topics, History: append(slices.Clone(history), in.Target)})
	if err != nil {
		return Plan{}, nil, err
	}
	pl.Restore = &target
	pl.MovesRestore = SourceRescale(now.Assignment, target.Assignment)
	pl.MovesFresh = SourceRescale(now.Assignment, pl.TargetFresh)
	// Restore layouts do not list partitions in global index order, so the
	// sides sum their loads along each subtask's list (no dense rates).
	if pl.Now, err = pl.side(now.Assignment, in.Rates, nil); err != nil {
		return Plan{}, nil, err
	}
	if pl.Start == StartRestore {
		if pl.Target, err = pl.side(target.Assignment, in.Rates, nil); err != nil {
			return Plan{}, nil, err
		}
	}
	return pl, &now, nil
}
