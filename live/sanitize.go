package live

import (
	"fmt"
	"math"
	"slices"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/bidi"
)

// The collectors validate what Flink and Kafka answer; the store checks the
// invariants its views rely on once more, so that a snapshot built some
// other way (a test, a replay, a collector bug) cannot make a view panic or
// fail to encode: a parallelism outside 0..2^15 marks the vertex broken
// without subtasks, and a non-finite number is unknown (NaN, shown as -1).

// finite returns f, or NaN when f is ±Inf.
func finite(f float64) float64 {
	if math.IsInf(f, 0) {
		return math.NaN()
	}
	return f
}

func finiteSubtask(st flink.SubtaskSnapshot) (flink.SubtaskSnapshot, bool) {
	out := st
	out.BusyRatio, out.BackPressuredRatio, out.IdleRatio = finite(st.BusyRatio), finite(st.BackPressuredRatio), finite(st.IdleRatio)
	out.RecordsInPerSecond, out.RecordsOutPerSecond = finite(st.RecordsInPerSecond), finite(st.RecordsOutPerSecond)
	changed := math.IsInf(st.BusyRatio, 0) || math.IsInf(st.BackPressuredRatio, 0) || math.IsInf(st.IdleRatio, 0) ||
		math.IsInf(st.RecordsInPerSecond, 0) || math.IsInf(st.RecordsOutPerSecond, 0)
	return out, changed
}

// vertexProblem says what is impossible about a vertex's numbers, "" when
// nothing.
func vertexProblem(v *flink.VertexSnapshot) string {
	switch {
	case v.Parallelism < 0 || v.Parallelism > maxParallelism:
		return fmt.Sprintf("parallelism %d outside 0..%d", v.Parallelism, maxParallelism)
	case v.MaxParallelism < 0 || v.MaxParallelism > maxParallelism:
		return fmt.Sprintf("maxParallelism %d outside 0..%d", v.MaxParallelism, maxParallelism)
	case len(v.Subtasks) > v.Parallelism:
		return fmt.Sprintf("%d subtasks for parallelism %d", len(v.Subtasks), v.Parallelism)
	}
	return ""
}

// sanitizeFlink returns snap, or a copy of it where impossible vertices are
// broken, non-finite figures unknown and bidi controls escaped. snap
// itself is never modified.
func sanitizeFlink(snap *flink.Snapshot) *flink.Snapshot {
	snap = escapeFlink(snap)
	var jobs []flink.JobSnapshot // copied on the first change
	for ji := range snap.Jobs {
		var vs []flink.VertexSnapshot
		for vi := range snap.Jobs[ji].Vertices {
			v := &snap.Jobs[ji].Vertices[vi]
			fixed, changed := sanitizeVertex(v)
			if !changed {
				continue
			}
			if vs == nil {
				vs = append([]flink.VertexSnapshot(nil), snap.Jobs[ji].Vertices...)
			}
			vs[vi] = fixed
		}
		if vs == nil {
			continue
		}
		if jobs == nil {
			jobs = append([]flink.JobSnapshot(nil), snap.Jobs...)
		}
		jobs[ji].Vertices = vs
	}
	if jobs == nil {
		return snap
	}
	out := *snap
	out.Jobs = jobs
	return &out
}

func sanitizeVertex(v *flink.VertexSnapshot) (flink.VertexSnapshot, bool) {
	if p := vertexProblem(v); p != "" {
		return flink.VertexSnapshot{ID: v.ID, Name: v.Name, Source: v.Source, Keyed: v.Keyed,
			Err: fmt.Errorf("impossible numbers: %s", p), Freshness: flink.Freshness{Stale: true}}, true
	}
	var subs []flink.SubtaskSnapshot
	for i, st := range v.Subtasks {
		fixed, changed := finiteSubtask(st)
		if !changed {
			continue
		}
		if subs == nil {
			subs = append([]flink.SubtaskSnapshot(nil), v.Subtasks...)
		}
		subs[i] = fixed
	}
	if subs == nil {
		return *v, false
	}
	out := *v
	out.Subtasks = subs
	return out, true
}

// sanitizeKafka returns snap, or a copy where non-finite rates are unknown
// (RateOK false), non-finite lag seconds unknown (0, TimeLagUnknown) and
// bidi controls escaped.
func sanitizeKafka(snap *kafka.Snapshot) *kafka.Snapshot {
	snap = escapeKafka(snap)
	bad := func(f float64) bool { return math.IsInf(f, 0) || math.IsNaN(f) }
	need := false
	for _, t := range snap.Topics {
		for _, p := range t.Partitions {
			need = need || bad(p.Rate)
		}
	}
	for _, g := range snap.Groups {
		for _, gp := range g.Partitions {
			need = need || bad(gp.LagSeconds)
		}
	}
	if !need {
		return snap
	}
	out := *snap
	out.Topics = make([]kafka.Topic, len(snap.Topics))
	for i, t := range snap.Topics {
		t.Partitions = append([]kafka.Partition(nil), t.Partitions...)
		for j := range t.Partitions {
			if p := &t.Partitions[j]; bad(p.Rate) {
				p.Rate, p.RateOK = 0, false
			}
		}
		out.Topics[i] = t
	}
	out.Groups = make([]kafka.Group, len(snap.Groups))
	for i, g := range snap.Groups {
		g.Partitions = append([]kafka.GroupPartition(nil), g.Partitions...)
		for j := range g.Partitions {
			if gp := &g.Partitions[j]; bad(gp.LagSeconds) {
				gp.LagSeconds, gp.LagKind = 0, kafka.TimeLagUnknown
			}
		}
		out.Groups[i] = g
	}
	return &out
}

// Backend texts (names, states, error messages) reach the store with any
// bidi control (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C)
// written out visibly (bidi.Escape): a job named with a right-to-left
// override cannot reorder a page, a sentence or an alert around it, and the
// reader sees that the name holds one. Errors keep what they wrap.

// flinkHasControl reports whether any text of snap holds a bidi control.
func flinkHasControl(snap *flink.Snapshot) bool {
	has := bidi.HasControl
	if has(snap.FlinkVersion) || errHas(snap.Err) {
		return true
	}
	for ji := range snap.Jobs {
		j := &snap.Jobs[ji]
		if has(j.Name) || has(string(j.State)) || errHas(j.Err) || j.Restored != nil && has(j.Restored.ExternalPath) {
			return true
		}
		for vi := range j.Vertices {
			v := &j.Vertices[vi]
			if has(v.Name) || has(v.BackpressureLevel) || errHas(v.Err) {
				return true
			}
			for _, st := range v.Subtasks {
				if has(string(st.Status)) || has(st.Endpoint) {
					return true
				}
			}
			if v.Kafka != nil {
				for _, ps := range slices.Concat(v.Kafka.States, v.Kafka.Unreported) {
					if has(ps.Topic) || has(ps.Cluster) || has(ps.Operator) {
						return true
					}
				}
			}
		}
	}
	return false
}

func errHas(err error) bool { return err != nil && bidi.HasControl(err.Error()) }

// escapeFlink returns snap, or a copy of it whose texts hold no bidi
// control (escaped). snap itself is never modified.
func escapeFlink(snap *flink.Snapshot) *flink.Snapshot {
	if !flinkHasControl(snap) {
		return snap
	}
	esc, escErr := bidi.Escape, bidi.EscapeError
	out := *snap
	out.FlinkVersion, out.Err = esc(snap.FlinkVersion), escErr(snap.Err)
	out.Jobs = make([]flink.JobSnapshot, len(snap.Jobs))
	for ji, j := range snap.Jobs {
		j.Name, j.State, j.Err = esc(j.Name), flink.JobState(esc(string(j.State))), escErr(j.Err)
		if j.Restored != nil {
			r := *j.Restored
			r.ExternalPath = esc(r.ExternalPath)
			j.Restored = &r
		}
		j.Vertices = append([]flink.VertexSnapshot(nil), j.Vertices...)
		for vi := range j.Vertices {
			v := &j.Vertices[vi]
			v.Name, v.BackpressureLevel, v.Err = esc(v.Name), esc(v.BackpressureLevel), escErr(v.Err)
			v.Subtasks = append([]flink.SubtaskSnapshot(nil), v.Subtasks...)
			for si := range v.Subtasks {
				st := &v.Subtasks[si]
				st.Status, st.Endpoint = flink.TaskState(esc(string(st.Status))), esc(st.Endpoint)
			}
			if v.Kafka != nil {
				k := *v.Kafka
				k.States = append([]flink.KafkaPartitionState(nil), k.States...)
				k.Unreported = append([]flink.KafkaPartitionState(nil), k.Unreported...)
				for _, states := range [][]flink.KafkaPartitionState{k.States, k.Unreported} {
					for i := range states {
						ps := &states[i]
						ps.Topic, ps.Cluster, ps.Operator = esc(ps.Topic), esc(ps.Cluster), esc(ps.Operator)
					}
				}
				v.Kafka = &k
			}
		}
		out.Jobs[ji] = j
	}
	return &out
}

// kafkaHasControl reports whether any text of snap holds a bidi control.
func kafkaHasControl(snap *kafka.Snapshot) bool {
	has := bidi.HasControl
	if errHas(snap.Err) {
		return true
	}
	for _, t := range snap.Topics {
		if has(t.Name) || errHas(t.Err) {
			return true
		}
		for _, p := range t.Partitions {
			if errHas(p.Err) {
				return true
			}
		}
	}
	for _, g := range snap.Groups {
		if has(g.Name) || has(g.State) || has(g.ProtocolType) || errHas(g.Err) {
			return true
		}
		for _, gp := range g.Partitions {
			if has(gp.Topic) || errHas(gp.Err) {
				return true
			}
		}
	}
	return false
}

// escapeKafka returns snap, or a copy of it whose texts hold no bidi
// control (escaped). snap itself is never modified.
func escapeKafka(snap *kafka.Snapshot) *kafka.Snapshot {
	if !kafkaHasControl(snap) {
		return snap
	}
	esc, escErr := bidi.Escape, bidi.EscapeError
	out := *snap
	out.Err = escErr(snap.Err)
	out.Topics = make([]kafka.Topic, len(snap.Topics))
	for i, t := range snap.Topics {
		t.Name, t.Err = esc(t.Name), escErr(t.Err)
		t.Partitions = append([]kafka.Partition(nil), t.Partitions...)
		for j := range t.Partitions {
			t.Partitions[j].Err = escErr(t.Partitions[j].Err)
		}
		out.Topics[i] = t
	}
	out.Groups = make([]kafka.Group, len(snap.Groups))
	for i, g := range snap.Groups {
		g.Name, g.State, g.ProtocolType, g.Err = esc(g.Name), esc(g.State), esc(g.ProtocolType), escErr(g.Err)
		g.Partitions = append([]kafka.GroupPartition(nil), g.Partitions...)
		for j := range g.Partitions {
			gp := &g.Partitions[j]
			gp.Topic, gp.Err = esc(gp.Topic), escErr(gp.Err)
		}
		out.Groups[i] = g
	}
	return &out
}

// shareTopicNames returns snap, or a copy of it in which the reader states
// of each Kafka source name a topic with one string per name. Flink's
// metric ids give every state its own copy of the name; a view of ten
// thousand partitions compares and hashes them many times over, and one
// shared string is read from cache where ten thousand are not. snap itself
// is never modified.
func shareTopicNames(snap *flink.Snapshot) *flink.Snapshot {
	need := false
	for ji := range snap.Jobs {
		for vi := range snap.Jobs[ji].Vertices {
			if k := snap.Jobs[ji].Vertices[vi].Kafka; k != nil && len(k.States) > 1 {
				need = true
			}
		}
	}
	if !need {
		return snap
	}
	out := *snap
	out.Jobs = slices.Clone(snap.Jobs)
	names := map[string]string{}
	for ji := range out.Jobs {
		j := &out.Jobs[ji]
		j.Vertices = slices.Clone(j.Vertices)
		for vi := range j.Vertices {
			v := &j.Vertices[vi]
			if v.Kafka == nil {
				continue
			}
			k := *v.Kafka
			k.States = slices.Clone(k.States)
			for i := range k.States {
				st := &k.States[i]
				if i > 0 && st.Topic == k.States[i-1].Topic {
					st.Topic = k.States[i-1].Topic
				} else if n, ok := names[st.Topic]; ok {
					st.Topic = n
				} else {
					names[st.Topic] = st.Topic
				}
			}
			v.Kafka = &k
		}
	}
	return &out
}
