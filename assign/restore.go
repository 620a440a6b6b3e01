package assign

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"unicode/utf16"
)

// StartingOffsets values of RestoreInput: which OffsetsInitializer the
// KafkaSource was built with. Earliest and committed keep sentinel offsets in
// the splits the enumerator creates; the others resolve real broker offsets,
// which this model cannot know.
const (
	StartingOffsetsEarliest  = "earliest"  // OffsetsInitializer.earliest(), the KafkaSourceBuilder default
	StartingOffsetsCommitted = "committed" // OffsetsInitializer.committedOffsets(...)
	StartingOffsetsLatest    = "latest"    // OffsetsInitializer.latest()
	StartingOffsetsTimestamp = "timestamp" // OffsetsInitializer.timestamp(ms)
	StartingOffsetsSpecific  = "specific"  // OffsetsInitializer.offsets(map)
)

// ConnectorLine values of RestoreInput.
const (
	ConnectorLine5  = "5"   // flink-connector-kafka 5.0.x (Flink 2.1/2.2)
	ConnectorLine34 = "3-4" // flink-connector-kafka 3.x (Flink 1.x) and 4.0.x (Flink 2.0)
)

// MaxRestoreHistory bounds len(RestoreInput.History).
const MaxRestoreHistory = 64

// MaxRestorePartitions bounds the number of partitions Restore models.
const MaxRestorePartitions = 1 << 20

// Sentinel offsets of KafkaPartitionSplit (flink-connector-kafka
// KafkaPartitionSplit.java L36-46 in v3.4.0, v4.0.1 and v5.0.0).
const (
	kafkaEarliestOffset   int64 = -2       // EARLIEST_OFFSET
	kafkaCommittedOffset  int64 = -3       // COMMITTED_OFFSET
	kafkaNoStoppingOffset int64 = -1 << 63 // NO_STOPPING_OFFSET = Long.MIN_VALUE
	restoreSource               = "RoundRobinOperatorStateRepartitioner.repartitionSplitState over SourceReaderBase.snapshotState (HashMap order), KafkaSourceEnumerator.getSplitOwner for the fresh start"
)

// RestoreInput describes a KafkaSource job's history for Restore.
type RestoreInput struct {
	// Topics are the topics with the partition counts the job saw when it
	// started fresh.
	Topics []Topic
	// History lists the parallelisms of the source: History[0] at the fresh
	// start (no state), then one entry per restore from a savepoint or
	// checkpoint taken at the previous entry.
	History []int
	// StartingOffsets is the OffsetsInitializer of the fresh start: one of
	// the StartingOffsets* constants; "" means earliest.
	StartingOffsets string
	// ConnectorLine is ConnectorLine5 or ConnectorLine34; "" means 5.
	ConnectorLine string
	// NewTopics lists topics, or larger partition counts of topics in
	// Topics, that partition discovery finds after the last restore. Their
	// new partitions are assigned with KafkaSplitOwner at the last
	// parallelism, in one discovery batch starting at earliest offsets.
	NewTopics []Topic
}

// RestorePiece is one contiguous piece of an old subtask's saved split list
// that a new subtask restores.
type RestorePiece struct {
	OldSubtask int `json:"oldSubtask"`
	Count      int `json:"count"`
}

// RestoreResult is the placement after a restore.
type RestoreResult struct {
	// Assignment.Subtasks[j] lists the partitions of new subtask j in the
	// order of its restored split list (pieces in old-subtask order, see
	// Pieces), followed by partitions discovered after the restore.
	Assignment Assignment
	// Exact is false when any owner depends on something Flink does not make
	// deterministic or that we cannot know.
	Exact bool
	// Uncertain lists the partitions whose owner is not determined, topics
	// in input order and partitions ascending; empty when Exact. They are
	// still placed, at the model's best guess.
	Uncertain []TopicPartition
	// Source names the Flink code mirrored.
	Source string
	// Notes are plain-language caveats for the UI.
	Notes []string
	// Pieces[j] lists, for new subtask j at the last restore, the pieces of
	// old subtasks' split lists it restored, in old-subtask order, with
	// their sizes. Flink's own order of the pieces is random; their sizes are
	// exact even when owners are not. Nil when History has one entry.
	Pieces [][]RestorePiece
	// Snapshot[j] is the model's best guess of the split list new subtask j
	// writes to its next checkpoint (SourceReaderBase.snapshotState, HashMap
	// iteration order).
	Snapshot [][]TopicPartition
	// History, StartingOffsets and ConnectorLine are the inputs used, with
	// defaults filled in.
	History         []int
	StartingOffsets string
	ConnectorLine   string
}

// RestoreAssignment is Restore with History {from, to} and default options:
// the job started fresh at `from` parallelism with earliest offsets on
// connector 5.x and was restored once at `to`.
func RestoreAssignment(topics []Topic, from, to int) (RestoreResult, error) {
	return Restore(RestoreInput{Topics: topics, History: []int{from, to}})
}

// Restore models where Flink's KafkaSource places Kafka partition splits
// after the restores in in.History.
//
// It mirrors, per step (research notes /work/notes/restore-order.md):
//   - the fresh start: KafkaSourceEnumerator.getSplitOwner (connector
//     KafkaSourceEnumerator.java L468-475 in v3.4.0/v4.0.1, L599-606 in
//     v5.0.0), the per-reader pending HashSet<KafkaPartitionSplit>
//     (addPartitionSplitChangeToPendingAssignments L339-352 / L441-466, with
//     v5.0.0's (topic, partition) sort) and assignPendingPartitionSplits,
//     which sends each reader its set in HashSet iteration order;
//   - the reader: SourceReaderBase.addSplits puts the splits into a
//     HashMap<String, SplitContext> keyed by split id (Flink 1.20.3 L306-316,
//     2.2.0 L364-374) and snapshotState lists them in HashMap.forEach order
//     (1.20.3 L299-304, 2.2.0 L347-352);
//   - a restore: RoundRobinOperatorStateRepartitioner.repartitionState
//     returns the old handles unchanged when the parallelism is unchanged
//     (1.20.3 L70-79, 2.2.0 L71-80), otherwise repartitionSplitState
//     (1.20.3 L291, 2.2.0 L294) deals contiguous chunks of the old lists
//     concatenated in old-subtask order; SourceOperator.open adds the
//     restored list first (1.20.3 L358-363, 2.2.0 L417-428).
//
// Uncertainty is tracked pairwise: two splits that share a hash bucket keep
// their insertion order, which is unknown when it came from different pieces
// of a restore (Flink orders pieces by random state-handle names), from
// resolved offsets, from connector 3.x/4.x's subscriber order, or from a
// bin that (might) become a red-black tree. A partition is Uncertain when
// such an unknown order could put it on either side of a chunk boundary.
func Restore(in RestoreInput) (RestoreResult, error) {
	cfg, err := in.normalize()
	if err != nil {
		return RestoreResult{}, err
	}
	res, _ := runRestore(cfg, nil, false)
	return res, nil
}

// restoreConfig is a validated RestoreInput.
type restoreConfig struct {
	topics     []Topic
	history    []int
	offsets    string
	line       string
	newTopics  []Topic
	start      int64 // sentinel start offset when startKnown
	startKnown bool
}

func (in RestoreInput) normalize() (restoreConfig, error) {
	c := restoreConfig{offsets: in.StartingOffsets, line: in.ConnectorLine}
	if err := ValidateTopics(in.Topics); err != nil {
		return c, err
	}
	if len(in.History) == 0 {
		return c, errors.New("history is empty: give at least the parallelism the job started at")
	}
	if len(in.History) > MaxRestoreHistory {
		return c, fmt.Errorf("history has %d entries: at most %d are modelled", len(in.History), MaxRestoreHistory)
	}
	for i, p := range in.History {
		if err := CheckParallelism(p); err != nil {
			return c, fmt.Errorf("history[%d]: %w", i, err)
		}
	}
	switch c.offsets {
	case "", StartingOffsetsEarliest:
		c.offsets, c.start, c.startKnown = StartingOffsetsEarliest, kafkaEarliestOffset, true
	case StartingOffsetsCommitted:
		c.start, c.startKnown = kafkaCommittedOffset, true
	case StartingOffsetsLatest, StartingOffsetsTimestamp, StartingOffsetsSpecific:
	default:
		return c, fmt.Errorf("starting offsets %s: want earliest, committed, latest, timestamp or specific", clip(c.offsets))
	}
	switch c.line {
	case "":
		c.line = ConnectorLine5
	case ConnectorLine5, ConnectorLine34:
	default:
		return c, fmt.Errorf("connector line %s: want 5 (flink-connector-kafka 5.x) or 3-4 (3.x/4.x)", clip(c.line))
	}
	old := make(map[string]int, len(in.Topics))
	total := 0
	for _, t := range in.Topics {
		old[t.Name] = t.Partitions
		total += t.Partitions
	}
	seen := make(map[string]bool, len(in.NewTopics))
	for _, t := range in.NewTopics {
		if t.Name == "" {
			return c, errors.New("a new topic has an empty name")
		}
		if seen[t.Name] {
			return c, fmt.Errorf("new topic %s is listed twice", clip(t.Name))
		}
		seen[t.Name] = true
		if t.Partitions < 1 || t.Partitions > MaxPartitions {
			return c, fmt.Errorf("new topic %s has %d partitions: want 1..%d", clip(t.Name), t.Partitions, MaxPartitions)
		}
		if n, ok := old[t.Name]; ok {
			if t.Partitions < n {
				return c, fmt.Errorf("topic %s has %d partitions after the restore, fewer than the %d it started with: Kafka cannot remove partitions", clip(t.Name), t.Partitions, n)
			}
			total += t.Partitions - n
		} else {
			total += t.Partitions
		}
	}
	if total > MaxRestorePartitions {
		return c, fmt.Errorf("%d partitions in all: at most %d are modelled", total, MaxRestorePartitions)
	}
	c.topics = in.Topics
	c.history = in.History
	c.newTopics = in.NewTopics
	return c, nil
}

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

type restoreElem struct {
	tp      TopicPartition
	rank    int32 // topic rank in Java String.compareTo order
	idHash  int32 // String.hashCode of the split id
	tpHash  int32 // Kafka TopicPartition.hashCode
	isNew   bool  // discovered after the last restore
	certain bool
	lo, hi  int32 // position interval in the current snapshot list
	why     uint8 // reasons that widen [lo, hi]
	chain   []orderTag
}

// restoreModel runs Restore. With rng set it draws one of the orders Flink
// could produce where the best guess assumes one (tests use it to check that
// certain owners never move).
type restoreModel struct {
	cfg   restoreConfig
	el    []restoreElem
	rng   *rand.Rand
	trace *restoreTrace
	step  int
	stats []stepStats
}

type stepStats struct {
	from, to     int
	newUncertain []int32
	causes       uint8
	setTrees     int
	mapTrees     int
	mapTreeRisk  bool
	piecesMixed  bool
}

// restoreTrace keeps every step's lists for tests.
type restoreTrace struct {
	steps          []traceStep
	treeified      int // bins that became trees in any table
	treeifyResizes int // resizes done by treeifyBin below 64 bins
}

type traceStep struct {
	add, snap      [][]int32
	addLo, addHi   [][]int32 // step 0 only: bounds of the fresh batch lists
	snapLo, snapHi [][]int32
	certain        []bool
	owner          []int32
	parallelism    int
}

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

// javaCompareStrings is String.compareTo: lexicographic over UTF-16 code
// units (KafkaSourceEnumerator 5.0.0 sorts splits with
// Comparator.comparing(topic)).
func javaCompareStrings(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := range min(len(ua), len(ub)) {
		if ua[i] != ub[i] {
			return int(ua[i]) - int(ub[i])
		}
	}
	return len(ua) - len(ub)
}

func runRestore(cfg restoreConfig, rng *rand.Rand, trace bool) (RestoreResult, *restoreTrace) {
	m := &restoreModel{cfg: cfg, rng: rng}
	if trace {
		m.trace = &restoreTrace{}
	}
	total := 0
	for _, t := range cfg.topics {
		total += t.Partitions
	}
	m.el = make([]restoreElem, 0, total)
	initial := make([]int32, 0, total)
	var discovered []int32
	m.addTopics(cfg.topics, nil, &initial)
	if len(cfg.newTopics) > 0 {
		have := make(map[string]int, len(cfg.topics))
		for _, t := range cfg.topics {
			have[t.Name] = t.Partitions
		}
		m.addTopics(cfg.newTopics, have, &discovered)
	}
	m.rankTopics()
	m.giveChains()

	hist := cfg.history
	last := len(hist) - 1
	m.stats = make([]stepStats, len(hist))
	m.stats[0].from, m.stats[0].to = 0, hist[0]

	// Fresh start.
	lists, loIns, freshLo, freshHi := m.batch(initial, initial, hist[0], cfg.start, cfg.startKnown)
	m.segment(lists, 0, func(int, int) int32 { return 0 })
	var pieces [][]RestorePiece
	for s := 0; ; s++ {
		m.step = s
		if s == last && len(discovered) > 0 {
			lists, loIns = m.appendDiscovered(lists, loIns, initial, discovered, hist[s])
		}
		snaps := m.readerMaps(lists, loIns)
		if m.trace != nil {
			m.recordStep(lists, snaps, hist[s])
			if s == 0 {
				m.trace.steps[0].addLo, m.trace.steps[0].addHi = freshLo, freshHi
			}
		}
		if s == last {
			return m.result(lists, snaps, pieces), m.trace
		}
		m.step = s + 1
		m.stats[s+1].from, m.stats[s+1].to = hist[s], hist[s+1]
		lists, loIns, pieces = m.redistribute(snaps, hist[s+1])
	}
}

// addTopics appends the partitions of topics (those at or above have[name]
// when have is given) as elements.
func (m *restoreModel) addTopics(topics []Topic, have map[string]int, out *[]int32) {
	for _, t := range topics {
		th := StringHashCode(t.Name)
		from := 0
		if have != nil {
			from = have[t.Name]
		}
		for p := from; p < t.Partitions; p++ {
			tp := TopicPartition{Topic: t.Name, Partition: int32(p)}
			*out = append(*out, int32(len(m.el)))
			m.el = append(m.el, restoreElem{
				tp: tp, idHash: splitIDHashCode(th, int32(p)), tpHash: kafkaTopicPartitionHashCode(th, int32(p)),
				isNew: have != nil, certain: true,
			})
		}
	}
}

// giveChains backs every element's order chain with one shared array, room
// for the usual three tags each (longer chains grow on their own).
func (m *restoreModel) giveChains() {
	const room = 4
	arena := make([]orderTag, room*len(m.el))
	for i := range m.el {
		m.el[i].chain = arena[room*i : room*i : room*i+room]
	}
}

// rankTopics numbers the topic names in String.compareTo order.
func (m *restoreModel) rankTopics() {
	var names []string
	seen := map[string]bool{}
	for _, e := range m.el {
		if !seen[e.tp.Topic] {
			seen[e.tp.Topic] = true
			names = append(names, e.tp.Topic)
		}
	}
	sort.Slice(names, func(i, j int) bool { return javaCompareStrings(names[i], names[j]) < 0 })
	rank := make(map[string]int32, len(names))
	for i, n := range names {
		rank[n] = int32(i)
	}
	for i := range m.el {
		m.el[i].rank = rank[m.el[i].tp.Topic]
	}
}

// owner is KafkaSplitOwner in int32 arithmetic.
func (m *restoreModel) owner(e int32, n int) int {
	o, _ := KafkaSplitOwner(m.el[e].tp, n)
	return o
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
// order, are unknown: the lists are given sorted.
func (m *restoreModel) batch(elems, universe []int32, n int, start int64, startKnown bool) (lists, loIns, los, his [][]int32) {
	sorted := m.sortTPs(elems)
	lists = make([][]int32, n)
	loIns = make([][]int32, n)
	los = make([][]int32, n)
	his = make([][]int32, n)
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
		m.el[e].chain = append(m.el[e].chain[:0], base)
	}
	if startKnown && m.cfg.line == ConnectorLine34 {
		seq, lo := m.subscriberOrder(universe, elems)
		big := hashSpec{initialCap: len(seq), split: true, start: start, reason: reasonSetTree}
		sorted, _, _, _ = m.hashStage(seq, lo, big)
	}
	for _, e := range sorted {
		r := m.owner(e, n)
		lists[r] = append(lists[r], e)
	}
	for r, seq := range lists {
		switch {
		case !startKnown:
			if m.rng != nil {
				m.rng.Shuffle(len(seq), func(i, j int) { seq[i], seq[j] = seq[j], seq[i] })
			}
			loIns[r] = make([]int32, len(seq))
			los[r], his[r] = loIns[r], make([]int32, len(seq))
			for i := range his[r] {
				his[r][i] = int32(len(seq) - 1)
			}
		case m.cfg.line == ConnectorLine5:
			in := make([]int32, len(seq))
			for i := range in {
				in[i] = int32(i)
			}
			lists[r], los[r], his[r], _ = m.hashStage(seq, in, setSpec)
			loIns[r] = los[r]
		default:
			in, _, _, _ := m.runBounds(seq, m.lastBins(seq), nil)
			lists[r], los[r], his[r], _ = m.hashStage(seq, in, setSpec)
			loIns[r] = los[r]
		}
	}
	return lists, loIns, los, his
}

func (m *restoreModel) sortTPs(elems []int32) []int32 {
	sorted := slices.Clone(elems)
	slices.SortFunc(sorted, func(a, b int32) int {
		ea, eb := &m.el[a], &m.el[b]
		if ea.rank != eb.rank {
			return int(ea.rank) - int(eb.rank)
		}
		return int(ea.tp.Partition) - int(eb.tp.Partition)
	})
	return sorted
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
	in := make(map[int32]bool, len(batch))
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
	capRisk, risky := m.treeRisk(all, make([]int32, len(all)), 0, jm, -1, hash, func(int32) bool { return true })
	lo = make([]int32, len(seq))
	for s, before := 0, 0; s < len(seq); {
		t := s
		for t < len(seq) && bins[t] == bins[s] {
			t++
		}
		for i := s; i < t; i++ {
			e := seq[i]
			if capRisk {
				m.el[e].chain = append(m.el[e].chain, orderTag{kind: tagHash, flag: tagTree, reason: reasonSubscriber})
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
			m.el[e].chain = append(m.el[e].chain, tag)
		}
		before += t - s
		s = t
	}
	return seq, lo
}

// lastBins returns the bin of each split's newest hash tag.
func (m *restoreModel) lastBins(seq []int32) []int32 {
	bins := make([]int32, len(seq))
	for i, e := range seq {
		c := m.el[e].chain
		bins[i] = c[len(c)-1].a
	}
	return bins
}

// segment tags the splits of each list as one concatenated segment.
func (m *restoreModel) segment(lists [][]int32, rank int32, id func(list, i int) int32) {
	for j, seq := range lists {
		for i, e := range seq {
			m.el[e].chain = append(m.el[e].chain, orderTag{kind: tagSeg, a: rank, b: id(j, i)})
		}
	}
}

// appendDiscovered adds the partitions discovered after the last restore:
// one discovery batch at parallelism n, starting at earliest offsets (the
// enumerator's new-discovery initializer), added to each reader after its
// restored splits.
func (m *restoreModel) appendDiscovered(lists, loIns [][]int32, initial, discovered []int32, n int) ([][]int32, [][]int32) {
	add, addLo, _, _ := m.batch(discovered, append(slices.Clone(initial), discovered...), n, kafkaEarliestOffset, true)
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
	for j, seq := range lists {
		order, lo, hi, why := m.hashStage(seq, loIns[j], spec)
		for i, e := range order {
			el := &m.el[e]
			el.lo, el.hi, el.why = lo[i], hi[i], why[i]
		}
		snaps[j] = order
	}
	return snaps
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
// returns its iteration order with, per position, the interval of positions
// the split can have in Flink (counting only splits with certain owners) and
// the reasons that widen it. loIns[i] is the lowest position seq[i] can have
// in the insertion sequence. It appends a tagHash to every split's chain.
func (m *restoreModel) hashStage(seq, loIns []int32, spec hashSpec) (order, lo, hi []int32, why []uint8) {
	var jm *javaHashMap[int32]
	if spec.initialCap >= 0 {
		jm = newJavaHashMapCap[int32](spec.initialCap)
	} else {
		jm = newJavaHashMap[int32](len(seq))
	}
	for _, e := range seq {
		jm.put(e, m.hashOf(e, spec))
	}
	st := &m.stats[m.step]
	if spec.split {
		st.setTrees += jm.treeified
	} else {
		st.mapTrees += jm.treeified
	}
	if m.trace != nil {
		m.trace.treeified += jm.treeified
		m.trace.treeifyResizes += jm.treeifyResizes
	}
	ents := jm.entries()
	order = make([]int32, len(ents))
	bins := make([]int32, len(ents))
	tree := make([]bool, len(ents))
	for i, en := range ents {
		order[i], bins[i], tree[i] = en.key, en.bin, en.inTree
	}

	u := 0
	unknown := false
	for i, e := range seq {
		if !m.el[e].certain {
			u++
		}
		if loIns[i] < int32(i) {
			unknown = true
		}
	}
	if u > 0 || unknown {
		capRisk, risky := m.treeRisk(seq, loIns, u, jm, spec.initialCap,
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
			st.mapTreeRisk = true
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

	lo, hi, why, full := m.runBounds(order, bins, func(i, k int) (bool, uint8) {
		if tree[i] && tree[k] {
			return false, spec.reason
		}
		return m.known(order[i], order[k])
	})
	for i, e := range order {
		el := &m.el[e]
		if full[i] {
			// Known against every split of its bin: older tags are never needed again.
			el.chain = append(el.chain[:0], orderTag{kind: tagHash, flag: tagFull, a: bins[i]})
			continue
		}
		var f uint8
		if tree[i] {
			f = tagTree
		}
		el.chain = append(el.chain, orderTag{kind: tagHash, flag: f, reason: spec.reason, a: bins[i]})
	}
	if u > 0 {
		for i := range why {
			why[i] |= reasonMembership
		}
	}
	return order, lo, hi, why
}

// runBounds returns, for a sequence ordered by bins (ties in one bin are a
// run), the lowest and highest position each element can have when only
// pairs for which pair (nil: restoreModel.known) says the order is known
// are fixed, counting only elements with certain owners; the reasons of the
// unknown pairs; and whether each element's order is known against every
// other element of its run.
func (m *restoreModel) runBounds(order, bins []int32, pair func(i, k int) (bool, uint8)) (lo, hi []int32, why []uint8, full []bool) {
	if pair == nil {
		pair = func(i, k int) (bool, uint8) { return m.known(order[i], order[k]) }
	}
	n := len(order)
	lo, hi, why, full = make([]int32, n), make([]int32, n), make([]uint8, n), make([]bool, n)
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
			full[i] = true
			for k := s; k < t; k++ {
				if k == i {
					continue
				}
				ok, r := pair(i, k)
				if !ok {
					why[i] |= r
					full[i] = false
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
			hi[i] = int32(n - 1 - after - ka)
		}
		before += in
		s = t
	}
	return lo, hi, why, full
}

// known reports whether the relative order of x and y, two splits in the
// same sequence, is the same in every run of Flink that this model cannot
// tell apart, and if not, why.
func (m *restoreModel) known(x, y int32) (bool, uint8) {
	cx, cy := m.el[x].chain, m.el[y].chain
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
func (m *restoreModel) treeRisk(seq, loIns []int32, u int, jm *javaHashMap[int32], initialCap int, hashOf func(int32) int32, counted func(int32) bool) (capRisk bool, risky func(int32) bool) {
	n := len(seq)
	if n < javaTreeifyThreshold+1 {
		return false, nil
	}
	final := jm.capacity()
	normal := javaNormalCapacity(initialCap, n)
	if final != normal {
		return true, nil
	}
	hash := make([]uint32, n)
	for i, e := range seq {
		hash[i] = uint32(javaSpread(hashOf(e)))
	}
	if normal < javaMinTreeifyCapacity {
		counts := make([]int, normal)
		for i, e := range seq {
			if counted(e) {
				counts[hash[i]&uint32(normal-1)]++
			}
		}
		return slices.Max(counts)+u >= javaTreeifyThreshold+1, nil
	}
	var marks map[int32]bool
	counts := make([]int, final)
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

// redistribute is the restore at parallelism q of the snapshot lists of the
// previous step: RoundRobinOperatorStateRepartitioner.repartitionState
// (flink-runtime, 1.20.3 L70-79 and repartitionSplitState L291; 2.2.0
// L71-80 and L294). Unchanged parallelism keeps each list; otherwise the
// lists are concatenated in old-subtask order and new subtask j receives the
// chunk starting at j*b + min(j, r) of length b + [j < r], b = T/q,
// r = T%q. A split whose possible positions span two chunks gets an
// undetermined owner.
func (m *restoreModel) redistribute(snaps [][]int32, q int) (lists, loIns [][]int32, pieces [][]RestorePiece) {
	p := len(snaps)
	lists = make([][]int32, q)
	loIns = make([][]int32, q)
	pieces = make([][]RestorePiece, q)
	st := &m.stats[m.step]
	if q == p {
		for j, snap := range snaps {
			lists[j] = slices.Clone(snap)
			loIns[j] = make([]int32, len(snap))
			for i, e := range snap {
				loIns[j][i] = m.el[e].lo
			}
			if len(snap) > 0 {
				pieces[j] = []RestorePiece{{OldSubtask: j, Count: len(snap)}}
			}
		}
		m.segment(lists, 0, func(j, _ int) int32 { return int32(j) })
		return lists, loIns, pieces
	}
	total := 0
	for _, s := range snaps {
		total += len(s)
	}
	b, r := total/q, total%q
	chunkOf := func(pos int) int {
		if pos < r*(b+1) {
			return pos / (b + 1)
		}
		return r + (pos-r*(b+1))/b
	}
	chunkStart := func(j int) int { return j*b + min(j, r) }
	segs := make([][]int32, q) // per new subtask: old subtask of each split
	for j := range q {
		size := b
		if j < r {
			size++
		}
		lists[j] = make([]int32, 0, size)
		loIns[j] = make([]int32, 0, size)
		segs[j] = make([]int32, 0, size)
	}
	off := 0
	for k, snap := range snaps {
		for i, e := range snap {
			el := &m.el[e]
			j := chunkOf(off + i)
			pieceStart := max(chunkStart(j)-off, 0)
			if el.certain && chunkOf(off+int(el.lo)) != chunkOf(off+int(el.hi)) {
				el.certain = false
				st.newUncertain = append(st.newUncertain, e)
				st.causes |= el.why
			}
			li := int32(0)
			if el.certain {
				li = max(el.lo-int32(pieceStart), 0)
			}
			lists[j] = append(lists[j], e)
			loIns[j] = append(loIns[j], li)
			segs[j] = append(segs[j], int32(k))
			if n := len(pieces[j]); n > 0 && pieces[j][n-1].OldSubtask == k {
				pieces[j][n-1].Count++
			} else {
				pieces[j] = append(pieces[j], RestorePiece{OldSubtask: k, Count: 1})
			}
		}
		off += len(snap)
	}
	for j := range lists {
		if len(pieces[j]) > 1 {
			st.piecesMixed = true
		}
		if m.rng != nil && len(pieces[j]) > 1 {
			lists[j], loIns[j], segs[j] = shufflePieces(m.rng, lists[j], loIns[j], segs[j])
		}
	}
	m.segment(lists, 0, func(j, i int) int32 { return segs[j][i] })
	return lists, loIns, pieces
}

// shufflePieces reorders whole pieces (runs of one old subtask) at random, as
// the HashMap<StreamStateHandle, ...> of repartitionSplitState may.
func shufflePieces(rng *rand.Rand, list, lo, seg []int32) ([]int32, []int32, []int32) {
	type piece struct{ s, t int }
	var ps []piece
	for s := 0; s < len(list); {
		t := s
		for t < len(list) && seg[t] == seg[s] {
			t++
		}
		ps = append(ps, piece{s, t})
		s = t
	}
	rng.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
	nl, nlo, ns := make([]int32, 0, len(list)), make([]int32, 0, len(list)), make([]int32, 0, len(list))
	for _, p := range ps {
		nl = append(nl, list[p.s:p.t]...)
		nlo = append(nlo, lo[p.s:p.t]...)
		ns = append(ns, seg[p.s:p.t]...)
	}
	return nl, nlo, ns
}

func (m *restoreModel) recordStep(lists, snaps [][]int32, n int) {
	ts := traceStep{parallelism: n, certain: make([]bool, len(m.el)), owner: make([]int32, len(m.el))}
	for i := range ts.owner {
		ts.owner[i] = -1
	}
	for j, l := range lists {
		ts.add = append(ts.add, slices.Clone(l))
		for _, e := range l {
			ts.owner[e] = int32(j)
		}
	}
	for _, s := range snaps {
		ts.snap = append(ts.snap, slices.Clone(s))
		lo, hi := make([]int32, len(s)), make([]int32, len(s))
		for i, e := range s {
			lo[i], hi[i] = m.el[e].lo, m.el[e].hi
		}
		ts.snapLo, ts.snapHi = append(ts.snapLo, lo), append(ts.snapHi, hi)
	}
	for i, e := range m.el {
		ts.certain[i] = e.certain
	}
	m.trace.steps = append(m.trace.steps, ts)
}

func (m *restoreModel) result(lists, snaps [][]int32, pieces [][]RestorePiece) RestoreResult {
	cfg := m.cfg
	q := cfg.history[len(cfg.history)-1]
	a := Assignment{Parallelism: q, Owner: make(map[TopicPartition]int, len(m.el)), Subtasks: make([][]TopicPartition, q)}
	res := RestoreResult{
		Assignment:      a,
		Source:          restoreSource,
		Pieces:          pieces,
		Snapshot:        make([][]TopicPartition, q),
		History:         slices.Clone(cfg.history),
		StartingOffsets: cfg.offsets,
		ConnectorLine:   cfg.line,
	}
	for j, l := range lists {
		if len(l) == 0 {
			continue
		}
		a.Subtasks[j] = make([]TopicPartition, len(l))
		res.Snapshot[j] = make([]TopicPartition, len(l))
		for i, e := range l {
			a.Subtasks[j][i] = m.el[e].tp
			a.Owner[m.el[e].tp] = j
		}
		for i, e := range snaps[j] {
			res.Snapshot[j][i] = m.el[e].tp
		}
	}
	res.Uncertain = []TopicPartition{}
	for _, e := range m.el {
		if !e.certain {
			res.Uncertain = append(res.Uncertain, e.tp)
		}
	}
	res.Exact = len(res.Uncertain) == 0
	res.Notes = m.notes(pieces)
	return res
}

func (m *restoreModel) notes(pieces [][]RestorePiece) []string {
	cfg := m.cfg
	h := cfg.history
	last := len(h) - 1
	var notes []string
	hist := strings.Trim(strings.ReplaceAll(fmt.Sprint(h), " ", " → "), "[]")
	rescaled := false
	for s := 1; s <= last; s++ {
		rescaled = rescaled || h[s] != h[s-1]
	}
	switch {
	case last == 0:
		notes = append(notes, "No restore in the history: every partition is placed by the fresh-start hash rule (KafkaSourceEnumerator.getSplitOwner), as in the fresh layout.")
	case !rescaled:
		notes = append(notes, fmt.Sprintf("History %s: every restore kept the parallelism, so each subtask got back exactly its own splits and the layout is the fresh-start hash rule (getSplitOwner).", hist))
	default:
		notes = append(notes, fmt.Sprintf("This layout depends on the history %s, not on the hash rule (getSplitOwner): at a restore with a different parallelism Flink deals each new subtask a contiguous chunk of the old subtasks' saved split lists (RoundRobinOperatorStateRepartitioner), and each saved list is in the reader's HashMap order.", hist))
	}
	offs := cfg.offsets
	if offs == StartingOffsetsEarliest {
		offs += " (the KafkaSourceBuilder default)"
	}
	notes = append(notes, fmt.Sprintf("Assumes the job started fresh at parallelism %d with all these partitions discovered at start, starting offsets %s, no stopping offsets, and no failover, split loss or partition discovery between savepoints.", h[0], offs))
	if cfg.line == ConnectorLine5 {
		notes = append(notes, "Assumes flink-connector-kafka 5.x: its enumerator sorts new splits by (topic, partition) before putting them into each reader's pending HashSet.")
	} else {
		notes = append(notes, "Assumes flink-connector-kafka 3.x/4.x: its enumerator first collects new splits in a HashSet filled in the topic subscriber's order, which is not known; ascending (topic, partition) order was assumed.")
	}
	if !cfg.startKnown {
		notes = append(notes, fmt.Sprintf("Starting offsets %s are resolved to real broker offsets by the enumerator, and they are part of each split's hash code: the order in which a reader first got its splits is unknown, so split ids sharing a HashMap bucket have an unknown order in its saved list.", cfg.offsets))
	}
	if len(cfg.newTopics) > 0 {
		n := 0
		for _, e := range m.el {
			if e.isNew {
				n++
			}
		}
		if n > 0 {
			notes = append(notes, fmt.Sprintf("%d partitions discovered after the last restore are placed by the hash rule at parallelism %d, after the restored splits; discovery batches after the first start at earliest offsets.", n, h[last]))
		}
	}
	if last > 0 && m.stats[last].piecesMixed {
		notes = append(notes, "Inside a new subtask the pieces from different old subtasks come in an order Flink does not fix (a HashMap keyed by random state-handle names); the lists show them in old-subtask order. Which partitions a subtask gets does not depend on it, but the order of its next savepoint can.")
	}
	earlier := false
	for s := 1; s <= last; s++ {
		st := m.stats[s]
		if len(st.newUncertain) == 0 {
			continue
		}
		if s < last {
			earlier = true
		}
		slices.Sort(st.newUncertain) // topics in input order, partitions ascending
		names := make([]string, 0, 6)
		for i, e := range st.newUncertain {
			if i == 5 {
				names = append(names, fmt.Sprintf("and %d more", len(st.newUncertain)-5))
				break
			}
			names = append(names, m.el[e].tp.SplitID())
		}
		notes = append(notes, fmt.Sprintf("Restore from %d to %d subtasks: the owner of %d partition(s) (%s) is not determined. They sit at a boundary between two new subtasks' chunks, and their position in the old saved list depends on %s.",
			st.from, st.to, len(st.newUncertain), strings.Join(names, ", "), causeText(st.causes, cfg.offsets)))
	}
	if earlier {
		notes = append(notes, "Owners became undetermined before the last restore, so the later layout is approximate: partitions after an undetermined one in a saved list may sit one or more places off.")
	}
	setTrees, mapTrees, risk := 0, 0, false
	for _, st := range m.stats {
		setTrees += st.setTrees
		mapTrees += st.mapTrees
		risk = risk || st.mapTreeRisk
	}
	if setTrees > 0 {
		notes = append(notes, fmt.Sprintf("%d bin(s) of the enumerator's HashSet<KafkaPartitionSplit> grew to 9 splits and became red-black trees, whose order depends on identity hash codes (random per JVM); the splits in those bins have an unknown order.", setTrees))
	}
	if mapTrees > 0 || risk {
		notes = append(notes, "Some bin of a reader's HashMap of split ids would or might reach 9 ids, which turns it into a red-black tree (or, below 64 bins, resizes the table early); Flink's order there is deterministic but not modelled here, so it is treated as unknown.")
	}
	return notes
}

func causeText(c uint8, offsets string) string {
	var parts []string
	if c&reasonPieces != 0 {
		parts = append(parts, "the order in which an earlier restore merged pieces of different old subtasks (Flink orders them by random state-handle names)")
	}
	if c&reasonOffsets != 0 {
		parts = append(parts, fmt.Sprintf("the real starting offsets the enumerator resolved (%s), which are part of each split's hash code", offsets))
	}
	if c&reasonSubscriber != 0 {
		parts = append(parts, "the order in which the topic subscriber returned partitions (connector 3.x/4.x)")
	}
	if c&reasonSetTree != 0 {
		parts = append(parts, "a bin of the enumerator's HashSet that became a red-black tree (identity hash order)")
	}
	if c&reasonMapTree != 0 {
		parts = append(parts, "a bin of the reader's HashMap that would or might become a red-black tree (not modelled)")
	}
	if c&reasonMembership != 0 {
		parts = append(parts, "owners left undetermined by an earlier restore")
	}
	if len(parts) == 0 {
		return "an order this model cannot determine"
	}
	return strings.Join(parts, "; and on ")
}
