package live

import (
	"fmt"
	"math"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
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
// broken and non-finite figures unknown. snap itself is never modified.
func sanitizeFlink(snap *flink.Snapshot) *flink.Snapshot {
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
// (RateOK false) and non-finite lag seconds unknown (0, TimeLagUnknown).
func sanitizeKafka(snap *kafka.Snapshot) *kafka.Snapshot {
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
