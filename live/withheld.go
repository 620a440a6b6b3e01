package live

import (
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
)

// A TaskManager sends the JobManager its metrics in one dump, which must fit
// in an RPC frame (pekko.framesize, akka.framesize before Flink 1.18;
// 10485760 bytes by default). A dump over the limit loses whole categories,
// gauges among the first: Flink logs "Some metrics will not be reported as
// the metric dump would exceed the maximum size of … bytes", and REST lists
// none of the KafkaSourceReader offset gauges of the readers on that
// TaskManager. A source with many partitions gets there (10,000 partitions
// did). Without its ids the source would show no partition at all; where
// skewscope knows the source's topics otherwise (its earlier polls, its
// lineage, a consumer group linked to it by configuration) the page shows
// the prediction alone, says so, and names the cause and the setting.

// Withheld says that Flink withheld a Kafka source's reader metrics.
type Withheld struct {
	// Cause is CauseMetricDumpLimit, CauseNotYetListed or CauseNoValues.
	Cause string `json:"cause"`
	// Setting is the Flink option that bounds the metric dump, for the
	// endpoint's Flink version, with its default.
	Setting string `json:"setting"`
	// All is true when no reader metric id was listed for the source, or
	// none listed returned a value; otherwise Subtasks are the subtasks
	// that list none or whose listed ids returned no value.
	All      bool  `json:"all"`
	Subtasks []int `json:"subtasks,omitempty"`
	// Unlisted, with CauseNoValues, are those of Subtasks that list no
	// reader metric id at all; the others list ids that returned no value.
	Unlisted []int `json:"unlisted,omitempty"`
	// Missing counts the partitions of the source's topics that no
	// listed metric id names.
	Missing int `json:"missingPartitions"`
	// Topics names, sorted, the topics skewscope knows the source reads:
	// the partitions Missing counts are theirs.
	Topics []string `json:"topics"`
	// Pending, with CauseNotYetListed, is why the JobManager may not have
	// fetched the readers' metrics yet.
	Pending Pending `json:"pending,omitempty"`
}

// Pending is why a JobManager may not have fetched a source's reader
// metrics yet (Withheld.Pending): each is a start less than
// JustStartedFor before the poll.
type Pending string

// Reasons the reader metrics may not be fetched yet (Withheld.Pending).
const (
	// PendingReadersStarted: a reader is not running yet or started less
	// than JustStartedFor before.
	PendingReadersStarted Pending = "readers-started"
	// PendingFirstPoll: skewscope's first poll of the JobManager was less
	// than JustStartedFor before, and no poll since listed a reader id.
	PendingFirstPoll Pending = "first-poll"
)

// withheldNote is what the store keeps of a source whose ids Flink
// withheld: the topics it knows the source reads, for the prediction.
type withheldNote struct {
	topics []assign.Topic
	view   Withheld
}

// CauseMetricDumpLimit is Withheld.Cause for a TaskManager's metric dump
// over the RPC frame size.
const CauseMetricDumpLimit = "metric-dump-limit"

// CauseNotYetListed is Withheld.Cause for readers that started too
// recently for the JobManager to have fetched their metrics.
const CauseNotYetListed = "not-yet-listed"

// CauseNoValues is Withheld.Cause for readers whose metric ids Flink
// lists while the values answer returns none of them
// (flink.KafkaSourceObservation.Unreported): a TaskManager whose metric
// dump is now over the size limit, or one lost; REST does not tell which.
const CauseNoValues = "listed-no-values"

// JustStartedFor is how long after a subtask's start its missing ids are
// put down to the JobManager's metric fetch interval rather than a dump
// over the size limit: three fetches at the default 10 s.
const JustStartedFor = 30 * time.Second

// justStarted reports whether a subtask of the vertex is not running yet
// or started less than JustStartedFor before at.
func justStarted(v *flink.VertexSnapshot, at time.Time) bool {
	if !allRunning(v) {
		return true
	}
	for _, st := range v.Subtasks {
		if !st.StartTime.IsZero() && at.Sub(st.StartTime) < JustStartedFor {
			return true
		}
	}
	return false
}

// notYetFetched is why the JobManager may not have fetched a source's
// reader metrics yet at the snapshot's poll, "" when it has had the time:
// its readers started less than JustStartedFor before, or skewscope's
// first poll of the endpoint was and no poll since listed a reader id (a
// JobManager that no one asked for metrics fetches them on the first
// request, and answers it from what it held before).
func (s *Store) notYetFetched(snap *flink.Snapshot, v *flink.VertexSnapshot) Pending {
	if justStarted(v, snap.CollectedAt) {
		return PendingReadersStarted
	}
	if first, ok := s.firstPoll[snap.Endpoint]; ok && !s.listedIDs[snap.Endpoint] && snap.CollectedAt.Sub(first) < JustStartedFor {
		return PendingFirstPoll
	}
	return ""
}

// frameSetting names the Flink option that bounds a TaskManager's metric
// dump: pekko.framesize from Flink 1.18 (the switch to Pekko) on,
// akka.framesize before; an unknown version gets both.
func frameSetting(version string) string {
	const def = " (default 10485760 bytes)"
	maj, rest, ok := strings.Cut(version, ".")
	minor, _, _ := strings.Cut(rest, ".")
	m, err1 := strconv.Atoi(maj)
	n, err2 := strconv.Atoi(minor)
	switch {
	case !ok || err1 != nil || err2 != nil:
		return "pekko.framesize (akka.framesize before Flink 1.18)" + def
	case m > 1 || n >= 18:
		return "pekko.framesize" + def
	}
	return "akka.framesize" + def
}

// markWithheld looks at the running sources of a snapshot for reader
// metrics Flink withheld: a source that lists no KafkaSourceReader id
// while skewscope knows its topics gets an empty observation (so that its
// page shows its partitions where the model puts them) and a note; one
// whose ids some subtasks do not list while partitions go unnamed gets a
// note. It returns the snapshot to store, a copy when it changed a
// vertex.
func (s *Store) markWithheld(snap *flink.Snapshot) *flink.Snapshot {
	for k := range s.withheld {
		if k.endpoint == snap.Endpoint {
			delete(s.withheld, k)
		}
	}
	var jobs []flink.JobSnapshot // copied on the first change
	cloned := map[int]bool{}     // the jobs whose vertices jobs holds copies of
	for ji := range snap.Jobs {
		j := &snap.Jobs[ji]
		if !j.State.Running() || j.Unlisted > 0 {
			continue
		}
		for vi := range j.Vertices {
			v := &j.Vertices[vi]
			if !v.Source || v.Stale || v.Err != nil || v.Parallelism <= 0 || v.Parallelism > maxParallelism {
				continue
			}
			key := vertexKey{snap.Endpoint, j.ID, v.ID}
			if v.Kafka != nil && len(v.Kafka.States) > 0 {
				if note, ok := s.partlyWithheld(snap, key, j, v); ok {
					s.withheld[key] = note
				}
				continue
			}
			topics := s.knownTopics(snap.Endpoint, key, j, v)
			if len(topics) == 0 {
				continue
			}
			n := 0
			for _, t := range topics {
				n += t.Partitions
			}
			note := withheldNote{topics: topics, view: Withheld{Cause: CauseMetricDumpLimit, Setting: frameSetting(snap.FlinkVersion), All: true, Missing: n, Topics: topicNames(topics)}}
			switch why := s.notYetFetched(snap, v); {
			case v.Kafka != nil && len(v.Kafka.Unreported) > 0:
				note.view.Cause = CauseNoValues
			case why != "":
				note.view.Cause, note.view.Setting, note.view.Pending = CauseNotYetListed, "metrics.fetcher.update-interval (default 10 s)", why
			}
			s.withheld[key] = note
			if jobs == nil {
				jobs = slices.Clone(snap.Jobs)
			}
			if !cloned[ji] {
				jobs[ji].Vertices = slices.Clone(snap.Jobs[ji].Vertices)
				cloned[ji] = true
			}
			jobs[ji].Vertices[vi].Kafka = &flink.KafkaSourceObservation{Parallelism: v.Parallelism}
			// Every partition is seen, none listed: each is shown where the
			// model puts it, the prediction alone (withheld).
			seen := s.seen[key]
			if seen == nil {
				seen = map[flink.KafkaPartition]bool{}
				s.seen[key] = seen
			}
			cluster := s.clusterFor(snap.Endpoint, v)
			had := map[assign.TopicPartition]bool{}
			for kp := range seen {
				had[assign.TopicPartition{Topic: s.resolve(cluster, kp.Topic), Partition: kp.Partition}] = true
			}
			for _, tp := range assign.Partitions(topics) {
				if !had[tp] {
					seen[flink.KafkaPartition{Topic: tp.Topic, Partition: tp.Partition}] = true
				}
			}
		}
	}
	if jobs == nil {
		return snap
	}
	out := *snap
	out.Jobs = jobs
	return &out
}

// partlyWithheld is the note of a source whose ids some subtasks do not
// list at all while partitions of its topics go unnamed by any id: their
// TaskManagers' gauges are gone.
func (s *Store) partlyWithheld(snap *flink.Snapshot, key vertexKey, j *flink.JobSnapshot, v *flink.VertexSnapshot) (withheldNote, bool) {
	if len(v.Kafka.Unreported) > 0 {
		return s.unreported(snap, key, j, v), true
	}
	// A subtask that restarted lists its ids a dump or two later.
	if !allRunning(v) || len(v.Kafka.Registering) > 0 || len(v.Kafka.AwaitingRefresh) > 0 {
		return withheldNote{}, false
	}
	listing := map[int]bool{}
	for _, st := range v.Kafka.States {
		listing[st.Subtask] = true
	}
	var silent []int
	for i := range v.Parallelism {
		if !listing[i] {
			silent = append(silent, i)
		}
	}
	if len(silent) == 0 {
		return withheldNote{}, false
	}
	cluster := s.clusterFor(snap.Endpoint, v)
	named := map[assign.TopicPartition]bool{}
	for _, st := range v.Kafka.States {
		named[assign.TopicPartition{Topic: s.resolve(cluster, st.Topic), Partition: st.Partition}] = true
	}
	topics := maxTopics(s.observedTopics(cluster, v), s.knownTopics(snap.Endpoint, key, j, v))
	missing, total := 0, 0
	for _, tp := range assign.Partitions(topics) {
		total++
		if !named[tp] {
			missing++
		}
	}
	// With fewer partitions than subtasks some subtasks read none, and
	// list nothing, by design.
	if missing == 0 || total < v.Parallelism {
		return withheldNote{}, false
	}
	w := Withheld{Cause: CauseMetricDumpLimit, Setting: frameSetting(snap.FlinkVersion), Subtasks: silent, Missing: missing, Topics: topicNames(topics)}
	return withheldNote{topics: topics, view: w}, true
}

// unreported is the note of a source some of whose subtasks list their
// ids while the values answer returns none of them (Unreported): their
// readers are withheld whatever the partition count, and so are those of
// the subtasks that list no id at all.
func (s *Store) unreported(snap *flink.Snapshot, key vertexKey, j *flink.JobSnapshot, v *flink.VertexSnapshot) withheldNote {
	cluster := s.clusterFor(snap.Endpoint, v)
	listing := map[int]bool{}
	named := map[assign.TopicPartition]bool{}
	for _, st := range v.Kafka.States {
		listing[st.Subtask] = true
		named[assign.TopicPartition{Topic: s.resolve(cluster, st.Topic), Partition: st.Partition}] = true
	}
	unrep := v.Kafka.UnreportedSubtasks()
	var silent []int
	for i := range v.Parallelism {
		if !listing[i] && !slices.Contains(unrep, i) {
			silent = append(silent, i)
		}
	}
	topics := maxTopics(s.observedTopics(cluster, v), s.knownTopics(snap.Endpoint, key, j, v))
	missing := 0
	for _, tp := range assign.Partitions(topics) {
		if !named[tp] {
			missing++
		}
	}
	w := Withheld{Cause: CauseNoValues, Setting: frameSetting(snap.FlinkVersion), Subtasks: slices.Sorted(slices.Values(append(slices.Clone(unrep), silent...))),
		Unlisted: silent, Missing: missing, Topics: topicNames(topics)}
	return withheldNote{topics: topics, view: w}
}

// knownTopics are the topics skewscope knows a source reads without its
// metric ids: the partitions its earlier polls listed, the topics of its
// lineage (an earlier run of the same job and vertex name), and those of a
// consumer group linked to it by configuration; partition counts from the
// Kafka metadata.
func (s *Store) knownTopics(endpoint string, key vertexKey, j *flink.JobSnapshot, v *flink.VertexSnapshot) []assign.Topic {
	cluster := s.clusterFor(endpoint, v)
	counts := map[string]int{}
	for kp := range s.seen[key] {
		t := s.resolve(cluster, kp.Topic)
		counts[t] = max(counts[t], int(kp.Partition)+1)
	}
	if v.Kafka != nil {
		// Listed ids whose values did not come still name partitions.
		for _, st := range v.Kafka.Unreported {
			t := s.resolve(cluster, st.Topic)
			counts[t] = max(counts[t], int(st.Partition)+1)
		}
	}
	if l := s.lineage[vertexKey{endpoint, j.Name, v.Name}]; l != nil {
		for _, t := range l.topics {
			counts[t.Name] = max(counts[t.Name], t.Partitions)
		}
	}
	if ks := s.kafka[cluster]; ks != nil {
		for _, ln := range s.opts.Links {
			if (ln.Endpoint != "" && ln.Endpoint != endpoint) || ln.Job != j.Name || (ln.Vertex != "" && ln.Vertex != v.Name) {
				continue
			}
			for _, g := range ks.Groups {
				if g.Name != ln.Group {
					continue
				}
				for _, gp := range g.Partitions {
					counts[gp.Topic] = max(counts[gp.Topic], int(gp.Partition)+1)
				}
			}
		}
	}
	if len(counts) == 0 {
		return nil
	}
	return withMetadataCounts(s.kafka[cluster], counts)
}

// sourceTopics are a Kafka source's topics for its model: those its ids
// name, and, when Flink withheld its ids, those skewscope knows otherwise.
func (s *picture) sourceTopics(endpoint, jobID, cluster string, v *flink.VertexSnapshot) []assign.Topic {
	topics := s.observedTopics(cluster, v)
	if w, ok := s.withheld[vertexKey{endpoint, jobID, v.ID}]; ok {
		topics = maxTopics(topics, w.topics)
	}
	return topics
}

// topicNames are the topics' names, sorted.
func topicNames(topics []assign.Topic) []string {
	names := make([]string, len(topics))
	for i, t := range topics {
		names[i] = t.Name
	}
	sort.Strings(names)
	return names
}
