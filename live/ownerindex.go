package live

import (
	"iter"

	"github.com/skewscope/skewscope/assign"
)

// ownerIndex is the subtask a model puts each partition on: per topic, a
// slice indexed by partition number, -1 where the model places none. A
// page judges every cell against it (ten thousand on a large source), and
// an index into an array costs a fraction of hashing each (topic,
// partition) pair. It remembers the topic of the last lookup, as cells
// come grouped by topic, so it is not safe for concurrent use; a view
// builds its own.
type ownerIndex struct {
	topics map[string][]int32
	last   string
	row    []int32
}

// ownerIndexOf indexes an assignment's owners.
func ownerIndexOf(a assign.Assignment) *ownerIndex {
	size := map[string]int32{}
	for _, tps := range a.Subtasks {
		for _, tp := range tps {
			if tp.Partition >= size[tp.Topic] {
				size[tp.Topic] = tp.Partition + 1
			}
		}
	}
	o := &ownerIndex{topics: make(map[string][]int32, len(size))}
	for t, n := range size {
		row := make([]int32, n)
		for i := range row {
			row[i] = -1
		}
		o.topics[t] = row
	}
	for st, tps := range a.Subtasks {
		for _, tp := range tps {
			if tp.Partition >= 0 {
				o.topics[tp.Topic][tp.Partition] = int32(st)
			}
		}
	}
	return o
}

// get returns the subtask the model puts topic's partition p on; ok is
// false when it places none (and always for a nil index).
func (o *ownerIndex) get(topic string, p int32) (subtask int, ok bool) {
	if o == nil {
		return 0, false
	}
	if topic != o.last || o.row == nil {
		o.last, o.row = topic, o.topics[topic]
	}
	if p < 0 || int(p) >= len(o.row) || o.row[p] < 0 {
		return 0, false
	}
	return int(o.row[p]), true
}

// all yields every placed partition with its subtask.
func (o *ownerIndex) all() iter.Seq2[assign.TopicPartition, int] {
	return func(yield func(assign.TopicPartition, int) bool) {
		if o == nil {
			return
		}
		for t, row := range o.topics {
			for p, st := range row {
				if st >= 0 && !yield(assign.TopicPartition{Topic: t, Partition: int32(p)}, int(st)) {
					return
				}
			}
		}
	}
}
