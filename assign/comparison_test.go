package assign

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// comparisonFuncs are the comparison layouts of comparison.go, by name.
var comparisonFuncs = []struct {
	name string
	fn   func([]Topic, int) (Assignment, error)
}{
	{"NaiveModuloAssignment", NaiveModuloAssignment},
	{"DynamicGlobalAssignment", DynamicGlobalAssignment},
}

// comparisonOwners lists the owner of every partition, topics in input order
// and partitions ascending.
func comparisonOwners(a Assignment, topics []Topic) []int {
	var owners []int
	for _, tp := range Partitions(topics) {
		o, ok := a.OwnerOf(tp)
		if !ok {
			o = -1
		}
		owners = append(owners, o)
	}
	return owners
}

func comparisonCounts(a Assignment) []int {
	c := make([]int, len(a.Subtasks))
	for i, ps := range a.Subtasks {
		c[i] = len(ps)
	}
	return c
}

func fourEach(names ...string) []Topic {
	var ts []Topic
	for _, n := range names {
		ts = append(ts, Topic{Name: n, Partitions: 4})
	}
	return ts
}

func threeEach(names ...string) []Topic {
	var ts []Topic
	for _, n := range names {
		ts = append(ts, Topic{Name: n, Partitions: 3})
	}
	return ts
}

func TestComparisonWorkedExamples(t *testing.T) {
	for _, tc := range []struct {
		fn     string
		topics []Topic
		p      int
		owners []int // per partition, topics in input order
		counts []int // per subtask
	}{
		// The FLIP-537 case (two topics of four partitions at p = 8) under a
		// global round-robin gives one partition per subtask (KafkaSource
		// gives 0,0,0,2,2,2,2,0).
		{"DynamicGlobalAssignment", fourEach("orders", "payments"), 8,
			[]int{0, 1, 2, 3, 4, 5, 6, 7}, []int{1, 1, 1, 1, 1, 1, 1, 1}},
		{"NaiveModuloAssignment", fourEach("orders", "payments"), 8,
			[]int{0, 1, 2, 3, 4, 5, 6, 7}, []int{1, 1, 1, 1, 1, 1, 1, 1}},
		// "i % 8" over the 12-element list gives 2, 2, 2, 2, 1, 1, 1, 1.
		{"NaiveModuloAssignment", threeEach("orders", "payments", "clicks", "user-events"), 8,
			[]int{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3}, []int{2, 2, 2, 2, 1, 1, 1, 1}},
		// Global sorts by topic: clicks, orders, payments, user-events.
		{"DynamicGlobalAssignment", threeEach("orders", "payments", "clicks", "user-events"), 8,
			[]int{3, 4, 5, 6, 7, 0, 0, 1, 2, 1, 2, 3}, []int{2, 2, 2, 2, 1, 1, 1, 1}},
		// Input order matters to the naive list, not to global mode.
		{"NaiveModuloAssignment", fourEach("payments", "orders"), 8,
			[]int{0, 1, 2, 3, 4, 5, 6, 7}, []int{1, 1, 1, 1, 1, 1, 1, 1}},
		{"DynamicGlobalAssignment", fourEach("payments", "orders"), 8,
			[]int{4, 5, 6, 7, 0, 1, 2, 3}, []int{1, 1, 1, 1, 1, 1, 1, 1}},
		// The counter runs on across topics: no per-topic restart at 0.
		{"DynamicGlobalAssignment", []Topic{{"b", 3}, {"a", 3}}, 4,
			[]int{3, 0, 1, 0, 1, 2}, []int{2, 2, 1, 1}},
		{"NaiveModuloAssignment", []Topic{{"b", 3}, {"a", 3}}, 4,
			[]int{0, 1, 2, 3, 0, 1}, []int{2, 2, 1, 1}},
		// Java's String.compareTo orders by UTF-16 code unit: U+1F600 is
		// D83D DE00 and sorts before U+FF5E, although its UTF-8 bytes sort
		// after.
		{"DynamicGlobalAssignment", []Topic{{"\uFF5E", 1}, {"\U0001F600", 1}}, 2,
			[]int{1, 0}, []int{1, 1}},
		// More subtasks than partitions: the tail stays idle.
		{"DynamicGlobalAssignment", []Topic{{"t", 2}}, 5,
			[]int{0, 1}, []int{1, 1, 0, 0, 0}},
		{"NaiveModuloAssignment", []Topic{{"t", 1}}, 1,
			[]int{0}, []int{1}},
	} {
		fn := NaiveModuloAssignment
		if tc.fn == "DynamicGlobalAssignment" {
			fn = DynamicGlobalAssignment
		}
		a, err := fn(tc.topics, tc.p)
		if err != nil {
			t.Errorf("%s(%v, %d) error = %v, want nil", tc.fn, tc.topics, tc.p, err)
			continue
		}
		if got := comparisonOwners(a, tc.topics); !slices.Equal(got, tc.owners) {
			t.Errorf("%s(%v, %d) owners = %v, want %v", tc.fn, tc.topics, tc.p, got, tc.owners)
		}
		if got := comparisonCounts(a); !slices.Equal(got, tc.counts) {
			t.Errorf("%s(%v, %d) counts = %v, want %v", tc.fn, tc.topics, tc.p, got, tc.counts)
		}
	}
}

// TestComparisonDiffersFromFlink pins the point of the naive layout: it is
// not what Flink's KafkaSource does.
func TestComparisonDiffersFromFlink(t *testing.T) {
	topics := fourEach("orders", "payments")
	fresh, err := FreshAssignment(topics, 8)
	if err != nil {
		t.Fatal(err)
	}
	naive, err := NaiveModuloAssignment(topics, 8)
	if err != nil {
		t.Fatal(err)
	}
	want := []int{0, 0, 0, 2, 2, 2, 2, 0} // both topics start at subtask 3
	if got := comparisonCounts(fresh); !slices.Equal(got, want) {
		t.Errorf("FreshAssignment(%v, 8) counts = %v, want %v", topics, got, want)
	}
	if got, dont := comparisonCounts(naive), comparisonCounts(fresh); slices.Equal(got, dont) {
		t.Errorf("NaiveModuloAssignment(%v, 8) counts = %v, want anything but FreshAssignment's %v", topics, got, dont)
	}
}

// TestComparisonSingleTopicAgree: with one topic the naive list and the
// sorted global list are the same list, so the two layouts agree.
func TestComparisonSingleTopicAgree(t *testing.T) {
	for _, p := range []int{1, 3, 7, 16} {
		topics := []Topic{{Name: "events", Partitions: 12}}
		n, _ := NaiveModuloAssignment(topics, p)
		g, _ := DynamicGlobalAssignment(topics, p)
		if got, want := comparisonOwners(g, topics), comparisonOwners(n, topics); !slices.Equal(got, want) {
			t.Errorf("DynamicGlobalAssignment(%v, %d) owners = %v, want %v (NaiveModuloAssignment)", topics, p, got, want)
		}
	}
}

func TestComparisonInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 300 {
		nt := 1 + rng.IntN(6)
		var topics []Topic
		for i := range nt {
			topics = append(topics, Topic{Name: fmt.Sprintf("t%c%d", 'a'+rng.IntN(26), i), Partitions: 1 + rng.IntN(40)})
		}
		p := 1 + rng.IntN(64)
		for _, f := range comparisonFuncs {
			a, err := f.fn(topics, p)
			if err != nil {
				t.Fatalf("%s(%v, %d) error = %v, want nil", f.name, topics, p, err)
			}
			if err := comparisonCheck(a, topics, p); err != nil {
				t.Errorf("%s(%v, %d) (iteration %d): %v", f.name, topics, p, iter, err)
			}
			// Both layouts deal a single list round-robin: counts differ
			// by at most one.
			c := comparisonCounts(a)
			if lo, hi := slices.Min(c), slices.Max(c); hi-lo > 1 {
				t.Errorf("%s(%v, %d) counts = %v, want max-min <= 1", f.name, topics, p, c)
			}
		}
	}
}

// comparisonCheck verifies that a assigns every partition of topics exactly
// once to a subtask in [0, p), that Owners and Subtasks agree, and that each
// subtask lists topics in input order with partitions ascending.
func comparisonCheck(a Assignment, topics []Topic, p int) error {
	if a.Parallelism != p || len(a.Subtasks) != p {
		return fmt.Errorf("Parallelism = %d with %d subtasks, want %d", a.Parallelism, len(a.Subtasks), p)
	}
	all := Partitions(topics)
	if len(a.Owners) != len(all) {
		return fmt.Errorf("len(Owners) = %d, want %d", len(a.Owners), len(all))
	}
	pos := make(map[TopicPartition]int, len(all))
	for i, tp := range all {
		pos[tp] = i
		o, ok := a.OwnerOf(tp)
		if !ok {
			return fmt.Errorf("OwnerOf(%v) missing, want an owner", tp)
		}
		if o < 0 || o >= p {
			return fmt.Errorf("OwnerOf(%v) = %d, want 0..%d", tp, o, p-1)
		}
	}
	seen := make(map[TopicPartition]bool, len(all))
	for s, ps := range a.Subtasks {
		for j, tp := range ps {
			if seen[tp] {
				return fmt.Errorf("%v listed twice in Subtasks, want once", tp)
			}
			seen[tp] = true
			if o, ok := a.OwnerOf(tp); !ok || o != s {
				return fmt.Errorf("%v in Subtasks[%d] but OwnerOf = %d, %v", tp, s, o, ok)
			}
			if j > 0 && pos[ps[j-1]] > pos[tp] {
				return fmt.Errorf("Subtasks[%d] = %v, want input order", s, ps)
			}
		}
	}
	if len(seen) != len(all) {
		return fmt.Errorf("Subtasks hold %d partitions, want %d", len(seen), len(all))
	}
	return nil
}

func TestComparisonBadInput(t *testing.T) {
	good := []Topic{{Name: "a", Partitions: 2}}
	for _, f := range comparisonFuncs {
		for _, p := range []int{0, -1, UpperBoundMaxParallelism + 1} {
			_, err := f.fn(good, p)
			var pe *ParallelismError
			if !errors.As(err, &pe) {
				t.Errorf("%s(%v, %d) error = %v, want *ParallelismError", f.name, good, p, err)
			}
		}
		if _, err := f.fn(good, UpperBoundMaxParallelism); err != nil {
			t.Errorf("%s(%v, %d) error = %v, want nil", f.name, good, UpperBoundMaxParallelism, err)
		}
		for _, topics := range [][]Topic{
			nil,
			{},
			{{Name: "", Partitions: 1}},
			{{Name: "a", Partitions: 0}},
			{{Name: "a", Partitions: 1}, {Name: "a", Partitions: 2}},
			{{Name: "a", Partitions: MaxPartitions + 1}},
		} {
			if _, err := f.fn(topics, 4); err == nil {
				t.Errorf("%s(%v, 4) error = nil, want an error", f.name, topics)
			}
		}
	}
}
