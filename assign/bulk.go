package assign

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Routes receives the results of a bulk routing (RouteStrings, RouteKeys):
// element i of each slice is for key i. The caller provides the slices,
// each either nil (not wanted) or exactly as long as the keys; nothing is
// allocated per key.
type Routes struct {
	// Hashes is each key's Java hashCode (StringHashCode, HashKey).
	Hashes []int32
	// KeyGroups is each key's key group, murmurHash(hashCode) % maxP
	// (KeyGroupForHash).
	KeyGroups []int32
	// Subtasks is each key's subtask at the parallelism given
	// (OperatorIndex); it must be nil when that parallelism is 0.
	Subtasks []int32
}

// ErrRoutesLength is returned (wrapped) when a slice of Routes is neither
// nil nor as long as the keys, or Subtasks is given without a parallelism.
var ErrRoutesLength = errors.New("routes: output slice length")

// KeyError is the error of a bulk routing for the first key, by index, that
// cannot be hashed as its type: Err is what HashKey returns for it.
type KeyError struct {
	Index int
	Err   error
}

func (e *KeyError) Error() string { return fmt.Sprintf("key %d: %v", e.Index, e.Err) }

// Unwrap returns the key's own error.
func (e *KeyError) Unwrap() error { return e.Err }

// RouteStrings routes String keys, each the Java String Kafka's
// StringDeserializer builds from its bytes (see StringHashCode), for an
// operator of max parallelism maxP and parallelism p (0: no subtasks
// wanted): it fills out with what StringHashCode, KeyGroupForHash and
// OperatorIndex give each key, bit for bit.
//
// The keys are split into chunks that runtime.GOMAXPROCS goroutines take
// in turn, so a long list uses every core; a short one (under about 16,000
// keys) is routed on the calling goroutine. The per-key work allocates
// nothing.
//
// Mirrors KeyGroupRangeAssignment.assignToKeyGroup (L63, key.hashCode()
// then computeKeyGroupForKeyHash) and computeOperatorIndexForKeyGroup
// (L126), for java.lang.String keys.
func RouteStrings(keys []string, maxP, p int, out Routes) error {
	r, err := newRouter(len(keys), maxP, p, out)
	if err != nil {
		return err
	}
	runChunks(len(keys), func(lo, hi int) { r.strings(keys[lo:hi], lo) })
	return nil
}

// RouteKeys routes keys given as text for key type t (as HashKey reads
// them) like RouteStrings: String keys take RouteStrings' path, other
// scalars parse their text (allocating nothing unless the text is bad),
// and tuple keys decode their JSON, which allocates. A key that HashKey
// refuses makes RouteKeys return a *KeyError naming the first such key by
// index, and leaves out's contents unspecified.
func RouteKeys(t KeyType, keys []string, maxP, p int, out Routes) error {
	if t.Kind == KindString {
		return RouteStrings(keys, maxP, p, out)
	}
	r, err := newRouter(len(keys), maxP, p, out)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	first := &KeyError{Index: len(keys)}
	var bound atomic.Int64 // no chunk at or after the first bad key needs to run
	bound.Store(int64(len(keys)))
	runChunks(len(keys), func(lo, hi int) {
		if int64(lo) >= bound.Load() {
			return
		}
		for i := lo; i < hi; i++ {
			h, err := HashKey(t, keys[i])
			if err != nil {
				mu.Lock()
				if i < first.Index {
					first.Index, first.Err = i, err
					bound.Store(int64(i))
				}
				mu.Unlock()
				return
			}
			r.put(i, h)
		}
	})
	if first.Err != nil {
		return first
	}
	return nil
}

// router holds one bulk routing's validated parameters.
type router struct {
	out      Routes
	maxP, p  int32
	kgMask   int32 // maxP-1 when maxP is a power of two, else -1
	subShift int32 // log2(maxP) when maxP is a power of two
}

func newRouter(n, maxP, p int, out Routes) (*router, error) {
	if p == 0 {
		if err := CheckParallelism(maxP); err != nil {
			return nil, err
		}
	} else if err := checkRange(maxP, p); err != nil {
		return nil, err
	}
	for _, s := range []struct {
		name string
		v    []int32
	}{{"Hashes", out.Hashes}, {"KeyGroups", out.KeyGroups}, {"Subtasks", out.Subtasks}} {
		if s.v != nil && len(s.v) != n {
			return nil, fmt.Errorf("%w: %s has %d elements for %d keys", ErrRoutesLength, s.name, len(s.v), n)
		}
	}
	if p == 0 && out.Subtasks != nil {
		return nil, fmt.Errorf("%w: Subtasks given without a parallelism", ErrRoutesLength)
	}
	r := &router{out: out, maxP: int32(maxP), p: int32(p), kgMask: -1}
	if maxP&(maxP-1) == 0 {
		r.kgMask = int32(maxP - 1)
		for 1<<r.subShift < maxP {
			r.subShift++
		}
	}
	return r, nil
}

// routeChunk is how many keys a goroutine takes at a time, and
// routeInline the most keys routed without starting any.
const (
	routeChunk  = 4096
	routeInline = 4 * routeChunk
)

// runChunks calls f over [0, n) in chunks: on the calling goroutine when n is
// small or one core is all there is, else on GOMAXPROCS goroutines that
// take the next chunk as they finish one.
func runChunks(n int, f func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), (n+routeChunk-1)/routeChunk)
	if n <= routeInline || workers <= 1 {
		f(0, n)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				lo := int(next.Add(routeChunk)) - routeChunk
				if lo >= n {
					return
				}
				f(lo, min(lo+routeChunk, n))
			}
		})
	}
	wg.Wait()
}

// strings routes keys, the chunk of the keys that starts at index base.
// The common shapes, a power-of-two max parallelism with key groups and
// perhaps subtasks wanted, have loops of their own without put's tests.
func (r *router) strings(keys []string, base int) {
	o := r.out
	sub := func(s []int32) []int32 {
		if s == nil {
			return nil
		}
		return s[base : base+len(keys)]
	}
	hs, kgs, subs := sub(o.Hashes), sub(o.KeyGroups), sub(o.Subtasks)
	switch {
	case r.kgMask >= 0 && hs == nil && kgs != nil && subs == nil:
		for i, k := range keys {
			kgs[i] = MurmurHash(StringHashCode(k)) & r.kgMask
		}
	case r.kgMask >= 0 && hs == nil && kgs != nil && subs != nil:
		subs = subs[:len(kgs)]
		for i, k := range keys {
			kg := MurmurHash(StringHashCode(k)) & r.kgMask
			kgs[i] = kg
			subs[i] = kg * r.p >> r.subShift // kg*p >= 0: a shift divides exactly
		}
	default:
		for i, k := range keys {
			r.put(base+i, StringHashCode(k))
		}
	}
}

// put stores key i's hash and what follows from it.
func (r *router) put(i int, h int32) {
	o := r.out
	if o.Hashes != nil {
		o.Hashes[i] = h
	}
	if o.KeyGroups == nil && o.Subtasks == nil {
		return
	}
	m := MurmurHash(h)
	var kg int32
	if r.kgMask >= 0 {
		kg = m & r.kgMask
	} else {
		kg = m % r.maxP
	}
	if o.KeyGroups != nil {
		o.KeyGroups[i] = kg
	}
	if o.Subtasks != nil {
		if r.kgMask >= 0 {
			o.Subtasks[i] = kg * r.p >> r.subShift // kg*p >= 0: a shift divides exactly
		} else {
			o.Subtasks[i] = kg * r.p / r.maxP
		}
	}
}
