package assign

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
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
// witness. Its answers are inferred: a fit is consistent with the layout,
// not a record of what happened.
//
// It tries the fresh start [P] (P = in.Parallelism), then every history
// [p0, P] with p0 in 1..Bound, p0 ≠ P, and, when none of these fits and
// in.MaxSteps allows, every [p0, p1, P] with p0 ≠ p1 ≠ P (p0 may equal P).
// Bound is in.MaxParallelism capped at MaxInferBound.
//
// A history fits when Restore, with in's connector line and starting
// offsets, places every observed partition it places with certainty where it
// was observed, and the layout is one Flink's deal can produce for that
// history: each observed partition sits in a subtask that its saved lists can
// reach, and no subtask holds more observed partitions from one saved list
// than that list gives it. So Restore's Uncertain partitions are not
// compared with its guess, but they are not free either. The model mirrors
// (through Restore) KafkaSourceEnumerator.getSplitOwner for the fresh start,
// SourceReaderBase's HashMap of split ids for each saved list, and
// RoundRobinOperatorStateRepartitioner.repartitionSplitState for each
// restore; it assumes what Restore assumes (all partitions discovered at the
// fresh start, no failover or discovery between savepoints).
//
// Restore runs only for candidates that pass cheap necessary conditions of
// the same rules: partition counts per subtask (a restore deals every
// subtask T/P or T/P+1 splits), and for each observed partition the range of
// positions it can have in its saved list (its HashMap bin) and so the
// subtasks it can reach. The conditions never reject a history Flink's deal
// allows; the search is about O(Bound·T) for one step, plus work for pairs
// that survive the first partitions checked, for T partitions.
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

	// One earlier parallelism p0's saved lists (setFresh).
	p0        int
	owner0    []int32 // subtask at p0
	listStart []int32 // position of each p0 list in the concatenation, and n
	gl, gh    []int32 // lowest and highest concatenated position
	width     int32   // max gh-gl
	byLo      []int32 // elements by gl
	loAt      []int32 // byLo index of the first element with gl >= pos, pos 0..n

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
	cfg, err := RestoreInput{Topics: in.Topics, History: []int{in.Parallelism}, StartingOffsets: in.StartingOffsets, ConnectorLine: in.ConnectorLine}.normalize()
	if err != nil {
		if _, ok := err.(*ParallelismError); ok {
			return nil, fmt.Errorf("parallelism: %w", err)
		}
		return nil, errors.New(trimHistoryPrefix(err.Error()))
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
			return nil, fmt.Errorf("observed partition %s: topic %s is not among the topics", QuoteClip(tp.SplitID()), QuoteClip(tp.Topic))
		}
		if tp.Partition < 0 || int(tp.Partition) >= in.Topics[t].Partitions {
			return nil, fmt.Errorf("observed partition %s: topic %s has partitions 0..%d", QuoteClip(tp.SplitID()), QuoteClip(tp.Topic), in.Topics[t].Partitions-1)
		}
		if o < 0 || o >= s.p {
			return nil, fmt.Errorf("observed partition %s on subtask %d: want 0..%d (parallelism %d)", QuoteClip(tp.SplitID()), o, s.p-1, s.p)
		}
		e := s.offset[t] + tp.Partition
		s.obs[e] = int32(o)
		s.obsCount[o]++
		s.check = append(s.check, e)
	}
	// A fixed pseudo-random order: a wrong history usually fails on one of
	// the first partitions checked, wherever its errors are.
	slices.Sort(s.check)
	r := rand.New(rand.NewPCG(0x5ce75c09e, uint64(len(s.check))))
	r.Shuffle(len(s.check), func(i, j int) { s.check[i], s.check[j] = s.check[j], s.check[i] })
	return s, nil
}

// trimHistoryPrefix drops the "history[0]: " Restore's validation puts
// before a parallelism error (the history here is the input's Parallelism).
func trimHistoryPrefix(msg string) string {
	const pre = "history[0]: "
	if len(msg) > len(pre) && msg[:len(pre)] == pre {
		return "parallelism: " + msg[len(pre):]
	}
	return msg
}

func (s *historySearch) run(maxFits int) InferResult {
	res := InferResult{Steps: 1, Bound: s.bound, Observed: len(s.check)}
	full := func() bool { return res.More }
	add := func(h []int) {
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

	// The fresh start: getSplitOwner for every partition.
	res.Tried++
	if s.freshFits() {
		add([]int{s.p})
	}

	// A restore deals every subtask T/P or T/P+1 splits, whatever came
	// before: more observed partitions than that rule out every restore.
	dp := newDeal(s.n, s.p)
	dealable := true
	for j, c := range s.obsCount {
		if c > dp.start(int32(j)+1)-dp.start(int32(j)) {
			dealable = false
		}
	}
	for p0 := 1; p0 <= s.bound && !full(); p0++ {
		if p0 == s.p {
			continue
		}
		res.Tried++
		if !dealable {
			continue
		}
		s.setFresh(p0)
		if s.oneStepFits(dp) {
			add([]int{p0, s.p})
		}
	}
	if len(res.Fits) > 0 || s.maxSteps < 2 {
		return res
	}
	res.Steps = 2
	for p0 := 1; p0 <= s.bound && !full(); p0++ {
		if dealable {
			s.setFresh(p0)
		}
		for p1 := 1; p1 <= s.bound && !full(); p1++ {
			if p1 == p0 || p1 == s.p {
				continue
			}
			res.Tried++
			if dealable && s.twoStepFits(p1, dp) {
				add([]int{p0, p1, s.p})
			}
		}
	}
	return res
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
// its bin: gl..gh.
func (s *historySearch) setFresh(p0 int) {
	if s.owner0 == nil {
		s.owner0 = make([]int32, s.n)
		s.gl, s.gh = make([]int32, s.n), make([]int32, s.n)
		s.byLo = make([]int32, s.n)
		s.loAt = make([]int32, s.n+1)
	}
	s.p0 = p0
	s.listStart = grow(s.listStart, p0+1)
	clear(s.listStart)
	for t := range s.in.Topics {
		// (start + q) % p0 counted up with a wrap, as in FreshAssignment.
		o := s.h31[t] % int32(p0)
		for e := s.offset[t]; e < s.offset[t+1]; e++ {
			s.owner0[e] = o
			s.listStart[o+1]++
			if o++; o == int32(p0) {
				o = 0
			}
		}
	}
	for k := range p0 {
		s.listStart[k+1] += s.listStart[k]
	}
	// Members of each list, in one array (byLo is free until the end).
	members := s.byLo
	s.next = append(s.next[:0], s.listStart[:p0]...)
	for e := range s.n {
		k := s.owner0[e]
		members[s.next[k]] = e
		s.next[k]++
	}
	s.width = 0
	for k := range p0 {
		lo, hi := s.listStart[k], s.listStart[k+1]
		s.binPositions(members[lo:hi], lo)
	}
	// byLo: elements by gl (counting sort), loAt[pos] the first with gl >= pos.
	clear(s.loAt)
	for e := range s.n {
		s.loAt[s.gl[e]+1]++
	}
	for pos := range s.n {
		s.loAt[pos+1] += s.loAt[pos]
	}
	s.next = append(s.next[:0], s.loAt[:s.n]...)
	for e := range s.n {
		g := s.gl[e]
		s.byLo[s.next[g]] = e
		s.next[g]++
	}
}

// binPositions sets gl and gh of the members of one saved list that starts
// at concatenated position base: the positions of their bin in the reader's
// HashMap. When the capacity of the table is not certain (a treeifyBin
// resize is possible, see javaHashOrder), every position of the list.
func (s *historySearch) binPositions(members []int32, base int32) {
	n := len(members)
	if n == 0 {
		return
	}
	c := javaNormalCapacity(-1, n)
	if !s.capacityKnown(members, nil, n, c) {
		for _, e := range members {
			s.gl[e], s.gh[e] = base, base+int32(n)-1
		}
		s.width = max(s.width, int32(n)-1)
		return
	}
	mask := uint32(c - 1)
	s.counts = growInt32(s.counts, c+1)
	cnt := s.counts[:c+1]
	clear(cnt)
	for _, e := range members {
		cnt[s.hs[e]&mask+1]++
	}
	for b := range c {
		cnt[b+1] += cnt[b]
	}
	for _, e := range members {
		b := s.hs[e] & mask
		s.gl[e], s.gh[e] = base+cnt[b], base+cnt[b+1]-1
		s.width = max(s.width, cnt[b+1]-1-cnt[b])
	}
}

// capacityKnown reports whether a reader's new HashMap<>() holding n of the
// given candidate elements (all of them when keep is nil, else those keep
// accepts) surely ends with the normal capacity c. A treeifyBin resize can
// only happen below 64 bins, when a bin reaches 9 keys; a bin at any
// capacity holds a subset of one of the 16 first bins, so at most 8
// candidates per first bin rules it out. With c >= 64 treeifyBin resizes
// end at 64 or below and cannot change the final capacity.
func (s *historySearch) capacityKnown(cands []int32, keep func(int32) bool, n, c int) bool {
	if n <= javaTreeifyThreshold || c >= javaMinTreeifyCapacity {
		return true
	}
	var first [javaDefaultInitialCapacity]int32
	for _, e := range cands {
		if keep != nil && !keep(e) {
			continue
		}
		b := s.hs[e] & (javaDefaultInitialCapacity - 1)
		if first[b]++; first[b] > javaTreeifyThreshold {
			return false
		}
	}
	return true
}

// oneStepFits checks [p0, P] (setFresh(p0) done) with cheap conditions:
// each observed partition in a subtask whose chunk meets its bin's
// positions, and no subtask with more observed partitions of one old list
// than its chunk takes from that list.
func (s *historySearch) oneStepFits(dp deal) bool {
	for _, e := range s.check {
		j := s.obs[e]
		if j < dp.chunk(s.gl[e]) || j > dp.chunk(s.gh[e]) {
			return false
		}
	}
	return s.piecesFit(s.p0, func(k int32) (int32, int32) { return s.listStart[k], s.listStart[k+1] },
		func(e int32) int32 { return s.owner0[e] }, dp)
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
// p0 lists: surely those whose positions gl..gh lie inside the chunk,
// perhaps those that straddle its ends. Its own order is by bin in a
// HashMap of its size, so a split's position in it is bounded by the sure
// members of lower and higher bins; that gives the subtasks at P it can
// reach.
func (s *historySearch) twoStepFits(p1 int, dp deal) bool {
	d1 := newDeal(s.n, p1)
	s.stamp++
	if s.stamp == 0 || len(s.mids) < p1 {
		s.mids = make([]midList, max(p1, len(s.mids)))
		s.stamp = 1
	}
	s.slab = s.slab[:0]
	for _, e := range s.check {
		j := s.obs[e]
		i1, i2 := d1.chunk(s.gl[e]), d1.chunk(s.gh[e])
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
			if i := d1.chunk(s.gl[e]); i == d1.chunk(s.gh[e]) {
				return i
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
	// Candidates: gl in [start-width, end) and gh >= start.
	cands := s.byLo[s.loAt[max(start-s.width, 0)]:s.loAt[end]]
	possible := func(e int32) bool { return s.gh[e] >= start }
	c := javaNormalCapacity(-1, int(m.size))
	if !s.capacityKnown(cands, possible, int(m.size), c) {
		return m
	}
	m.ordered, m.mask = true, uint32(c-1)
	m.prefix = int32(len(s.slab))
	s.slab = slices.Grow(s.slab, c+1)[:len(s.slab)+c+1]
	pre := s.slab[m.prefix:]
	clear(pre)
	for _, e := range cands {
		if s.gl[e] >= start && s.gh[e] < end {
			pre[s.hs[e]&m.mask+1]++
			m.sure++
		}
	}
	for b := range c {
		pre[b+1] += pre[b]
	}
	return m
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
	fit := HistoryFit{History: h, Exact: res.Exact}
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
