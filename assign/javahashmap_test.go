package assign

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// newJavaHashMapCap is new HashMap<>(initialCapacity) / new
// HashSet<>(initialCapacity) (HashMap.java L449-462, HashSet.java L145): the
// threshold field holds tableSizeFor(initialCapacity) until the first put.
// initialCapacity must be >= 0 (Java throws IllegalArgumentException).
// The restore model reuses one table through reset; the tests build new
// ones with this, as Java does, and check that reset gives the same table.
func newJavaHashMapCap[K comparable](initialCapacity int) *javaHashMap[K] {
	c := min(initialCapacity, javaMaximumCapacity)
	m := newJavaHashMap[K](initialCapacity)
	m.threshold = int(javaTableSizeFor(int32(c)))
	return m
}

// hashMapOrder puts keys into a modelled new HashMap<String, ?>() and
// returns the iteration order.
func hashMapOrder(keys []string) []string {
	m := newJavaHashMap[string](len(keys))
	for _, k := range keys {
		m.put(k, StringHashCode(k))
	}
	var out []string
	for _, e := range m.entries() {
		out = append(out, e.key)
	}
	return out
}

func ordersIDs(ps ...int) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = fmt.Sprintf("orders-%d", p)
	}
	return out
}

// TestJavaHashMapOrdersVectors checks iteration orders that a real JDK 17
// HashMap<String, ...> gave for these split ids.
func TestJavaHashMapOrdersVectors(t *testing.T) {
	asc := ordersIDs(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
	desc := slices.Clone(asc)
	slices.Reverse(desc)
	tests := []struct {
		name string
		keys []string
		want []string
	}{
		{"ascending 0..11", asc, ordersIDs(10, 8, 9, 2, 3, 0, 1, 6, 7, 4, 11, 5)},
		{"descending 11..0", desc, ordersIDs(10, 8, 9, 2, 3, 0, 1, 6, 7, 11, 4, 5)},
		{"ascending 0..12", ordersIDs(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), ordersIDs(8, 9, 10, 2, 3, 0, 1, 6, 7, 4, 11, 5, 12)},
	}
	for _, tt := range tests {
		if got := hashMapOrder(tt.keys); !slices.Equal(got, tt.want) {
			t.Errorf("hashMapOrder(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestJavaTableSizeFor(t *testing.T) {
	tests := []struct{ in, want int32 }{
		{-5, 1}, {0, 1}, {1, 1}, {2, 2}, {3, 4}, {12, 16}, {16, 16}, {17, 32},
		{1 << 29, 1 << 29}, {1<<29 + 1, 1 << 30}, {1 << 30, 1 << 30}, {1<<30 + 1, 1 << 30},
	}
	for _, tt := range tests {
		if got := javaTableSizeFor(tt.in); got != tt.want {
			t.Errorf("javaTableSizeFor(%d) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestJavaSpread(t *testing.T) {
	tests := []struct{ in, want int32 }{
		{0, 0}, {1, 1}, {0x10000, 0x10001}, {-1, -65536}, {-1 << 31, -1<<31 | 0x8000},
	}
	for _, tt := range tests {
		if got := javaSpread(tt.in); got != tt.want {
			t.Errorf("javaSpread(%#x) = %#x, want %#x", tt.in, got, tt.want)
		}
	}
}

// TestJavaHashMapCapacity checks the table length after n distinct puts
// with well-spread hashes, for new HashMap<>() and new HashMap<>(k), against
// javaNormalCapacity and hand-computed values from HashMap.resize.
func TestJavaHashMapCapacity(t *testing.T) {
	tests := []struct {
		initial, n, want int
	}{
		{-1, 0, 0}, {-1, 1, 16}, {-1, 12, 16}, {-1, 13, 32}, {-1, 24, 32}, {-1, 25, 64},
		{-1, 48, 64}, {-1, 49, 128}, {-1, 1000, 2048},
		{0, 1, 2}, {0, 2, 4}, {0, 3, 4}, {0, 4, 8}, {1, 1, 2}, {2, 1, 2}, {2, 2, 4},
		{12, 12, 16}, {12, 13, 32}, {13, 12, 16}, {100, 96, 128}, {100, 97, 256},
	}
	for _, tt := range tests {
		var m *javaHashMap[int]
		if tt.initial < 0 {
			m = newJavaHashMap[int](tt.n)
		} else {
			m = newJavaHashMapCap[int](tt.initial)
		}
		for k := range tt.n {
			m.put(k, int32(k)) // distinct hashes, never 9 in a bin
		}
		if got := m.capacity(); got != tt.want {
			t.Errorf("HashMap(%d) after %d puts: capacity = %d, want %d", tt.initial, tt.n, got, tt.want)
		}
		if got := javaNormalCapacity(tt.initial, tt.n); got != tt.want {
			t.Errorf("javaNormalCapacity(%d, %d) = %d, want %d", tt.initial, tt.n, got, tt.want)
		}
	}
}

// TestJavaHashMapTreeify follows keys with one shared hash code through
// treeifyBin: below 64 bins it resizes (16 -> 32 at the 9th key, 32 -> 64 at
// the 10th), at 64 the bin becomes a tree (11th key).
func TestJavaHashMapTreeify(t *testing.T) {
	m := newJavaHashMap[int](16)
	steps := []struct {
		capacity, resizes, trees int
	}{
		{16, 0, 0}, {16, 0, 0}, {16, 0, 0}, {16, 0, 0}, {16, 0, 0}, {16, 0, 0}, {16, 0, 0}, {16, 0, 0},
		{32, 1, 0}, {64, 2, 0}, {64, 2, 1}, {64, 2, 1},
	}
	for i, st := range steps {
		m.put(i, 7)
		if m.capacity() != st.capacity || m.treeifyResizes != st.resizes || m.treeified != st.trees {
			t.Fatalf("after %d same-hash puts: capacity %d, treeify resizes %d, trees %d; want %d, %d, %d",
				i+1, m.capacity(), m.treeifyResizes, m.treeified, st.capacity, st.resizes, st.trees)
		}
	}
	for _, e := range m.entries() {
		if !e.inTree {
			t.Errorf("key %d after treeify: inTree = false, want true", e.key)
		}
	}
	// A tree bin split on resize keeps its nodes marked; a half of at most 6
	// nodes is a list again (TreeNode.split, UNTREEIFY_THRESHOLD).
	m2 := newJavaHashMap[int](64)
	for k := 1; k <= 30; k++ {
		m2.put(1000+k, int32(k)) // capacity 64 from the 25th key
	}
	for k := range 9 {
		m2.put(k, int32(100+64*(k&1))) // hashes 100 and 164: bin 36 at 64 bins
	}
	if m2.capacity() != 64 || m2.treeified != 1 || !m2.tree[36] {
		t.Fatalf("split case: capacity %d, trees %d, bin 36 tree %v; want 64, 1, true", m2.capacity(), m2.treeified, m2.tree[36])
	}
	for k := 37; k <= 46; k++ {
		m2.put(2000+k, int32(k)) // 49 keys: resize to 128
	}
	if m2.capacity() != 128 || m2.tree[36] || m2.tree[100] {
		t.Fatalf("split case after resize: capacity %d, bins 36/100 trees %v/%v; want 128, false, false (4 and 5 nodes)",
			m2.capacity(), m2.tree[36], m2.tree[100])
	}
	for _, e := range m2.entries() {
		if want := e.key < 9; e.inTree != want {
			t.Errorf("split case: key %d inTree = %v, want %v", e.key, e.inTree, want)
		}
	}
}

func TestJavaHashMapDuplicateKeepsPosition(t *testing.T) {
	m := newJavaHashMap[string](4)
	for _, k := range []string{"a", "b", "q", "a"} {
		m.put(k, int32(len(k))) // all in bin 1
	}
	if m.put("b", 1) || m.size != 3 {
		t.Fatalf("put of an existing key: added or size %d, want no change and size 3", m.size)
	}
	var got []string
	for _, e := range m.entries() {
		got = append(got, e.key)
	}
	if want := []string{"a", "b", "q"}; !slices.Equal(got, want) {
		t.Errorf("iteration after duplicates = %v, want %v", got, want)
	}
}

// TestJavaHashMapStableSortProperty checks a property of java.util.HashMap
// (verified on a JDK): without tree bins, iteration order is the stable sort
// of keys by (spread(hash) & (finalCap-1), insertion order), whatever the
// resizes.
func TestJavaHashMapStableSortProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		n := r.IntN(400)
		initial := -1
		if trial%3 == 0 {
			initial = r.IntN(300)
		}
		var m *javaHashMap[int]
		if initial < 0 {
			m = newJavaHashMap[int](n)
		} else {
			m = newJavaHashMapCap[int](initial)
		}
		hashes := make([]int32, n)
		for i := range hashes {
			hashes[i] = int32(r.Uint32())
			if trial%5 == 0 {
				hashes[i] &= 0x7 << 16 // many collisions, some treeify resizes
			}
			m.put(i, hashes[i])
		}
		if m.treeified > 0 {
			continue
		}
		c := uint32(m.capacity())
		want := make([]int, n)
		for i := range want {
			want[i] = i
		}
		sort.SliceStable(want, func(a, b int) bool {
			return uint32(javaSpread(hashes[want[a]]))&(c-1) < uint32(javaSpread(hashes[want[b]]))&(c-1)
		})
		var got []int
		for _, e := range m.entries() {
			got = append(got, e.key)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (n=%d, initial %d): iteration = %v, want stable bin sort %v", trial, n, initial, got, want)
		}
	}
}

// checkJavaHashOrder compares javaHashOrder with the modelled table (which
// the JDK cross-check pins) for keys 0..n-1 with the given hash codes: when
// javaHashOrder answers, no bin became a tree or forced a resize, and the
// order and capacity are the table's; a reused table (reset) gives the same
// as a new one.
func checkJavaHashOrder(t *testing.T, hashes []int32, initial int, reused *javaHashMap[int32]) {
	t.Helper()
	n := len(hashes)
	var m *javaHashMap[int32]
	if initial < 0 {
		m = newJavaHashMap[int32](n)
	} else {
		m = newJavaHashMapCap[int32](initial)
	}
	reused.reset(initial, n)
	hs := make([]uint32, n)
	for i, h := range hashes {
		m.put(int32(i), h)
		reused.put(int32(i), h)
		hs[i] = uint32(javaSpread(h))
	}
	var want []int32
	for _, e := range m.entries() {
		want = append(want, e.key)
	}
	var again []int32
	for _, e := range reused.appendEntries(nil) {
		again = append(again, e.key)
	}
	if !slices.Equal(again, want) || reused.capacity() != m.capacity() || reused.treeified != m.treeified || reused.treeifyResizes != m.treeifyResizes {
		t.Fatalf("reset table (n=%d, initial %d) = %v cap %d, want %v cap %d", n, initial, again, reused.capacity(), want, m.capacity())
	}
	perm := make([]int32, n)
	c, ok, _ := javaHashOrder(hs, initial, perm, nil)
	if !ok {
		if m.treeified == 0 && m.treeifyResizes == 0 && n <= javaTreeifyThreshold {
			t.Fatalf("javaHashOrder(n=%d, initial %d) declined a table of at most 8 keys", n, initial)
		}
		return
	}
	if m.treeified != 0 || m.treeifyResizes != 0 {
		t.Fatalf("javaHashOrder(n=%d, initial %d) answered, but the table had %d trees and %d treeify resizes", n, initial, m.treeified, m.treeifyResizes)
	}
	if c != m.capacity() || !slices.Equal(perm, want) {
		t.Fatalf("javaHashOrder(n=%d, initial %d) = %v cap %d, want %v cap %d", n, initial, perm, c, want, m.capacity())
	}
}

func TestJavaHashOrderMatchesTable(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	reused := newJavaHashMap[int32](0)
	for trial := range 3000 {
		n := r.IntN([]int{12, 40, 400}[trial%3] + 1)
		initial := -1
		switch trial % 8 {
		case 0, 4:
			initial = r.IntN(2 * (n + 1))
		case 2:
			initial = r.IntN(100 * (n + 1)) // far more bins than keys
		}
		hashes := make([]int32, n)
		for i := range hashes {
			hashes[i] = int32(r.Uint32())
			switch trial % 5 {
			case 0:
				hashes[i] &= 0x7 << 16 // few distinct spread hashes: trees and treeify resizes
			case 1:
				hashes[i] &= 0x3F // low bits only
			}
		}
		checkJavaHashOrder(t, hashes, initial, reused)
	}
}

func FuzzJavaHashOrder(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4}, int16(-1))
	f.Add([]byte{0, 16, 32, 48, 64, 80, 96, 112, 128, 144}, int16(0))
	f.Add(make([]byte, 40), int16(3))
	f.Fuzz(func(t *testing.T, data []byte, initial int16) {
		// Two bytes per key: a small hash code space, so collisions are common.
		hashes := make([]int32, len(data)/2)
		for i := range hashes {
			hashes[i] = int32(data[2*i]) | int32(data[2*i+1]&0x3)<<16
		}
		checkJavaHashOrder(t, hashes, max(int(initial), -1), newJavaHashMap[int32](0))
	})
}
