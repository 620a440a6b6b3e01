package assign

import (
	"cmp"
	"slices"
)

// This file holds partition-to-subtask layouts that Flink's plain KafkaSource
// does NOT use. They exist so the planner can show them next to
// FreshAssignment as labelled comparisons. Like the rest of the package they
// are pure and use only the standard library.

// NaiveModuloAssignment is the layout that blog posts and answers still
// describe: "partition i of the combined partition list goes to subtask
// i % p". The list is every topic in the given order, and within a topic the
// partitions in ascending order.
//
// This is NOT what Flink does, and it has not been since Flink 1.3.2. It is
// the removed code of Flink ≤ 1.3.1: FlinkKafkaConsumerBase.assignPartitions
// (apache/flink, tag release-1.3.0, L701-702), which kept every partition
// whose list index i satisfied i % numConsumers == consumerIndex. FLINK-7143
// (apache/flink PR #4301, July 2017) replaced it with the per-topic start
// index that KafkaSplitOwner mirrors and every KafkaSource still uses. The
// planner offers this layout only as a comparison, labelled as wrong; use
// FreshAssignment for what Flink actually does.
//
// Subtasks list partitions in list order. p must pass CheckParallelism and
// topics must pass ValidateTopics.
func NaiveModuloAssignment(topics []Topic, p int) (Assignment, error) {
	if err := CheckParallelism(p); err != nil {
		return Assignment{}, err
	}
	if err := ValidateTopics(topics); err != nil {
		return Assignment{}, err
	}
	owners := make([]int32, totalPartitions(topics))
	o := int32(0)
	for i := range owners {
		owners[i] = o // i % p
		if o++; int(o) == p {
			o = 0
		}
	}
	return buildAssignment(slices.Clone(topics), p, owners), nil
}

// DynamicGlobalAssignment is the layout of a DynamicKafkaSource with
// stream-enumerator-mode=global (connector v5.0.0, FLINK-39012) on a fresh
// start that reads topics from exactly one Kafka cluster with p readers.
//
// What it mirrors (apache/flink-connector-kafka):
//
//   - KafkaSourceEnumerator.addPartitionSplitChangeToPendingAssignments
//     (v5.0.0) copies the discovered batch of new splits into a list, sorts
//     it by topic (String.compareTo, i.e. by UTF-16 code unit, which differs
//     from Go's byte order only when a character above U+FFFF meets one in
//     U+E000..U+FFFF) and then by partition, and asks the SplitOwnerSelector
//     for each split in that order, with numReaders =
//     context.currentParallelism().
//   - DynamicKafkaSourceEnumerator's GLOBAL strategy installs a selector that
//     calls GlobalSplitOwnerAssigner.assignSplitOwner(clusterId + "-" +
//     split.splitId(), numReaders). On a fresh start the assigner's set of
//     known split ids starts empty (onMetadataRefresh receives the empty set
//     of split ids found in the absent enumerator state).
//   - GlobalSplitOwnerAssigner.assignSplitOwner (L51-61 at eb8ff700): a split
//     with no preferred owner gets Math.floorMod(knownActiveSplitIds.size(),
//     numReaders), then its id is added to the set.
//
// Split ids "<cluster>-<topic>-<partition>" are distinct for distinct
// (topic, partition) pairs (the partition number after the last '-' has no
// '-' of its own), so the set's size before the i-th split of the sorted
// batch is i, and the owner is i mod p: a global round-robin over the sorted
// partition list. Unlike NaiveModuloAssignment the list is sorted by topic
// name, not kept in input order.
//
// Not modelled: several clusters (their batches are numbered in the order in
// which each cluster's discovery completes, which is a race); partitions
// discovered later or a metadata refresh (onMetadataRefresh resets the set to
// the active split ids, so balancing only looks forward from there); splits
// returned after a reader failure (they go back to their previous owner);
// restore from a checkpoint. The default mode, per_cluster, is
// FreshAssignment per cluster.
//
// Subtasks list partitions with topics in input order and partitions
// ascending. p must pass CheckParallelism and topics must pass ValidateTopics.
func DynamicGlobalAssignment(topics []Topic, p int) (Assignment, error) {
	if err := CheckParallelism(p); err != nil {
		return Assignment{}, err
	}
	if err := ValidateTopics(topics); err != nil {
		return Assignment{}, err
	}
	order := make([]int, len(topics))
	keys := make([][]uint16, len(topics))
	for i, t := range topics {
		order[i] = i
		keys[i] = appendJavaUTF16(nil, t.Name)
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := slices.Compare(keys[a], keys[b]); c != 0 {
			return c
		}
		// Only strings that are not valid UTF-8 can tie here; Java strings
		// cannot hold them, so any fixed order will do.
		return cmp.Compare(topics[a].Name, topics[b].Name)
	})
	first := make([]int, len(topics)) // sorted position of partition 0
	n := 0
	for _, ti := range order {
		first[ti] = n
		n += topics[ti].Partitions
	}
	owners := make([]int32, n)
	i := 0
	for ti, t := range topics {
		for q := range t.Partitions {
			count := first[ti] + q // |knownActiveSplitIds| before this split
			owners[i] = int32(count % p)
			i++
		}
	}
	return buildAssignment(slices.Clone(topics), p, owners), nil
}
