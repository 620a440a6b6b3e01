package assign

import (
	"fmt"
)

// Bounds on max parallelism, from KeyGroupRangeAssignment.
const (
	// DefaultLowerBoundMaxParallelism is DEFAULT_LOWER_BOUND_MAX_PARALLELISM (1 << 7).
	DefaultLowerBoundMaxParallelism = 1 << 7
	// UpperBoundMaxParallelism is Transformation.UPPER_BOUND_MAX_PARALLELISM
	// (1 << 15). The bound is inclusive.
	UpperBoundMaxParallelism = 1 << 15
)

// ParallelismError is the error Flink raises as an IllegalArgumentException
// for a parallelism or max parallelism out of bounds, or a max parallelism
// below the parallelism. Message is Flink's exception message, verbatim.
type ParallelismError struct {
	Message string
}

func (e *ParallelismError) Error() string { return e.Message }

// CheckParallelism reports whether x is a parallelism Flink accepts:
// 0 < x <= 32768.
//
// Mirrors KeyGroupRangeAssignment.checkParallelismPreconditions (L149), which
// throws IllegalArgumentException("Operator parallelism not within bounds: x").
func CheckParallelism(x int) error {
	if x <= 0 || x > UpperBoundMaxParallelism {
		return &ParallelismError{Message: fmt.Sprintf("Operator parallelism not within bounds: %d", x)}
	}
	return nil
}

// DefaultMaxParallelism returns the max parallelism (number of key groups)
// Flink uses for an operator of parallelism p when none is set:
// min(max(roundUpToPowerOfTwo(p + p/2), 128), 32768).
//
// Mirrors KeyGroupRangeAssignment.computeDefaultMaxParallelism (L137). Flink
// applies it per job vertex, to the vertex parallelism (SchedulerBase
// .getDefaultMaxParallelism), and only when no max parallelism is configured.
func DefaultMaxParallelism(p int) (int, error) {
	if err := CheckParallelism(p); err != nil {
		return 0, err
	}
	x := int32(p)
	m := roundUpToPowerOfTwo(x + x/2)
	m = max(m, DefaultLowerBoundMaxParallelism)
	m = min(m, UpperBoundMaxParallelism)
	return int(m), nil
}

// roundUpToPowerOfTwo mirrors MathUtils.roundUpToPowerOfTwo (L163): the
// smallest power of two >= x for 1 <= x <= 2^30.
func roundUpToPowerOfTwo(x int32) int32 {
	x--
	x |= x >> 1
	x |= x >> 2
	x |= x >> 4
	x |= x >> 8
	x |= x >> 16
	return x + 1
}

// checkRange validates (maxP, p) the way computeKeyGroupRangeForOperatorIndex
// does: p first, then maxP, then maxP >= p.
func checkRange(maxP, p int) error {
	if err := CheckParallelism(p); err != nil {
		return err
	}
	if err := CheckParallelism(maxP); err != nil {
		return err
	}
	if maxP < p {
		return &ParallelismError{Message: "Maximum parallelism must not be smaller than parallelism."}
	}
	return nil
}

// CheckMaxParallelism validates a (maxParallelism, parallelism) pair with
// Flink's conditions and messages (see checkRange).
func CheckMaxParallelism(maxP, p int) error { return checkRange(maxP, p) }

// KeyGroupForHash returns the key group of a key whose Java hashCode is hash:
// murmurHash(hash) % maxP.
//
// Mirrors KeyGroupRangeAssignment.computeKeyGroupForKeyHash (L75). The caller
// must have validated maxP (1..32768); Flink does not check it here either.
//
// The default max parallelisms are powers of two, and for those the
// remainder of the non-negative murmur hash is its low bits: the same value
// without a division.
func KeyGroupForHash(hash int32, maxP int) int {
	m := MurmurHash(hash)
	if maxP > 0 && maxP&(maxP-1) == 0 {
		return int(m & int32(maxP-1))
	}
	return int(m % int32(maxP))
}

// OperatorIndex returns the subtask that owns key group kg: kg * p / maxP.
//
// Mirrors KeyGroupRangeAssignment.computeOperatorIndexForKeyGroup (L126),
// which validates nothing; within 1 <= p <= maxP <= 32768 nothing overflows.
func OperatorIndex(maxP, p, kg int) int {
	return int(int32(kg) * int32(p) / int32(maxP))
}

// KeyGroupRange is an inclusive range of key groups, like Flink's
// KeyGroupRange (getStartKeyGroup, getEndKeyGroup).
type KeyGroupRange struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Size is the number of key groups in r (end - start + 1).
func (r KeyGroupRange) Size() int { return r.End - r.Start + 1 }

// Contains reports whether key group kg lies in r.
func (r KeyGroupRange) Contains(kg int) bool { return kg >= r.Start && kg <= r.End }

// Intersect returns the overlap of r and o and whether it is non-empty, like
// KeyGroupRange.getIntersection.
func (r KeyGroupRange) Intersect(o KeyGroupRange) (KeyGroupRange, bool) {
	x := KeyGroupRange{Start: max(r.Start, o.Start), End: min(r.End, o.End)}
	return x, x.Start <= x.End
}

// KeyGroupRangeFor returns the key groups owned by subtask i of an operator
// with parallelism p and max parallelism maxP:
// [(i*maxP + p - 1)/p, ((i+1)*maxP - 1)/p].
//
// Mirrors KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex
// (L93-104), including its validation order and messages. Like Flink it does
// not check i; callers pass 0 <= i < p.
func KeyGroupRangeFor(maxP, p, i int) (KeyGroupRange, error) {
	if err := checkRange(maxP, p); err != nil {
		return KeyGroupRange{}, err
	}
	return keyGroupRange(int32(maxP), int32(p), int32(i)), nil
}

func keyGroupRange(maxP, p, i int32) KeyGroupRange {
	return KeyGroupRange{
		Start: int((i*maxP + p - 1) / p),
		End:   int(((i+1)*maxP - 1) / p),
	}
}

// KeyGroupRanges returns the ranges of all p subtasks, in subtask order. They
// tile 0..maxP-1.
func KeyGroupRanges(maxP, p int) ([]KeyGroupRange, error) {
	if err := checkRange(maxP, p); err != nil {
		return nil, err
	}
	rs := make([]KeyGroupRange, p)
	for i := range rs {
		rs[i] = keyGroupRange(int32(maxP), int32(p), int32(i))
	}
	return rs, nil
}
