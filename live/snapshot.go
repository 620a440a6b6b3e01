package live

import (
	"maps"
	"slices"
	"sync/atomic"
)

// snapshot returns a copy of the store's state to build views from without
// the lock: a view of a large job (the restore model, every partition's
// lag) does not hold up the collectors' updates, and updates do not wait
// for pages.
//
// What the collectors published is immutable and shared: their snapshots,
// the per-poll partition indexes and observed owners, which updates
// replace rather than change, and so is the readers' status. What the
// store changes in place is copied:
// lineages, sparklines and the replacements it remembers. The offset→time
// tables are shared, being safe for concurrent use: a view built while a
// Kafka poll lands may date a position with that poll's sample too, which
// only makes the estimate newer. The copy has no subscribers and nothing
// writes to it, so it is built once per update (per Seq) and shared by
// every view until the next update: a thousand viewers of a page cost one
// copy a poll, not a thousand.
func (s *Store) snapshot() *Store {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if f := s.frozen.Load(); f != nil && f.seq == s.seq {
		return f
	}
	c := &Store{
		opts:     s.opts,
		views:    s.views,
		kafka:    maps.Clone(s.kafka),
		flink:    maps.Clone(s.flink),
		tables:   maps.Clone(s.tables),
		parts:    maps.Clone(s.parts),
		topicIdx: maps.Clone(s.topicIdx),
		topics:   maps.Clone(s.topics),
		owners:   maps.Clone(s.owners),
		good:     maps.Clone(s.good),
		seq:      s.seq,
		succ:     s.succ.clone(),
		runs:     maps.Clone(s.runs),
		withheld: maps.Clone(s.withheld),
		lineage:  make(map[vertexKey]*lineage, len(s.lineage)),
		sparks:   make(map[vertexKey]*spark, len(s.sparks)),
		// Each status map is replaced, not changed, by an update.
		srcStatus: maps.Clone(s.srcStatus),
		grpStatus: maps.Clone(s.grpStatus),
		started:   s.started,
	}
	for k, l := range s.lineage {
		c.lineage[k] = l.clone()
	}
	for k, sp := range s.sparks {
		// The rings themselves are replaced, not changed, by push and
		// trim; appending writes only past a view's length.
		c.sparks[k] = &spark{at: sp.at, lag: slices.Clone(sp.lag), rate: slices.Clone(sp.rate)}
	}
	s.frozen.Store(c)
	return c
}

// frozenCopy is the copy snapshot last built, with the Seq it was built at.
type frozenCopy = atomic.Pointer[Store]

// clone copies a lineage: its history, events and topics are changed in
// place as the source moves on.
func (l *lineage) clone() *lineage {
	c := *l
	c.history = slices.Clone(l.history)
	c.events = slices.Clone(l.events)
	c.topics = slices.Clone(l.topics)
	c.prevTopics = slices.Clone(l.prevTopics)
	return &c
}

// clone copies the remembered replacements, whose records are updated in
// place.
func (sc *succession) clone() *succession {
	c := &succession{byOld: make(map[succKey]*replaced, len(sc.byOld)), order: slices.Clone(sc.order), seq: sc.seq, max: sc.max}
	for k, r := range sc.byOld {
		rc := *r
		rc.vertices = slices.Clone(r.vertices)
		c.byOld[k] = &rc
	}
	return c
}
