package assign

import (
	"cmp"
	"math/bits"
	"slices"
)

// Constants of java.util.HashMap (OpenJDK 17.0.21 src.zip,
// java.base/java/util/HashMap.java L238-275; the same since JDK 8 and in
// Temurin 25).
const (
	javaDefaultInitialCapacity = 1 << 4  // DEFAULT_INITIAL_CAPACITY
	javaMaximumCapacity        = 1 << 30 // MAXIMUM_CAPACITY
	javaTreeifyThreshold       = 8       // TREEIFY_THRESHOLD
	javaUntreeifyThreshold     = 6       // UNTREEIFY_THRESHOLD
	javaMinTreeifyCapacity     = 64      // MIN_TREEIFY_CAPACITY
)

// javaSpread is HashMap.hash(key) for a key whose hashCode is h:
// h ^ (h >>> 16) (HashMap.java L336-339, JDK 17).
func javaSpread(h int32) int32 { return h ^ int32(uint32(h)>>16) }

// javaTableSizeFor is HashMap.tableSizeFor(cap) (HashMap.java L377-380,
// JDK 17): the smallest power of two >= cap, 1 for cap <= 1, capped at
// MAXIMUM_CAPACITY. Java's -1 >>> 32 is -1 (the shift distance is taken mod
// 32), which is why cap = 1 gives 1.
func javaTableSizeFor(c int32) int32 {
	n := int32(^uint32(0) >> (bits.LeadingZeros32(uint32(c-1)) & 31))
	switch {
	case n < 0:
		return 1
	case n >= javaMaximumCapacity:
		return javaMaximumCapacity
	default:
		return n + 1
	}
}

// javaHashMap models the table of a java.util.HashMap (and so of a HashSet,
// which is a HashMap with a dummy value) closely enough to reproduce its
// iteration order: bins, capacity, threshold, tail appends, order-preserving
// resizes and the treeify rules. Values are not stored; K stands for the key
// and must compare equal exactly when the Java keys are equals().
//
// What is modelled, from OpenJDK 17.0.21 java/util/HashMap.java:
//   - the lazy first table: 16 with threshold 12 for new HashMap(), or
//     tableSizeFor(initialCapacity) for new HashMap(int) / new HashSet(int)
//     (constructor L449-462, resize L675-700);
//   - putVal (L623-664): bin = (cap-1) & hash, new keys appended at the tail
//     (L640), binCount >= TREEIFY_THRESHOLD-1 calls treeifyBin (L641),
//     ++size > threshold resizes (L660);
//   - resize (L675-745): capacity and threshold doubled, every list bin split
//     into a lo and a hi list that keep their relative order (L713-742);
//   - treeifyBin (L753-771): below MIN_TREEIFY_CAPACITY (64) it only resizes;
//   - iteration (forEach L1413-1426, and keySet().toArray, which new
//     ArrayList<>(set) uses): bins in table order, each bin along next.
//
// What is not: TreeNode. When treeifyBin would turn a bin into a red-black
// tree (table >= 64), the bin is marked as a tree and its nodes as inTree;
// later keys for that bin are still appended at the tail, which is not what
// putTreeVal does (it links a node after its tree parent and moves the root
// to the front, L1982-2001, L2161). On resize a tree bin is split like
// TreeNode.split (L2289-2330): each half stays a tree when it keeps more
// than UNTREEIFY_THRESHOLD (6) nodes. Callers must treat the relative order
// of inTree nodes as unknown. Capacity and threshold stay exact, because
// putTreeVal changes neither.
type javaHashMap[K comparable] struct {
	table     []int32 // head node of each bin, -1 when empty
	tree      []bool  // bin is a red-black tree in Java
	nodes     []javaNode[K]
	size      int
	threshold int
	// Treeified counts bins that became trees; TreeifyResizes counts the
	// resizes treeifyBin did instead because the table was below 64.
	treeified      int
	treeifyResizes int
	// maxBin is the longest bin seen after any put.
	maxBin int
	// spareTab and spareTree are free storage for the next table: resize
	// swaps it with the table it replaces. After reset, table and tree are
	// empty but keep their storage too.
	spareTab  []int32
	spareTree []bool
}

type javaNode[K comparable] struct {
	key    K
	hash   int32 // spread hash, as stored in HashMap.Node.hash
	next   int32 // next node in the bin, -1 at the tail
	inTree bool  // was in a tree bin: position inside its bin not modelled
}

// newJavaHashMap is new HashMap<>() / new HashSet<>() (HashMap.java L470-472,
// HashSet.java L106): no table yet, threshold 0, so the first put allocates
// 16 bins with threshold 12.
func newJavaHashMap[K comparable](expected int) *javaHashMap[K] {
	return &javaHashMap[K]{nodes: make([]javaNode[K], 0, expected)}
}

// reset empties m for reuse, keeping its storage: as newJavaHashMap(expected)
// when initialCapacity < 0, else as new HashMap<>(initialCapacity) / new
// HashSet<>(initialCapacity) (HashMap.java L449-462, HashSet.java L145),
// whose threshold field holds tableSizeFor(initialCapacity) until the first
// put.
func (m *javaHashMap[K]) reset(initialCapacity, expected int) {
	m.table, m.tree = m.table[:0], m.tree[:0]
	if cap(m.nodes) < expected {
		m.nodes = make([]javaNode[K], 0, expected)
	}
	m.nodes = m.nodes[:0]
	m.size, m.threshold = 0, 0
	m.treeified, m.treeifyResizes, m.maxBin = 0, 0, 0
	if initialCapacity >= 0 {
		m.threshold = int(javaTableSizeFor(int32(min(initialCapacity, javaMaximumCapacity))))
	}
}

// capacity is table.length (0 before the first put).
func (m *javaHashMap[K]) capacity() int { return len(m.table) }

// put is HashMap.put(key, value) / HashSet.add(key) for a key whose
// hashCode() is hashCode. It reports whether the key was new; an existing key
// keeps its position, as in putVal (L623-664).
func (m *javaHashMap[K]) put(key K, hashCode int32) bool {
	h := javaSpread(hashCode)
	if len(m.table) == 0 {
		m.resize()
	}
	i := uint32(h) & uint32(len(m.table)-1)
	node := int32(len(m.nodes))
	p := m.table[i]
	binLen := 1
	switch {
	case p < 0:
		m.table[i] = node
	case m.tree[i]:
		// putTreeVal: no treeifyBin call. The position inside the bin is
		// not modelled (the new node is marked inTree).
		for {
			if m.nodes[p].hash == h && m.nodes[p].key == key {
				return false
			}
			binLen++
			if m.nodes[p].next < 0 {
				break
			}
			p = m.nodes[p].next
		}
		m.nodes[p].next = node
		m.nodes = append(m.nodes, javaNode[K]{key: key, hash: h, next: -1, inTree: true})
		m.maxBin = max(m.maxBin, binLen)
		m.size++
		if m.size > m.threshold {
			m.resize()
		}
		return true
	default:
		if m.nodes[p].hash == h && m.nodes[p].key == key {
			return false
		}
		for binCount := 0; ; binCount++ {
			e := m.nodes[p].next
			if e < 0 {
				m.nodes[p].next = node
				binLen = binCount + 2
				m.nodes = append(m.nodes, javaNode[K]{key: key, hash: h, next: -1})
				m.maxBin = max(m.maxBin, binLen)
				if binCount >= javaTreeifyThreshold-1 {
					m.treeifyBin(h)
				}
				m.size++
				if m.size > m.threshold {
					m.resize()
				}
				return true
			}
			if m.nodes[e].hash == h && m.nodes[e].key == key {
				return false
			}
			p = e
		}
	}
	m.nodes = append(m.nodes, javaNode[K]{key: key, hash: h, next: -1})
	m.maxBin = max(m.maxBin, binLen)
	m.size++
	if m.size > m.threshold {
		m.resize()
	}
	return true
}

// treeifyBin is HashMap.treeifyBin (L753-771): a resize when the table is
// smaller than MIN_TREEIFY_CAPACITY, otherwise the bin becomes a tree (only
// marked here, see javaHashMap).
func (m *javaHashMap[K]) treeifyBin(h int32) {
	n := len(m.table)
	if n < javaMinTreeifyCapacity {
		m.treeifyResizes++
		m.resize()
		return
	}
	i := uint32(h) & uint32(n-1)
	if m.table[i] < 0 {
		return
	}
	m.tree[i] = true
	m.treeified++
	for e := m.table[i]; e >= 0; e = m.nodes[e].next {
		m.nodes[e].inTree = true
	}
}

// resize is HashMap.resize (L675-745) for a table that never reaches
// MAXIMUM_CAPACITY in practice (the case is still handled as in Java).
func (m *javaHashMap[K]) resize() {
	oldCap, oldThr := len(m.table), m.threshold
	var newCap, newThr int
	switch {
	case oldCap > 0:
		if oldCap >= javaMaximumCapacity {
			m.threshold = 1<<31 - 1
			return
		}
		newCap = oldCap << 1
		if newCap < javaMaximumCapacity && oldCap >= javaDefaultInitialCapacity {
			newThr = oldThr << 1
		}
	case oldThr > 0: // initial capacity was placed in threshold
		newCap = oldThr
	default:
		newCap = javaDefaultInitialCapacity
		newThr = javaDefaultInitialCapacity * 3 / 4
	}
	if newThr == 0 {
		// (int)((float)newCap * 0.75f): exact for powers of two.
		if newCap < javaMaximumCapacity {
			newThr = newCap * 3 / 4
		} else {
			newThr = 1<<31 - 1
		}
	}
	m.threshold = newThr
	var newTab []int32
	var newTree []bool
	oldTab, oldTree := m.table, m.tree
	switch {
	case oldCap == 0 && cap(oldTab) >= newCap: // storage kept by reset
		newTab, newTree = oldTab[:newCap], oldTree[:newCap]
		clear(newTree)
	case cap(m.spareTab) >= newCap:
		newTab, newTree = m.spareTab[:newCap], m.spareTree[:newCap]
		clear(newTree)
		m.spareTab, m.spareTree = oldTab, oldTree
	default:
		newTab, newTree = make([]int32, newCap), make([]bool, newCap)
		if cap(oldTab) > cap(m.spareTab) {
			m.spareTab, m.spareTree = oldTab, oldTree
		}
	}
	for i := range newTab {
		newTab[i] = -1
	}
	for j := range oldCap {
		e := m.table[j]
		if e < 0 {
			continue
		}
		if m.nodes[e].next < 0 {
			newTab[uint32(m.nodes[e].hash)&uint32(newCap-1)] = e
			continue
		}
		// Lo/hi split preserving order: the list case (L713-742) and
		// TreeNode.split (L2289-2330) relink nodes the same way.
		loHead, loTail, hiHead, hiTail := int32(-1), int32(-1), int32(-1), int32(-1)
		lc, hc := 0, 0
		for e >= 0 {
			next := m.nodes[e].next
			m.nodes[e].next = -1
			if uint32(m.nodes[e].hash)&uint32(oldCap) == 0 {
				if loTail < 0 {
					loHead = e
				} else {
					m.nodes[loTail].next = e
				}
				loTail = e
				lc++
			} else {
				if hiTail < 0 {
					hiHead = e
				} else {
					m.nodes[hiTail].next = e
				}
				hiTail = e
				hc++
			}
			e = next
		}
		if loHead >= 0 {
			newTab[j] = loHead
			newTree[j] = m.tree[j] && lc > javaUntreeifyThreshold
		}
		if hiHead >= 0 {
			newTab[j+oldCap] = hiHead
			newTree[j+oldCap] = m.tree[j] && hc > javaUntreeifyThreshold
		}
	}
	m.table, m.tree = newTab, newTree
}

// javaEntry is one key in iteration order with the bin it sits in.
type javaEntry[K comparable] struct {
	key    K
	bin    int32
	inTree bool
}

// entries returns the keys in iteration order (HashMap.forEach L1413-1426,
// KeySet.toArray): bins 0..cap-1, each along next.
func (m *javaHashMap[K]) entries() []javaEntry[K] {
	return m.appendEntries(make([]javaEntry[K], 0, m.size))
}

// appendEntries is entries appended to out.
func (m *javaHashMap[K]) appendEntries(out []javaEntry[K]) []javaEntry[K] {
	for i, e := range m.table {
		for ; e >= 0; e = m.nodes[e].next {
			out = append(out, javaEntry[K]{key: m.nodes[e].key, bin: int32(i), inTree: m.nodes[e].inTree})
		}
	}
	return out
}

// javaNormalCapacity is the table length a HashMap created with
// initialCapacity (-1 for new HashMap()) has after n distinct puts when no
// bin ever reaches the treeify threshold: the first table, doubled while
// n > threshold.
func javaNormalCapacity(initialCapacity, n int) (capacity int) {
	c := javaDefaultInitialCapacity
	if initialCapacity >= 0 {
		c = int(javaTableSizeFor(int32(min(initialCapacity, javaMaximumCapacity))))
	}
	if n == 0 {
		return 0
	}
	for c < javaMaximumCapacity && n > c*3/4 {
		c <<= 1
	}
	return c
}

// javaHashOrder is the iteration order of a java.util.HashMap created as
// new HashMap<>() (initialCapacity < 0) or new HashMap<>(initialCapacity)
// after putting len(hs) distinct keys in order, whose spread hashes
// (javaSpread of hashCode) are hs, computed without building the table. It
// writes to perm the indexes of hs in iteration order and returns the final
// capacity, or ok = false (perm untouched) when some bin might reach
// TREEIFY_THRESHOLD + 1 = 9 keys, where javaHashMap has to run the real
// insertions. counts is scratch storage, returned for reuse.
//
// Why this is the same order: without treeifyBin the table only resizes
// when size exceeds the threshold, so its final capacity is
// javaNormalCapacity(initialCapacity, n); new keys are appended at the tail
// of their bin and every resize splits a bin into two lists that keep their
// relative order, so iteration lists the keys by bin ascending (hash &
// (capacity-1)) and by insertion order within a bin: a stable sort by bin.
// treeifyBin runs only when a put makes a bin 9 keys long. A bin at any
// capacity holds a subset of the keys that share a bin at the first
// capacity (a coarser mask), so at most 8 keys per bin at the first
// capacity rules it out.
func javaHashOrder(hs []uint32, initialCapacity int, perm []int32, counts []int32) (capacity int, ok bool, _ []int32) {
	n := len(hs)
	if n == 0 {
		return 0, true, counts
	}
	capacity = javaNormalCapacity(initialCapacity, n)
	first := javaNormalCapacity(initialCapacity, 1)
	if n > javaTreeifyThreshold && first != capacity {
		counts = growInt32(counts, first)
		clear(counts)
		mask := uint32(first - 1)
		for _, h := range hs {
			b := h & mask
			counts[b]++
			if counts[b] > javaTreeifyThreshold {
				return 0, false, counts
			}
		}
	}
	mask := uint32(capacity - 1)
	if capacity > 8*n+64 {
		// A table far larger than its keys: sort the keys, not the bins.
		if n <= 32 {
			for i := range n {
				b := hs[i] & mask
				j := i
				for ; j > 0 && hs[perm[j-1]]&mask > b; j-- {
					perm[j] = perm[j-1]
				}
				perm[j] = int32(i)
			}
		} else {
			for i := range perm {
				perm[i] = int32(i)
			}
			slices.SortStableFunc(perm, func(x, y int32) int { return cmp.Compare(hs[x]&mask, hs[y]&mask) })
		}
		if n > javaTreeifyThreshold && first == capacity {
			for s := 0; s < n; {
				t := s + 1
				for t < n && hs[perm[t]]&mask == hs[perm[s]]&mask {
					t++
				}
				if t-s > javaTreeifyThreshold {
					return 0, false, counts
				}
				s = t
			}
		}
		return capacity, true, counts
	}
	// Counting sort by bin (stable).
	counts = growInt32(counts, capacity+1)
	clear(counts)
	for _, h := range hs {
		counts[h&mask+1]++
	}
	if n > javaTreeifyThreshold && first == capacity && slices.Max(counts) > javaTreeifyThreshold {
		return 0, false, counts
	}
	for b := 1; b <= capacity; b++ {
		counts[b] += counts[b-1]
	}
	for i, h := range hs {
		b := h & mask
		perm[counts[b]] = int32(i)
		counts[b]++
	}
	return capacity, true, counts
}

func growInt32(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}
