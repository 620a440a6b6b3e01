package live

import (
	"maps"
	"slices"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
)

// Partitions that appeared around the latest restore or rescale, with no
// Kafka metadata read in between, may have been discovered on either side
// of it (lineage.unsure): before it, they were in the saved split lists and
// the restore dealt them out with the rest; after it, the discovery rule
// (KafkaSourceEnumerator.getSplitOwner) placed them at the new
// parallelism. The two layouts often differ, and then the readers Flink
// shows say which it was: once every reader is determined and Kafka lists
// the same partitions, a layout that is exactly one of the two settles the
// discovery time. The lineage keeps the answer until the next step, so that
// a later poll whose metric ids no longer decide every reader does not
// bring the doubt back.
//
// With more than one restore the earlier layout (partitions found at the
// previous parallelism, between two restores) is not one the restore model
// builds (RestoreInput.NewTopics are found after the last restore only),
// so only a history of two steps is settled.

// settledDiscovery is when the source discovered the partitions of an
// unsure step, as its observed readers showed it.
type settledDiscovery struct {
	// before is true when they were found before the step, false after.
	before bool
	// topics are the partition counts the readers showed: a later growth
	// is a new question.
	topics []assign.Topic
}

// discoveryFromReaders says when the partitions in.NewTopics adds to
// in.Topics were discovered, for a history of two steps: before the
// restore (the restore model over them all) or after it (in itself). ok is
// false unless both layouts are exact, they differ, and observed is exactly
// one of them.
func discoveryFromReaders(in assign.RestoreInput, observed map[assign.TopicPartition]int) (before, ok bool) {
	if len(in.History) != 2 || len(in.NewTopics) == 0 || observed == nil {
		return false, false
	}
	after, err := assign.Restore(in)
	if err != nil || !after.Exact {
		return false, false
	}
	in.Topics, in.NewTopics = maxTopics(in.Topics, in.NewTopics), nil
	found, err := assign.Restore(in)
	if err != nil || !found.Exact {
		return false, false
	}
	isAfter := maps.Equal(observed, ownerMap(after.Assignment))
	isBefore := maps.Equal(observed, ownerMap(found.Assignment))
	if isAfter == isBefore {
		return false, false
	}
	return isBefore, true
}

// settledReaders is the observed reader of every partition of topics when
// the metric ids determine each one and the partition set is settled with
// Kafka: its metadata lists every topic, every partition it lists has a
// reader, and the ids name none it lacks. nil otherwise.
func (s *picture) settledReaders(cluster string, v *flink.VertexSnapshot, topics []assign.Topic, oo observedOwners) map[assign.TopicPartition]int {
	if v.Kafka == nil || v.Stale || len(oo.candidates) > 0 || s.metadataAt(cluster, topics).IsZero() || len(s.unknownOf(cluster, v)) > 0 {
		return nil
	}
	observed := make(map[assign.TopicPartition]int, len(oo.owner))
	for kp, st := range oo.owner {
		if kp.Cluster != "" {
			return nil // DynamicKafkaSource: not this model
		}
		observed[assign.TopicPartition{Topic: s.resolve(cluster, kp.Topic), Partition: kp.Partition}] = st
	}
	all := assign.Partitions(topics)
	if len(all) != len(observed) {
		return nil
	}
	for _, tp := range all {
		if _, ok := observed[tp]; !ok {
			return nil
		}
	}
	return observed
}

// discoverySettled says when the partitions of an unsure step were
// discovered: as the lineage remembers it for this partition set, or as
// the readers show it now.
func (s *picture) discoverySettled(l *lineage, in assign.RestoreInput, cluster string, v *flink.VertexSnapshot, oo observedOwners) (before, ok bool) {
	grown := maxTopics(in.Topics, in.NewTopics)
	if l != nil && l.discovery != nil && slices.Equal(l.discovery.topics, grown) {
		return l.discovery.before, true
	}
	return discoveryFromReaders(in, s.settledReaders(cluster, v, grown, oo))
}

// settleDiscovery keeps in the source's lineage what its readers settle
// about an unsure step (discoverySettled).
func (s *Store) settleDiscovery(endpoint string, j *flink.JobSnapshot, v *flink.VertexSnapshot) {
	l := s.currentLineage(endpoint, j, v)
	if l == nil || !l.unsure || l.grewBefore || !(l.known || l.inferred != nil) || len(l.history) != 2 || l.p() != v.Parallelism || len(l.prevTopics) == 0 {
		return
	}
	cluster := s.clusterFor(endpoint, v)
	topics := s.sourceTopics(endpoint, j.ID, cluster, v)
	if len(s.unnamedTopics(cluster, topics)) > 0 {
		return
	}
	in := assign.RestoreInput{Topics: l.prevTopics, History: l.history, ConnectorLine: connectorLine(s.flink[endpoint].FlinkVersion)}
	in.NewTopics, _ = newTopics(l.prevTopics, topics)
	if before, ok := s.discoverySettled(l, in, cluster, v, s.owners[vertexKey{endpoint, j.ID, v.ID}]); ok {
		l.discovery = &settledDiscovery{before: before, topics: maxTopics(in.Topics, in.NewTopics)}
	}
}

// settleDiscoveries runs settleDiscovery for the running sources that read
// cluster, whose metadata just changed.
func (s *Store) settleDiscoveries(cluster string) {
	for key, l := range s.lineage {
		fs := s.flink[key.endpoint]
		if l.cluster != cluster || !l.unsure || fs == nil {
			continue
		}
		for i := range fs.Jobs {
			j := &fs.Jobs[i]
			if j.ID != l.jobID || j.Name != key.job || !j.State.Running() {
				continue
			}
			for k := range j.Vertices {
				if v := &j.Vertices[k]; v.Name == key.vertex && v.Kafka != nil && !v.Stale && allRunning(v) {
					s.settleDiscovery(key.endpoint, j, v)
				}
			}
		}
	}
}

// discoveryNote says what the readers settled about the n partitions of
// the step from history's last but one parallelism to its last.
func discoveryNote(l *lineage, history []int, n int, before bool) *Note {
	return &Note{Kind: NoteDiscoverySettled, Partitions: n, From: history[len(history)-2], To: history[len(history)-1],
		Before: before, Step: lastStep(l)}
}

// lastStep is the lineage's latest step: EventRescale, EventRestore (a
// restore, or the job first seen restored), "" when it shows none.
func lastStep(l *lineage) EventKind {
	if l != nil {
		for _, e := range slices.Backward(l.events) {
			switch e.Kind {
			case EventRescale:
				return EventRescale
			case EventRestore, EventFirstSeen:
				return EventRestore
			}
		}
	}
	return ""
}

// settleUnsure models an unsure step on the side of it that the readers
// settle (discoverySettled), and says so in a note; nil with mi unchanged
// when they do not.
func (s *picture) settleUnsure(mi *modelInput, l *lineage, cluster string, v *flink.VertexSnapshot, oo observedOwners) *Note {
	if !mi.unsure || mi.allGuess || len(mi.in.NewTopics) == 0 {
		return nil
	}
	before, ok := s.discoverySettled(l, mi.in, cluster, v, oo)
	if !ok {
		return nil
	}
	grown := maxTopics(mi.in.Topics, mi.in.NewTopics)
	_, n := newTopics(mi.in.Topics, grown)
	mi.unsure = false
	if before {
		mi.in.Topics, mi.in.NewTopics = grown, nil
	}
	return discoveryNote(l, mi.in.History, n, before)
}
