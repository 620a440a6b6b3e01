package assign

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/skewscope/skewscope/internal/quote"
)

// MaxInferFits bounds InferResult.Fits; InferResult.More says when more
// histories fit.
const MaxInferFits = 8

// MaxInferBound bounds the earlier parallelisms InferHistory tries: a larger
// InferInput.MaxParallelism (up to 32768, Flink's limit) is searched up to
// MaxInferBound only, and InferResult.Bound says so. Two-step search costs
// grow with the square of the bound.
const MaxInferBound = 512

// InferInput is a source's observed layout for InferHistory.
type InferInput struct {
	// Topics are the source's topics with their partition counts (as
	// RestoreInput.Topics): every partition is in the job's state, observed
	// or not.
	Topics []Topic
	// Parallelism is the current source parallelism: the last entry of
	// every history tried.
	Parallelism int
	// Observed maps partitions to the subtask seen reading them (from the
	// KafkaSourceReader.topic.<t>.partition.<p> metrics). A partition that
	// is not listed is unknown and not compared.
	Observed map[TopicPartition]int
	// ConnectorLine and StartingOffsets are as in RestoreInput ("" means
	// ConnectorLine5 and StartingOffsetsEarliest).
	ConnectorLine   string
	StartingOffsets string
	// MaxSteps is the most restores a history may have: 1 or 2; 0 means 2.
	MaxSteps int
	// MaxParallelism bounds the earlier parallelisms tried: 1..MaxParallelism
	// (capped at MaxInferBound). Pass the vertex's maxParallelism from REST:
	// no parallelism of the job's life can exceed it. 0 means
	// DefaultMaxParallelism(Parallelism); otherwise it must be a valid max
	// parallelism for Parallelism (CheckMaxParallelism).
	MaxParallelism int
}

// HistoryFit is one history that can have produced the observed layout.
type HistoryFit struct {
	// History lists the source parallelisms, as RestoreInput.History: the
	// fresh start first, the current parallelism last. Consecutive entries
	// differ (an equal one is a restore that moves nothing).
	History []int `json:"history"`
	// Exact is RestoreResult.Exact for this history: the model determines
	// every partition's owner, observed or not.
	Exact bool `json:"exact"`
	// Matched counts the observed partitions the model places with
	// certainty; every one of them is where it was observed.
	Matched int `json:"matched"`
	// Uncertain counts the observed partitions whose owner the model does
	// not determine (RestoreResult.Uncertain). They are not compared with
	// the model's guess, only with the subtasks Flink's deal can give them.
	Uncertain int `json:"uncertain"`
}

// InferResult lists the histories that fit an observed layout.
type InferResult struct {
	// Fits are the fitting histories, shortest first, then by parallelism
	// entry by entry; at most MaxInferFits.
	Fits []HistoryFit `json:"fits"`
	// More is true when more histories fit than Fits lists.
	More bool `json:"more"`
	// Steps is the most restores a history searched had: 1, or 2 when
	// two-step histories were searched (MaxSteps 2 and no shorter history
	// fits). "The only history" means the only one of at most Steps
	// restores with parallelisms up to Bound.
	Steps int `json:"steps"`
	// Bound is the largest earlier parallelism tried.
	Bound int `json:"bound"`
	// Observed is the number of observed partitions compared.
	Observed int `json:"observed"`
	// Tried counts the candidate histories considered, including the fresh
	// start; Modelled counts those that passed the cheap checks and were run
	// through Restore.
	Tried    int `json:"tried"`
	Modelled int `json:"modelled"`
}

// Only returns the fit when exactly one history fits.
func (r InferResult) Only() (HistoryFit, bool) {
	if len(r.Fits) != 1 || r.More {
		return HistoryFit{}, false
	}
	return r.Fits[0], true
}

// InferHistory infers which parallelism histories of a KafkaSource can have
// produced the observed layout, for a job whose restores skewscope did not
// witness (it started late, restarted, or is a second replica). Its answers
// are inferred: a fit is consistent with the layout, not a record of what
// happened.
//
// It tries the fresh start [P] (P = in.Parallelism), then every history
// [p0, P] with p0 in 1..Bound, p0 ≠ P, and, when none of these fits and
// in.MaxSteps allows, every [p0, p1, P] with p0 ≠ p1 ≠ P (p0 may equal P).
// Bound is in.MaxParallelism (default DefaultMaxParallelism(P)) capped at
// MaxInferBound. It stops after MaxInferFits+1 fits.
//
// A history fits when Restore, with in's connector line and starting
// offsets, places every observed partition it places with certainty where it
// was observed, and the layout is one Flink's deal can produce for that
// history: each observed partition sits on a subtask its saved lists can
// reach, and no subtask holds more observed partitions surely from one saved
// list than it takes from that list. So Restore's Uncertain partitions are
// not compared with its guess, but they must still be where Flink can put
// them. Through Restore the model mirrors KafkaSourceEnumerator.getSplitOwner
// (flink-connector-kafka v3.0.0 to v5.0.0) for the fresh start, the reader's
// HashMap of split ids (SourceReaderBase.addSplits and snapshotState, Flink
// 1.20.3 and 2.2.0, over java.util.HashMap of OpenJDK 17) for each saved
// list, and RoundRobinOperatorStateRepartitioner.repartitionSplitState
// (Flink 1.20.3 L291, 2.2.0 L294) for each restore. It assumes what Restore
// assumes: every partition discovered at the fresh start, no failover,
// split loss or partition discovery between savepoints.
//
// Restore runs only for the candidates that pass cheap necessary conditions
// drawn from the same code: partition counts per subtask (a restore deals
// every subtask T/P or T/P+1 splits, T partitions in all, whatever came
// before), and for each observed partition, checked in a fixed shuffled
// order until one fails, the positions it can have in its saved lists (the
// run of its HashMap bin) and so the subtasks it can reach. They never reject
// a history the deal allows. Besides one Restore per surviving candidate the
// search costs about T·log(Bound) for one step and Bound·T·log(Bound) at most
// for two; BenchmarkInferHistory10k measures a 10,000-partition source.
func InferHistory(in InferInput) (InferResult, error) {
	s, err := newHistorySearch(in)
	if err != nil {
		return InferResult{}, err
	}
	return s.run(MaxInferFits), nil
}

// historySearch runs InferHistory. Elements are partitions by global index
// (Assignment order: topics in input order, partitions ascending).
type historySearch struct {
	in       InferInput
	maxSteps int
	bound    int
	p        int     // current parallelism
	n        int32   // partitions
	topicOf  []int32 // topic index per element
	part     []int32 // partition number per element
	offset   []int32 // first element of each topic, and n
	h31      []int32 // (hashCode*31) & 0x7FFFFFFF per topic
	hs       []uint32
	obs      []int32 // observed owner per element, -1 unknown
	check    []int32 // observed elements in checking order
	obsCount []int32 // observed partitions per current subtask
	dp       deal    // the chunks of a restore at P
	// dealable is false when some subtask holds more observed partitions
	// than any restore deals it (T/P or T/P+1, whatever came before),
	// which rules out every restore.
	dealable bool

	// One earlier parallelism p0's saved lists (setFresh), concatenated:
	// order is one order Flink can produce (bins ascending, ties by index),
	// and by position x, order[x] can be anywhere in lo[x]..hi[x]; pos is
	// the position of each element in order.
	p0        int
	listStart []int32 // position of each p0 list, and n
	order     []int32
	lo, hi    []int32
	hsAt      []uint32 // hs by position
	pos       []int32
	// Lists are laid out on first use (list): listStamp[k] == freshStamp
	// when list k is, with listWidth[k] its max hi-lo.
	freshStamp int32
	listStamp  []int32
	listWidth  []int32

	// The middle parallelism's lists (two steps), built lazily per pair.
	stamp  int32
	mids   []midList
	slab   []int32 // prefix sums of the mid lists' bins
	counts []int32 // scratch: per-bin counts
	next   []int32 // scratch: counting-sort cursors
}

// midList is one saved list at the middle parallelism p1 of [p0, p1, P]:
// positions [start, start+size) of the concatenation dealt at P.
type midList struct {
	stamp       int32
	start, size int32
	ordered     bool   // the HashMap's capacity is known: positions follow bins
	mask        uint32 // capacity-1
	sure        int32  // members certain to be in the list
	prefix      int32  // slab offset of the sure members' bin prefix sums (capacity+1)
}

// deal is RoundRobinOperatorStateRepartitioner.repartitionSplitState's
// chunking of t concatenated splits over q subtasks: subtask j takes b+1
// splits when j < r, else b, with b = t/q, r = t%q (see redistribute).
type deal struct{ b, r int32 }

func newDeal(t int32, q int) deal { return deal{b: t / int32(q), r: t % int32(q)} }

// chunk returns the subtask that gets concatenated position pos.
func (d deal) chunk(pos int32) int32 {
	if pos < d.r*(d.b+1) {
		return pos / (d.b + 1)
	}
	return d.r + (pos-d.r*(d.b+1))/d.b
}

// start returns the first position subtask j gets.
func (d deal) start(j int32) int32 { return j*d.b + min(j, d.r) }

func newHistorySearch(in InferInput) (*historySearch, error) {
	if err := CheckParallelism(in.Parallelism); err != nil {
		return nil, fmt.Errorf("parallelism: %w", err)
	}
	cfg, err := RestoreInput{Topics: in.Topics, History: []int{in.Parallelism}, StartingOffsets: in.StartingOffsets, ConnectorLine: in.ConnectorLine}.normalize()
	if err != nil {
		return nil, err
	}
	in.ConnectorLine, in.StartingOffsets = cfg.line, cfg.offsets
	s := &historySearch{in: in, p: in.Parallelism}
	switch in.MaxSteps {
	case 0:
		s.maxSteps = 2
	case 1, 2:
		s.maxSteps = in.MaxSteps
	default:
		return nil, fmt.Errorf("max steps %d: want 1 or 2 earlier parallelisms (0 means 2)", in.MaxSteps)
	}
	maxP := in.MaxParallelism
	if maxP == 0 {
		maxP, _ = DefaultMaxParallelism(in.Parallelism)
	} else if err := CheckMaxParallelism(maxP, in.Parallelism); err != nil {
		return nil, fmt.Errorf("max parallelism %d: %w", maxP, err)
	}
	s.bound = min(maxP, MaxInferBound)
	if len(in.Observed) == 0 {
		return nil, errors.New("no observed owners: give the subtask of at least one partition")
	}

	s.offset = make([]int32, len(in.Topics)+1)
	s.h31 = make([]int32, len(in.Topics))
	at := make(map[string]int, len(in.Topics))
	for t, tp := range in.Topics {
		at[tp.Name] = t
		s.offset[t+1] = s.offset[t] + int32(tp.Partitions)
		s.h31[t] = (StringHashCode(tp.Name) * 31) & 0x7FFFFFFF
	}
	s.n = s.offset[len(in.Topics)]
	s.topicOf = make([]int32, s.n)
	s.part = make([]int32, s.n)
	s.hs = make([]uint32, s.n)
	s.obs = make([]int32, s.n)
	for t, tp := range in.Topics {
		th := StringHashCode(tp.Name)
		for q := range int32(tp.Partitions) {
			e := s.offset[t] + q
			s.topicOf[e], s.part[e] = int32(t), q
			s.hs[e] = uint32(javaSpread(splitIDHashCode(th, q)))
			s.obs[e] = -1
		}
	}
	s.obsCount = make([]int32, s.p)
	for tp, o := range in.Observed {
		t, ok := at[tp.Topic]
		if !ok {
			return nil, fmt.Errorf("observed partition %s: topic %s is not among the topics", quote.Clip(tp.SplitID()), quote.Clip(tp.Topic))
		}
		if tp.Partition < 0 || int(tp.Partition) >= in.Topics[t].Partitions {
			return nil, fmt.Errorf("observed partition %s: topic %s has partitions 0..%d", quote.Clip(tp.SplitID()), quote.Clip(tp.Topic), in.Topics[t].Partitions-1)
		}
		if o < 0 || o >= s.p {
			return nil, fmt.Errorf("observed partition %s on subtask %d: want 0..%d (parallelism %d)", quote.Clip(tp.SplitID()), o, s.p-1, s.p)
		}
		e := s.offset[t] + tp.Partition
		s.obs[e] = int32(o)
		s.obsCount[o]++
		s.check = append(s.check, e)
	}
	s.dp, s.dealable = newDeal(s.n, s.p), true
	for j, c := range s.obsCount {
		if c > s.dp.start(int32(j)+1)-s.dp.start(int32(j)) {
			s.dealable = false
		}
	}
	// A fixed pseudo-random order: a wrong history usually fails on one of
	// the first partitions checked, wherever its errors are.
	slices.Sort(s.check)
	r := rand.New(rand.NewPCG(0x5ce75c09e, uint64(len(s.check))))
	r.Shuffle(len(s.check), func(i, j int) { s.check[i], s.check[j] = s.check[j], s.check[i] })
	return s, nil
}

func (s *historySearch) run(maxFits int) InferResult {
	res := InferResult{Steps: 1, Bound: s.bound, Observed: len(s.check)}
	var buf [3]int
	try := func(h []int) {
		res.Tried++
		if !s.cheapFits(h) {
			return
		}
		res.Modelled++
		fit, ok := s.model(h)
		if !ok {
			return
		}
		if len(res.Fits) == maxFits {
			res.More = true
			return
		}
		res.Fits = append(res.Fits, fit)
	}
	buf[0] = s.p
	try(buf[:1])
	for p0 := 1; p0 <= s.bound && !res.More; p0++ {
		if p0 != s.p {
			buf[0], buf[1] = p0, s.p
			try(buf[:2])
		}
	}
	if len(res.Fits) > 0 || s.maxSteps < 2 {
		return res
	}
	res.Steps = 2
	for p0 := 1; p0 <= s.bound && !res.More; p0++ {
		for p1 := 1; p1 <= s.bound && !res.More; p1++ {
			if p1 != p0 && p1 != s.p {
				buf[0], buf[1], buf[2] = p0, p1, s.p
				try(buf[:3])
			}
		}
	}
	return res
}

// cheapFits checks history h (1 to 3 entries, ending at P) with the
// necessary conditions that need no Restore.
func (s *historySearch) cheapFits(h []int) bool {
	if len(h) == 1 {
		return s.freshFits()
	}
	if !s.dealable {
		return false
	}
	s.setFresh(h[0])
	if len(h) == 2 {
		return s.oneStepFits(s.dp)
	}
	return s.twoStepFits(h[1], s.dp)
}

// freshFits checks the observed owners against getSplitOwner at P.
func (s *historySearch) freshFits() bool {
	for _, e := range s.check {
		t := s.topicOf[e]
		o := (s.h31[t]%int32(s.p) + s.part[e]) % int32(s.p)
		if o != s.obs[e] {
			return false
		}
	}
	return true
}

// setFresh lays out the saved lists of a fresh start at p0: list k holds
// the partitions getSplitOwner gives subtask k, in the order of the
// reader's HashMap<String, SplitContext> (SourceReaderBase.snapshotState):
// by bin of the split id's hash, ties in an order not modelled here. So
// every split's position in the concatenation of the lists is known up to
// its bin.
func (s *historySearch) setFresh(p0 int) {
	if s.p0 == p0 {
		return
	}
	if s.order == nil {
		s.order, s.lo, s.hi, s.pos = make([]int32, s.n), make([]int32, s.n), make([]int32, s.n), make([]int32, s.n)
		s.hsAt = make([]uint32, s.n)
	}
	s.p0 = p0
	q := int32(p0)
	s.listStart = grow(s.listStart, p0+1)
	sizes := s.listStart[1:]
	clear(sizes)
	for t, tp := range s.in.Topics {
		// Partition i goes to (start + i) % p0: every list gets n/p0, the
		// n%p0 lists from start on one more.
		n := int32(tp.Partitions)
		for k := range sizes {
			sizes[k] += n / q
		}
		for k, i := s.h31[t]%q, int32(0); i < n%q; i++ {
			sizes[k]++
			if k++; k == q {
				k = 0
			}
		}
	}
	s.listStart[0] = 0
	for k := range p0 {
		s.listStart[k+1] += s.listStart[k]
	}
	if len(s.listStamp) < p0 {
		s.listStamp, s.listWidth = make([]int32, p0), make([]int32, p0)
	}
	s.freshStamp++ // from 1 on: no zero-valued stamp matches
}

// freshOwner is getSplitOwner of element e at p0.
func (s *historySearch) freshOwner(e int32) int32 {
	q := int32(s.p0)
	return (s.h31[s.topicOf[e]]%q + s.part[e]) % q
}

// list lays out saved list k of p0 if not done yet.
func (s *historySearch) list(k int32) {
	if s.listStamp[k] == s.freshStamp {
		return
	}
	s.listStamp[k] = s.freshStamp
	q := int32(s.p0)
	members := s.next[:0]
	for t := range s.in.Topics {
		// The partitions i with (start + i) % p0 == k.
		first := ((k-s.h31[t]%q)%q + q) % q
		for e := s.offset[t] + first; e < s.offset[t+1]; e += q {
			members = append(members, e)
		}
	}
	s.next = members
	s.listWidth[k] = s.binPositions(members, s.listStart[k])
}

// at returns the position interval of element e at p0.
func (s *historySearch) at(e int32) (lo, hi int32) {
	s.list(s.freshOwner(e))
	x := s.pos[e]
	return s.lo[x], s.hi[x]
}

// binPositions places the members of one saved list, which starts at
// concatenated position base, in bin order and bounds each one's position
// by its bin in the reader's HashMap. When the table's capacity is not
// certain (a treeifyBin resize is possible, see javaHashOrder), every
// position of the list. It returns the widest interval, hi-lo.
func (s *historySearch) binPositions(members []int32, base int32) int32 {
	n := len(members)
	if n == 0 {
		return 0
	}
	c := javaNormalCapacity(-1, n)
	known := true
	if mayTreeifyResize(n, c) {
		var f firstBins
		for _, e := range members {
			if known = f.add(s.hs[e]); !known {
				break
			}
		}
	}
	if !known {
		for i, e := range members {
			x := base + int32(i)
			s.order[x], s.lo[x], s.hi[x], s.hsAt[x], s.pos[e] = e, base, base+int32(n)-1, s.hs[e], x
		}
		return int32(n) - 1
	}
	mask := uint32(c - 1)
	s.counts = growInt32(s.counts, 2*c+1)
	start, cur := s.counts[:c+1], s.counts[c+1:2*c+1]
	hs, order, lo, hi, hsAt, pos := s.hs, s.order, s.lo, s.hi, s.hsAt, s.pos
	clear(start)
	for _, e := range members {
		start[hs[e]&mask+1]++
	}
	width := int32(0)
	for b := range c {
		width = max(width, start[b+1]-1)
		start[b+1] += start[b]
	}
	copy(cur, start)
	for _, e := range members {
		h := hs[e]
		b := h & mask
		x := base + cur[b]
		cur[b]++
		order[x], lo[x], hi[x], hsAt[x], pos[e] = e, base+start[b], base+start[b+1]-1, h, x
	}
	return width
}

// mayTreeifyResize reports whether a new HashMap<>() that ends with n keys
// and normal capacity c could have a different capacity: treeifyBin resizes
// only below 64 bins, when a bin reaches 9 keys, and its resizes stop at 64,
// so with c >= 64 or n <= 8 the capacity is c.
func mayTreeifyResize(n, c int) bool {
	return n > javaTreeifyThreshold && c < javaMinTreeifyCapacity
}

// firstBins counts keys per bin of the first table (16 bins). A bin at any
// later capacity holds a subset of one first bin, so at most 8 keys per
// first bin rule out treeifyBin (see javaHashOrder).
type firstBins [javaDefaultInitialCapacity]int32

// add counts a key with spread hash h and reports whether every first bin
// still has at most 8 keys.
func (f *firstBins) add(h uint32) bool {
	b := h & (javaDefaultInitialCapacity - 1)
	f[b]++
	return f[b] <= javaTreeifyThreshold
}

// oneStepFits checks [p0, P] (setFresh(p0) done) with cheap conditions:
// each observed partition in a subtask whose chunk meets its bin's
// positions, and no subtask with more observed partitions of one old list
// than its chunk takes from that list.
func (s *historySearch) oneStepFits(dp deal) bool {
	for _, e := range s.check {
		j := s.obs[e]
		lo, hi := s.at(e)
		if j < dp.chunk(lo) || j > dp.chunk(hi) {
			return false
		}
	}
	return s.piecesFit(s.p0, func(k int32) (int32, int32) { return s.listStart[k], s.listStart[k+1] }, s.freshOwner, dp)
}

// piecesFit checks that for every old list k (positions from span(k)) and
// new subtask j, the observed partitions that surely come from k (listOf
// returns k, or -1 when not sure) and sit on j are no more than the overlap
// of k's positions with j's chunk.
func (s *historySearch) piecesFit(lists int, span func(int32) (int32, int32), listOf func(int32) int32, dp deal) bool {
	// Counts per (k, j) for the j whose chunk meets k: at[k] is the slot of
	// (k, dp.chunk(lo_k)).
	at := make([]int32, lists+1)
	for k := range int32(lists) {
		lo, hi := span(k)
		w := int32(0)
		if hi > lo {
			w = dp.chunk(hi-1) - dp.chunk(lo) + 1
		}
		at[k+1] = at[k] + w
	}
	cnt := make([]int32, at[lists])
	for _, e := range s.check {
		k := listOf(e)
		if k < 0 {
			continue
		}
		lo, hi := span(k)
		j := s.obs[e]
		if j < dp.chunk(lo) || j >= dp.chunk(lo)+at[k+1]-at[k] {
			return false // not reached: the position checks come first
		}
		slot := at[k] + j - dp.chunk(lo)
		cnt[slot]++
		overlap := min(hi, dp.start(j+1)) - max(lo, dp.start(j))
		if cnt[slot] > overlap {
			return false
		}
	}
	return true
}

// twoStepFits checks [p0, p1, P] (setFresh(p0) done) with cheap conditions.
// The list of middle subtask i holds the splits dealt to chunk i of the
// p0 lists: surely those whose positions lo..hi lie inside the chunk,
// perhaps those that straddle its ends. Its own order is by bin in a
// HashMap of its size, so a split's position in it is bounded by the sure
// members of lower and higher bins; that gives the subtasks at P it can
// reach.
func (s *historySearch) twoStepFits(p1 int, dp deal) bool {
	d1 := newDeal(s.n, p1)
	if len(s.mids) < p1 {
		s.mids = make([]midList, p1)
	}
	s.stamp++ // from 1 on: no zero-valued stamp matches
	s.slab = s.slab[:0]
	for _, e := range s.check {
		j := s.obs[e]
		elo, ehi := s.at(e)
		i1, i2 := d1.chunk(elo), d1.chunk(ehi)
		// Coarse: the chunks at P that the possible middle lists meet.
		if j < dp.chunk(d1.start(i1)) || j > dp.chunk(d1.start(i2+1)-1) {
			return false
		}
		reach := false
		for i := i1; i <= i2 && !reach; i++ {
			m := s.mid(d1, i)
			if m.size == 0 {
				continue
			}
			lo, hi := int32(0), m.size-1
			if m.ordered {
				b := s.hs[e] & m.mask
				pre := s.slab[m.prefix:]
				lo, hi = pre[b], m.size-1-(m.sure-pre[b+1])
			}
			reach = dp.chunk(m.start+lo) <= j && j <= dp.chunk(m.start+hi)
		}
		if !reach {
			return false
		}
	}
	return s.piecesFit(p1, func(i int32) (int32, int32) { return d1.start(i), d1.start(i + 1) },
		func(e int32) int32 {
			if lo, hi := s.at(e); d1.chunk(lo) == d1.chunk(hi) {
				return d1.chunk(lo)
			}
			return -1
		}, dp)
}

// mid returns middle list i of the current pair, building it on first use.
func (s *historySearch) mid(d1 deal, i int32) *midList {
	m := &s.mids[i]
	if m.stamp == s.stamp {
		return m
	}
	start, end := d1.start(i), d1.start(i+1)
	*m = midList{stamp: s.stamp, start: start, size: end - start}
	if m.size == 0 {
		return m
	}
	// Candidates: the elements of the p0 lists that meet the chunk, at
	// positions within their list's widest interval of it.
	k1, k2 := s.listAt(start), s.listAt(end-1)
	for k := k1; k <= k2; k++ {
		s.list(k)
	}
	scan := func(f func(x int32) bool) bool {
		for k := k1; k <= k2; k++ {
			w := s.listWidth[k]
			for x := max(s.listStart[k], start-w); x < min(s.listStart[k+1], end+w); x++ {
				if !f(x) {
					return false
				}
			}
		}
		return true
	}
	c := javaNormalCapacity(-1, int(m.size))
	if mayTreeifyResize(int(m.size), c) {
		var f firstBins
		if !scan(func(x int32) bool { return s.lo[x] >= end || s.hi[x] < start || f.add(s.hsAt[x]) }) {
			return m
		}
	}
	m.ordered, m.mask = true, uint32(c-1)
	m.prefix = int32(len(s.slab))
	s.slab = slices.Grow(s.slab, c+1)[:len(s.slab)+c+1]
	pre := s.slab[m.prefix:]
	clear(pre)
	scan(func(x int32) bool {
		if s.lo[x] >= start && s.hi[x] < end {
			pre[s.hsAt[x]&m.mask+1]++
			m.sure++
		}
		return true
	})
	for b := range c {
		pre[b+1] += pre[b]
	}
	return m
}

// listAt returns the p0 list at concatenated position x.
func (s *historySearch) listAt(x int32) int32 {
	k, _ := slices.BinarySearch(s.listStart[1:s.p0+1], x+1)
	return int32(k)
}

// model runs Restore for history h and compares it with the observed
// owners: every partition it places with certainty must be where observed.
func (s *historySearch) model(h []int) (HistoryFit, bool) {
	res, err := Restore(RestoreInput{Topics: s.in.Topics, History: h, StartingOffsets: s.in.StartingOffsets, ConnectorLine: s.in.ConnectorLine})
	if err != nil {
		return HistoryFit{}, false // validated input: not reached
	}
	uncertain := make([]bool, s.n)
	at := make(map[string]int32, len(s.in.Topics))
	for t, tp := range s.in.Topics {
		at[tp.Name] = s.offset[t]
	}
	for _, tp := range res.Uncertain {
		uncertain[at[tp.Topic]+tp.Partition] = true
	}
	fit := HistoryFit{History: slices.Clone(h), Exact: res.Exact}
	owners := res.Assignment.Owners
	for _, e := range s.check {
		if uncertain[e] {
			fit.Uncertain++
			continue
		}
		if owners[e] != s.obs[e] {
			return HistoryFit{}, false
		}
		fit.Matched++
	}
	return fit, true
}
