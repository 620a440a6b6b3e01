package live

import (
	"iter"

	"github.com/skewscope/skewscope/assign"
)

// partIndex holds one value per partition of a few topics: per topic a
// slice indexed by partition number, none where a partition has no value.
// A page looks up every cell in it (ten thousand on a large source), and
// an index into an array costs a fraction of hashing each (topic,
// partition) pair. It remembers the topic of the last lookup, as cells
// come grouped by topic, so it is not safe for concurrent use; a view
// builds its own.
type partIndex[T comparable] struct {
	rows map[string][]T
	none T
	last string
	row  []T
}

// newPartIndex returns an index with a row of none for each of topics.
func newPartIndex[T comparable](topics []assign.Topic, none T) *partIndex[T] {
	x := &partIndex[T]{rows: make(map[string][]T, len(topics)), none: none}
	for _, t := range topics {
		x.rows[t.Name] = x.fill(make([]T, max(t.Partitions, 0)), 0)
	}
	return x
}

func (x *partIndex[T]) fill(row []T, from int) []T {
	for i := from; i < len(row); i++ {
		row[i] = x.none
	}
	return row
}

// set gives topic's partition p the value v; a partition beyond its row
// (of a topic the index was not made for) grows the row by doubling.
func (x *partIndex[T]) set(topic string, p int32, v T) {
	if p < 0 {
		return
	}
	row := x.rows[topic]
	if int(p) >= len(row) {
		grown := make([]T, max(int(p)+1, 2*len(row)))
		copy(grown, row)
		row = x.fill(grown, len(row))
		x.rows[topic] = row
		x.last, x.row = "", nil
	}
	row[p] = v
}

// get returns topic's partition p's value; ok is false when it has none
// (and always for a nil index).
func (x *partIndex[T]) get(topic string, p int32) (v T, ok bool) {
	if x == nil {
		return v, false
	}
	if topic != x.last || x.row == nil {
		x.last, x.row = topic, x.rows[topic]
	}
	if p < 0 || int(p) >= len(x.row) || x.row[p] == x.none {
		return x.none, false
	}
	return x.row[p], true
}

// all yields every partition that has a value, with it.
func (x *partIndex[T]) all() iter.Seq2[assign.TopicPartition, T] {
	return func(yield func(assign.TopicPartition, T) bool) {
		if x == nil {
			return
		}
		for t, row := range x.rows {
			for p, v := range row {
				if v != x.none && !yield(assign.TopicPartition{Topic: t, Partition: int32(p)}, v) {
					return
				}
			}
		}
	}
}

// ownerIndex is the subtask a model puts each partition on.
type ownerIndex = partIndex[int]

// ownerIndexOf indexes an assignment's owners.
func ownerIndexOf(a assign.Assignment) *ownerIndex {
	x := newPartIndex[int](nil, -1)
	for st, tps := range a.Subtasks {
		for _, tp := range tps {
			x.set(tp.Topic, tp.Partition, st)
		}
	}
	return x
}
