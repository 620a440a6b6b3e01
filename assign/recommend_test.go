package assign

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// TestAlignWorkedExamples are worked examples of the operator's
// ParallelismAligner.firstAlignedInRegion on main (M >= N, upper limit 200),
// both modes: the first q in target..min(N, M, upper) (capped at current for
// a scale-down) with N % q == 0, or for BALANCED also N/q < N/target. Rows
// with N = 100 run once as a keyed vertex (M = 100) and once as a source with
// 100 partitions (M = 128).
func TestAlignWorkedExamples(t *testing.T) {
	tests := []struct {
		name                     string
		n, maxP, current, target int
		evenly, balanced         int
	}{
		{"N=100 keyed", 0, 100, 20, 30, 50, 34},
		{"N=100 partitions", 100, 128, 20, 30, 50, 34},
		{"N=128 keyed", 0, 128, 32, 48, 64, 64},
		{"N=13 partitions", 13, 128, 4, 6, 13, 7},
		{"N=7 partitions", 7, 128, 2, 3, 7, 4},
		{"N=128 keyed scale-down", 0, 128, 64, 40, 64, 43},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, c := range []struct {
				mode AlignmentMode
				want int
			}{{EvenlySpread, tt.evenly}, {Balanced, tt.balanced}} {
				got := Align(c.mode, tt.n, tt.maxP, tt.current, tt.target, 200)
				if got.Parallelism != c.want {
					t.Errorf("Align(%s, %d, %d, %d, %d, 200) = %d (%s), want %d",
						c.mode, tt.n, tt.maxP, tt.current, tt.target, got.Parallelism, got.Note, c.want)
				}
				if got.Limited {
					t.Errorf("Align(%s, %d, %d, %d, %d, 200).Limited = true, want false", c.mode, tt.n, tt.maxP, tt.current, tt.target)
				}
			}
		})
	}
}

// TestAlignNotes checks the human notes on TestAlignWorkedExamples' rows.
func TestAlignNotes(t *testing.T) {
	tests := []struct {
		mode                            AlignmentMode
		n, maxP, current, target, upper int
		want                            string
	}{
		{EvenlySpread, 0, 128, 32, 48, 200, "divides 128 key groups"},
		{Balanced, 100, 128, 20, 30, 200, "3→2 partitions per subtask"},
		{EvenlySpread, 0, 128, 64, 40, 200, "divides 128 key groups"},
		{EvenlySpread, 35, 128, 22, 25, 30, "no aligned value in 25..30: target kept"},
		{EvenlySpread114, 35, 128, 22, 25, 30, "no aligned value in 25..30: scaling limited to 18"},
		{EvenlySpread115, 35, 128, 22, 25, 30, "no aligned value in 25..30 and 18 would invert the scale-up: blocked at current 22"},
		{Balanced, 0, 128, 100, 300, 0, "target 300 clamped to 128; divides 128 key groups"},
		{AlignmentOff, 0, 128, 10, 11, 0, "alignment off: target kept"},
		{EvenlySpread115, 7, 128, 3, 3, 0, "target equals current: no change"},
	}
	for _, tt := range tests {
		got := Align(tt.mode, tt.n, tt.maxP, tt.current, tt.target, tt.upper)
		if got.Note != tt.want {
			t.Errorf("Align(%s, %d, %d, %d, %d, %d).Note = %q, want %q", tt.mode, tt.n, tt.maxP, tt.current, tt.target, tt.upper, got.Note, tt.want)
		}
	}
}

// TestAlignLegacyExamples covers the older generations (JobVertexScaler.scale
// of operator 1.14 and 1.15). Each row says where its expectation comes from:
// derived by hand from their upward search and downward fallback (steps
// shown), or a test of the operator itself.
func TestAlignLegacyExamples(t *testing.T) {
	tests := []struct {
		name                            string
		mode                            AlignmentMode
		n, maxP, current, target, upper int
		want                            int
		limited                         bool
	}{
		// JobVertexScalerTest (operator <= 1.14): maxP 128, current 10,
		// scale factor 2.5 -> target 25. EVENLY_SPREAD: first divisor of
		// 128 in 25..128 is 32. MAXIMIZE_UTILISATION: 128/26 = 4 < 128/25 = 5.
		{"1.14 test evenly", EvenlySpread114, 0, 128, 10, 25, 0, 32, false},
		{"1.14 test maximize", MaximizeUtilisation, 0, 128, 10, 25, 0, 26, false},
		// TestAlignWorkedExamples' row N=13 under 1.14: same upward search,
		// found before any fallback: 13 (divisor) and 7 (13/7 = 1 < 13/6 = 2).
		{"1.14 N=13 evenly", EvenlySpread114, 13, 128, 4, 6, 200, 13, false},
		{"1.14 N=13 maximize", MaximizeUtilisation, 13, 128, 4, 6, 200, 7, false},
		// TestAlignWorkedExamples' scale-down row under 1.14: the upward
		// search is not capped at current, so EVENLY_SPREAD lands on 64 =
		// current (the scale-down is silently cancelled); MAXIMIZE_UTILISATION
		// finds 43 (128/43 = 2 < 128/40 = 3).
		{"1.14 N=128 scale-down evenly", EvenlySpread114, 0, 128, 64, 40, 200, 64, false},
		{"1.14 N=128 scale-down maximize", MaximizeUtilisation, 0, 128, 64, 40, 200, 43, false},
		// Hand-derived, N = 12 partitions, maxP 8, current 5, target 7: no
		// divisor in 7..8, so 1.14 falls back: q = 7: 12/7 = 1; q = 6:
		// 12/6 = 2 > 1 and 6 divides 12 -> 6, limited. (Main's
		// AlignmentModeTest.builtInModesSearchOneRegionAndDoNotRelaxBelowTarget
		// has the same case: legacy 6, built-in 7.)
		{"1.14 fallback N=12", EvenlySpread114, 12, 8, 5, 7, 0, 6, true},
		{"1.15 fallback N=12", EvenlySpread115, 12, 8, 5, 7, 0, 6, true},
		{"main N=12 keeps target", EvenlySpread, 12, 8, 5, 7, 0, 7, false},
		// FLINK-39299 inversion, hand-derived: N = 35 partitions (divisors 1,
		// 5, 7, 35), current 22, target 25, upper 30. No divisor in 25..30;
		// fallback: 35/q > 35/25 = 1 first at q = 17, 35 % 17 != 0 -> 18.
		// 1.14 scales DOWN to 18 on a scale-up; 1.15 blocks at 22 (main's
		// AlignmentModeTest.legacyModesBlockAndEmit expects 22); built-ins
		// keep 25 (builtInModesFallBackToTargetInsteadOfBlocking).
		{"1.14 inverts N=35", EvenlySpread114, 35, 128, 22, 25, 30, 18, true},
		{"1.15 blocks N=35", EvenlySpread115, 35, 128, 22, 25, 30, 22, true},
		{"1.15 maximize blocks N=35", MaximizeUtilisation115, 35, 128, 22, 25, 30, 22, true},
		{"main evenly keeps N=35", EvenlySpread, 35, 128, 22, 25, 30, 25, false},
		{"main balanced keeps N=35", Balanced, 35, 128, 22, 25, 30, 25, false},
		// Hand-derived scale-down, N = 7 partitions, current 6, target 5.
		// 1.14: search 5..7 finds 7 > current: a scale-down becomes a
		// scale-up. 1.15: region 5..6 empty of divisors; fallback: 7/q > 7/5
		// = 1 first at q = 3, 7 % 3 != 0 -> 4; 4 < 6 keeps the direction.
		// Main: 7/5 = 7/6 = 1, nothing in 5..6, target 5 kept.
		{"1.14 scale-down inverts N=7", EvenlySpread114, 7, 128, 6, 5, 0, 7, false},
		{"1.14 maximize N=7", MaximizeUtilisation, 7, 128, 6, 5, 0, 7, false},
		{"1.15 scale-down N=7", EvenlySpread115, 7, 128, 6, 5, 0, 4, true},
		{"1.15 maximize scale-down N=7", MaximizeUtilisation115, 7, 128, 6, 5, 0, 4, true},
		{"main evenly scale-down N=7", EvenlySpread, 7, 128, 6, 5, 0, 5, false},
		{"main balanced scale-down N=7", Balanced, 7, 128, 6, 5, 0, 5, false},
		// Main's AlignmentModeTest.alreadyAtThePartitionCountBlocksAScaleUp:
		// 15 partitions, running at 15, target 20: region 20..15 is empty,
		// fallback gives 15 = current, so the legacy modes block.
		{"1.15 at partition count", EvenlySpread115, 15, 180, 15, 20, 0, 15, true},
		{"1.15 maximize at partition count", MaximizeUtilisation115, 15, 180, 15, 20, 0, 15, true},
		// Main's AlignmentModeTest.balancedReducesLoadAndNeverEmits: N = 128,
		// current 16, target 24: BALANCED 26 (128/26 = 4 < 128/24 = 5),
		// EVENLY_SPREAD 32.
		{"main balanced N=128 t=24", Balanced, 0, 128, 16, 24, 0, 26, false},
		{"main evenly N=128 t=24", EvenlySpread, 0, 128, 16, 24, 0, 32, false},
		// OFF keeps the target.
		{"off", AlignmentOff, 0, 128, 16, 24, 0, 24, false},
		// Target 1 with nothing smaller: the fallback loop runs to 0 and the
		// lower limit lifts it to 1. N = 7, current 2, target 1, 1.14: 7 % 1
		// == 0, found at once.
		{"1.14 target 1", EvenlySpread114, 7, 128, 2, 1, 0, 1, false},
	}
	for _, tt := range tests {
		got := Align(tt.mode, tt.n, tt.maxP, tt.current, tt.target, tt.upper)
		if got.Parallelism != tt.want || got.Limited != tt.limited {
			t.Errorf("%s: Align(%s, %d, %d, %d, %d, %d) = %d limited %v (%s), want %d limited %v",
				tt.name, tt.mode, tt.n, tt.maxP, tt.current, tt.target, tt.upper, got.Parallelism, got.Limited, got.Note, tt.want, tt.limited)
		}
	}
}

func TestAlignInvalid(t *testing.T) {
	tests := []struct {
		mode                            AlignmentMode
		n, maxP, current, target, upper int
		want                            string
	}{
		{Balanced, 0, 0, 1, 1, 0, "invalid max parallelism 0: want 1..32768"},
		{Balanced, 0, 32769, 1, 1, 0, "invalid max parallelism 32769: want 1..32768"},
		{Balanced, 0, 128, 0, 1, 0, "invalid current parallelism 0: want at least 1"},
		{Balanced, 0, 128, 1, 0, 0, "invalid target parallelism 0: want at least 1"},
		{Balanced, -1, 128, 1, 1, 0, "invalid partition count -1: want 0 (keyed) or more"},
		{"FASTEST", 0, 128, 1, 1, 0, `unknown alignment mode "FASTEST"`},
	}
	for _, tt := range tests {
		got := Align(tt.mode, tt.n, tt.maxP, tt.current, tt.target, tt.upper)
		if got.Parallelism != 0 || got.Note != tt.want {
			t.Errorf("Align(%q, %d, %d, %d, %d, %d) = %d %q, want 0 %q", tt.mode, tt.n, tt.maxP, tt.current, tt.target, tt.upper, got.Parallelism, got.Note, tt.want)
		}
	}
}

// checkAlign states the bounds FuzzAlign relies on (see Align's doc).
func checkAlign(mode AlignmentMode, n, maxP, current, target, upper int, a Alignment) error {
	B := maxP
	if upper > 0 {
		B = min(maxP, upper)
	}
	N := n
	if N == 0 {
		N = maxP
	}
	U := min(N, B)
	t := min(max(target, 1), B)
	p := a.Parallelism
	if a.Target != t || a.N != N {
		return fmt.Errorf("target/N = %d/%d, want %d/%d", a.Target, a.N, t, N)
	}
	if p < 1 || p > max(current, B) {
		return fmt.Errorf("result %d outside [1, %d]", p, max(current, B))
	}
	if a.Divides != (N%p == 0) {
		return fmt.Errorf("Divides = %v for %d %% %d", a.Divides, N, p)
	}
	switch mode {
	case Balanced, EvenlySpread:
		if p < t || p > max(t, U) {
			return fmt.Errorf("result %d outside [%d, %d]", p, t, max(t, U))
		}
		if t <= current && p > current {
			return fmt.Errorf("scale-down result %d above current %d", p, current)
		}
		if p != t && N%p != 0 && !(mode == Balanced && N/p < N/t) {
			return fmt.Errorf("result %d is neither the target, a divisor nor load-reducing", p)
		}
		if a.Limited {
			return fmt.Errorf("built-in mode reports Limited")
		}
	case EvenlySpread115, MaximizeUtilisation115:
		if (t > current && p < current) || (t < current && p > current) {
			return fmt.Errorf("result %d inverts %d -> %d", p, current, t)
		}
	case AlignmentOff:
		if p != t {
			return fmt.Errorf("OFF returned %d, want %d", p, t)
		}
	}
	return nil
}

// TestAlignInvariants runs checkAlign over every small input.
func TestAlignInvariants(t *testing.T) {
	for _, mode := range AlignmentModes() {
		for _, maxP := range []int{1, 2, 12, 30, 128} {
			for n := 0; n <= 40; n += 1 + n/8 {
				for current := 1; current <= maxP+2; current += 1 + current/5 {
					for target := 1; target <= maxP+3; target += 1 + target/6 {
						for _, upper := range []int{0, 1, 7, 20, 200} {
							a := Align(mode, n, maxP, current, target, upper)
							if err := checkAlign(mode, n, maxP, current, target, upper, a); err != nil {
								t.Fatalf("Align(%s, %d, %d, %d, %d, %d) = %+v: %v", mode, n, maxP, current, target, upper, a, err)
							}
						}
					}
				}
			}
		}
	}
}

// FuzzAlign: Align never panics; invalid input gives 0, valid input obeys
// the bounds of checkAlign: 1 <= result <= max(current, min(maxP, upper));
// BALANCED and EVENLY_SPREAD stay within [Target, max(Target, U)] and do not
// pass current on a scale-down; the 1.15 modes never invert the direction.
func FuzzAlign(f *testing.F) {
	f.Add(0, 0, 128, 32, 48, 200)
	f.Add(1, 13, 128, 4, 6, 200)
	f.Add(4, 35, 128, 22, 25, 30)
	f.Add(6, 7, 128, 6, 5, 0)
	f.Add(2, 0, 32768, 1, 32768, 0)
	f.Add(3, 1<<20, 32768, 32768, 1, -5)
	f.Fuzz(func(t *testing.T, m, n, maxP, current, target, upper int) {
		modes := AlignmentModes()
		mode := modes[((m%len(modes))+len(modes))%len(modes)]
		// Keep the loops' length sensible: partition counts beyond
		// MaxPartitions are not planner input.
		if n > MaxPartitions {
			n %= MaxPartitions
		}
		a := Align(mode, n, maxP, current, target, upper)
		valid := maxP >= 1 && maxP <= UpperBoundMaxParallelism && current >= 1 && target >= 1 && n >= 0
		if !valid {
			if a.Parallelism != 0 || a.Note == "" {
				t.Fatalf("Align(%s, %d, %d, %d, %d, %d) = %+v, want Parallelism 0 and a note", mode, n, maxP, current, target, upper, a)
			}
			return
		}
		if err := checkAlign(mode, n, maxP, current, target, upper, a); err != nil {
			t.Fatalf("Align(%s, %d, %d, %d, %d, %d) = %+v: %v", mode, n, maxP, current, target, upper, a, err)
		}
	})
}

// recRefCandidate is what a brute-force planner computes for one p with
// FreshAssignment and KeyGroupCounts.
type recRefCandidate struct {
	p       int
	counts  []float64
	loads   []float64
	busiest float64
}

func recRefSweep(t *testing.T, topics []Topic, rates map[TopicPartition]float64, upper int) []recRefCandidate {
	t.Helper()
	var out []recRefCandidate
	for p := 1; p <= upper; p++ {
		a, err := FreshAssignment(topics, p)
		if err != nil {
			t.Fatal(err)
		}
		rc := recRefCandidate{p: p, counts: a.Counts(), loads: make([]float64, p)}
		// Sum in topic input order, partitions ascending, like Recommend.
		for _, tp := range Partitions(topics) {
			o, ok := a.OwnerOf(tp)
			if !ok {
				t.Fatalf("FreshAssignment(%v, %d) has no owner for %v", topics, p, tp)
			}
			rc.loads[o] += rates[tp]
		}
		rc.busiest = slices.Max(rc.loads)
		out = append(out, rc)
	}
	return out
}

func recRandomTopics(r *rand.Rand, maxTopics, maxParts int) []Topic {
	var topics []Topic
	for i := range 1 + r.IntN(maxTopics) {
		topics = append(topics, Topic{fmt.Sprintf("topic-%d-%x", i, r.Uint32()), 1 + r.IntN(maxParts)})
	}
	return topics
}

func recParallelisms(cs []Candidate) []int {
	ps := make([]int, len(cs))
	for i, c := range cs {
		ps[i] = c.Parallelism
	}
	return ps
}

func TestRecommendErrors(t *testing.T) {
	topics := []Topic{{"orders", 4}}
	tests := []struct {
		in   RecommendInput
		want string
	}{
		{RecommendInput{MaxParallelism: 0, Current: 1}, "max parallelism: Operator parallelism not within bounds: 0"},
		{RecommendInput{MaxParallelism: 128, Current: 0}, "current parallelism: Operator parallelism not within bounds: 0"},
		{RecommendInput{MaxParallelism: 128, Current: 200}, "current parallelism: Maximum parallelism must not be smaller than parallelism."},
		{RecommendInput{MaxParallelism: 128, Current: 2, Target: 129}, "target parallelism: Maximum parallelism must not be smaller than parallelism."},
		{RecommendInput{MaxParallelism: 128, Current: 2, UpperLimit: -1}, "upper limit -1: want 0 (default) or more"},
		{RecommendInput{MaxParallelism: 128, Current: 2, VertexMaxParallelism: -1}, "vertex max parallelism -1: want 0 (default 200) or more"},
		{RecommendInput{MaxParallelism: 128, Current: 2, Rates: map[TopicPartition]float64{{"orders", 0}: 1}}, "rates given without topics"},
		{RecommendInput{Topics: topics, MaxParallelism: 128, Current: 2, Rates: map[TopicPartition]float64{{"orders", 4}: 1}}, `rate for partition "orders-4": not a partition of the given topics`},
		{RecommendInput{Topics: topics, MaxParallelism: 128, Current: 2, Rates: map[TopicPartition]float64{{"orders", 1}: -1}}, `rate for partition "orders-1" is -1: want a finite number >= 0`},
		{RecommendInput{Topics: topics, MaxParallelism: 128, Current: 2, Rates: map[TopicPartition]float64{{"orders", 1}: math.NaN()}}, `rate for partition "orders-1" is NaN: want a finite number >= 0`},
		{RecommendInput{Topics: []Topic{{"orders", 0}}, MaxParallelism: 128, Current: 2}, `topic "orders" has 0 partitions: want 1..1048576`},
	}
	for _, tt := range tests {
		_, err := Size(SizingInput{RecommendInput: tt.in})
		if err == nil || err.Error() != tt.want {
			t.Errorf("Size(%+v) error = %v, want %q", tt.in, err, tt.want)
		}
	}
}

// benchTopics builds 20 topics totalling 10,000 partitions with skewed rates
// (a few hot partitions per topic).
func recBenchTopics() ([]Topic, map[TopicPartition]float64) {
	r := rand.New(rand.NewPCG(9, 10))
	var topics []Topic
	rates := map[TopicPartition]float64{}
	for i := range 20 {
		tp := Topic{fmt.Sprintf("events-%02d", i), 500}
		topics = append(topics, tp)
		for q := range tp.Partitions {
			v := r.ExpFloat64() * 1000
			if q%97 == 0 {
				v *= 20
			}
			rates[TopicPartition{tp.Name, int32(q)}] = v
		}
	}
	return topics, rates
}

// TestRecommendCountStats checks both ways of computing the largest partition
// count and the idle subtasks (end-point sweep and difference array) and the
// materialised counts against FreshAssignment.
func TestRecommendCountStats(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for range 400 {
		topics := recRandomTopics(r, 8, 60)
		in := RecommendInput{Topics: topics, MaxParallelism: 32768, Current: 1}
		ri, err := prepareRecommend(in)
		if err != nil {
			t.Fatal(err)
		}
		p := 1 + r.IntN(400)
		a, _ := FreshAssignment(topics, p)
		want := a.Counts()
		s := MeasureSkew(want)
		got := ri.counts(p)
		for i := range want {
			if float64(got[i]) != want[i] {
				t.Fatalf("counts(%v, %d) = %v, want %v", topics, p, got, want)
			}
		}
		for name, f := range map[string]func(int) (int, int){"events": ri.countStatsEvents, "diff": ri.countStatsDiff} {
			mx, idle := f(p)
			if mx != int(s.Max) || idle != s.Idle {
				t.Fatalf("countStats %s(%v, %d) = max %d idle %d, want %v %d", name, topics, p, mx, idle, s.Max, s.Idle)
			}
		}
		if idle := ri.idle(p); idle != s.Idle {
			t.Fatalf("idle(%v, %d) = %d, want %d", topics, p, idle, s.Idle)
		}
	}
}

// TestRecommendIdleMatchesDiff: the bitmap count of idle subtasks equals
// the difference array's for every p of random topic sets, including p far
// above the partition count and runs that wrap around subtask p-1.
func TestRecommendIdleMatchesDiff(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for iter := range 60 {
		topics := recRandomTopics(r, 1+iter%12, []int{3, 70, 300}[iter%3])
		total := len(Partitions(topics))
		upper := min(3*total+r.IntN(200), 32768)
		ri, err := prepareRecommend(RecommendInput{Topics: topics, MaxParallelism: 32768, Current: 1, UpperLimit: upper})
		if err != nil {
			t.Fatal(err)
		}
		for p := 1; p <= upper; p++ {
			_, want := ri.countStatsDiff(p)
			if got := ri.idle(p); got != want {
				t.Fatalf("idle(%v, %d) = %d, want %d (difference array)", topics, p, got, want)
			}
		}
	}
}

// TestRecommendParallelSweep: the sweep shared among goroutines gives
// exactly what one loop gives, and so does Size built on it, with and
// without a target.
func TestRecommendParallelSweep(t *testing.T) {
	saved := parallelSweepWork
	defer func() { parallelSweepWork = saved }()
	r := rand.New(rand.NewPCG(13, 14))
	for range 24 {
		topics := recRandomTopics(r, 8, 150)
		rates := map[TopicPartition]float64{}
		for _, tp := range Partitions(topics) {
			if r.IntN(6) > 0 {
				rates[tp] = r.ExpFloat64() * 1000
			}
		}
		total := len(Partitions(topics))
		upper := min(total, 32768)
		in := RecommendInput{Topics: topics, Rates: rates, MaxParallelism: 32768, Current: 1 + r.IntN(upper),
			Target: r.IntN(upper + 1), UpperLimit: upper}
		sin := SizingInput{RecommendInput: in, SourceCapacity: 1000}
		parallelSweepWork = math.Inf(1)
		want, err := Size(sin)
		if err != nil {
			t.Fatal(err)
		}
		ri, _ := prepareRecommend(in)
		seq, seqIdle := ri.sweepAll(upper)
		parallelSweepWork = 0
		got, err := Size(sin)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Size(%v topics, %d partitions) differs between the parallel and the single sweep", len(topics), total)
		}
		ri, _ = prepareRecommend(in)
		if par, parIdle := ri.sweepAll(upper); !slices.Equal(par, seq) || !slices.Equal(parIdle, seqIdle) {
			t.Fatalf("sweepAll(%d) parallel = %v, %v, want %v, %v", upper, par, parIdle, seq, seqIdle)
		}
		for p := 1; p <= upper; p += 1 + p/8 {
			if b := maxLoad(ri.loads(p)); b != seq[p] {
				t.Fatalf("sweepAll(%d)[%d] = %v, want maxLoad(loads) %v", upper, p, seq[p], b)
			}
		}
	}
}
