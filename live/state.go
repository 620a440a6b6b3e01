package live

import (
	"maps"
	"slices"
	"sync"
)

// State is one immutable picture of what the store knows, published after
// every update: the collectors' snapshots, the observed owners, the
// offset→time tables, the lineages, replacements, readers and sparklines as
// of that update. Every live view is a function of a State: it takes no
// lock and reads no store, a view of a large job (the restore model, every
// partition's lag) does not hold up the collectors, and a thousand viewers
// of a page read one State an update, not a thousand copies.
//
// What the collectors published is shared, being replaced rather than
// changed by updates: their snapshots, the per-poll partition indexes, the
// observed owners and the readers' status. What the store changes in place
// is copied when the State is published: lineages, sparkline ring headers
// and the replacements it remembers. The offset→time tables are the one
// shared part that moves on, being safe for concurrent use. A view rarely
// reads them: each reader's position was read against the tables of its
// State's Kafka update when that update was taken in (lagEval), and a view
// reads a table only for a position no such reading answers, when it may
// date the position with a later poll's sample too, which only makes the
// estimate newer.
type State struct {
	picture

	// facts are the figures /metrics exports, computed once, by the
	// first scrape that reads this State.
	facts     sync.Once
	factsOnce MetricFacts
}

// publish makes the store's current picture the published State. Called
// with s.mu held (or before the store is shared).
func (s *Store) publish() {
	c := &State{picture: picture{
		opts:     s.opts,
		views:    s.views,
		kafka:    maps.Clone(s.kafka),
		flink:    maps.Clone(s.flink),
		tables:   s.tables, // shared: the store copies it before it adds a table
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
		et:        &etCache{jobs: map[vertexKey]*jobEventTime{}},
		// Jobs come and go a few at a time: the copies are small.
		jobSeq:     maps.Clone(s.jobSeq),
		clusterSeq: maps.Clone(s.clusterSeq),
	}}
	s.tablesShared = true
	for k, l := range s.lineage {
		c.lineage[k] = l.clone()
	}
	for k, sp := range s.sparks {
		// The rings themselves are replaced, not changed, by push and
		// trim; appending writes only past a view's length.
		c.sparks[k] = &spark{at: sp.at, p: sp.p, lag: slices.Clone(sp.lag), rate: slices.Clone(sp.rate), wm: slices.Clone(sp.wm)}
	}
	s.state.Store(c)
}

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

// Seq is the number of the update this State was published after.
func (s *State) Seq() uint64 { return s.seq }

// JobSeq is the number of the last update that could change the pages of
// the job (its job page and its vertex pages): a Flink poll of its
// endpoint, a Kafka poll of a cluster it may read, an inferred history. A
// page built at an earlier State with the same JobSeq shows the same
// figures, but for the ages and what follows from them; 0 for a job no
// update named.
func (s *State) JobSeq(jobID string) uint64 { return s.jobSeq[jobID] }

// ClusterSeq is JobSeq for a Kafka cluster's topic pages: the last update
// of the cluster.
func (s *State) ClusterSeq(cluster string) uint64 { return s.clusterSeq[cluster] }
