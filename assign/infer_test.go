package assign

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// inferRandomHistory draws 1 or 2 earlier parallelisms in 1..maxP then the
// current one, consecutive entries different.
func inferRandomHistory(r *rand.Rand, maxP int) []int {
	h := []int{1 + r.IntN(maxP)}
	for range 1 + r.IntN(2) {
		p := 1 + r.IntN(maxP)
		for p == h[len(h)-1] {
			p = 1 + r.IntN(maxP)
		}
		h = append(h, p)
	}
	return h
}

// inferLayout returns the observed owners of a Restore result, all of them
// or a random part.
func inferLayout(r *rand.Rand, a Assignment, part bool) map[TopicPartition]int {
	obs := map[TopicPartition]int{}
	for tp, o := range a.All() {
		if !part || r.IntN(3) > 0 {
			obs[tp] = o
		}
	}
	if len(obs) == 0 {
		for tp, o := range a.All() {
			obs[tp] = o
			break
		}
	}
	return obs
}

// inferSearch runs the search with a cap of max fits.
func inferSearch(t *testing.T, in InferInput, max int) InferResult {
	t.Helper()
	s, err := newHistorySearch(in)
	if err != nil {
		t.Fatalf("InferHistory(%s) error %v", inferDescribe(in), err)
	}
	return s.run(max)
}

func inferDescribe(in InferInput) string {
	return fmt.Sprintf("topics %v, P %d, %d observed, line %q, offsets %q, steps %d, maxP %d",
		in.Topics, in.Parallelism, len(in.Observed), in.ConnectorLine, in.StartingOffsets, in.MaxSteps, in.MaxParallelism)
}

func inferHistories(fits []HistoryFit) [][]int {
	var hs [][]int
	for _, f := range fits {
		hs = append(hs, f.History)
	}
	return hs
}

// inferCheckResult checks what holds for every result: fits ordered,
// consecutive entries different, within the bound, and each one a fit when
// checked with Restore directly.
func inferCheckResult(t *testing.T, in InferInput, res InferResult) {
	t.Helper()
	if len(res.Fits) > MaxInferFits {
		t.Fatalf("InferHistory(%s): %d fits, want at most %d", inferDescribe(in), len(res.Fits), MaxInferFits)
	}
	for i, f := range res.Fits {
		h := f.History
		if h[len(h)-1] != in.Parallelism || len(h) > res.Steps+1 {
			t.Fatalf("InferHistory(%s).Fits[%d] = %v: want at most %d restores ending at %d", inferDescribe(in), i, h, res.Steps, in.Parallelism)
		}
		for k := range h {
			if h[k] < 1 || h[k] > res.Bound && k < len(h)-1 || k > 0 && h[k] == h[k-1] {
				t.Fatalf("InferHistory(%s).Fits[%d] = %v: entries must be in 1..%d and differ from the previous one", inferDescribe(in), i, h, res.Bound)
			}
		}
		if i > 0 && inferCompareHistories(res.Fits[i-1].History, h) >= 0 {
			t.Fatalf("InferHistory(%s): fits %v not in order", inferDescribe(in), inferHistories(res.Fits))
		}
		if f.Matched+f.Uncertain != res.Observed {
			t.Fatalf("InferHistory(%s).Fits[%d]: %d matched + %d uncertain, want %d observed", inferDescribe(in), i, f.Matched, f.Uncertain, res.Observed)
		}
		want, ok := inferOracleFit(in, h)
		if !ok || !slices.Equal(want.History, f.History) || want.Exact != f.Exact || want.Matched != f.Matched || want.Uncertain != f.Uncertain {
			t.Fatalf("InferHistory(%s).Fits[%d] = %+v, want oracle %+v (fits %v)", inferDescribe(in), i, f, want, ok)
		}
	}
	if res.Observed != len(in.Observed) || res.Modelled > res.Tried {
		t.Fatalf("InferHistory(%s): Observed %d, Modelled %d, Tried %d", inferDescribe(in), res.Observed, res.Modelled, res.Tried)
	}
}

func inferCompareHistories(a, b []int) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return slices.Compare(a, b)
}

func TestInferHistoryFindsTrueHistory(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	found, shorter := 0, 0
	for trial := range 300 {
		base := restoreRandomInput(r, 5, 90, 16, 1)
		maxP := 20
		h := inferRandomHistory(r, maxP)
		in := RestoreInput{Topics: base.Topics, History: h, StartingOffsets: base.StartingOffsets, ConnectorLine: base.ConnectorLine}
		cfg, err := in.normalize()
		if err != nil {
			t.Fatal(err)
		}
		// The best guess, or another order Flink could produce.
		var rng *rand.Rand
		if trial%2 == 1 {
			rng = rand.New(rand.NewPCG(uint64(trial), 7))
		}
		lay, _ := runRestore(cfg, rng, false)
		ii := InferInput{
			Topics: in.Topics, Parallelism: h[len(h)-1], Observed: inferLayout(r, lay.Assignment, trial%3 == 0),
			ConnectorLine: in.ConnectorLine, StartingOffsets: in.StartingOffsets, MaxParallelism: maxP,
		}
		res := inferSearch(t, ii, 1<<30)
		inferCheckResult(t, ii, InferResult{Fits: res.Fits[:min(len(res.Fits), MaxInferFits)], Steps: res.Steps, Bound: res.Bound, Observed: res.Observed, Tried: res.Tried, Modelled: res.Modelled})
		if slices.ContainsFunc(res.Fits, func(f HistoryFit) bool { return slices.Equal(f.History, h) }) {
			found++
			continue
		}
		// Two steps are searched only when nothing shorter fits.
		if len(h) == 3 && res.Steps == 1 && len(res.Fits) > 0 {
			shorter++
			continue
		}
		t.Fatalf("InferHistory(%s) (layout of %v, other order %v) fits %v: the true history is missing", inferDescribe(ii), h, rng != nil, inferHistories(res.Fits))
	}
	t.Logf("true history among the fits: %d; a shorter history fit instead: %d", found, shorter)
}

// inferOracleFit decides whether history h fits in.Observed the slow way:
// Restore, then the deal conditions computed naively per partition.
func inferOracleFit(in InferInput, h []int) (HistoryFit, bool) {
	res, err := Restore(RestoreInput{Topics: in.Topics, History: h, StartingOffsets: in.StartingOffsets, ConnectorLine: in.ConnectorLine})
	if err != nil {
		return HistoryFit{}, false
	}
	unc := map[TopicPartition]bool{}
	for _, tp := range res.Uncertain {
		unc[tp] = true
	}
	fit := HistoryFit{History: h, Exact: res.Exact}
	for tp, o := range in.Observed {
		if unc[tp] {
			fit.Uncertain++
			continue
		}
		if got, _ := res.Assignment.OwnerOf(tp); got != o {
			return HistoryFit{}, false
		}
		fit.Matched++
	}
	if len(h) > 1 && !inferOracleDeal(in, h) {
		return HistoryFit{}, false
	}
	return fit, true
}

// inferOracleDeal is the deal condition of InferHistory written out
// partition by partition: positions in the saved lists are known up to the
// bin of the reader's HashMap (when its capacity is certain), a middle list
// surely holds the splits whose positions lie inside its chunk, each
// observed partition must be on a subtask it can reach, and no subtask may
// hold more observed partitions surely from one list than it takes from it.
func inferOracleDeal(in InferInput, h []int) bool {
	tps := Partitions(in.Topics)
	n := len(tps)
	spread := func(tp TopicPartition) uint32 {
		return uint32(javaSpread(splitIDHashCode(StringHashCode(tp.Topic), tp.Partition)))
	}
	chunkStart := func(q, j int) int { return j*(n/q) + min(j, n%q) }
	chunkOf := func(q, pos int) int {
		for j := range q {
			if pos < chunkStart(q, j+1) {
				return j
			}
		}
		return -1
	}
	// binRange gives the position range of member x of a list with
	// members cand (sure ones first judged by sure) and size size.
	binRange := func(x TopicPartition, cand []TopicPartition, sure func(TopicPartition) bool, size int) (int, int) {
		c := javaNormalCapacity(-1, size)
		if size > 8 && c < 64 {
			var first [16]int
			for _, y := range cand {
				first[spread(y)&15]++
			}
			if slices.Max(first[:]) > 8 {
				return 0, size - 1
			}
		}
		mask := uint32(c - 1)
		below, above := 0, 0
		for _, y := range cand {
			if y == x || !sure(y) {
				continue
			}
			if spread(y)&mask < spread(x)&mask {
				below++
			} else if spread(y)&mask > spread(x)&mask {
				above++
			}
		}
		return below, size - 1 - above
	}
	// Fresh lists at h[0], concatenated.
	p0 := h[0]
	lists := make([][]TopicPartition, p0)
	for _, tp := range tps {
		k, _ := KafkaSplitOwner(tp, p0)
		lists[k] = append(lists[k], tp)
	}
	gl, gh := map[TopicPartition]int{}, map[TopicPartition]int{}
	from := map[TopicPartition]int{} // the list a partition surely comes from at the last restore, -1 none
	off := 0
	for k, l := range lists {
		for _, tp := range l {
			lo, hi := binRange(tp, l, func(TopicPartition) bool { return true }, len(l))
			gl[tp], gh[tp] = off+lo, off+hi
			from[tp] = k
		}
		off += len(l)
	}
	listStart := func(k int) int {
		s := 0
		for _, l := range lists[:k] {
			s += len(l)
		}
		return s
	}
	listEnd := func(k int) int { return listStart(k) + len(lists[k]) }
	q := h[len(h)-1]
	reach := func(tp TopicPartition, j int) bool {
		if len(h) == 2 {
			return chunkOf(q, gl[tp]) <= j && j <= chunkOf(q, gh[tp])
		}
		p1 := h[1]
		for i := range p1 {
			s, e := chunkStart(p1, i), chunkStart(p1, i+1)
			if gl[tp] >= e || gh[tp] < s {
				continue
			}
			var cand []TopicPartition
			for _, y := range tps {
				if gl[y] < e && gh[y] >= s {
					cand = append(cand, y)
				}
			}
			lo, hi := binRange(tp, cand, func(y TopicPartition) bool { return gl[y] >= s && gh[y] < e }, e-s)
			if chunkOf(q, s+lo) <= j && j <= chunkOf(q, s+hi) {
				return true
			}
		}
		return false
	}
	if len(h) == 3 {
		p1 := h[1]
		listStart = func(i int) int { return chunkStart(p1, i) }
		listEnd = func(i int) int { return chunkStart(p1, i+1) }
		for _, tp := range tps {
			from[tp] = -1
			if i := chunkOf(p1, gl[tp]); i == chunkOf(p1, gh[tp]) {
				from[tp] = i
			}
		}
	}
	perSubtask := map[int]int{}
	for _, j := range in.Observed {
		if perSubtask[j]++; perSubtask[j] > chunkStart(q, j+1)-chunkStart(q, j) {
			return false
		}
	}
	pieces := map[[2]int]int{}
	for tp, j := range in.Observed {
		if !reach(tp, j) {
			return false
		}
		k := from[tp]
		if k < 0 {
			continue
		}
		pieces[[2]int{k, j}]++
		overlap := min(listEnd(k), chunkStart(q, j+1)) - max(listStart(k), chunkStart(q, j))
		if pieces[[2]int{k, j}] > overlap {
			return false
		}
	}
	return true
}

// inferOracleSearch tries every candidate in InferHistory's order with
// inferOracleFit.
func inferOracleSearch(in InferInput, bound int) [][]int {
	var fits [][]int
	try := func(h []int) {
		if _, ok := inferOracleFit(in, h); ok {
			fits = append(fits, h)
		}
	}
	P := in.Parallelism
	try([]int{P})
	for p0 := 1; p0 <= bound; p0++ {
		if p0 != P {
			try([]int{p0, P})
		}
	}
	if len(fits) > 0 {
		return fits
	}
	for p0 := 1; p0 <= bound; p0++ {
		for p1 := 1; p1 <= bound; p1++ {
			if p1 != p0 && p1 != P {
				try([]int{p0, p1, P})
			}
		}
	}
	return fits
}

// TestInferHistoryMatchesOracle compares the pruned search with trying
// every candidate through Restore and the deal conditions written out
// naively, on layouts made by a history, the same with two owners swapped
// (counts kept), and owners at random.
func TestInferHistoryMatchesOracle(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	kinds := map[string]int{}
	for trial := range 600 {
		base := restoreRandomInput(r, 3, 30, 8, 1)
		bound := 3 + r.IntN(7)
		h := inferRandomHistory(r, bound)
		if trial%5 == 0 {
			h = h[len(h)-1:]
		}
		lay, err := Restore(RestoreInput{Topics: base.Topics, History: h, StartingOffsets: base.StartingOffsets, ConnectorLine: base.ConnectorLine})
		if err != nil {
			t.Fatal(err)
		}
		P := h[len(h)-1]
		obs := inferLayout(r, lay.Assignment, trial%2 == 0)
		keys := make([]TopicPartition, 0, len(obs))
		for tp := range obs {
			keys = append(keys, tp)
		}
		slices.SortFunc(keys, func(a, b TopicPartition) int { return inferCompareTP(a, b) })
		switch trial % 3 {
		case 1:
			if len(keys) > 1 {
				a, b := keys[r.IntN(len(keys))], keys[r.IntN(len(keys))]
				obs[a], obs[b] = obs[b], obs[a]
			}
		case 2:
			for _, tp := range keys {
				obs[tp] = r.IntN(P)
			}
		}
		in := InferInput{Topics: base.Topics, Parallelism: P, Observed: obs, StartingOffsets: base.StartingOffsets, ConnectorLine: base.ConnectorLine, MaxParallelism: max(bound, P)}
		res := inferSearch(t, in, 1<<30)
		want := inferOracleSearch(in, max(bound, P))
		if got := inferHistories(res.Fits); !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("InferHistory(%s) (layout of %v, kind %d) fits %v, want %v", inferDescribe(in), h, trial%3, got, want)
		}
		switch {
		case len(want) == 0:
			kinds["none"]++
		case len(want) == 1:
			kinds["one"]++
		default:
			kinds["several"]++
		}
	}
	t.Logf("layouts with no fit, one fit, several: %v", kinds)
}

func inferCompareTP(a, b TopicPartition) int {
	if a.Topic != b.Topic {
		if a.Topic < b.Topic {
			return -1
		}
		return 1
	}
	return int(a.Partition - b.Partition)
}
