package flink

import (
	"fmt"
	"testing"
)

// grow adds partitions up to n, discovered by the running readers (the
// model's rule, p mod parallelism) and registered at −1.
func (m *sourceModel) grow(n int32) {
	for p := m.partitions; p < n; p++ {
		m.readers[int(p)%len(m.readers)][p] = &readerOffsets{current: -1, committed: -1, registered: true}
	}
	m.partitions = n
}

// flow lets every partition's reader emit step more records.
func (m *sourceModel) flow(step int64) {
	for _, r := range m.readers {
		for _, o := range r {
			o.current = max(o.current, o.next-1) + step
			o.next = o.current + 1
		}
	}
}

// pollIDs is poll with the Kafka offset entries limited to those whose
// currentOffset id is in ids: the Collector reads a source's id list only
// when it can have changed (idcache.go), so a poll can use an older list.
func (m *sourceModel) pollIDs(ids []string) (int, map[int]subtaskPoll, *KafkaSourceObservation) {
	n, subs, o := m.poll()
	keep := map[string]bool{}
	for _, id := range ids {
		keep[id] = true
	}
	var states []KafkaPartitionState
	for _, s := range o.States {
		if keep[s.CurrentID] {
			states = append(states, s)
		}
	}
	o.States = states
	return n, subs, o
}

// TestRescaleWithTrafficSettles: partitions grown 10 → 13 at p = 5, an
// in-place rescale 5 → 2, growth 13 → 16 at p = 2 read with an id list
// from before it (the old readers' ids for 13–15 go unlisted), then an
// in-place rescale 2 → 7 with records flowing, the JobManager fetching
// every second poll. The id list read after the rescale lists the old
// readers' ids of 13 and 15 for the first time, frozen: an earlier
// attempt's, though the baseline lacks them. Every owner must be right
// and certain within 3 polls of the first that shows the new attempts'
// values, whether that list is read on the restart's first poll or one
// later.
func TestRescaleWithTrafficSettles(t *testing.T) {
	for _, listLag := range []int{0, 1} {
		t.Run(fmt.Sprintf("list read %d polls after the restart", listLag), func(t *testing.T) {
			m := newSourceModel(t, "events", 10)
			var tr kafkaTracker
			var ids []string
			poll := func(relist bool) *KafkaSourceObservation {
				if relist {
					ids = m.ids()
				}
				n, subs, o := m.pollIDs(ids)
				tr.observe(n, subs, o)
				return o
			}
			running(5, 100)(m)
			poll(true)
			m.grow(13)
			m.flow(10)
			m.checkpoint()
			refreshed(m)
			poll(true)
			m.start(2)
			poll(true)
			for range 3 {
				m.flow(10)
				refreshed(m)
				poll(true)
			}
			m.grow(16)
			m.flow(10)
			m.checkpoint()
			refreshed(m)
			poll(false) // the list from before the growth
			m.start(7)
			shown := -1 // the poll that first shows the new attempts' values
			for i := range 8 {
				m.flow(10)
				m.tick(5_000)
				if i%2 == 1 {
					m.fetch()
					if shown < 0 {
						shown = i
					}
				}
				o := poll(i >= listLag)
				if shown >= 0 && i >= shown+2 {
					if got, want := owners(o), m.expected(); got != want {
						t.Errorf("poll %d after the restart (%d with the new values): owners %s\nwant %s\nstates %s", i, i-shown+1, got, want, evidenceList(o))
					}
				}
			}
		})
	}
}
