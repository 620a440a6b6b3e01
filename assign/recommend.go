package assign

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/skewscope/skewscope/internal/quote"
)

// AlignmentMode names a way the Flink Kubernetes Operator autoscaler aligns
// a computed parallelism to the number of key groups or source partitions
// (flink-autoscaler: JobVertexScaler.scale up to operator 1.15,
// ParallelismAligner on main). The first three values are the operator's
// own config values on main; the generation-suffixed ones are skewscope
// labels for the same-named modes of older operators.
//
//	value                       operator        config key                                 on no aligned value
//	BALANCED (default)          main, FLIP-586  scaling.parallelism-alignment.mode         keep the target
//	EVENLY_SPREAD               main, FLIP-586  scaling.parallelism-alignment.mode         keep the target
//	OFF                         main, FLIP-586  scaling.parallelism-alignment.mode         (no alignment)
//	MAXIMIZE_UTILISATION        <= 1.14         scaling.key-group.partitions.adjust.mode   downward fallback
//	EVENLY_SPREAD_1.14          <= 1.14 default scaling.key-group.partitions.adjust.mode   downward fallback
//	MAXIMIZE_UTILISATION_1.15   1.15.0, and main with the deprecated key                  fallback + direction guard
//	EVENLY_SPREAD_1.15          1.15.0 default, and main with the deprecated key          fallback + direction guard
type AlignmentMode string

// The alignment modes; see AlignmentMode.
const (
	Balanced               AlignmentMode = "BALANCED"
	EvenlySpread           AlignmentMode = "EVENLY_SPREAD"
	AlignmentOff           AlignmentMode = "OFF"
	MaximizeUtilisation    AlignmentMode = "MAXIMIZE_UTILISATION"
	EvenlySpread114        AlignmentMode = "EVENLY_SPREAD_1.14"
	MaximizeUtilisation115 AlignmentMode = "MAXIMIZE_UTILISATION_1.15"
	EvenlySpread115        AlignmentMode = "EVENLY_SPREAD_1.15"
)

// AlignmentModes lists every mode Align knows, newest generation first.
func AlignmentModes() []AlignmentMode {
	return []AlignmentMode{Balanced, EvenlySpread, AlignmentOff,
		MaximizeUtilisation115, EvenlySpread115, MaximizeUtilisation, EvenlySpread114}
}

// DefaultVertexMaxParallelism is the autoscaler's job.autoscaler.vertex
// .max-parallelism default (AutoScalerOptions.VERTEX_MAX_PARALLELISM, 200).
const DefaultVertexMaxParallelism = 200

// Alignment is the result of Align.
type Alignment struct {
	Mode AlignmentMode `json:"mode"`
	// Parallelism is the aligned parallelism; 0 when the input was invalid
	// (Note then says why).
	Parallelism int `json:"parallelism"`
	// N is the number aligned to: source partitions, or key groups (max
	// parallelism) when the vertex has no partitions.
	N int `json:"n"`
	// Target is the target after the autoscaler's clamp to
	// [1, min(maxP, upperLimit)].
	Target int `json:"target"`
	// Divides reports N % Parallelism == 0.
	Divides bool `json:"divides"`
	// Limited reports that a legacy mode would emit its ScalingLimited
	// warning event (fallback used, or scaling blocked).
	Limited bool `json:"limited"`
	// Note is a short human explanation, e.g. "divides 128 key groups".
	Note string `json:"note"`
}

// Align returns the parallelism the Flink Kubernetes Operator autoscaler
// would run a source or keyBy vertex at, given the computed target.
//
// n is the vertex's source partition count (the total over all topics, as
// ScalingMetricCollector counts it) or 0 for a keyed vertex, in which case
// the max parallelism maxP is used: ParallelismAligner.numKeyGroupsOrPartitions.
// current is the running parallelism, which decides the direction.
// upperLimit is the autoscaler's parallelismUpperLimit (on main
// min(maxP, max(current, vertex.max-parallelism)), JobVertexScaler L239-240);
// 0 or less means none (Integer.MAX_VALUE). The target is first clamped to
// [1, min(maxP, upperLimit)] as JobVertexScaler.scale does before aligning
// ("Apply min/max parallelism"), with the parallelism lower limit taken as 1
// (min(current, vertex.min-parallelism = 1)).
//
// Sources mirrored (apache/flink-kubernetes-operator, flink-autoscaler/src/
// main/java/org/apache/flink/autoscaler/):
//
//   - BALANCED, EVENLY_SPREAD, OFF: alignment/BuiltInAlignmentMode
//     .alignOrKeepTarget and alignment/ParallelismAligner.firstAlignedInRegion
//     (main 6e9caeb4; FLIP-586, FLINK-39938, commit 180c1353, PR #1088):
//     U = min(N, min(maxP, upperLimit)); the region is t..U for a scale-up
//     (t > current) and t..min(current, U) otherwise; return the first q with
//     N % q == 0, or for BALANCED also N/q < N/t; if none, keep t.
//   - MAXIMIZE_UTILISATION, EVENLY_SPREAD_1.14: JobVertexScaler.scale at tag
//     release-1.14.0 (f50413820c3f; FLINK-36527, PR #904): the same upward
//     search over t..U in either direction, then the downward fallback: walk
//     q down from t to the first q with N/q > N/t, take q+1 if N % q != 0,
//     then max(q, lower limit), emitting ScalingLimited.
//   - MAXIMIZE_UTILISATION_1.15, EVENLY_SPREAD_1.15: JobVertexScaler.scale at
//     tag release-1.15.0 (79d730bab4d8, after FLINK-39299 14f04033): return t
//     unchanged when it equals current; cap the upward search at current for
//     a scale-down; after the same fallback, block (return current) if the
//     result would invert the scaling direction. Main's deprecated
//     KeyGroupOrPartitionsAdjustMode (ParallelismAligner
//     .relaxedDownwardFallback and .applyBlockingFallback) computes the same
//     except for the t == current shortcut.
//
// Bounds, with B = min(maxP, upperLimit) and U = min(N, B): every mode
// returns a value in [1, max(current, B)]. BALANCED and EVENLY_SPREAD never
// go below Target, never above max(Target, U), never above current when
// scaling down, and return Target itself, a divisor of N, or (BALANCED) a q
// with N/q < N/Target. The 1.15 modes never invert the scaling direction.
// OFF returns Target. Invalid input (maxP outside 1..32768, current or
// target below 1, n negative, an unknown mode) gives Parallelism 0 and a
// Note saying why.
func Align(mode AlignmentMode, n, maxP, current, target, upperLimit int) Alignment {
	a := Alignment{Mode: mode}
	switch {
	case CheckParallelism(maxP) != nil:
		a.Note = fmt.Sprintf("invalid max parallelism %d: want 1..%d", maxP, UpperBoundMaxParallelism)
		return a
	case current < 1:
		a.Note = fmt.Sprintf("invalid current parallelism %d: want at least 1", current)
		return a
	case target < 1:
		a.Note = fmt.Sprintf("invalid target parallelism %d: want at least 1", target)
		return a
	case n < 0:
		a.Note = fmt.Sprintf("invalid partition count %d: want 0 (keyed) or more", n)
		return a
	case !slices.Contains(AlignmentModes(), mode):
		a.Note = fmt.Sprintf("unknown alignment mode %q", string(mode))
		return a
	}
	what := "partitions"
	N := n
	if N <= 0 {
		N, what = maxP, "key groups"
	}
	if upperLimit <= 0 {
		upperLimit = math.MaxInt32
	}
	upperBound := min(maxP, upperLimit)
	t := min(max(1, target), upperBound)
	U := min(N, upperBound)
	a.N, a.Target = N, t
	var notes []string
	if t != target {
		notes = append(notes, fmt.Sprintf("target %d clamped to %d", target, t))
	}
	scaleUp := t > current

	// search is the upward loop shared by every generation.
	search := func(end int, loadReducing bool) int {
		for q := t; q <= end; q++ {
			if N%q == 0 || (loadReducing && N/q < N/t) {
				return q
			}
		}
		return 0
	}
	// fallback is the downward loop of release-1.14.0 / 1.15.0 and main's
	// relaxedDownwardFallback, with the lower limit 1.
	fallback := func() int {
		q := t
		for ; q > 0; q-- {
			if N/q > N/t {
				if N%q != 0 {
					q++
				}
				break
			}
		}
		return max(q, 1)
	}
	found := func(q int) string {
		if N%q == 0 {
			return fmt.Sprintf("divides %d %s", N, what)
		}
		return fmt.Sprintf("%d→%d %s per subtask", N/t, N/q, what) // N/q < N/t
	}

	p := t
	switch mode {
	case AlignmentOff:
		notes = append(notes, "alignment off: target kept")
	case Balanced, EvenlySpread:
		end := U
		if !scaleUp {
			end = min(current, U)
		}
		if q := search(end, mode == Balanced); q > 0 {
			p = q
			notes = append(notes, found(q))
		} else {
			notes = append(notes, fmt.Sprintf("no aligned value in %s: target kept", span(t, end)))
		}
	case MaximizeUtilisation, EvenlySpread114:
		if q := search(U, mode == MaximizeUtilisation); q > 0 {
			p = q
			notes = append(notes, found(q))
		} else {
			p = fallback()
			a.Limited = true
			notes = append(notes, fmt.Sprintf("no aligned value in %s: scaling limited to %d", span(t, U), p))
		}
	case MaximizeUtilisation115, EvenlySpread115:
		if t == current {
			notes = append(notes, "target equals current: no change")
			break
		}
		end := U
		if !scaleUp {
			end = min(current, U)
		}
		if q := search(end, mode == MaximizeUtilisation115); q > 0 {
			p = q
			notes = append(notes, found(q))
			break
		}
		q := fallback()
		a.Limited = true
		if (scaleUp && q <= current) || (!scaleUp && q >= current) {
			p = current
			dir := "scale-down"
			if scaleUp {
				dir = "scale-up"
			}
			notes = append(notes, fmt.Sprintf("no aligned value in %s and %d would invert the %s: blocked at current %d", span(t, end), q, dir, current))
		} else {
			p = q
			a.Limited = q != t
			notes = append(notes, fmt.Sprintf("no aligned value in %s: scaling limited to %d", span(t, end), p))
		}
	}
	a.Parallelism = p
	a.Divides = N%p == 0
	a.Note = strings.Join(notes, "; ")
	return a
}

// span formats an inclusive search range for notes.
func span(from, to int) string {
	if to < from {
		return fmt.Sprintf("%d..%d (empty)", from, to)
	}
	return fmt.Sprintf("%d..%d", from, to)
}

// RecommendInput describes one vertex for the candidate sweep (Size).
type RecommendInput struct {
	// Topics are the partitions a source vertex reads; empty for a purely
	// keyed vertex.
	Topics []Topic
	// Rates are optional per-partition records/s. Partitions without a rate
	// count as 0; a rate for a partition not in Topics is an error.
	Rates map[TopicPartition]float64
	// MaxParallelism is the vertex's max parallelism (number of key groups),
	// 1..32768.
	MaxParallelism int
	// Current is the running parallelism, 1..MaxParallelism.
	Current int
	// Target is the parallelism being considered (for example the
	// autoscaler's computed target); 0 for none.
	Target int
	// UpperLimit caps the sweep; 0 means min(N, MaxParallelism) where N is
	// the total partition count, or MaxParallelism for a keyed vertex.
	// Values above MaxParallelism are lowered to it.
	UpperLimit int
	// VertexMaxParallelism is the autoscaler's job.autoscaler.vertex
	// .max-parallelism (0: the default, 200). With Current it gives the
	// autoscaler's upper limit min(MaxParallelism, max(Current, this)).
	VertexMaxParallelism int
}

// Candidate is one parallelism with its structural and load figures.
type Candidate struct {
	Parallelism int `json:"parallelism"`
	// Rank is the 1-based position in Size's list.
	Rank int `json:"rank"`
	// Key groups per subtask.
	KeyGroupsMin int  `json:"keyGroupsMin"`
	KeyGroupsMax int  `json:"keyGroupsMax"`
	KeyGroupSkew Skew `json:"keyGroupSkew"`
	// Partitions per subtask on a fresh start (KafkaSplitOwner); zero
	// without topics.
	PartitionsMin int  `json:"partitionsMin"`
	PartitionsMax int  `json:"partitionsMax"`
	PartitionSkew Skew `json:"partitionSkew"`
	// Idle counts subtasks without partitions (source) or key groups
	// (keyed; always 0 since p <= max parallelism).
	Idle int `json:"idle"`
	// With rates: the records/s of the busiest subtask on a fresh start, its
	// index, and the skew of per-subtask records/s.
	BusiestLoad    float64 `json:"busiestLoad"`
	BusiestSubtask int     `json:"busiestSubtask"`
	RateSkew       Skew    `json:"rateSkew"`
	// DividesPartitions: the total partition count is a multiple of p (what
	// the autoscaler aligns to; per-topic start indexes can still leave
	// subtasks idle). DividesMaxParallelism: key groups split evenly.
	DividesPartitions     bool `json:"dividesPartitions"`
	DividesMaxParallelism bool `json:"dividesMaxParallelism"`
	// FixedPointOf lists the main-generation modes (BALANCED,
	// EVENLY_SPREAD) that keep p unchanged when it is the autoscaler's
	// computed target, given Current.
	FixedPointOf []AlignmentMode `json:"fixedPointOf"`
	// AutoscalerPicks are the alignments of RecommendInput.Target that
	// land on p, one per mode.
	AutoscalerPicks []Alignment `json:"autoscalerPicks"`
	// Reason summarises why the candidate is listed.
	Reason string `json:"reason"`

	// Judged by Size:
	//
	// Roles say why Size lists it (Role* constants), first the one that
	// placed it.
	Roles []string `json:"roles,omitempty"`
	// SourceBusiest is the busiest source subtask's predicted records/s
	// (partitions without rates) and SourceBusiestSubtask its index;
	// KeyedBusiest and KeyedBusiestSubtask the same for the keyed vertex
	// (-1 unknown).
	SourceBusiest        float64 `json:"sourceBusiest"`
	SourceBusiestSubtask int     `json:"sourceBusiestSubtask"`
	KeyedBusiest         float64 `json:"keyedBusiest"`
	KeyedBusiestSubtask  int     `json:"keyedBusiestSubtask"`
	// SourceUtilization and KeyedUtilization are those loads over a
	// subtask's capacity, Utilization the larger (-1 unknown).
	SourceUtilization float64 `json:"sourceUtilization"`
	KeyedUtilization  float64 `json:"keyedUtilization"`
	Utilization       float64 `json:"utilization"`
	// Meets reports that the candidate meets the sizing's basis.
	Meets bool `json:"meets"`
	// StateMovedFraction is the share of key groups that change subtask
	// from Current; StateMovedBytes the keyed state they hold (-1 unknown).
	StateMovedFraction float64 `json:"stateMovedFraction"`
	StateMovedBytes    int64   `json:"stateMovedBytes"`
	// Backlog is each subtask's backlog and when it clears at the source's
	// capacity (Size with a backlog and a capacity; nil otherwise).
	// ClearSeconds is the slowest subtask's (-1 never), LossStops that
	// every subtask's lag time falls, so records stop being deleted unread
	// (false when a retention is unknown).
	Backlog      []SubtaskBacklog `json:"backlog,omitempty"`
	ClearSeconds float64          `json:"clearSeconds"`
	LossStops    bool             `json:"lossStops"`
	// Verdict is the judgement in words.
	Verdict string `json:"verdict,omitempty"`
}

// recTopic is one topic prepared for the sweep.
type recTopic struct {
	h31   int32     // (hashCode*31) & 0x7FFFFFFF: start index is h31 % p
	n     int       // partitions
	rates []float64 // per partition; nil when no rates are given
}

// recInput is a validated RecommendInput.
type recInput struct {
	topics     []recTopic
	total      int // partitions over all topics
	hasRates   bool
	maxP       int
	current    int
	target     int
	upper      int // sweep 1..upper
	scalerUp   int // autoscaler parallelismUpperLimit
	alignN     int // n passed to Align: total partitions, 0 when keyed
	bestLoad   float64
	keyedOnly  bool
	loadsBuf   []float64
	countsBuf  []int
	diffBuf    []int
	countsFBuf []float64
	eventBuf   []int
	idleBits   []uint64
}

func prepareRecommend(in RecommendInput) (*recInput, error) {
	if err := CheckParallelism(in.MaxParallelism); err != nil {
		return nil, fmt.Errorf("max parallelism: %w", err)
	}
	maxP := in.MaxParallelism
	if err := CheckMaxParallelism(maxP, in.Current); err != nil {
		return nil, fmt.Errorf("current parallelism: %w", err)
	}
	if in.Target != 0 {
		if err := CheckMaxParallelism(maxP, in.Target); err != nil {
			return nil, fmt.Errorf("target parallelism: %w", err)
		}
	}
	if in.UpperLimit < 0 {
		return nil, fmt.Errorf("upper limit %d: want 0 (default) or more", in.UpperLimit)
	}
	if in.VertexMaxParallelism < 0 {
		return nil, fmt.Errorf("vertex max parallelism %d: want 0 (default %d) or more", in.VertexMaxParallelism, DefaultVertexMaxParallelism)
	}
	r := &recInput{maxP: maxP, current: in.Current, target: in.Target}
	if len(in.Topics) > 0 {
		if err := ValidateTopics(in.Topics); err != nil {
			return nil, err
		}
	} else if len(in.Rates) > 0 {
		return nil, errors.New("rates given without topics")
	}
	r.hasRates = len(in.Rates) > 0
	index := make(map[string]int, len(in.Topics))
	for i, t := range in.Topics {
		index[t.Name] = i
		rt := recTopic{h31: (StringHashCode(t.Name) * 31) & 0x7FFFFFFF, n: t.Partitions}
		if r.hasRates {
			rt.rates = make([]float64, t.Partitions)
		}
		r.topics = append(r.topics, rt)
		r.total += t.Partitions
	}
	for tp, v := range in.Rates {
		i, ok := index[tp.Topic]
		if !ok || tp.Partition < 0 || int(tp.Partition) >= in.Topics[i].Partitions {
			return nil, fmt.Errorf("rate for partition %s: not a partition of the given topics", quote.Clip(tp.SplitID()))
		}
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("rate for partition %s is %v: want a finite number >= 0", quote.Clip(tp.SplitID()), v)
		}
		r.topics[i].rates[tp.Partition] = v
	}
	r.keyedOnly = len(r.topics) == 0
	r.alignN = r.total
	r.upper = maxP
	if !r.keyedOnly {
		r.upper = min(r.total, maxP)
	}
	if in.UpperLimit > 0 {
		r.upper = min(in.UpperLimit, maxP)
	}
	vmax := in.VertexMaxParallelism
	if vmax == 0 {
		vmax = DefaultVertexMaxParallelism
	}
	r.scalerUp = min(maxP, max(in.Current, vmax))
	return r, nil
}

// parallelSweepWork is the number of per-partition and per-subtask steps
// from which sweepList shares its sweep among goroutines (a variable so
// tests can force either way).
var parallelSweepWork = float64(1 << 22)

// sweepList returns, for the ascending parallelisms ps (index p, up to
// the last of ps; 0 at p not in ps), the records/s of the busiest subtask
// on a fresh start with p readers, maxLoad(loads(p)), and the idle
// subtasks, idle(p). A large sweep is shared among up to GOMAXPROCS goroutines, each with
// its own buffers, taking blocks of ps in turn; every value is computed
// exactly as in a single loop, so the result does not depend on the split.
func (r *recInput) sweepList(ps []int) (busiest []float64, idle []int) {
	n := 0
	if len(ps) > 0 {
		n = ps[len(ps)-1]
	}
	busiest, idle = make([]float64, n+1), make([]int, n+1)
	const block = 64
	wm := r.windowMaxima()
	workers := 1
	if work := float64(len(ps)) * float64(r.total+n); work >= parallelSweepWork {
		workers = min(runtime.GOMAXPROCS(0), 8, (len(ps)+block-1)/block)
	}
	if workers <= 1 {
		r.sweepBusiest(busiest, idle, ps, newSweepScratch(n), wm)
		return busiest, idle
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			sc := newSweepScratch(n)
			for {
				lo := int(next.Add(block)) - block
				if lo >= len(ps) {
					return
				}
				r.sweepBusiest(busiest, idle, ps[lo:min(lo+block, len(ps))], sc, wm)
			}
		})
	}
	wg.Wait()
	return busiest, idle
}

// loadBand is 0 when busiest is within 1 % of best, else 1 + the number of
// further 1 % (geometric) steps above best·1.01.
func loadBand(busiest, best float64) int {
	if busiest <= best*1.01 {
		return 0
	}
	return 1 + int(math.Floor(math.Log(busiest/(best*1.01))/math.Log(1.01)))
}

// counts returns the partitions per subtask on a fresh start with p readers,
// from the per-topic closed form of getSplitOwner: ⌊N_t/p⌋ everywhere plus one
// on the N_t % p subtasks start, start+1, ... (mod p), start = h31 % p. The
// returned slice is reused by the next call.
func (r *recInput) counts(p int) []int {
	diff, base := r.countDiff(p)
	if cap(r.countsBuf) < p {
		r.countsBuf = make([]int, max(p, r.upper))
	}
	c := r.countsBuf[:p]
	run := base
	for i, d := range diff {
		run += d
		c[i] = run
	}
	return c
}

// countDiff fills the difference array of the per-topic extra partitions
// (length p; the entry at p is dropped) and returns it with the base count
// every subtask gets.
func (r *recInput) countDiff(p int) (diff []int, base int) {
	if cap(r.diffBuf) < p+1 {
		r.diffBuf = make([]int, max(p+1, r.upper+1))
	}
	diff = r.diffBuf[:p+1]
	clear(diff)
	for _, t := range r.topics {
		base += t.n / p
		rem := t.n % p
		if rem == 0 {
			continue
		}
		s := int(t.h31 % int32(p))
		diff[s]++
		if e := s + rem; e <= p {
			diff[e]--
		} else {
			diff[0]++
			diff[e-p]--
		}
	}
	return diff[:p], base
}

// sweepSpan is the number of consecutive subtasks whose loads sweepBusiest
// bounds together before it decides to sum them.
const sweepSpan = 16

// sweepPiece is one run of a topic's partitions on consecutive subtasks:
// partitions src .. src+n-1 of topic on subtasks dst .. dst+n-1. loadsInto
// adds the runs of every topic in this order.
type sweepPiece struct {
	topic, dst, src, n int
}

// sweepScratch is one sweeping goroutine's buffers.
type sweepScratch struct {
	loads  []float64 // cap >= the largest p
	bound  []float64 // per span
	pieces []sweepPiece
	bits   []uint64 // idle's bitmap, (cap + 63) / 64 words
}

func newSweepScratch(n int) *sweepScratch {
	return &sweepScratch{loads: make([]float64, n), bound: make([]float64, n/sweepSpan+1), bits: make([]uint64, (n+63)/64)}
}

// sweepWindows are, per topic, the window maxima of its rates: the largest
// of rates q .. min(q+sweepSpan, n)-1, an upper bound of every rate of a run
// of at most sweepSpan partitions that starts at q. They are stored by
// q % sweepSpan, then q / sweepSpan (at (q%sweepSpan)*cols + q/sweepSpan),
// so that the windows of one run over consecutive spans, sweepSpan
// partitions apart, are read in sequence.
type sweepWindows struct {
	max  []float64
	cols int // ceil(n / sweepSpan)
}

func (r *recInput) windowMaxima() []sweepWindows {
	wm := make([]sweepWindows, len(r.topics))
	w := make([]float64, 0)
	for i, t := range r.topics {
		w = append(w[:0], t.rates...)
		// After the step with h, w[q] covers q .. q+2h-1 (clipped at n).
		for h := 1; h < sweepSpan; h *= 2 {
			for q := range len(w) - h {
				if w[q+h] > w[q] {
					w[q] = w[q+h]
				}
			}
		}
		cols := (len(w) + sweepSpan - 1) / sweepSpan
		sw := sweepWindows{max: make([]float64, sweepSpan*cols), cols: cols}
		for q, v := range w {
			sw.max[q%sweepSpan*cols+q/sweepSpan] = v
		}
		wm[i] = sw
	}
	return wm
}

// sweepBusiest sets busiest[p] = maxLoad(loads(p)) and idle[p] = r.idle(p)
// for p in ps, with sc's buffers (sized for the largest) and wm from
// windowMaxima.
//
// The subtasks are taken in spans of sweepSpan. Rates are finite and >= 0,
// and rounded addition is monotone in both operands, so adding, in
// loadsInto's order, the window maximum of each run over the span bounds
// every load in the span (each is the same kind of sum over a subset of
// those runs, of smaller terms). The span with the largest bound is summed
// first, then every span whose bound exceeds the busiest load found so far;
// the others cannot hold a busier subtask. Every load that is summed is
// summed as loadsInto sums it, so the result is the same maximum, bit for
// bit. Small p, with few spans, are summed whole.
func (r *recInput) sweepBusiest(busiest []float64, idle []int, ps []int, sc *sweepScratch, wm []sweepWindows) {
	for _, p := range ps {
		idle[p] = r.idleInto(p, sc.bits)
		// With few spans, or many partitions per subtask (whose bounds add
		// many maxima and rarely rule a span out), summing is cheaper.
		if p < 4*sweepSpan || r.total >= 16*p {
			busiest[p] = maxLoad(r.loadsInto(p, sc.loads))
			continue
		}
		pieces := sc.pieces[:0]
		for ti, t := range r.topics {
			i := int(t.h31 % int32(p))
			for q := 0; q < t.n; i = 0 {
				k := min(p-i, t.n-q)
				pieces = append(pieces, sweepPiece{topic: ti, dst: i, src: q, n: k})
				q += k
			}
		}
		sc.pieces = pieces
		bound := sc.bound[:(p+sweepSpan-1)/sweepSpan]
		clear(bound)
		for _, pc := range pieces {
			w := wm[pc.topic]
			// The first span the run reaches may start before it; the
			// others start at a span boundary, sweepSpan partitions on.
			s := pc.dst / sweepSpan
			bound[s] += w.max[pc.src%sweepSpan*w.cols+pc.src/sweepSpan]
			last := (pc.dst + pc.n - 1) / sweepSpan
			if s == last {
				continue
			}
			q := pc.src + (s+1)*sweepSpan - pc.dst
			row := w.max[q%sweepSpan*w.cols+q/sweepSpan:]
			for c, b := range bound[s+1 : last+1] {
				bound[s+1+c] = b + row[c]
			}
		}
		// The first span with the largest bound: the maximum by a plain
		// comparison (bounds are sums of values >= 0, never NaN), then its
		// index, cheaper than tracking the index through the whole scan.
		top := slices.Index(bound, maxLoad(bound))
		best := r.spanMax(p, top, pieces, sc.loads)
		// Sum every other span whose bound exceeds best, unless they are
		// so many that summing every load is cheaper.
		left := len(bound) / 2
		for s, b := range bound {
			if b <= best || s == top {
				continue
			}
			if left--; left < 0 {
				best = maxLoad(r.loadsInto(p, sc.loads))
				break
			}
			if v := r.spanMax(p, s, pieces, sc.loads); v > best {
				best = v
			}
		}
		busiest[p] = best
	}
}

// spanMax is the busiest load of span s of p subtasks, summed in buf as
// loadsInto sums it: pieces in order, each adding its rates to the
// subtasks it covers.
func (r *recInput) spanMax(p, s int, pieces []sweepPiece, buf []float64) float64 {
	lo, hi := s*sweepSpan, min((s+1)*sweepSpan, p)
	l := buf[:hi-lo]
	clear(l)
	for _, pc := range pieces {
		a, b := max(pc.dst, lo), min(pc.dst+pc.n, hi)
		if a >= b {
			continue
		}
		// A run within one span is short: a plain loop beats addTo's
		// call and unrolling.
		d := l[a-lo : b-lo]
		q := pc.src + a - pc.dst
		src := r.topics[pc.topic].rates[q : q+len(d)]
		for j := range d {
			d[j] += src[j]
		}
	}
	return maxLoad(l)
}

// loads returns the records/s per subtask on a fresh start with p readers:
// partition q of topic t goes to (h31 % p + q) % p. Sums run topic by topic
// in input order, partitions ascending. The slice is reused by the next call.
func (r *recInput) loads(p int) []float64 {
	if cap(r.loadsBuf) < p {
		r.loadsBuf = make([]float64, max(p, r.upper))
	}
	return r.loadsInto(p, r.loadsBuf)
}

// loadsInto is loads in buf (cap(buf) >= p), reading only r.topics.
func (r *recInput) loadsInto(p int, buf []float64) []float64 {
	l := buf[:p]
	clear(l)
	for _, t := range r.topics {
		// Add the rates in runs that end at subtask p-1 or at the last
		// partition: the same additions in the same order as a per-partition
		// loop, without a wrap test per partition.
		i := int(t.h31 % int32(p))
		for rs := t.rates; len(rs) > 0; i = 0 {
			dst := l[i:]
			k := min(len(dst), len(rs))
			addTo(dst[:k], rs[:k])
			rs = rs[k:]
		}
	}
	return l
}

// maxLoad is the largest element of a non-empty slice of finite values. A
// plain comparison is several times faster than slices.Max, which has to
// order NaNs.
func maxLoad(l []float64) float64 {
	b := l[0]
	for _, v := range l[1:] {
		if v > b {
			b = v
		}
	}
	return b
}

// addTo adds src to dst element-wise; len(dst) == len(src). Each element is
// one addition, so unrolling changes no result.
func addTo(dst, src []float64) {
	src = src[:len(dst)]
	j := 0
	for ; j+4 <= len(src); j += 4 {
		d, s := dst[j:j+4:j+4], src[j:j+4:j+4]
		d[0] += s[0]
		d[1] += s[1]
		d[2] += s[2]
		d[3] += s[3]
	}
	for ; j < len(src); j++ {
		dst[j] += src[j]
	}
}

// countStats returns the largest partition count and the number of idle
// subtasks with p readers, without materialising the counts: from the sorted
// interval end points in O(T log T) when p is large against the number of
// topics T, else from the difference array in O(T + p).
func (r *recInput) countStats(p int) (mx, idle int) {
	if 32*len(r.topics) < p {
		return r.countStatsEvents(p)
	}
	return r.countStatsDiff(p)
}

// countStatsEvents sweeps the end points of the per-topic runs of extra
// partitions. An event is pos<<1 | 1 for a run starting at pos and pos<<1
// for a run ending (exclusively) at pos.
func (r *recInput) countStatsEvents(p int) (mx, idle int) {
	ev := r.eventBuf[:0]
	base := 0
	for _, t := range r.topics {
		base += t.n / p
		rem := t.n % p
		if rem == 0 {
			continue
		}
		s := int(t.h31 % int32(p))
		if e := s + rem; e <= p {
			ev = append(ev, s<<1|1, e<<1)
		} else {
			ev = append(ev, s<<1|1, p<<1, 0<<1|1, (e-p)<<1)
		}
	}
	r.eventBuf = ev
	slices.Sort(ev)
	prev, run := 0, 0
	segment := func(end int) {
		if end > prev {
			v := base + run
			mx = max(mx, v)
			if v == 0 {
				idle += end - prev
			}
		}
	}
	for k := 0; k < len(ev); {
		x := ev[k] >> 1
		segment(x)
		for ; k < len(ev) && ev[k]>>1 == x; k++ {
			run += 2*(ev[k]&1) - 1
		}
		prev = x
	}
	segment(p)
	return mx, idle
}

// idle returns the number of idle subtasks with p readers, as countStats
// does, from a bitmap of the subtasks that get a partition: none is idle
// when a topic has p partitions or more (each subtask gets one of them);
// otherwise topic t covers its n_t subtasks start, start+1, ... (mod p),
// and the idle ones are those no topic covers. It costs O(T + p/64 + N/64)
// for T topics and N partitions, without sorting.
func (r *recInput) idle(p int) int {
	if nw := (p + 63) / 64; cap(r.idleBits) < nw {
		r.idleBits = make([]uint64, max(nw, (r.upper+63)/64))
	}
	return r.idleInto(p, r.idleBits)
}

// idleInto is idle with its bitmap in buf (cap(buf) >= (p+63)/64),
// reading only r.topics.
func (r *recInput) idleInto(p int, buf []uint64) int {
	for _, t := range r.topics {
		if t.n >= p {
			return 0
		}
	}
	w := buf[:(p+63)/64]
	clear(w)
	for _, t := range r.topics {
		if t.n == 0 {
			continue
		}
		s := int(t.h31 % int32(p))
		if e := s + t.n; e <= p {
			setBits(w, s, e)
		} else {
			setBits(w, s, p)
			setBits(w, 0, e-p)
		}
	}
	covered := 0
	for _, x := range w {
		covered += bits.OnesCount64(x)
	}
	return p - covered
}

// setBits sets bits a .. b-1 of w (0 <= a < b <= 64*len(w)).
func setBits(w []uint64, a, b int) {
	wa, wb := a>>6, (b-1)>>6
	lo, hi := ^uint64(0)<<(a&63), ^uint64(0)>>(63-((b-1)&63))
	if wa == wb {
		w[wa] |= lo & hi
		return
	}
	w[wa] |= lo
	for i := wa + 1; i < wb; i++ {
		w[i] = ^uint64(0)
	}
	w[wb] |= hi
}

// countStatsDiff is countStats from the difference array.
func (r *recInput) countStatsDiff(p int) (mx, idle int) {
	diff, base := r.countDiff(p)
	run := base
	for _, d := range diff {
		run += d
		mx = max(mx, run)
		// run >= 0, so this adds 1 exactly when run == 0, without a branch
		// (which mispredicts badly on idle/busy patterns).
		idle += int(uint(run-1) >> (bits.UintSize - 1))
	}
	return mx, idle
}

// candidate builds the full Candidate for p (1 <= p <= maxP).
func (r *recInput) candidate(p, rank int) Candidate {
	c := Candidate{Parallelism: p, Rank: rank}
	kg, _ := KeyGroupCounts(r.maxP, p)
	c.KeyGroupSkew = MeasureSkew(kg)
	c.KeyGroupsMin, c.KeyGroupsMax = r.maxP/p, (r.maxP+p-1)/p
	c.DividesMaxParallelism = r.maxP%p == 0
	var reasons []string
	if r.keyedOnly {
		if c.DividesMaxParallelism {
			reasons = append(reasons, fmt.Sprintf("divides %d key groups", r.maxP))
		} else {
			reasons = append(reasons, fmt.Sprintf("%d–%d key groups per subtask (max/mean %.2f)", c.KeyGroupsMin, c.KeyGroupsMax, c.KeyGroupSkew.MaxOverMean))
		}
	} else {
		counts := r.counts(p)
		if cap(r.countsFBuf) < p {
			r.countsFBuf = make([]float64, max(p, r.upper))
		}
		f := r.countsFBuf[:p]
		c.PartitionsMin = counts[0]
		for i, v := range counts {
			f[i] = float64(v)
			c.PartitionsMin = min(c.PartitionsMin, v)
			c.PartitionsMax = max(c.PartitionsMax, v)
		}
		c.PartitionSkew = MeasureSkew(f)
		c.Idle = c.PartitionSkew.Idle
		c.DividesPartitions = r.total%p == 0
		if c.DividesPartitions {
			reasons = append(reasons, fmt.Sprintf("divides %d partitions", r.total))
		}
		if c.PartitionsMin == c.PartitionsMax {
			reasons = append(reasons, fmt.Sprintf("%d partitions per subtask", c.PartitionsMax))
		} else {
			reasons = append(reasons, fmt.Sprintf("%d–%d partitions per subtask (max/mean %.2f)", c.PartitionsMin, c.PartitionsMax, c.PartitionSkew.MaxOverMean))
		}
		if c.Idle > 0 {
			reasons = append(reasons, fmt.Sprintf("%d idle", c.Idle))
		}
		if r.hasRates {
			c.RateSkew = MeasureSkew(r.loads(p))
			c.BusiestLoad, c.BusiestSubtask = c.RateSkew.Max, c.RateSkew.Busiest
			if loadBand(c.BusiestLoad, r.bestLoad) == 0 {
				reasons = append(reasons, fmt.Sprintf("busiest subtask %s rec/s, within 1%% of the best (%s)", fmtRate(c.BusiestLoad), fmtRate(r.bestLoad)))
			} else {
				reasons = append(reasons, fmt.Sprintf("busiest subtask %s rec/s", fmtRate(c.BusiestLoad)))
			}
		}
	}
	for _, m := range []AlignmentMode{Balanced, EvenlySpread} {
		if Align(m, r.alignN, r.maxP, r.current, p, r.scalerUp).Parallelism == p {
			c.FixedPointOf = append(c.FixedPointOf, m)
		}
	}
	switch len(c.FixedPointOf) {
	case 2:
		reasons = append(reasons, "kept by BALANCED and EVENLY_SPREAD")
	case 1:
		reasons = append(reasons, "kept by "+string(c.FixedPointOf[0]))
	}
	c.Reason = strings.Join(reasons, ", ")
	return c
}

// fmtRate prints a records/s figure compactly.
func fmtRate(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 1:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
