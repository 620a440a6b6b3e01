package assign

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"
	"strings"
)

// KeyedStateSource is one old subtask whose keyed state a new subtask reads
// on restore: the intersection of their key-group ranges.
type KeyedStateSource struct {
	// OldSubtask is the index of the old subtask.
	OldSubtask int `json:"oldSubtask"`
	// Range is range_old(OldSubtask) ∩ range_new(new subtask).
	Range KeyGroupRange `json:"range"`
	// KeyGroups is Range.Size().
	KeyGroups int `json:"keyGroups"`
	// Bytes is the estimated share of the old subtask's state in Range
	// (see KeyedRescale); 0 when sizes are unknown.
	Bytes int64 `json:"bytes"`
}

// KeyedRescaleSubtask is what one new subtask restores.
type KeyedRescaleSubtask struct {
	Subtask int           `json:"subtask"`
	Range   KeyGroupRange `json:"range"`
	// Sources lists the old subtasks whose ranges intersect Range, in old
	// subtask order; their Ranges tile Range.
	Sources []KeyedStateSource `json:"sources"`
	// FanIn is len(Sources): how many old subtasks' state this subtask reads.
	FanIn int `json:"fanIn"`
	// Bytes is the sum of the Sources' Bytes.
	Bytes int64 `json:"bytes"`
	// NonBaseBytes is Bytes minus the largest source term: roughly what
	// RocksDB incremental restore has to copy or ingest on top of the one
	// handle it opens and clips.
	NonBaseBytes int64 `json:"nonBaseBytes"`
	// NonBaseKeyGroups is the key-group count of everything but the largest
	// source (by key groups): the same idea when state sizes are unknown.
	NonBaseKeyGroups int `json:"nonBaseKeyGroups"`
}

// KeyedRescaleDiff describes how keyed state moves when an operator with max
// parallelism MaxParallelism is rescaled from From to To subtasks.
type KeyedRescaleDiff struct {
	MaxParallelism int `json:"maxParallelism"`
	From           int `json:"from"`
	To             int `json:"to"`
	// Moved counts key groups whose owner index changes:
	// |{k : k*From/M != k*To/M}|. It looks alarming (M = 128, 4 -> 8:
	// 87.5 %) but says little about cost, since after any rescale every
	// subtask restores from checkpoint storage; FanIn and NonBaseBytes are
	// closer to the restore work.
	Moved int `json:"moved"`
	// MovedFraction is Moved / MaxParallelism.
	MovedFraction float64 `json:"movedFraction"`
	// Subtasks has one entry per new subtask, in order.
	Subtasks []KeyedRescaleSubtask `json:"subtasks"`
	// MaxFanIn and MeanFanIn summarise Subtasks[*].FanIn.
	MaxFanIn  int     `json:"maxFanIn"`
	MeanFanIn float64 `json:"meanFanIn"`
	// BytesKnown is true when per-old-subtask state sizes were given; the
	// byte fields below and in Subtasks are 0 otherwise.
	BytesKnown bool `json:"bytesKnown"`
	// TotalBytes is the sum of the given old state sizes. The estimates
	// conserve it: the Bytes of all new subtasks add up to TotalBytes.
	TotalBytes int64 `json:"totalBytes"`
	// MovedBytes is the estimated state that lands on a new subtask whose
	// index differs from the old owner's: the sum of Bytes over all sources
	// with OldSubtask != Subtask. It is the byte counterpart of Moved.
	MovedBytes int64 `json:"movedBytes"`
	// NonBaseBytes is the sum of Subtasks[*].NonBaseBytes.
	NonBaseBytes int64 `json:"nonBaseBytes"`
}

// KeyedRescale computes which old subtasks each new subtask reads keyed state
// from when an operator with max parallelism maxP is rescaled from `from` to
// `to` subtasks.
//
// It mirrors StateAssignmentOperation.extractIntersectingState in apache/flink
// flink-runtime (new subtask j takes keyedStateHandle.getIntersection(
// range_new(j)) of every old handle whose range intersects its own), with the
// ranges of KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex
// (see KeyGroupRangeFor). Both range lists are contiguous, ascending and tile
// 0..maxP-1, so they are walked together like a merge: the cost is
// O(from + to), not O(maxP).
//
// stateBytes is optional. Empty (nil or length 0) gives key-group figures
// only; otherwise it must have exactly `from` entries, none negative, and
// stateBytes[i] is old subtask i's state size (the last checkpoint's
// per-subtask state_size or checkpointed_size, as Flink's REST API lists them
// under /jobs/:jobid/checkpoints/details/:checkpointid/subtasks/:vertexid,
// TaskCheckpointStatisticsWithSubtaskDetails). The estimate assumes state is
// spread uniformly over the key groups of an old range,
// bytes(j) = Σ_i |range_old(i) ∩ range_new(j)| · size(i) / |range_old(i)|,
// in exact integer arithmetic: the part of old range [s, e] (L key groups)
// from key group a to b gets ⌊size·(b−s+1)/L⌋ − ⌊size·(a−s)/L⌋ bytes, with
// 128-bit intermediates. Each term is within one byte of the real quotient and
// the terms of one old subtask add up to exactly size(i), so no byte is lost
// or invented.
//
// Both (maxP, from) and (maxP, to) are validated with CheckMaxParallelism,
// from first. A change of max parallelism is not a rescale (keyed state is
// incompatible), so there is only one maxP.
func KeyedRescale(maxP, from, to int, stateBytes []int64) (KeyedRescaleDiff, error) {
	if err := CheckMaxParallelism(maxP, from); err != nil {
		return KeyedRescaleDiff{}, err
	}
	if err := CheckMaxParallelism(maxP, to); err != nil {
		return KeyedRescaleDiff{}, err
	}
	known := len(stateBytes) > 0
	if known && len(stateBytes) != from {
		return KeyedRescaleDiff{}, fmt.Errorf("stateBytes has %d entries, want %d (one per old subtask) or none", len(stateBytes), from)
	}
	var total int64
	for i, b := range stateBytes {
		if b < 0 {
			return KeyedRescaleDiff{}, fmt.Errorf("stateBytes[%d] = %d: state size must not be negative", i, b)
		}
		if total > (1<<63-1)-b {
			return KeyedRescaleDiff{}, fmt.Errorf("stateBytes add up to more than %d bytes", int64(1<<63-1))
		}
		total += b
	}

	d := KeyedRescaleDiff{MaxParallelism: maxP, From: from, To: to, BytesKnown: known, TotalBytes: total}
	d.Subtasks = make([]KeyedRescaleSubtask, to)
	// At most from+to-1 intersections in all: one backing array for every
	// Sources slice.
	srcs := make([]KeyedStateSource, 0, from+to-1)
	m, a, b := int32(maxP), int32(from), int32(to)
	i := int32(0)
	old := keyGroupRange(m, a, 0)
	for j := range b {
		nr := keyGroupRange(m, b, j)
		first := len(srcs)
		for {
			x, _ := old.Intersect(nr)
			s := KeyedStateSource{OldSubtask: int(i), Range: x, KeyGroups: x.Size()}
			if known {
				s.Bytes = shareOfRange(stateBytes[i], old, x)
			}
			srcs = append(srcs, s)
			if old.End > nr.End {
				break // the old range continues into the next new range
			}
			i++
			if i == a {
				break
			}
			old = keyGroupRange(m, a, i)
			if old.Start > nr.End {
				break
			}
		}
		st := KeyedRescaleSubtask{Subtask: int(j), Range: nr, Sources: srcs[first:len(srcs):len(srcs)]}
		st.FanIn = len(st.Sources)
		var maxBytes int64
		maxKG := 0
		for _, s := range st.Sources {
			st.Bytes += s.Bytes
			maxBytes = max(maxBytes, s.Bytes)
			maxKG = max(maxKG, s.KeyGroups)
			if s.OldSubtask != int(j) {
				d.Moved += s.KeyGroups
				d.MovedBytes += s.Bytes
			}
		}
		st.NonBaseBytes = st.Bytes - maxBytes
		st.NonBaseKeyGroups = nr.Size() - maxKG
		d.NonBaseBytes += st.NonBaseBytes
		d.MaxFanIn = max(d.MaxFanIn, st.FanIn)
		d.Subtasks[j] = st
	}
	d.MovedFraction = float64(d.Moved) / float64(maxP)
	d.MeanFanIn = float64(len(srcs)) / float64(to)
	return d, nil
}

// shareOfRange estimates the bytes of an old range r (holding size bytes,
// spread uniformly over its key groups) that fall in x ⊆ r:
// ⌊size·(x.End−r.Start+1)/L⌋ − ⌊size·(x.Start−r.Start)/L⌋ with L = r.Size().
// Summed over a tiling of r it gives exactly size.
func shareOfRange(size int64, r, x KeyGroupRange) int64 {
	l := uint64(r.Size())
	upTo := func(k int) uint64 { // ⌊size·k/L⌋ for 0 <= k <= L, no overflow
		hi, lo := bits.Mul64(uint64(size), uint64(k))
		q, _ := bits.Div64(hi, lo, l) // hi < l because k <= l
		return q
	}
	return int64(upTo(x.End-r.Start+1) - upTo(x.Start-r.Start))
}

// PartitionMove is one partition whose source subtask changes.
type PartitionMove struct {
	Partition TopicPartition `json:"partition"`
	From      int            `json:"from"`
	To        int            `json:"to"`
}

// PartitionPlacement is a partition and the subtask that reads it.
type PartitionPlacement struct {
	Partition TopicPartition `json:"partition"`
	Subtask   int            `json:"subtask"`
}

// SourceRescaleDiff lists the Kafka partitions that change source subtask
// between two assignments (for example FreshAssignment at the current and at
// a new parallelism, or a fresh start against a restore layout).
type SourceRescaleDiff struct {
	FromParallelism int `json:"fromParallelism"`
	ToParallelism   int `json:"toParallelism"`
	// Moves lists the partitions present in both assignments whose subtask
	// index differs, ordered by topic (in order of first appearance, see
	// SourceRescale) and then partition.
	Moves []PartitionMove `json:"moves"`
	// Moved is len(Moves); Common counts partitions present in both.
	Moved  int `json:"moved"`
	Common int `json:"common"`
	// MovedFraction is Moved / Common (0 when nothing is in common).
	MovedFraction float64 `json:"movedFraction"`
	// Added are partitions only in the second assignment (with their new
	// subtask), Removed those only in the first (with their old subtask),
	// in the same order as Moves.
	Added   []PartitionPlacement `json:"added"`
	Removed []PartitionPlacement `json:"removed"`
}

// SourceRescale compares two partition assignments. Partitions are read from
// each Assignment's Subtasks (the subtask index is the owner); an Assignment
// with no Subtasks falls back to its dense form (Topics and Owners). When
// both assignments have the same Topics, their Owners are compared directly.
//
// Output order: topics in the order in which they first appear when reading
// before's subtasks 0, 1, ... and each subtask's list front to back, then
// after's the same way (for topics only in after); a side read from its dense
// form contributes its topics in name order. Within a topic, partitions
// ascending. The result is deterministic for given inputs.
func SourceRescale(before, after Assignment) SourceRescaleDiff {
	if before.isDense() && after.isDense() && slices.Equal(before.Topics, after.Topics) {
		if d, ok := denseRescale(before, after); ok {
			return d
		}
	}
	d := SourceRescaleDiff{FromParallelism: before.Parallelism, ToParallelism: after.Parallelism}
	topicOrder := make(map[string]int)
	bp := placements(before, topicOrder)
	ap := placements(after, topicOrder)
	key := func(tp TopicPartition) (int, int32) { return topicOrder[tp.Topic], tp.Partition }
	cmpTP := func(x, y TopicPartition) int {
		xt, xp := key(x)
		yt, yp := key(y)
		if xt != yt {
			return xt - yt
		}
		switch {
		case xp < yp:
			return -1
		case xp > yp:
			return 1
		}
		return 0
	}
	order := make([]TopicPartition, 0, len(bp)+len(ap))
	for tp := range bp {
		order = append(order, tp)
	}
	for tp := range ap {
		if _, ok := bp[tp]; !ok {
			order = append(order, tp)
		}
	}
	slices.SortFunc(order, cmpTP)
	for _, tp := range order {
		from, inB := bp[tp]
		to, inA := ap[tp]
		switch {
		case inB && inA:
			d.Common++
			if from != to {
				d.Moves = append(d.Moves, PartitionMove{Partition: tp, From: from, To: to})
			}
		case inB:
			d.Removed = append(d.Removed, PartitionPlacement{Partition: tp, Subtask: from})
		default:
			d.Added = append(d.Added, PartitionPlacement{Partition: tp, Subtask: to})
		}
	}
	d.Moved = len(d.Moves)
	if d.Common > 0 {
		d.MovedFraction = float64(d.Moved) / float64(d.Common)
	}
	return d
}

// isDense reports whether a has a dense form: topics with one owner per
// partition.
func (a Assignment) isDense() bool {
	return len(a.Topics) > 0 && len(a.Owners) == totalPartitions(a.Topics)
}

// denseRescale is SourceRescale for two dense assignments of the same topics:
// every partition is common, and the owners are compared by global index.
// ok is false when before's Subtasks do not agree with its Owners.
func denseRescale(before, after Assignment) (d SourceRescaleDiff, ok bool) {
	order, ok := denseTopicOrder(before)
	if !ok {
		return d, false
	}
	d = SourceRescaleDiff{FromParallelism: before.Parallelism, ToParallelism: after.Parallelism}
	topics := before.Topics
	offsets := make([]int, len(topics))
	off := 0
	for t, x := range topics {
		offsets[t] = off
		off += x.Partitions
	}
	d.Common = off
	bo, ao := before.Owners, after.Owners[:len(before.Owners)]
	for i, o := range bo {
		if ao[i] != o {
			d.Moved++
		}
	}
	if d.Moved > 0 {
		d.Moves = make([]PartitionMove, 0, d.Moved)
		for _, t := range order {
			name, off := topics[t].Name, offsets[t]
			for q, o := range bo[off : off+topics[t].Partitions] {
				if n := ao[off+q]; n != o {
					d.Moves = append(d.Moves, PartitionMove{Partition: TopicPartition{Topic: name, Partition: int32(q)}, From: int(o), To: int(n)})
				}
			}
		}
	}
	if d.Common > 0 {
		d.MovedFraction = float64(d.Moved) / float64(d.Common)
	}
	return d, true
}

// denseTopicOrder returns the indexes of a.Topics in SourceRescale's output
// order: first appearance in a's subtask lists, or name order when a has no
// Subtasks. A topic first appears in the list of the lowest subtask that
// owns one of its partitions, at the position of its first partition there;
// ok is false when that list does not hold one (Subtasks and Owners
// disagree).
func denseTopicOrder(a Assignment) (order []int, ok bool) {
	topics := a.Topics
	order = make([]int, len(topics))
	for t := range order {
		order[t] = t
	}
	if len(a.Subtasks) == 0 {
		slices.SortFunc(order, func(x, y int) int { return strings.Compare(topics[x].Name, topics[y].Name) })
		return order, true
	}
	first := make([]int, len(topics)) // lowest owning subtask
	pos := make([]int, len(topics))   // position of the topic's first partition in that list
	off := 0
	for t, x := range topics {
		low := a.Owners[off]
		for _, o := range a.Owners[off : off+x.Partitions] {
			low = min(low, o)
		}
		off += x.Partitions
		if low < 0 || int(low) >= len(a.Subtasks) {
			return nil, false
		}
		first[t] = int(low)
		pos[t] = slices.IndexFunc(a.Subtasks[low], func(tp TopicPartition) bool { return tp.Topic == x.Name })
		if pos[t] < 0 {
			return nil, false
		}
	}
	slices.SortFunc(order, func(x, y int) int { return cmp.Or(cmp.Compare(first[x], first[y]), cmp.Compare(pos[x], pos[y])) })
	return order, true
}

// placements maps each partition of a to its subtask and records topics in
// order of first appearance in topicOrder.
func placements(a Assignment, topicOrder map[string]int) map[TopicPartition]int {
	see := func(topic string) {
		if _, ok := topicOrder[topic]; !ok {
			topicOrder[topic] = len(topicOrder)
		}
	}
	if len(a.Subtasks) == 0 {
		m := make(map[TopicPartition]int, len(a.Owners))
		tps := make([]TopicPartition, 0, len(a.Owners))
		for tp, s := range a.All() {
			m[tp] = s
			tps = append(tps, tp)
		}
		slices.SortFunc(tps, func(x, y TopicPartition) int {
			if lessTP(x, y) {
				return -1
			}
			if lessTP(y, x) {
				return 1
			}
			return 0
		})
		for _, tp := range tps {
			see(tp.Topic)
		}
		return m
	}
	n := 0
	for _, ps := range a.Subtasks {
		n += len(ps)
	}
	m := make(map[TopicPartition]int, n)
	for s, ps := range a.Subtasks {
		for _, tp := range ps {
			see(tp.Topic)
			m[tp] = s
		}
	}
	return m
}
