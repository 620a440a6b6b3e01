package flink

import (
	"slices"
	"strconv"
)

// Evidence says whether a Kafka offset entry (one subtask, one partition)
// is known to come from the subtask's current execution attempt.
//
// It is needed because the JobManager's MetricStore (flink-runtime
// rest/handler/legacy/metrics/MetricStore.java, 1.16+) keeps the vertex
// entries "<subtask>.<name>" across restarts under one job id (a failover,
// or an in-place rescale by the adaptive scheduler): updateCurrentExecutionAttempts
// → TaskMetricStore.retainSubtasks only drops the entries of subtask
// indexes that are no longer active (a scale-down), and add() writes an
// entry only from the dump of the representative attempt
// (isRepresentativeAttempt). So an id that the new attempt does not
// register keeps the old attempt's last value for as long as the job runs,
// while the new owner of that partition shows −1 until it emits a record
// (KafkaSourceReaderMetrics.registerTopicPartition starts both gauges at
// INITIAL_OFFSET = −1 when a split is added).
type Evidence uint8

const (
	// EvidenceUnknown: nothing to judge the entry by (the Collector's
	// first look at the vertex, or an observation built without one).
	EvidenceUnknown Evidence = iota
	// EvidenceCurrent: the entry was registered or updated by the
	// subtask's current attempt: its id was not listed before the
	// attempt started, or its value differs from then, or its value
	// moved between two polls of the same attempt.
	EvidenceCurrent
	// EvidenceUnconfirmed: the subtask restarted and the entry still
	// shows the value it had before: a frozen id of the old attempt, or
	// an idle re-registration by the new one, which look the same.
	EvidenceUnconfirmed
	// EvidenceStale: the entry is under a subtask index at or above the
	// vertex parallelism (left from before a scale-down); never an owner.
	EvidenceStale
)

var evidenceNames = [...]string{"unknown", "current", "unconfirmed", "stale"}

// String returns "unknown", "current", "unconfirmed" or "stale".
func (e Evidence) String() string {
	if int(e) < len(evidenceNames) {
		return evidenceNames[e]
	}
	return "evidence(" + strconv.Itoa(int(e)) + ")"
}

// MarshalText implements encoding.TextMarshaler (JSON uses String).
func (e Evidence) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// OwnerReason says, in a few words, how Owners decided a partition.
type OwnerReason string

// The reasons Owners gives. The first two name a certain owner.
const (
	// ReasonOnlyListing: one subtask within the parallelism lists the
	// partition; every split's owner registers it once its attempt runs.
	ReasonOnlyListing OwnerReason = "only listing"
	// ReasonOnlyCurrent: several subtasks list it, exactly one of them
	// with current-attempt evidence.
	ReasonOnlyCurrent OwnerReason = "only current-attempt listing"
	// ReasonAwaitingRefresh: the one subtask listing it restarted and
	// shows no value from its new attempt yet (the JobManager may still
	// serve the pre-restart dump).
	ReasonAwaitingRefresh OwnerReason = "restarted, metrics not refreshed yet"
	// ReasonRegistering: the one listing shows its value from before a
	// rescale while subtasks of the rescale are still registering
	// (Registering): it may have moved to one of them.
	ReasonRegistering OwnerReason = "rescale settling, may have moved"
	// ReasonNoCurrent: several subtasks list it, none with current-attempt
	// evidence.
	ReasonNoCurrent OwnerReason = "several listings, none current"
	// ReasonOnlyAdvanced: several subtasks list it with current-attempt
	// evidence, exactly one of them with a value that advanced since its
	// attempt's first poll (Advanced); the others keep a value no one
	// writes any more, as an id does after its split moved.
	ReasonOnlyAdvanced OwnerReason = "only listing advanced since the restart"
	// ReasonSeveralCurrent: several subtasks list it with current-attempt
	// evidence and not exactly one advanced; the metrics contradict each
	// other.
	ReasonSeveralCurrent OwnerReason = "several current-attempt listings"
	// ReasonOutOfRange: only subtasks beyond the parallelism list it.
	ReasonOutOfRange OwnerReason = "only listed beyond the parallelism"
)

// PartitionOwner is the observed owner of one partition.
type PartitionOwner struct {
	KafkaPartition
	// Owner is the subtask that reads the partition, −1 when the metrics
	// do not determine it.
	Owner int
	// Candidates are the subtasks within the parallelism that list the
	// partition, ascending: with Owner −1, the ones it may be.
	Candidates []int
	Reason     OwnerReason
}

// Certain reports whether the owner is determined (Owner ≥ 0).
func (p PartitionOwner) Certain() bool { return p.Owner >= 0 }

// Owners decides every listed partition's owner from the entries'
// Evidence, sorted by cluster, topic, partition:
//
//   - listed under one subtask within the parallelism: that subtask
//     (every split's owner registers it once its attempt runs), unless it
//     restarted and none of its values shows the new attempt yet (in
//     AwaitingRefresh), or the entry is EvidenceUnconfirmed while any
//     subtask is Registering: then undetermined;
//   - listed under several: the one with EvidenceCurrent if exactly one
//     has it, else the one whose value advanced since its attempt's first
//     poll if exactly one did (an id left behind by a moved split keeps
//     its value, and the JobManager can list it for the first time after
//     the restart, when it looks current), else undetermined;
//   - listed only beyond the parallelism: undetermined, no candidates.
//
// An undetermined partition has Owner −1, never a guess.
func (o *KafkaSourceObservation) Owners() []PartitionOwner {
	type group struct {
		cands, current, advanced []int
		unconfirmed              bool // a candidate's entry is EvidenceUnconfirmed
	}
	settling := len(o.Registering) > 0
	groups := map[KafkaPartition]*group{}
	var order []KafkaPartition
	for _, s := range o.States {
		g := groups[s.KafkaPartition]
		if g == nil {
			g = &group{}
			groups[s.KafkaPartition] = g
			order = append(order, s.KafkaPartition)
		}
		if s.Evidence == EvidenceStale {
			continue
		}
		g.cands = append(g.cands, s.Subtask)
		switch s.Evidence {
		case EvidenceCurrent:
			g.current = append(g.current, s.Subtask)
			if s.Advanced {
				g.advanced = append(g.advanced, s.Subtask)
			}
		case EvidenceUnconfirmed:
			g.unconfirmed = true
		}
	}
	slices.SortFunc(order, comparePartitions)
	out := make([]PartitionOwner, 0, len(order))
	for _, p := range order {
		g := groups[p]
		slices.Sort(g.cands)
		slices.Sort(g.current)
		po := PartitionOwner{KafkaPartition: p, Owner: -1, Candidates: g.cands}
		switch {
		case len(g.cands) == 0:
			po.Reason = ReasonOutOfRange
		case len(g.cands) == 1 && slices.Contains(o.AwaitingRefresh, g.cands[0]):
			po.Reason = ReasonAwaitingRefresh
		case len(g.cands) == 1 && g.unconfirmed && settling:
			po.Reason = ReasonRegistering
		case len(g.cands) == 1:
			po.Owner, po.Reason = g.cands[0], ReasonOnlyListing
		case len(g.current) == 1:
			po.Owner, po.Reason = g.current[0], ReasonOnlyCurrent
		case len(g.advanced) == 1:
			po.Owner, po.Reason = g.advanced[0], ReasonOnlyAdvanced
		case len(g.current) > 1:
			po.Reason = ReasonSeveralCurrent
		default:
			po.Reason = ReasonNoCurrent
		}
		out = append(out, po)
	}
	return out
}

// Assignment returns the certain owner of every partition Owners
// determines, and in ambiguous (sorted) the listed partitions whose owner
// it does not; those are absent from owner.
func (o *KafkaSourceObservation) Assignment() (owner map[KafkaPartition]int, ambiguous []KafkaPartition) {
	owner = map[KafkaPartition]int{}
	for _, p := range o.Owners() {
		if p.Certain() {
			owner[p.KafkaPartition] = p.Owner
		} else {
			ambiguous = append(ambiguous, p.KafkaPartition)
		}
	}
	return owner, ambiguous
}

// BySubtask groups the certain owners per subtask, partitions sorted.
func (o *KafkaSourceObservation) BySubtask() map[int][]KafkaPartition {
	out := map[int][]KafkaPartition{}
	for _, p := range o.Owners() { // sorted
		if p.Certain() {
			out[p.Owner] = append(out[p.Owner], p.KafkaPartition)
		}
	}
	return out
}
