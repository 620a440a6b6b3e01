package live

import (
	"slices"
	"strconv"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
)

// A source's life as skewscope sees it. Flink changes a job's shape in
// four ways that matter to the split layout, each visible in its REST:
//
//   - a restore under a new job id (stop with a savepoint, submit again):
//     a new job with the same name whose /checkpoints latest.restored is
//     set;
//   - an in-place rescale under the same job id (the adaptive scheduler,
//     PUT /jobs/:id/resource-requirements, the Kubernetes autoscaler): the
//     vertex parallelism changes and latest.restored names the checkpoint
//     the new execution graph started from;
//   - a failover at the same parallelism: latest.restored changes, the
//     parallelism does not; every split goes back to the subtask that saved
//     it (RoundRobinOperatorStateRepartitioner returns the previous states
//     unchanged when the parallelism is unchanged), so the layout stays;
//   - partition discovery: new partitions join the readers while the job
//     runs (KafkaSourceEnumerator.getSplitOwner at the current parallelism).
//
// The restore model (assign.Restore) takes the parallelism of every step
// from the fresh start on; a step at an unchanged parallelism changes
// nothing in it. The lineage keeps those parallelisms, and every event
// with its time, kind and the checkpoint it came from.

// EventKind is what a lineage event was (LineageEvent.Kind).
type EventKind string

// Event kinds of LineageEvent.
const (
	EventStart      EventKind = "start"      // a fresh start (no restored state)
	EventFirstSeen  EventKind = "first-seen" // first seen already restored: earlier parallelisms unknown
	EventRestore    EventKind = "restore"    // a new job id restored from a checkpoint or savepoint
	EventRescale    EventKind = "rescale"    // the same job id at another parallelism
	EventFailover   EventKind = "failover"   // the same job id restarted from a checkpoint at the same parallelism
	EventPartitions EventKind = "partitions" // partition discovery found new partitions
	// EventRescaleElsewhere is a restart from a checkpoint at the same
	// parallelism because another vertex of the job was rescaled in place
	// (the adaptive scheduler restarts the whole job): not a failover.
	EventRescaleElsewhere EventKind = "rescale-elsewhere"
)

// maxLineageEvents bounds the events kept per source.
const maxLineageEvents = 64

// maxParallelism is Flink's upper bound for any parallelism
// (KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM).
const maxParallelism = 1 << 15

// LineageEvent is one change of a source's shape.
type LineageEvent struct {
	At   time.Time `json:"at"`
	Kind EventKind `json:"kind"`
	// JobID is the job id the source runs under after the event.
	JobID string `json:"jobId"`
	// From and To are the parallelisms before and after; From is 0 when
	// there was no before (a start) or it is unknown.
	From int `json:"from"`
	To   int `json:"to"`
	// CheckpointID, Savepoint and Path name what the job restored from
	// (latest.restored), 0 and "" when it restored nothing or Flink did not
	// say.
	CheckpointID int64  `json:"checkpointId,omitempty"`
	Savepoint    bool   `json:"savepoint,omitempty"`
	Path         string `json:"path,omitempty"`
	// NewPartitions counts the partitions a discovery event found.
	NewPartitions int `json:"newPartitions,omitempty"`
	// Moved lists (up to maxMovedListed) the partitions whose owner the
	// restore model changes at this step, MovedCount all of them; -1 when
	// the model cannot say exactly.
	Moved      []string `json:"moved,omitempty"`
	MovedCount int      `json:"movedCount"`
	// Rescaled names, for a rescale-elsewhere event, the job's other
	// vertices whose parallelism changed at that restart.
	Rescaled []VertexRescale `json:"rescaled,omitempty"`
	// Cause is, for a failover, the root cause of the restart from the
	// job's exception history (observed), nil until Flink named one.
	Cause *FailureCause `json:"cause,omitempty"`
}

// FailureCause is the failure that made Flink restart a job: one entry
// of its exception history, validated by the collector (texts clipped to
// a line, the stack trace cut to its first line).
type FailureCause struct {
	At time.Time `json:"at"`
	// Class is the exception's class and Message its message ("" none).
	Class   string `json:"class"`
	Message string `json:"message,omitempty"`
	// Task is the failed task's name, "" for a global failure; Subtask
	// its index, -1 when Flink's task name carries none.
	Task     string `json:"task,omitempty"`
	Subtask  int    `json:"subtask"`
	Endpoint string `json:"endpoint,omitempty"`
	// Labels are the failure enrichers' labels (Flink 1.15+).
	Labels []FailureLabel `json:"labels,omitempty"`
	// Concurrent counts the failures Flink recorded with it.
	Concurrent int `json:"concurrent,omitempty"`
	// Cause is the innermost exception its stack trace names (the last
	// "Caused by:", class and message), "" when none.
	Cause string `json:"cause,omitempty"`
}

// FailureLabel is one failure enricher's label.
type FailureLabel struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func failureCause(f flink.Failure) *FailureCause {
	c := &FailureCause{At: f.At, Class: f.Class, Message: f.Message, Task: f.Task, Subtask: f.Subtask, Endpoint: f.Endpoint, Concurrent: f.Concurrent, Cause: f.Cause}
	for _, l := range f.Labels {
		c.Labels = append(c.Labels, FailureLabel{Key: l.Key, Value: l.Value})
	}
	return c
}

// attachCauses gives each failover event of the current run that has no
// cause yet the newest failure of the job's exception history between the
// event before it and its restore: the collector reads the history when
// numRestarts changes, which can be a poll after the restore shows.
func attachCauses(l *lineage, j *flink.JobSnapshot) {
	if len(j.Failures) == 0 {
		return
	}
	for i := range l.events {
		e := &l.events[i]
		if e.Kind != EventFailover || e.JobID != j.ID || e.Cause != nil {
			continue
		}
		var after time.Time
		if i > 0 {
			after = l.events[i-1].At
		}
		for _, f := range j.Failures { // newest first
			if f.At.IsZero() || f.At.After(e.At) {
				continue
			}
			if f.At.After(after) {
				e.Cause = failureCause(f)
			}
			break
		}
	}
}

// VertexRescale is a vertex whose parallelism changed from From to To.
type VertexRescale struct {
	Name string `json:"name"`
	From int    `json:"from"`
	To   int    `json:"to"`
}

const maxMovedListed = 48

// LineageView is a source's life on its vertex page.
type LineageView struct {
	// History is the parallelism of every step from the fresh start, as
	// the restore model takes it; when Known is false it starts at the
	// first step skewscope saw.
	History []int `json:"history"`
	// Known is true when skewscope saw the fresh start or the job's
	// whole history is otherwise known.
	Known  bool           `json:"known"`
	Events []LineageEvent `json:"events"`
}

// lineage is what skewscope saw of the successive runs of one source
// (endpoint, job name, vertex name).
type lineage struct {
	jobID string
	// start is the current run's start time: an older run of the same name
	// still listed (or running beside it) does not take the lineage back.
	start time.Time
	// known is false when the first run seen was already restored: its
	// earlier parallelisms are unknown.
	known bool
	// history holds the parallelism of each step (see LineageView).
	history []int
	events  []LineageEvent
	// restored is latest.restored of the current run as last seen.
	restored *flink.RestoreInfo
	// topics are the partition counts the current run has seen (what its
	// next checkpoint holds); prevTopics those of the run before the
	// latest restore or rescale.
	topics, prevTopics []assign.Topic
	// grewNow is set when partitions were discovered since the latest
	// restore or rescale (the model covers them exactly: NewTopics);
	// grewBefore when that happened before it (the saved split lists'
	// order is then not known).
	grewNow, grewBefore bool
	// stepAt is when skewscope saw the latest restore or rescale (for a
	// run first seen already restored, when it restored); checkedAt the
	// newest Kafka metadata read that listed every topic of the source:
	// a partition absent from it did not exist then. unsure is set when
	// partitions appeared after the latest step that the metadata cannot
	// place after it (checkedAt before stepAt): the source may have
	// discovered them before the step, at the previous parallelism.
	stepAt, checkedAt time.Time
	unsure            bool
	// discovery is what the observed readers settled about the partitions
	// of an unsure step (settleDiscovery); nil until they do, and again
	// from the next step on.
	discovery *settledDiscovery
	// cluster is the Kafka cluster the source reads.
	cluster string
	// inferred is set when the history before the first step skewscope
	// saw was inferred from the observed layout; inference is what the
	// search found, also when nothing fit, nil before it ran.
	inferred  *inferredHistory
	inference *Inference
	// inferFor is the observed layout last searched (layoutHash), 0 none.
	inferFor uint64
}

func (l *lineage) p() int { return l.history[len(l.history)-1] }

func (l *lineage) addEvent(e LineageEvent) {
	l.events = append(l.events, e)
	if n := len(l.events) - maxLineageEvents; n > 0 {
		l.events = slices.Delete(l.events, 0, n)
	}
}

// sameRestore reports whether two latest.restored answers name the same
// restore.
func sameRestore(a, b *flink.RestoreInfo) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.CheckpointID == b.CheckpointID && a.At.Equal(b.At) && a.ExternalPath == b.ExternalPath
}

func restoreEvent(kind EventKind, at time.Time, jobID string, from, to int, r *flink.RestoreInfo) LineageEvent {
	e := LineageEvent{At: at, Kind: kind, JobID: jobID, From: from, To: to, MovedCount: -1}
	if r != nil {
		e.CheckpointID, e.Savepoint, e.Path = r.CheckpointID, r.IsSavepoint, r.ExternalPath
		if !r.At.IsZero() {
			e.At = r.At
		}
	}
	return e
}

// followLineage records the source's parallelism history across restores,
// in-place rescales and failovers, and when Kafka's metadata last
// confirmed the source's partitions. It runs only when every subtask of
// the vertex runs.
func (s *Store) followLineage(endpoint string, j *flink.JobSnapshot, v *flink.VertexSnapshot, at time.Time) {
	cluster := s.clusterFor(endpoint, v)
	topics := s.sourceTopics(endpoint, j.ID, cluster, v)
	s.followShape(endpoint, j, v, topics, at)
	if l := s.lineage[vertexKey{endpoint, j.Name, v.Name}]; l != nil && l.jobID == j.ID {
		l.cluster = cluster
		if m := s.metadataAt(cluster, topics); m.After(l.checkedAt) {
			l.checkedAt = m
		}
	}
}

// confirmPartitions moves on checkedAt of every lineage reading snap's
// cluster whose topics the metadata lists with no partition the lineage
// has not seen: a partition that appears later did not exist when it was
// read.
func (s *Store) confirmPartitions(snap *kafka.Snapshot) {
	if snap.MetadataAt.IsZero() {
		return
	}
	for _, l := range s.lineage {
		if l.cluster != snap.Cluster || len(l.topics) == 0 {
			continue
		}
		at, ok := readAt(snap, l.topics, true)
		if ok && at.After(l.checkedAt) {
			l.checkedAt = at
		}
	}
}

// readAt is when snap's metadata last listed every topic of topics with
// its partitions: the oldest read among them (Topic.ReadAt, or the
// snapshot's MetadataAt for a topic without one). With within set, a
// topic listed with more partitions than topics has does not count as
// listed. ok is false when a topic is not listed.
func readAt(snap *kafka.Snapshot, topics []assign.Topic, within bool) (at time.Time, ok bool) {
	if len(topics) == 0 {
		return snap.MetadataAt, true
	}
	byName := make(map[string]*kafka.Topic, len(snap.Topics))
	for i := range snap.Topics {
		if t := &snap.Topics[i]; t.Err == nil && len(t.Partitions) > 0 {
			byName[t.Name] = t
		}
	}
	for i, t := range topics {
		kt := byName[t.Name]
		if kt == nil || (within && len(kt.Partitions) > t.Partitions) {
			return time.Time{}, false
		}
		r := kt.ReadAt
		if r.IsZero() {
			r = snap.MetadataAt
		}
		if i == 0 || r.Before(at) {
			at = r
		}
	}
	return at, !at.IsZero()
}

// metadataAt is when cluster's metadata was read, if it lists every topic
// of topics; zero otherwise.
func (s *picture) metadataAt(cluster string, topics []assign.Topic) time.Time {
	ks := s.kafka[cluster]
	if ks == nil || ks.MetadataAt.IsZero() {
		return time.Time{}
	}
	at, _ := readAt(ks, topics, false)
	return at
}

// followShape is followLineage's history: restores, rescales, failovers
// and partition discovery.
func (s *Store) followShape(endpoint string, j *flink.JobSnapshot, v *flink.VertexSnapshot, topics []assign.Topic, at time.Time) {
	key := vertexKey{endpoint, j.Name, v.Name}
	p := v.Parallelism
	l := s.lineage[key]
	if l != nil && l.jobID != j.ID {
		if j.StartTime.Before(l.start) {
			return // an older run of this name
		}
		l.start = j.StartTime
	}
	switch {
	case l == nil:
		l = &lineage{jobID: j.ID, start: j.StartTime, known: j.Restored == nil, history: []int{p}, restored: j.Restored, topics: topics}
		if j.Restored == nil {
			l.addEvent(LineageEvent{At: orTime(j.StartTime, at), Kind: EventStart, JobID: j.ID, To: p, MovedCount: -1})
		} else {
			l.addEvent(restoreEvent(EventFirstSeen, at, j.ID, 0, p, j.Restored))
			// The partitions of the first sight are taken as restored (the
			// history inferred from them says so); those that appear later
			// were discovered after the restore, at p, when the metadata
			// read after the restore lacked them (unsure otherwise).
			l.prevTopics = maxTopics(topics, nil)
			l.stepAt = orTime(j.Restored.At, at)
		}
		s.lineage[key] = l
		return
	case l.jobID != j.ID && j.Restored == nil:
		// Submitted again without state: a fresh start, whatever ran before.
		*l = lineage{jobID: j.ID, start: j.StartTime, known: true, history: []int{p}, topics: topics, events: l.events}
		l.addEvent(LineageEvent{At: orTime(j.StartTime, at), Kind: EventStart, JobID: j.ID, To: p, MovedCount: -1})
		return
	case l.jobID != j.ID:
		s.step(l, EventRestore, endpoint, j, p, topics, at)
		l.jobID = j.ID
		return
	case p != l.p():
		if j.Restored == nil {
			// Restarted at another parallelism before any checkpoint: the
			// enumerator starts afresh, and the history with it.
			from := l.p()
			*l = lineage{jobID: j.ID, start: l.start, known: true, history: []int{p}, topics: topics, events: l.events}
			l.addEvent(LineageEvent{At: at, Kind: EventRescale, JobID: j.ID, From: from, To: p, MovedCount: -1})
			return
		}
		s.step(l, EventRescale, endpoint, j, p, topics, at)
		return
	case !sameRestore(l.restored, j.Restored):
		if n := len(l.events); n > 0 && l.events[n-1].JobID == j.ID && l.events[n-1].CheckpointID == 0 &&
			(l.events[n-1].Kind == EventRescale || l.events[n-1].Kind == EventRestore) && j.Restored != nil {
			// The checkpoint of a rescale that REST named a poll later.
			e := &l.events[n-1]
			e.CheckpointID, e.Savepoint, e.Path = j.Restored.CheckpointID, j.Restored.IsSavepoint, j.Restored.ExternalPath
		} else if moved := s.rescaledElsewhere(endpoint, j, v, at); len(moved) > 0 {
			e := restoreEvent(EventRescaleElsewhere, at, j.ID, p, p, j.Restored)
			e.Rescaled = moved
			l.addEvent(e)
		} else {
			l.addEvent(restoreEvent(EventFailover, at, j.ID, p, p, j.Restored))
		}
		l.restored = j.Restored
	}
	attachCauses(l, j)
	if _, n := newTopics(l.topics, topics); n > 0 && len(l.topics) > 0 {
		l.grewNow = true
		if len(l.prevTopics) > 0 && l.checkedAt.Before(l.stepAt) {
			// No metadata read after the step lacked them: they may have
			// been discovered before it.
			l.unsure = true
		}
		l.addEvent(LineageEvent{At: at, Kind: EventPartitions, JobID: j.ID, From: p, To: p, NewPartitions: n, MovedCount: -1})
	}
	l.topics = maxTopics(l.topics, topics)
}

// step records a restore or rescale to parallelism p.
func (s *Store) step(l *lineage, kind EventKind, endpoint string, j *flink.JobSnapshot, p int, topics []assign.Topic, at time.Time) {
	from := l.p()
	r := j.Restored
	if kind == EventRescale && sameRestore(l.restored, r) {
		// REST does not name the rescale's checkpoint yet (it still shows
		// the restore before); the next change of latest.restored does.
		r = nil
	}
	l.prevTopics = maxTopics(l.topics, nil)
	// Partitions found around the step before (unsure), on either side of
	// it, joined the readers' lists while the job ran, as those of grewNow.
	l.grewBefore = l.grewBefore || l.grewNow || l.unsure
	l.grewNow = false
	// Partitions first seen with the step itself may have been discovered
	// on either side of it.
	_, grown := newTopics(l.prevTopics, topics)
	l.unsure = grown > 0
	l.discovery = nil
	l.stepAt = at
	l.history = append(slices.Clone(l.history), p)
	l.restored = j.Restored
	l.topics = maxTopics(l.topics, topics)
	e := restoreEvent(kind, at, j.ID, from, p, r)
	if (l.known || l.inferred != nil) && !l.grewBefore && len(l.history) <= assign.MaxRestoreHistory {
		e.Moved, e.MovedCount = movedAt(l.prevTopics, l.history, connectorLine(s.flink[endpoint].FlinkVersion))
	}
	l.addEvent(e)
}

// movedAt lists the partitions whose owner the model changes at the last
// step of history: the layout of history without its last entry against
// the layout with it. MovedCount is -1 when either layout is not exact.
func movedAt(topics []assign.Topic, history []int, line string) ([]string, int) {
	before, ok := modelOwners(topics, history[:len(history)-1], line)
	if !ok {
		return nil, -1
	}
	after, ok := modelOwners(topics, history, line)
	if !ok {
		return nil, -1
	}
	var moved []string
	n := 0
	for _, tp := range assign.Partitions(topics) {
		if before[tp] != after[tp] {
			n++
			if len(moved) < maxMovedListed {
				moved = append(moved, tp.Topic+"-"+strconv.Itoa(int(tp.Partition))+" "+strconv.Itoa(before[tp])+"→"+strconv.Itoa(after[tp]))
			}
		}
	}
	return moved, n
}

// modelOwners is the model's owner of every partition after history; ok is
// false when the model cannot place every partition exactly.
func modelOwners(topics []assign.Topic, history []int, line string) (map[assign.TopicPartition]int, bool) {
	if len(history) == 1 {
		fa, err := assign.FreshAssignment(topics, history[0])
		return ownerMap(fa), err == nil
	}
	res, err := assign.Restore(assign.RestoreInput{Topics: topics, History: history, ConnectorLine: line})
	if err != nil || !res.Exact {
		return nil, false
	}
	return ownerMap(res.Assignment), true
}

// lineageView is the vertex page's view of l.
func lineageView(l *lineage) *LineageView {
	if l == nil {
		return nil
	}
	return &LineageView{History: slices.Clone(l.history), Known: l.known, Events: slices.Clone(l.events)}
}

func orTime(t, alt time.Time) time.Time {
	if t.IsZero() {
		return alt
	}
	return t
}

// jobShape is what the store keeps of a running job's shape: each
// vertex's parallelism (by vertex id, with its name) as of the latest poll
// in which all of them ran, the restore that poll saw, and the rescales
// seen since the job last restarted from a checkpoint (REST can name the
// restart's checkpoint a poll after it shows the new parallelism).
type jobShape struct {
	pars     map[string]VertexRescale
	restored *flink.RestoreInfo
	pending  []pendingRescale
}

type pendingRescale struct {
	id string
	r  VertexRescale
	at time.Time
}

// pendingFor is how long a rescale seen without a restart waits for the
// restart that REST names later.
const pendingFor = 5 * time.Minute

// rescaledElsewhere lists the vertices of j other than v that were
// rescaled since the job last restarted: a restart of v at its own
// parallelism then came from their rescale.
func (s *Store) rescaledElsewhere(endpoint string, j *flink.JobSnapshot, v *flink.VertexSnapshot, at time.Time) []VertexRescale {
	sh := s.shapes[succKey{endpoint, j.ID}]
	if sh == nil {
		return nil
	}
	var out []VertexRescale
	for _, pr := range sh.pending {
		if pr.id != v.ID && at.Sub(pr.at) <= pendingFor {
			out = append(out, pr.r)
		}
	}
	for _, r := range shapeDiff(sh.pars, j, v.ID) {
		out = append(out, r.r)
	}
	return out
}

// shapeDiff lists the vertices of j (but skip) whose parallelism differs
// from pars.
func shapeDiff(pars map[string]VertexRescale, j *flink.JobSnapshot, skip string) []pendingRescale {
	var out []pendingRescale
	for k := range j.Vertices {
		o := &j.Vertices[k]
		if was, ok := pars[o.ID]; ok && o.ID != skip && was.To != o.Parallelism {
			out = append(out, pendingRescale{id: o.ID, r: VertexRescale{Name: o.Name, From: was.To, To: o.Parallelism}})
		}
	}
	return out
}

// recordShapes keeps the shape of every running job of the snapshot whose
// vertices all run, and forgets the jobs it does not list.
func (s *Store) recordShapes(snap *flink.Snapshot) {
	listed := make(map[string]bool, len(snap.Jobs))
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		listed[j.ID] = true
		if !j.State.Running() || j.Unlisted > 0 || len(j.Vertices) == 0 {
			continue
		}
		pars := make(map[string]VertexRescale, len(j.Vertices))
		for k := range j.Vertices {
			v := &j.Vertices[k]
			if v.Stale || !allRunning(v) {
				pars = nil
				break
			}
			pars[v.ID] = VertexRescale{Name: v.Name, To: v.Parallelism}
		}
		if pars == nil {
			continue
		}
		k := succKey{snap.Endpoint, j.ID}
		old := s.shapes[k]
		sh := &jobShape{pars: pars, restored: j.Restored}
		if old != nil && sameRestore(old.restored, j.Restored) {
			// No restart named yet: the rescales wait for it.
			for _, pr := range old.pending {
				if snap.CollectedAt.Sub(pr.at) <= pendingFor {
					sh.pending = append(sh.pending, pr)
				}
			}
			for _, pr := range shapeDiff(old.pars, j, "") {
				pr.at = snap.CollectedAt
				sh.pending = append(sh.pending, pr)
			}
		}
		s.shapes[k] = sh
	}
	for k := range s.shapes {
		if k.endpoint == snap.Endpoint && !listed[k.id] {
			delete(s.shapes, k)
		}
	}
}
