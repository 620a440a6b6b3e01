package live

import (
	"slices"
	"sort"
	"time"

	"github.com/skewscope/skewscope/collectors/flink"
)

// Flink lists a job that has ended (FINISHED after stop-with-savepoint,
// CANCELED, FAILED) for jobstore.expiration-time, but the collector asks
// nothing more of it: an ended job has no metrics. So that its job and
// vertex pages (the links copied into tickets before a restore) still
// answer with its vertices, the store keeps what Flink last reported of
// each job while it ran, and puts those vertices into the snapshot while
// Flink lists the job as ended.

// MaxEndedRuns bounds the ended runs of one job name whose last vertex
// data a Store keeps; the ones that started earliest are dropped first.
const MaxEndedRuns = 5

// lastRun is what Flink last reported of a job while it ran.
type lastRun struct {
	name     string
	start    time.Time
	vertices []flink.VertexSnapshot
	restored *flink.RestoreInfo
	restarts int64
	at       time.Time // the poll that reported it
	ended    bool
}

// keepLastRuns records the vertices of the running jobs and puts the last
// run's into the ended jobs the snapshot lists (with no vertices, or with
// the bare vertices of their job graph).
// It returns the snapshot to store (a copy when it filled any job) and
// drops the runs of jobs the endpoint no longer lists.
func (s *Store) keepLastRuns(snap *flink.Snapshot) *flink.Snapshot {
	listed := make(map[string]bool, len(snap.Jobs))
	var jobs []flink.JobSnapshot // copied on the first fill
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		listed[j.ID] = true
		k := succKey{snap.Endpoint, j.ID}
		switch {
		case j.State.Running() && len(j.Vertices) > 0 && j.Unlisted == 0:
			s.runs[k] = &lastRun{name: j.Name, start: j.StartTime, vertices: j.Vertices, restored: j.Restored,
				restarts: j.NumRestarts, at: snap.CollectedAt}
		case !j.State.Running():
			// The collector lists an ended job's vertices without figures
			// (or none at all); the last run has them.
			r := s.runs[k]
			if r == nil {
				continue
			}
			if !r.ended { // replaced, not changed: views read copies of the map
				c := *r
				c.ended = true
				r = &c
				s.runs[k] = r
			}
			if jobs == nil {
				jobs = slices.Clone(snap.Jobs)
			}
			jobs[i].Vertices = endedVertices(r)
			if jobs[i].Restored == nil {
				jobs[i].Restored = r.restored
			}
			if jobs[i].NumRestarts < 0 {
				jobs[i].NumRestarts = r.restarts
			}
		}
	}
	for k := range s.runs {
		if k.endpoint == snap.Endpoint && !listed[k.id] {
			delete(s.runs, k)
		}
	}
	s.boundEndedRuns(snap.Endpoint)
	if jobs == nil {
		return snap
	}
	out := *snap
	out.Jobs = jobs
	return &out
}

// endedVertices are a run's last vertices marked as what they are: not
// refreshed since the job ended.
func endedVertices(r *lastRun) []flink.VertexSnapshot {
	vs := slices.Clone(r.vertices)
	for i := range vs {
		if vs[i].UpdatedAt.IsZero() {
			vs[i].UpdatedAt = r.at
		}
		vs[i].Stale = true
	}
	return vs
}

// boundEndedRuns keeps at most MaxEndedRuns ended runs per job name on an
// endpoint, the latest started.
func (s *Store) boundEndedRuns(endpoint string) {
	byName := map[string][]succKey{}
	for k, r := range s.runs {
		if k.endpoint == endpoint && r.ended {
			byName[r.name] = append(byName[r.name], k)
		}
	}
	for _, ks := range byName {
		if len(ks) <= MaxEndedRuns {
			continue
		}
		sort.Slice(ks, func(a, b int) bool {
			ra, rb := s.runs[ks[a]], s.runs[ks[b]]
			if !ra.start.Equal(rb.start) {
				return ra.start.After(rb.start)
			}
			return ks[a].id > ks[b].id
		})
		for _, k := range ks[MaxEndedRuns:] {
			delete(s.runs, k)
		}
	}
}

// endedAt is when Flink last reported the figures of an ended job the
// store shows from its last run; false for any other job.
func (s *picture) endedAt(endpoint, jobID string) (time.Time, bool) {
	r := s.runs[succKey{endpoint, jobID}]
	if r == nil || !r.ended {
		return time.Time{}, false
	}
	return r.at, true
}
