package flink

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Kafka source (FLIP-27 KafkaSource, KafkaSourceReaderMetrics) metric ids on
// the vertex endpoint:
//
//	<subtask>.<operator>[.kafkaCluster.<cluster>].KafkaSourceReader.topic.<topic>.partition.<p>.(currentOffset|committedOffset)
//
// Flink replaces '.', ' ', ':' and ',' with '_' in the operator name and in
// group values, so the topic in an id is sanitised ("payments.v1" becomes
// "payments_v1"); ResolveTopic maps it back against the real topic list.
// Parsing anchors on the known suffixes from the right, so that an
// unsanitised topic containing dots still parses.

const (
	kafkaReaderTopic   = ".KafkaSourceReader.topic."
	kafkaPartitionPart = ".partition."
	kafkaClusterPart   = ".kafkaCluster."
	// KafkaCurrentOffset is the offset of the last record emitted (−1 until the first).
	KafkaCurrentOffset = "currentOffset"
	// KafkaCommittedOffset is the last offset committed on checkpoint = next to read (−1 until the first commit).
	KafkaCommittedOffset = "committedOffset"
)

// KafkaOffsetID is a parsed Kafka source offset metric id.
type KafkaOffsetID struct {
	Subtask   int    // −1 when the id has no subtask prefix (subtask endpoint)
	Operator  string // sanitised operator name, e.g. "Source__Kafka_Source"
	Cluster   string // DynamicKafkaSource cluster, "" otherwise
	Topic     string // as in the id (sanitised)
	Partition int32
	Kind      string // KafkaCurrentOffset or KafkaCommittedOffset
}

// ParseKafkaOffsetID parses one metric id; ok is false for other metrics.
func ParseKafkaOffsetID(id string) (KafkaOffsetID, bool) {
	var r KafkaOffsetID
	rest := id
	switch {
	case strings.HasSuffix(rest, "."+KafkaCurrentOffset):
		r.Kind = KafkaCurrentOffset
	case strings.HasSuffix(rest, "."+KafkaCommittedOffset):
		r.Kind = KafkaCommittedOffset
	default:
		return r, false
	}
	rest = rest[:len(rest)-len(r.Kind)-1]
	i := strings.LastIndex(rest, kafkaPartitionPart)
	if i < 0 {
		return r, false
	}
	p, err := strconv.ParseInt(rest[i+len(kafkaPartitionPart):], 10, 32)
	if err != nil || p < 0 {
		return r, false
	}
	r.Partition = int32(p)
	rest = rest[:i]
	// The operator and cluster names are sanitised (no dots), so the first
	// ".KafkaSourceReader.topic." ends the prefix; the topic is the rest.
	j := strings.Index(rest, kafkaReaderTopic)
	if j < 0 {
		return r, false
	}
	r.Topic = rest[j+len(kafkaReaderTopic):]
	if r.Topic == "" {
		return r, false
	}
	prefix := rest[:j]
	if k := strings.Index(prefix, kafkaClusterPart); k >= 0 {
		r.Cluster = prefix[k+len(kafkaClusterPart):]
		prefix = prefix[:k]
		if r.Cluster == "" {
			return r, false
		}
	}
	r.Subtask = -1
	if d := strings.IndexByte(prefix, '.'); d > 0 {
		if n, err := strconv.Atoi(prefix[:d]); err == nil && n >= 0 && isDigits(prefix[:d]) {
			r.Subtask = n
			prefix = prefix[d+1:]
		}
	}
	if prefix == "" || strings.Contains(prefix, ".") {
		return r, false
	}
	r.Operator = prefix
	return r, true
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// KafkaPartition identifies a partition as seen in metric ids.
type KafkaPartition struct {
	Cluster   string // DynamicKafkaSource cluster, "" otherwise
	Topic     string // sanitised
	Partition int32
}

// KafkaPartitionState is one (subtask, partition) pair found in the ids.
type KafkaPartitionState struct {
	KafkaPartition
	Subtask  int
	Operator string
	// CurrentOffset and CommittedOffset are −1 when unknown (no value yet,
	// or the connector's −1 for "none").
	CurrentOffset   int64
	CommittedOffset int64
	CurrentID       string // metric id of currentOffset, "" if not listed
	CommittedID     string // metric id of committedOffset, "" if not listed
	// CommittedAt is when CommittedOffset was read: the snapshot's
	// CollectedAt, or an earlier poll's time when the Collector used the
	// value it read then (it reads committedOffset only when it can have
	// changed: committed.go). Zero when not known (ParseKafkaSourceMetricIDs
	// alone, or no CommittedID).
	CommittedAt time.Time
	// Evidence says whether the entry is known to come from the subtask's
	// current execution attempt. A Collector judges it across polls;
	// ParseKafkaSourceMetricIDs alone leaves it EvidenceUnknown.
	Evidence Evidence
	// Advanced is set when the entry's value changed since the first poll
	// of the subtask's current attempt that listed it: only that attempt
	// writes it now, so the subtask reads the partition (an id whose split
	// moved away keeps its last value). A Collector sets it.
	Advanced bool
	// Split is the split's watermark gauges on this subtask (Flink ≥ 2.1,
	// FLIP-513), nil when the ids list none.
	Split *SplitWatermark
}

// KafkaSourceObservation is what a source vertex's metric ids say about
// its Kafka partitions.
type KafkaSourceObservation struct {
	// States holds one entry per (subtask, partition), sorted by subtask,
	// cluster, topic, partition. A partition can appear under several
	// subtasks: metric groups are never unregistered after a reassignment,
	// and the JobManager keeps an earlier attempt's entries (see Evidence).
	States []KafkaPartitionState
	// Parallelism is the vertex parallelism the Collector judged the
	// entries against (entries under a higher index are EvidenceStale);
	// 0 when unknown.
	Parallelism int
	// AwaitingRefresh lists, ascending, the subtasks whose restart the
	// Collector saw while none of their values yet shows the new attempt:
	// the JobManager may still serve the dump from before the restart, so
	// their entries name no owner with certainty.
	AwaitingRefresh []int
	// Registering lists, ascending, the subtasks restarted by a change of
	// parallelism whose new attempt has not shown yet or shows for the
	// first time in this poll. The JobManager can hold a dump taken while
	// the new readers were still registering their redistributed splits
	// (seen with Flink 2.2.1 right after an in-place scale-down: some of a
	// reader's partitions listed, others not yet), so while any is listed
	// a partition listed once with its pre-restart value may have moved.
	Registering []int
	// Unreported holds the entries of the subtasks whose listed offset ids
	// all went without a value in the values answer (sorted as States): the
	// JobManager still lists them while their values no longer come, as
	// when the subtask's TaskManager now sends a metric dump over the RPC
	// frame size, or is lost; REST does not say which. Such an entry names
	// no owner and no offset, so it is not in States.
	Unreported []KafkaPartitionState
}

// UnreportedSubtasks lists, ascending, the subtasks of Unreported.
func (o *KafkaSourceObservation) UnreportedSubtasks() []int {
	if len(o.Unreported) == 0 {
		return nil
	}
	out := make([]int, 0, len(o.Unreported))
	for _, s := range o.Unreported {
		out = append(out, s.Subtask)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ParseKafkaSourceMetricIDs collects the Kafka offset metric ids of a
// vertex (from VertexMetricIDs). Ids without a subtask prefix are skipped.
func ParseKafkaSourceMetricIDs(ids []string) *KafkaSourceObservation {
	type key struct {
		KafkaPartition
		subtask int
	}
	idx := map[key]int{}
	o := &KafkaSourceObservation{}
	for _, id := range ids {
		p, ok := ParseKafkaOffsetID(id)
		if !ok || p.Subtask < 0 {
			continue
		}
		k := key{KafkaPartition{p.Cluster, p.Topic, p.Partition}, p.Subtask}
		i, ok := idx[k]
		if !ok {
			i = len(o.States)
			idx[k] = i
			o.States = append(o.States, KafkaPartitionState{
				KafkaPartition: k.KafkaPartition, Subtask: p.Subtask, Operator: p.Operator,
				CurrentOffset: -1, CommittedOffset: -1,
			})
		}
		if p.Kind == KafkaCurrentOffset {
			o.States[i].CurrentID = id
		} else {
			o.States[i].CommittedID = id
		}
	}
	slices.SortFunc(o.States, func(x, y KafkaPartitionState) int {
		return cmp.Or(cmp.Compare(x.Subtask, y.Subtask), comparePartitions(x.KafkaPartition, y.KafkaPartition))
	})
	return o
}

// comparePartitions orders partitions by cluster, topic, partition.
func comparePartitions(a, b KafkaPartition) int {
	return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
}

// fresh returns a copy of o as ParseKafkaSourceMetricIDs and splitIDs
// leave it, before any values: its States and their Split gauges copied,
// nothing else. Nil for nil.
func (o *KafkaSourceObservation) fresh() *KafkaSourceObservation {
	if o == nil {
		return nil
	}
	n := &KafkaSourceObservation{States: slices.Clone(o.States)}
	for i := range n.States {
		if sw := n.States[i].Split; sw != nil {
			cp := *sw
			n.States[i].Split = &cp
		}
	}
	return n
}

// OffsetIDs returns every offset metric id, to pass to VertexMetrics.
func (o *KafkaSourceObservation) OffsetIDs() []string {
	var ids []string
	for _, s := range o.States {
		if s.CurrentID != "" {
			ids = append(ids, s.CurrentID)
		}
		if s.CommittedID != "" {
			ids = append(ids, s.CommittedID)
		}
	}
	return ids
}

// ApplyValues fills the offsets from metric values (VertexMetrics on
// OffsetIDs). Ids without a value, or with a non-integer one, stay −1;
// the entries of a subtask none of whose ids has a value move to
// Unreported.
func (o *KafkaSourceObservation) ApplyValues(ms []Metric) { o.applyValues(MetricMap(ms)) }

// applyValues is ApplyValues on values already indexed by MetricMap.
func (o *KafkaSourceObservation) applyValues(vals map[string]Metric) {
	valued := map[int]bool{} // the subtasks with at least one value
	get := func(subtask int, id string) int64 {
		if id == "" {
			return -1
		}
		m, ok := vals[id]
		if !ok {
			return -1
		}
		valued[subtask] = true
		v, ok := m.Int64()
		if !ok {
			return -1
		}
		return v
	}
	for i := range o.States {
		st := &o.States[i]
		st.CurrentOffset = get(st.Subtask, st.CurrentID)
		st.CommittedOffset = get(st.Subtask, st.CommittedID)
	}
	kept := o.States[:0]
	var unreported []KafkaPartitionState
	for _, st := range o.States {
		if valued[st.Subtask] {
			kept = append(kept, st)
		} else {
			unreported = append(unreported, st)
		}
	}
	o.States, o.Unreported = kept, append(o.Unreported[:0], unreported...)
}

// SanitizeMetricName applies Flink's metric-name sanitisation (space, '.',
// ':' and ',' become '_').
func SanitizeMetricName(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '.', ':', ',':
			return '_'
		}
		return r
	}, s)
}

// ResolveTopic maps a topic name from a metric id back to the real topic
// among known. It returns all candidates: more than one means the name is
// ambiguous (e.g. both "payments.v1" and "payments_v1" exist).
func ResolveTopic(idTopic string, known []string) []string {
	var out []string
	for _, t := range known {
		if t == idTopic || SanitizeMetricName(t) == idTopic {
			out = append(out, t)
		}
	}
	return out
}
