package live

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/internal/quote"
)

// A Flink restore (stop-with-savepoint, then a new submission) gives the job
// a new id, so links that name the old id go stale. The store follows which
// job replaced which, per endpoint: a job that has ended (see replaceable)
// is replaced by the next job of the same name to start after it. The
// replacements are remembered beyond Flink's own job history
// (jobstore.expiration-time, 1 h by default), so that an alert link to an
// old id still leads to the current run.

// MaxReplacements bounds the replacements a Store remembers; the oldest
// recorded is forgotten first.
const MaxReplacements = 1000

// ErrAmbiguous is returned when a name matches more than one job or vertex
// and the request does not say which.
var ErrAmbiguous = errors.New("ambiguous")

// Replacement says which job replaced an earlier one with the same name.
type Replacement struct {
	// OldID is the replaced job.
	OldID    string `json:"-"`
	Endpoint string `json:"endpoint"`
	// Name is the job name both share.
	Name string `json:"name"`
	// NewID is the job that replaced OldID, and At when it started.
	NewID string    `json:"id"`
	At    time.Time `json:"at"`
	// Chain lists NewID and the jobs that replaced it in turn, up to
	// Current, the latest of them.
	Chain   []string `json:"chain"`
	Current string   `json:"current"`
	// VertexName is the old job's vertex a vertex view is about, and
	// VertexID the vertex of NewID with that name ("" when NewID has none:
	// its job graph changed). Only vertex views and SuccessorVertex set
	// them.
	VertexName string `json:"vertexName,omitempty"`
	VertexID   string `json:"vertexId,omitempty"`
}

// VertexRef names a vertex of a job the store knows.
type VertexRef struct {
	Job      JobRef
	ID, Name string
}

// replaceable reports whether a job in this state has ended for good (or,
// SUSPENDED, until a new submission takes over): only such a job can have
// been replaced by a later one.
func replaceable(state flink.JobState) bool {
	switch state {
	case flink.JobFinished, flink.JobCanceled, flink.JobFailed, flink.JobSuspended:
		return true
	}
	return false
}

type succKey struct{ endpoint, id string }

type vertexName struct{ id, name string }

// replaced is one remembered replacement.
type replaced struct {
	name     string
	newID    string
	at       time.Time
	vertices []vertexName // the old job's, in plan order
	seq      uint64       // insertion order, for eviction
}

// succession is a Store's memory of replacements. It is guarded by the
// Store's mutex: written in UpdateFlink, read by the by-name lookups; the
// view builders read a copy (see snapshot).
type succession struct {
	byOld map[succKey]*replaced
	order []succEntry // oldest first; entries whose record changed are skipped
	seq   uint64
	max   int
}

type succEntry struct {
	key succKey
	seq uint64
}

func newSuccession(max int) *succession {
	return &succession{byOld: map[succKey]*replaced{}, max: max}
}

func (s *picture) succession() *succession { return s.succ }

// followSuccession records the replacements the snapshot shows.
func (s *Store) followSuccession(snap *flink.Snapshot) {
	sc := s.succession()
	byName := map[string][]*flink.JobSnapshot{}
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		byName[j.Name] = append(byName[j.Name], j)
	}
	for _, name := range sortedKeys(byName) {
		jobs := byName[name]
		sort.SliceStable(jobs, func(a, b int) bool {
			if !jobs[a].StartTime.Equal(jobs[b].StartTime) {
				return jobs[a].StartTime.Before(jobs[b].StartTime)
			}
			return jobs[a].ID < jobs[b].ID
		})
		for i, j := range jobs {
			k := succKey{snap.Endpoint, j.ID}
			if !replaceable(j.State) {
				// A job that runs again (a SUSPENDED job recovered under its
				// own id) is nobody's predecessor.
				if j.State.Running() {
					delete(sc.byOld, k)
				}
				continue
			}
			var next *flink.JobSnapshot
			for _, n := range jobs[i+1:] {
				if n.StartTime.After(j.StartTime) {
					next = n
					break
				}
			}
			if next == nil {
				continue
			}
			vs := make([]vertexName, len(j.Vertices))
			for x, v := range j.Vertices {
				vs[x] = vertexName{v.ID, v.Name}
			}
			sc.put(k, name, next.ID, next.StartTime, vs)
		}
	}
}

func (sc *succession) put(k succKey, name, newID string, at time.Time, vs []vertexName) {
	if r := sc.byOld[k]; r != nil && r.newID == newID {
		if len(vs) > 0 {
			r.vertices = vs
		}
		r.at = at
		return
	} else if r != nil && len(vs) == 0 {
		vs = r.vertices
	}
	sc.seq++
	sc.byOld[k] = &replaced{name: name, newID: newID, at: at, vertices: vs, seq: sc.seq}
	sc.order = append(sc.order, succEntry{k, sc.seq})
	for len(sc.byOld) > sc.max && len(sc.order) > 0 {
		e := sc.order[0]
		sc.order = sc.order[1:]
		if r := sc.byOld[e.key]; r != nil && r.seq == e.seq {
			delete(sc.byOld, e.key)
		}
	}
	if len(sc.order) > 2*sc.max {
		live := sc.order[:0:0]
		for _, e := range sc.order {
			if r := sc.byOld[e.key]; r != nil && r.seq == e.seq {
				live = append(live, e)
			}
		}
		sc.order = live
	}
}

// lookup finds the replacement of a job id, on the named endpoint or any.
func (sc *succession) lookup(endpoint, id string) (succKey, *replaced) {
	if endpoint != "" {
		k := succKey{endpoint, id}
		return k, sc.byOld[k]
	}
	var best succKey
	var found *replaced
	for k, r := range sc.byOld {
		if k.id == id && (found == nil || k.endpoint < best.endpoint) {
			best, found = k, r
		}
	}
	return best, found
}

// replacement builds the Replacement of a job, following the chain of
// later replacements.
func (s *picture) replacement(endpoint, jobID string) (Replacement, bool) {
	sc := s.succession()
	k, r := sc.lookup(endpoint, jobID)
	if r == nil {
		return Replacement{}, false
	}
	rep := Replacement{OldID: jobID, Endpoint: k.endpoint, Name: r.name, NewID: r.newID, At: r.at}
	seen := map[string]bool{jobID: true}
	for id := r.newID; !seen[id]; {
		seen[id] = true
		rep.Chain = append(rep.Chain, id)
		next := sc.byOld[succKey{k.endpoint, id}]
		if next == nil {
			break
		}
		id = next.newID
	}
	rep.Current = rep.Chain[len(rep.Chain)-1]
	return rep, true
}

// replacedBy is the Replacement of a job for its views, nil when it was not
// replaced.
func (s *picture) replacedBy(endpoint, jobID string) *Replacement {
	rep, ok := s.replacement(endpoint, jobID)
	if !ok {
		return nil
	}
	return &rep
}

// markReplaced sets a vertex view's ReplacedBy, with the successor's vertex
// of the same name.
func (s *picture) markReplaced(vv *VertexView) {
	rep, ok := s.replacement(vv.Endpoint, vv.JobID)
	if !ok {
		return
	}
	rep.VertexName = vv.Name
	rep.VertexID, _ = s.vertexIDByName(rep.Endpoint, rep.NewID, vv.Name)
	vv.ReplacedBy = &rep
}

// vertexIDByName finds the vertex of a job (listed by Flink, or remembered
// as replaced) with the given name; "" and false when it has none or
// several.
func (s *picture) vertexIDByName(endpoint, jobID, name string) (string, bool) {
	var vs []vertexName
	if _, j := s.findJob(endpoint, jobID); j != nil {
		for _, v := range j.Vertices {
			vs = append(vs, vertexName{v.ID, v.Name})
		}
	} else if _, r := s.succession().lookup(endpoint, jobID); r != nil {
		vs = r.vertices
	}
	id, n := "", 0
	for _, v := range vs {
		if v.name == name {
			id, n = v.id, n+1
		}
	}
	return id, n == 1
}

// Successor returns what replaced a job: the job that started after it
// ended with the same name, and the chain of later replacements up to the
// latest. It answers from memory also after Flink has forgotten the old job
// (up to MaxReplacements replacements are kept). endpoint "" means any.
func (s *State) Successor(endpoint, jobID string) (Replacement, bool) {
	return s.replacement(endpoint, jobID)
}

// SuccessorVertex is Successor for a vertex of the replaced job: it also
// names the vertex (VertexName, as the old job called it) and finds the
// vertex of the successor with that name (VertexID, "" when the job graph
// changed). The bool is false when the job was not replaced; an unknown
// vertex id leaves VertexName "".
func (s *State) SuccessorVertex(endpoint, jobID, vertexID string) (Replacement, bool) {
	rep, ok := s.replacement(endpoint, jobID)
	if !ok {
		return rep, false
	}
	var vs []vertexName
	if _, j := s.findJob(rep.Endpoint, jobID); j != nil {
		for _, v := range j.Vertices {
			vs = append(vs, vertexName{v.ID, v.Name})
		}
	} else if _, r := s.succession().lookup(rep.Endpoint, jobID); r != nil {
		vs = r.vertices
	}
	for _, v := range vs {
		if v.id == vertexID {
			rep.VertexName = v.name
			rep.VertexID, _ = s.vertexIDByName(rep.Endpoint, rep.NewID, v.name)
			break
		}
	}
	return rep, true
}

// CurrentRun returns the current run of the jobs with a name: the RUNNING
// one, or the latest started when several run (two submissions of one
// program), else the latest started in any state. endpoint "" means any,
// but a name found on several endpoints is ErrAmbiguous: the caller must
// name the endpoint. ErrNotFound when no listed job has the name.
func (s *State) CurrentRun(endpoint, jobName string) (JobRef, error) {
	_, j, err := s.currentRun(endpoint, jobName)
	return j, err
}

func (s *picture) currentRun(endpoint, jobName string) (*flink.JobSnapshot, JobRef, error) {
	var (
		best    *flink.JobSnapshot
		bestEP  string
		onEndps []string
	)
	better := func(a, b *flink.JobSnapshot) bool { // a is a better current run than b
		if ar, br := a.State.Running(), b.State.Running(); ar != br {
			return ar
		}
		if !a.StartTime.Equal(b.StartTime) {
			return a.StartTime.After(b.StartTime)
		}
		return a.ID > b.ID
	}
	for _, name := range sortedKeys(s.flink) {
		if endpoint != "" && name != endpoint {
			continue
		}
		found := false
		for i := range s.flink[name].Jobs {
			j := &s.flink[name].Jobs[i]
			if j.Name != jobName {
				continue
			}
			found = true
			if best == nil || (bestEP == name && better(j, best)) {
				best, bestEP = j, name
			}
		}
		if found {
			onEndps = append(onEndps, name)
		}
	}
	switch {
	case best == nil && endpoint != "":
		return nil, JobRef{}, fmt.Errorf("job named %s on endpoint %s: %w", quote.Clip(jobName), quote.Clip(endpoint), ErrNotFound)
	case best == nil:
		return nil, JobRef{}, fmt.Errorf("job named %s: %w", quote.Clip(jobName), ErrNotFound)
	case len(onEndps) > 1:
		return nil, JobRef{}, fmt.Errorf("job name %s is on endpoints %s: add ?endpoint= to say which: %w",
			quote.Clip(jobName), strings.Join(onEndps, ", "), ErrAmbiguous)
	}
	return best, JobRef{bestEP, best.ID, best.Name, best.State}, nil
}

// VertexByName resolves a vertex of a job's current run (see CurrentRun)
// by its name. ErrNotFound when the run has no vertex of that name,
// ErrAmbiguous when it has several.
func (s *State) VertexByName(endpoint, jobName, vertexName string) (VertexRef, error) {
	j, ref, err := s.currentRun(endpoint, jobName)
	if err != nil {
		return VertexRef{}, err
	}
	var ids []string
	for _, v := range j.Vertices {
		if v.Name == vertexName {
			ids = append(ids, v.ID)
		}
	}
	switch len(ids) {
	case 0:
		return VertexRef{}, fmt.Errorf("vertex named %s in job %s (%s): %w", quote.Clip(vertexName), quote.Clip(jobName), ref.ID, ErrNotFound)
	case 1:
		return VertexRef{Job: ref, ID: ids[0], Name: vertexName}, nil
	}
	return VertexRef{}, fmt.Errorf("job %s (%s) has %d vertices named %s (%s): link to one by id: %w",
		quote.Clip(jobName), ref.ID, len(ids), quote.Clip(vertexName), strings.Join(ids, ", "), ErrAmbiguous)
}
