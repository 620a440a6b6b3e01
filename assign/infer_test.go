package assign

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// inferRandomHistory draws 2 or 3 parallelisms in 1..maxP (maxP >= 2),
// consecutive entries different.
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

// inferLayout returns the owners of an assignment as observed, all of them
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

// inferSearch runs the search with a cap of maxFits fits.
func inferSearch(t *testing.T, in InferInput, maxFits int) InferResult {
	t.Helper()
	s, err := newHistorySearch(in)
	if err != nil {
		t.Fatalf("InferHistory(%s) error %v", inferDescribe(in), err)
	}
	return s.run(maxFits)
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

// TestInferHistoryFindsTrueHistory feeds InferHistory the layout of a
// random history of one or two restores (Restore's best guess, or another
// order Flink could produce, all partitions observed or some): the true
// history must fit. Then it moves one partition: no history makes that.
func TestInferHistoryFindsTrueHistory(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	found, shorter, moved := 0, 0, 0
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
		capped := res
		capped.Fits = res.Fits[:min(len(res.Fits), MaxInferFits)]
		inferCheckResult(t, ii, capped)
		if trial%3 != 0 && lay.Assignment.Parallelism > 1 {
			// One partition moved to a subtask that is not its fresh owner:
			// that subtask holds one more than any restore deals it.
			tp := Partitions(in.Topics)[r.IntN(len(lay.Assignment.Owners))]
			fresh, _ := KafkaSplitOwner(tp, ii.Parallelism)
			if to := (ii.Observed[tp] + 1) % ii.Parallelism; to != fresh {
				bad := ii
				bad.Observed = maps.Clone(ii.Observed)
				bad.Observed[tp] = to
				if got := inferSearch(t, bad, 1<<30); len(got.Fits) > 0 {
					t.Fatalf("InferHistory(%s) (layout of %v with %v moved to %d) fits %v, want none", inferDescribe(bad), h, tp, to, inferHistories(got.Fits))
				}
				moved++
			}
		}
		if slices.ContainsFunc(res.Fits, func(f HistoryFit) bool { return slices.Equal(f.History, h) }) {
			found++
			continue
		}
		// Two steps are searched only when nothing shorter fits; the true
		// history must still pass every check on its own.
		if len(h) == 3 && res.Steps == 1 && len(res.Fits) > 0 {
			s, _ := newHistorySearch(ii)
			if _, ok := s.model(h); !ok || !s.cheapFits(h) {
				t.Fatalf("InferHistory(%s) (layout of %v, other order %v): the true history fails (model %v)", inferDescribe(ii), h, rng != nil, ok)
			}
			shorter++
			continue
		}
		t.Fatalf("InferHistory(%s) (layout of %v, other order %v) fits %v: the true history is missing", inferDescribe(ii), h, rng != nil, inferHistories(res.Fits))
	}
	t.Logf("true history among the fits: %d; a shorter history fit instead: %d; moved layouts without a fit: %d", found, shorter, moved)
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

// inferObserveAll returns every owner of a as observed.
func inferObserveAll(a Assignment) map[TopicPartition]int {
	obs := map[TopicPartition]int{}
	for tp, o := range a.All() {
		obs[tp] = o
	}
	return obs
}

func TestInferHistoryWorkedExamples(t *testing.T) {
	orders := []Topic{{Name: "orders", Partitions: 12}}
	tests := []struct {
		name    string
		topics  []Topic
		history []int // the layout's history
		want    [][]int
		more    bool
		steps   int
	}{
		// "consistent with a restore from p=4 (the only history of ≤ 2
		// steps that fits)".
		{"one restore", orders, []int{4, 6}, [][]int{{4, 6}}, false, 1},
		{"one restore, two topics", []Topic{{Name: "orders", Partitions: 8}, {Name: "payments", Partitions: 8}}, []int{8, 4}, [][]int{{8, 4}}, false, 1},
		{"fresh start", orders, []int{6}, [][]int{{6}}, false, 1},
		// 12 splits dealt to 5, 6 or 7 middle subtasks end up the same at 8.
		{"two restores, several fit", orders, []int{4, 6, 8}, [][]int{{4, 5, 8}, {4, 6, 8}, {4, 7, 8}}, false, 2},
		{"two restores, only one fits", []Topic{{Name: "orders", Partitions: 24}}, []int{4, 6, 8}, [][]int{{4, 6, 8}}, false, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lay, err := Restore(RestoreInput{Topics: tc.topics, History: tc.history})
			if err != nil {
				t.Fatal(err)
			}
			P := tc.history[len(tc.history)-1]
			in := InferInput{Topics: tc.topics, Parallelism: P, Observed: inferObserveAll(lay.Assignment), MaxParallelism: 16}
			res, err := InferHistory(in)
			if err != nil {
				t.Fatal(err)
			}
			inferCheckResult(t, in, res)
			if got := inferHistories(res.Fits); !slices.EqualFunc(got, tc.want, slices.Equal) || res.More != tc.more || res.Steps != tc.steps {
				t.Errorf("InferHistory(layout of %v) = fits %v, more %v, steps %d; want %v, %v, %d", tc.history, got, res.More, res.Steps, tc.want, tc.more, tc.steps)
			}
			if _, ok := res.Only(); ok != (len(tc.want) == 1) {
				t.Errorf("InferHistory(layout of %v).Only() ok = %v, want %v", tc.history, ok, len(tc.want) == 1)
			}
			for _, f := range res.Fits {
				if !f.Exact || f.Matched != len(in.Observed) || f.Uncertain != 0 {
					t.Errorf("InferHistory(layout of %v) fit %+v: want exact, every partition matched", tc.history, f)
				}
			}
		})
	}
}

// TestInferHistoryCapped: one partition on subtask 0 is what every restore
// produces, so every one-step history fits and the list is cut.
func TestInferHistoryCapped(t *testing.T) {
	topics := []Topic{{Name: "orders", Partitions: 1}}
	start, _ := KafkaStartIndex("orders", 5)
	if start == 0 {
		t.Fatalf("KafkaStartIndex(orders, 5) = 0: pick a topic whose fresh owner is not 0")
	}
	in := InferInput{Topics: topics, Parallelism: 5, Observed: map[TopicPartition]int{{Topic: "orders", Partition: 0}: 0}, MaxParallelism: 128}
	res, err := InferHistory(in)
	if err != nil {
		t.Fatal(err)
	}
	inferCheckResult(t, in, res)
	want := [][]int{{1, 5}, {2, 5}, {3, 5}, {4, 5}, {6, 5}, {7, 5}, {8, 5}, {9, 5}}
	if got := inferHistories(res.Fits); !slices.EqualFunc(got, want, slices.Equal) || !res.More || res.Steps != 1 {
		t.Errorf("InferHistory(orders-0 on 0 at 5) = fits %v, more %v, steps %d; want %v, more true, steps 1", got, res.More, res.Steps, want)
	}
	// The search stops at the ninth fit.
	if res.Modelled != MaxInferFits+1 || res.Tried != 1+MaxInferFits+1 {
		t.Errorf("InferHistory(orders-0 on 0 at 5): tried %d, modelled %d; want %d, %d", res.Tried, res.Modelled, 1+MaxInferFits+1, MaxInferFits+1)
	}
}

// TestInferHistoryNoHistory: layouts no history makes get no fit.
func TestInferHistoryNoHistory(t *testing.T) {
	topics := []Topic{{Name: "orders", Partitions: 40}, {Name: "payments", Partitions: 17}}
	P := 4
	// Counts no deal gives: 54 partitions on subtask 0.
	lopsided := map[TopicPartition]int{}
	for i, tp := range Partitions(topics) {
		lopsided[tp] = 0
		if i < 3 {
			lopsided[tp] = i + 1
		}
	}
	// The layout of [3, 4] with two partitions of different subtasks
	// swapped: counts are right, owners are not.
	lay, err := Restore(RestoreInput{Topics: topics, History: []int{3, 4}})
	if err != nil {
		t.Fatal(err)
	}
	swapped := inferObserveAll(lay.Assignment)
	a, b := lay.Assignment.Subtasks[0][0], lay.Assignment.Subtasks[3][0]
	swapped[a], swapped[b] = swapped[b], swapped[a]
	for _, tc := range []struct {
		name string
		obs  map[TopicPartition]int
	}{{"lopsided counts", lopsided}, {"two owners swapped", swapped}} {
		in := InferInput{Topics: topics, Parallelism: P, Observed: tc.obs, MaxParallelism: 32}
		res, err := InferHistory(in)
		if err != nil {
			t.Fatal(err)
		}
		if n := inferCandidates(32, P); len(res.Fits) != 0 || res.More || res.Steps != 2 || res.Tried != n {
			t.Errorf("InferHistory(%s) = fits %v, more %v, steps %d, tried %d; want none after searching 2 steps (%d candidates)",
				tc.name, inferHistories(res.Fits), res.More, res.Steps, res.Tried, n)
		}
		if want, ok := inferOracleSearch(in, 32), false; len(want) != 0 || ok {
			t.Errorf("oracle search of %s fits %v, want none", tc.name, want)
		}
		t.Logf("%s: %d candidates, %d run through Restore", tc.name, res.Tried, res.Modelled)
	}
}

// inferCandidates counts the histories of at most 2 steps ending at P with
// earlier entries in 1..bound, consecutive entries different.
func inferCandidates(bound, P int) int {
	n := 1
	for p0 := 1; p0 <= bound; p0++ {
		if p0 != P {
			n++
		}
		for p1 := 1; p1 <= bound; p1++ {
			if p1 != p0 && p1 != P {
				n++
			}
		}
	}
	return n
}

// TestInferHistoryEqualStepsAreNoOps: a restore at the same parallelism
// hands every subtask its own saved list back, so an equal consecutive
// entry changes nothing in Restore, which is why InferHistory never tries
// one.
func TestInferHistoryEqualStepsAreNoOps(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	for range 200 {
		base := restoreRandomInput(r, 5, 90, 16, 1)
		h := inferRandomHistory(r, 16)
		in := RestoreInput{Topics: base.Topics, History: h, StartingOffsets: base.StartingOffsets, ConnectorLine: base.ConnectorLine}
		want, err := Restore(in)
		if err != nil {
			t.Fatal(err)
		}
		for i := range h {
			dup := slices.Insert(slices.Clone(h), i, h[i])
			in.History = dup
			got, err := Restore(in)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.Assignment.Owners, want.Assignment.Owners) || !slices.Equal(got.Uncertain, want.Uncertain) {
				t.Fatalf("Restore(%v) owners %v, uncertain %v; want those of %v: %v, %v",
					dup, got.Assignment.Owners, got.Uncertain, h, want.Assignment.Owners, want.Uncertain)
			}
		}
	}
}

// TestInferHistoryPrunes: on a source of 1,800 partitions only the
// candidates that fit reach Restore.
func TestInferHistoryPrunes(t *testing.T) {
	var topics []Topic
	for i := range 3 {
		topics = append(topics, Topic{Name: fmt.Sprintf("clicks-%d", i), Partitions: 600})
	}
	// [3, 1, 24]: one subtask's list is in the HashMap order of all splits,
	// whatever came before, so [1, 24] fits and two steps are not searched.
	for _, h := range [][]int{{24}, {40, 24}, {7, 24}, {64, 36, 24}, {24, 12, 24}, {1, 24}, {3, 1, 24}} {
		lay, err := Restore(RestoreInput{Topics: topics, History: h})
		if err != nil {
			t.Fatal(err)
		}
		in := InferInput{Topics: topics, Parallelism: 24, Observed: inferObserveAll(lay.Assignment), MaxParallelism: 64}
		res, err := InferHistory(in)
		if err != nil {
			t.Fatal(err)
		}
		shorter := len(h) == 3 && res.Steps == 1 && len(res.Fits) > 0
		if !slices.ContainsFunc(res.Fits, func(f HistoryFit) bool { return slices.Equal(f.History, h) }) && !res.More && !shorter {
			t.Errorf("InferHistory(layout of %v) fits %v: the true history is missing", h, inferHistories(res.Fits))
		}
		if res.Modelled > len(res.Fits)+1 {
			t.Errorf("InferHistory(layout of %v): %d of %d candidates run through Restore for %d fits; want the cheap checks to reject the rest",
				h, res.Modelled, res.Tried, len(res.Fits))
		}
		t.Logf("%v: fits %v (more %v), %d tried, %d modelled", h, inferHistories(res.Fits), res.More, res.Tried, res.Modelled)
	}
}

func TestInferHistoryErrors(t *testing.T) {
	orders := []Topic{{Name: "orders", Partitions: 4}}
	one := map[TopicPartition]int{{Topic: "orders", Partition: 0}: 1}
	ok := InferInput{Topics: orders, Parallelism: 2, Observed: one}
	tests := []struct {
		name string
		edit func(*InferInput)
		want string
	}{
		{"no topics", func(in *InferInput) { in.Topics = nil }, "no topics"},
		{"topic twice", func(in *InferInput) { in.Topics = append(in.Topics, in.Topics[0]) }, `topic "orders" is listed twice`},
		{"too many partitions", func(in *InferInput) {
			in.Topics = []Topic{{Name: "orders", Partitions: MaxPartitions}, {Name: "b", Partitions: 1}}
		}, "at most 1048576 are modelled"},
		{"parallelism 0", func(in *InferInput) { in.Parallelism = 0 }, "parallelism: Operator parallelism not within bounds: 0"},
		{"parallelism too large", func(in *InferInput) { in.Parallelism = 32769 }, "parallelism: Operator parallelism not within bounds: 32769"},
		{"steps", func(in *InferInput) { in.MaxSteps = 3 }, "max steps 3: want 1 or 2"},
		{"negative steps", func(in *InferInput) { in.MaxSteps = -1 }, "max steps -1"},
		{"max parallelism below parallelism", func(in *InferInput) { in.MaxParallelism = 1 }, "max parallelism 1: Maximum parallelism must not be smaller than parallelism."},
		{"max parallelism too large", func(in *InferInput) { in.MaxParallelism = 40000 }, "max parallelism 40000: Operator parallelism not within bounds: 40000"},
		{"negative max parallelism", func(in *InferInput) { in.MaxParallelism = -3 }, "max parallelism -3"},
		{"offsets", func(in *InferInput) { in.StartingOffsets = "newest" }, `starting offsets "newest"`},
		{"connector", func(in *InferInput) { in.ConnectorLine = "6" }, `connector line "6"`},
		{"nothing observed", func(in *InferInput) { in.Observed = nil }, "no observed owners"},
		{"unknown topic", func(in *InferInput) { in.Observed = map[TopicPartition]int{{Topic: "payments", Partition: 0}: 0} }, `observed partition "payments-0": topic "payments" is not among the topics`},
		{"partition out of range", func(in *InferInput) { in.Observed = map[TopicPartition]int{{Topic: "orders", Partition: 4}: 0} }, `"orders-4": topic "orders" has partitions 0..3`},
		{"negative partition", func(in *InferInput) { in.Observed = map[TopicPartition]int{{Topic: "orders", Partition: -1}: 0} }, `"orders--1"`},
		{"owner out of range", func(in *InferInput) { in.Observed = map[TopicPartition]int{{Topic: "orders", Partition: 1}: 2} }, `"orders-1" on subtask 2: want 0..1 (parallelism 2)`},
		{"negative owner", func(in *InferInput) { in.Observed = map[TopicPartition]int{{Topic: "orders", Partition: 1}: -1} }, "on subtask -1"},
	}
	for _, tc := range tests {
		in := ok
		in.Topics = slices.Clone(ok.Topics)
		tc.edit(&in)
		_, err := InferHistory(in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: InferHistory error = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if _, err := InferHistory(ok); err != nil {
		t.Errorf("InferHistory(%s) error %v", inferDescribe(ok), err)
	}
	// A vertex max parallelism above MaxInferBound is searched up to the bound.
	big := ok
	big.MaxParallelism = UpperBoundMaxParallelism
	big.MaxSteps = 1
	res, err := InferHistory(big)
	if err != nil || res.Bound != MaxInferBound || res.Steps != 1 {
		t.Errorf("InferHistory(max parallelism 32768, 1 step) = bound %d, steps %d, error %v; want %d, 1, nil", res.Bound, res.Steps, err, MaxInferBound)
	}
	// The default bound is the default max parallelism of the parallelism.
	if res, err := InferHistory(ok); err != nil || res.Bound != 128 {
		t.Errorf("InferHistory(parallelism 2, max parallelism 0).Bound = %d, %v; want 128", res.Bound, err)
	}
}

// FuzzInferHistory: small sources, any bytes as observed owners and
// options; InferHistory must not panic, must reject what is invalid, and
// every fit must be one.
func FuzzInferHistory(f *testing.F) {
	f.Add(uint64(1), uint8(2), uint8(12), uint8(4), uint8(8), uint8(0), []byte{0, 1, 2, 3, 0, 1})
	f.Add(uint64(2), uint8(1), uint8(1), uint8(5), uint8(0), uint8(1), []byte{0})
	f.Add(uint64(3), uint8(3), uint8(40), uint8(0), uint8(3), uint8(2), []byte{9, 9, 9})
	f.Add(uint64(4), uint8(2), uint8(30), uint8(6), uint8(2), uint8(3), []byte{})
	f.Fuzz(func(t *testing.T, seed uint64, nTopics, maxParts, p, maxP, steps uint8, owners []byte) {
		r := rand.New(rand.NewPCG(seed, 1))
		base := restoreRandomInput(r, 1+int(nTopics%3), 1+int(maxParts%48), 8, 1)
		in := InferInput{
			Topics: base.Topics, Parallelism: int(p%24) - 1, MaxParallelism: int(maxP % 32),
			MaxSteps: int(steps % 4), StartingOffsets: base.StartingOffsets, ConnectorLine: base.ConnectorLine,
			Observed: map[TopicPartition]int{},
		}
		if seed%5 == 0 {
			in.Topics = append(in.Topics, Topic{Name: "", Partitions: 1})
		}
		tps := Partitions(in.Topics)
		for i, o := range owners[:min(len(owners), 200)] {
			if len(tps) > 0 {
				in.Observed[tps[(i*7+int(seed))%len(tps)]] = int(o%26) - 1
			}
		}
		if seed%3 == 1 && in.Parallelism >= 1 && ValidateTopics(in.Topics) == nil {
			// Owners from a history's layout, the bytes choosing which.
			h := inferRandomHistory(r, max(in.MaxParallelism, in.Parallelism, 2))
			if h[len(h)-2] == in.Parallelism {
				h = h[:len(h)-1]
			}
			h[len(h)-1] = in.Parallelism
			lay, err := Restore(RestoreInput{Topics: in.Topics, History: h, StartingOffsets: in.StartingOffsets, ConnectorLine: in.ConnectorLine})
			if err != nil {
				t.Fatal(err)
			}
			clear(in.Observed)
			i := 0
			for tp, o := range lay.Assignment.All() {
				if i < len(owners) && owners[i]%2 == 1 {
					in.Observed[tp] = o
				}
				i++
			}
		}
		if seed%11 == 0 {
			in.Observed[TopicPartition{Topic: "elsewhere", Partition: 0}] = 0
		}
		valid := ValidateTopics(in.Topics) == nil && in.Parallelism >= 1 && in.MaxSteps <= 2 &&
			(in.MaxParallelism == 0 || in.MaxParallelism >= in.Parallelism) && len(in.Observed) > 0
		for tp, o := range in.Observed {
			valid = valid && tp.Topic != "elsewhere" && o >= 0 && o < in.Parallelism
		}
		res, err := InferHistory(in)
		if !valid {
			if err == nil {
				t.Fatalf("InferHistory(%s) error = nil, want an error", inferDescribe(in))
			}
			return
		}
		if err != nil {
			t.Fatalf("InferHistory(%s) error %v", inferDescribe(in), err)
		}
		inferCheckResult(t, in, res)
	})
}
