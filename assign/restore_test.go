package assign

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func restoreOrders(n int) []Topic { return []Topic{{Name: "orders", Partitions: n}} }

// restorePartitions lists the partition numbers of tps.
func restorePartitions(tps []TopicPartition) []int32 {
	out := make([]int32, len(tps))
	for i, tp := range tps {
		out[i] = tp.Partition
	}
	return out
}

// TestRestoreOrdersVectors checks what a real JDK 17 gave for the topic
// orders with 12 partitions, earliest offsets, fresh at 2, restored at 3: the
// order in which reader 0 receives its splits (the enumerator's HashSet) and
// every reader's saved list (its HashMap of split ids).
func TestRestoreOrdersVectors(t *testing.T) {
	fresh := map[string][]int32{ // reader 0's addSplits order
		ConnectorLine5:  {1, 3, 5, 11, 7, 9},
		ConnectorLine34: {1, 3, 11, 5, 7, 9},
	}
	wantSnap := [][]int32{{9, 3, 1, 7, 11, 5}, {10, 8, 2, 0, 6, 4}}
	for line, wantAdd := range fresh {
		in := RestoreInput{Topics: restoreOrders(12), History: []int{2}, ConnectorLine: line}
		res, err := Restore(in)
		if err != nil {
			t.Fatalf("Restore(%+v) error %v", in, err)
		}
		if got := restorePartitions(res.Assignment.Subtasks[0]); !slices.Equal(got, wantAdd) {
			t.Errorf("Restore(orders×12, {2}, %s) reader 0 addSplits = %v, want %v", line, got, wantAdd)
		}
		for j := range 2 {
			if got := restorePartitions(res.Snapshot[j]); !slices.Equal(got, wantSnap[j]) {
				t.Errorf("Restore(orders×12, {2}, %s).Snapshot[%d] = %v, want %v", line, j, got, wantSnap[j])
			}
		}
		if !res.Exact || len(res.Uncertain) != 0 || res.Pieces != nil {
			t.Errorf("Restore(orders×12, {2}, %s) exact %v, uncertain %v, pieces %v; want true, [], nil", line, res.Exact, res.Uncertain, res.Pieces)
		}
	}

	res, err := RestoreAssignment(restoreOrders(12), 2, 3)
	if err != nil {
		t.Fatalf("RestoreAssignment(orders×12, 2, 3) error %v", err)
	}
	wantList := [][]int32{{9, 3, 1, 7}, {11, 5, 10, 8}, {2, 0, 6, 4}}
	wantNext := [][]int32{{9, 3, 1, 7}, {10, 8, 11, 5}, {2, 0, 6, 4}}
	wantPieces := [][]RestorePiece{{{0, 4}}, {{0, 2}, {1, 2}}, {{1, 4}}}
	for j := range 3 {
		if got := restorePartitions(res.Assignment.Subtasks[j]); !slices.Equal(got, wantList[j]) {
			t.Errorf("RestoreAssignment(orders×12, 2, 3).Subtasks[%d] = %v, want %v", j, got, wantList[j])
		}
		if got := restorePartitions(res.Snapshot[j]); !slices.Equal(got, wantNext[j]) {
			t.Errorf("RestoreAssignment(orders×12, 2, 3).Snapshot[%d] = %v, want %v", j, got, wantNext[j])
		}
		if !slices.Equal(res.Pieces[j], wantPieces[j]) {
			t.Errorf("RestoreAssignment(orders×12, 2, 3).Pieces[%d] = %v, want %v", j, res.Pieces[j], wantPieces[j])
		}
		for _, tp := range res.Assignment.Subtasks[j] {
			if o, ok := res.Assignment.OwnerOf(tp); !ok || o != j {
				t.Errorf("RestoreAssignment(orders×12, 2, 3).OwnerOf(%v) = %d, %v, want %d", tp, o, ok, j)
			}
		}
	}
	if !res.Exact || len(res.Uncertain) != 0 {
		t.Errorf("RestoreAssignment(orders×12, 2, 3) exact %v uncertain %v, want true []", res.Exact, res.Uncertain)
	}
	if res.Source != restoreSource || !strings.Contains(strings.Join(res.Notes, " "), "depends on the history 2 → 3") {
		t.Errorf("RestoreAssignment(orders×12, 2, 3) source %q notes %q, want the restore source and a history note", res.Source, res.Notes)
	}
}

// TestRestoreWhatIfExample: orders with 8 partitions at 4 subtasks (fresh:
// subtask 3 reads 0 and 4, subtask 0 reads 1 and 5) restored at 3 gives
// contiguous chunks of 3, 3 and 2 of the saved lists
// (RoundRobinOperatorStateRepartitioner), not the start-index layout.
func TestRestoreWhatIfExample(t *testing.T) {
	fresh, err := FreshAssignment(restoreOrders(8), 4)
	if err != nil {
		t.Fatal(err)
	}
	if got := restorePartitions(fresh.Subtasks[3]); !slices.Equal(got, []int32{0, 4}) {
		t.Errorf("FreshAssignment(orders×8, 4).Subtasks[3] = %v, want [0 4]", got)
	}
	if got := restorePartitions(fresh.Subtasks[0]); !slices.Equal(got, []int32{1, 5}) {
		t.Errorf("FreshAssignment(orders×8, 4).Subtasks[0] = %v, want [1 5]", got)
	}
	res, err := RestoreAssignment(restoreOrders(8), 4, 3)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, ps := range res.Assignment.Subtasks {
		sizes = append(sizes, len(ps))
	}
	if !slices.Equal(sizes, []int{3, 3, 2}) {
		t.Errorf("RestoreAssignment(orders×8, 4, 3) chunk sizes = %v, want [3 3 2]", sizes)
	}
	// The old snapshot lists (real JDK 17, testdata/HashOrder.java) are
	// [1 5] [2 6] [3 7] [0 4], concatenated [1 5 2 6 3 7 0 4].
	want := [][]int32{{1, 5, 2}, {6, 3, 7}, {0, 4}}
	for j, w := range want {
		if got := restorePartitions(res.Assignment.Subtasks[j]); !slices.Equal(got, w) {
			t.Errorf("RestoreAssignment(orders×8, 4, 3).Subtasks[%d] = %v, want %v", j, got, w)
		}
	}
	if !res.Exact {
		t.Errorf("RestoreAssignment(orders×8, 4, 3).Exact = false, want true (notes %q)", res.Notes)
	}
}

func TestRestoreValidation(t *testing.T) {
	orders := restoreOrders(4)
	tests := []struct {
		name string
		in   RestoreInput
		want string
	}{
		{"no topics", RestoreInput{History: []int{1}}, "no topics"},
		{"empty history", RestoreInput{Topics: orders}, "history is empty"},
		{"zero parallelism", RestoreInput{Topics: orders, History: []int{2, 0}}, "history[1]: Operator parallelism not within bounds: 0"},
		{"too large", RestoreInput{Topics: orders, History: []int{32769}}, "history[0]: Operator parallelism not within bounds: 32769"},
		{"long history", RestoreInput{Topics: orders, History: make([]int, MaxRestoreHistory+1)}, "at most 64"},
		{"offsets", RestoreInput{Topics: orders, History: []int{1}, StartingOffsets: "newest"}, `starting offsets "newest"`},
		{"connector", RestoreInput{Topics: orders, History: []int{1}, ConnectorLine: "6"}, `connector line "6"`},
		{"shrunk topic", RestoreInput{Topics: orders, History: []int{1}, NewTopics: []Topic{{"orders", 3}}}, "Kafka cannot remove partitions"},
		{"new twice", RestoreInput{Topics: orders, History: []int{1}, NewTopics: []Topic{{"a", 1}, {"a", 2}}}, "listed twice"},
		{"new empty name", RestoreInput{Topics: orders, History: []int{1}, NewTopics: []Topic{{"", 1}}}, "empty name"},
		{"new zero", RestoreInput{Topics: orders, History: []int{1}, NewTopics: []Topic{{"b", 0}}}, "0 partitions"},
		{"too many", RestoreInput{Topics: []Topic{{"a", MaxPartitions}, {"b", 1}}, History: []int{1}}, "at most 1048576"},
	}
	for _, tt := range tests {
		_, err := Restore(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Restore(%s) error = %v, want one containing %q", tt.name, err, tt.want)
		}
	}
	var pe *ParallelismError
	if _, err := RestoreAssignment(orders, 0, 2); !errors.As(err, &pe) {
		t.Errorf("RestoreAssignment(orders, 0, 2) error = %v, want a *ParallelismError", err)
	}
}

// restoreRandomInput draws a job history; names are Kafka-legal.
func restoreRandomInput(r *rand.Rand, maxTopics, maxParts, maxP, maxHist int) RestoreInput {
	in := RestoreInput{}
	seen := map[string]bool{}
	name := func() string {
		const alpha = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"
		for {
			b := make([]byte, 1+r.IntN(12))
			for i := range b {
				b[i] = alpha[r.IntN(len(alpha))]
			}
			if s := string(b); !seen[s] {
				seen[s] = true
				return s
			}
		}
	}
	for range 1 + r.IntN(maxTopics) {
		in.Topics = append(in.Topics, Topic{Name: name(), Partitions: 1 + r.IntN(maxParts)})
	}
	for range 1 + r.IntN(maxHist) {
		if len(in.History) > 0 && r.IntN(4) == 0 {
			in.History = append(in.History, in.History[len(in.History)-1])
		} else {
			in.History = append(in.History, 1+r.IntN(maxP))
		}
	}
	in.StartingOffsets = []string{"", "earliest", "committed", "latest", "timestamp", "specific"}[r.IntN(6)]
	in.ConnectorLine = []string{"", "5", "3-4"}[r.IntN(3)]
	if r.IntN(4) == 0 {
		for _, t := range in.Topics {
			if r.IntN(2) == 0 {
				in.NewTopics = append(in.NewTopics, Topic{Name: t.Name, Partitions: t.Partitions + r.IntN(5)})
			}
		}
		if r.IntN(2) == 0 {
			in.NewTopics = append(in.NewTopics, Topic{Name: name(), Partitions: 1 + r.IntN(maxParts)})
		}
	}
	return in
}

// restoreAllTopics merges Topics and NewTopics.
func restoreAllTopics(in RestoreInput) []Topic {
	all := slices.Clone(in.Topics)
	for _, nt := range in.NewTopics {
		i := slices.IndexFunc(all, func(t Topic) bool { return t.Name == nt.Name })
		if i >= 0 {
			all[i].Partitions = nt.Partitions
		} else {
			all = append(all, nt)
		}
	}
	return all
}

// restoreCheckInvariants checks what holds for any valid input.
func restoreCheckInvariants(t *testing.T, in RestoreInput, res RestoreResult) {
	t.Helper()
	h := in.History
	q := h[len(h)-1]
	all := Partitions(restoreAllTopics(in))
	a := res.Assignment
	if a.Parallelism != q || len(a.Subtasks) != q || len(res.Snapshot) != q {
		t.Fatalf("Restore(%v): parallelism %d, %d subtasks, %d snapshots; want %d", h, a.Parallelism, len(a.Subtasks), len(res.Snapshot), q)
	}
	if len(a.Owners) != len(all) {
		t.Fatalf("Restore(%v): %d owners, want %d partitions", h, len(a.Owners), len(all))
	}
	if !slices.Equal(a.Topics, restoreAllTopics(in)) {
		t.Fatalf("Restore(%v).Topics = %v, want %v", h, a.Topics, restoreAllTopics(in))
	}
	seen := map[TopicPartition]bool{}
	newOwned := make([]int, q)
	isNew := map[TopicPartition]bool{}
	for _, tp := range Partitions(in.Topics) {
		isNew[tp] = false
	}
	for j, ps := range a.Subtasks {
		for _, tp := range ps {
			if seen[tp] {
				t.Fatalf("Restore(%v): %v listed twice", h, tp)
			}
			seen[tp] = true
			if o, ok := a.OwnerOf(tp); !ok || o != j {
				t.Fatalf("Restore(%v).OwnerOf(%v) = %d, %v, want %d (its list)", h, tp, o, ok, j)
			}
			if _, old := isNew[tp]; !old {
				newOwned[j]++
				if o, _ := KafkaSplitOwner(tp, q); o != j {
					t.Fatalf("Restore(%v): discovered %v on %d, want getSplitOwner %d", h, tp, j, o)
				}
			}
		}
		if !slices.Equal(restoreSortTPs(ps), restoreSortTPs(res.Snapshot[j])) {
			t.Fatalf("Restore(%v).Snapshot[%d] is not a permutation of Subtasks[%d]", h, j, j)
		}
	}
	for _, tp := range all {
		if !seen[tp] {
			t.Fatalf("Restore(%v): %v has no owner", h, tp)
		}
	}
	if res.Exact != (len(res.Uncertain) == 0) {
		t.Fatalf("Restore(%v): Exact %v with %d uncertain", h, res.Exact, len(res.Uncertain))
	}
	for _, tp := range res.Uncertain {
		if _, old := isNew[tp]; !old {
			t.Fatalf("Restore(%v): discovered partition %v marked uncertain", h, tp)
		}
	}
	if len(h) == 1 {
		if res.Pieces != nil {
			t.Fatalf("Restore(%v).Pieces = %v, want nil", h, res.Pieces)
		}
		fresh, err := FreshAssignment(restoreAllTopics(in), q)
		if err != nil {
			t.Fatal(err)
		}
		for tp, o := range fresh.All() {
			if got, ok := a.OwnerOf(tp); !ok || got != o {
				t.Fatalf("Restore(%v).OwnerOf(%v) = %d, %v, want FreshAssignment's %d", h, tp, got, ok, o)
			}
		}
		if !res.Exact {
			t.Fatalf("Restore(%v) (no restore) Exact = false", h)
		}
		return
	}
	p := h[len(h)-2]
	T := len(Partitions(in.Topics))
	for j := range q {
		restored := len(a.Subtasks[j]) - newOwned[j]
		sum, prev := 0, -1
		for _, pc := range res.Pieces[j] {
			if pc.OldSubtask <= prev || pc.OldSubtask >= p || pc.Count <= 0 {
				t.Fatalf("Restore(%v).Pieces[%d] = %v: want ascending old subtasks < %d with counts > 0", h, j, res.Pieces[j], p)
			}
			prev = pc.OldSubtask
			sum += pc.Count
		}
		if sum != restored {
			t.Fatalf("Restore(%v).Pieces[%d] sums to %d, want %d restored splits", h, j, sum, restored)
		}
		if q != p {
			want := T / q
			if j < T%q {
				want++
			}
			if restored != want {
				t.Fatalf("Restore(%v): new subtask %d restored %d splits, want chunk size %d", h, j, restored, want)
			}
		} else if len(res.Pieces[j]) > 1 || (len(res.Pieces[j]) == 1 && res.Pieces[j][0].OldSubtask != j) {
			t.Fatalf("Restore(%v).Pieces[%d] = %v, want only old subtask %d (same parallelism)", h, j, res.Pieces[j], j)
		}
	}
}

func restoreSortTPs(tps []TopicPartition) []TopicPartition {
	s := slices.Clone(tps)
	slices.SortFunc(s, func(a, b TopicPartition) int {
		if a.Topic != b.Topic {
			return strings.Compare(a.Topic, b.Topic)
		}
		return int(a.Partition - b.Partition)
	})
	return s
}

func TestRestoreInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for range 400 {
		in := restoreRandomInput(r, 6, 120, 40, 4)
		res, err := Restore(in)
		if err != nil {
			t.Fatalf("Restore(%+v) error %v", in, err)
		}
		restoreCheckInvariants(t, in, res)

		// Restoring again at the same parallelism keeps every owner, and the
		// new restored lists are the previous snapshots.
		same := in
		same.History = append(slices.Clone(in.History), in.History[len(in.History)-1])
		same.NewTopics = nil
		base := in
		base.NewTopics = nil
		res0, err0 := Restore(base)
		res1, err1 := Restore(same)
		if err0 != nil || err1 != nil {
			t.Fatalf("Restore errors %v, %v", err0, err1)
		}
		for j := range res0.Snapshot {
			if !slices.Equal(res1.Assignment.Subtasks[j], res0.Snapshot[j]) {
				t.Fatalf("Restore(%v).Subtasks[%d] = %v, want Restore(%v).Snapshot[%d] = %v",
					same.History, j, res1.Assignment.Subtasks[j], base.History, j, res0.Snapshot[j])
			}
		}
		if !slices.Equal(res1.Uncertain, res0.Uncertain) {
			t.Fatalf("Restore(%v).Uncertain = %v, want %v as for %v", same.History, res1.Uncertain, res0.Uncertain, base.History)
		}
	}
}

// TestRestoreUncertaintySound draws other orders Flink could produce (pieces
// of a restore in random order, random subscriber order on connector 3.x/4.x,
// random order under resolved offsets) and checks that no partition the
// best guess calls certain changes owner, and that every certain split stays
// inside the position interval the best guess gives it in every snapshot.
func TestRestoreUncertaintySound(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	moved, uncertain := 0, 0
	for trial := range 200 {
		var in RestoreInput
		switch trial % 3 {
		case 0:
			in = restoreRandomInput(r, 4, 60, 12, 5)
		case 1:
			in = restoreRandomInput(r, 3, 30, 6, 5)
		default:
			in = restoreRandomInput(r, 8, 200, 40, 3)
		}
		cfg, err := in.normalize()
		if err != nil {
			t.Fatal(err)
		}
		best, bt := runRestore(cfg, nil, true)
		uncertain += len(best.Uncertain)
		changed := map[TopicPartition]bool{}
		for k := range 8 {
			alt, at := runRestore(cfg, rand.New(rand.NewPCG(uint64(trial), uint64(k))), true)
			for s, bs := range bt.steps {
				as := at.steps[s]
				for e, c := range bs.certain {
					if !c {
						if as.owner[e] != bs.owner[e] {
							changed[restoreElemTP(cfg, e)] = true
						}
						continue
					}
					if as.owner[e] != bs.owner[e] {
						t.Fatalf("%+v step %d: certain partition %v on %d in another order, %d in the best guess",
							in, s, restoreElemTP(cfg, e), as.owner[e], bs.owner[e])
					}
				}
				for j, snap := range as.snap {
					for pos, e := range snap {
						if !bs.certain[e] {
							continue
						}
						i := slices.Index(bt.steps[s].snap[j], e)
						if lo, hi := bs.snapLo[j][i], bs.snapHi[j][i]; int32(pos) < lo || int32(pos) > hi {
							t.Fatalf("%+v step %d subtask %d: certain %v at %d in another order, outside [%d, %d]",
								in, s, j, restoreElemTP(cfg, int(e)), pos, lo, hi)
						}
					}
				}
			}
			_ = alt
		}
		moved += len(changed)
	}
	t.Logf("uncertain partitions: %d; of these, moved in a sampled other order: %d", uncertain, moved)
}

// restoreElemTP names element e of runRestore (topics, then discovered).
func restoreElemTP(cfg restoreConfig, e int) TopicPartition {
	for _, tp := range Partitions(cfg.topics) {
		if e == 0 {
			return tp
		}
		e--
	}
	have := map[string]int{}
	for _, t := range cfg.topics {
		have[t.Name] = t.Partitions
	}
	for _, t := range cfg.newTopics {
		for p := have[t.Name]; p < t.Partitions; p++ {
			if e == 0 {
				return TopicPartition{Topic: t.Name, Partition: int32(p)}
			}
			e--
		}
	}
	return TopicPartition{}
}

func FuzzRestore(f *testing.F) {
	f.Add(uint64(1), uint8(3), uint8(2), []byte{2, 3})
	f.Add(uint64(7), uint8(1), uint8(200), []byte{4, 3, 7, 7, 1})
	f.Add(uint64(9), uint8(12), uint8(40), []byte{0})
	f.Add(uint64(5), uint8(0), uint8(0), []byte{})
	f.Fuzz(func(t *testing.T, seed uint64, nTopics, maxParts uint8, hist []byte) {
		r := rand.New(rand.NewPCG(seed, uint64(len(hist))))
		in := restoreRandomInput(r, 1+int(nTopics%8), 1+int(maxParts), 64, 1)
		in.History = nil
		for _, b := range hist {
			in.History = append(in.History, int(b)-1) // 0 and -1 are invalid
		}
		if seed%7 == 0 {
			in.Topics = append(in.Topics, Topic{Name: "", Partitions: int(nTopics)})
		}
		res, err := Restore(in)
		valid := len(in.History) > 0 && len(in.History) <= MaxRestoreHistory && ValidateTopics(in.Topics) == nil
		for _, p := range in.History {
			valid = valid && p >= 1
		}
		if !valid {
			if err == nil {
				t.Fatalf("Restore(%+v) error = nil, want an error", in)
			}
			return
		}
		if err != nil {
			t.Fatalf("Restore(%+v) error %v", in, err)
		}
		restoreCheckInvariants(t, in, res)
	})
}

// BenchmarkRestore10k: 20 topics totalling 10,000 partitions, fresh at 1024
// and restored at 768.
func BenchmarkRestore10k(b *testing.B) {
	var topics []Topic
	for i := range 20 {
		topics = append(topics, Topic{Name: fmt.Sprintf("events.shard-%02d", i), Partitions: 500})
	}
	in := RestoreInput{Topics: topics, History: []int{1024, 768}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Restore(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10000, "ns/partition")
}

// jdkScenario is one input of testdata/HashOrder.java.
type jdkScenario struct {
	name string
	in   RestoreInput
}

func (sc jdkScenario) write(b *strings.Builder) {
	cfg, _ := sc.in.normalize()
	fmt.Fprintf(b, "scenario %s\nconnector %s\nstart %d\n", sc.name, cfg.line, cfg.start)
	for _, part := range []struct {
		key    string
		topics []Topic
	}{{"topics", sc.in.Topics}, {"discovered", sc.in.NewTopics}} {
		fmt.Fprintf(b, "%s %d", part.key, len(part.topics))
		for _, t := range part.topics {
			fmt.Fprintf(b, " %s %d", t.Name, t.Partitions)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(b, "history %d", len(sc.in.History))
	for _, p := range sc.in.History {
		fmt.Fprintf(b, " %d", p)
	}
	b.WriteString("\nend\n")
}

// jdkLabels names runRestore's elements as HashOrder.java does:
// "<topic index>:<partition>", new topics counted after Topics.
func jdkLabels(in RestoreInput) []string {
	var out []string
	have := map[string]int{}
	for i, t := range in.Topics {
		have[t.Name] = t.Partitions
		for p := range t.Partitions {
			out = append(out, fmt.Sprintf("%d:%d", i, p))
		}
	}
	for i, t := range in.NewTopics {
		for p := have[t.Name]; p < t.Partitions; p++ {
			out = append(out, fmt.Sprintf("%d:%d", len(in.Topics)+i, p))
		}
	}
	return out
}

// jdkCollidingNames returns 2^k topic names with one String.hashCode
// ("Aa" and "BB" hash alike), so their split ids and splits share bins.
func jdkCollidingNames(prefix string, k int) []string {
	names := []string{prefix}
	for range k {
		var next []string
		for _, n := range names {
			next = append(next, n+"Aa", n+"BB")
		}
		names = next
	}
	return names
}

// jdkRandomScenario draws scenario i: small, medium and large jobs, topics
// whose names collide (bins of 9+ ids: treeify resizes and trees), restores
// at equal and different parallelism, connector 5 and 3-4, earliest and
// committed offsets, and partitions discovered after the last restore.
func jdkRandomScenario(r *rand.Rand, i int) jdkScenario {
	var in RestoreInput
	switch i % 10 {
	case 0, 1, 2:
		in = restoreRandomInput(r, 4, 40, 12, 3)
	case 3, 4, 5:
		in = restoreRandomInput(r, 6, 300, 64, 4)
	case 6:
		in = restoreRandomInput(r, 8, 400, 4, 3)
	case 7, 8:
		in = restoreRandomInput(r, 1, 1, 3, 3)
		in.Topics = nil
		names := jdkCollidingNames(fmt.Sprintf("c%d.", i), 4)
		for _, n := range names[:9+r.IntN(8)] {
			in.Topics = append(in.Topics, Topic{Name: n, Partitions: 1 + r.IntN(20)})
		}
		in.NewTopics = nil
	default:
		in = restoreRandomInput(r, 1, 1, 2, 3)
		in.Topics = nil
		for _, n := range jdkCollidingNames(fmt.Sprintf("r%d.", i), 4)[:9+r.IntN(2)] {
			in.Topics = append(in.Topics, Topic{Name: n, Partitions: 1})
		}
		// A few ordinary ids, so the capacity treeifyBin forces shows in the order.
		in.Topics = append(in.Topics, Topic{Name: fmt.Sprintf("plain%d", i), Partitions: 1 + r.IntN(14)})
		in.NewTopics = nil
		in.History[0] = 1
	}
	in.StartingOffsets = []string{StartingOffsetsEarliest, StartingOffsetsCommitted}[r.IntN(2)]
	return jdkScenario{name: fmt.Sprintf("s%03d", i), in: in}
}

// jdkRun feeds the scenarios to testdata/HashOrder.java in one JVM and
// returns, per scenario, per step, per subtask, the add and snap lists.
func jdkRun(t *testing.T, scen []jdkScenario) map[string][][2][][]string {
	t.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		t.Fatalf("java is not on PATH: this test needs Java 17 or newer, whose own java.util.HashMap is the reference "+
			"(make test needs it installed; on Debian: apt-get install openjdk-17-jdk-headless): %v", err)
	}
	var b strings.Builder
	for _, sc := range scen {
		sc.write(&b)
	}
	cmd := exec.Command(java, filepath.Join("testdata", "HashOrder.java"))
	cmd.Stdin = strings.NewReader(b.String())
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java testdata/HashOrder.java: %v\n%s", err, stderr.String())
	}
	res := map[string][][2][][]string{}
	var cur string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 2 && f[0] == "scenario":
			cur = f[1]
		case len(f) == 1 && f[0] == "done":
		case len(f) >= 3 && (f[2] == "add" || f[2] == "snap"):
			s, err1 := strconv.Atoi(f[0])
			j, err2 := strconv.Atoi(f[1])
			if err1 != nil || err2 != nil {
				t.Fatalf("bad HashOrder.java line %q", line)
			}
			steps := res[cur]
			for len(steps) <= s {
				steps = append(steps, [2][][]string{})
			}
			k := 0
			if f[2] == "snap" {
				k = 1
			}
			for len(steps[s][k]) <= j {
				steps[s][k] = append(steps[s][k], nil)
			}
			steps[s][k][j] = f[3:]
			res[cur] = steps
		default:
			t.Fatalf("bad HashOrder.java line %q", line)
		}
	}
	return res
}

// TestRestoreMatchesJDK replays ~200 random scenarios with the JDK's own
// HashMap and HashSet (testdata/HashOrder.java, pieces of a restore in
// old-subtask order, subscriber order ascending: the model's best guess).
// Without tree bins every reader's addSplits and snapshot order must match
// exactly at every step. With tree bins (colliding topic names), whose order
// the model does not port, every partition the model calls certain must
// have the JDK's owner and lie inside the model's position interval.
func TestRestoreMatchesJDK(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	scen := []jdkScenario{
		{"orders12-5", RestoreInput{Topics: restoreOrders(12), History: []int{2, 3}}},
		{"orders12-34", RestoreInput{Topics: restoreOrders(12), History: []int{2, 3}, ConnectorLine: ConnectorLine34}},
		{"orders8", RestoreInput{Topics: restoreOrders(8), History: []int{4, 3}}},
	}
	for i := range 200 {
		scen = append(scen, jdkRandomScenario(r, i))
	}
	got := jdkRun(t, scen)
	exact, trees, resizes, steps, rescales := 0, 0, 0, 0, 0
	for _, sc := range scen {
		cfg, err := sc.in.normalize()
		if err != nil {
			t.Fatalf("%s: %v", sc.name, err)
		}
		_, tr := runRestore(cfg, nil, true)
		labels := jdkLabels(sc.in)
		js := got[sc.name]
		if len(js) != len(tr.steps) {
			t.Fatalf("%s: JDK gave %d steps, model %d", sc.name, len(js), len(tr.steps))
		}
		if tr.treeifyResizes > 0 {
			resizes++
		}
		name := func(list []int32) []string {
			out := make([]string, len(list))
			for i, e := range list {
				out[i] = labels[e]
			}
			return out
		}
		if tr.treeified == 0 {
			exact++
			for s, st := range tr.steps {
				steps++
				if s > 0 && sc.in.History[s] != sc.in.History[s-1] {
					rescales++
				}
				for j := range st.add {
					if g, w := name(st.add[j]), js[s][0][j]; !slices.Equal(g, w) {
						t.Errorf("Restore(%s %+v) step %d subtask %d addSplits = %v, want JDK %v", sc.name, sc.in, s, j, g, w)
					}
					if g, w := name(st.snap[j]), js[s][1][j]; !slices.Equal(g, w) {
						t.Errorf("Restore(%s %+v) step %d subtask %d snapshot = %v, want JDK %v", sc.name, sc.in, s, j, g, w)
					}
				}
			}
			continue
		}
		trees++
		for s, st := range tr.steps {
			owner := map[string]int{}
			pos := map[string]int{}
			for j, l := range js[s][0] {
				for _, id := range l {
					owner[id] = j
				}
			}
			for _, l := range js[s][1] {
				for i, id := range l {
					pos[id] = i
				}
			}
			for j, snap := range st.snap {
				for i, e := range snap {
					if !st.certain[e] {
						continue
					}
					id := labels[e]
					if owner[id] != j {
						t.Errorf("Restore(%s %+v) step %d: certain %s on subtask %d, JDK %d", sc.name, sc.in, s, id, j, owner[id])
					}
					if p := int32(pos[id]); p < st.snapLo[j][i] || p > st.snapHi[j][i] {
						t.Errorf("Restore(%s %+v) step %d: certain %s at snapshot position %d, want within [%d, %d]",
							sc.name, sc.in, s, id, p, st.snapLo[j][i], st.snapHi[j][i])
					}
				}
			}
			if s == 0 {
				for j, add := range st.addLo {
					for i := range add {
						p := slices.Index(js[0][0][j], labels[st.add[j][i]])
						if p < 0 || int32(p) < st.addLo[j][i] || int32(p) > st.addHi[j][i] {
							t.Errorf("Restore(%s %+v) reader %d: %s at addSplits position %d, want within [%d, %d]",
								sc.name, sc.in, j, labels[st.add[j][i]], p, st.addLo[j][i], st.addHi[j][i])
						}
					}
				}
			}
		}
	}
	t.Logf("JDK cross-check: %d scenarios matched exactly (%d steps in all, %d of them restores at a new parallelism), %d with tree bins checked for certain owners and intervals; %d had treeify resizes",
		exact, steps, rescales, trees, resizes)
	if trees == 0 || resizes == 0 || exact < 150 {
		t.Errorf("scenario mix: %d exact, %d with trees, %d with treeify resizes; want >= 150, > 0, > 0", exact, trees, resizes)
	}
}

// TestRestoreUncertainCases pins where the model reports undetermined
// owners, and that sentinel offsets keep a single restore exact.
func TestRestoreUncertainCases(t *testing.T) {
	var colliding []Topic
	for _, n := range jdkCollidingNames("t", 4)[:9] {
		colliding = append(colliding, Topic{Name: n, Partitions: 2})
	}
	orders := restoreOrders(12)
	pair := []TopicPartition{{"orders", 4}, {"orders", 11}} // one bin of the 16-bin reader map
	tests := []struct {
		name      string
		in        RestoreInput
		uncertain []TopicPartition // nil: every partition of the input
		notes     []string
	}{
		{"earliest 1→5", RestoreInput{Topics: orders, History: []int{1, 5}}, []TopicPartition{}, nil},
		{"committed 1→5", RestoreInput{Topics: orders, History: []int{1, 5}, StartingOffsets: StartingOffsetsCommitted}, []TopicPartition{}, nil},
		// Snapshot [10 8 9 2 3 0 1 6 7 4 11 5] (or ... 11 4 5): the chunk
		// boundary at 10 falls between orders-4 and orders-11.
		{"latest 1→5", RestoreInput{Topics: orders, History: []int{1, 5}, StartingOffsets: StartingOffsetsLatest}, pair,
			[]string{"real starting offsets the enumerator resolved (latest)"}},
		{"specific 1→6", RestoreInput{Topics: orders, History: []int{1, 6}, StartingOffsets: StartingOffsetsSpecific}, pair, nil},
		{"latest fresh only", RestoreInput{Topics: orders, History: []int{1}, StartingOffsets: StartingOffsetsLatest}, []TopicPartition{},
			[]string{"order in which a reader first got its splits is unknown"}},
		{"latest 1→4: no boundary inside the bin", RestoreInput{Topics: orders, History: []int{1, 4}, StartingOffsets: StartingOffsetsLatest}, []TopicPartition{}, nil},
		// 2→1 merges reader 0's orders-11 and reader 1's orders-4 into one
		// list whose piece order is random; 1→5 then cuts between them.
		{"pieces 2→1→5", RestoreInput{Topics: orders, History: []int{2, 1, 5}}, pair,
			[]string{"Restore from 1 to 5 subtasks", "merged pieces of different old subtasks"}},
		{"pieces 2→1→5→5", RestoreInput{Topics: orders, History: []int{2, 1, 5, 5}}, pair,
			[]string{"later layout is approximate"}},
		{"pieces 2→1→5→3", RestoreInput{Topics: orders, History: []int{2, 1, 5, 3}}, nil,
			[]string{"later layout is approximate"}},
		{"tree bins 1→2", RestoreInput{Topics: colliding, History: []int{1, 2}}, nil,
			[]string{"red-black tree"}},
	}
	for _, tt := range tests {
		res, err := Restore(tt.in)
		if err != nil {
			t.Fatalf("Restore(%s) error %v", tt.name, err)
		}
		want := tt.uncertain
		if want == nil {
			want = Partitions(tt.in.Topics)
		}
		if tt.name == "pieces 2→1→5→3" {
			// Starts from the two of 2→1→5; later positions are approximate.
			if !slices.Contains(res.Uncertain, pair[0]) || !slices.Contains(res.Uncertain, pair[1]) {
				t.Errorf("Restore(%s).Uncertain = %v, want it to contain %v", tt.name, res.Uncertain, pair)
			}
		} else if !slices.Equal(res.Uncertain, want) {
			t.Errorf("Restore(%s).Uncertain = %v, want %v", tt.name, res.Uncertain, want)
		}
		if res.Exact != (len(res.Uncertain) == 0) {
			t.Errorf("Restore(%s).Exact = %v with %d uncertain", tt.name, res.Exact, len(res.Uncertain))
		}
		all := strings.Join(res.Notes, "\n")
		for _, n := range tt.notes {
			if !strings.Contains(all, n) {
				t.Errorf("Restore(%s).Notes = %q, want one containing %q", tt.name, res.Notes, n)
			}
		}
		restoreCheckInvariants(t, tt.in, res)
	}
}

// TestRestoreDiscoveredAfterRestore: partitions found after the restore go
// by getSplitOwner at the new parallelism, after the restored splits.
func TestRestoreDiscoveredAfterRestore(t *testing.T) {
	in := RestoreInput{Topics: restoreOrders(12), History: []int{2, 3},
		NewTopics: []Topic{{"orders", 16}, {"payments", 2}}}
	res, err := Restore(in)
	if err != nil {
		t.Fatal(err)
	}
	restoreCheckInvariants(t, in, res)
	base, _ := RestoreAssignment(restoreOrders(12), 2, 3)
	for j, ps := range res.Assignment.Subtasks {
		if n := len(base.Assignment.Subtasks[j]); !slices.Equal(ps[:n], base.Assignment.Subtasks[j]) {
			t.Errorf("Restore(+discovered).Subtasks[%d] = %v, want the restored %v first", j, ps, base.Assignment.Subtasks[j])
		}
	}
	for _, tp := range []TopicPartition{{"orders", 12}, {"orders", 15}, {"payments", 0}, {"payments", 1}} {
		want, _ := KafkaSplitOwner(tp, 3)
		if got, ok := res.Assignment.OwnerOf(tp); !ok || got != want {
			t.Errorf("Restore(+discovered).OwnerOf(%v) = %d, %v, want getSplitOwner %d", tp, got, ok, want)
		}
	}
	if !res.Exact || !strings.Contains(strings.Join(res.Notes, " "), "6 partitions discovered after the last restore") {
		t.Errorf("Restore(+discovered) exact %v notes %q, want exact and a note on 6 discovered partitions", res.Exact, res.Notes)
	}
}

func TestSplitIDHashCode(t *testing.T) {
	for _, topic := range []string{"orders", "", "a-b.c_d", "ünïcode", "emoji😀"} {
		for _, p := range []int32{0, 7, 9, 10, 99, 100, 9999, 10000, splitDigitsMax - 1, splitDigitsMax, 123456, 1<<31 - 1} {
			tp := TopicPartition{Topic: topic, Partition: p}
			if got, want := splitIDHashCode(StringHashCode(topic), p), StringHashCode(tp.SplitID()); got != want {
				t.Errorf("splitIDHashCode(%q, %d) = %d, want %d", topic, p, got, want)
			}
		}
	}
	// Every tabulated partition number and a few beyond, on a topic whose
	// hash wraps.
	topic := "events.shard-orders-eu-west-1"
	for p := int32(0); p < splitDigitsMax+100; p++ {
		tp := TopicPartition{Topic: topic, Partition: p}
		if got, want := splitIDHashCode(StringHashCode(topic), p), StringHashCode(tp.SplitID()); got != want {
			t.Fatalf("splitIDHashCode(%q, %d) = %d, want %d", topic, p, got, want)
		}
	}
}

// FuzzSplitIDHashCode: the split-id hash continued from the topic's hash
// is String.hashCode of "<topic>-<partition>" for any topic and partition.
func FuzzSplitIDHashCode(f *testing.F) {
	f.Add("orders", int32(0))
	f.Add("ünïcode😀", int32(1<<31-1))
	f.Add("a-b", int32(-7))
	f.Add("\xe2\x82", int32(10))
	f.Fuzz(func(t *testing.T, topic string, p int32) {
		tp := TopicPartition{Topic: topic, Partition: p}
		if got, want := splitIDHashCode(StringHashCode(topic), p), StringHashCode(tp.SplitID()); got != want {
			t.Fatalf("splitIDHashCode(%q, %d) = %d, want %d", topic, p, got, want)
		}
	})
}

func TestKafkaPartitionSplitHashCode(t *testing.T) {
	// Objects.hash(tp, -2L, Long.MIN_VALUE) with TopicPartition("orders", 0):
	// tp = 31*31 + "orders".hashCode().
	tpHash := kafkaTopicPartitionHashCode(StringHashCode("orders"), 0)
	if want := 31*31 + StringHashCode("orders"); tpHash != want {
		t.Errorf("kafkaTopicPartitionHashCode(orders, 0) = %d, want %d", tpHash, want)
	}
	got := kafkaPartitionSplitHashCode(tpHash, kafkaEarliestOffset, kafkaNoStoppingOffset)
	want := 31*(31*(31+tpHash)+1) + (-1 << 31)
	if got != want {
		t.Errorf("kafkaPartitionSplitHashCode(orders-0, -2, MIN) = %d, want %d", got, want)
	}
}

// javaCompareStrings is String.compareTo over the UTF-16 keys rankTopics
// sorts by (KafkaSourceEnumerator 5.0.0 sorts splits with
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

func TestJavaCompareStrings(t *testing.T) {
	tests := []struct {
		a, b string
		sign int
	}{
		{"a", "b", -1}, {"b", "a", 1}, {"ab", "a", 1}, {"", "", 0}, {"orders", "orders", 0},
		{"Z", "a", -1}, {"-", ".", -1},
		// UTF-16 order: a surrogate pair (U+D83D...) sorts before U+FFFF,
		// unlike UTF-8 byte order.
		{"😀", "\uffff", -1},
	}
	for _, tt := range tests {
		got := javaCompareStrings(tt.a, tt.b)
		if (got < 0 && tt.sign >= 0) || (got > 0 && tt.sign <= 0) || (got == 0 && tt.sign != 0) {
			t.Errorf("javaCompareStrings(%q, %q) = %d, want sign %d", tt.a, tt.b, got, tt.sign)
		}
	}
}

// TestRestoreParallelEqualsSerial: a model large enough for eachList to run
// its hash stages on two goroutines gives the same result, field for
// field, as the same model run on one (a trace keeps it on one), over
// random inputs of 2,048 partitions and more, with small and large lists,
// every connector line and starting offsets, and partitions discovered
// after the last restore.
func TestRestoreParallelEqualsSerial(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for trial := range 40 {
		in := restoreRandomInput(r, 12, 1500, 1200, 4)
		for totalPartitions(in.Topics) < restoreParallelMin {
			in.Topics = append(in.Topics, Topic{Name: fmt.Sprintf("pad.%d.%d", trial, len(in.Topics)), Partitions: 1 + r.IntN(2000)})
		}
		if trial%4 == 0 {
			in.History = []int{1 + r.IntN(64), 1 + r.IntN(64)} // long lists: big tables, tree bins
		}
		cfg, err := in.normalize()
		if err != nil {
			t.Fatalf("%+v: %v", in, err)
		}
		par, _ := runRestore(cfg, nil, false)
		ser, _ := runRestore(cfg, nil, true)
		if !reflect.DeepEqual(par, ser) {
			t.Fatalf("Restore(history %v, offsets %q, line %q, %d topics, %d new) on two goroutines differs from one", in.History, in.StartingOffsets, in.ConnectorLine, len(in.Topics), len(in.NewTopics))
		}
	}
}
