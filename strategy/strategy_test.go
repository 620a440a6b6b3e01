package strategy

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/skewscope/skewscope/assign"
)

var wantOrder = []string{
	"flink",
	"naive-modulo",
	"dynamic-global",
	"kafka-range",
	"kafka-roundrobin",
	"kafka-cooperative-sticky",
}

func TestAllOrderAndFields(t *testing.T) {
	all := All()
	var names []string
	for _, s := range all {
		names = append(names, s.Name)
	}
	if !slices.Equal(names, wantOrder) {
		t.Fatalf("All() names = %v, want %v", names, wantOrder)
	}
	if got := Names(); !slices.Equal(got, wantOrder) {
		t.Errorf("Names() = %v, want %v", got, wantOrder)
	}
	if all[0].Name != Default {
		t.Errorf("All()[0].Name = %q, want Default %q", all[0].Name, Default)
	}
	for _, s := range all {
		if s.Label == "" || s.Description == "" || s.Source == "" || s.Assign == nil {
			t.Errorf("All() entry %q = %+v, want Label, Description, Source and Assign set", s.Name, s)
		}
		if got, want := s.Comparison, s.Name != "flink"; got != want {
			t.Errorf("Lookup(%q).Comparison = %v, want %v", s.Name, got, want)
		}
		if got, want := strings.Contains(s.Label, "comparison"), s.Comparison; got != want {
			t.Errorf("Lookup(%q).Label = %q, mentions comparison %v, want %v", s.Name, s.Label, got, want)
		}
	}
	for name, want := range map[string]bool{
		"flink": true, "naive-modulo": false, "dynamic-global": true,
		"kafka-range": true, "kafka-roundrobin": true, "kafka-cooperative-sticky": false,
	} {
		s, _ := Lookup(name)
		if s.Exact != want {
			t.Errorf("Lookup(%q).Exact = %v, want %v", name, s.Exact, want)
		}
	}
	wantLabels := map[string]string{
		"flink":        "Flink KafkaSource (exact)",
		"kafka-range":  "Kafka consumer group: range (comparison)",
		"naive-modulo": "Naive i % p (comparison; wrong since Flink 1.3.2)",
	}
	for name, want := range wantLabels {
		if s, _ := Lookup(name); s.Label != want {
			t.Errorf("Lookup(%q).Label = %q, want %q", name, s.Label, want)
		}
	}
	if s, _ := Lookup("kafka-cooperative-sticky"); !strings.Contains(s.Label, "approximate") {
		t.Errorf("Lookup(%q).Label = %q, want it to say approximate", s.Name, s.Label)
	}
}

func TestAllReturnsCopy(t *testing.T) {
	a := All()
	a[0].Name = "changed"
	if got := All()[0].Name; got != "flink" {
		t.Errorf("All()[0].Name after changing a copy = %q, want %q", got, "flink")
	}
}

func TestLookup(t *testing.T) {
	for _, name := range wantOrder {
		s, err := Lookup(name)
		if err != nil || s.Name != name {
			t.Errorf("Lookup(%q) = %q, %v, want %q, nil", name, s.Name, err, name)
		}
	}
	for _, name := range []string{"", "Flink", "FLINK", " flink", "range", "kafka-sticky", "sticky", "kafka-uniform", strings.Repeat("x", 200)} {
		s, err := Lookup(name)
		if err == nil {
			t.Errorf("Lookup(%q) = %q, nil, want an error", name, s.Name)
			continue
		}
		for _, valid := range wantOrder {
			if !strings.Contains(err.Error(), valid) {
				t.Errorf("Lookup(%q) error = %q, want it to list %q", name, err, valid)
			}
		}
		if len(err.Error()) > 300 {
			t.Errorf("Lookup(%q) error has %d bytes, want the name clipped", name, len(err.Error()))
		}
	}
}

// TestJSON: the registry is served as JSON, so the func field must be left
// out rather than make encoding/json fail.
func TestJSON(t *testing.T) {
	b, err := json.Marshal(All())
	if err != nil {
		t.Fatalf("json.Marshal(All()) error = %v, want nil", err)
	}
	var back []map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != len(wantOrder) {
		t.Fatalf("json.Marshal(All()) has %d entries, want %d", len(back), len(wantOrder))
	}
	var keys []string
	for k := range back[0] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"comparison", "description", "exact", "label", "name", "source"}
	if !slices.Equal(keys, want) {
		t.Errorf("json.Marshal(All())[0] keys = %v, want %v", keys, want)
	}
}

func topicsOf(parts int, names ...string) []assign.Topic {
	var ts []assign.Topic
	for _, n := range names {
		ts = append(ts, assign.Topic{Name: n, Partitions: parts})
	}
	return ts
}

func counts(a assign.Assignment) []int {
	c := make([]int, len(a.Subtasks))
	for i, ps := range a.Subtasks {
		c[i] = len(ps)
	}
	return c
}

func tps(spec ...any) []assign.TopicPartition {
	var out []assign.TopicPartition
	for i := 0; i < len(spec); i += 2 {
		out = append(out, assign.TopicPartition{Topic: spec[i].(string), Partition: int32(spec[i+1].(int))})
	}
	return out
}

// TestWorkedExamples are multi-topic layouts at p = 8 and a consumer group of
// 2 members, through the registry.
func TestWorkedExamples(t *testing.T) {
	for _, tc := range []struct {
		strategy string
		topics   []assign.Topic
		p        int
		counts   []int
	}{
		// FLIP-537 case 1 (two topics of four partitions) for every strategy.
		{"flink", topicsOf(4, "orders", "payments"), 8, []int{0, 0, 0, 2, 2, 2, 2, 0}},
		{"naive-modulo", topicsOf(4, "orders", "payments"), 8, []int{1, 1, 1, 1, 1, 1, 1, 1}},
		{"dynamic-global", topicsOf(4, "orders", "payments"), 8, []int{1, 1, 1, 1, 1, 1, 1, 1}},
		{"kafka-range", topicsOf(4, "orders", "payments"), 8, []int{2, 2, 2, 2, 0, 0, 0, 0}},
		{"kafka-roundrobin", topicsOf(4, "orders", "payments"), 8, []int{1, 1, 1, 1, 1, 1, 1, 1}},
		{"kafka-cooperative-sticky", topicsOf(4, "orders", "payments"), 8, []int{1, 1, 1, 1, 1, 1, 1, 1}},
		// Four topics of three partitions, and two of four.
		{"flink", topicsOf(3, "orders", "payments", "clicks", "user-events"), 8, []int{0, 0, 0, 2, 2, 4, 2, 2}},
		{"flink", topicsOf(4, "topic-a", "topic-b"), 8, []int{1, 0, 0, 0, 1, 2, 2, 2}},
		{"naive-modulo", topicsOf(3, "orders", "payments", "clicks", "user-events"), 8, []int{2, 2, 2, 2, 1, 1, 1, 1}},
		// Two topics with 3 partitions each and 2 members.
		{"kafka-range", topicsOf(3, "t0", "t1"), 2, []int{4, 2}},
		{"kafka-roundrobin", topicsOf(3, "t0", "t1"), 2, []int{3, 3}},
		{"kafka-cooperative-sticky", topicsOf(3, "t0", "t1"), 2, []int{3, 3}},
	} {
		s, err := Lookup(tc.strategy)
		if err != nil {
			t.Fatal(err)
		}
		a, err := s.Assign(tc.topics, tc.p)
		if err != nil {
			t.Errorf("Lookup(%q).Assign(%v, %d) error = %v, want nil", tc.strategy, tc.topics, tc.p, err)
			continue
		}
		if got := counts(a); !slices.Equal(got, tc.counts) {
			t.Errorf("Lookup(%q).Assign(%v, %d) counts = %v, want %v", tc.strategy, tc.topics, tc.p, got, tc.counts)
		}
	}
}

// TestWorkedExampleLayouts pins the exact partitions of the two-member
// example, as in franz-go's RangeBalancer doc and Kafka's assignor docs.
func TestWorkedExampleLayouts(t *testing.T) {
	topics := topicsOf(3, "t0", "t1")
	for _, tc := range []struct {
		strategy string
		want     [][]assign.TopicPartition
	}{
		{"kafka-range", [][]assign.TopicPartition{
			tps("t0", 0, "t0", 1, "t1", 0, "t1", 1),
			tps("t0", 2, "t1", 2),
		}},
		{"kafka-roundrobin", [][]assign.TopicPartition{
			tps("t0", 0, "t0", 2, "t1", 1),
			tps("t0", 1, "t1", 0, "t1", 2),
		}},
	} {
		s, _ := Lookup(tc.strategy)
		a, err := s.Assign(topics, 2)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(a.Subtasks, tc.want, slices.Equal) {
			t.Errorf("Lookup(%q).Assign(%v, 2).Subtasks = %v, want %v", tc.strategy, topics, a.Subtasks, tc.want)
		}
	}
}

// checkAssignment verifies that a assigns every partition of topics exactly
// once to a subtask in [0, p), that Owners and Subtasks agree, and that each
// subtask lists topics in input order with partitions ascending.
func checkAssignment(a assign.Assignment, topics []assign.Topic, p int) error {
	if a.Parallelism != p || len(a.Subtasks) != p {
		return fmt.Errorf("Parallelism = %d with %d subtasks, want %d", a.Parallelism, len(a.Subtasks), p)
	}
	all := assign.Partitions(topics)
	if len(a.Owners) != len(all) {
		return fmt.Errorf("len(Owners) = %d, want %d", len(a.Owners), len(all))
	}
	pos := make(map[assign.TopicPartition]int, len(all))
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
	seen := make(map[assign.TopicPartition]bool, len(all))
	for s, ps := range a.Subtasks {
		for j, tp := range ps {
			if _, ok := pos[tp]; !ok {
				return fmt.Errorf("Subtasks[%d] holds %v, which is not an input partition", s, tp)
			}
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

// balanced lists the strategies whose counts differ by at most one whatever
// the topics: they deal one list round-robin, or optimise for balance.
var balanced = map[string]bool{
	"naive-modulo":             true,
	"dynamic-global":           true,
	"kafka-roundrobin":         true,
	"kafka-cooperative-sticky": true,
}

func randomTopics(rng *rand.Rand, maxTopics, maxParts int) []assign.Topic {
	n := 1 + rng.IntN(maxTopics)
	ts := make([]assign.Topic, n)
	for i := range ts {
		// Random letters keep input order and sorted order apart.
		ts[i] = assign.Topic{Name: fmt.Sprintf("%c%c-%d", 'a'+rng.IntN(26), 'a'+rng.IntN(26), i), Partitions: 1 + rng.IntN(maxParts)}
	}
	return ts
}

func TestInvariantsRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for iter := range 150 {
		topics := randomTopics(rng, 8, 48)
		p := 1 + rng.IntN(40)
		if iter%10 == 0 {
			p = 1 + rng.IntN(300) // often more subtasks than partitions
		}
		for _, s := range All() {
			a, err := s.Assign(topics, p)
			if err != nil {
				t.Fatalf("Lookup(%q).Assign(%v, %d) error = %v, want nil", s.Name, topics, p, err)
			}
			if err := checkAssignment(a, topics, p); err != nil {
				t.Errorf("Lookup(%q).Assign(%v, %d): %v", s.Name, topics, p, err)
			}
			if balanced[s.Name] {
				c := counts(a)
				if lo, hi := slices.Min(c), slices.Max(c); hi-lo > 1 {
					t.Errorf("Lookup(%q).Assign(%v, %d) counts = %v, want max-min <= 1", s.Name, topics, p, c)
				}
			}
		}
	}
}

// TestDeterministic: every strategy but the sticky one gives the same layout
// on every call. franz-go's sticky engine numbers topics in Go map order, so
// its layout may change between calls; its counts stay balanced.
func TestDeterministic(t *testing.T) {
	topics := []assign.Topic{{Name: "a", Partitions: 7}, {Name: "b", Partitions: 5}, {Name: "c", Partitions: 9}, {Name: "d", Partitions: 2}, {Name: "e", Partitions: 11}}
	for _, s := range All() {
		if s.Name == "kafka-cooperative-sticky" {
			continue
		}
		first, _ := s.Assign(topics, 6)
		for range 20 {
			again, _ := s.Assign(topics, 6)
			if !slices.EqualFunc(again.Subtasks, first.Subtasks, slices.Equal) {
				t.Fatalf("Lookup(%q).Assign(%v, 6).Subtasks = %v, then %v, want the same", s.Name, topics, first.Subtasks, again.Subtasks)
			}
		}
	}
}

func TestBadInput(t *testing.T) {
	good := []assign.Topic{{Name: "a", Partitions: 3}}
	for _, s := range All() {
		for _, p := range []int{0, -1, -32768, assign.UpperBoundMaxParallelism + 1} {
			a, err := s.Assign(good, p)
			var pe *assign.ParallelismError
			if !errors.As(err, &pe) {
				t.Errorf("Lookup(%q).Assign(%v, %d) = %v, %v, want *assign.ParallelismError", s.Name, good, p, a.Subtasks, err)
			}
		}
		for _, topics := range [][]assign.Topic{
			nil,
			{},
			{{Name: "", Partitions: 1}},
			{{Name: "a", Partitions: 0}},
			{{Name: "a", Partitions: -2}},
			{{Name: "a", Partitions: 1}, {Name: "a", Partitions: 2}},
			{{Name: "a", Partitions: assign.MaxPartitions + 1}},
		} {
			if _, err := s.Assign(topics, 4); err == nil {
				t.Errorf("Lookup(%q).Assign(%v, 4) error = nil, want an error", s.Name, topics)
			}
		}
	}
}

// TestLargestParallelism: p at Flink's upper bound works for every strategy
// (franz-go's sticky engine numbers members in a uint16).
func TestLargestParallelism(t *testing.T) {
	if testing.Short() {
		t.Skip("32768 group members")
	}
	topics := []assign.Topic{{Name: "a", Partitions: 40}, {Name: "b", Partitions: 3}}
	p := assign.UpperBoundMaxParallelism
	for _, s := range All() {
		a, err := s.Assign(topics, p)
		if err != nil {
			t.Errorf("Lookup(%q).Assign(%v, %d) error = %v, want nil", s.Name, topics, p, err)
			continue
		}
		if err := checkAssignment(a, topics, p); err != nil {
			t.Errorf("Lookup(%q).Assign(%v, %d): %v", s.Name, topics, p, err)
		}
	}
}
