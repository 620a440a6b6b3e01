package live

import "github.com/skewscope/skewscope/collectors/kafka"

// topicIndex is one topic of a Kafka snapshot with its partitions indexed
// by partition number: what the cluster's parts map and the store's time
// tables hold for the topic, found without hashing the topic name once per
// partition. It is built by each Kafka update and never changed after.
type topicIndex struct {
	// parts[p] is partition p as the parts map holds it (the last listing
	// of p wins), has[p] whether the snapshot lists p at all.
	parts []kafka.Partition
	has   []bool
	// tables[p] is partition p's offset→time table, nil when none.
	tables []*kafka.TimeTable
	// gen names the Kafka update that made the index, and with it the
	// state of the time tables, which change only with such an update:
	// the number the update is published under (picture.seq), so no two
	// indexes share one. Readers' evaluations (lagEval) record it.
	gen uint64
}

// part returns partition p of the topic as the cluster's parts map would,
// nil when the snapshot does not list it. It must not be changed.
func (ti *topicIndex) part(p int32) *kafka.Partition {
	if ti == nil || p < 0 || int(p) >= len(ti.has) || !ti.has[p] {
		return nil
	}
	return &ti.parts[p]
}

// table returns partition p's offset→time table, nil when it has none.
func (ti *topicIndex) table(p int32) *kafka.TimeTable {
	if ti == nil || p < 0 || int(p) >= len(ti.tables) {
		return nil
	}
	return ti.tables[p]
}

// indexTopics indexes snap's topics by name and partition number, after
// the parts map and the time tables took snap in. A topic whose partition
// numbers are negative or far sparser than its listing (an answer no
// broker gives) is left out: views find its partitions in the maps.
func (s *Store) indexTopics(snap *kafka.Snapshot) map[string]*topicIndex {
	size := map[string]int{}
	listed := map[string]int{}
	sparse := map[string]bool{}
	for _, t := range snap.Topics {
		for _, p := range t.Partitions {
			if p.Partition < 0 {
				sparse[t.Name] = true
				continue
			}
			size[t.Name] = max(size[t.Name], int(p.Partition)+1)
		}
		listed[t.Name] += len(t.Partitions)
	}
	out := make(map[string]*topicIndex, len(size))
	for name, n := range size {
		if sparse[name] || n > 2*listed[name]+64 {
			continue
		}
		out[name] = &topicIndex{parts: make([]kafka.Partition, n), has: make([]bool, n), tables: make([]*kafka.TimeTable, n), gen: s.seq + 1}
	}
	for _, t := range snap.Topics {
		ti := out[t.Name]
		if ti == nil {
			continue
		}
		for _, p := range t.Partitions {
			ti.parts[p.Partition], ti.has[p.Partition] = p, true
		}
	}
	for name, ti := range out {
		for p, ok := range ti.has {
			if ok {
				ti.tables[p] = s.tables[tpKey{snap.Cluster, name, int32(p)}]
			}
		}
	}
	return out
}

// partSet is a set of partition numbers of one topic: a bit per number
// for the usual small ones, a map for any other.
type partSet struct {
	dense []bool
	other map[int32]bool
}

// denseParts bounds the partition numbers a partSet keeps densely.
const denseParts = 1 << 16

func (ps *partSet) add(p int32) {
	if p >= 0 && p < denseParts {
		if int(p) >= len(ps.dense) {
			ps.dense = append(ps.dense, make([]bool, int(p)+1-len(ps.dense))...)
		}
		ps.dense[p] = true
		return
	}
	if ps.other == nil {
		ps.other = map[int32]bool{}
	}
	ps.other[p] = true
}

func (ps *partSet) has(p int32) bool {
	if ps == nil {
		return false
	}
	if p >= 0 && p < denseParts {
		return int(p) < len(ps.dense) && ps.dense[p]
	}
	return ps.other[p]
}
