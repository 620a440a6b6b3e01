package assign

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/internal/quote"
)

// DefaultTargetUtilization is the share of a subtask's capacity a plan
// aims to use, as the autoscaler's job.autoscaler.utilization.target
// (AutoScalerOptions.UTILIZATION_TARGET, 0.7) does for a whole vertex.
const DefaultTargetUtilization = 0.7

// SubtaskReading is one running subtask's observed throughput.
type SubtaskReading struct {
	// Rate is the records/s it processed (records out for a source,
	// records in for a keyed subtask); negative or NaN unknown.
	Rate float64
	// Busy is Flink's busy ratio (busyTimeMsPerSecond / 1000), 0..1;
	// negative or NaN unknown.
	Busy float64
}

// Guards on the busy ratio of a subtask whose capacity is estimated. Below
// minBusyForCapacity a subtask is nearly idle: its busy time is a few
// milliseconds a second and rate/busy magnifies their noise (the
// autoscaler's TPR is +∞ at 0 busy time, which it then ignores); a subtask
// at or above saturatedBusy is busy all the time, so its rate is its
// capacity and busy adds nothing.
const (
	minBusyForCapacity = 0.05
	saturatedBusy      = 0.99
)

// CapacityEstimate is what one subtask of a vertex can process, records/s at
// 100 % busy.
type CapacityEstimate struct {
	// PerSubtask is the estimate, 0 when unknown.
	PerSubtask float64 `json:"perSubtask"`
	// Kind is "given" (typed by the user), "observed" (from busy ratios)
	// or "unknown".
	Kind string `json:"kind"`
	// Used counts the subtasks the estimate is taken from; Skipped those
	// left out, with the reasons in Notes.
	Used    int      `json:"used"`
	Skipped int      `json:"skipped"`
	Min     float64  `json:"min"`
	Max     float64  `json:"max"`
	Notes   []string `json:"notes,omitempty"`
}

// EstimateCapacity estimates a subtask's capacity from the running
// subtasks' rates and busy ratios: each subtask's true processing rate is
// its rate over its busy ratio, as the autoscaler defines it
// (ScalingMetrics.computeTrueProcessingRate: records in per second over
// busy time per second), and the estimate is their median, so that one
// subtask that is slow, or whose metrics lag, does not decide it. Subtasks
// without both figures, nearly idle (busy < 5 %) or with a rate of 0 are
// skipped; a saturated subtask (busy ≥ 99 %) counts with its rate. Slots
// are assumed alike: a new subtask runs as fast as today's median one.
func EstimateCapacity(rs []SubtaskReading) CapacityEstimate {
	ce := CapacityEstimate{Kind: "unknown"}
	var tprs []float64
	idle, unknown := 0, 0
	for _, r := range rs {
		switch {
		case !(r.Rate >= 0) || !(r.Busy >= 0) || math.IsInf(r.Rate, 0):
			unknown++
		case r.Busy < minBusyForCapacity || r.Rate == 0:
			idle++
		case r.Busy >= saturatedBusy:
			tprs = append(tprs, r.Rate)
		default:
			tprs = append(tprs, r.Rate/min(r.Busy, 1))
		}
	}
	ce.Skipped = idle + unknown
	if unknown > 0 {
		ce.Notes = append(ce.Notes, fmt.Sprintf("%d subtasks without a rate or busy ratio", unknown))
	}
	if idle > 0 {
		ce.Notes = append(ce.Notes, fmt.Sprintf("%d nearly idle subtasks (busy below %s or no records): rate ÷ busy is noise there", idle, pct(minBusyForCapacity)))
	}
	if len(tprs) == 0 {
		return ce
	}
	slices.Sort(tprs)
	n := len(tprs)
	med := tprs[n/2]
	if n%2 == 0 {
		med = (tprs[n/2-1] + tprs[n/2]) / 2
	}
	ce.PerSubtask, ce.Kind, ce.Used, ce.Min, ce.Max = med, "observed", n, tprs[0], tprs[n-1]
	return ce
}

// SpreadKeyGroupLoad estimates the records/s of every key group from each
// running keyed subtask's records in, spread evenly over the key groups of
// its range (KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex).
// It is an estimate: inside a subtask's range the load of single key groups
// is not observable from metrics (a key sample is). rates has one entry per
// subtask (len = the current parallelism); an unknown rate (negative or
// NaN) is an error, since its key groups would silently count as idle.
func SpreadKeyGroupLoad(maxP int, rates []float64) ([]float64, error) {
	p := len(rates)
	if err := checkRange(maxP, p); err != nil {
		return nil, err
	}
	out := make([]float64, maxP)
	for i, r := range rates {
		if !(r >= 0) || math.IsInf(r, 0) {
			return nil, fmt.Errorf("records in of keyed subtask %d is %v: want a finite number ≥ 0", i, r)
		}
		kr := keyGroupRange(int32(maxP), int32(p), int32(i))
		each := r / float64(kr.Size())
		for kg := kr.Start; kg <= kr.End; kg++ {
			out[kg] = each
		}
	}
	return out, nil
}

// SizingInput is what Size computes candidates from: a source vertex's
// partitions with their produced rates, the keyed vertex that follows it,
// and what a subtask of each can process.
type SizingInput struct {
	RecommendInput
	// SourceCapacity and KeyedCapacity are what one subtask processes at
	// 100 % busy, records/s; 0 unknown.
	SourceCapacity, KeyedCapacity float64
	// KeyGroupLoad is the records/s of every key group (len MaxParallelism),
	// nil unknown.
	KeyGroupLoad []float64
	// Utilization is the target share of a subtask's capacity, in (0, 1];
	// 0 means DefaultTargetUtilization.
	Utilization float64
	// AutoscalerTarget is the autoscaler's computed parallelism before
	// alignment, 0 when it cannot be computed (then Target is aligned).
	AutoscalerTarget int
	// AutoscalerChoice is the parallelism the autoscaler would run after
	// its band check (ScaleTargetParallelism's Parallelism), 0 when not
	// computed: then the BALANCED alignment of the target is taken.
	AutoscalerChoice int
	// Assign is a comparison strategy's layout for p subtasks; nil means
	// Flink's fresh start, or the restore model when History is set.
	Assign func([]Topic, int) (Assignment, error)
	// History is the source's parallelism history ending at Current; with
	// Restore, each candidate's layout is the restore from a savepoint
	// taken at Current.
	History []int
	Restore bool
	// StateBytes is each current subtask's keyed state, for the state each
	// candidate moves; nil unknown.
	StateBytes []int64
	// Backlog is each partition's records not yet read (the source's
	// observed lag), nil unknown: then no candidate says when its backlog
	// clears. Retention is each topic's retention time (absent: unknown or
	// infinite).
	Backlog   map[TopicPartition]float64
	Retention map[string]time.Duration
}

// Candidate roles, in the order Size lists them.
const (
	RoleRecommended = "recommended"
	RoleEven        = "even"
	RoleHeadroom    = "headroom"
	RoleBest        = "best"
	RoleCheaper     = "cheaper"
	RoleAutoscaler  = "autoscaler"
	RoleTarget      = "target"
	RoleCurrent     = "current"
)

// Sizing is Size's answer.
type Sizing struct {
	// Basis is "capacity" when a subtask's capacity is known (candidates
	// are judged by their busiest subtask's predicted utilisation) and
	// "target" otherwise (by their busiest subtask's load against the
	// target's own busiest).
	Basis       string  `json:"basis"`
	Utilization float64 `json:"utilization"`
	// Recommended is the smallest swept p that meets the basis, 0 when none
	// does; Need then says why in words.
	Recommended int    `json:"recommended"`
	Need        string `json:"need"`
	// Layout is the layout the candidates are judged under: "fresh",
	// "restore" or a comparison's name given by the caller.
	Layout string `json:"layout"`
	// Upper is the largest swept p; Swept how many values were judged under
	// Layout (all of 1..Upper, or fewer for a costly layout: SweptNote).
	Upper      int         `json:"upper"`
	Swept      int         `json:"swept"`
	SweptNote  string      `json:"sweptNote,omitempty"`
	Candidates []Candidate `json:"candidates"`
	// Autoscaler is the alignment of AutoscalerTarget (or Target) in each
	// mode, BALANCED first; empty without either. AutoscalerChoice is the
	// parallelism the autoscaler would run (0 none).
	Autoscaler       []Alignment `json:"autoscaler,omitempty"`
	AutoscalerChoice int         `json:"autoscalerChoice"`
}

// sizeEval is one p judged under the sizing's layout.
type sizeEval struct {
	p                      int
	srcBusiest, keyBusiest float64 // records/s (or partitions without rates); -1 unknown
	srcAt, keyAt           int     // busiest subtask
	idle                   int
	// srcUtil and keyUtil are the busiest loads over a subtask's capacity,
	// util the larger; -1 unknown.
	srcUtil, keyUtil, util float64
	a                      *Assignment
}

// unknownEval is p with no figure known yet.
func unknownEval(p int) sizeEval {
	return sizeEval{p: p, srcBusiest: -1, keyBusiest: -1, srcUtil: -1, keyUtil: -1, util: -1}
}

// restoreSweepBudget bounds partitions × swept p for layouts computed one
// p at a time (the restore model, comparison strategies).
const restoreSweepBudget = 400_000

// freshSweepFull is the largest p up to which a fresh start with rates
// judges every p when the sweep would sum more than freshSweepBudget
// partitions × p; beyond it the sweep judges sparseSweep's values.
const (
	freshSweepFull   = 2048
	freshSweepBudget = 40_000_000
)

// keyedSweepBudget bounds the key-group ranges summed over a sweep with a
// keyed load (p ranges at each p: upper²/2 in all), so a sweep to 32,768
// does not take seconds.
const keyedSweepBudget = 20_000_000

// Size judges every parallelism 1..upper limit for a source vertex (and the
// keyed vertex behind it, when its load is known) and returns the
// candidates a rescale should consider, each with a role:
//
//   - recommended: the smallest p whose busiest subtask stays under the
//     target utilisation of its capacity (basis "capacity"), or, when no
//     capacity is known, whose busiest subtask carries no more than the
//     busiest one at Target (basis "target");
//   - even: the smallest p from there on whose partitions spread evenly
//     (p divides them and no subtask idles);
//   - headroom: the smallest p whose busiest subtask stays 20 points under
//     the target (or at 80 % of the target's busiest);
//   - best: the smallest p within 1 % of the lowest busiest load any p
//     reaches (more subtasks buy nothing beyond it);
//   - cheaper: the largest p below the recommendation that still carries
//     the load (busiest under 100 %), with less headroom;
//   - autoscaler: the autoscaler's aligned choice for its computed target;
//   - target and current.
//
// Candidates are judged under the layout the job would get: the restore
// model from History when Restore is set, a comparison strategy's own
// layout when Assign is, else Flink's fresh start.
func Size(in SizingInput) (Sizing, error) {
	r, err := prepareRecommend(in.RecommendInput)
	if err != nil {
		return Sizing{}, err
	}
	u := in.Utilization
	if u == 0 {
		u = DefaultTargetUtilization
	}
	if !(u > 0 && u <= 1) {
		return Sizing{}, fmt.Errorf("target utilisation %v: want a share in (0, 1]", in.Utilization)
	}
	for _, c := range []float64{in.SourceCapacity, in.KeyedCapacity} {
		if !(c >= 0) || math.IsInf(c, 0) {
			return Sizing{}, fmt.Errorf("capacity %v: want a finite number of records/s ≥ 0", c)
		}
	}
	if in.KeyGroupLoad != nil && len(in.KeyGroupLoad) != r.maxP {
		return Sizing{}, fmt.Errorf("key-group load has %d entries: want one per key group (%d)", len(in.KeyGroupLoad), r.maxP)
	}
	for tp, v := range in.Backlog {
		if !(v >= 0) || math.IsInf(v, 0) {
			return Sizing{}, fmt.Errorf("backlog of partition %s is %v: want a finite number of records ≥ 0", quote.Clip(tp.SplitID()), v)
		}
	}
	for t, d := range in.Retention {
		if d < 0 {
			return Sizing{}, fmt.Errorf("retention of topic %s is %v: want a duration ≥ 0", quote.Clip(t), d)
		}
	}
	if in.Restore && in.Assign != nil {
		return Sizing{}, errors.New("restore from a savepoint is modelled for Flink's KafkaSource only")
	}
	if in.Restore && (len(in.History) == 0 || in.History[len(in.History)-1] != r.current) {
		return Sizing{}, fmt.Errorf("restore history %v: it must end at the current parallelism %d", in.History, r.current)
	}
	sz := Sizing{Basis: "target", Utilization: u, Upper: r.upper, Layout: "fresh"}
	srcCap, keyCap := in.SourceCapacity, in.KeyedCapacity
	if !r.hasRates || r.keyedOnly {
		srcCap = 0 // a capacity in records/s needs produced rates
	}
	var kgPrefix []float64
	if in.KeyGroupLoad != nil {
		kgPrefix = make([]float64, r.maxP+1)
		for i, v := range in.KeyGroupLoad {
			if !(v >= 0) || math.IsInf(v, 0) {
				return Sizing{}, fmt.Errorf("load of key group %d is %v: want a finite number ≥ 0", i, v)
			}
			kgPrefix[i+1] = kgPrefix[i] + v
		}
	} else {
		keyCap = 0
	}
	if srcCap > 0 || keyCap > 0 {
		sz.Basis = "capacity"
	}
	switch {
	case in.Assign != nil:
		sz.Layout = "comparison"
	case in.Restore:
		sz.Layout = "restore"
	}

	// Evaluate one p under the sizing's layout.
	layoutAt := func(p int) (*Assignment, error) {
		switch {
		case in.Assign != nil:
			a, err := in.Assign(in.Topics, p)
			return &a, err
		case in.Restore:
			rr, err := Restore(RestoreInput{Topics: in.Topics, History: append(slices.Clone(in.History), p)})
			return &rr.Assignment, err
		}
		return nil, nil
	}
	// The fresh start's busiest loads and idle subtasks come from the
	// closed form, for every swept p at once (sweepList, below); the
	// busiest subtask's index is found only for the listed candidates
	// (full).
	var freshBusiest []float64
	var freshIdle []int
	eval := func(p int, a *Assignment, full bool) sizeEval {
		e := unknownEval(p)
		e.a = a
		if !r.keyedOnly {
			var loads []float64
			switch {
			case a != nil:
				if r.hasRates {
					loads = assignmentLoads(*a, in.Rates)
				} else {
					loads = a.Counts()
				}
				for _, ps := range a.Subtasks {
					if len(ps) == 0 {
						e.idle++
					}
				}
			case freshBusiest != nil && !full && p < len(freshBusiest):
				e.srcBusiest, e.idle = freshBusiest[p], freshIdle[p]
			case r.hasRates:
				loads = r.loads(p)
				e.idle = r.idle(p)
			default:
				var mx int
				mx, e.idle = r.countStats(p)
				e.srcBusiest = float64(mx)
				if full {
					cs := r.counts(p)
					loads = make([]float64, p)
					for i, c := range cs {
						loads[i] = float64(c)
					}
				}
			}
			if loads != nil {
				e.srcBusiest, e.srcAt = loads[0], 0
				for i, v := range loads {
					if v > e.srcBusiest {
						e.srcBusiest, e.srcAt = v, i
					}
				}
			}
		}
		if kgPrefix != nil {
			e.keyBusiest, e.keyAt = keyedBusiest(kgPrefix, r.maxP, p)
		}
		e.srcUtil, e.keyUtil = -1, -1
		if srcCap > 0 && e.srcBusiest >= 0 {
			e.srcUtil = e.srcBusiest / srcCap
		}
		if keyCap > 0 && e.keyBusiest >= 0 {
			e.keyUtil = e.keyBusiest / keyCap
		}
		e.util = max(e.srcUtil, e.keyUtil)
		return e
	}

	// The sweep: every p for the closed-form fresh start (up to
	// freshSweepFull when its loads are costly to sum); a bounded set for
	// layouts computed one p at a time.
	ps := make([]int, 0, r.upper)
	fresh := in.Assign == nil && !in.Restore && r.hasRates && !r.keyedOnly
	costly := (in.Assign != nil || in.Restore) && (r.total+1)*r.upper > restoreSweepBudget
	keyedCostly := kgPrefix != nil && r.upper*r.upper/2 > keyedSweepBudget
	freshCostly := fresh && r.upper > freshSweepFull && float64(r.total)*float64(r.upper) > freshSweepBudget
	switch {
	case costly || keyedCostly:
		ps = sparseSweep(r, in.Target)
		what := "the " + sz.Layout + " layout is computed one parallelism at a time"
		if !costly {
			what = "the keyed vertex's load is summed over every range of each parallelism"
		}
		sz.SweptNote = fmt.Sprintf("%s: %d values of 1..%d are judged (around the current and target parallelism, divisors of the partition count and key groups, powers of two and 2 %% steps)", what, len(ps), r.upper)
	case freshCostly:
		for p := 1; p <= freshSweepFull; p++ {
			ps = append(ps, p)
		}
		sparse := sparseSweep(r, in.Target)
		at, _ := slices.BinarySearch(sparse, freshSweepFull+1)
		beyond := sparse[at:]
		ps = append(ps, beyond...)
		sz.SweptNote = fmt.Sprintf("the busiest subtask's load is summed over %d partitions at each parallelism: every value of 1..%d and %d of %d..%d are judged (around the current and target parallelism, divisors of the partition count and key groups, powers of two and 2 %% steps)",
			r.total, freshSweepFull, len(beyond), freshSweepFull+1, r.upper)
	default:
		for p := 1; p <= r.upper; p++ {
			ps = append(ps, p)
		}
	}
	if fresh {
		freshBusiest, freshIdle = r.sweepList(ps)
	}
	evals := make([]sizeEval, 0, len(ps))
	for _, p := range ps {
		a, err := layoutAt(p)
		if err != nil {
			return Sizing{}, err
		}
		evals = append(evals, eval(p, a, false))
	}
	sz.Swept = len(evals)
	// extra evaluates p in full (with its busiest subtask), also outside
	// the sweep.
	extra := func(p int) sizeEval {
		if i, ok := slices.BinarySearchFunc(evals, p, func(e sizeEval, p int) int { return cmp.Compare(e.p, p) }); ok && evals[i].a != nil {
			return evals[i]
		}
		a, err := layoutAt(p)
		if err != nil {
			return unknownEval(p)
		}
		return eval(p, a, true)
	}

	// The reference for the target basis: the target's own busiest.
	var refSrc, refKey float64
	if sz.Basis == "target" {
		ref := extra(cmp.Or(r.target, r.current))
		refSrc, refKey = ref.srcBusiest, ref.keyBusiest
	}
	meets := func(e sizeEval, slack float64) bool {
		if sz.Basis == "capacity" {
			return e.util >= 0 && e.util <= u-slack+1e-12
		}
		f := 1 - slack
		return (refSrc < 0 || e.srcBusiest <= refSrc*f*(1+1e-12)) && (refKey < 0 || e.keyBusiest <= refKey*f*(1+1e-12))
	}
	busiestOf := func(e sizeEval) float64 {
		if sz.Basis == "capacity" {
			return e.util
		}
		if refSrc > 0 {
			return e.srcBusiest
		}
		return e.keyBusiest
	}

	type pick struct {
		p    int
		role string
	}
	var picks []pick
	add := func(p int, role string) {
		if p > 0 {
			picks = append(picks, pick{p, role})
		}
	}
	rec := 0
	for _, e := range evals {
		if meets(e, 0) {
			rec = e.p
			break
		}
	}
	sz.Recommended = rec
	best := math.Inf(1)
	for _, e := range evals {
		if b := busiestOf(e); b >= 0 {
			best = min(best, b)
		}
	}
	bestP := 0
	for _, e := range evals {
		if b := busiestOf(e); b >= 0 && b <= best*1.01 {
			bestP = e.p
			break
		}
	}
	add(rec, RoleRecommended)
	if rec > 0 {
		for _, e := range evals {
			if e.p >= rec && meets(e, 0) && e.idle == 0 && r.total > 0 && r.total%e.p == 0 {
				add(e.p, RoleEven)
				break
			}
		}
		for _, e := range evals {
			if e.p > rec && meets(e, 0.2) {
				add(e.p, RoleHeadroom)
				break
			}
		}
	}
	add(bestP, RoleBest)
	if sz.Basis == "capacity" && rec > 1 {
		for i := len(evals) - 1; i >= 0; i-- {
			if e := evals[i]; e.p < rec && e.util >= 0 && e.util <= 1 {
				add(e.p, RoleCheaper)
				break
			}
		}
	}
	scalerT := cmp.Or(in.AutoscalerTarget, r.target)
	if scalerT > 0 {
		for _, m := range AlignmentModes() {
			if m == AlignmentOff {
				continue
			}
			a := Align(m, r.alignN, r.maxP, r.current, min(scalerT, r.maxP), r.scalerUp)
			if a.Parallelism > 0 {
				sz.Autoscaler = append(sz.Autoscaler, a)
			}
		}
		if in.AutoscalerChoice == 0 && len(sz.Autoscaler) > 0 {
			sz.AutoscalerChoice = sz.Autoscaler[0].Parallelism
		}
	}
	if in.AutoscalerChoice > 0 {
		sz.AutoscalerChoice = in.AutoscalerChoice
	}
	add(sz.AutoscalerChoice, RoleAutoscaler)
	add(r.target, RoleTarget)
	add(r.current, RoleCurrent)

	bestEval := unknownEval(0)
	for _, e := range evals {
		if e.p == bestP {
			bestEval = e
		}
	}
	if rec == 0 {
		sz.Need = r.noneMeets(in, sz, bestEval, srcCap, u)
	}

	seen := map[int]int{}
	for _, pk := range picks {
		if i, ok := seen[pk.p]; ok {
			sz.Candidates[i].Roles = append(sz.Candidates[i].Roles, pk.role)
			continue
		}
		e := extra(pk.p)
		c := r.candidate(pk.p, len(sz.Candidates)+1)
		if e.a != nil {
			c = candidateOf(r, *e.a, in.Rates, pk.p, len(sz.Candidates)+1)
		}
		c.Roles = []string{pk.role}
		c.Utilization, c.Meets = e.util, meets(e, 0)
		c.SourceBusiest, c.SourceBusiestSubtask = e.srcBusiest, e.srcAt
		c.KeyedBusiest, c.KeyedBusiestSubtask = e.keyBusiest, e.keyAt
		c.SourceUtilization, c.KeyedUtilization = e.srcUtil, e.keyUtil
		c.StateMovedBytes = -1
		if d, err := KeyedRescale(r.maxP, r.current, pk.p, in.StateBytes); err == nil {
			c.StateMovedFraction = d.MovedFraction
			if d.BytesKnown {
				c.StateMovedBytes = d.MovedBytes
			}
		}
		if in.Backlog != nil && r.hasRates && !r.keyedOnly {
			a := e.a
			if a == nil {
				if fa, err := FreshAssignment(in.Topics, pk.p); err == nil {
					a = &fa
				}
			}
			if a != nil {
				c.Backlog = backlogOf(*a, in.Rates, in.Backlog, in.Retention, srcCap)
				c.ClearSeconds, c.LossStops = slowestClear(c.Backlog)
			}
		}
		c.Verdict = verdict(c, sz, u, refSrc, refKey) + backlogVerdict(c)
		seen[pk.p] = len(sz.Candidates)
		sz.Candidates = append(sz.Candidates, c)
	}
	for i := range sz.Candidates {
		c := &sz.Candidates[i]
		for _, a := range sz.Autoscaler {
			if a.Parallelism == c.Parallelism {
				c.AutoscalerPicks = append(c.AutoscalerPicks, a)
			}
		}
	}
	return sz, nil
}

// noneMeets says, in words, why no swept p meets the sizing's basis.
func (r *recInput) noneMeets(in SizingInput, sz Sizing, best sizeEval, srcCap, u float64) string {
	if sz.Basis != "capacity" {
		return fmt.Sprintf("no p in 1..%d carries no more per subtask than the target", r.upper)
	}
	hot, hotRate := TopicPartition{}, -1.0
	for tp, v := range in.Rates {
		if v > hotRate || v == hotRate && lessTP(tp, hot) {
			hot, hotRate = tp, v
		}
	}
	if srcCap > 0 && hotRate/srcCap > u {
		return fmt.Sprintf("partition %s alone needs %s of a source subtask (%s of %s records/s): a partition is read by one subtask, so no parallelism brings the busiest under %s; give a subtask more capacity or the topic more partitions",
			quote.Clip(hot.SplitID()), pct(hotRate/srcCap), fmtRate(hotRate), fmtRate(srcCap), pct(u))
	}
	if best.util >= 0 {
		return fmt.Sprintf("no p in 1..%d brings the busiest subtask under %s; the lowest reached is %s at p = %d", r.upper, pct(u), pct(best.util), best.p)
	}
	return fmt.Sprintf("no p in 1..%d brings the busiest subtask under %s", r.upper, pct(u))
}

// verdict is a candidate's judgement in words.
func verdict(c Candidate, sz Sizing, u, refSrc, refKey float64) string {
	if sz.Basis == "capacity" {
		who := "source"
		at := c.SourceBusiestSubtask
		if c.KeyedUtilization > c.SourceUtilization {
			who, at = "keyed", c.KeyedBusiestSubtask
		}
		switch {
		case c.Utilization < 0:
			return "capacity unknown"
		case c.Utilization > 1:
			return fmt.Sprintf("cannot carry the load: %s subtask %d needs %s of its capacity", who, at, pct(c.Utilization))
		case c.Utilization > u:
			return fmt.Sprintf("over the %s target: %s subtask %d at %s", pct(u), who, at, pct(c.Utilization))
		}
		return fmt.Sprintf("busiest: %s subtask %d at %s, %s headroom to the target", who, at, pct(c.Utilization), pts(u-c.Utilization))
	}
	if refSrc > 0 && c.SourceBusiest > refSrc*(1+1e-12) {
		return fmt.Sprintf("busiest subtask carries %s × the target's busiest", fmtFactor(c.SourceBusiest/refSrc))
	}
	if refKey > 0 && c.KeyedBusiest > refKey*(1+1e-12) {
		return fmt.Sprintf("busiest keyed subtask carries %s × the target's", fmtFactor(c.KeyedBusiest/refKey))
	}
	return "carries no more per subtask than the target"
}

// pct and pts write a 0–1 share as the planner's tables do (format.Percent).
func pct(x float64) string { return format.Percent(100 * x) }

func pts(x float64) string { return format.Points(100 * x) }

func fmtFactor(x float64) string { return fmt.Sprintf("%.2f", x) }

// keyedBusiest is the largest key-group load sum over the ranges of p
// subtasks, and its subtask.
func keyedBusiest(prefix []float64, maxP, p int) (float64, int) {
	best, at := -1.0, 0
	for i := range p {
		kr := keyGroupRange(int32(maxP), int32(p), int32(i))
		if v := prefix[kr.End+1] - prefix[kr.Start]; v > best {
			best, at = v, i
		}
	}
	return best, at
}

// assignmentLoads sums rates along each subtask's partitions.
func assignmentLoads(a Assignment, rates map[TopicPartition]float64) []float64 {
	l := make([]float64, a.Parallelism)
	for i, ps := range a.Subtasks {
		for _, tp := range ps {
			l[i] += rates[tp]
		}
	}
	return l
}

// candidateOf is a Candidate's structural and load figures for layout a.
func candidateOf(r *recInput, a Assignment, rates map[TopicPartition]float64, p, rank int) Candidate {
	c := r.candidate(p, rank) // key groups, fixed points
	counts := a.Counts()
	c.PartitionSkew = MeasureSkew(counts)
	c.PartitionsMin, c.PartitionsMax = int(slices.Min(counts)), int(c.PartitionSkew.Max)
	c.Idle = c.PartitionSkew.Idle
	if len(rates) > 0 {
		c.RateSkew = MeasureSkew(assignmentLoads(a, rates))
		c.BusiestLoad, c.BusiestSubtask = c.RateSkew.Max, c.RateSkew.Busiest
	}
	var parts []string
	if c.DividesPartitions {
		parts = append(parts, fmt.Sprintf("divides %d partitions", r.total))
	}
	parts = append(parts, fmt.Sprintf("%d–%d partitions per subtask", c.PartitionsMin, c.PartitionsMax))
	if c.Idle > 0 {
		parts = append(parts, fmt.Sprintf("%d idle", c.Idle))
	}
	c.Reason = strings.Join(parts, ", ")
	return c
}

// sparseSweep is the set of p judged when judging every p costs too much:
// 1..16, ±8 around the current and target parallelism, divisors of the
// partition count and of the max parallelism, powers of two and a ladder
// of 2 % steps, up to the sweep's upper limit.
func sparseSweep(r *recInput, target int) []int {
	set := map[int]bool{}
	for p := 1; p <= min(16, r.upper); p++ {
		set[p] = true
	}
	for _, c := range []int{r.current, target} {
		for p := c - 8; p <= c+8; p++ {
			if p >= 1 && p <= r.upper {
				set[p] = true
			}
		}
	}
	for p := 1; p <= r.upper; p++ {
		if r.total > 0 && r.total%p == 0 || r.maxP%p == 0 || p&(p-1) == 0 {
			set[p] = true
		}
	}
	// And a ladder of 2 % steps, so no stretch of the range goes unjudged.
	for x := 16.0; int(x) <= r.upper; x *= 1.02 {
		set[int(x)] = true
	}
	ps := make([]int, 0, len(set))
	for p := range set {
		ps = append(ps, p)
	}
	slices.Sort(ps)
	return ps
}
