package strategy

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/skewscope/skewscope/assign"
)

// javaRangeOwner is Kafka's RangeAssignor for members that all subscribe to
// the topic: with n partitions and p members, member i takes the contiguous
// run starting at i*(n/p) + min(i, n%p), one longer for i < n%p.
func javaRangeOwner(partition, n, p int) int {
	div, rem := n/p, n%p
	// The first rem members hold div+1 partitions each.
	if partition < rem*(div+1) {
		return partition / (div + 1)
	}
	return rem + (partition-rem*(div+1))/div
}

// TestRangeMatchesJavaRule checks franz-go's range balancer, run offline,
// against the RangeAssignor rule written out independently.
func TestRangeMatchesJavaRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for range 200 {
		topics := randomTopics(rng, 6, 70)
		p := 1 + rng.IntN(50)
		a, err := rangeAssign(topics, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, tp := range assign.Partitions(topics) {
			n := 0
			for _, tt := range topics {
				if tt.Name == tp.Topic {
					n = tt.Partitions
				}
			}
			got, ok := a.OwnerOf(tp)
			if want := javaRangeOwner(int(tp.Partition), n, p); !ok || got != want {
				t.Fatalf("rangeAssign(%v, %d).OwnerOf(%v) = %d, %v, want %d", topics, p, tp, got, ok, want)
			}
		}
	}
}

// TestRoundRobinMatchesJavaRule checks franz-go's roundrobin balancer
// against Kafka's RoundRobinAssignor with equal subscriptions: all
// partitions sorted by (topic, partition), the i-th to member i % p.
func TestRoundRobinMatchesJavaRule(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	for range 200 {
		topics := randomTopics(rng, 6, 40)
		p := 1 + rng.IntN(50)
		a, err := roundRobinAssign(topics, p)
		if err != nil {
			t.Fatal(err)
		}
		sorted := assign.Partitions(topics)
		slices.SortFunc(sorted, func(x, y assign.TopicPartition) int {
			return cmp.Or(cmp.Compare(x.Topic, y.Topic), cmp.Compare(x.Partition, y.Partition))
		})
		for i, tp := range sorted {
			if got, ok := a.OwnerOf(tp); !ok || got != i%p {
				t.Fatalf("roundRobinAssign(%v, %d).OwnerOf(%v) = %d, %v, want %d", topics, p, tp, got, ok, i%p)
			}
		}
	}
}

// TestRoundRobinEqualsDynamicGlobal: with one cluster and equal
// subscriptions, DynamicKafkaSource global mode and the roundrobin assignor
// deal the same sorted list the same way (for ASCII topic names).
func TestRoundRobinEqualsDynamicGlobal(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 21))
	for range 50 {
		topics := randomTopics(rng, 5, 30)
		p := 1 + rng.IntN(30)
		rr, _ := roundRobinAssign(topics, p)
		g, _ := assign.DynamicGlobalAssignment(topics, p)
		if !slices.EqualFunc(rr.Subtasks, g.Subtasks, slices.Equal) {
			t.Fatalf("roundRobinAssign(%v, %d).Subtasks = %v, want DynamicGlobalAssignment's %v", topics, p, rr.Subtasks, g.Subtasks)
		}
	}
}

func TestMemberIDSortsInSubtaskOrder(t *testing.T) {
	for i := range assign.UpperBoundMaxParallelism {
		if a, b := MemberID(i), MemberID(i+1); a >= b {
			t.Fatalf("MemberID(%d) = %q >= MemberID(%d) = %q, want ascending", i, a, i+1, b)
		}
	}
}

func TestSortJoinMembers(t *testing.T) {
	inst := func(s string) *string { return &s }
	members := []kmsg.JoinGroupResponseMember{
		{MemberID: "m-c"},
		{MemberID: "m-z", InstanceID: inst("b")},
		{MemberID: "m-a"},
		{MemberID: "m-b", InstanceID: inst("a")},
		{MemberID: "m-0"},
	}
	sortJoinMembers(members)
	var got []string
	for _, m := range members {
		got = append(got, m.MemberID)
	}
	want := []string{"m-b", "m-z", "m-0", "m-a", "m-c"} // static by instance id, then dynamic by member id
	if !slices.Equal(got, want) {
		t.Errorf("sortJoinMembers(...) order = %v, want %v", got, want)
	}
}

// TestConsumerGroupAssignmentEagerSticky: the exported entry point takes any
// franz-go balancer; eager sticky balances as cooperative-sticky does on a
// first join.
func TestConsumerGroupAssignmentEagerSticky(t *testing.T) {
	topics := []assign.Topic{{Name: "x", Partitions: 10}, {Name: "y", Partitions: 3}, {Name: "z", Partitions: 1}}
	for _, p := range []int{1, 4, 14, 20} {
		a, err := ConsumerGroupAssignment(kgo.StickyBalancer(), topics, p)
		if err != nil {
			t.Fatalf("ConsumerGroupAssignment(StickyBalancer(), %v, %d) error = %v, want nil", topics, p, err)
		}
		if err := checkAssignment(a, topics, p); err != nil {
			t.Errorf("ConsumerGroupAssignment(StickyBalancer(), %v, %d): %v", topics, p, err)
		}
		c := counts(a)
		if lo, hi := slices.Min(c), slices.Max(c); hi-lo > 1 {
			t.Errorf("ConsumerGroupAssignment(StickyBalancer(), %v, %d) counts = %v, want max-min <= 1", topics, p, c)
		}
	}
}

// benchTopics is 20 topics of 500 partitions: 10,000 partitions.
func benchTopics() []assign.Topic {
	ts := make([]assign.Topic, 20)
	for i := range ts {
		ts[i] = assign.Topic{Name: fmt.Sprintf("topic-%02d", i), Partitions: 500}
	}
	return ts
}

// BenchmarkStrategies times every strategy on 10,000 partitions in 20 topics
// with p = 1024, the size the planner may be asked for per request.
//
//	go test -run '^$' -bench Strategies -benchmem ./strategy/
func BenchmarkStrategies(b *testing.B) {
	topics := benchTopics()
	const p = 1024
	for _, s := range All() {
		b.Run(s.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Assign(topics, p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkKafkaRange is the kafka-range case on its own.
//
//	go test -run '^$' -bench KafkaRange -benchmem ./strategy/
func BenchmarkKafkaRange(b *testing.B) {
	topics := benchTopics()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := rangeAssign(topics, 1024); err != nil {
			b.Fatal(err)
		}
	}
}
