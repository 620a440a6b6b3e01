package flink

import (
	"context"
	"log/slog"
	"time"
)

// An ended job (FINISHED after stop-with-savepoint, CANCELED, FAILED) has
// no metrics, but Flink keeps its job graph for jobstore.expiration-time.
// The links copied while it ran name its vertices, so the collector reads
// the vertices of an ended job once — only of one whose name a running
// job shares (the run a restore replaced), at most MaxEndedDetailsPerPoll
// a poll — and carries them from poll to poll: an ended job does not
// change.

// MaxEndedDetailsPerPoll bounds the ended jobs whose details one poll
// asks for.
const MaxEndedDetailsPerPoll = 4

// carryEnded returns the ended job with what the previous poll knew of it
// (its vertices, or that asking failed), and whether that is final: no
// request is needed.
func carryEnded(base JobSnapshot, prev *JobSnapshot) (JobSnapshot, bool) {
	if prev == nil || prev.State != base.State || (len(prev.Vertices) == 0 && !prev.endedAsked) {
		return base, false
	}
	base.Vertices, base.Restored, base.NumRestarts = prev.Vertices, prev.Restored, prev.NumRestarts
	base.Failures, base.failuresRead = prev.Failures, prev.failuresRead
	base.Freshness, base.endedAsked = prev.Freshness, true
	return base, true
}

// endedJob reads an ended job's vertices (names, parallelisms, which are
// sources and keyed) from its details, once: with no metrics asked for.
// A failure leaves the job without vertices, as before, and is not asked
// again.
func (c *Collector) endedJob(ctx context.Context, log *slog.Logger, js JobSnapshot, at time.Time) JobSnapshot {
	js.endedAsked = true
	log = log.With("job_id", js.ID, "state", js.State)
	job, plan, err := c.jobDetails(ctx, js.ID)
	if err != nil {
		log.Debug("flink details of an ended job failed; listing it without vertices", "error", err)
		return js
	}
	sources, keyed := map[string]bool{}, map[string]bool{}
	for _, id := range SourceVertices(plan) {
		sources[id] = true
	}
	for _, id := range KeyedVertices(plan) {
		keyed[id] = true
	}
	inputs, sqlKeys := PlanInputs(plan), SQLKeys(plan)
	for _, v := range job.Vertices {
		if err := validateVertex(v); err != nil {
			log.Warn("flink vertex of an ended job has impossible numbers; leaving it out", "vertex_id", v.ID, "error", err)
			continue
		}
		js.Vertices = append(js.Vertices, VertexSnapshot{
			ID: v.ID, Name: v.Name, Parallelism: v.Parallelism, MaxParallelism: v.MaxParallelism,
			Source: sources[v.ID], Keyed: keyed[v.ID], Inputs: inputs[v.ID], SQL: sqlKeys[v.ID],
			Freshness: Freshness{UpdatedAt: at},
		})
	}
	return js
}
