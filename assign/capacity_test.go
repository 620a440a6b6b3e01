package assign

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/skewscope/skewscope/internal/format"
)

func TestEstimateCapacity(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []SubtaskReading
		want float64
		kind string
		used int
	}{
		// 60/0.5 = 120, 30/0.25 = 120, 90/0.75 = 120.
		{"alike", []SubtaskReading{{60, 0.5}, {30, 0.25}, {90, 0.75}}, 120, "observed", 3},
		// The median of 100, 120, 200 is 120; one slow-metric subtask does not decide.
		{"median", []SubtaskReading{{50, 0.5}, {60, 0.5}, {100, 0.5}}, 120, "observed", 3},
		// Even count: the mean of the middle two.
		{"even", []SubtaskReading{{50, 0.5}, {60, 0.5}, {70, 0.5}, {100, 0.5}}, 130, "observed", 4},
		// Saturated counts with its rate; nearly idle and unknown are skipped.
		{"guards", []SubtaskReading{{120, 1}, {1, 0.01}, {-1, 0.5}, {40, math.NaN()}, {0, 0.3}}, 120, "observed", 1},
		{"none", []SubtaskReading{{0, 0}, {-1, -1}}, 0, "unknown", 0},
	} {
		got := EstimateCapacity(tc.in)
		if math.Abs(got.PerSubtask-tc.want) > 1e-9 || got.Kind != tc.kind || got.Used != tc.used || got.Used+got.Skipped != len(tc.in) {
			t.Errorf("%s: EstimateCapacity = %+v, want %v (%s) from %d", tc.name, got, tc.want, tc.kind, tc.used)
		}
	}
}

func TestSpreadKeyGroupLoad(t *testing.T) {
	// maxP 10 over 3 subtasks: ranges 0–3, 4–6, 7–9.
	got, err := SpreadKeyGroupLoad(10, []float64{40, 30, 3})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{10, 10, 10, 10, 10, 10, 10, 1, 1, 1}
	if !slices.Equal(got, want) {
		t.Errorf("SpreadKeyGroupLoad(10, [40 30 3]) = %v, want %v", got, want)
	}
	if _, err := SpreadKeyGroupLoad(10, []float64{1, math.NaN()}); err == nil || !strings.Contains(err.Error(), "keyed subtask 1") {
		t.Errorf("SpreadKeyGroupLoad with NaN: err %v, want one naming subtask 1", err)
	}
}

func roles(sz Sizing, p int) []string {
	for _, c := range sz.Candidates {
		if c.Parallelism == p {
			return c.Roles
		}
	}
	return nil
}

// TestSizeUniformKeyed: 128 key groups at 1 record/s each, a keyed subtask
// processes 16 records/s, target 50 %: at most 8 records/s, so 8 key groups,
// per subtask: p = 16, which is also what the autoscaler computes for an
// even spread (128 / (0.5 · 16)).
func TestSizeUniformKeyed(t *testing.T) {
	kg := make([]float64, 128)
	for i := range kg {
		kg[i] = 1
	}
	sz, err := Size(SizingInput{RecommendInput: RecommendInput{MaxParallelism: 128, Current: 4}, KeyedCapacity: 16, KeyGroupLoad: kg, Utilization: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if sz.Basis != "capacity" || sz.Recommended != 16 {
		t.Fatalf("Size(uniform keyed) = basis %s, recommended %d, want capacity, 16", sz.Basis, sz.Recommended)
	}
	// The autoscaler, from the same figures (4 subtasks at 32 records/s,
	// each busy 32/16: saturated at 100 %, so TPR = 64 and the target
	// capacity 128 / 0.5 = 256), computes the same parallelism once its
	// reserve for a restart (restart.time 5 min of records over catch-up.
	// duration 30 min: 18 with it) is left out, as Size leaves it.
	opts := DefaultAutoscalerOptions()
	opts.TargetUtilization = 0.5
	opts.RestartTime = 0
	ar, err := ScaleTargetParallelism(AutoscalerInput{Current: 4, MaxParallelism: 128, InputRate: 128,
		TrueProcessingRate: TrueProcessingRate(64, AggregateBusyTime(BusyTimeMax, []float64{1000, 1000, 1000, 1000})), Options: opts})
	if err != nil || ar.Computed != sz.Recommended {
		t.Errorf("autoscaler for the uniform keyed load computes %d (%v), Size recommends %d: they must agree on an even spread", ar.Computed, err, sz.Recommended)
	}
	c := sz.Candidates[0]
	if c.Parallelism != 16 || c.Roles[0] != RoleRecommended || c.KeyedUtilization != 0.5 || !c.Meets {
		t.Errorf("Size(uniform keyed)[0] = %+v, want p 16 recommended at 50%%", c)
	}
	if !slices.Contains(roles(sz, 4), RoleCurrent) {
		t.Errorf("Size(uniform keyed) lists %v, want the current p = 4 too", sz.Candidates)
	}
	for _, c := range sz.Candidates {
		if c.Parallelism == 4 && (c.Meets || !strings.Contains(c.Verdict, "cannot carry the load")) {
			t.Errorf("Size(uniform keyed)[p=4] = %+v, want it marked as unable to carry 200%%", c)
		}
	}
}

// TestSizeHotPartition: one topic of 12 partitions, partition 0 at 100
// records/s and the others at 10; a subtask processes 150 records/s and the
// target is 70 % (105). Partition 0 shares a subtask with partitions p, 2p,
// ... so the busiest reads 100 + 10·(⌈12/p⌉ − 1): only p = 12 isolates it
// (p = 11 still pairs it with partition 11, 110 records/s).
func TestSizeHotPartition(t *testing.T) {
	topics := []Topic{{"clicks", 12}}
	rates := map[TopicPartition]float64{{"clicks", 0}: 100}
	for q := int32(1); q < 12; q++ {
		rates[TopicPartition{"clicks", q}] = 10
	}
	sz, err := Size(SizingInput{RecommendInput: RecommendInput{Topics: topics, Rates: rates, MaxParallelism: 128, Current: 4, Target: 6}, SourceCapacity: 150})
	if err != nil {
		t.Fatal(err)
	}
	if sz.Recommended != 12 {
		t.Fatalf("Size(hot partition).Recommended = %d, want 12; candidates %+v", sz.Recommended, sz.Candidates)
	}
	c := sz.Candidates[0]
	if c.SourceBusiest != 100 || math.Abs(c.SourceUtilization-100.0/150) > 1e-12 {
		t.Errorf("Size(hot partition)[p=12] busiest %v (%v), want 100 (0.667)", c.SourceBusiest, c.SourceUtilization)
	}
	// The target p = 6 is listed, judged and over the target: 110/150.
	found := false
	for _, c := range sz.Candidates {
		if c.Parallelism == 6 {
			found = true
			if c.Meets || c.SourceBusiest != 110 || !strings.Contains(c.Verdict, "over the 70% target") {
				t.Errorf("Size(hot partition)[p=6] = %+v, want 110 records/s, over the target", c)
			}
		}
	}
	if !found {
		t.Errorf("Size(hot partition) omits the target 6: %+v", sz.Candidates)
	}
	// At a capacity of 120 partition 0 alone needs 83 %: no p helps.
	sz, err = Size(SizingInput{RecommendInput: RecommendInput{Topics: topics, Rates: rates, MaxParallelism: 128, Current: 4}, SourceCapacity: 120})
	if err != nil {
		t.Fatal(err)
	}
	if sz.Recommended != 0 || !strings.Contains(sz.Need, `partition "clicks-0" alone needs 83%`) {
		t.Errorf("Size(hot partition, capacity 120) = recommended %d, need %q, want none and the hot partition named", sz.Recommended, sz.Need)
	}
	if sz.Candidates[0].Roles[0] != RoleBest || sz.Candidates[0].Parallelism != 12 {
		t.Errorf("Size(hot partition, capacity 120)[0] = %+v, want the best reachable (p 12) first", sz.Candidates[0])
	}
}

// TestSizeHotKeyGroup: 128 key groups at 1 record/s, key group 5 at 50; a
// keyed subtask processes 100 records/s and the target is 70 %. The subtask
// holding key group 5 carries 49 + its range's size, so the range must hold
// at most 21 key groups: at p = 6 the first range is 0–21 (22, 71 records/s),
// at p = 7 it is 0–18 (19, 68).
func TestSizeHotKeyGroup(t *testing.T) {
	kg := make([]float64, 128)
	for i := range kg {
		kg[i] = 1
	}
	kg[5] = 50
	sz, err := Size(SizingInput{RecommendInput: RecommendInput{MaxParallelism: 128, Current: 2}, KeyedCapacity: 100, KeyGroupLoad: kg})
	if err != nil {
		t.Fatal(err)
	}
	if sz.Recommended != 7 {
		t.Fatalf("Size(hot key group).Recommended = %d, want 7", sz.Recommended)
	}
	if c := sz.Candidates[0]; c.KeyedBusiest != 68 || c.KeyedBusiestSubtask != 0 {
		t.Errorf("Size(hot key group)[p=7] = busiest %v on %d, want 68 on subtask 0", c.KeyedBusiest, c.KeyedBusiestSubtask)
	}
}

// TestSizeMatchesBruteForce compares Size's recommendation with a search
// over FreshAssignment's layouts, p by p.
func TestSizeMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for iter := range 100 {
		topics := recRandomTopics(r, 4, 24)
		rates := map[TopicPartition]float64{}
		for _, tp := range Partitions(topics) {
			rates[tp] = math.Round(r.ExpFloat64() * 50)
		}
		total := 0
		for _, tp := range topics {
			total += tp.Partitions
		}
		capacity := 20 + r.Float64()*200
		in := SizingInput{RecommendInput: RecommendInput{Topics: topics, Rates: rates, MaxParallelism: 128, Current: 1 + r.IntN(min(total, 128))}, SourceCapacity: capacity}
		if iter%3 == 0 {
			in.Assign = NaiveModuloAssignment
		}
		got, err := Size(in)
		if err != nil {
			t.Fatal(err)
		}
		want := 0
		for p := 1; p <= min(total, 128); p++ {
			assign := FreshAssignment
			if in.Assign != nil {
				assign = in.Assign
			}
			a, _ := assign(topics, p)
			if slices.Max(assignmentLoads(a, rates))/capacity <= DefaultTargetUtilization+1e-12 {
				want = p
				break
			}
		}
		if got.Recommended != want {
			t.Fatalf("iter %d: Size(%v, capacity %.1f, comparison %v).Recommended = %d, want %d", iter, topics, capacity, in.Assign != nil, got.Recommended, want)
		}
		if want > 0 {
			a, _ := FreshAssignment(topics, want)
			if in.Assign != nil {
				a, _ = in.Assign(topics, want)
			}
			if c := got.Candidates[0]; c.SourceBusiest != slices.Max(assignmentLoads(a, rates)) || c.PartitionsMax != int(slices.Max(a.Counts())) {
				t.Fatalf("iter %d: Size(...)[p=%d] = busiest %v, %d partitions max; the layout says %v, %v", iter, want, c.SourceBusiest, c.PartitionsMax, slices.Max(assignmentLoads(a, rates)), slices.Max(a.Counts()))
			}
		}
	}
}

// TestSizeRestoreLayout: candidates judged under the restore model from a
// savepoint at the current parallelism, compared with Restore itself.
func TestSizeRestoreLayout(t *testing.T) {
	topics := []Topic{{"orders", 12}, {"inventory.events", 3}}
	rates := map[TopicPartition]float64{}
	for _, tp := range Partitions(topics) {
		rates[tp] = float64(10 + 7*tp.Partition)
	}
	in := SizingInput{RecommendInput: RecommendInput{Topics: topics, Rates: rates, MaxParallelism: 128, Current: 4}, SourceCapacity: 200, History: []int{4}, Restore: true}
	sz, err := Size(in)
	if err != nil {
		t.Fatal(err)
	}
	if sz.Layout != "restore" || sz.Swept != 15 {
		t.Fatalf("Size(restore) = layout %s, swept %d, want restore over 1..15", sz.Layout, sz.Swept)
	}
	want := 0
	for p := 1; p <= 15; p++ {
		rr, _ := Restore(RestoreInput{Topics: topics, History: []int{4, p}})
		if slices.Max(assignmentLoads(rr.Assignment, rates)) <= 140 {
			want = p
			break
		}
	}
	if sz.Recommended != want || want == 0 {
		t.Errorf("Size(restore).Recommended = %d, want %d (from Restore)", sz.Recommended, want)
	}
}

// TestSizeTargetBasis: without a capacity, candidates are judged against the
// target's busiest subtask; 10,000 partitions at 1024 → 1280 no longer rank
// the divisors of 500 first.
func TestSizeTargetBasis(t *testing.T) {
	var topics []Topic
	for i := range 20 {
		topics = append(topics, Topic{Name: "events-" + string(rune('a'+i)), Partitions: 500})
	}
	sz, err := Size(SizingInput{RecommendInput: RecommendInput{Topics: topics, MaxParallelism: 32768, Current: 1024, Target: 1280, UpperLimit: 2560}})
	if err != nil {
		t.Fatal(err)
	}
	if sz.Basis != "target" || sz.Recommended == 0 {
		t.Fatalf("Size(10k, no rates) = %+v", sz)
	}
	ref := 0.0
	for _, c := range sz.Candidates {
		if c.Parallelism == 1280 {
			ref = c.SourceBusiest
		}
	}
	for i, c := range sz.Candidates {
		if i == 0 && (c.SourceBusiest > ref || c.Parallelism < 500) {
			t.Errorf("Size(10k, no rates)[0] = p %d with %v partitions on the busiest, want no more than the target's %v", c.Parallelism, c.SourceBusiest, ref)
		}
		if c.Parallelism <= 500 && c.Meets {
			t.Errorf("Size(10k, no rates)[p=%d] meets the target's load; it has %v partitions on the busiest, the target %v", c.Parallelism, c.SourceBusiest, ref)
		}
	}
}

// TestCandidateFiguresMatchBruteForce: every p's candidate figures (partition,
// rate and key-group skew, the busiest subtask, alignment fixed points) equal
// what FreshAssignment, KeyGroupCounts and Align give directly.
func TestCandidateFiguresMatchBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for iter := range 150 {
		topics := recRandomTopics(r, 6, 30)
		total := len(Partitions(topics))
		var rates map[TopicPartition]float64
		if iter%2 == 1 {
			rates = map[TopicPartition]float64{}
			for _, tp := range Partitions(topics) {
				if r.IntN(5) > 0 {
					rates[tp] = math.Round(r.ExpFloat64()*1000) / 8
				}
			}
		}
		maxP := []int{128, 256, 32768}[r.IntN(3)]
		upper := min(maxP, total+r.IntN(20))
		current := 1 + r.IntN(min(upper, maxP))
		ri, err := prepareRecommend(RecommendInput{Topics: topics, Rates: rates, MaxParallelism: maxP, Current: current, UpperLimit: upper})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range recRefSweep(t, topics, rates, upper) {
			g := ri.candidate(w.p, 1)
			if ws := MeasureSkew(w.counts); g.PartitionSkew != ws || g.PartitionsMax != int(ws.Max) || g.Idle != ws.Idle {
				t.Fatalf("candidate(%v, p=%d).PartitionSkew = %+v, want %+v", topics, w.p, g.PartitionSkew, ws)
			}
			if len(rates) > 0 {
				if ws := MeasureSkew(w.loads); g.RateSkew != ws || g.BusiestLoad != w.busiest {
					t.Fatalf("candidate(%v, p=%d).RateSkew = %+v, want %+v", topics, w.p, g.RateSkew, ws)
				}
			}
			kg, _ := KeyGroupCounts(maxP, w.p)
			if ks := MeasureSkew(kg); g.KeyGroupSkew != ks {
				t.Fatalf("candidate(p=%d).KeyGroupSkew = %+v, want %+v", w.p, g.KeyGroupSkew, ks)
			}
			var fixed []AlignmentMode
			for _, m := range []AlignmentMode{Balanced, EvenlySpread} {
				if Align(m, total, maxP, current, w.p, min(maxP, max(current, DefaultVertexMaxParallelism))).Parallelism == w.p {
					fixed = append(fixed, m)
				}
			}
			if !slices.Equal(g.FixedPointOf, fixed) {
				t.Fatalf("candidate(p=%d).FixedPointOf = %v, want %v", w.p, g.FixedPointOf, fixed)
			}
		}
	}
}

// TestSizeKeyedMaxParallelism128: a keyed vertex with M = 128 at current
// 32 and target 48. Every autoscaler mode aligns 48 to 64
// (TestAlignWorkedExamples' row N = 128); 64 is listed as the autoscaler's
// choice with 2 key groups per subtask, dividing 128.
func TestSizeKeyedMaxParallelism128(t *testing.T) {
	sz, err := Size(SizingInput{RecommendInput: RecommendInput{MaxParallelism: 128, Current: 32, Target: 48}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sz.Autoscaler) != len(AlignmentModes())-1 || sz.AutoscalerChoice != 64 {
		t.Fatalf("Size(M=128, 32 → 48).Autoscaler = %v, choice %d; want every mode but OFF, 64", sz.Autoscaler, sz.AutoscalerChoice)
	}
	for _, a := range sz.Autoscaler {
		if a.Parallelism != 64 {
			t.Errorf("Size(M=128, 32 → 48): %s aligns to %d, want 64", a.Mode, a.Parallelism)
		}
	}
	var c64 *Candidate
	for i := range sz.Candidates {
		if sz.Candidates[i].Parallelism == 64 {
			c64 = &sz.Candidates[i]
		}
	}
	if c64 == nil || !slices.Contains(c64.Roles, RoleAutoscaler) || !c64.DividesMaxParallelism || c64.KeyGroupsMin != 2 || c64.KeyGroupsMax != 2 || len(c64.AutoscalerPicks) != len(AlignmentModes())-1 {
		t.Errorf("Size(M=128, 32 → 48)[p=64] = %+v, want the autoscaler's choice, 2 key groups each", c64)
	}
	// 43 is not a divisor: 3 key groups on 42 subtasks, 2 on one; from 32 a
	// target of 43 is a scale-up and 64 lies in 43..128, so neither main
	// mode keeps 43.
	ri, _ := prepareRecommend(RecommendInput{MaxParallelism: 128, Current: 32})
	if c43 := ri.candidate(43, 0); c43.KeyGroupsMin != 2 || c43.KeyGroupsMax != 3 || c43.DividesMaxParallelism || len(c43.FixedPointOf) != 0 {
		t.Errorf("candidate(M=128, p=43) = %+v, want 2..3 key groups, kept by no mode", c43)
	}
}

// TestSizeMultiTopicExample: orders and payments with 4 partitions each
// (the FLIP-537 case). At p = 8 the total (8) is divisible, yet four
// subtasks idle: the target candidate carries Flink skew 100, 0..2
// partitions per subtask and 4 idle.
func TestSizeMultiTopicExample(t *testing.T) {
	topics := []Topic{{"orders", 4}, {"payments", 4}}
	sz, err := Size(SizingInput{RecommendInput: RecommendInput{Topics: topics, MaxParallelism: 128, Current: 4, Target: 8}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sz.Candidates {
		if c.Parallelism != 8 {
			continue
		}
		if c.PartitionSkew.FlinkPercent != 100 || c.Idle != 4 || c.PartitionsMax != 2 || c.PartitionsMin != 0 || !c.DividesPartitions ||
			!strings.Contains(c.Reason, "divides 8 partitions") || !strings.Contains(c.Reason, "4 idle") {
			t.Errorf("Size(orders+payments)[p=8] = %+v, want skew 100, 4 idle, 0..2 partitions, dividing 8", c)
		}
		return
	}
	t.Fatalf("Size(orders+payments, target 8) does not list 8: %v", recParallelisms(sz.Candidates))
}

// TestSizeAutoscalerOutsideSweep: TestAlignWorkedExamples' row N = 13
// (current 4, target 6) with the sweep capped at 5. BALANCED aligns to 7,
// EVENLY_SPREAD to 13; the autoscaler's choice (BALANCED, 7) is listed and
// judged although it lies outside the sweep.
func TestSizeAutoscalerOutsideSweep(t *testing.T) {
	sz, err := Size(SizingInput{RecommendInput: RecommendInput{Topics: []Topic{{"t", 13}}, MaxParallelism: 128, Current: 4, Target: 6, UpperLimit: 5}})
	if err != nil {
		t.Fatal(err)
	}
	by := map[AlignmentMode]int{}
	for _, a := range sz.Autoscaler {
		by[a.Mode] = a.Parallelism
	}
	if by[Balanced] != 7 || by[MaximizeUtilisation] != 7 || by[EvenlySpread] != 13 || by[EvenlySpread114] != 13 {
		t.Errorf("Size(N=13, 4 → 6).Autoscaler = %v, want BALANCED and MAXIMIZE_UTILISATION 7, EVENLY_SPREAD 13", by)
	}
	for _, c := range sz.Candidates {
		if c.Parallelism == 7 {
			if !slices.Contains(c.Roles, RoleAutoscaler) || c.PartitionsMax != 2 {
				t.Errorf("Size(N=13)[p=7] = %+v, want the autoscaler's choice with 1–2 partitions per subtask", c)
			}
			return
		}
	}
	t.Errorf("Size(N=13, upper 5) does not list the autoscaler's 7: %v", recParallelisms(sz.Candidates))
}

// BenchmarkSweep10kRates sweeps p in 1..10000 for a source reading 20
// topics with 10,000 partitions in all (M = 32768), with a rate and a
// capacity: the candidate sweep of the planner at its scale (every p up to
// freshSweepFull, the stated subset beyond).
func BenchmarkSweep10kRates(b *testing.B) {
	topics, rates := recBenchTopics()
	in := SizingInput{RecommendInput: RecommendInput{Topics: topics, Rates: rates, MaxParallelism: 32768, Current: 100, Target: 150, UpperLimit: 10000}, SourceCapacity: 5000}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Size(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/sweep")
}

// BenchmarkSweep10kNoRates is the same sweep on partition counts only.
func BenchmarkSweep10kNoRates(b *testing.B) {
	topics, _ := recBenchTopics()
	in := SizingInput{RecommendInput: RecommendInput{Topics: topics, MaxParallelism: 32768, Current: 100, Target: 150, UpperLimit: 10000}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Size(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/sweep")
}

// BenchmarkSweepKeyed32768 judges every p in 1..32768 for a keyed vertex
// with M = 32768 and a load per key group.
func BenchmarkSweepKeyed32768(b *testing.B) {
	kg := make([]float64, 32768)
	for i := range kg {
		kg[i] = float64(1 + i%7)
	}
	in := SizingInput{RecommendInput: RecommendInput{MaxParallelism: 32768, Current: 100, Target: 150}, KeyedCapacity: 500, KeyGroupLoad: kg}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Size(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/sweep")
}

// TestSizeKeyedSparseSweep: a keyed load over 32,768 key groups swept to
// 32,768 judges a subset of p (the note says which) that still holds the
// smallest p meeting the target when it is a divisor: 1 record/s per key
// group, 16 per subtask at 100 %, target 50 %: 8 key groups per subtask,
// p = 4096.
func TestSizeKeyedSparseSweep(t *testing.T) {
	kg := make([]float64, 32768)
	for i := range kg {
		kg[i] = 1
	}
	sz, err := Size(SizingInput{RecommendInput: RecommendInput{MaxParallelism: 32768, Current: 100}, KeyedCapacity: 16, KeyGroupLoad: kg, Utilization: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if sz.Recommended != 4096 || sz.Swept >= 32768 || !strings.Contains(sz.SweptNote, "values of 1..32768 are judged") {
		t.Errorf("Size(keyed, M=32768) = recommended %d, swept %d, note %q; want 4096 from a subset, said so", sz.Recommended, sz.Swept, sz.SweptNote)
	}
}

// A candidate's verdict writes its utilisation as the planner's table does
// (format.Percent, half away from zero): 114.5 % is "115%" in both, never
// "115%" in the table and "needs 114%" in the sentence.
func TestVerdictPercentReadsAsTheTable(t *testing.T) {
	sz := Sizing{Basis: "capacity"}
	for _, tc := range []struct {
		util float64
		want string
	}{
		{1.145, "cannot carry the load: source subtask 3 needs 115% of its capacity"},
		{0.725, "over the 70% target: source subtask 3 at 73%"},
		{0.585, "busiest: source subtask 3 at 59%, 12 points headroom to the target"},
	} {
		c := Candidate{Utilization: tc.util, SourceUtilization: tc.util, SourceBusiestSubtask: 3, KeyedUtilization: -1}
		if got := verdict(c, sz, 0.7, 0, 0); got != tc.want {
			t.Errorf("verdict at %v = %q, want %q", tc.util, got, tc.want)
		}
		if table := format.Percent(100 * tc.util); !strings.Contains(verdict(c, sz, 0.7, 0, 0), table) {
			t.Errorf("the table reads %s for %v; the verdict does not", table, tc.util)
		}
	}
}

// TestSizeFreshSparseSweep: a fresh start with rates over 10,000
// partitions swept to 10,000 judges every p up to freshSweepFull and a
// stated subset beyond (the note says which), each judged p's busiest load
// equal to the per-partition sums; the subset holds the current and target
// parallelism and the divisors of the partition count; a smaller source is
// still swept whole.
func TestSizeFreshSparseSweep(t *testing.T) {
	topics, rates := recBenchTopics()
	in := RecommendInput{Topics: topics, Rates: rates, MaxParallelism: 32768, Current: 3000, Target: 6000, UpperLimit: 10000}
	sz, err := Size(SizingInput{RecommendInput: in, SourceCapacity: 5000})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := prepareRecommend(in)
	ps := sparseSweep(r, in.Target)
	at, _ := slices.BinarySearch(ps, freshSweepFull+1)
	beyond := ps[at:]
	if sz.Swept != freshSweepFull+len(beyond) || !strings.Contains(sz.SweptNote, fmt.Sprintf("every value of 1..%d and %d of %d..10000 are judged", freshSweepFull, len(beyond), freshSweepFull+1)) {
		t.Errorf("Size(10,000 partitions, rates) swept %d, note %q; want 1..%d and %d more, said so", sz.Swept, sz.SweptNote, freshSweepFull, len(beyond))
	}
	for _, p := range []int{3000, 6000, 5000, 10000, 8192} {
		if !slices.Contains(beyond, p) {
			t.Errorf("the sparse sweep beyond %d lacks %d", freshSweepFull, p)
		}
	}
	var swept []int
	for p := 1; p <= freshSweepFull; p++ {
		swept = append(swept, p)
	}
	busiest, idle := r.sweepList(append(swept, beyond...))
	for _, p := range append([]int{1, 17, 640, freshSweepFull}, beyond...) {
		if want := maxLoad(r.loads(p)); busiest[p] != want || idle[p] != r.idle(p) {
			t.Fatalf("sweepList[%d] = %v, %d idle; want %v, %d", p, busiest[p], idle[p], want, r.idle(p))
		}
	}
	few := map[TopicPartition]float64{}
	for tp, v := range rates {
		if tp.Topic == topics[0].Name || tp.Topic == topics[1].Name {
			few[tp] = v
		}
	}
	small := RecommendInput{Topics: topics[:2], Rates: few, MaxParallelism: 32768, Current: 100, UpperLimit: 1000}
	if sz, err := Size(SizingInput{RecommendInput: small, SourceCapacity: 5000}); err != nil || sz.Swept != 1000 || sz.SweptNote != "" {
		t.Errorf("Size(1,000 partitions) swept %d (%q), %v; want all 1000", sz.Swept, sz.SweptNote, err)
	}
}
