package web

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/views"
)

// planCapacity is what the planner knows of a subtask's capacity, and where
// each figure comes from.
type planCapacity struct {
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
	Scaler []vertexScaler
	// Sampled is the key sample KeyGroupLoad comes from, nil when it is
	// spread from records in.
	Sampled *sampledLoad
}

// sampledLoad is a finished key sample's key groups, for the planner.
type sampledLoad struct {
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
func (sl *sampledLoad) load(maxP int, keyedIn []float64) ([]float64, error) {
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

// vertexScaler is the autoscaler's computation for one vertex.
type vertexScaler struct {
	Vertex string                  `json:"vertex"`
	Lag    float64                 `json:"lag"`
	Result assign.AutoscalerResult `json:"result"`
}

// capacityOf works out the plan's capacity inputs.
func (f *planForm) capacityOf(pl assign.Plan) (planCapacity, error) {
	var pc planCapacity
	pc.Source, pc.Keyed = assign.CapacityEstimate{Kind: "unknown"}, assign.CapacityEstimate{Kind: "unknown"}
	switch {
	case f.capacity > 0:
		pc.Source = assign.CapacityEstimate{PerSubtask: f.capacity, Kind: "given"}
	case f.busy != nil:
		rates := f.observed
		pc.SourceRates = "observed"
		if rates == nil {
			rates, pc.SourceRates = pl.Now.Load, "estimated"
		}
		rs := make([]assign.SubtaskReading, len(f.busy))
		for i := range rs {
			rs[i] = assign.SubtaskReading{Rate: rates[i], Busy: f.busy[i]}
		}
		pc.Source = assign.EstimateCapacity(rs)
	}
	opts := assign.DefaultAutoscalerOptions()
	if f.utilization > 0 {
		opts.TargetUtilization = f.utilization
	}
	// The source's backlog is the operator's LAG (the sum of the source's
	// pendingRecords), which its catch-up term reads: Lag / catch-up.duration.
	backlog := 0.0
	for _, v := range f.backlog {
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
		r, err := assign.ScaleTargetParallelism(assign.AutoscalerInput{
			Current: f.current, MaxParallelism: pl.MaxParallelism, NumPartitions: n,
			InputRate: inRate, TrueProcessingRate: tpr, Lag: lag, Options: opts,
		})
		if err == nil {
			pc.Scaler = append(pc.Scaler, vertexScaler{Vertex: vertex, Lag: lag, Result: r})
		}
	}
	if f.busy != nil && pl.Now.Load != nil {
		rates := f.observed
		if rates == nil {
			rates = pl.Now.Load
		}
		produced := 0.0
		for _, v := range pl.Now.Load {
			produced += v
		}
		scaler("source", f.partitions(), produced, rates, f.busy, backlog)
	}
	if f.keyedIn != nil && f.keyedBusy != nil {
		in := 0.0
		for _, v := range f.keyedIn {
			in += v
		}
		// A downstream vertex's lag is the source's times the edge's
		// output ratio (its records in over the source's records out).
		srcOut := f.observed
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
		scaler("keyed", 0, in, f.keyedIn, f.keyedBusy, lag)
	}
	if sl := f.sampled; sl != nil {
		kg, err := sl.load(pl.MaxParallelism, f.keyedIn)
		if err != nil {
			return pc, err
		}
		pc.KeyGroupLoad, pc.Sampled = kg, sl
	} else if f.keyedIn != nil {
		kg, err := assign.SpreadKeyGroupLoad(pl.MaxParallelism, f.keyedIn)
		if err != nil {
			return pc, err
		}
		pc.KeyGroupLoad = kg
	}
	if f.keyedIn != nil {
		switch {
		case f.keyedCapacity > 0:
			pc.Keyed = assign.CapacityEstimate{PerSubtask: f.keyedCapacity, Kind: "given"}
		case f.keyedBusy != nil:
			rs := make([]assign.SubtaskReading, len(f.keyedBusy))
			for i := range rs {
				rs[i] = assign.SubtaskReading{Rate: f.keyedIn[i], Busy: f.keyedBusy[i]}
			}
			pc.Keyed = assign.EstimateCapacity(rs)
		}
	}
	return pc, nil
}

// sizingInput is the candidate sweep for the plan.
func (f *planForm) sizingInput(pl assign.Plan, pc planCapacity) assign.SizingInput {
	in := assign.SizingInput{
		RecommendInput: f.recommendInput(pl.MaxParallelism),
		SourceCapacity: pc.Source.PerSubtask, KeyedCapacity: pc.Keyed.PerSubtask,
		KeyGroupLoad: pc.KeyGroupLoad, Utilization: f.utilization, StateBytes: f.stateBytes,
		Backlog: f.backlog, Retention: f.retention,
	}
	if f.strat.Comparison {
		in.Assign = f.strat.Assign
	}
	if f.mode == assign.StartRestore {
		in.Restore, in.History = true, f.planHistory()
	}
	// The job's parallelism is set by its most demanding vertex.
	for _, sc := range pc.Scaler {
		in.AutoscalerTarget = max(in.AutoscalerTarget, sc.Result.Computed)
		in.AutoscalerChoice = max(in.AutoscalerChoice, sc.Result.Parallelism)
	}
	return in
}

// computePlan is everything the planner page and /api/v1/plan show for a
// valid form.
func (f *planForm) computePlan() (*planResult, error) {
	pl, nowRestore, err := assign.MakePlanAfterRestores(f.planInput(), f.planHistory())
	if err != nil {
		return nil, &inputError{Field: "parallelism", Msg: err.Error()}
	}
	pc, err := f.capacityOf(pl)
	if err != nil {
		return nil, &inputError{Field: "keyedIn", Msg: err.Error()}
	}
	in := f.sizingInput(pl, pc)
	sz, err := assign.Size(in)
	if err != nil {
		return nil, fmt.Errorf("sizing: %w", err)
	}
	return &planResult{plan: pl, nowRestore: nowRestore, sizing: sz, capacity: pc, upper: in.UpperLimit}, nil
}

// sizingSummary is the recommendation in one sentence, and its kind.
func sizingSummary(f *planForm, res *planResult) (string, string) {
	sz := res.sizing
	if sz.Recommended == 0 {
		return "No parallelism is recommended: " + sz.Need + ".", "computed"
	}
	var c assign.Candidate
	for _, x := range sz.Candidates {
		if x.Parallelism == sz.Recommended {
			c = x
		}
	}
	if sz.Basis == "capacity" {
		return fmt.Sprintf("Recommended: p = %d, the smallest parallelism at which every subtask stays under %s of its capacity (busiest at %s).",
			sz.Recommended, format.Percent(100*sz.Utilization), utilText(c.Utilization)), "estimated"
	}
	return fmt.Sprintf("Recommended: p = %d, the smallest parallelism whose busiest subtask carries no more than the busiest at your target p = %d. Give busy ratios or a capacity to size by capacity instead.",
		sz.Recommended, f.target), "computed"
}

// planAnswer is the top of the plan: the recommendation, or why none
// is, and then the verdict on the target shown under the layout the
// candidates are judged by.
func planAnswer(f *planForm, res *planResult) views.PlanAnswer {
	var a views.PlanAnswer
	a.Summary, a.SummaryKind = sizingSummary(f, res)
	sz := res.sizing
	i := slices.IndexFunc(sz.Candidates, func(c assign.Candidate) bool { return c.Parallelism == f.target })
	if i < 0 {
		return a
	}
	c := sz.Candidates[i]
	a.Meets = c.Meets
	a.TargetKind = "computed"
	if sz.Basis == "capacity" {
		a.TargetKind = "estimated"
	}
	how := "a fresh start"
	switch {
	case f.strat.Comparison:
		how = f.strat.Label + "'s own layout"
	case sz.Layout == "restore":
		how = fmt.Sprintf("restored from a savepoint taken at p = %d", f.current)
	}
	var what string
	switch {
	case f.target == sz.Recommended:
		what = "the recommended parallelism"
	case slices.Contains(c.Roles, assign.RoleBest) && sz.Recommended == 0:
		what = "the lowest busiest subtask any parallelism reaches"
	case f.target == f.current:
		what = "the current parallelism"
	default:
		what = "your target"
	}
	a.Target = fmt.Sprintf("Shown: p = %d → %d (%s), %s: %s.", f.current, f.target, how, what, c.Verdict)
	return a
}

// capacityLines say what a subtask can process and where the figure comes
// from.
func capacityLines(res *planResult) []views.KindLine {
	var out []views.KindLine
	line := func(who string, ce assign.CapacityEstimate, rates string) {
		switch ce.Kind {
		case "given":
			out = append(out, views.KindLine{Kind: "given", Text: fmt.Sprintf("A %s subtask processes %s records/s at 100%% busy.", who, format.Num(ce.PerSubtask))})
		case "observed":
			from := "its records/s over its busy ratio"
			if rates == "estimated" {
				from = "its partitions' produced records/s over its busy ratio"
			}
			t := fmt.Sprintf("A %s subtask processes about %s records/s at 100%% busy: the median over %d subtasks of %s (%s–%s), as the autoscaler computes a true processing rate.",
				who, format.Num(ce.PerSubtask), ce.Used, from, format.Num(ce.Min), format.Num(ce.Max))
			if len(ce.Notes) > 0 {
				t += " Left out: " + strings.Join(ce.Notes, "; ") + "."
			}
			out = append(out, views.KindLine{Kind: "estimated", Text: t})
		}
	}
	line("source", res.capacity.Source, res.capacity.SourceRates)
	line("keyed", res.capacity.Keyed, "")
	if sl := res.capacity.Sampled; sl != nil {
		out = append(out, views.KindLine{Kind: "sampled", Text: fmt.Sprintf("Each key group's records/s is its share of key sample %s of %s (%s records, taken %s) times the keyed vertex's records in: the keys were routed exactly as Flink routes them, so a hot key shows in its own key group.",
			sl.ID, sl.Topic, format.Int(sl.Records), sl.At.UTC().Format("15:04:05 MST"))})
	} else if res.capacity.KeyGroupLoad != nil {
		out = append(out, views.KindLine{Kind: "estimated", Text: "Each key group's records/s is its keyed subtask's records in, spread evenly over the subtask's key groups: a hot key inside a range is not visible from Flink's metrics; a key sample (\"sample keys\" on the keyed vertex's page) shows it."})
	}
	if len(out) > 0 {
		out = append(out, views.KindLine{Kind: "given", Text: fmt.Sprintf("Target utilisation %s (the autoscaler's default is 70%%): the share of a subtask's capacity a plan may use, keeping the rest for peaks, catch-up after a restart and checkpoints.", format.Percent(100*res.sizing.Utilization))})
	}
	return out
}

// autoscalerLine compares the autoscaler's choice with the layout it gets.
func autoscalerLine(f *planForm, res *planResult) string {
	sz := res.sizing
	if sz.AutoscalerChoice == 0 {
		return ""
	}
	var t string
	if len(res.capacity.Scaler) == 0 {
		a := sz.Autoscaler[0]
		t = fmt.Sprintf("For a computed target of %d (your target) the Flink autoscaler's default %s alignment runs p = %d (%s).", a.Target, a.Mode, a.Parallelism, a.Note)
	} else {
		var parts []string
		for _, sc := range res.capacity.Scaler {
			r := sc.Result
			why := ""
			switch {
			case r.Parallelism == f.current && r.Computed != f.current:
				why = " (its true processing rate is inside its utilisation band, so it does not rescale)"
			case r.Aligned.Parallelism != r.Computed:
				why = " (" + r.Aligned.Note + ")"
			}
			parts = append(parts, fmt.Sprintf("for the %s vertex it computes %d from a scale factor of %.3g and runs p = %d%s", sc.Vertex, r.Computed, r.ScaleFactor, r.Parallelism, why))
		}
		t = "The Flink autoscaler, from the same busy ratios and rates (its defaults: MAX busy time, 70% utilisation target, BALANCED alignment): " + strings.Join(parts, "; ") + "."
	}
	for _, c := range sz.Candidates {
		if c.Parallelism != sz.AutoscalerChoice || c.Utilization < 0 {
			continue
		}
		if !c.Meets {
			t += fmt.Sprintf(" It assumes the load spreads evenly; at p = %d under the real layout the %s.", c.Parallelism, lowerFirst(c.Verdict))
		} else {
			t += fmt.Sprintf(" At p = %d the real layout keeps every subtask under the target (%s).", c.Parallelism, lowerFirst(c.Verdict))
		}
	}
	return t
}

// lowerFirst lower-cases a sentence's first letter.
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}
