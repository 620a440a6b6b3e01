package assign

import (
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/skewscope/skewscope/internal/quote"
)

// TopicPartition names one Kafka partition.
type TopicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// SplitID is the id Flink's Kafka source gives the split of tp:
// TopicPartition.toString(), "<topic>-<partition>".
func (tp TopicPartition) SplitID() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

// Topic is a topic name with its partition count, as a planner input.
type Topic struct {
	Name       string `json:"name"`
	Partitions int    `json:"partitions"`
}

// MaxPartitions bounds the partition count of one topic in planner input.
// Kafka itself allows more in theory; no real cluster has a topic this large.
const MaxPartitions = 1 << 20

// ErrDivideByZero is what getSplitOwner does with zero readers: Java throws
// ArithmeticException("/ by zero").
var ErrDivideByZero = errors.New("/ by zero")

// KafkaStartIndex is the subtask that receives partition 0 of topic on a
// fresh start with numReaders source readers:
// ((topic.hashCode() * 31) & 0x7FFFFFFF) % numReaders.
//
// Mirrors the first line of KafkaSourceEnumerator.getSplitOwner
// (apache/flink-connector-kafka, KafkaSourceEnumerator.java L598-606 at
// eb8ff700; identical from v3.0.0 to v5.0.0).
func KafkaStartIndex(topic string, numReaders int) (int, error) {
	if numReaders <= 0 {
		return 0, ErrDivideByZero
	}
	start := (StringHashCode(topic) * 31) & 0x7FFFFFFF
	return int(start % int32(numReaders)), nil
}

// KafkaSplitOwner returns the source subtask that Flink's KafkaSource assigns
// partition tp to when numReaders readers run:
// (startIndex(topic) + partition) % numReaders, in Java int arithmetic.
//
// Mirrors KafkaSourceEnumerator.getSplitOwner (and the legacy
// FlinkKafkaConsumer's KafkaTopicPartitionAssigner.assign, which computes the
// same). It is the owner on a fresh start and for partitions discovered while
// the job runs (also after a restore); splits restored from a savepoint at a
// new parallelism are not placed by it (see RestoreAssignment).
func KafkaSplitOwner(tp TopicPartition, numReaders int) (int, error) {
	start, err := KafkaStartIndex(tp.Topic, numReaders)
	if err != nil {
		return 0, err
	}
	owner := (int32(start) + tp.Partition) % int32(numReaders)
	return int(owner), nil
}

// Partitions expands topics into their partitions, topic by topic in the
// given order, partitions in numeric order.
func Partitions(topics []Topic) []TopicPartition {
	n := 0
	for _, t := range topics {
		n += t.Partitions
	}
	tps := make([]TopicPartition, 0, n)
	for _, t := range topics {
		for p := range t.Partitions {
			tps = append(tps, TopicPartition{Topic: t.Name, Partition: int32(p)})
		}
	}
	return tps
}

// ValidateTopics checks planner input: names non-empty and unique, partition
// counts in 1..MaxPartitions.
func ValidateTopics(topics []Topic) error {
	if len(topics) == 0 {
		return errors.New("no topics: give at least one topic with its partition count")
	}
	seen := make(map[string]bool, len(topics))
	for _, t := range topics {
		if t.Name == "" {
			return errors.New("a topic has an empty name")
		}
		if seen[t.Name] {
			return fmt.Errorf("topic %s is listed twice", quote.Clip(t.Name))
		}
		seen[t.Name] = true
		if t.Partitions < 1 || t.Partitions > MaxPartitions {
			return fmt.Errorf("topic %s has %d partitions: want 1..%d", quote.Clip(t.Name), t.Partitions, MaxPartitions)
		}
	}
	return nil
}

// Assignment maps partitions to subtasks of a source with Parallelism readers.
//
// Its partitions are those of Topics, numbered by a global index: first the
// partitions of Topics[0] in ascending order, then those of Topics[1], and
// so on, so partition q of Topics[t] has index Offset(t) + q. Owners is the
// dense form of the placement, by global index; Subtasks lists the same
// placement per subtask. Every constructor in this module fills both, and
// they must agree. Treat an Assignment as read-only: copies share storage.
type Assignment struct {
	Parallelism int
	// Topics are the assigned topics with their partition counts, in input
	// order. They define the global index of a partition.
	Topics []Topic
	// Owners[i] is the subtask of the partition with global index i;
	// len(Owners) is the number of partitions of Topics.
	Owners []int32
	// Subtasks lists, per subtask, the partitions it reads: topics in input
	// order and partitions ascending, unless the strategy says otherwise.
	// A subtask without partitions has a nil list.
	Subtasks [][]TopicPartition
}

// Counts returns the number of partitions per subtask.
func (a Assignment) Counts() []float64 {
	c := make([]float64, a.Parallelism)
	for i, ps := range a.Subtasks {
		c[i] = float64(len(ps))
	}
	return c
}

// Offset returns the global index of partition 0 of Topics[t]: the sum of the
// partition counts of the topics before it.
func (a Assignment) Offset(t int) int {
	off := 0
	for _, x := range a.Topics[:t] {
		off += x.Partitions
	}
	return off
}

// Index returns the global index of tp, and false when tp is not a partition
// of Topics. It scans Topics, so it costs O(len(Topics)); use All to visit
// every partition.
func (a Assignment) Index(tp TopicPartition) (int, bool) {
	off := 0
	for _, t := range a.Topics {
		if t.Name == tp.Topic {
			if tp.Partition < 0 || int(tp.Partition) >= t.Partitions {
				return 0, false
			}
			return off + int(tp.Partition), true
		}
		off += t.Partitions
	}
	return 0, false
}

// OwnerOf returns the subtask that reads tp, and false when tp is not a
// partition of the assignment. It costs O(len(Topics)), see Index.
func (a Assignment) OwnerOf(tp TopicPartition) (int, bool) {
	i, ok := a.Index(tp)
	if !ok || i >= len(a.Owners) {
		return 0, false
	}
	return int(a.Owners[i]), true
}

// All yields every partition with its subtask in global index order: topics
// in the order of Topics, partitions ascending.
func (a Assignment) All() iter.Seq2[TopicPartition, int] {
	return func(yield func(TopicPartition, int) bool) {
		i := 0
		for _, t := range a.Topics {
			for q := range t.Partitions {
				if i >= len(a.Owners) {
					return
				}
				if !yield(TopicPartition{Topic: t.Name, Partition: int32(q)}, int(a.Owners[i])) {
					return
				}
				i++
			}
		}
	}
}

// NewAssignment returns the assignment of topics to p subtasks in which the
// partition with global index i (see Assignment) goes to subtask owners[i].
// Subtasks list partitions with topics in input order, partitions ascending.
// p must pass CheckParallelism, topics ValidateTopics, and owners must have
// one entry in 0..p-1 per partition. The result keeps owners (not a copy)
// and a copy of topics.
func NewAssignment(topics []Topic, p int, owners []int32) (Assignment, error) {
	if err := CheckParallelism(p); err != nil {
		return Assignment{}, err
	}
	if err := ValidateTopics(topics); err != nil {
		return Assignment{}, err
	}
	if n := totalPartitions(topics); len(owners) != n {
		return Assignment{}, fmt.Errorf("%d owners for %d partitions", len(owners), n)
	}
	for i, o := range owners {
		if o < 0 || int(o) >= p {
			return Assignment{}, fmt.Errorf("owner %d of partition index %d: want 0..%d", o, i, p-1)
		}
	}
	return buildAssignment(slices.Clone(topics), p, owners), nil
}

func totalPartitions(topics []Topic) int {
	n := 0
	for _, t := range topics {
		n += t.Partitions
	}
	return n
}

// buildAssignment is NewAssignment for valid input: it lists every subtask's
// partitions in global order, all lists in one backing array.
func buildAssignment(topics []Topic, p int, owners []int32) Assignment {
	a := Assignment{Parallelism: p, Topics: topics, Owners: owners, Subtasks: make([][]TopicPartition, p)}
	pos := make([]int32, p+1) // counts, then start positions
	for _, o := range owners {
		pos[o+1]++
	}
	for j := 1; j <= p; j++ {
		pos[j] += pos[j-1]
	}
	backing := make([]TopicPartition, len(owners))
	for j := range p {
		if lo, hi := pos[j], pos[j+1]; hi > lo {
			a.Subtasks[j] = backing[lo:hi:hi]
		}
	}
	i := 0
	for _, t := range topics {
		for q := range t.Partitions {
			o := owners[i]
			backing[pos[o]] = TopicPartition{Topic: t.Name, Partition: int32(q)}
			pos[o]++
			i++
		}
	}
	return a
}

// FreshAssignment assigns every partition of topics with KafkaSplitOwner, as
// a KafkaSource started without state (or a legacy FlinkKafkaConsumer at any
// time) does with p readers.
func FreshAssignment(topics []Topic, p int) (Assignment, error) {
	if err := CheckParallelism(p); err != nil {
		return Assignment{}, err
	}
	if err := ValidateTopics(topics); err != nil {
		return Assignment{}, err
	}
	owners := make([]int32, totalPartitions(topics))
	i := 0
	for _, t := range topics {
		// (start + q) % p, counted up with a wrap: start < p and q < 2^20,
		// so Java's int sum never overflows.
		o, _ := KafkaStartIndex(t.Name, p)
		for range t.Partitions {
			owners[i] = int32(o)
			i++
			if o++; o == p {
				o = 0
			}
		}
	}
	return buildAssignment(slices.Clone(topics), p, owners), nil
}

func lessTP(a, b TopicPartition) bool {
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	return a.Partition < b.Partition
}
