package strategy

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/skewscope/skewscope/assign"
)

// freshGeneration is the generation a kgo client reports in JoinGroup before
// it has ever joined a group (groupMemberGen.load returns -1).
const freshGeneration = -1

func rangeAssign(topics []assign.Topic, p int) (assign.Assignment, error) {
	return ConsumerGroupAssignment(kgo.RangeBalancer(), topics, p)
}

func roundRobinAssign(topics []assign.Topic, p int) (assign.Assignment, error) {
	return ConsumerGroupAssignment(kgo.RoundRobinBalancer(), topics, p)
}

func cooperativeStickyAssign(topics []assign.Topic, p int) (assign.Assignment, error) {
	return ConsumerGroupAssignment(kgo.CooperativeStickyBalancer(), topics, p)
}

// MemberID is the member id that ConsumerGroupAssignment gives the member
// standing for subtask i. The ids sort in subtask order for i < 100000, which
// covers every parallelism Flink accepts.
func MemberID(i int) string { return fmt.Sprintf("member-%05d", i) }

// ConsumerGroupAssignment balances topics over a consumer group of p dynamic
// members, all subscribed to every topic and none owning anything yet, with
// balancer b, offline. Member MemberID(i) becomes subtask i of the result;
// Subtasks list partitions with topics in input order, partitions ascending.
//
// p must pass assign.CheckParallelism and topics assign.ValidateTopics. It
// returns an error if b fails or returns a plan that leaves a partition
// unassigned, assigns one twice or names an unknown member, topic or
// partition.
//
// A consumer group with p members plays the role of a source with p subtasks:
// member i stands for subtask i. Nothing here re-implements an assignor; the
// balancing is done by franz-go's own balancers (github.com/twmb/franz-go
// pkg/kgo, the version pinned in go.mod), driven the way a kgo group leader
// drives them in groupConsumer.balanceGroup, without a broker:
//
//  1. Every member joins with the same subscription: the topic names, sorted
//     (kgo sorts its interests before JoinGroupMetadata), no previous
//     assignment, and generation -1 (what a kgo client that never joined
//     reports).
//  2. The members are sorted as the client sorts them (sortJoinMembers).
//  3. balancer.MemberBalancer(members), then BalanceOrError (or Balance) on
//     the result with the partition count of every topic.
//  4. The *kgo.BalancePlan's AsMemberIDMap gives member → topic →
//     partitions.
//
// Limits of the offline run:
//
//   - No member has a rack and no partition has a leader rack (kgo fills
//     those only inside a live client), so range and sticky are rack-unaware
//     (KIP-881 is not modelled).
//   - Every member is dynamic (no group.instance.id) and subscribes to every
//     topic.
//   - franz-go's range and roundrobin balancers are documented as equivalent
//     to the Java RangeAssignor and RoundRobinAssignor. Its sticky balancer is
//     a different algorithm ("optimal and extra sticky"): its output is valid
//     and balanced but not byte-identical to the Java client's sticky or
//     cooperative-sticky output, so that strategy is labelled approximate.
//     Its layout is not even stable from call to call: the sticky engine
//     (pkg/kgo/internal/sticky, newBalancer) numbers topics in Go map
//     iteration order, so which partitions a member gets can change between
//     two runs on the same input, while the counts stay balanced (differ by
//     at most one). Range and roundrobin are deterministic. On a first join
//     the cooperative part of cooperative-sticky (withholding moved
//     partitions for one more rebalance) needs previous owners and cannot
//     show.
//   - KIP-848 server-side assignors (uniform, server range) are not modelled.
//   - franz-go orders topic names by Go byte order where Java uses UTF-16
//     order; the two agree on every legal Kafka topic name ([a-zA-Z0-9._-]).
func ConsumerGroupAssignment(b kgo.GroupBalancer, topics []assign.Topic, p int) (assign.Assignment, error) {
	if err := assign.CheckParallelism(p); err != nil {
		return assign.Assignment{}, err
	}
	if err := assign.ValidateTopics(topics); err != nil {
		return assign.Assignment{}, err
	}
	names := make([]string, len(topics))
	counts := make(map[string]int32, len(topics))
	offsets := make(map[string]int, len(topics)) // global index of partition 0
	total := 0
	for i, t := range topics {
		names[i] = t.Name
		counts[t.Name] = int32(t.Partitions) // ValidateTopics bounds it by assign.MaxPartitions
		offsets[t.Name] = total
		total += t.Partitions
	}
	slices.Sort(names)

	proto := b.ProtocolName()
	meta := b.JoinGroupMetadata(names, nil, freshGeneration)
	members := make([]kmsg.JoinGroupResponseMember, p)
	index := make(map[string]int, p)
	for i := range members {
		m := kmsg.NewJoinGroupResponseMember()
		m.MemberID = MemberID(i)
		m.ProtocolMetadata = bytes.Clone(meta)
		members[i] = m
		index[m.MemberID] = i
	}
	sortJoinMembers(members)

	mb, _, err := b.MemberBalancer(members)
	if err != nil {
		return assign.Assignment{}, fmt.Errorf("%s balancer: %w", proto, err)
	}
	var into kgo.IntoSyncAssignment
	if mbe, ok := mb.(kgo.GroupMemberBalancerOrError); ok {
		into, err = mbe.BalanceOrError(counts)
		if err != nil {
			return assign.Assignment{}, fmt.Errorf("%s balancer: %w", proto, err)
		}
	} else {
		into = mb.Balance(counts)
	}
	plan, ok := into.(*kgo.BalancePlan)
	if !ok || plan == nil {
		return assign.Assignment{}, fmt.Errorf("%s balancer returned %T, want *kgo.BalancePlan", proto, into)
	}

	owners := make([]int32, total) // by global index (see assign.Assignment), -1: unassigned
	for i := range owners {
		owners[i] = -1
	}
	for member, byTopic := range plan.AsMemberIDMap() {
		owner, ok := index[member]
		if !ok {
			return assign.Assignment{}, fmt.Errorf("%s balancer assigned partitions to unknown member %q", proto, member)
		}
		for topic, partitions := range byTopic {
			n, ok := counts[topic]
			if !ok {
				return assign.Assignment{}, fmt.Errorf("%s balancer assigned unknown topic %q", proto, topic)
			}
			for _, q := range partitions {
				if q < 0 || q >= n {
					return assign.Assignment{}, fmt.Errorf("%s balancer assigned partition %d of topic %q, which has %d", proto, q, topic, n)
				}
				i := offsets[topic] + int(q)
				if prev := owners[i]; prev >= 0 {
					tp := assign.TopicPartition{Topic: topic, Partition: q}
					return assign.Assignment{}, fmt.Errorf("%s balancer assigned %s to members %d and %d", proto, tp.SplitID(), prev, owner)
				}
				owners[i] = int32(owner)
			}
		}
	}
	i := 0
	for _, t := range topics {
		for q := range t.Partitions {
			if owners[i] < 0 {
				tp := assign.TopicPartition{Topic: t.Name, Partition: int32(q)}
				return assign.Assignment{}, fmt.Errorf("%s balancer left %s unassigned", proto, tp.SplitID())
			}
			i++
		}
	}
	return assign.NewAssignment(topics, p, owners)
}

// joinMemberCompare is the order in which a kgo group leader hands members to
// a balancer: franz-go's unexported joinMemberLess (pkg/kgo/group_balancer.go,
// v1.22.3, used by sortJoinMembers in balanceGroup). Static members (with an
// instance id) come first, ordered by instance id; dynamic members follow,
// ordered by member id. Both compare as Go strings.
func joinMemberCompare(l, r *kmsg.JoinGroupResponseMember) int {
	switch {
	case l.InstanceID != nil && r.InstanceID != nil:
		return cmp.Compare(*l.InstanceID, *r.InstanceID)
	case l.InstanceID != nil:
		return -1
	case r.InstanceID != nil:
		return 1
	}
	return cmp.Compare(l.MemberID, r.MemberID)
}

// sortJoinMembers sorts members as franz-go's sortJoinMembers does.
func sortJoinMembers(members []kmsg.JoinGroupResponseMember) {
	slices.SortFunc(members, func(l, r kmsg.JoinGroupResponseMember) int { return joinMemberCompare(&l, &r) })
}
