package assign

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

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
// It mirrors, per step:
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
	// tags holds the order chains too long for restoreElem.inline: its
	// first nTags entries are in use (allocTags).
	tags  []orderTag
	nTags int32
	iota  []int32
	// hiBuf holds batch's upper bounds when no trace keeps them.
	hiBuf []int32
	// bufs holds one run's intermediate lists for the next (scratch).
	bufs runBufs
	// sc is the scratch of each goroutine that runs hash stages (eachList);
	// sc[0] is also that of the stages run on the model's own goroutine.
	sc [restoreWorkers]hashScratch
}

// hashScratch is what one goroutine's hash stages reuse: the table, its
// entries, per-entry bins, tree flags and runBounds' full flags, buffers
// for bounds the caller does not keep, the spread hashes, iteration order
// and javaHashOrder's counts, treeRisk's scratch, and the tallies of the
// stages run since they were last added to the step's stats (flush).
type hashScratch struct {
	jm         *javaHashMap[int32]
	ents       []javaEntry[int32]
	bins       []int32
	tree       []bool
	full       []bool
	lo         []int32
	hi         []int32
	why        []uint8
	hs         []uint32
	perm       []int32
	counts     []int32
	riskHash   []uint32
	riskCounts []int

	setTrees, mapTrees        int
	mapTreeRisk               bool
	treeified, treeifyResizes int
}

// runBufs are the buffers of one run's intermediate lists, reused by the
// next run: the fresh partitions, the fresh start's batch (owners, lists
// before and after its hash sets, lower bounds), the snapshot lists of
// readerMaps and the restored lists of redistribute (lists, lower bounds,
// old subtasks). Each stage's output is read only by the next stage, so one
// set serves every step. They hold no pointers (the list headers are
// allocated per run), so the collector never scans what a model keeps.
type runBufs struct {
	initial                 []int32
	owners, seqs, order, lo []int32
	snap                    []int32
	rList, rLo, rSeg        []int32
}

// scratch returns *buf resized to n (its old contents kept; a new zeroed
// slice when m keeps a trace, which holds on to the lists).
func scratch[T any](m *restoreModel, buf *[]T, n int) []T {
	if m.trace != nil {
		return make([]T, n)
	}
	*buf = grow(*buf, n)
	return *buf
}

// keep returns w's buffers without its tallies.
func (w *hashScratch) keep() hashScratch {
	return hashScratch{
		jm: w.jm, ents: w.ents[:0], bins: w.bins, tree: w.tree, full: w.full, lo: w.lo, hi: w.hi, why: w.why,
		hs: w.hs, perm: w.perm, counts: w.counts, riskHash: w.riskHash, riskCounts: w.riskCounts,
	}
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

// restoreModels keeps models between runs for their elements and scratch
// buffers; nothing of a model's run stays reachable from its result.
var restoreModels = sync.Pool{New: func() any {
	m := &restoreModel{}
	for i := range m.sc {
		m.sc[i].jm = newJavaHashMap[int32](0)
	}
	return m
}}

// lastRestoreModel keeps the model of the last run of at most
// restoreKeepMax partitions out of the pool, which a garbage collection
// empties: a planner recomputing its plans then reuses its buffers.
var lastRestoreModel atomic.Pointer[restoreModel]

const restoreKeepMax = 1 << 16

func runRestore(cfg restoreConfig, rng *rand.Rand, trace bool) (RestoreResult, *restoreTrace) {
	m := lastRestoreModel.Swap(nil)
	if m == nil {
		m = restoreModels.Get().(*restoreModel)
	}
	defer m.release()
	m.cfg, m.rng = cfg, rng
	if trace {
		m.trace = &restoreTrace{}
	}
	m.mergeTopics()
	rank := m.rankTopics()
	total := int(m.offset[len(m.offset)-1])
	if cap(m.el) < total {
		m.el = make([]restoreElem, 0, total)
	}
	m.el = m.el[:0]
	m.nTags = 0
	initial := scratch(m, &m.bufs.initial, total)[:0]
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
	lists, loIns, freshLo, freshHi := m.batch(initial, initial, hist[0], cfg.start, cfg.startKnown, true)
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

// release drops what belongs to the run and returns m to restoreModels.
func (m *restoreModel) release() {
	kept := restoreModel{el: m.el[:0], tags: m.tags, iota: m.iota, hiBuf: m.hiBuf, bufs: m.bufs}
	for i := range m.sc {
		kept.sc[i] = m.sc[i].keep()
	}
	*m = kept
	if cap(m.el) > restoreKeepMax || !lastRestoreModel.CompareAndSwap(nil, m) {
		restoreModels.Put(m)
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
		clear(m.el[first:])                   // it may hold an earlier run's elements
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

// tp names element e.
func (m *restoreModel) tp(e int32) TopicPartition {
	el := &m.el[e]
	return TopicPartition{Topic: m.topics[el.topic].Name, Partition: el.part}
}

// global is the index of element e in the result's Topics order.
func (m *restoreModel) global(e int32) int32 {
	el := &m.el[e]
	return m.offset[el.topic] + el.part
}

// grow returns s resized to length n, reallocated only when too small.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
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
	at := make([]int, len(lists)+1)
	for j, l := range lists {
		at[j+1] = at[j] + len(l)
	}
	m.eachList(lists, func(_ *hashScratch, j int) {
		l := lists[j]
		if len(l) == 0 {
			return
		}
		sub, snap := subs[at[j]:at[j+1]:at[j+1]], snapTPs[at[j]:at[j+1]:at[j+1]]
		for i, e := range l {
			sub[i] = m.tp(e)
			owners[m.global(e)] = int32(j)
		}
		for i, e := range snaps[j] {
			snap[i] = m.tp(e)
		}
		a.Subtasks[j], res.Snapshot[j] = sub, snap
	})
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
