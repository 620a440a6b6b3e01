package plan

import (
	"fmt"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/strategy"
)

// compareRestoreMax: a fresh-start plan of at most this many partitions
// also models a restore from a savepoint, to say what it would move. Above
// it the restore model costs more than the rest of the plan, and the page
// asks the reader to choose the restore mode instead.
const compareRestoreMax = 2000

// Result is everything the planner page and /api/v1/plan show for a valid
// request.
type Result struct {
	Plan assign.Plan
	// NowRestore is the restore model's current layout when the request
	// gives a restore history, nil for a fresh start.
	NowRestore *assign.RestoreResult
	Sizing     assign.Sizing
	Capacity   Capacity
	// Upper is the highest parallelism the candidates were swept to.
	Upper int
	// Strategy is the request's assignment strategy.
	Strategy strategy.Strategy
}

// Capacity is what the plan knows of a subtask's capacity, and where each
// figure comes from.
type Capacity struct {
	// Source and Keyed are the capacity estimates (Kind "given" when typed).
	Source, Keyed assign.CapacityEstimate
	// SourceRates says where the source subtasks' records/s come from:
	// "observed" (typed per subtask) or "estimated" (their partitions'
	// produced rates under the current layout, which is what they read
	// when they keep up).
	SourceRates string
	// KeyGroupLoad is each key group's records/s, spread from the keyed
	// subtasks' records in (estimated); nil unknown.
	KeyGroupLoad []float64
	// Scaler is the autoscaler's computation for each vertex with busy
	// ratios, source first.
	Scaler []VertexScaler
	// Sampled is the key sample KeyGroupLoad comes from, nil when it is
	// spread from records in.
	Sampled *Sample
}

// Sample is a finished key sample's key groups, for the plan.
type Sample struct {
	ID      string
	Topic   string
	Records int64
	KG      []int64
	// Rate is the records/s the sample saw (a live window), 0 for a
	// sample of the last records, which gives shares only.
	Rate float64
	At   time.Time
}

// load is each key group's records/s: its share of the sample times the
// keyed vertex's records in (given), or times the sample's own rate.
func (sl *Sample) load(maxP int, keyedIn []float64) ([]float64, error) {
	if len(sl.KG) != maxP {
		return nil, fmt.Errorf("sample %s routed keys over %d key groups, the plan has %d: sample with the job's max parallelism", sl.ID, len(sl.KG), maxP)
	}
	if sl.Records == 0 {
		return nil, fmt.Errorf("sample %s holds no records", sl.ID)
	}
	total := sl.Rate
	if keyedIn != nil {
		total = 0
		for _, v := range keyedIn {
			total += v
		}
	}
	if total == 0 {
		return nil, fmt.Errorf("sample %s gives each key group's share of the records, not a rate: give the keyed vertex's records in/s too", sl.ID)
	}
	out := make([]float64, maxP)
	for i, c := range sl.KG {
		out[i] = total * float64(c) / float64(sl.Records)
	}
	return out, nil
}

// VertexScaler is the autoscaler's computation for one vertex.
type VertexScaler struct {
	Vertex string                  `json:"vertex"`
	Lag    float64                 `json:"lag"`
	Result assign.AutoscalerResult `json:"result"`
}

// FieldError is a request that is well formed but cannot be planned: the
// layout or the capacity inputs do not fit together. Field names the query
// parameter to change.
type FieldError struct {
	Field, Msg string
}

// Error is the message after its field, as the API reports a bad field.
func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// PlanHistory is the source's parallelism history for the plan: the one
// given, or just the current parallelism (a fresh start).
func (r Request) PlanHistory() []int {
	if len(r.History) > 1 {
		return r.History
	}
	return []int{r.Parallelism}
}

// Partitions is the number of partitions of the request's topics.
func (r Request) Partitions() int {
	total := 0
	for _, t := range r.Topics {
		total += t.Partitions
	}
	return total
}

// strategy is the request's assignment strategy.
func (r Request) strategy() (strategy.Strategy, error) {
	name := r.Strategy
	if name == "" {
		name = strategy.Default
	}
	return strategy.Lookup(name)
}

// Compute plans a valid request (see Validate): sample, when not nil, is
// the key sample the request names. A *FieldError says which input does
// not fit; other errors are the planner's own.
func (r Request) Compute(sample *Sample) (*Result, error) {
	st, err := r.strategy()
	if err != nil {
		return nil, &FieldError{Field: "strategy", Msg: err.Error()}
	}
	pl, nowRestore, err := assign.MakePlanAfterRestores(r.planInput(st), r.PlanHistory())
	if err != nil {
		return nil, &FieldError{Field: "parallelism", Msg: err.Error()}
	}
	pc, err := r.capacityOf(pl, sample)
	if err != nil {
		return nil, &FieldError{Field: "keyedIn", Msg: err.Error()}
	}
	in := r.sizingInput(pl, pc, st)
	sz, err := assign.Size(in)
	if err != nil {
		return nil, fmt.Errorf("sizing: %w", err)
	}
	return &Result{Plan: pl, NowRestore: nowRestore, Sizing: sz, Capacity: pc, Upper: in.UpperLimit, Strategy: st}, nil
}

func (r Request) planInput(st strategy.Strategy) assign.PlanInput {
	in := assign.PlanInput{
		Topics: r.Topics, Rates: r.Rates, Current: r.Parallelism, Target: r.Target,
		MaxParallelism: r.MaxParallelism, Start: r.Mode, StateBytes: r.State,
		CompareRestore: r.Partitions() <= compareRestoreMax,
	}
	if in.Start == "" {
		in.Start = assign.StartFresh
	}
	if st.Name != strategy.Default {
		in.Assign = st.Assign
	}
	return in
}

// recommendInput sweeps parallelisms up to what a user would consider for
// this job: twice the larger of current and target, and at least 64. On a
// fresh start without a keyed load it stops at the partition count, since
// more source subtasks than partitions only idle; a restore's contiguous
// chunks, and a keyed vertex, can still gain beyond it.
func (r Request) recommendInput(maxP int) assign.RecommendInput {
	upper := min(maxP, max(2*max(r.Parallelism, r.Target), 64))
	if r.Mode != assign.StartRestore && r.KeyedIn == nil {
		upper = min(upper, r.Partitions())
	}
	return assign.RecommendInput{
		Topics: r.Topics, Rates: r.Rates, MaxParallelism: maxP,
		Current: r.Parallelism, Target: r.Target, UpperLimit: upper,
	}
}

// capacityOf works out the plan's capacity inputs.
func (r Request) capacityOf(pl assign.Plan, sample *Sample) (Capacity, error) {
	var pc Capacity
	pc.Source, pc.Keyed = assign.CapacityEstimate{Kind: "unknown"}, assign.CapacityEstimate{Kind: "unknown"}
	switch {
	case r.Capacity > 0:
		pc.Source = assign.CapacityEstimate{PerSubtask: r.Capacity, Kind: "given"}
	case r.Busy != nil:
		rates := r.Observed
		pc.SourceRates = "observed"
		if rates == nil {
			rates, pc.SourceRates = pl.Now.Load, "estimated"
		}
		rs := make([]assign.SubtaskReading, len(r.Busy))
		for i := range rs {
			rs[i] = assign.SubtaskReading{Rate: rates[i], Busy: r.Busy[i]}
		}
		pc.Source = assign.EstimateCapacity(rs)
	}
	opts := assign.DefaultAutoscalerOptions()
	if r.Utilization > 0 {
		opts.TargetUtilization = r.Utilization / 100
	}
	// The source's backlog is the operator's LAG (the sum of the source's
	// pendingRecords), which its catch-up term reads: Lag / catch-up.duration.
	backlog := 0.0
	for _, v := range r.Backlog {
		backlog += v
	}
	// scaler runs the autoscaler's computation for a vertex whose busy
	// ratios are known: input rate inRate, records/s processed rates and
	// lag records pending for it.
	scaler := func(vertex string, n int, inRate float64, rates, busy []float64, lag float64) {
		ms := make([]float64, len(busy))
		sum := 0.0
		for i, b := range busy {
			ms[i] = b * 1000
			sum += rates[i]
		}
		tpr := assign.TrueProcessingRate(sum, assign.AggregateBusyTime(assign.DefaultBusyTimeAggregator, ms))
		res, err := assign.ScaleTargetParallelism(assign.AutoscalerInput{
			Current: r.Parallelism, MaxParallelism: pl.MaxParallelism, NumPartitions: n,
			InputRate: inRate, TrueProcessingRate: tpr, Lag: lag, Options: opts,
		})
		if err == nil {
			pc.Scaler = append(pc.Scaler, VertexScaler{Vertex: vertex, Lag: lag, Result: res})
		}
	}
	if r.Busy != nil && pl.Now.Load != nil {
		rates := r.Observed
		if rates == nil {
			rates = pl.Now.Load
		}
		produced := 0.0
		for _, v := range pl.Now.Load {
			produced += v
		}
		scaler("source", r.Partitions(), produced, rates, r.Busy, backlog)
	}
	if r.KeyedIn != nil && r.KeyedBusy != nil {
		in := 0.0
		for _, v := range r.KeyedIn {
			in += v
		}
		// A downstream vertex's lag is the source's times the edge's
		// output ratio (its records in over the source's records out).
		srcOut := r.Observed
		if srcOut == nil {
			srcOut = pl.Now.Load
		}
		out := 0.0
		for _, v := range srcOut {
			out += v
		}
		lag := 0.0
		if out > 0 {
			lag = backlog * in / out
		}
		scaler("keyed", 0, in, r.KeyedIn, r.KeyedBusy, lag)
	}
	if sl := sample; sl != nil {
		kg, err := sl.load(pl.MaxParallelism, r.KeyedIn)
		if err != nil {
			return pc, err
		}
		pc.KeyGroupLoad, pc.Sampled = kg, sl
	} else if r.KeyedIn != nil {
		kg, err := assign.SpreadKeyGroupLoad(pl.MaxParallelism, r.KeyedIn)
		if err != nil {
			return pc, err
		}
		pc.KeyGroupLoad = kg
	}
	if r.KeyedIn != nil {
		switch {
		case r.KeyedCapacity > 0:
			pc.Keyed = assign.CapacityEstimate{PerSubtask: r.KeyedCapacity, Kind: "given"}
		case r.KeyedBusy != nil:
			rs := make([]assign.SubtaskReading, len(r.KeyedBusy))
			for i := range rs {
				rs[i] = assign.SubtaskReading{Rate: r.KeyedIn[i], Busy: r.KeyedBusy[i]}
			}
			pc.Keyed = assign.EstimateCapacity(rs)
		}
	}
	return pc, nil
}

// sizingInput is the candidate sweep for the plan.
func (r Request) sizingInput(pl assign.Plan, pc Capacity, st strategy.Strategy) assign.SizingInput {
	in := assign.SizingInput{
		RecommendInput: r.recommendInput(pl.MaxParallelism),
		SourceCapacity: pc.Source.PerSubtask, KeyedCapacity: pc.Keyed.PerSubtask,
		KeyGroupLoad: pc.KeyGroupLoad, Utilization: r.Utilization / 100, StateBytes: r.State,
		Backlog: r.Backlog, Retention: r.Retention,
	}
	if st.Comparison {
		in.Assign = st.Assign
	}
	if r.Mode == assign.StartRestore {
		in.Restore, in.History = true, r.PlanHistory()
	}
	// The job's parallelism is set by its most demanding vertex.
	for _, sc := range pc.Scaler {
		in.AutoscalerTarget = max(in.AutoscalerTarget, sc.Result.Computed)
		in.AutoscalerChoice = max(in.AutoscalerChoice, sc.Result.Parallelism)
	}
	return in
}
