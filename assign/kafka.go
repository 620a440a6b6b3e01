package assign

import (
	"errors"
	"fmt"
	"sort"
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
			return fmt.Errorf("topic %s is listed twice", clip(t.Name))
		}
		seen[t.Name] = true
		if t.Partitions < 1 || t.Partitions > MaxPartitions {
			return fmt.Errorf("topic %s has %d partitions: want 1..%d", clip(t.Name), t.Partitions, MaxPartitions)
		}
	}
	return nil
}

// Assignment maps partitions to subtasks of a source with Parallelism readers.
type Assignment struct {
	Parallelism int
	// Owner gives the subtask of every partition.
	Owner map[TopicPartition]int
	// Subtasks lists, per subtask, the partitions it reads: topics in input
	// order and partitions ascending, unless the strategy says otherwise.
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
	a := newAssignment(p)
	for _, t := range topics {
		start, _ := KafkaStartIndex(t.Name, p)
		for q := range t.Partitions {
			tp := TopicPartition{Topic: t.Name, Partition: int32(q)}
			a.add(tp, int((int32(start)+int32(q))%int32(p)))
		}
	}
	return a, nil
}

func newAssignment(p int) Assignment {
	return Assignment{Parallelism: p, Owner: make(map[TopicPartition]int), Subtasks: make([][]TopicPartition, p)}
}

func (a *Assignment) add(tp TopicPartition, owner int) {
	a.Owner[tp] = owner
	a.Subtasks[owner] = append(a.Subtasks[owner], tp)
}

func (a *Assignment) sortSubtasks() {
	for _, ps := range a.Subtasks {
		sort.Slice(ps, func(i, j int) bool { return lessTP(ps[i], ps[j]) })
	}
}

func lessTP(a, b TopicPartition) bool {
	if a.Topic != b.Topic {
		return a.Topic < b.Topic
	}
	return a.Partition < b.Partition
}
