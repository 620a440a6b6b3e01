package flink

import (
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"time"
)

// Metric-id lists, read only when they can have changed.
//
// A vertex's id list (GET /jobs/:jobid/vertices/:vertexid/metrics without
// get=) names every metric the JobManager's MetricStore holds for every
// subtask: for a Kafka source some two hundred per subtask and a few per
// partition, about 1 MB at parallelism 64 and by far the largest answer of
// a poll. Only a source vertex needs its list: the Kafka offset ids name
// the topics, partitions and the source operator, and the accumulated
// times may be absent. The load metrics of every vertex have fixed names
// (VertexMetrics leaves out the ids it does not hold).
//
// So a source's list is read on the vertex's first poll and again only
// when it can have changed in a way that matters:
//
//   - the parallelism changed (MetricStore.retainSubtasks drops the ids of
//     removed indexes; new readers register theirs);
//   - a subtask's attempt changed (a restart registers the splits anew,
//     at −1); the list is then read on every poll for settlePolls polls
//     and for as long as the Kafka tracker awaits the new attempts' dumps
//     or sees readers registering, because the JobManager fetches dumps
//     lazily and a reader registers its splits as they arrive;
//   - a Kafka offset id of the last list was missing from a values
//     answer (the JobManager dropped it);
//   - the subtask details could not be read (a restart would go unseen);
//   - Kafka lists partitions of the source's topics that no id names
//     (HintMetricIDs): a partition the source may have discovered since;
//     on the next poll; while the lists read for hints stay the same, the
//     wait doubles from PollInterval (the source finds partitions only
//     every partition.discovery.interval.ms, 5 minutes by default), up to
//     maxHints reads, since a source may read only some partitions of a
//     topic;
//   - the source reports event time, a subtask started less than
//     alignProbeWindow ago, and its list has no watermarkAlignmentDrift
//     gauge yet: a source with watermark alignment registers it some
//     seconds after it starts (real 1.20, 2.2 and 2.3 listed it a dozen
//     1 s polls after its other gauges), and the splits' paused times are
//     read only with it; the list is read again as for a hint, from
//     PollInterval doubling, at most maxHints times, so a young source
//     without alignment costs a few reads and one seen running for
//     longer none;
//   - IDRefresh passed since the last read, for the partitions a running
//     source discovers (KafkaSource's partition.discovery.interval.ms).
//     Each vertex's deadline is spread over the last half of IDRefresh by
//     its ids, so that the lists of many vertices are not all read on one
//     poll.
//
// Only the ids the collector reads are kept.

// settlePolls is how many polls after a change of attempts or
// parallelism read the list again, at least.
const settlePolls = 3

// A hint is honoured on the next poll at least PollInterval after the last
// read, then after twice as long for every read for a hint that found the
// same list, at most maxHints times while the list stays the same: at a
// 10 s poll, reads 10 s, 20 s, 40 s, 80 s and 160 s apart, about five
// minutes in all.
const maxHints = 5

// alignProbeWindow is how long after a source subtask starts its list is
// probed for the alignment gauge: Flink registers it within seconds.
const alignProbeWindow = 2 * time.Minute

// DefaultIDRefresh is Config.IDRefresh when 0: how long a source vertex's
// metric-id list is used without a change of attempts or parallelism.
const DefaultIDRefresh = 5 * time.Minute

// idEntry is one source vertex's metric-id list, as kept between reads.
type idEntry struct {
	ids      []string // the listed ids readMetrics reads
	par      int
	attempts map[int]attemptID
	readAt   time.Time
	settle   int  // polls left that read the list again
	missing  bool // a values answer lacked an id of ids
	hinted   bool // HintMetricIDs since the last read
	hints    int  // reads for hints that found the same list
	probes   int  // reads for a missing alignment gauge
}

// idReason says why a source's list is read on this poll, "" when the
// cached one is used.
func (c *Collector) idReason(e *idEntry, key stateKey, par int, attempts map[int]subtaskPoll, detailsOK bool, prev *VertexSnapshot, at time.Time) string {
	switch {
	case e == nil:
		return "first poll of the vertex"
	case e.par != par:
		return "parallelism changed"
	case !detailsOK:
		return "subtask details unavailable"
	case !sameAttempts(e.attempts, attempts):
		return "subtask attempts changed"
	case e.settle > 0:
		return "settling after a change"
	case e.missing:
		return "an offset id was missing from the values"
	case prev != nil && prev.Kafka != nil && (len(prev.Kafka.AwaitingRefresh) > 0 || len(prev.Kafka.Registering) > 0):
		return "restarted subtasks not yet settled"
	case e.hinted && e.hints < maxHints && (at.Sub(e.readAt) >= c.cfg.PollInterval<<e.hints || at.Before(e.readAt)):
		return hintReason
	case e.probes < maxHints && reportsEventTime(prev) && startedWithin(prev, at, alignProbeWindow) && !listsAlignment(e.ids) && (at.Sub(e.readAt) >= c.cfg.PollInterval<<e.probes || at.Before(e.readAt)):
		return probeReason
	case at.Sub(e.readAt) >= c.idDeadline(key):
		return "refresh interval"
	}
	return ""
}

const (
	hintReason  = "Kafka lists partitions that no id names"
	probeReason = "event time without an alignment gauge listed yet"
)

// reportsEventTime reports whether a source subtask of v emitted a
// watermark that is a time: the source has a watermark strategy.
func reportsEventTime(v *VertexSnapshot) bool {
	if v == nil {
		return false
	}
	for i := range v.Subtasks {
		if et := &v.Subtasks[i].EventTime; et.Read && IsEventTime(et.OutputWatermark) {
			return true
		}
	}
	return false
}

// startedWithin reports whether a subtask of v started less than d before
// at (its attempt's start time, from the subtask details).
func startedWithin(v *VertexSnapshot, at time.Time, d time.Duration) bool {
	for i := range v.Subtasks {
		if s := v.Subtasks[i].StartTime; !s.IsZero() && at.Sub(s) < d {
			return true
		}
	}
	return false
}

// listsAlignment reports whether ids hold a watermarkAlignmentDrift gauge.
func listsAlignment(ids []string) bool {
	return slices.ContainsFunc(ids, func(id string) bool { return strings.HasSuffix(id, "."+metricAlignmentDrift) })
}

// idDeadline is how long key's list is kept: between half of IDRefresh
// and all of it, fixed per vertex.
func (c *Collector) idDeadline(key stateKey) time.Duration { return spread(key, c.cfg.IDRefresh) }

// spread returns a duration between half of r and all of it, fixed per
// vertex, so that the re-reads of many vertices do not fall on one poll.
func spread(key stateKey, r time.Duration) time.Duration {
	h := fnv.New64a()
	h.Write([]byte(key.job))
	h.Write([]byte{0})
	h.Write([]byte(key.vertex))
	half := r / 2
	if half <= 0 {
		return r
	}
	return r - time.Duration(h.Sum64()%uint64(half))
}

func sameAttempts(a map[int]attemptID, b map[int]subtaskPoll) bool {
	if len(a) != len(b) {
		return false
	}
	for i, s := range b {
		if id, ok := a[i]; !ok || id != s.id {
			return false
		}
	}
	return true
}

// sourceIDs returns the metric ids to read for source vertex vs: the
// cached ones, or a new list's when idReason gives one. read reports
// whether the list was read.
func (c *Collector) sourceIDs(ids func() ([]string, error), key stateKey, vs *VertexSnapshot, attempts map[int]subtaskPoll, detailsOK bool, prev *VertexSnapshot, at time.Time) (out []string, read bool, err error) {
	c.stateMu.Lock()
	e := c.ids[key]
	var reason string
	if reason = c.idReason(e, key, vs.Parallelism, attempts, detailsOK, prev, at); reason == "" {
		out = e.ids
	}
	c.stateMu.Unlock()
	if reason == "" {
		return out, false, nil
	}
	all, err := ids()
	if err != nil {
		return nil, false, err
	}
	kept := keptIDs(vs, all)
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	n := &idEntry{ids: kept, par: vs.Parallelism, readAt: at, attempts: map[int]attemptID{}}
	for i, s := range attempts {
		n.attempts[i] = s.id
	}
	switch {
	case e == nil:
	case e.par != vs.Parallelism || !sameAttempts(e.attempts, attempts) || !detailsOK:
		n.settle = settlePolls - 1
	case e.settle > 0:
		n.settle = e.settle - 1
	}
	if e != nil && slices.Equal(e.ids, kept) {
		n.hints = e.hints
		if reason == hintReason {
			n.hints++
		}
	}
	if e != nil {
		n.probes = e.probes
		if reason == probeReason {
			n.probes++
		}
	}
	c.ids[key] = n
	return kept, true, nil
}

// HintMetricIDs tells the collector that Kafka lists partitions of the
// topics a source vertex reads that none of its metric ids names: the
// source may have discovered them, so its list is read again on the next
// poll rather than when IDRefresh passes (idcache.go bounds how often). Safe for
// concurrent use; unknown vertices are ignored.
func (c *Collector) HintMetricIDs(jobID, vertexID string) {
	c.stateMu.Lock()
	if e := c.ids[stateKey{jobID, vertexID}]; e != nil {
		e.hinted = true
	}
	c.stateMu.Unlock()
}

// idsMissing marks key's list for a new read on the next poll.
func (c *Collector) idsMissing(key stateKey) {
	c.stateMu.Lock()
	if e := c.ids[key]; e != nil {
		e.missing = true
	}
	c.stateMu.Unlock()
}

// keptIDs returns the ids of list that readMetrics reads for vs.
func keptIDs(vs *VertexSnapshot, list []string) []string {
	mp := planMetrics(vs, list)
	listed := make(map[string]bool, len(list))
	for _, id := range list {
		listed[id] = true
	}
	var kept []string
	for _, id := range mp.want {
		if listed[id] {
			kept = append(kept, id)
		}
	}
	return kept
}

// pruneIDs drops the lists of vertices not in jobs (a job gone, a vertex
// no longer a source).
func pruneIDs(m map[stateKey]*idEntry, live map[stateKey]bool) {
	maps.DeleteFunc(m, func(k stateKey, _ *idEntry) bool { return !live[k] })
}
