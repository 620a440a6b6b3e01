package assign

import (
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// Reasons why the relative order of two splits is unknown.
const (
	reasonPieces     uint8 = 1 << iota // pieces of different old subtasks (random handle order)
	reasonOffsets                      // resolved starting offsets in the split hash
	reasonSubscriber                   // connector 3.x/4.x subscriber order
	reasonSetTree                      // HashSet<KafkaPartitionSplit> tree bin (identity hash order)
	reasonMapTree                      // HashMap<String> tree bin (not modelled)
	reasonMembership                   // the list already held partitions with undetermined owners
)

// orderTag records one step of how a split reached its place in a sequence;
// restoreModel.known walks two splits' tags from the newest to decide
// whether their relative order is certain.
type orderTag struct {
	kind   uint8 // tagBase, tagSeg or tagHash
	flag   uint8 // tagBase: tagKnown; tagHash: tagFull, tagTree
	reason uint8 // why the order is unknown (tagBase, tagHash with tagTree)
	a, b   int32 // tagHash: a = bin; tagSeg: a = rank, b = segment id
}

const (
	tagBase uint8 = iota + 1 // the order of a discovery batch: known or not
	tagSeg                   // concatenation: lower rank first; same rank, other id: unknown order
	tagHash                  // iteration of a hash table: bins ascending, ties by insertion

	tagKnown uint8 = 1 // tagBase: the batch order is known
	tagFull  uint8 = 1 // tagHash: order known against every other split in the bin
	tagTree  uint8 = 2 // tagHash: bin is (or may be) a tree: order unknown against other tagTree splits
)

// chainOf returns the order chain of e (valid until the next pushTag).
func (m *restoreModel) chainOf(e int32) []orderTag {
	el := &m.el[e]
	if el.capChain == 0 {
		return el.inline[:el.nChain]
	}
	return m.tags[el.more : el.more+int32(el.nChain)]
}

// pushTag appends t to the order chain of e. Hash stages running at once
// (eachList) may call it for different elements.
func (m *restoreModel) pushTag(e int32, t orderTag) {
	el := &m.el[e]
	n := int(el.nChain)
	if el.capChain == 0 {
		if n < len(el.inline) {
			el.inline[n] = t
			el.nChain++
			return
		}
		// Move the chain to tags, with room to grow.
		start := m.allocTags(2 * n)
		copy(m.tags[start:], el.inline[:n])
		el.more, el.capChain = start, uint16(2*n)
	} else if n == int(el.capChain) {
		start := m.allocTags(2 * n)
		copy(m.tags[start:], m.tags[el.more:int(el.more)+n])
		el.more, el.capChain = start, uint16(2*n)
	}
	m.tags[el.more+int32(n)] = t
	el.nChain++
}

// allocTags returns the start of k tags of m.tags no chain uses. Hash
// stages running at once take disjoint ranges from room reserveTags made
// (so none grows m.tags); a stage running alone grows it when full.
func (m *restoreModel) allocTags(k int) int32 {
	end := int(atomic.AddInt32(&m.nTags, int32(k)))
	if end > len(m.tags) {
		m.tags = slices.Grow(m.tags, end-len(m.tags))
		m.tags = m.tags[:cap(m.tags)]
	}
	return int32(end - k)
}

// reserveTags makes m.tags long enough for one hash stage over every
// element: a stage adds one tag per element, which moves a chain of n tags
// to 2n new ones at most.
func (m *restoreModel) reserveTags() {
	need := int(m.nTags)
	for i := range m.el {
		need += 2 * int(m.el[i].nChain)
	}
	if need > len(m.tags) {
		m.tags = slices.Grow(m.tags, need-len(m.tags))
		m.tags = m.tags[:cap(m.tags)]
	}
}

// restoreWorkers is how many goroutines eachList runs at most, and
// restoreParallelMin the fewest elements for which it starts a second.
const (
	restoreWorkers     = 2
	restoreParallelMin = 2048
)

// restoreChunk is how many lists a goroutine of eachList takes at a time.
const restoreChunk = 32

// eachList calls f(w, j) for every list j of lists (hash stages, or the
// result's lists), each with the scratch w of the goroutine running it.
// When the lists hold enough elements, more than one core is available and
// neither a trace nor a random order is kept, a second goroutine helps:
// both take chunks of restoreChunk lists in turn, so this goroutine never
// waits for a chunk the other has not started (a busy machine may start it
// late); otherwise the lists run in order on this goroutine. f must touch
// only list j's elements, its own outputs and w (and tags through pushTag).
// The tallies of every worker are added to the step's stats before
// eachList returns.
func (m *restoreModel) eachList(lists [][]int32, f func(w *hashScratch, j int)) {
	total := 0
	for _, l := range lists {
		total += len(l)
	}
	if total >= restoreParallelMin && len(lists) > restoreChunk && m.trace == nil && m.rng == nil && runtime.GOMAXPROCS(0) > 1 {
		m.reserveTags() // f may push tags
		var next atomic.Int64
		run := func(w *hashScratch) {
			for {
				lo := int(next.Add(restoreChunk)) - restoreChunk
				if lo >= len(lists) {
					return
				}
				for j := lo; j < min(lo+restoreChunk, len(lists)); j++ {
					f(w, j)
				}
			}
		}
		var wg sync.WaitGroup
		wg.Go(func() { run(&m.sc[1]) })
		run(&m.sc[0])
		wg.Wait()
	} else {
		w := &m.sc[0]
		for j := range lists {
			f(w, j)
		}
	}
	for i := range m.sc {
		m.flush(&m.sc[i])
	}
}

// flush adds w's tallies to the current step's stats (and the trace) and
// clears them.
func (m *restoreModel) flush(w *hashScratch) {
	st := &m.stats[m.step]
	st.setTrees += w.setTrees
	st.mapTrees += w.mapTrees
	st.mapTreeRisk = st.mapTreeRisk || w.mapTreeRisk
	if m.trace != nil {
		m.trace.treeified += w.treeified
		m.trace.treeifyResizes += w.treeifyResizes
	}
	w.setTrees, w.mapTrees, w.mapTreeRisk, w.treeified, w.treeifyResizes = 0, 0, false, 0, 0
}

// setTag makes t the whole order chain of e.
func (m *restoreModel) setTag(e int32, t orderTag) {
	el := &m.el[e]
	el.inline[0], el.nChain, el.capChain = t, 1, 0
}

// lastBins returns the bin of each split's newest hash tag.
func (m *restoreModel) lastBins(seq []int32) []int32 {
	bins := make([]int32, len(seq))
	for i, e := range seq {
		c := m.chainOf(e)
		bins[i] = c[len(c)-1].a
	}
	return bins
}

// segment tags the splits of each list as one concatenated segment.
func (m *restoreModel) segment(lists [][]int32, rank int32, id func(list, i int) int32) {
	for j, seq := range lists {
		for i, e := range seq {
			m.pushTag(e, orderTag{kind: tagSeg, a: rank, b: id(j, i)})
		}
	}
}

// hashSpec selects the Java table a hashStage models.
type hashSpec struct {
	initialCap int   // -1: new HashMap<>() / new HashSet<>()
	split      bool  // keys are KafkaPartitionSplit (else split-id Strings)
	start      int64 // starting offset in the split hash
	reason     uint8 // reason for tree bins
}

func (m *restoreModel) hashOf(e int32, spec hashSpec) int32 {
	if spec.split {
		return kafkaPartitionSplitHashCode(m.el[e].tpHash, spec.start, kafkaNoStoppingOffset)
	}
	return m.el[e].idHash
}

// hashStage inserts seq, in order, into a modelled Java HashMap/HashSet and
// writes its iteration order to order with, per position, the interval of
// positions the split can have in Flink (counting only splits with certain
// owners) to lo and hi and the reasons that widen it to why. order, lo, hi
// and why have len(seq) entries and must not overlap seq or loIns; lo, hi
// and why may be nil when not needed. loIns[i] is the lowest position
// seq[i] can have in the insertion sequence. It appends a tagHash to every
// split's chain.
func (m *restoreModel) hashStage(w *hashScratch, seq, loIns []int32, spec hashSpec, order, lo, hi []int32, why []uint8) {
	n := len(seq)
	if lo == nil {
		w.lo, w.hi = grow(w.lo, n), grow(w.hi, n)
		lo, hi = w.lo, w.hi
	}
	if why == nil {
		w.why = grow(w.why, n)
		why = w.why
	}
	hs := grow(w.hs, n)
	w.hs = hs
	u := 0
	unknown := false
	for i, e := range seq {
		el := &m.el[e]
		h := el.idHash
		if spec.split {
			h = kafkaPartitionSplitHashCode(el.tpHash, spec.start, kafkaNoStoppingOffset)
		}
		hs[i] = uint32(javaSpread(h))
		if !el.certain {
			u++
		}
		if loIns[i] < int32(i) {
			unknown = true
		}
	}
	perm := grow(w.perm, n)
	w.perm = perm
	capacity, ok, counts := javaHashOrder(hs, spec.initialCap, perm, w.counts)
	w.counts = counts
	if ok && u == 0 && !unknown {
		m.knownStage(w, seq, hs, perm, capacity, spec.reason, order, lo, hi, why)
		return
	}
	bins := grow(w.bins, n)
	tree := grow(w.tree, n)
	w.bins, w.tree = bins, tree
	if ok {
		mask := uint32(capacity - 1)
		for i, k := range perm {
			order[i], bins[i], tree[i] = seq[k], int32(hs[k]&mask), false
		}
	} else {
		jm := w.jm
		jm.reset(spec.initialCap, n)
		for _, e := range seq {
			jm.put(e, m.hashOf(e, spec))
		}
		if spec.split {
			w.setTrees += jm.treeified
		} else {
			w.mapTrees += jm.treeified
		}
		w.treeified += jm.treeified
		w.treeifyResizes += jm.treeifyResizes
		w.ents = jm.appendEntries(w.ents[:0])
		for i, en := range w.ents {
			order[i], bins[i], tree[i] = en.key, en.bin, en.inTree
		}
		capacity = jm.capacity()
	}

	if u > 0 || unknown {
		capRisk, risky := m.treeRisk(w, seq, loIns, u, capacity, spec.initialCap,
			func(e int32) int32 { return m.hashOf(e, spec) }, func(e int32) bool { return m.el[e].certain })
		if capRisk {
			for i := range order {
				bins[i], tree[i] = 0, true
			}
		} else if risky != nil {
			for i, e := range order {
				if risky(e) {
					tree[i] = true
				}
			}
		}
		if (capRisk || risky != nil) && !spec.split {
			w.mapTreeRisk = true
		}
	}
	// A bin holding any (possible) tree node is treated as a tree as a whole.
	for s := 0; s < len(order); {
		t := s
		hasTree := false
		for t < len(order) && bins[t] == bins[s] {
			hasTree = hasTree || tree[t]
			t++
		}
		if hasTree {
			for k := s; k < t; k++ {
				tree[k] = true
			}
		}
		s = t
	}

	full := grow(w.full, n)
	w.full = full
	m.runBounds(order, bins, tree, spec.reason, lo, hi, why, full)
	for i, e := range order {
		if full[i] {
			// Known against every split of its bin: older tags are never needed again.
			m.setTag(e, orderTag{kind: tagHash, flag: tagFull, a: bins[i]})
			continue
		}
		var f uint8
		if tree[i] {
			f = tagTree
		}
		m.pushTag(e, orderTag{kind: tagHash, flag: f, reason: spec.reason, a: bins[i]})
	}
	if u > 0 {
		for i := range why {
			why[i] |= reasonMembership
		}
	}
}

// knownStage finishes hashStage when no bin can be a tree (javaHashOrder
// succeeded), every split has a certain owner and the insertion order is
// known (loIns[i] == i): what runBounds and the chain update compute then,
// with seq[perm[i]] the i-th split in iteration order and hs the spread
// hashes of seq. Splits alone in their bin are known against everything.
func (m *restoreModel) knownStage(w *hashScratch, seq []int32, hs []uint32, perm []int32, capacity int, reason uint8, order, lo, hi []int32, why []uint8) {
	n := len(seq)
	mask := uint32(capacity - 1)
	for s := 0; s < n; {
		b := hs[perm[s]] & mask
		t := s + 1
		for t < n && hs[perm[t]]&mask == b {
			t++
		}
		for i := s; i < t; i++ {
			order[i] = seq[perm[i]]
		}
		if t == s+1 {
			lo[s], hi[s], why[s] = int32(s), int32(s), 0
			m.setTag(order[s], orderTag{kind: tagHash, flag: tagFull, a: int32(b)})
			s = t
			continue
		}
		// A run of t-s splits in one list bin: every split is certain, so
		// s splits come before it and n-t after.
		full := w.full[:0]
		for i := s; i < t; i++ {
			kb, ka := 0, 0
			isFull := true
			var w uint8
			for k := s; k < t; k++ {
				if k == i {
					continue
				}
				if ok, r := m.known(order[i], order[k]); !ok {
					w |= r
					isFull = false
				} else if k < i {
					kb++
				} else {
					ka++
				}
			}
			lo[i], hi[i], why[i] = int32(s+kb), int32(t-1-ka), w
			full = append(full, isFull)
		}
		w.full = full
		for i := s; i < t; i++ {
			if full[i-s] {
				m.setTag(order[i], orderTag{kind: tagHash, flag: tagFull, a: int32(b)})
			} else {
				m.pushTag(order[i], orderTag{kind: tagHash, reason: reason, a: int32(b)})
			}
		}
		s = t
	}
}

// runBounds writes, for a sequence ordered by bins (ties in one bin are a
// run), the lowest and highest position each element can have when only
// pairs whose order is known are fixed, counting only elements with certain
// owners, to lo and hi; the reasons of the unknown pairs to why; and whether
// each element's order is known against every other element of its run to
// full. A pair's order is unknown when both are in tree (nil: none), for
// treeReason, and otherwise as restoreModel.known says. hi, why and full
// may be nil when not needed.
func (m *restoreModel) runBounds(order, bins []int32, tree []bool, treeReason uint8, lo, hi []int32, why []uint8, full []bool) {
	n := len(order)
	total := 0
	for _, e := range order {
		if m.el[e].certain {
			total++
		}
	}
	before := 0
	for s := 0; s < n; {
		t := s
		in := 0
		for t < n && bins[t] == bins[s] {
			if m.el[order[t]].certain {
				in++
			}
			t++
		}
		after := total - before - in
		for i := s; i < t; i++ {
			kb, ka := 0, 0
			isFull := true
			var w uint8
			for k := s; k < t; k++ {
				if k == i {
					continue
				}
				var ok bool
				var r uint8
				if tree != nil && tree[i] && tree[k] {
					ok, r = false, treeReason
				} else {
					ok, r = m.known(order[i], order[k])
				}
				if !ok {
					w |= r
					isFull = false
					continue
				}
				if m.el[order[k]].certain {
					if k < i {
						kb++
					} else {
						ka++
					}
				}
			}
			lo[i] = int32(before + kb)
			if hi != nil {
				hi[i] = int32(n - 1 - after - ka)
			}
			if why != nil {
				why[i] = w
			}
			if full != nil {
				full[i] = isFull
			}
		}
		before += in
		s = t
	}
}

// known reports whether the relative order of x and y, two splits in the
// same sequence, is the same in every run of Flink that this model cannot
// tell apart, and if not, why.
func (m *restoreModel) known(x, y int32) (bool, uint8) {
	cx, cy := m.chainOf(x), m.chainOf(y)
	for i, j := len(cx)-1, len(cy)-1; i >= 0 && j >= 0; i, j = i-1, j-1 {
		tx, ty := cx[i], cy[j]
		if tx.kind != ty.kind {
			return false, reasonMembership
		}
		switch tx.kind {
		case tagHash:
			if tx.a != ty.a || tx.flag&tagFull != 0 || ty.flag&tagFull != 0 {
				return true, 0
			}
			if tx.flag&tagTree != 0 && ty.flag&tagTree != 0 {
				return false, tx.reason
			}
		case tagSeg:
			if tx.a != ty.a {
				return true, 0
			}
			if tx.b != ty.b {
				return false, reasonPieces
			}
		case tagBase:
			if tx.flag&tagKnown != 0 {
				return true, 0
			}
			return false, tx.reason
		}
	}
	return false, reasonMembership
}

// treeRisk decides, for a table whose insertion order is not fully known
// (or whose contents are not: u splits with undetermined owners), whether
// another possible order could change its capacity through a
// treeifyBin resize (capRisk: the whole iteration order is then unknown), or
// turn some bins into trees (risky reports the splits in such bins).
//
// A treeifyBin resize changes the final capacity only if it happens at the
// capacity a table of this size normally ends with and that is below
// MIN_TREEIFY_CAPACITY; earlier resizes keep the order. A bin can become a
// tree at capacity c >= 64 only if 9 splits of that bin can be present while
// the table has c bins, i.e. among the first 3c/4+1 inserted.
func (m *restoreModel) treeRisk(w *hashScratch, seq, loIns []int32, u int, final int, initialCap int, hashOf func(int32) int32, counted func(int32) bool) (capRisk bool, risky func(int32) bool) {
	n := len(seq)
	if n < javaTreeifyThreshold+1 {
		return false, nil
	}
	normal := javaNormalCapacity(initialCap, n)
	if final != normal {
		return true, nil
	}
	w.riskHash = grow(w.riskHash, n)
	hash := w.riskHash
	for i, e := range seq {
		hash[i] = uint32(javaSpread(hashOf(e)))
	}
	if normal < javaMinTreeifyCapacity {
		w.riskCounts = grow(w.riskCounts, normal)
		counts := w.riskCounts
		clear(counts)
		for i, e := range seq {
			if counted(e) {
				counts[hash[i]&uint32(normal-1)]++
			}
		}
		return slices.Max(counts)+u >= javaTreeifyThreshold+1, nil
	}
	var marks map[int32]bool
	w.riskCounts = grow(w.riskCounts, final)
	counts := w.riskCounts
	for c := javaMinTreeifyCapacity; c <= final; c <<= 1 {
		clear(counts[:c])
		present := int32(min(n, c*3/4+1))
		for i, e := range seq {
			if counted(e) && loIns[i] < present {
				counts[hash[i]&uint32(c-1)]++
			}
		}
		for i, e := range seq {
			if counts[hash[i]&uint32(c-1)]+u >= javaTreeifyThreshold+1 {
				if marks == nil {
					marks = map[int32]bool{}
				}
				marks[e] = true
			}
		}
	}
	if marks == nil {
		return false, nil
	}
	return false, func(e int32) bool { return marks[e] }
}
