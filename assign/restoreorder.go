package assign

import (
	"slices"
	"sort"
	"sync"
)

// kafkaTopicPartitionHashCode is org.apache.kafka.common.TopicPartition
// .hashCode (kafka-clients 3.9.0 TopicPartition.java L46-53):
// 31*(31+partition) + Objects.hashCode(topic).
func kafkaTopicPartitionHashCode(topicHash, partition int32) int32 {
	return 31*(31+partition) + topicHash
}

// kafkaPartitionSplitHashCode is KafkaPartitionSplit.hashCode
// (flink-connector-kafka KafkaPartitionSplit.java L103 in v3.4.0, L107 in
// v5.0.0): Objects.hash(tp, startingOffset, stoppingOffset), i.e.
// Arrays.hashCode of the three boxed values.
func kafkaPartitionSplitHashCode(tpHash int32, start, stop int64) int32 {
	h := int32(1)
	h = 31*h + tpHash
	h = 31*h + LongHashCode(start)
	return 31*h + LongHashCode(stop)
}

// splitIDHashCode is String.hashCode of the split id topic + "-" +
// partition (KafkaPartitionSplit.toSplitId = TopicPartition.toString),
// continuing the hash of the topic name without building the string.
func splitIDHashCode(topicHash, partition int32) int32 {
	h := 31*topicHash + '-'
	if partition >= 0 && partition < splitDigitsMax {
		// The digits continue h as h·31^len + their own hash from 0, in
		// the same wrapping int32 arithmetic.
		d := splitDigits()[partition]
		return h*d.pow + d.hash
	}
	if partition < 0 {
		h = 31*h + '-'
	}
	var digits [10]byte
	n := 0
	for u := uint32(max(partition, -partition)); ; u /= 10 {
		digits[n] = byte('0' + u%10)
		n++
		if u < 10 {
			break
		}
	}
	for i := n - 1; i >= 0; i-- {
		h = 31*h + int32(digits[i])
	}
	return h
}

// splitDigitsMax bounds the partition numbers whose decimal digits
// splitDigits tabulates.
const splitDigitsMax = 1 << 14

// splitDigit is a partition number's decimal digits as a String.hashCode
// continuation: hash, the digits' own hash from 0, and pow, 31 to the
// number of digits.
type splitDigit struct{ hash, pow int32 }

// splitDigits tabulates 0 .. splitDigitsMax-1, built on first use.
var splitDigits = sync.OnceValue(func() []splitDigit {
	t := make([]splitDigit, splitDigitsMax)
	for p := range t {
		var digits [10]byte
		n := 0
		for u := p; ; u /= 10 {
			digits[n] = byte('0' + u%10)
			n++
			if u < 10 {
				break
			}
		}
		d := splitDigit{pow: 1}
		for i := n - 1; i >= 0; i-- {
			d.hash = 31*d.hash + int32(digits[i])
			d.pow *= 31
		}
		t[p] = d
	}
	return t
})

// rankTopics numbers topics by name in String.compareTo order. The names
// are sorted from the order of topics (which is also their order of first
// appearance among the elements).
func (m *restoreModel) rankTopics() []int32 {
	names := make([]int, len(m.topics))
	keys := make([][]uint16, len(m.topics))
	for i, t := range m.topics {
		names[i] = i
		keys[i] = appendJavaUTF16(nil, t.Name)
	}
	sort.Slice(names, func(i, j int) bool { return slices.Compare(keys[names[i]], keys[names[j]]) < 0 })
	rank := make([]int32, len(m.topics))
	for i, t := range names {
		rank[t] = int32(i)
	}
	return rank
}

// owner is KafkaSplitOwner in int32 arithmetic.
func (m *restoreModel) owner(e int32, n int) int {
	el := &m.el[e]
	start := m.h31[el.topic] % int32(n)
	return int((start + el.part) % int32(n))
}

// batch models one discovery batch of the enumerator for n readers: the
// lists it sends the readers (each in HashSet iteration order, as
// KafkaSourceEnumerator.assignPendingPartitionSplits copies its pending
// set), with for each split the lowest position it can have in its list.
//
// Connector 5.x (KafkaSourceEnumerator v5.0.0 L441-466, L484): the splits
// are sorted by (topic, partition) and added to new HashSet<>() per owner.
// Connector 3.x/4.x (v3.4.0 = v4.0.1 initializePartitionSplits L304,
// L339-352, L371): the subscriber (TopicListSubscriber
// .getSubscribedTopicPartitions) returns a new HashSet<TopicPartition> of
// every partition of the topics, filled in the AdminClient's order (unknown;
// ascending (topic, partition) is assumed); getPartitionChange removes the
// partitions already assigned; the rest are collected, in that set's order,
// in new HashSet<>(newPartitions.size()), which is iterated into the
// per-owner HashSets. universe lists every partition the subscriber sees.
// With resolved starting offsets the split hash codes, and so every list
// order, are unknown: the lists are given sorted. los and his, the bounds of
// each position in the lists, are returned only when m keeps a trace. With
// reuse the lists live in m.bufs (the fresh start's batch).
func (m *restoreModel) batch(elems, universe []int32, n int, start int64, startKnown, reuse bool) (lists, loIns, los, his [][]int32) {
	buf := func(b *[]int32, k int) []int32 {
		if reuse {
			return scratch(m, b, k)
		}
		return make([]int32, k)
	}

	sorted := m.sortTPs(elems)
	setSpec := hashSpec{initialCap: -1, split: true, start: start, reason: reasonSetTree}
	base := orderTag{kind: tagBase, reason: reasonOffsets}
	switch {
	case !startKnown:
	case m.cfg.line == ConnectorLine5:
		base.flag = tagKnown
	default:
		base.reason = reasonSubscriber
	}
	for _, e := range sorted {
		m.setTag(e, base)
	}
	if startKnown && m.cfg.line == ConnectorLine34 {
		seq, lo := m.subscriberOrder(universe, elems)
		big := hashSpec{initialCap: len(seq), split: true, start: start, reason: reasonSetTree}
		sorted = make([]int32, len(seq))
		w := &m.sc[0]
		m.hashStage(w, seq, lo, big, sorted, nil, nil, nil)
		m.flush(w)
	}
	// Deal the sorted splits to their owners, every list in one array.
	owners := buf(&m.bufs.owners, len(sorted))
	at := make([]int, n+1)
	for i, e := range sorted {
		owners[i] = int32(m.owner(e, n))
		at[owners[i]+1]++
	}
	for r := range n {
		at[r+1] += at[r]
	}
	seqs := buf(&m.bufs.seqs, len(sorted))
	lists = make([][]int32, n)
	loIns = make([][]int32, n)
	// los (= loIns) and his are kept for the trace only; without one the
	// upper bounds go to scratch.
	var hiBuf []int32
	if m.trace != nil {
		los, his = make([][]int32, n), make([][]int32, n)
		hiBuf = make([]int32, len(sorted))
	} else {
		m.hiBuf = grow(m.hiBuf, len(sorted))
		hiBuf = m.hiBuf
	}
	for r := range n {
		lists[r] = seqs[at[r]:at[r]:at[r+1]]
	}
	for i, e := range sorted {
		lists[owners[i]] = append(lists[owners[i]], e)
	}
	order := buf(&m.bufs.order, len(sorted))
	loBuf := buf(&m.bufs.lo, len(sorted))
	clear(loBuf) // the lists of unknown order keep lower bounds 0
	longest := 0
	for _, seq := range lists {
		longest = max(longest, len(seq))
	}
	m.identity(longest) // grown here: the lists' stages only read it
	m.eachList(lists, func(w *hashScratch, r int) {
		seq := lists[r]
		a, b := at[r], at[r+1]
		lo, hi := loBuf[a:b:b], hiBuf[a:b:b]
		switch {
		case !startKnown:
			if m.rng != nil {
				m.rng.Shuffle(len(seq), func(i, j int) { seq[i], seq[j] = seq[j], seq[i] })
			}
			for i := range hi {
				hi[i] = int32(len(seq) - 1)
			}
		case m.cfg.line == ConnectorLine5:
			out := order[a:b:b]
			m.hashStage(w, seq, m.identity(len(seq)), setSpec, out, lo, hi, nil)
			lists[r] = out
		default:
			in := make([]int32, len(seq))
			m.runBounds(seq, m.lastBins(seq), nil, 0, in, nil, nil, nil)
			out := order[a:b:b]
			m.hashStage(w, seq, in, setSpec, out, lo, hi, nil)
			lists[r] = out
		}
		loIns[r] = lo
		if his != nil {
			los[r], his[r] = lo, hi
		}
	})
	return lists, loIns, los, his
}

// identity returns 0, 1, ..., n-1 (shared: do not modify).
func (m *restoreModel) identity(n int) []int32 {
	for i := len(m.iota); i < n; i++ {
		m.iota = append(m.iota, int32(i))
	}
	return m.iota[:n:n]
}

// sortTPs returns elems sorted by (topic rank, partition). Elements come in
// runs of one topic with ascending partitions, so bucketing by rank almost
// always sorts them; a bucket that is not ascending is sorted.
func (m *restoreModel) sortTPs(elems []int32) []int32 {
	at := make([]int, len(m.topics)+1)
	for _, e := range elems {
		at[m.el[e].rank+1]++
	}
	for r := range len(m.topics) {
		at[r+1] += at[r]
	}
	starts := slices.Clone(at)
	sorted := make([]int32, len(elems))
	for _, e := range elems {
		r := m.el[e].rank
		sorted[at[r]] = e
		at[r]++
	}
	for r := range len(m.topics) {
		bucket := sorted[starts[r]:starts[r+1]]
		if !slices.IsSortedFunc(bucket, m.cmpPartition) {
			slices.SortFunc(bucket, m.cmpPartition)
		}
	}
	return sorted
}

func (m *restoreModel) cmpPartition(a, b int32) int {
	return int(m.el[a].part) - int(m.el[b].part)
}

// subscriberOrder models the subscriber's new HashSet<TopicPartition>
// (TopicListSubscriber.getSubscribedTopicPartitions; hash code
// kafkaTopicPartitionHashCode) holding universe, inserted in an unknown
// order (ascending assumed), with every partition not in batch removed as
// KafkaSourceEnumerator.getPartitionChange does (removal does not reorder a
// list bin). It returns the batch in that set's iteration order with the
// lowest position each split can have, and tags each split of the batch.
func (m *restoreModel) subscriberOrder(universe, batch []int32) (seq, lo []int32) {
	all := m.sortTPs(universe)
	if m.rng != nil {
		m.rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	}
	in := make([]bool, len(m.el))
	for _, e := range batch {
		in[e] = true
	}
	jm := newJavaHashMap[int32](len(all))
	for _, e := range all {
		jm.put(e, m.el[e].tpHash)
	}
	m.stats[m.step].setTrees += jm.treeified
	if m.trace != nil {
		m.trace.treeified += jm.treeified
		m.trace.treeifyResizes += jm.treeifyResizes
	}
	var bins []int32
	var tree []bool
	for _, en := range jm.entries() {
		if in[en.key] {
			seq = append(seq, en.key)
			bins = append(bins, en.bin)
			tree = append(tree, en.inTree)
		}
	}
	// Every insertion order is possible: any partition can be among the
	// first ones, so a tree or a treeify resize is possible wherever 9
	// partitions share a bin at some capacity (treeRisk with no bounds).
	hash := func(e int32) int32 { return m.el[e].tpHash }
	capRisk, risky := m.treeRisk(&m.sc[0], all, make([]int32, len(all)), 0, jm.capacity(), -1, hash, func(int32) bool { return true })
	lo = make([]int32, len(seq))
	for s, before := 0, 0; s < len(seq); {
		t := s
		for t < len(seq) && bins[t] == bins[s] {
			t++
		}
		for i := s; i < t; i++ {
			e := seq[i]
			if capRisk {
				m.pushTag(e, orderTag{kind: tagHash, flag: tagTree, reason: reasonSubscriber})
				continue
			}
			lo[i] = int32(before)
			tag := orderTag{kind: tagHash, reason: reasonSetTree, a: bins[i]}
			switch {
			case t-s == 1:
				tag.flag = tagFull
			case tree[i] || (risky != nil && risky(e)):
				tag.flag = tagTree
			}
			m.pushTag(e, tag)
		}
		before += t - s
		s = t
	}
	return seq, lo
}

// appendDiscovered adds the partitions discovered after the last restore:
// one discovery batch at parallelism n, starting at earliest offsets (the
// enumerator's new-discovery initializer), added to each reader after its
// restored splits.
func (m *restoreModel) appendDiscovered(lists, loIns [][]int32, initial, discovered []int32, n int) ([][]int32, [][]int32) {
	add, addLo, _, _ := m.batch(discovered, append(slices.Clone(initial), discovered...), n, kafkaEarliestOffset, true, false)
	m.segment(add, 1, func(int, int) int32 { return 0 })
	for j := range lists {
		base := int32(len(lists[j]))
		lists[j] = append(lists[j], add[j]...)
		for _, lo := range addLo[j] {
			loIns[j] = append(loIns[j], base+lo)
		}
	}
	return lists, loIns
}

// readerMaps puts each list into its reader's HashMap<String, SplitContext>
// (SourceReaderBase.addSplits) and returns the snapshot lists
// (SourceReaderBase.snapshotState: HashMap iteration order), setting every
// split's position interval in its snapshot list.
func (m *restoreModel) readerMaps(lists, loIns [][]int32) [][]int32 {
	snaps := make([][]int32, len(lists))
	spec := hashSpec{initialCap: -1, reason: reasonMapTree}
	total, longest := 0, 0
	for _, seq := range lists {
		total += len(seq)
		longest = max(longest, len(seq))
	}
	slab := scratch(m, &m.bufs.snap, total)
	at := make([]int, len(lists)+1)
	for j, seq := range lists {
		at[j+1] = at[j] + len(seq)
	}
	m.eachList(lists, func(w *hashScratch, j int) {
		seq := lists[j]
		n := len(seq)
		order := slab[at[j]:at[j+1]:at[j+1]]
		w.lo, w.hi, w.why = grow(w.lo, longest), grow(w.hi, longest), grow(w.why, longest)
		lo, hi, why := w.lo[:n], w.hi[:n], w.why[:n]
		m.hashStage(w, seq, loIns[j], spec, order, lo, hi, why)
		for i, e := range order {
			el := &m.el[e]
			el.lo, el.hi, el.why = lo[i], hi[i], why[i]
		}
		snaps[j] = order
	})
	return snaps
}
