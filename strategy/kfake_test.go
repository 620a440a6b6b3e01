package strategy

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/assign"
)

// TestRangeAgainstLiveGroup runs real kgo consumer-group clients with the
// range balancer against an in-process kfake cluster and checks that the
// assignment the group settles on is exactly the offline "kafka-range"
// result.
//
// kfake generates the member ids, so members are matched by rank: the group
// leader sorts members by member id (all are dynamic) before balancing, and
// the offline run's ids MemberID(i) sort in subtask order, so the member
// with the k-th smallest observed id must hold exactly subtask k's
// partitions. This is an exact per-member comparison, not a multiset one.
func TestRangeAgainstLiveGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a kfake cluster and consumer-group clients")
	}
	topics := []assign.Topic{
		{Name: "orders", Partitions: 5},
		{Name: "payments", Partitions: 3},
		{Name: "clicks", Partitions: 7},
	}
	const p = 3
	const group = "skewscope-range"

	var opts []kfake.Opt
	var names []string
	for _, tp := range topics {
		opts = append(opts, kfake.SeedTopics(int32(tp.Partitions), tp.Name))
		names = append(names, tp.Name)
	}
	c, err := kfake.NewCluster(append(opts, kfake.NumBrokers(1))...)
	if err != nil {
		t.Fatalf("kfake.NewCluster(...) error = %v, want nil", err)
	}
	defer c.Close()

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait() // runs after cancel and the clients' Close
	defer cancel()

	for i := range p {
		cl, err := kgo.NewClient(
			kgo.SeedBrokers(c.ListenAddrs()...),
			kgo.ClientID(fmt.Sprintf("skewscope-test-%d", i)),
			kgo.ConsumerGroup(group),
			kgo.ConsumeTopics(names...),
			kgo.Balancers(kgo.RangeBalancer()),
		)
		if err != nil {
			t.Fatalf("kgo.NewClient(member %d) error = %v, want nil", i, err)
		}
		defer cl.Close()
		wg.Go(func() {
			for ctx.Err() == nil {
				cl.PollFetches(ctx)
			}
		})
	}

	adm, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer adm.Close()
	admin := kadm.NewClient(adm)

	want, err := rangeAssign(topics, p)
	if err != nil {
		t.Fatal(err)
	}
	total := len(assign.Partitions(topics))

	// Bounded wait for the group to settle: Stable, p members, every
	// partition assigned. The bound only limits a hang; nothing is asserted
	// about how long it takes.
	const limit = 20 * time.Second
	deadline := time.Now().Add(limit)
	var last string
	for {
		got, settled, state := observeGroup(ctx, admin, group, p, total)
		if settled {
			wantSorted := make([][]assign.TopicPartition, p)
			for i, ps := range want.Subtasks {
				wantSorted[i] = sortedTPs(ps)
			}
			if !slices.EqualFunc(got, wantSorted, slices.Equal) {
				t.Fatalf("live group %q with kgo.RangeBalancer() on %v, members by id = %v, want rangeAssign(%v, %d) = %v", group, topics, got, topics, p, wantSorted)
			}
			return
		}
		last = state
		if time.Now().After(deadline) {
			t.Fatalf("live group %q did not settle with %d members and all %d partitions assigned within %v; last seen: %s", group, p, total, limit, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sortedTPs returns a copy of ps sorted by topic name, then partition.
func sortedTPs(ps []assign.TopicPartition) []assign.TopicPartition {
	out := slices.Clone(ps)
	slices.SortFunc(out, func(a, b assign.TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return out
}

// observeGroup describes group and, once it is Stable with p members that
// hold all total partitions between them, returns each member's partitions
// (members sorted by member id, each list sorted by sortedTPs) and true.
// Otherwise it returns a description of what it saw.
func observeGroup(ctx context.Context, admin *kadm.Client, group string, p, total int) ([][]assign.TopicPartition, bool, string) {
	described, err := admin.DescribeGroups(ctx, group)
	if err != nil {
		return nil, false, fmt.Sprintf("DescribeGroups error: %v", err)
	}
	g, ok := described[group]
	if !ok {
		return nil, false, "group not described"
	}
	if g.Err != nil {
		return nil, false, fmt.Sprintf("group error: %v", g.Err)
	}
	if g.State != "Stable" || len(g.Members) != p {
		return nil, false, fmt.Sprintf("state %s with %d members", g.State, len(g.Members))
	}
	members := slices.Clone(g.Members)
	slices.SortFunc(members, func(a, b kadm.DescribedGroupMember) int { return cmp.Compare(a.MemberID, b.MemberID) })
	out := make([][]assign.TopicPartition, p)
	n := 0
	for i, m := range members {
		ca, ok := m.Assigned.AsConsumer()
		if !ok {
			return nil, false, fmt.Sprintf("member %s has no consumer assignment", m.MemberID)
		}
		for _, t := range ca.Topics {
			for _, q := range t.Partitions {
				out[i] = append(out[i], assign.TopicPartition{Topic: t.Topic, Partition: q})
				n++
			}
		}
	}
	if n != total {
		return nil, false, fmt.Sprintf("state %s, %d of %d partitions assigned", g.State, n, total)
	}
	for i := range out {
		out[i] = sortedTPs(out[i])
	}
	return out, true, ""
}
