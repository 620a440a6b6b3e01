package assign

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// kgr is shorthand for a KeyGroupRange in tables.
func rescaleRange(s, e int) KeyGroupRange { return KeyGroupRange{Start: s, End: e} }

// TestKeyedRescaleBlogExample is the example of the Flink blog "A Deep Dive
// into Rescalable State in Apache Flink" (2017-07-04): M = 10,
// 3 -> 4. Old [0-3] [4-6] [7-9], new [0-2] [3-4] [5-7] [8-9]; new0 <- old0;
// new1 <- old0 (KG 3) + old1 (KG 4); new2 <- old1 (KG 5-6) + old2 (KG 7);
// new3 <- old2. Key groups changing owner index: {3, 5, 6, 8, 9} = 50 %.
func TestKeyedRescaleBlogExample(t *testing.T) {
	d, err := KeyedRescale(10, 3, 4, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []KeyedRescaleSubtask{
		{Subtask: 0, Range: rescaleRange(0, 2), FanIn: 1, Sources: []KeyedStateSource{{0, rescaleRange(0, 2), 3, 0}}},
		{Subtask: 1, Range: rescaleRange(3, 4), FanIn: 2, NonBaseKeyGroups: 1, Sources: []KeyedStateSource{{0, rescaleRange(3, 3), 1, 0}, {1, rescaleRange(4, 4), 1, 0}}},
		{Subtask: 2, Range: rescaleRange(5, 7), FanIn: 2, NonBaseKeyGroups: 1, Sources: []KeyedStateSource{{1, rescaleRange(5, 6), 2, 0}, {2, rescaleRange(7, 7), 1, 0}}},
		{Subtask: 3, Range: rescaleRange(8, 9), FanIn: 1, Sources: []KeyedStateSource{{2, rescaleRange(8, 9), 2, 0}}},
	}
	if len(d.Subtasks) != len(want) {
		t.Fatalf("KeyedRescale(10, 3, 4, nil) has %d subtasks, want %d", len(d.Subtasks), len(want))
	}
	for j, w := range want {
		g := d.Subtasks[j]
		if g.Subtask != w.Subtask || g.Range != w.Range || g.FanIn != w.FanIn ||
			g.NonBaseKeyGroups != w.NonBaseKeyGroups || !slices.Equal(g.Sources, w.Sources) {
			t.Errorf("KeyedRescale(10, 3, 4, nil).Subtasks[%d] = %+v, want %+v", j, g, w)
		}
	}
	if d.Moved != 5 || d.MovedFraction != 0.5 {
		t.Errorf("KeyedRescale(10, 3, 4, nil) moved = %d (%v), want 5 (0.5)", d.Moved, d.MovedFraction)
	}
	var moved []int
	for k := range 10 {
		if OperatorIndex(10, 3, k) != OperatorIndex(10, 4, k) {
			moved = append(moved, k)
		}
	}
	if !slices.Equal(moved, []int{3, 5, 6, 8, 9}) {
		t.Errorf("key groups changing owner for M=10 3->4 = %v, want [3 5 6 8 9]", moved)
	}
	if d.BytesKnown || d.TotalBytes != 0 || d.MovedBytes != 0 {
		t.Errorf("KeyedRescale(10, 3, 4, nil) bytes = %v/%d/%d, want false/0/0", d.BytesKnown, d.TotalBytes, d.MovedBytes)
	}
}

// TestKeyedRescaleMovedFraction checks the fraction of key groups whose
// owner index k·p/M changes, |{k : owner(k, from) ≠ owner(k, to)}| / M.
func TestKeyedRescaleMovedFraction(t *testing.T) {
	tests := []struct {
		maxP, from, to int
		moved          int
		percent        float64 // as printed, one decimal
	}{
		{128, 4, 8, 112, 87.5},
		{128, 3, 4, 65, 50.8},
		{128, 48, 64, 125, 97.7},
		{120, 6, 8, 90, 75},
		{10, 3, 4, 5, 50},
		{128, 8, 8, 0, 0},
	}
	for _, tt := range tests {
		d, err := KeyedRescale(tt.maxP, tt.from, tt.to, nil)
		if err != nil {
			t.Fatalf("KeyedRescale(%d, %d, %d, nil) error %v", tt.maxP, tt.from, tt.to, err)
		}
		if d.Moved != tt.moved {
			t.Errorf("KeyedRescale(%d, %d, %d, nil).Moved = %d, want %d", tt.maxP, tt.from, tt.to, d.Moved, tt.moved)
		}
		if !skewClose(100*d.MovedFraction, tt.percent, 0.05) {
			t.Errorf("KeyedRescale(%d, %d, %d, nil).MovedFraction = %v, want %v %%", tt.maxP, tt.from, tt.to, d.MovedFraction, tt.percent)
		}
	}
}

// TestKeyedRescaleFanIn checks fan-in(j), the number of old subtasks whose
// key-group range intersects new subtask j's: M = 128, 4 -> 8 gives 1
// everywhere, 8 -> 4 gives 2, 3 -> 4 gives [1, 2, 2, 1] (max 2, mean 1.5).
func TestKeyedRescaleFanIn(t *testing.T) {
	tests := []struct {
		from, to int
		fanIn    []int
		max      int
		mean     float64
	}{
		{4, 8, []int{1, 1, 1, 1, 1, 1, 1, 1}, 1, 1},
		{8, 4, []int{2, 2, 2, 2}, 2, 2},
		{3, 4, []int{1, 2, 2, 1}, 2, 1.5},
	}
	for _, tt := range tests {
		d, err := KeyedRescale(128, tt.from, tt.to, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]int, len(d.Subtasks))
		for j, s := range d.Subtasks {
			got[j] = s.FanIn
		}
		if !slices.Equal(got, tt.fanIn) {
			t.Errorf("KeyedRescale(128, %d, %d, nil) fan-in = %v, want %v", tt.from, tt.to, got, tt.fanIn)
		}
		if d.MaxFanIn != tt.max || d.MeanFanIn != tt.mean {
			t.Errorf("KeyedRescale(128, %d, %d, nil) max/mean fan-in = %d/%v, want %d/%v", tt.from, tt.to, d.MaxFanIn, d.MeanFanIn, tt.max, tt.mean)
		}
	}
}

// TestKeyedRescaleBytes is the blog example with state sizes: old subtasks of
// 4, 3 and 3 key groups holding 400, 300 and 300 bytes (100 per key group).
func TestKeyedRescaleBytes(t *testing.T) {
	d, err := KeyedRescale(10, 3, 4, []int64{400, 300, 300})
	if err != nil {
		t.Fatal(err)
	}
	wantBytes := []int64{300, 200, 300, 200}
	wantNonBase := []int64{0, 100, 100, 0}
	for j, s := range d.Subtasks {
		if s.Bytes != wantBytes[j] || s.NonBaseBytes != wantNonBase[j] {
			t.Errorf("KeyedRescale(10, 3, 4, [400 300 300]).Subtasks[%d] bytes/non-base = %d/%d, want %d/%d",
				j, s.Bytes, s.NonBaseBytes, wantBytes[j], wantNonBase[j])
		}
	}
	// Moved key groups {3, 5, 6, 8, 9} hold 500 bytes.
	if !d.BytesKnown || d.TotalBytes != 1000 || d.MovedBytes != 500 || d.NonBaseBytes != 200 {
		t.Errorf("KeyedRescale(10, 3, 4, [400 300 300]) known/total/moved/non-base = %v/%d/%d/%d, want true/1000/500/200",
			d.BytesKnown, d.TotalBytes, d.MovedBytes, d.NonBaseBytes)
	}

	// Sizes that do not divide evenly: the floor-difference split keeps every
	// byte. old0 (4 KGs, 10 B) -> 7 + 3; old1 (3 KGs) -> 3 + 7; old2 -> 3 + 7.
	d, err = KeyedRescale(10, 3, 4, []int64{10, 10, 10})
	if err != nil {
		t.Fatal(err)
	}
	got := []int64{}
	for _, s := range d.Subtasks {
		got = append(got, s.Bytes)
	}
	if !slices.Equal(got, []int64{7, 6, 10, 7}) || d.TotalBytes != 30 {
		t.Errorf("KeyedRescale(10, 3, 4, [10 10 10]) bytes = %v (total %d), want [7 6 10 7] (total 30)", got, d.TotalBytes)
	}

	// Huge sizes use 128-bit intermediates.
	const big63 = int64(1<<63 - 1)
	d, err = KeyedRescale(32768, 1, 32768, []int64{big63})
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, s := range d.Subtasks {
		sum += s.Bytes
	}
	if sum != big63 {
		t.Errorf("KeyedRescale(32768, 1, 32768, [MaxInt64]) bytes sum = %d, want %d", sum, big63)
	}
}

func TestKeyedRescaleErrors(t *testing.T) {
	tests := []struct {
		maxP, from, to int
		bytes          []int64
		want           string
	}{
		{128, 0, 4, nil, "Operator parallelism not within bounds: 0"},
		{128, 4, 0, nil, "Operator parallelism not within bounds: 0"},
		{128, 4, 129, nil, "Maximum parallelism must not be smaller than parallelism."},
		{128, 200, 4, nil, "Maximum parallelism must not be smaller than parallelism."},
		{0, 1, 1, nil, "Operator parallelism not within bounds: 0"},
		{32769, 1, 1, nil, "Operator parallelism not within bounds: 32769"},
		{128, 4, 8, []int64{1, 2, 3}, "stateBytes has 3 entries, want 4 (one per old subtask) or none"},
		{128, 2, 8, []int64{1, -2}, "stateBytes[1] = -2: state size must not be negative"},
		{128, 2, 8, []int64{1<<63 - 1, 1}, "stateBytes add up to more than 9223372036854775807 bytes"},
	}
	for _, tt := range tests {
		_, err := KeyedRescale(tt.maxP, tt.from, tt.to, tt.bytes)
		if err == nil || err.Error() != tt.want {
			t.Errorf("KeyedRescale(%d, %d, %d, %v) error = %v, want %q", tt.maxP, tt.from, tt.to, tt.bytes, err, tt.want)
		}
	}
	// An empty, non-nil slice means "sizes unknown", like nil.
	if d, err := KeyedRescale(128, 4, 8, []int64{}); err != nil || d.BytesKnown {
		t.Errorf("KeyedRescale(128, 4, 8, []) = known %v, error %v, want false, nil", d.BytesKnown, err)
	}
}

// checkKeyedRescale verifies the invariants of a KeyedRescale result against
// brute force: new ranges are Flink's; each new subtask's sources tile its
// range in order and are exactly the intersections with old ranges; key
// groups are conserved; Moved matches an O(maxP) count; bytes of each old
// subtask are conserved and each share is within one byte of the exact
// proportional value.
func checkKeyedRescale(maxP, from, to int, sizes []int64, d KeyedRescaleDiff) error {
	if d.MaxParallelism != maxP || d.From != from || d.To != to || len(d.Subtasks) != to {
		return fmt.Errorf("header = %d/%d/%d with %d subtasks", d.MaxParallelism, d.From, d.To, len(d.Subtasks))
	}
	oldRanges, _ := KeyGroupRanges(maxP, from)
	newRanges, _ := KeyGroupRanges(maxP, to)
	kgs, fanSum, maxFan := 0, 0, 0
	perOld := make([]int64, from)
	for j, s := range d.Subtasks {
		if s.Subtask != j || s.Range != newRanges[j] {
			return fmt.Errorf("subtask %d = %d %v, want %v", j, s.Subtask, s.Range, newRanges[j])
		}
		if s.FanIn != len(s.Sources) || s.FanIn == 0 {
			return fmt.Errorf("subtask %d fan-in %d with %d sources", j, s.FanIn, len(s.Sources))
		}
		next := s.Range.Start
		var bytes, maxB int64
		maxKG := 0
		for _, src := range s.Sources {
			x, ok := oldRanges[src.OldSubtask].Intersect(s.Range)
			if !ok || x != src.Range || src.Range.Start != next || src.KeyGroups != x.Size() {
				return fmt.Errorf("subtask %d source %+v, want intersection %v starting at %d", j, src, x, next)
			}
			next = src.Range.End + 1
			kgs += src.KeyGroups
			bytes += src.Bytes
			maxB = max(maxB, src.Bytes)
			maxKG = max(maxKG, src.KeyGroups)
			perOld[src.OldSubtask] += src.Bytes
			if sizes != nil {
				// |src.Bytes - size*|x|/L| < 1, checked exactly: with
				// size*|x| = q*L + rem, Bytes must be q, or q+1 if rem > 0.
				l := uint64(oldRanges[src.OldSubtask].Size())
				hi, lo := bits.Mul64(uint64(sizes[src.OldSubtask]), uint64(x.Size()))
				q, rem := bits.Div64(hi, lo, l)
				if b := uint64(src.Bytes); b != q && (rem == 0 || b != q+1) {
					return fmt.Errorf("subtask %d source %+v bytes, want %d (+1) = %d*%d/%d", j, src, q, sizes[src.OldSubtask], x.Size(), l)
				}
			} else if src.Bytes != 0 {
				return fmt.Errorf("subtask %d source %+v has bytes without sizes", j, src)
			}
		}
		if next != s.Range.End+1 {
			return fmt.Errorf("subtask %d sources end at %d, want %d", j, next-1, s.Range.End)
		}
		// Every old subtask owning a key group of the new range is listed.
		n := 0
		for k := s.Range.Start; k <= s.Range.End; k++ {
			if k == s.Range.Start || OperatorIndex(maxP, from, k) != OperatorIndex(maxP, from, k-1) {
				n++
			}
		}
		if n != s.FanIn {
			return fmt.Errorf("subtask %d fan-in %d, want %d", j, s.FanIn, n)
		}
		if bytes != s.Bytes || s.NonBaseBytes != bytes-maxB || s.NonBaseKeyGroups != s.Range.Size()-maxKG {
			return fmt.Errorf("subtask %d bytes %d/%d non-base kg %d", j, s.Bytes, s.NonBaseBytes, s.NonBaseKeyGroups)
		}
		fanSum += s.FanIn
		maxFan = max(maxFan, s.FanIn)
	}
	if kgs != maxP {
		return fmt.Errorf("sources hold %d key groups, want %d", kgs, maxP)
	}
	if maxFan != d.MaxFanIn || float64(fanSum)/float64(to) != d.MeanFanIn {
		return fmt.Errorf("fan-in max/mean %d/%v, want %d/%v", d.MaxFanIn, d.MeanFanIn, maxFan, float64(fanSum)/float64(to))
	}
	moved := 0
	for k := range maxP {
		if OperatorIndex(maxP, from, k) != OperatorIndex(maxP, to, k) {
			moved++
		}
	}
	if d.Moved != moved || d.MovedFraction != float64(moved)/float64(maxP) {
		return fmt.Errorf("moved %d (%v), brute force %d", d.Moved, d.MovedFraction, moved)
	}
	if sizes != nil {
		var total int64
		for i, s := range sizes {
			total += s
			if perOld[i] != s {
				return fmt.Errorf("old subtask %d: shares add up to %d, want %d", i, perOld[i], s)
			}
		}
		if d.TotalBytes != total || !d.BytesKnown {
			return fmt.Errorf("total %d (known %v), want %d", d.TotalBytes, d.BytesKnown, total)
		}
	}
	return nil
}

// TestKeyedRescaleInvariants checks many random (maxP, from, to) against the
// brute force of checkKeyedRescale, with and without state sizes.
func TestKeyedRescaleInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	maxPs := []int{1, 2, 3, 10, 120, 128, 256, 360, 1000, 4096, 32768}
	for range 3000 {
		maxP := maxPs[r.IntN(len(maxPs))]
		if r.IntN(3) == 0 {
			maxP = 1 + r.IntN(2000)
		}
		from, to := 1+r.IntN(maxP), 1+r.IntN(maxP)
		if r.IntN(4) == 0 {
			to = min(maxP, from*2) // a doubling, common in practice
		}
		var sizes []int64
		if r.IntN(2) == 0 {
			sizes = make([]int64, from)
			for i := range sizes {
				sizes[i] = r.Int64N(1 << 40)
			}
		}
		d, err := KeyedRescale(maxP, from, to, sizes)
		if err != nil {
			t.Fatalf("KeyedRescale(%d, %d, %d, ...) error %v", maxP, from, to, err)
		}
		if err := checkKeyedRescale(maxP, from, to, sizes, d); err != nil {
			t.Fatalf("KeyedRescale(%d, %d, %d, %v): %v", maxP, from, to, sizes, err)
		}
	}
}

// TestSourceRescaleOrders: "orders" has start index 3 (getSplitOwner) at
// both n = 4 and n = 8, so 8 partitions go to 3,0,1,2,3,0,1,2 at
// n = 4 and to 3,4,5,6,7,0,1,2 at n = 8: partitions 1..4 move, 50 %.
func TestSourceRescaleOrders(t *testing.T) {
	topics := []Topic{{"orders", 8}}
	a4, _ := FreshAssignment(topics, 4)
	a8, _ := FreshAssignment(topics, 8)
	d := SourceRescale(a4, a8)
	want := []PartitionMove{
		{TopicPartition{"orders", 1}, 0, 4},
		{TopicPartition{"orders", 2}, 1, 5},
		{TopicPartition{"orders", 3}, 2, 6},
		{TopicPartition{"orders", 4}, 3, 7},
	}
	if !slices.Equal(d.Moves, want) {
		t.Errorf("SourceRescale(orders@4, orders@8).Moves = %v, want %v", d.Moves, want)
	}
	if d.Moved != 4 || d.Common != 8 || d.MovedFraction != 0.5 || d.FromParallelism != 4 || d.ToParallelism != 8 {
		t.Errorf("SourceRescale(orders@4, orders@8) = moved %d of %d (%v), %d->%d, want 4 of 8 (0.5), 4->8",
			d.Moved, d.Common, d.MovedFraction, d.FromParallelism, d.ToParallelism)
	}
	if len(d.Added) != 0 || len(d.Removed) != 0 {
		t.Errorf("SourceRescale(orders@4, orders@8) added/removed = %v/%v, want none", d.Added, d.Removed)
	}
}

// TestSourceRescaleAddedRemovedOrder: partitions in only one side are listed
// separately; topics keep their order of first appearance, not name order.
func TestSourceRescaleAddedRemovedOrder(t *testing.T) {
	before, _ := FreshAssignment([]Topic{{"payments", 2}, {"orders", 3}, {"gone", 1}}, 1)
	after, _ := FreshAssignment([]Topic{{"payments", 3}, {"orders", 2}, {"clicks", 1}}, 1)
	d := SourceRescale(before, after)
	wantAdded := []PartitionPlacement{{TopicPartition{"payments", 2}, 0}, {TopicPartition{"clicks", 0}, 0}}
	wantRemoved := []PartitionPlacement{{TopicPartition{"orders", 2}, 0}, {TopicPartition{"gone", 0}, 0}}
	if !slices.Equal(d.Added, wantAdded) || !slices.Equal(d.Removed, wantRemoved) {
		t.Errorf("SourceRescale(...) added/removed = %v/%v, want %v/%v", d.Added, d.Removed, wantAdded, wantRemoved)
	}
	if d.Moved != 0 || d.Common != 4 || d.MovedFraction != 0 {
		t.Errorf("SourceRescale(...) moved %d of %d, want 0 of 4", d.Moved, d.Common)
	}

	// The dense form alone is enough; topics are then ordered by name.
	ownerOnly := Assignment{Parallelism: 2, Topics: []Topic{{"b", 1}, {"a", 2}}, Owners: []int32{1, 1, 0}}
	d = SourceRescale(ownerOnly, Assignment{Parallelism: 2, Subtasks: [][]TopicPartition{{{"a", 0}, {"b", 0}}, {{"a", 1}}}})
	wantMoves := []PartitionMove{{TopicPartition{"a", 0}, 1, 0}, {TopicPartition{"a", 1}, 0, 1}, {TopicPartition{"b", 0}, 1, 0}}
	if !slices.Equal(d.Moves, wantMoves) {
		t.Errorf("SourceRescale(owner-only, ...).Moves = %v, want %v", d.Moves, wantMoves)
	}
	// Empty inputs.
	if d := SourceRescale(Assignment{}, Assignment{}); d.Moved != 0 || d.Common != 0 || d.MovedFraction != 0 {
		t.Errorf("SourceRescale(empty, empty) = %+v, want zero counts", d)
	}
}

// TestSourceRescaleInvariants compares SourceRescale with KafkaSplitOwner
// for random topic sets and parallelisms.
func TestSourceRescaleInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		var topics []Topic
		for i := range 1 + r.IntN(5) {
			topics = append(topics, Topic{fmt.Sprintf("t%d-%d", i, r.IntN(1000)), 1 + r.IntN(40)})
		}
		a, b := 1+r.IntN(50), 1+r.IntN(50)
		before, _ := FreshAssignment(topics, a)
		after, _ := FreshAssignment(topics, b)
		d := SourceRescale(before, after)
		// Topics in order of first appearance in before's subtask lists.
		rank := map[string]int{}
		for _, ps := range before.Subtasks {
			for _, tp := range ps {
				if _, ok := rank[tp.Topic]; !ok {
					rank[tp.Topic] = len(rank)
				}
			}
		}
		var want []PartitionMove
		for _, tp := range Partitions(topics) {
			f, _ := KafkaSplitOwner(tp, a)
			g, _ := KafkaSplitOwner(tp, b)
			if f != g {
				want = append(want, PartitionMove{tp, f, g})
			}
		}
		slices.SortStableFunc(want, func(x, y PartitionMove) int { return rank[x.Partition.Topic] - rank[y.Partition.Topic] })
		if !slices.Equal(d.Moves, want) {
			t.Fatalf("SourceRescale(%v@%d, @%d).Moves = %v, want %v", topics, a, b, d.Moves, want)
		}
		if d.Common != len(Partitions(topics)) {
			t.Fatalf("SourceRescale(%v@%d, @%d).Common = %d, want %d", topics, a, b, d.Common, len(Partitions(topics)))
		}
	}
}

// FuzzKeyedRescale: any input either is rejected with an error (exactly when
// Flink would reject it, or the sizes are malformed) or satisfies every
// invariant of checkKeyedRescale. It never panics.
func FuzzKeyedRescale(f *testing.F) {
	f.Add(10, 3, 4, []byte{})
	f.Add(128, 3, 4, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24})
	f.Add(128, 48, 64, []byte{})
	f.Add(32768, 1, 32768, []byte{255, 255, 255, 255, 255, 255, 255, 127})
	f.Add(0, 0, 0, []byte{})
	f.Add(120, 6, 8, []byte{0, 0, 0, 0, 0, 0, 0, 128})
	f.Fuzz(func(t *testing.T, maxP, from, to int, raw []byte) {
		var sizes []int64
		for len(raw) >= 8 {
			sizes = append(sizes, int64(binary.LittleEndian.Uint64(raw)))
			raw = raw[8:]
		}
		d, err := KeyedRescale(maxP, from, to, sizes)
		valid := maxP >= 1 && maxP <= 32768 && from >= 1 && from <= maxP && to >= 1 && to <= maxP
		if !valid {
			if err == nil {
				t.Fatalf("KeyedRescale(%d, %d, %d, %v) error = nil, want an error", maxP, from, to, sizes)
			}
			return
		}
		sizesOK := len(sizes) == 0 || len(sizes) == from
		var total big.Int
		for _, s := range sizes {
			if s < 0 {
				sizesOK = false
			}
			total.Add(&total, big.NewInt(s))
		}
		if total.Cmp(big.NewInt(1<<63-1)) > 0 {
			sizesOK = false
		}
		if !sizesOK {
			if err == nil {
				t.Fatalf("KeyedRescale(%d, %d, %d, %v) error = nil, want an error", maxP, from, to, sizes)
			}
			return
		}
		if err != nil {
			t.Fatalf("KeyedRescale(%d, %d, %d, %v) error = %v, want nil", maxP, from, to, sizes, err)
		}
		if len(sizes) == 0 {
			sizes = nil
		}
		if err := checkKeyedRescale(maxP, from, to, sizes, d); err != nil {
			t.Fatalf("KeyedRescale(%d, %d, %d, %v): %v", maxP, from, to, sizes, err)
		}
	})
}

// BenchmarkKeyedRescale32768 rescales the largest possible operator, 16384 ->
// 32768 subtasks with sizes, the worst case for the merge walk.
func BenchmarkKeyedRescale32768(b *testing.B) {
	sizes := make([]int64, 16384)
	for i := range sizes {
		sizes[i] = int64(i) << 20
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := KeyedRescale(32768, 16384, 32768, sizes); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(16384+32768), "ns/subtask")
}

// TestSourceRescaleDenseMatchesLists: comparing the owners of two
// assignments of the same topics gives exactly what reading their subtask
// lists gives (every strategy, restore layouts, one side read from its
// dense form only).
func TestSourceRescaleDenseMatchesLists(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	listsOnly := func(a Assignment) Assignment { return Assignment{Parallelism: a.Parallelism, Subtasks: a.Subtasks} }
	denseOnly := func(a Assignment) Assignment {
		return Assignment{Parallelism: a.Parallelism, Topics: a.Topics, Owners: a.Owners}
	}
	layouts := []func([]Topic, int) (Assignment, error){FreshAssignment, NaiveModuloAssignment, DynamicGlobalAssignment,
		func(ts []Topic, p int) (Assignment, error) {
			rr, err := RestoreAssignment(ts, 1+r.IntN(40), p)
			return rr.Assignment, err
		}}
	for range 300 {
		topics := randomTopics(r, 1+r.IntN(12), 1+r.IntN(60))
		a, _ := layouts[r.IntN(len(layouts))](topics, 1+r.IntN(50))
		b, _ := layouts[r.IntN(len(layouts))](topics, 1+r.IntN(50))
		got := SourceRescale(a, b)
		if want := SourceRescale(listsOnly(a), listsOnly(b)); !reflect.DeepEqual(got, want) {
			t.Fatalf("SourceRescale(%v) dense = %+v, want from the lists %+v", topics, got, want)
		}
		// A side without lists: topics in name order, from its owners.
		if want := SourceRescale(denseOnly(a), listsOnly(b)); !reflect.DeepEqual(SourceRescale(denseOnly(a), b), want) {
			t.Fatalf("SourceRescale(%v) with dense-only before differs from the generic comparison", topics)
		}
		if want := SourceRescale(listsOnly(a), denseOnly(b)); !reflect.DeepEqual(SourceRescale(a, denseOnly(b)), want) {
			t.Fatalf("SourceRescale(%v) with dense-only after differs from the generic comparison", topics)
		}
	}
}
