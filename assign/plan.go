package assign

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// planConcurrentMin is the fewest partitions for which makePlan models the
// restore at the target on a goroutine of its own.
const planConcurrentMin = 1024

// StartMode says how the job reaches the target parallelism.
type StartMode string

const (
	// StartFresh: the job starts without state (or with a savepoint that
	// holds no source splits); every partition goes by getSplitOwner.
	StartFresh StartMode = "fresh"
	// StartRestore: the job is stopped with a savepoint at the current
	// parallelism and restored from it at the target parallelism.
	StartRestore StartMode = "restore"
)

// PlanInput is everything the planner computes from. Zero values mean "not
// given" where a field is optional.
type PlanInput struct {
	Topics []Topic
	// Rates are optional per-partition loads (records/s). Partitions missing
	// from the map count as 0 when any rate is given.
	Rates map[TopicPartition]float64
	// Current and Target are source and keyed parallelisms now and after.
	Current, Target int
	// MaxParallelism 0 means Flink's default for Current, which is also what
	// a restored job keeps.
	MaxParallelism int
	Start          StartMode
	// StateBytes optionally gives each current subtask's checkpointed keyed
	// state size, for the bytes-moved estimate.
	StateBytes []int64
	// Assign replaces Flink's fresh-start assignment with a comparison
	// strategy; nil means FreshAssignment. Restore is modelled for Flink only.
	Assign func([]Topic, int) (Assignment, error)
	// Candidates is how many ranked parallelism candidates to return (0: none).
	Candidates int
	// CompareRestore also models a restore at Target when Start is fresh,
	// so that Plan.Restore and Plan.MovesRestore can be shown beside the
	// fresh start. The restore model costs more than the rest of the plan;
	// a restore Start always computes it.
	CompareRestore bool
}

// PlanSide is one parallelism's layout and figures.
type PlanSide struct {
	Parallelism int
	Assignment  Assignment
	// PartitionSkew is over partitions per subtask.
	PartitionSkew Skew
	// Load is the sum of partition rates per subtask (nil without rates) and
	// RateSkew its skew.
	Load     []float64
	RateSkew Skew
	// Ranges are the key-group ranges per subtask and KeyGroupSkew the skew
	// of their sizes.
	Ranges       []KeyGroupRange
	KeyGroupSkew Skew
}

// Plan is the result of comparing the current and target parallelism.
type Plan struct {
	MaxParallelism          int
	MaxParallelismDefaulted bool
	Start                   StartMode
	Now, Target             PlanSide
	// Restore is the restore layout at Target when Start is restore or
	// PlanInput.CompareRestore asks for it; nil otherwise and when a
	// comparison strategy is used.
	Restore *RestoreResult
	// TargetFresh is the fresh-start layout at Target.
	TargetFresh Assignment
	// Keyed is the keyed-state movement from Current to Target.
	Keyed KeyedRescaleDiff
	// MovesFresh and MovesRestore list the partitions that change subtask
	// from now to the target under each start mode; MovesRestore is empty
	// when Restore is nil.
	MovesFresh, MovesRestore SourceRescaleDiff
	HasRates                 bool
}

// MakePlan computes a plan. It validates every input with Flink's rules and
// returns an error naming the offending field.
func MakePlan(in PlanInput) (Plan, error) {
	pl, _, err := makePlan(in, nil)
	return pl, err
}

// wantsRestore reports whether a plan of in models the restore at Target:
// always for a restore start, on request for a fresh one, and never for a
// comparison strategy.
func (in PlanInput) wantsRestore() bool {
	return in.Assign == nil && (in.Start == StartRestore || in.CompareRestore)
}

// makePlan is MakePlan after the restores of history (see
// MakePlanAfterRestores); a history of at most one entry is a fresh start
// at in.Current. It also returns the restore result of the current layout,
// nil for a fresh start.
func makePlan(in PlanInput, history []int) (Plan, *RestoreResult, error) {
	if err := CheckParallelism(in.Current); err != nil {
		return Plan{}, nil, fmt.Errorf("current parallelism: %w", err)
	}
	if err := CheckParallelism(in.Target); err != nil {
		return Plan{}, nil, fmt.Errorf("target parallelism: %w", err)
	}
	if err := ValidateTopics(in.Topics); err != nil {
		return Plan{}, nil, err
	}
	pl := Plan{MaxParallelism: in.MaxParallelism, Start: in.Start, HasRates: len(in.Rates) > 0}
	if pl.Start == "" {
		pl.Start = StartFresh
	}
	if pl.Start != StartFresh && pl.Start != StartRestore {
		return Plan{}, nil, fmt.Errorf("start mode %q: want fresh or restore", in.Start)
	}
	if pl.MaxParallelism == 0 {
		pl.MaxParallelism, _ = DefaultMaxParallelism(in.Current)
		pl.MaxParallelismDefaulted = true
	}
	if err := CheckMaxParallelism(pl.MaxParallelism, in.Current); err != nil {
		return Plan{}, nil, fmt.Errorf("max parallelism against current parallelism: %w", err)
	}
	if err := CheckMaxParallelism(pl.MaxParallelism, in.Target); err != nil {
		return Plan{}, nil, fmt.Errorf("max parallelism against target parallelism: %w", err)
	}
	if in.Assign != nil && pl.Start == StartRestore {
		return Plan{}, nil, errors.New("restore from savepoint is modelled for Flink's KafkaSource only; choose the Flink strategy")
	}
	restored := len(history) > 1
	if in.Assign != nil && restored {
		return Plan{}, nil, errors.New("a restore history is modelled for Flink's KafkaSource only; choose the Flink strategy")
	}
	assignFn := in.Assign
	if assignFn == nil {
		assignFn = FreshAssignment
	}
	// The restore at Target needs nothing the rest of the plan computes: it
	// runs beside it when the topics are many (planConcurrentMin).
	var rr RestoreResult
	var rrErr error
	restoreAtTarget := func() {
		if restored {
			rr, rrErr = Restore(RestoreInput{Topics: in.Topics, History: append(slices.Clone(history), in.Target)})
		} else {
			rr, rrErr = RestoreAssignment(in.Topics, in.Current, in.Target)
		}
	}
	// Whichever of the helper and this goroutine (once done with the rest)
	// claims the restore first runs it, so a helper started late on a busy
	// machine is never waited for.
	var claimed atomic.Bool
	var wg sync.WaitGroup
	defer wg.Wait()
	concurrent := in.wantsRestore() && totalPartitions(in.Topics) >= planConcurrentMin && runtime.GOMAXPROCS(0) > 1
	if concurrent {
		wg.Go(func() {
			if claimed.CompareAndSwap(false, true) {
				restoreAtTarget()
			}
		})
	}
	var nowRestore *RestoreResult
	var now Assignment
	if restored {
		rr, err := Restore(RestoreInput{Topics: in.Topics, History: history})
		if err != nil {
			return Plan{}, nil, err
		}
		nowRestore, now = &rr, rr.Assignment
	} else {
		var err error
		if now, err = assignFn(in.Topics, in.Current); err != nil {
			return Plan{}, nil, err
		}
	}
	var err error
	if pl.TargetFresh, err = assignFn(in.Topics, in.Target); err != nil {
		return Plan{}, nil, err
	}
	target := pl.TargetFresh
	if in.wantsRestore() {
		if claimed.CompareAndSwap(false, true) {
			restoreAtTarget()
		} else {
			wg.Wait()
		}
		if rrErr != nil {
			return Plan{}, nil, rrErr
		}
		pl.Restore = &rr
		pl.MovesRestore = SourceRescale(now, rr.Assignment)
		if pl.Start == StartRestore {
			target = rr.Assignment
		}
	}
	pl.MovesFresh = SourceRescale(now, pl.TargetFresh)
	// FreshAssignment lists every subtask's partitions in global index
	// order, so its loads can be summed from Owners and rates by index.
	// Restore layouts do not, so their sides sum along each subtask's list.
	var dense []float64
	if len(in.Rates) > 0 && in.Assign == nil {
		dense = denseRates(in.Topics, in.Rates)
	}
	nowDense := dense
	if restored {
		nowDense = nil
	}
	if pl.Now, err = pl.side(now, in.Rates, nowDense); err != nil {
		return Plan{}, nil, err
	}
	if pl.Start == StartRestore {
		dense = nil
	}
	if pl.Target, err = pl.side(target, in.Rates, dense); err != nil {
		return Plan{}, nil, err
	}
	if pl.Keyed, err = KeyedRescale(pl.MaxParallelism, in.Current, in.Target, in.StateBytes); err != nil {
		return Plan{}, nil, err
	}
	return pl, nowRestore, nil
}

// side computes one side's figures. dense, when not nil, holds the rates by
// a's global index and promises that a's Subtasks list every subtask's
// partitions in global index order: adding dense[i] to the load of
// Owners[i] for ascending i is then the same sum, in the same order, as
// adding rates[tp] along each Subtasks list.
func (pl Plan) side(a Assignment, rates map[TopicPartition]float64, dense []float64) (PlanSide, error) {
	s := PlanSide{Parallelism: a.Parallelism, Assignment: a, PartitionSkew: MeasureSkew(a.Counts())}
	if len(rates) > 0 {
		s.Load = make([]float64, a.Parallelism)
		if dense != nil && len(dense) == len(a.Owners) {
			for i, o := range a.Owners {
				s.Load[o] += dense[i]
			}
		} else {
			for i, ps := range a.Subtasks {
				for _, tp := range ps {
					s.Load[i] += rates[tp]
				}
			}
		}
		s.RateSkew = MeasureSkew(s.Load)
	}
	var err error
	if s.Ranges, err = KeyGroupRanges(pl.MaxParallelism, a.Parallelism); err != nil {
		return PlanSide{}, err
	}
	sizes := make([]float64, len(s.Ranges))
	for i, r := range s.Ranges {
		sizes[i] = float64(r.Size())
	}
	s.KeyGroupSkew = MeasureSkew(sizes)
	return s, nil
}

// denseRates returns the rate of every partition of topics by global index
// (topic offset + partition), 0 where rates has none.
func denseRates(topics []Topic, rates map[TopicPartition]float64) []float64 {
	type span struct{ off, n int }
	at := make(map[string]span, len(topics))
	total := 0
	for _, t := range topics {
		at[t.Name] = span{total, t.Partitions}
		total += t.Partitions
	}
	dense := make([]float64, total)
	for tp, v := range rates {
		if sp, ok := at[tp.Topic]; ok && tp.Partition >= 0 && int(tp.Partition) < sp.n {
			dense[sp.off+int(tp.Partition)] = v
		}
	}
	return dense
}
