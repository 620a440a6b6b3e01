// Package live joins what the Kafka and Flink collectors see into the views
// of skewscope's live pages: the overview, a job, a vertex (a Kafka source
// or a keyed operator) and a topic. Collectors hand their snapshots to a
// [Store]; pages and the JSON API read views from it; viewers never cause a
// backend request.
//
// A source vertex's observed assignment comes from its KafkaSourceReader
// offset metric ids; the prediction from assign (the fresh-start owner, or
// the restore model when skewscope saw the job's earlier parallelism). Lag
// is the partition's end offset minus Flink's currentOffset + 1; lag in
// seconds is estimated with a per-partition offset→time table fed by every
// Kafka poll (see kafka.TimeTable for the method and its limits).
package live

import (
	"iter"
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
)

// Link names the consumer group a source vertex commits to, from
// configuration, when it should not be discovered from commits.
type Link struct {
	Endpoint string // Flink endpoint name; "" matches any
	Job      string // job name
	Vertex   string // vertex name; "" matches every source of the job
	Group    string
}

// Options configure a Store.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// EndpointKafka maps a Flink endpoint name to the Kafka cluster its jobs
	// read (flink.Config.Kafka). Unmapped endpoints use the only cluster, or
	// the one whose topics match the metric ids.
	EndpointKafka map[string]string
	// Links name source groups from configuration.
	Links []Link
	// SparkWindow is how far back sparklines reach: a sample older than
	// the newest by more than this is dropped; default 15 minutes.
	// SparkPoints caps the samples kept per subtask whatever the poll
	// interval; default 360 (a 2.5 s poll fills 15 minutes). So a subtask
	// holds at most SparkPoints lag and rate samples (16 bytes each: 5.6
	// KiB at the default) and its vertex as many sample times (8 bytes).
	SparkWindow time.Duration
	SparkPoints int
	// TimeTableSize is the offset→time samples per partition; default 120.
	TimeTableSize int
	// OnUnlisted, when set, is told of each running Kafka source vertex
	// whose topics have partitions in the Kafka metadata that none of its
	// metric ids names (a partition the source may have discovered since
	// its collector last read the ids: flink.Collector.HintMetricIDs). It
	// is called after every update that finds one, without the store's
	// lock held.
	OnUnlisted func(endpoint, jobID, vertexID string)
	// OnUnknownPartitions, when set, is told of each Kafka cluster whose
	// metadata lacks a partition (or a topic) that a running source's
	// metric ids name: the topic may have grown since the metadata was
	// read (kafka.Collector.HintMetadata). Called like OnUnlisted.
	OnUnknownPartitions func(cluster string)
	// OnFollow, when set, is told of each Kafka cluster the topics that
	// running Kafka sources read from it, whenever that set changes (nil
	// when none does): the topics whose partitions are worth reading on
	// every poll (kafka.Collector.Follow). Called like OnUnlisted.
	OnFollow func(cluster string, topics []string)
	// Kafka and Flink name the configured backends, so that the overview
	// lists each from the start: "not yet polled" until its first poll
	// ends. A backend that hands in a snapshot is listed either way.
	Kafka []string
	Flink []Endpoint
}

// Endpoint is a configured Flink REST endpoint: its name and base URL
// (without credentials).
type Endpoint struct{ Name, URL string }

type tpKey struct {
	cluster, topic string
	partition      int32
}

type vertexKey struct{ endpoint, job, vertex string }

// backendKey is a Kafka cluster ("kafka", name) or a Flink endpoint
// ("flink", name).
type backendKey struct{ kind, name string }

// spark is a vertex's sparkline samples: at holds each sample's time (Unix
// seconds, oldest first), shared by its subtasks, and lag and rate a ring
// per subtask aligned with it. Each ring is replaced, not changed, when it
// drops samples.
type spark struct {
	at []float64
	// p is the parallelism the rings are of; lag and rate are a Kafka
	// source's (nil otherwise), wm each subtask's event-time lag in
	// seconds (-1 unknown) while the job reports watermarks (nil
	// otherwise).
	p             int
	lag, rate, wm [][]float64
}

// picture is what the live views read: the collectors' latest snapshots
// and what the store derived from them. The [Store] holds the one it
// changes; each [State] holds a copy that nothing changes.
type picture struct {
	opts Options

	kafka   map[string]*kafka.Snapshot
	flink   map[string]*flink.Snapshot
	tables  map[tpKey]*kafka.TimeTable
	lineage map[vertexKey]*lineage // endpoint, job name, vertex name
	sparks  map[vertexKey]*spark   // endpoint, job id, vertex id
	// parts indexes each cluster's partitions and topics maps the topic
	// names in metric ids to each cluster's topics; owners holds each Kafka
	// source vertex's observed owners (endpoint, job id, vertex id). All are
	// derived once per snapshot, not per view.
	parts  map[string]map[topicPart]kafka.Partition
	topics map[string]map[string]string
	// topicIdx is parts and tables again, by cluster and topic, indexed by
	// partition number: a view of many partitions finds each partition's
	// figures without hashing its topic name (topicIndex).
	topicIdx map[string]map[string]*topicIndex
	owners   map[vertexKey]observedOwners
	// seq counts the updates.
	seq uint64
	// views counts the page views built from the store's states.
	views *viewCounter
	// good holds, per backend, when its latest successful poll started:
	// the time of the data it shows (absent: no poll ever succeeded).
	good map[backendKey]time.Time
	// succ remembers which job replaced which (succession.go).
	succ *succession
	// runs holds what Flink last reported of each job while it ran
	// (lastrun.go), each replaced, not changed, by an update.
	runs map[succKey]*lastRun
	// withheld holds the sources (endpoint, job id, vertex id) whose
	// reader metrics Flink withheld (withheld.go), rebuilt by each update.
	withheld map[vertexKey]withheldNote
	// srcStatus and grpStatus are what views read of the readers'
	// tracks (readers.go), a source by name (endpoint, job name, vertex
	// name) and a group: replaced, not changed, by each update.
	srcStatus map[vertexKey]sourceStatus
	grpStatus map[groupKey]map[topicPart]readStatus
	// et holds the jobs' event time, found once per State (eventtime.go);
	// nil in a picture that is not published.
	et *etCache
	// started is when the store was made: what it counts, it counts from
	// then on.
	started time.Time
	// jobSeq holds, per job id, the last update that touched the job's
	// pages (JobSeq), and clusterSeq per Kafka cluster the last update
	// that touched its topic pages (ClusterSeq).
	jobSeq, clusterSeq map[string]uint64
}

// Store is the live path's only writer: the collectors hand it their
// snapshots, it follows what only history shows (readers, lineages,
// replacements, sparklines) and after every update publishes a new
// [State] for the views to read. It is safe for concurrent use.
//
// Its exported methods take mu; every unexported method of Store is
// called with mu held, and a method of picture reads only the picture it
// is called on (the store's, under mu, or a State's).
type Store struct {
	mu sync.Mutex
	picture

	// state is the State published after the latest update.
	state atomic.Pointer[State]
	// updating counts the updates handed in and not yet published
	// (Updating).
	updating atomic.Int32
	// tablesShared is set while the published State holds the tables map
	// itself: a partition's new table copies it first. A table is added
	// once per partition, and an update clones no map of every partition.
	tablesShared bool
	// seen holds the partitions each Kafka source vertex (endpoint, job
	// id, vertex id) has listed in its metric ids so far: after a
	// scale-down Flink drops the old subtasks' ids before the new readers
	// list theirs, and such a partition must not vanish from the page.
	seen map[vertexKey]map[flink.KafkaPartition]bool
	// followed is, per Kafka cluster, the topic set last told OnFollow.
	followed map[string][]string
	// shapes holds each running job's vertex parallelisms as of its latest
	// poll with every vertex running (lineage.go), to tell a restart for a
	// rescale elsewhere in the job from a failover.
	shapes map[succKey]*jobShape
	// srcReads and grpReads track each reader of each partition, a
	// source by name (endpoint, job name, vertex name) and a group
	// (readers.go); srcStatus and grpStatus are what views read of them.
	srcReads map[vertexKey]*sourceReads
	grpReads map[groupKey]map[topicPart]*readTrack
	// firstPoll holds when each Flink endpoint's first poll handed in was
	// collected, and listedIDs the endpoints a poll of which listed a
	// KafkaSourceReader id (withheld.go: a JobManager fetches metrics only
	// once asked, so its first answers can list none).
	firstPoll map[string]time.Time
	listedIDs map[string]bool

	changed chan struct{}
}

// New returns an empty Store.
func New(opts Options) *Store {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.SparkWindow <= 0 {
		opts.SparkWindow = 15 * time.Minute
	}
	if opts.SparkPoints <= 0 {
		opts.SparkPoints = 360
	}
	if opts.TimeTableSize <= 0 {
		opts.TimeTableSize = 120
	}
	s := &Store{
		picture: picture{
			opts:       opts,
			kafka:      map[string]*kafka.Snapshot{},
			flink:      map[string]*flink.Snapshot{},
			tables:     map[tpKey]*kafka.TimeTable{},
			lineage:    map[vertexKey]*lineage{},
			sparks:     map[vertexKey]*spark{},
			parts:      map[string]map[topicPart]kafka.Partition{},
			topicIdx:   map[string]map[string]*topicIndex{},
			topics:     map[string]map[string]string{},
			owners:     map[vertexKey]observedOwners{},
			good:       map[backendKey]time.Time{},
			succ:       newSuccession(MaxReplacements),
			runs:       map[succKey]*lastRun{},
			withheld:   map[vertexKey]withheldNote{},
			views:      new(viewCounter),
			srcStatus:  map[vertexKey]sourceStatus{},
			grpStatus:  map[groupKey]map[topicPart]readStatus{},
			started:    opts.Now(),
			jobSeq:     map[string]uint64{},
			clusterSeq: map[string]uint64{},
		},
		seen:      map[vertexKey]map[flink.KafkaPartition]bool{},
		shapes:    map[succKey]*jobShape{},
		changed:   make(chan struct{}, 1),
		srcReads:  map[vertexKey]*sourceReads{},
		grpReads:  map[groupKey]map[topicPart]*readTrack{},
		firstPoll: map[string]time.Time{},
		listedIDs: map[string]bool{},
	}
	s.publish()
	return s
}

// Changed is signalled (coalesced) after every update.
func (s *Store) Changed() <-chan struct{} { return s.changed }

// Updating reports whether an update was handed in and is not published
// yet: a publisher about to build pages can wait for it (Changed tells
// when it is), as the collectors hand in their polls moments apart.
func (s *Store) Updating() bool { return s.updating.Load() > 0 }

// State returns the State published after the latest update: what every
// view of it reads, unchanged by later updates.
func (s *Store) State() *State { return s.state.Load() }

// Seq counts the updates so far.
func (s *Store) Seq() uint64 { return s.State().seq }

func (s *Store) notify() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// UpdateKafka stores a Kafka snapshot and feeds the offset→time tables.
func (s *Store) UpdateKafka(snap *kafka.Snapshot) {
	if snap == nil {
		return
	}
	s.updating.Add(1)
	snap = sanitizeKafka(snap)
	s.mu.Lock()
	s.kafka[snap.Cluster] = snap
	if snap.Err == nil {
		s.good[backendKey{"kafka", snap.Cluster}] = snap.CollectedAt
	}
	n := 0
	for _, t := range snap.Topics {
		n += len(t.Partitions)
	}
	parts := make(map[topicPart]kafka.Partition, n)
	for _, t := range snap.Topics {
		for _, p := range t.Partitions {
			parts[topicPart{t.Name, p.Partition}] = p
		}
	}
	s.parts[snap.Cluster] = parts
	s.topics[snap.Cluster] = idTopics(snap)
	for _, t := range snap.Topics {
		for _, p := range t.Partitions {
			if p.Stale || p.Err != nil {
				continue
			}
			k := tpKey{snap.Cluster, t.Name, p.Partition}
			tt := s.tables[k]
			if tt == nil {
				if s.tablesShared {
					// The published State holds the map: copy on write.
					s.tables, s.tablesShared = maps.Clone(s.tables), false
				}
				tt = kafka.NewTimeTable(s.opts.TimeTableSize)
				s.tables[k] = tt
			}
			tt.Add(snap.CollectedAt, p.End)
		}
	}
	s.topicIdx[snap.Cluster] = s.indexTopics(snap)
	s.trackGroups(snap)
	s.remarkWithheld()
	s.confirmPartitions(snap)
	s.settleDiscoveries(snap.Cluster)
	s.trackSourceStarts(snap.Cluster, snap.CollectedAt)
	var unlisted []vertexKey
	if s.opts.OnUnlisted != nil {
		for _, endpoint := range sortedKeys(s.flink) {
			unlisted = append(unlisted, s.unlisted(endpoint)...)
		}
	}
	var unknown []string
	if s.opts.OnUnknownPartitions != nil && len(s.unknownIn(snap.Cluster)) > 0 {
		unknown = []string{snap.Cluster}
	}
	follow := s.followChanges()
	s.seq++
	s.touchCluster(snap.Cluster)
	s.publish()
	s.mu.Unlock()
	s.updating.Add(-1)
	s.notify()
	s.tellUnlisted(unlisted)
	s.tellUnknown(unknown)
	s.tellFollow(follow)
}

// touchCluster marks the pages a Kafka update of cluster can change: its
// topic pages and every job with a source vertex, which may read it
// (clusterFor) or, listing no reader id yet, be shown from its groups.
func (s *Store) touchCluster(cluster string) {
	s.clusterSeq[cluster] = s.seq
	for _, fs := range s.flink {
		for i := range fs.Jobs {
			j := &fs.Jobs[i]
			for k := range j.Vertices {
				if v := &j.Vertices[k]; v.Source || v.Kafka != nil {
					s.jobSeq[j.ID] = s.seq
					break
				}
			}
		}
	}
}

// touchJobs marks the pages of every job a Flink update of endpoint lists
// now or listed before it: a job that went away shows that too.
func (s *Store) touchJobs(prev, now *flink.Snapshot) {
	for _, fs := range []*flink.Snapshot{prev, now} {
		if fs == nil {
			continue
		}
		for i := range fs.Jobs {
			s.jobSeq[fs.Jobs[i].ID] = s.seq
		}
	}
}

// followChanges returns the Kafka clusters whose followed topics (the
// topics running Kafka sources read from them) changed since OnFollow was
// last told, with the new sets.
func (s *Store) followChanges() map[string][]string {
	if s.opts.OnFollow == nil {
		return nil
	}
	now := map[string]map[string]bool{}
	for _, endpoint := range sortedKeys(s.flink) {
		for _, v := range runningSources(s.flink[endpoint]) {
			cluster := s.clusterFor(endpoint, v)
			if s.kafka[cluster] == nil {
				continue
			}
			if now[cluster] == nil {
				now[cluster] = map[string]bool{}
			}
			last := ""
			for _, st := range v.Kafka.States {
				// The states list a topic's partitions together: each
				// run is resolved once (an empty name is no topic).
				if st.Cluster == "" && st.Topic != last {
					now[cluster][s.resolve(cluster, st.Topic)] = true
					last = st.Topic
				}
			}
		}
	}
	var out map[string][]string
	for cluster := range s.kafka {
		var names []string
		if len(now[cluster]) > 0 {
			names = sortedKeys(now[cluster])
		}
		if slices.Equal(names, s.followed[cluster]) {
			continue
		}
		if s.followed == nil {
			s.followed = map[string][]string{}
		}
		s.followed[cluster] = names
		if out == nil {
			out = map[string][]string{}
		}
		out[cluster] = names
	}
	return out
}

// runningSources yields the Kafka source vertices (those with reader
// metrics) of snap's running jobs, each with its job; none for a nil snap.
func runningSources(snap *flink.Snapshot) iter.Seq2[*flink.JobSnapshot, *flink.VertexSnapshot] {
	return func(yield func(*flink.JobSnapshot, *flink.VertexSnapshot) bool) {
		if snap == nil {
			return
		}
		for i := range snap.Jobs {
			j := &snap.Jobs[i]
			if !j.State.Running() {
				continue
			}
			for k := range j.Vertices {
				if v := &j.Vertices[k]; v.Kafka != nil && !yield(j, v) {
					return
				}
			}
		}
	}
}

func (s *Store) tellFollow(follow map[string][]string) {
	for _, cluster := range sortedKeys(follow) {
		s.opts.OnFollow(cluster, follow[cluster])
	}
}

// remarkWithheld looks again, after a Kafka poll, at the stored Flink
// snapshots with a running source that lists no reader id: the Kafka
// metadata can name its topics (a linked group's commits) that the Flink
// poll, handed in first, could not know, and its page then shows the
// prediction without waiting for the next Flink poll.
func (s *Store) remarkWithheld() {
	for _, endpoint := range sortedKeys(s.flink) {
		fs := s.flink[endpoint]
		if !hasIDlessSource(fs) {
			continue
		}
		m := s.markWithheld(fs)
		if m == fs {
			continue
		}
		s.flink[endpoint] = m
		for i := range m.Jobs {
			j := &m.Jobs[i]
			for k := range j.Vertices {
				if v := &j.Vertices[k]; v.Kafka != nil && len(v.Kafka.States) == 0 {
					key := vertexKey{endpoint, j.ID, v.ID}
					s.owners[key] = ownersOf(v.Kafka, s.seen[key])
				}
			}
		}
	}
}

// hasIDlessSource reports whether a snapshot has a running source vertex
// that lists no KafkaSourceReader id.
func hasIDlessSource(fs *flink.Snapshot) bool {
	for _, j := range fs.Jobs {
		if !j.State.Running() {
			continue
		}
		for _, v := range j.Vertices {
			if v.Source && !v.Stale && (v.Kafka == nil || len(v.Kafka.States) == 0) {
				return true
			}
		}
	}
	return false
}

// unlisted returns the running Kafka source vertices of endpoint whose
// topics, by the Kafka metadata, have partitions that none of their
// metric ids names.
func (s *picture) unlisted(endpoint string) []vertexKey {
	snap := s.flink[endpoint]
	if snap == nil {
		return nil
	}
	var out []vertexKey
	for j, v := range runningSources(snap) {
		if v.Stale || len(v.Kafka.States) == 0 {
			continue
		}
		cluster := s.clusterFor(endpoint, v)
		named := map[assign.TopicPartition]bool{}
		for _, st := range v.Kafka.States {
			named[assign.TopicPartition{Topic: s.resolve(cluster, st.Topic), Partition: st.Partition}] = true
		}
		found := false
		for _, t := range s.observedTopics(cluster, v) {
			for p := range t.Partitions {
				if !named[assign.TopicPartition{Topic: t.Name, Partition: int32(p)}] {
					found = true
					break
				}
			}
			if found {
				break
			}
		}
		if found {
			out = append(out, vertexKey{endpoint, j.ID, v.ID})
		}
	}
	return out
}

// unknownIn returns the partitions that the metric ids of endpoint's
// running Kafka sources reading cluster name and the cluster's metadata
// does not have, for every endpoint.
func (s *picture) unknownIn(cluster string) []assign.TopicPartition {
	var out []assign.TopicPartition
	for _, endpoint := range sortedKeys(s.flink) {
		out = append(out, s.unknownPartitions(endpoint)[cluster]...)
	}
	return out
}

// unknownClusters lists the clusters whose metadata lacks partitions that
// endpoint's running sources name.
func (s *picture) unknownClusters(endpoint string) []string {
	return sortedKeys(s.unknownPartitions(endpoint))
}

// unknownPartitions returns, per Kafka cluster with metadata, the
// partitions the metric ids of endpoint's running Kafka sources name that
// the cluster's metadata does not have.
func (s *picture) unknownPartitions(endpoint string) map[string][]assign.TopicPartition {
	snap := s.flink[endpoint]
	if snap == nil {
		return nil
	}
	var out map[string][]assign.TopicPartition
	for _, v := range runningSources(snap) {
		if v.Stale {
			continue
		}
		cluster := s.clusterFor(endpoint, v)
		if s.kafka[cluster] == nil {
			continue // no metadata to refresh
		}
		for _, tp := range s.unknownOf(cluster, v) {
			if out == nil {
				out = map[string][]assign.TopicPartition{}
			}
			out[cluster] = append(out[cluster], tp)
		}
	}
	return out
}

// unknownOf returns the partitions v's metric ids name that cluster's
// metadata does not have (a topic it lacks, or a partition beyond its
// count), sorted and once each.
func (s *picture) unknownOf(cluster string, v *flink.VertexSnapshot) []assign.TopicPartition {
	seen := map[assign.TopicPartition]bool{}
	var out []assign.TopicPartition
	parts, idx := s.parts[cluster], s.topicIdx[cluster]
	idTopic, t, started := "", "", false
	var ti *topicIndex
	for _, st := range v.Kafka.States {
		if st.Cluster != "" {
			continue // DynamicKafkaSource: its clusters are not this one
		}
		if !started || st.Topic != idTopic {
			idTopic, t, started = st.Topic, s.resolve(cluster, st.Topic), true
			ti = idx[t]
		}
		if ti != nil {
			if ti.part(st.Partition) != nil {
				continue
			}
		} else if _, ok := parts[topicPart{t, st.Partition}]; ok {
			continue
		}
		tp := assign.TopicPartition{Topic: t, Partition: st.Partition}
		if !seen[tp] {
			seen[tp] = true
			out = append(out, tp)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Topic != out[j].Topic {
			return out[i].Topic < out[j].Topic
		}
		return out[i].Partition < out[j].Partition
	})
	return out
}

func (s *Store) tellUnknown(clusters []string) {
	for _, c := range clusters {
		s.opts.OnUnknownPartitions(c)
	}
}

func (s *Store) tellUnlisted(ks []vertexKey) {
	for _, k := range ks {
		s.opts.OnUnlisted(k.endpoint, k.job, k.vertex)
	}
}

// UpdateFlink stores a Flink snapshot, follows job lineages (restores at
// another parallelism) and appends sparkline samples.
func (s *Store) UpdateFlink(snap *flink.Snapshot) {
	if snap == nil {
		return
	}
	s.updating.Add(1)
	snap = shareTopicNames(sanitizeFlink(snap))
	s.mu.Lock()
	s.notePoll(snap)
	snap = s.keepLastRuns(snap)
	snap = s.markWithheld(snap)
	prev := s.flink[snap.Endpoint]
	s.flink[snap.Endpoint] = snap
	if snap.Err == nil {
		s.good[backendKey{"flink", snap.Endpoint}] = snap.CollectedAt
	}
	s.followSuccession(snap)
	for k := range s.owners {
		if k.endpoint == snap.Endpoint {
			delete(s.owners, k)
		}
	}
	// Sparklines of jobs the endpoint no longer lists go with them.
	listed := make(map[string]bool, len(snap.Jobs))
	for _, j := range snap.Jobs {
		listed[j.ID] = true
	}
	for k := range s.sparks {
		if k.endpoint == snap.Endpoint && !listed[k.job] {
			delete(s.sparks, k)
		}
	}
	for k := range s.seen {
		if k.endpoint == snap.Endpoint && !listed[k.job] {
			delete(s.seen, k)
		}
	}
	s.forgetSources(snap)
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		for k := range j.Vertices {
			if v := &j.Vertices[k]; v.Kafka != nil {
				key := vertexKey{snap.Endpoint, j.ID, v.ID}
				seen := s.seen[key]
				if seen == nil {
					seen = map[flink.KafkaPartition]bool{}
					s.seen[key] = seen
				}
				for _, st := range v.Kafka.States {
					seen[st.KafkaPartition] = true
				}
				for _, st := range v.Kafka.Unreported {
					seen[st.KafkaPartition] = true
				}
				s.owners[key] = ownersOf(v.Kafka, seen)
			}
		}
		if !j.State.Running() {
			continue
		}
		et := hasEventTime(j)
		for k := range j.Vertices {
			v := &j.Vertices[k]
			if v.Kafka == nil && !v.Stale {
				switch {
				case et && v.Parallelism > 0 && v.Parallelism <= maxParallelism:
					s.sample(snap, j, v, true)
				case !et:
					delete(s.sparks, vertexKey{snap.Endpoint, j.ID, v.ID}) // its rings were event time's
				}
			}
			// A source that lists no reader id yet (the JobManager fetches
			// metrics only once asked, and a new reader's ids a fetch after
			// it starts) is followed all the same: its next shape is a step
			// from this one, not a first sight.
			if (v.Kafka == nil && !v.Source) || v.Stale || v.Parallelism <= 0 || v.Parallelism > maxParallelism {
				continue
			}
			// A job changing shape passes through subtasks that are not
			// running; its lineage moves on once every subtask runs again.
			if allRunning(v) {
				s.followLineage(snap.Endpoint, j, v, snap.CollectedAt)
				s.settleDiscovery(snap.Endpoint, j, v)
			}
			if v.Kafka == nil {
				continue
			}
			s.sample(snap, j, v, et)
			s.trackSource(snap.Endpoint, j, v, snap.CollectedAt, true)
		}
	}
	s.recordShapes(snap)
	jobs := s.inferJobs(snap)
	var unlisted []vertexKey
	if s.opts.OnUnlisted != nil {
		unlisted = s.unlisted(snap.Endpoint)
	}
	var unknown []string
	if s.opts.OnUnknownPartitions != nil {
		unknown = s.unknownClusters(snap.Endpoint)
	}
	follow := s.followChanges()
	s.seq++
	s.touchJobs(prev, snap)
	s.publish()
	s.mu.Unlock()
	s.updating.Add(-1)
	s.notify()
	s.tellUnlisted(unlisted)
	s.tellUnknown(unknown)
	s.tellFollow(follow)
	if len(jobs) > 0 {
		s.runInfer(jobs)
	}
}

// notePoll remembers the endpoint's first poll and whether a poll of it
// listed any KafkaSourceReader id.
func (s *Store) notePoll(snap *flink.Snapshot) {
	if _, ok := s.firstPoll[snap.Endpoint]; !ok && !snap.CollectedAt.IsZero() {
		s.firstPoll[snap.Endpoint] = snap.CollectedAt
	}
	for _, j := range snap.Jobs {
		for _, v := range j.Vertices {
			if v.Kafka != nil && len(v.Kafka.States) > 0 && !v.Stale {
				s.listedIDs[snap.Endpoint] = true
				return
			}
		}
	}
}

// sample appends one sparkline point per subtask, at the snapshot's time,
// and drops the samples older than the window or beyond the cap: a Kafka
// source's lag and rate, and, with eventTime, every vertex's event-time
// lag. A new parallelism, or event time appearing, starts the rings over.
func (s *Store) sample(snap *flink.Snapshot, j *flink.JobSnapshot, v *flink.VertexSnapshot, eventTime bool) {
	key := vertexKey{snap.Endpoint, j.ID, v.ID}
	sp := s.sparks[key]
	if sp == nil || sp.p != v.Parallelism || (v.Kafka != nil) != (sp.lag != nil) || eventTime != (sp.wm != nil) {
		sp = &spark{p: v.Parallelism}
		if v.Kafka != nil {
			sp.lag, sp.rate = make([][]float64, v.Parallelism), make([][]float64, v.Parallelism)
		}
		if eventTime {
			sp.wm = make([][]float64, v.Parallelism)
		}
		s.sparks[key] = sp
	}
	lags := make([]float64, v.Parallelism)
	if v.Kafka != nil {
		cluster := s.clusterFor(snap.Endpoint, v)
		parts := s.parts[cluster]
		owner := s.owners[key].owner
		for _, st := range v.Kafka.States {
			if o, ok := owner[st.KafkaPartition]; !ok || o != st.Subtask || st.Subtask >= v.Parallelism || st.Subtask < 0 {
				continue
			}
			p, ok := parts[topicPart{s.resolve(cluster, st.Topic), st.Partition}]
			if ok && knownEnd(p) && st.CurrentOffset >= 0 {
				lags[st.Subtask] += float64(max(0, p.End-(st.CurrentOffset+1)))
			}
		}
	}
	at := snap.CollectedAt
	if at.IsZero() {
		at = s.opts.Now()
	}
	t := float64(at.UnixMilli()) / 1000
	if n := len(sp.at); n > 0 && t < sp.at[n-1] {
		t = sp.at[n-1] // a clock stepping back draws no loop
	}
	sp.at = append(sp.at, t)
	drop := max(0, len(sp.at)-s.opts.SparkPoints)
	for drop < len(sp.at)-1 && sp.at[drop] < t-s.opts.SparkWindow.Seconds() {
		drop++
	}
	sp.at = trim(sp.at, drop)
	for i := range v.Parallelism {
		if sp.lag != nil {
			rate := -1.0
			if i < len(v.Subtasks) && !isNaN(v.Subtasks[i].RecordsOutPerSecond) {
				rate = v.Subtasks[i].RecordsOutPerSecond
			}
			sp.lag[i] = push(sp.lag[i], lags[i], len(sp.at))
			sp.rate[i] = push(sp.rate[i], rate, len(sp.at))
		}
		if sp.wm != nil {
			// The lag at the poll, as the page showed it then; none yet and
			// unread are unknown.
			lag := -1.0
			if w := subtaskWatermark(v, i); flink.IsEventTime(w) {
				lag = max(0, lagOf(w, at)) // a clock behind Flink's is not a lag
			}
			sp.wm[i] = push(sp.wm[i], lag, len(sp.at))
		}
	}
}

// push appends v to ring and keeps its last n samples, in a new array when
// it drops any (views share the old one).
func push(ring []float64, v float64, n int) []float64 {
	return trim(append(ring, v), len(ring)+1-n)
}

// trim drops the first n samples of ring, copying the rest.
func trim(ring []float64, n int) []float64 {
	if n <= 0 {
		return ring
	}
	return append(ring[:0:0], ring[n:]...)
}

// observedOwners is what a source's metric ids say about its readers.
type observedOwners struct {
	// owner holds the partitions whose reader is determined.
	owner map[flink.KafkaPartition]int
	// candidates holds the others, with the subtasks that list them; nil
	// when the listing predates the latest restart (metrics not refreshed
	// since), so that any subtask may read it.
	candidates map[flink.KafkaPartition][]int
	// ambiguous counts the partitions listed under several subtasks.
	ambiguous int
	// byState says, per entry of the listing it was decided from
	// (KafkaSourceObservation.States), whether that entry is its
	// partition's determined reader (stateOwner) or a listing of an
	// undetermined partition (stateUndetermined): a view of ten thousand
	// partitions reads it instead of hashing each partition twice.
	byState []stateRole
}

// stateRole is what one entry of a source's listing is to its partition.
type stateRole uint8

const (
	stateOther        stateRole = iota // another subtask reads the partition
	stateOwner                         // the partition's determined reader
	stateUndetermined                  // the partition's reader is undetermined
)

// ownersOf decides a source's readers from its metric ids
// (flink.KafkaSourceObservation.Owners: only values the current attempts
// wrote decide). A partition of seen that no id within the parallelism
// lists now (Flink dropped the ids of subtasks a scale-down removed; the
// new reader has not listed it yet) is undetermined with no candidates.
func ownersOf(o *flink.KafkaSourceObservation, seen map[flink.KafkaPartition]bool) observedOwners {
	oo := observedOwners{owner: map[flink.KafkaPartition]int{}}
	listed := map[flink.KafkaPartition]int{}
	for _, st := range o.States {
		listed[st.KafkaPartition]++
	}
	for _, po := range o.Owners() {
		if listed[po.KafkaPartition] > 1 {
			oo.ambiguous++
		}
		switch {
		case po.Certain():
			oo.owner[po.KafkaPartition] = po.Owner
		default:
			if oo.candidates == nil {
				oo.candidates = map[flink.KafkaPartition][]int{}
			}
			switch po.Reason {
			case flink.ReasonAwaitingRefresh, flink.ReasonRegistering, flink.ReasonOutOfRange:
				oo.candidates[po.KafkaPartition] = nil
			default:
				oo.candidates[po.KafkaPartition] = po.Candidates
			}
		}
	}
	for kp := range seen {
		if _, ok := listed[kp]; !ok {
			if oo.candidates == nil {
				oo.candidates = map[flink.KafkaPartition][]int{}
			}
			oo.candidates[kp] = nil
		}
	}
	oo.byState = make([]stateRole, len(o.States))
	for i, st := range o.States {
		if _, ok := oo.candidates[st.KafkaPartition]; ok {
			oo.byState[i] = stateUndetermined
		} else if owner, ok := oo.owner[st.KafkaPartition]; ok && owner == st.Subtask {
			oo.byState[i] = stateOwner
		}
	}
	return oo
}

type topicPart struct {
	topic     string
	partition int32
}

// knownEnd reports whether a partition's end offset was ever read (a
// partition that failed on its first poll has none).
func knownEnd(p kafka.Partition) bool { return p.End >= 0 && !(p.Err != nil && p.UpdatedAt.IsZero()) }

// clusterFor picks the Kafka cluster of a Flink endpoint's vertex.
func (s *picture) clusterFor(endpoint string, v *flink.VertexSnapshot) string {
	if c, ok := s.opts.EndpointKafka[endpoint]; ok && c != "" {
		return c
	}
	if len(s.kafka) == 1 {
		for name := range s.kafka {
			return name
		}
	}
	best, bestN := "", 0
	names := make([]string, 0, len(s.kafka))
	for name := range s.kafka {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		n := 0
		if v.Kafka != nil {
			seen := map[string]bool{}
			for _, st := range v.Kafka.States {
				if _, ok := s.topics[name][st.Topic]; ok && !seen[st.Topic] {
					n++
				}
				seen[st.Topic] = true
			}
		}
		if n > bestN {
			best, bestN = name, n
		}
	}
	return best
}

// idTopics maps every name a metric id can give a cluster's topic to that
// topic: its own name, and its sanitised name when exactly one topic has it
// (flink.ResolveTopic's rule; "payments.v1" and "payments_v1" both existing
// makes "payments_v1" ambiguous, and it is left as it is).
func idTopics(ks *kafka.Snapshot) map[string]string {
	m := make(map[string]string, 2*len(ks.Topics))
	names := make([]string, len(ks.Topics))
	for i, t := range ks.Topics {
		names[i] = t.Name
	}
	for _, t := range ks.Topics {
		m[t.Name] = t.Name
	}
	for _, t := range ks.Topics {
		san := flink.SanitizeMetricName(t.Name)
		if _, exact := m[san]; exact {
			continue
		}
		if c := flink.ResolveTopic(san, names); len(c) == 1 {
			m[san] = c[0]
		}
	}
	return m
}

// resolve maps a topic name from a metric id to the cluster's topic, or
// returns it unchanged when the cluster has no such topic or the name is
// ambiguous.
func (s *picture) resolve(cluster, idTopic string) string {
	if t, ok := s.topics[cluster][idTopic]; ok {
		return t
	}
	return idTopic
}

// observedTopics returns the vertex's topics with partition counts: the
// cluster's metadata when known, else the highest partition seen in metric
// ids + 1. Sorted by name.
func (s *picture) observedTopics(cluster string, v *flink.VertexSnapshot) []assign.Topic {
	if v.Kafka == nil {
		return nil // no reader id listed: no topic known from them
	}
	counts := map[string]int{}
	// The states list a topic's partitions together: each run of one
	// topic is resolved and counted once.
	states := v.Kafka.States
	for i := 0; i < len(states); {
		hi, k := states[i].Partition, i+1
		for ; k < len(states) && states[k].Topic == states[i].Topic; k++ {
			hi = max(hi, states[k].Partition)
		}
		t := s.resolve(cluster, states[i].Topic)
		counts[t] = max(counts[t], int(hi)+1)
		i = k
	}
	return withMetadataCounts(s.kafka[cluster], counts)
}

// withMetadataCounts raises the partition counts of the topics in counts to
// the cluster's metadata and returns them sorted by name.
func withMetadataCounts(ks *kafka.Snapshot, counts map[string]int) []assign.Topic {
	if ks != nil {
		for _, t := range ks.Topics {
			if _, ok := counts[t.Name]; ok && len(t.Partitions) > 0 {
				counts[t.Name] = max(counts[t.Name], len(t.Partitions))
			}
		}
	}
	out := make([]assign.Topic, 0, len(counts))
	for name, n := range counts {
		out = append(out, assign.Topic{Name: name, Partitions: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// maxTopics merges two topic lists, keeping the larger partition count.
func maxTopics(a, b []assign.Topic) []assign.Topic {
	m := map[string]int{}
	for _, t := range a {
		m[t.Name] = max(m[t.Name], t.Partitions)
	}
	for _, t := range b {
		m[t.Name] = max(m[t.Name], t.Partitions)
	}
	out := make([]assign.Topic, 0, len(m))
	for name, n := range m {
		out = append(out, assign.Topic{Name: name, Partitions: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func isNaN(f float64) bool { return f != f }

// allRunning reports whether every subtask of the vertex is RUNNING.
func allRunning(v *flink.VertexSnapshot) bool {
	if len(v.Subtasks) != v.Parallelism {
		return false
	}
	for _, st := range v.Subtasks {
		if !st.Status.Running() && st.Status != "" {
			return false
		}
	}
	return true
}
