package keysample

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/skewscope/skewscope/assign"
)

// MaxErrorMessages is how many distinct extraction error messages a Summary
// keeps with their counts; records failing with any further message are
// counted in Failed only.
const MaxErrorMessages = 20

// hllBits is the HyperLogLog precision: 2^14 registers, a standard error of
// 1.04/sqrt(2^14) ≈ 0.81%, in 16 KiB.
const hllBits = 14

// Summary is a bounded-memory summary of the keys of sampled records: a
// Space-Saving heavy-hitters summary with capacity counters, each with its
// error bound; a HyperLogLog estimate of the number of distinct keys; and
// the exact count of records per key group (maxP counters), exact because
// every record's key group is computed. Its memory is fixed by capacity
// and maxP, however long the stream. A Summary is not safe for concurrent
// use.
type Summary struct {
	maxP      int
	kgMask    int32 // maxP-1 when maxP is a power of two (x % maxP == x & kgMask for x >= 0), else -1
	capacity  int
	records   int64
	evictions int64
	keyGroups []int64

	counters []counter
	// index finds a key's counter: open addressing with linear probing over
	// a power-of-two table at most a quarter full, by indexHash, with
	// backward-shift deletion, so evictions leave no tombstones behind (Go
	// maps slowed down by a third under this churn).
	index     []slot
	indexMask uint64
	// buckets hold the counters of equal count in a list sorted by count,
	// lowest first (the Stream-Summary of Metwally et al.), so that an
	// increment and an eviction are O(1).
	buckets     []bucket
	freeBuckets []int32
	minBucket   int32

	hll [1 << hllBits]uint8

	errs     []ErrorCount
	errIndex map[string]int
	failed   int64
}

type slot struct {
	h uint64 // indexHash of the key's Java hash
	c int32  // counter index + 1; 0 for an empty slot
}

// counter is one Space-Saving counter, 64 bytes: one cache line.
type counter struct {
	h          uint64 // indexHash
	text       string
	count, err int64
	hash       int32
	keyGroup   int32
	slot       int32 // its entry in the index
	bucket     int32
	prev, next int32 // in the bucket's list of counters; -1 for none
}

type bucket struct {
	count      int64
	head       int32 // first counter; -1 when the bucket is free
	prev, next int32 // in the list of buckets by count; -1 for none
}

// HeavyKey is a key of a Summary with its estimated count: its true count in
// the sample is at least Count-ErrorBound and at most Count.
type HeavyKey struct {
	Text     string
	Hash     int32
	KeyGroup int
	// Count is the Space-Saving count: never below the true count.
	Count int64
	// ErrorBound is the most Count may overestimate by (Space-Saving's ε: the
	// count of the counter this key took over, 0 if it has had its own
	// counter since its first record).
	ErrorBound int64
}

// ErrorCount is one message of key extraction errors and how many records
// failed with it.
type ErrorCount struct {
	Message string
	Count   int64
	// Example is the value at fault of the first record with this message,
	// for an error that carries one apart from its message (a
	// *SQLKeyError), so that records failing for one reason count together
	// whatever their values.
	Example string
}

// NewSummary returns an empty Summary with capacity Space-Saving counters
// (at least 1) for an operator of max parallelism maxP. It panics if maxP
// is not a max parallelism Flink accepts (1..32768): check user input with
// assign.CheckParallelism first.
func NewSummary(capacity int, maxP int) *Summary {
	if err := assign.CheckParallelism(maxP); err != nil {
		panic(fmt.Sprintf("keysample.NewSummary: max parallelism %d: %v", maxP, err))
	}
	capacity = max(capacity, 1)
	size := 1
	for size < 4*capacity {
		size <<= 1
	}
	s := &Summary{
		maxP:        maxP,
		kgMask:      -1,
		capacity:    capacity,
		keyGroups:   make([]int64, maxP),
		counters:    make([]counter, 0, capacity),
		index:       make([]slot, size),
		indexMask:   uint64(size - 1),
		buckets:     make([]bucket, capacity),
		freeBuckets: make([]int32, capacity),
		minBucket:   -1,
		errIndex:    map[string]int{},
	}
	if maxP&(maxP-1) == 0 {
		s.kgMask = int32(maxP - 1)
	}
	for i := range s.freeBuckets {
		s.freeBuckets[i] = int32(capacity - 1 - i)
	}
	return s
}

// MaxParallelism returns the max parallelism the Summary computes key groups for.
func (s *Summary) MaxParallelism() int { return s.maxP }

// Capacity returns the number of Space-Saving counters.
func (s *Summary) Capacity() int { return s.capacity }

// Counters returns the number of counters in use, at most Capacity.
func (s *Summary) Counters() int { return len(s.counters) }

// Add counts one record with key k: its key group exactly, its key in the
// heavy-hitters summary and the distinct-count sketch. It is O(1) amortised
// and allocates nothing (NewSummary sizes the counters and their index); a
// key that takes a counter keeps k.Text.
func (s *Summary) Add(k Key) {
	s.records++
	var kg int
	if s.kgMask >= 0 {
		kg = int(assign.MurmurHash(k.Hash) & s.kgMask) // assign.KeyGroupForHash, without a division
	} else {
		kg = assign.KeyGroupForHash(k.Hash, s.maxP)
	}
	s.keyGroups[kg]++
	h := indexHash(k.Hash)
	if i := s.find(h, k); i >= 0 {
		s.increment(i)
		return
	}
	// A key in the summary was added to the distinct-count sketch when it
	// took its counter, and adding a key twice leaves the sketch as it is:
	// only a key new to the summary needs its text hashed.
	s.addHLL(keyHash(k))
	if len(s.counters) < s.capacity {
		i := int32(len(s.counters))
		s.counters = append(s.counters, counter{h: h, text: k.Text, hash: k.Hash, keyGroup: int32(kg), prev: -1, next: -1})
		s.insert(h, i)
		if s.minBucket >= 0 && s.buckets[s.minBucket].count == 1 {
			s.attach(i, s.minBucket)
		} else {
			b := s.newBucket(1, -1, s.minBucket)
			s.attach(i, b)
		}
		return
	}
	// Full: the new key takes over a counter of the lowest count m, and may
	// have occurred up to m times before.
	s.evictions++
	i := s.buckets[s.minBucket].head
	s.remove(i)
	c := &s.counters[i]
	c.h, c.text, c.hash, c.keyGroup, c.err = h, k.Text, k.Hash, int32(kg), c.count
	s.insert(h, i)
	s.increment(i)
}

// find returns the counter of key k, whose indexHash is h, or -1.
func (s *Summary) find(h uint64, k Key) int32 {
	for j := h & s.indexMask; ; j = (j + 1) & s.indexMask {
		sl := s.index[j]
		if sl.c == 0 {
			return -1
		}
		if sl.h == h {
			if c := &s.counters[sl.c-1]; c.hash == k.Hash && c.text == k.Text {
				return sl.c - 1
			}
		}
	}
}

// insert indexes counter i under hash h.
func (s *Summary) insert(h uint64, i int32) {
	j := h & s.indexMask
	for s.index[j].c != 0 {
		j = (j + 1) & s.indexMask
	}
	s.index[j] = slot{h: h, c: i + 1}
	s.counters[i].slot = int32(j)
}

// remove takes counter i out of the index, shifting back the entries after
// it that it had pushed from their home slot.
func (s *Summary) remove(i int32) {
	mask := s.indexMask
	j := uint64(s.counters[i].slot)
	for k := (j + 1) & mask; s.index[k].c != 0; k = (k + 1) & mask {
		// The entry at k may move to j if j lies on its probe path:
		// from its home slot to k.
		if (k-s.index[k].h)&mask >= (k-j)&mask {
			s.index[j] = s.index[k]
			s.counters[s.index[j].c-1].slot = int32(j)
			j = k
		}
	}
	s.index[j] = slot{}
}

// newBucket takes a free bucket of the given count and links it between
// buckets prev and next (either -1 for an end).
func (s *Summary) newBucket(count int64, prev, next int32) int32 {
	b := s.freeBuckets[len(s.freeBuckets)-1]
	s.freeBuckets = s.freeBuckets[:len(s.freeBuckets)-1]
	s.buckets[b] = bucket{count: count, head: -1, prev: prev, next: next}
	if prev >= 0 {
		s.buckets[prev].next = b
	} else {
		s.minBucket = b
	}
	if next >= 0 {
		s.buckets[next].prev = b
	}
	return b
}

// freeBucket unlinks the empty bucket b.
func (s *Summary) freeBucket(b int32) {
	bk := s.buckets[b]
	if bk.prev >= 0 {
		s.buckets[bk.prev].next = bk.next
	} else {
		s.minBucket = bk.next
	}
	if bk.next >= 0 {
		s.buckets[bk.next].prev = bk.prev
	}
	s.buckets[b] = bucket{head: -1, prev: -1, next: -1}
	s.freeBuckets = append(s.freeBuckets, b)
}

// attach puts counter i at the head of bucket b and sets its count.
func (s *Summary) attach(i, b int32) {
	c, bk := &s.counters[i], &s.buckets[b]
	c.bucket, c.count, c.prev, c.next = b, bk.count, -1, bk.head
	if c.next >= 0 {
		s.counters[c.next].prev = i
	}
	bk.head = i
}

// detach takes counter i out of its bucket's list.
func (s *Summary) detach(i int32) {
	c := &s.counters[i]
	if c.prev >= 0 {
		s.counters[c.prev].next = c.next
	} else {
		s.buckets[c.bucket].head = c.next
	}
	if c.next >= 0 {
		s.counters[c.next].prev = c.prev
	}
	c.prev, c.next = -1, -1
}

// increment adds one to counter i, moving it to the bucket of the next count.
func (s *Summary) increment(i int32) {
	c := &s.counters[i]
	b := c.bucket
	bk := &s.buckets[b]
	want, next := bk.count+1, bk.next
	alone := bk.head == i && c.next < 0
	switch {
	case next >= 0 && s.buckets[next].count == want:
		s.detach(i)
		s.attach(i, next)
		if alone {
			s.freeBucket(b)
		}
	case alone:
		bk.count = want
		c.count = want
	default:
		s.detach(i)
		s.attach(i, s.newBucket(want, b, next))
	}
}

// AddError counts one record whose key could not be extracted, under its
// message; the first MaxErrorMessages distinct messages are kept.
func (s *Summary) AddError(err error) {
	s.failed++
	msg := err.Error()
	if i, ok := s.errIndex[msg]; ok {
		s.errs[i].Count++
		return
	}
	if len(s.errs) < MaxErrorMessages {
		s.errIndex[msg] = len(s.errs)
		ec := ErrorCount{Message: msg, Count: 1}
		var ex interface{ Example() string }
		if errors.As(err, &ex) {
			ec.Example = ex.Example()
		}
		s.errs = append(s.errs, ec)
	}
}

// Records returns the number of records added with a key (not those
// counted by AddError).
func (s *Summary) Records() int64 { return s.records }

// Failed returns the number of records counted by AddError, including those
// whose message was beyond the first MaxErrorMessages.
func (s *Summary) Failed() int64 { return s.failed }

// Errors returns the kept error messages with their counts, the most
// frequent first (ties in the order first seen).
func (s *Summary) Errors() []ErrorCount {
	out := slices.Clone(s.errs)
	slices.SortStableFunc(out, func(a, b ErrorCount) int { return cmpInt64(b.Count, a.Count) })
	return out
}

// Top returns the n keys of highest Count (all of them if n exceeds the
// counters in use), by Count descending, then ErrorBound ascending, then
// text.
func (s *Summary) Top(n int) []HeavyKey {
	out := make([]HeavyKey, len(s.counters))
	for i, c := range s.counters {
		out[i] = HeavyKey{Text: c.text, Hash: c.hash, KeyGroup: int(c.keyGroup), Count: c.count, ErrorBound: c.err}
	}
	slices.SortFunc(out, func(a, b HeavyKey) int {
		if c := cmpInt64(b.Count, a.Count); c != 0 {
			return c
		}
		if c := cmpInt64(a.ErrorBound, b.ErrorBound); c != 0 {
			return c
		}
		return strings.Compare(a.Text, b.Text)
	})
	return out[:min(max(n, 0), len(out))]
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// KeyGroupCounts returns the exact number of records per key group, len
// MaxParallelism. The counts sum to Records.
func (s *Summary) KeyGroupCounts() []int64 { return slices.Clone(s.keyGroups) }

// Distinct returns the estimated number of distinct keys and the standard
// error of the estimate. While no key has been evicted from the summary
// (fewer distinct keys than counters) the count is exact and stdErr is 0;
// otherwise it is HyperLogLog's (Flajolet et al. 2007, with linear counting
// for small counts over 2^14 registers): stdErr = 1.04/sqrt(2^14) × estimate.
func (s *Summary) Distinct() (estimate float64, stdErr float64) {
	if s.evictions == 0 {
		return float64(len(s.counters)), 0
	}
	const m = float64(1 << hllBits)
	sum, zeros := 0.0, 0
	for _, r := range s.hll {
		sum += math.Ldexp(1, -int(r))
		if r == 0 {
			zeros++
		}
	}
	alpha := 0.7213 / (1 + 1.079/m)
	e := alpha * m * m / sum
	if e <= 2.5*m && zeros > 0 {
		e = m * math.Log(m/float64(zeros))
	}
	return e, 1.04 / math.Sqrt(m) * e
}

// indexHash spreads a Java hashCode over 64 bits to index counters; keys
// whose Java hashes collide share a probe sequence and are told apart by
// their text.
func indexHash(javaHash int32) uint64 { return fmix64(uint64(uint32(javaHash)) + 0x9e3779b97f4a7c15) }

// keyHash is the 64-bit hash of a key, text and Java hash, that feeds the
// distinct-count sketch.
func keyHash(k Key) uint64 { return fmix64(hashText(k.Text) ^ uint64(uint32(k.Hash))) }

// addHLL records a key of keyHash x in the distinct-count sketch.
func (s *Summary) addHLL(x uint64) {
	j := x >> (64 - hllBits)
	w := x<<hllBits | 1<<(hllBits-1) // a guard bit bounds the run of zeros
	if r := uint8(bits.LeadingZeros64(w) + 1); r > s.hll[j] {
		s.hll[j] = r
	}
}

// hashText is a 64-bit hash of s, the body of MurmurHash3's x64 mixing over
// 8-byte blocks, the last block overlapping the one before it when s is
// not a multiple of 8 bytes; fmix64 finishes it. It is fixed (not seeded
// per process) so estimates are reproducible.
func hashText(s string) uint64 {
	const c1, c2 = 0x87c37b91114253d5, 0x4cf5ad432745937f
	mix := func(h, k uint64) uint64 {
		k *= c1
		k = bits.RotateLeft64(k, 31)
		k *= c2
		h ^= k
		return bits.RotateLeft64(h, 27)*5 + 0x52dce729
	}
	h := uint64(len(s))
	if len(s) < 8 {
		var k uint64
		for i := range len(s) {
			k |= uint64(s[i]) << (8 * i)
		}
		return mix(h, k)
	}
	for i := 0; i+8 <= len(s); i += 8 {
		h = mix(h, load64(s[i:]))
	}
	if len(s)%8 != 0 {
		h = mix(h, load64(s[len(s)-8:]))
	}
	return h
}

// load64 reads the first 8 bytes of s, little-endian.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// fmix64 is MurmurHash3's 64-bit finaliser.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
