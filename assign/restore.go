package assign

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"github.com/skewscope/skewscope/internal/quote"
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
	// Assignment.Topics are the input Topics with the partition counts of
	// NewTopics, followed by the new topics not among them.
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
		return c, fmt.Errorf("starting offsets %s: want earliest, committed, latest, timestamp or specific", quote.Clip(c.offsets))
	}
	switch c.line {
	case "":
		c.line = ConnectorLine5
	case ConnectorLine5, ConnectorLine34:
	default:
		return c, fmt.Errorf("connector line %s: want 5 (flink-connector-kafka 5.x) or 3-4 (3.x/4.x)", quote.Clip(c.line))
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
			return c, fmt.Errorf("new topic %s is listed twice", quote.Clip(t.Name))
		}
		seen[t.Name] = true
		if t.Partitions < 1 || t.Partitions > MaxPartitions {
			return c, fmt.Errorf("new topic %s has %d partitions: want 1..%d", quote.Clip(t.Name), t.Partitions, MaxPartitions)
		}
		if n, ok := old[t.Name]; ok {
			if t.Partitions < n {
				return c, fmt.Errorf("topic %s has %d partitions after the restore, fewer than the %d it started with: Kafka cannot remove partitions", quote.Clip(t.Name), t.Partitions, n)
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

// restoreElem is one split. It holds no pointers (the GC never scans the
// element array) and fits one cache line with its usual order chain.
type restoreElem struct {
	part   int32 // partition number
	topic  int32 // index in restoreModel.topics
	rank   int32 // topic rank in Java String.compareTo order
	idHash int32 // String.hashCode of the split id
	tpHash int32 // Kafka TopicPartition.hashCode
	lo, hi int32 // position interval in the current snapshot list
	// The order chain: inline[:nChain] while capChain is 0, else
	// restoreModel.tags[more : more+nChain] with room for capChain tags. A
	// chain grows by at most two tags per history step, and most are reset
	// to one tag at every hash stage, so they rarely leave inline.
	inline           [2]orderTag
	more             int32
	nChain, capChain uint16
	isNew            bool // discovered after the last restore
	certain          bool
	why              uint8 // reasons that widen [lo, hi]
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
	// topics are cfg.topics merged with cfg.newTopics (restoreAllTopics
	// order): the result's Topics. h31 is each one's
	// (hashCode*31) & 0x7FFFFFFF (KafkaStartIndex is h31 % n), offset its
	// first global index.
	topics []Topic
	h31    []int32
	offset []int32
	// tags holds the order chains too long for restoreElem.inline.
	tags []orderTag
	// Scratch reused by every hashStage: the table, its entries, per-entry
	// bins, tree flags and runBounds' full flags, and buffers for bounds
	// the caller does not keep.
	jm   *javaHashMap[int32]
	ents []javaEntry[int32]
	bins []int32
	tree []bool
	full []bool
	lo   []int32
	hi   []int32
	why  []uint8
	iota []int32
	// hashStage's spread hashes, iteration order and javaHashOrder scratch.
	hs     []uint32
	perm   []int32
	counts []int32
	// treeRisk's scratch.
	riskHash   []uint32
	riskCounts []int
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
	ua, ub := appendJavaUTF16(nil, a), appendJavaUTF16(nil, b)
	for i := range min(len(ua), len(ub)) {
		if ua[i] != ub[i] {
			return int(ua[i]) - int(ub[i])
		}
	}
	return len(ua) - len(ub)
}

func runRestore(cfg restoreConfig, rng *rand.Rand, trace bool) (RestoreResult, *restoreTrace) {
	m := &restoreModel{cfg: cfg, rng: rng, jm: newJavaHashMap[int32](0)}
	if trace {
		m.trace = &restoreTrace{}
	}
	m.mergeTopics()
	rank := m.rankTopics()
	total := int(m.offset[len(m.offset)-1])
	m.el = make([]restoreElem, 0, total)
	initial := make([]int32, 0, total)
	var discovered []int32
	m.addTopics(cfg.topics, nil, rank, &initial)
	if len(cfg.newTopics) > 0 {
		have := make(map[string]int, len(cfg.topics))
		for _, t := range cfg.topics {
			have[t.Name] = t.Partitions
		}
		m.addTopics(cfg.newTopics, have, rank, &discovered)
	}

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

// mergeTopics sets topics, h31 and offset: cfg.topics with the partition
// counts of cfg.newTopics, then the new topics that are not in cfg.topics.
func (m *restoreModel) mergeTopics() {
	cfg := m.cfg
	m.topics = slices.Clone(cfg.topics)
	if len(cfg.newTopics) > 0 {
		at := make(map[string]int, len(m.topics))
		for i, t := range m.topics {
			at[t.Name] = i
		}
		for _, t := range cfg.newTopics {
			if i, ok := at[t.Name]; ok {
				m.topics[i].Partitions = t.Partitions
			} else {
				m.topics = append(m.topics, t)
			}
		}
	}
	m.h31 = make([]int32, len(m.topics))
	m.offset = make([]int32, len(m.topics)+1)
	for i, t := range m.topics {
		m.h31[i] = (StringHashCode(t.Name) * 31) & 0x7FFFFFFF
		m.offset[i+1] = m.offset[i] + int32(t.Partitions)
	}
}

// addTopics appends the partitions of topics (those at or above have[name]
// when have is given) as elements; rank is rankTopics' result.
func (m *restoreModel) addTopics(topics []Topic, have map[string]int, rank []int32, out *[]int32) {
	ti := 0
	for _, t := range topics {
		if have != nil {
			ti = slices.IndexFunc(m.topics, func(x Topic) bool { return x.Name == t.Name })
		}
		th := StringHashCode(t.Name)
		from := 0
		if have != nil {
			from = have[t.Name]
		}
		first := len(m.el)
		m.el = m.el[:first+t.Partitions-from] // room reserved by runRestore
		for i := range m.el[first:] {
			p := int32(from + i)
			el := &m.el[first+i]
			el.part, el.topic, el.rank = p, int32(ti), rank[ti]
			el.idHash, el.tpHash = splitIDHashCode(th, p), kafkaTopicPartitionHashCode(th, p)
			el.isNew, el.certain = have != nil, true
			*out = append(*out, int32(first+i))
		}
		ti++
	}
}

// chainOf returns the order chain of e (valid until the next pushTag).
func (m *restoreModel) chainOf(e int32) []orderTag {
	el := &m.el[e]
	if el.capChain == 0 {
		return el.inline[:el.nChain]
	}
	return m.tags[el.more : el.more+int32(el.nChain)]
}

// pushTag appends t to the order chain of e.
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
		start := len(m.tags)
		m.tags = append(m.tags, el.inline[:n]...)
		m.tags = append(m.tags, make([]orderTag, n)...)
		el.more, el.capChain = int32(start), uint16(2*n)
	} else if n == int(el.capChain) {
		start := len(m.tags)
		m.tags = append(m.tags, m.tags[el.more:int(el.more)+n]...)
		m.tags = append(m.tags, make([]orderTag, n)...)
		el.more, el.capChain = int32(start), uint16(2*n)
	}
	m.tags[el.more+int32(n)] = t
	el.nChain++
}

// setTag makes t the whole order chain of e.
func (m *restoreModel) setTag(e int32, t orderTag) {
	el := &m.el[e]
	el.inline[0], el.nChain, el.capChain = t, 1, 0
}

// tp names element e.
func (m *restoreModel) tp(e int32) TopicPartition {
	el := &m.el[e]
	return TopicPartition{Topic: m.topics[el.topic].Name, Partition: el.part}
}

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

// global is the index of element e in the result's Topics order.
func (m *restoreModel) global(e int32) int32 {
	el := &m.el[e]
	return m.offset[el.topic] + el.part
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
		m.hashStage(seq, lo, big, sorted, nil, nil, nil)
	}
	// Deal the sorted splits to their owners, every list in one array.
	owners := make([]int32, len(sorted))
	at := make([]int, n+1)
	for i, e := range sorted {
		owners[i] = int32(m.owner(e, n))
		at[owners[i]+1]++
	}
	for r := range n {
		at[r+1] += at[r]
	}
	seqs := make([]int32, len(sorted))
	lists = make([][]int32, n)
	loIns = make([][]int32, n)
	los = make([][]int32, n)
	his = make([][]int32, n)
	for r := range n {
		lists[r] = seqs[at[r]:at[r]:at[r+1]]
	}
	for i, e := range sorted {
		lists[owners[i]] = append(lists[owners[i]], e)
	}
	order := make([]int32, len(sorted))
	loBuf := make([]int32, len(sorted))
	hiBuf := make([]int32, len(sorted))
	for r, seq := range lists {
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
			loIns[r], los[r], his[r] = lo, lo, hi
			continue
		case m.cfg.line == ConnectorLine5:
			out := order[a:b:b]
			m.hashStage(seq, m.identity(len(seq)), setSpec, out, lo, hi, nil)
			lists[r] = out
		default:
			in := make([]int32, len(seq))
			m.runBounds(seq, m.lastBins(seq), nil, 0, in, nil, nil, nil)
			out := order[a:b:b]
			m.hashStage(seq, in, setSpec, out, lo, hi, nil)
			lists[r] = out
		}
		loIns[r], los[r], his[r] = lo, lo, hi
	}
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
	capRisk, risky := m.treeRisk(all, make([]int32, len(all)), 0, jm.capacity(), -1, hash, func(int32) bool { return true })
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
	total, longest := 0, 0
	for _, seq := range lists {
		total += len(seq)
		longest = max(longest, len(seq))
	}
	slab := make([]int32, total)
	m.lo, m.hi, m.why = grow(m.lo, longest), grow(m.hi, longest), grow(m.why, longest)
	off := 0
	for j, seq := range lists {
		n := len(seq)
		order := slab[off : off+n : off+n]
		off += n
		lo, hi, why := m.lo[:n], m.hi[:n], m.why[:n]
		m.hashStage(seq, loIns[j], spec, order, lo, hi, why)
		for i, e := range order {
			el := &m.el[e]
			el.lo, el.hi, el.why = lo[i], hi[i], why[i]
		}
		snaps[j] = order
	}
	return snaps
}

// grow returns s resized to length n, reallocated only when too small.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
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
func (m *restoreModel) hashStage(seq, loIns []int32, spec hashSpec, order, lo, hi []int32, why []uint8) {
	n := len(seq)
	st := &m.stats[m.step]
	if lo == nil {
		m.lo, m.hi = grow(m.lo, n), grow(m.hi, n)
		lo, hi = m.lo, m.hi
	}
	if why == nil {
		m.why = grow(m.why, n)
		why = m.why
	}
	hs := grow(m.hs, n)
	m.hs = hs
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
	perm := grow(m.perm, n)
	m.perm = perm
	capacity, ok, counts := javaHashOrder(hs, spec.initialCap, perm, m.counts)
	m.counts = counts
	if ok && u == 0 && !unknown {
		m.knownStage(seq, hs, perm, capacity, spec.reason, order, lo, hi, why)
		return
	}
	bins := grow(m.bins, n)
	tree := grow(m.tree, n)
	m.bins, m.tree = bins, tree
	if ok {
		mask := uint32(capacity - 1)
		for i, k := range perm {
			order[i], bins[i], tree[i] = seq[k], int32(hs[k]&mask), false
		}
	} else {
		jm := m.jm
		jm.reset(spec.initialCap, n)
		for _, e := range seq {
			jm.put(e, m.hashOf(e, spec))
		}
		if spec.split {
			st.setTrees += jm.treeified
		} else {
			st.mapTrees += jm.treeified
		}
		if m.trace != nil {
			m.trace.treeified += jm.treeified
			m.trace.treeifyResizes += jm.treeifyResizes
		}
		m.ents = jm.appendEntries(m.ents[:0])
		for i, en := range m.ents {
			order[i], bins[i], tree[i] = en.key, en.bin, en.inTree
		}
		capacity = jm.capacity()
	}

	if u > 0 || unknown {
		capRisk, risky := m.treeRisk(seq, loIns, u, capacity, spec.initialCap,
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

	full := grow(m.full, n)
	m.full = full
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
func (m *restoreModel) knownStage(seq []int32, hs []uint32, perm []int32, capacity int, reason uint8, order, lo, hi []int32, why []uint8) {
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
		full := m.full[:0]
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
		m.full = full
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
func (m *restoreModel) treeRisk(seq, loIns []int32, u int, final int, initialCap int, hashOf func(int32) int32, counted func(int32) bool) (capRisk bool, risky func(int32) bool) {
	n := len(seq)
	if n < javaTreeifyThreshold+1 {
		return false, nil
	}
	normal := javaNormalCapacity(initialCap, n)
	if final != normal {
		return true, nil
	}
	m.riskHash = grow(m.riskHash, n)
	hash := m.riskHash
	for i, e := range seq {
		hash[i] = uint32(javaSpread(hashOf(e)))
	}
	if normal < javaMinTreeifyCapacity {
		m.riskCounts = grow(m.riskCounts, normal)
		counts := m.riskCounts
		clear(counts)
		for i, e := range seq {
			if counted(e) {
				counts[hash[i]&uint32(normal-1)]++
			}
		}
		return slices.Max(counts)+u >= javaTreeifyThreshold+1, nil
	}
	var marks map[int32]bool
	m.riskCounts = grow(m.riskCounts, final)
	counts := m.riskCounts
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
	total := 0
	for _, s := range snaps {
		total += len(s)
	}
	// Every list, bound and piece of this step lives in one array each; the
	// lists are capped so that appends reallocate.
	listSlab := make([]int32, total)
	loSlab := make([]int32, total)
	if q == p {
		pieceSlab := make([]RestorePiece, 0, p)
		off := 0
		for j, snap := range snaps {
			n := len(snap)
			lists[j] = listSlab[off : off+n : off+n]
			loIns[j] = loSlab[off : off+n : off+n]
			off += n
			copy(lists[j], snap)
			for i, e := range snap {
				loIns[j][i] = m.el[e].lo
			}
			if n > 0 {
				pieceSlab = append(pieceSlab, RestorePiece{OldSubtask: j, Count: n})
				k := len(pieceSlab)
				pieces[j] = pieceSlab[k-1 : k : k]
			}
		}
		m.segment(lists, 0, func(j, _ int) int32 { return int32(j) })
		return lists, loIns, pieces
	}
	b, r := total/q, total%q
	chunkOf := func(pos int) int {
		if pos < r*(b+1) {
			return pos / (b + 1)
		}
		return r + (pos-r*(b+1))/b
	}
	chunkStart := func(j int) int { return j*b + min(j, r) }
	segSlab := make([]int32, total) // per new subtask: old subtask of each split
	segs := make([][]int32, q)
	for j := range q {
		lo, hi := chunkStart(j), chunkStart(j+1)
		lists[j] = listSlab[lo:hi:hi]
		loIns[j] = loSlab[lo:hi:hi]
		segs[j] = segSlab[lo:hi:hi]
	}
	// The concatenated lists are dealt in order: new subtask j takes
	// positions chunkStart(j) .. chunkStart(j+1)-1, so j only grows and the
	// pieces come in (j, old subtask) order.
	pieceSlab := make([]RestorePiece, 0, p+q)
	pieceOf := make([]int32, 0, p+q) // new subtask of each piece
	j, next := 0, chunkStart(1)
	off := 0
	for k, snap := range snaps {
		for i, e := range snap {
			pos := off + i
			for pos >= next {
				j++
				next = chunkStart(j + 1)
			}
			el := &m.el[e]
			pieceStart := max(chunkStart(j)-off, 0)
			if el.certain && el.lo != el.hi && chunkOf(off+int(el.lo)) != chunkOf(off+int(el.hi)) {
				el.certain = false
				st.newUncertain = append(st.newUncertain, e)
				st.causes |= el.why
			}
			li := int32(0)
			if el.certain {
				li = max(el.lo-int32(pieceStart), 0)
			}
			listSlab[pos], loSlab[pos], segSlab[pos] = e, li, int32(k)
			if n := len(pieceSlab); n > 0 && int(pieceOf[n-1]) == j && pieceSlab[n-1].OldSubtask == k {
				pieceSlab[n-1].Count++
			} else {
				pieceSlab = append(pieceSlab, RestorePiece{OldSubtask: k, Count: 1})
				pieceOf = append(pieceOf, int32(j))
			}
		}
		off += len(snap)
	}
	for s := 0; s < len(pieceSlab); {
		t := s
		for t < len(pieceSlab) && pieceOf[t] == pieceOf[s] {
			t++
		}
		pieces[pieceOf[s]] = pieceSlab[s:t:t]
		s = t
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
	owners := make([]int32, len(m.el))
	a := Assignment{Parallelism: q, Topics: m.topics, Owners: owners, Subtasks: make([][]TopicPartition, q)}
	res := RestoreResult{
		Assignment:      a,
		Source:          restoreSource,
		Pieces:          pieces,
		Snapshot:        make([][]TopicPartition, q),
		History:         slices.Clone(cfg.history),
		StartingOffsets: cfg.offsets,
		ConnectorLine:   cfg.line,
	}
	subs := make([]TopicPartition, len(m.el))
	snapTPs := make([]TopicPartition, len(m.el))
	off := 0
	for j, l := range lists {
		n := len(l)
		if n == 0 {
			continue
		}
		sub, snap := subs[off:off+n:off+n], snapTPs[off:off+n:off+n]
		off += n
		for i, e := range l {
			sub[i] = m.tp(e)
			owners[m.global(e)] = int32(j)
		}
		for i, e := range snaps[j] {
			snap[i] = m.tp(e)
		}
		a.Subtasks[j], res.Snapshot[j] = sub, snap
	}
	nu := 0
	for i := range m.el {
		if !m.el[i].certain {
			nu++
		}
	}
	res.Uncertain = make([]TopicPartition, 0, nu)
	for i := range m.el {
		if m.el[i].certain {
			continue
		}
		res.Uncertain = append(res.Uncertain, m.tp(int32(i)))
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
			names = append(names, m.tp(e).SplitID())
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
