package live

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Concern ranks how urgently a subtask, a vertex or a job needs a look.
// The overview lists its jobs worst first, and a vertex page's first screen
// leads with its worst subtask. Each step rests on figures the page shows:
//
//   - losing: a partition's reader is lost (Kafka deleted records it had not
//     read in the last minute, or its position is below the log start);
//   - retention: at the observed rates a position falls past the topic's
//     retention (its time to retention is known);
//   - growing: a partition's lag grows, or its reader stalls while behind;
//   - lagging: a partition is a minute or more behind (its lag time, or,
//     with that unknown, its lag in records at the colour step of a minute);
//   - watermark: the subtask's watermark holds its job's back (the why
//     panel's watermark line names it: its partition is idle, it reads
//     none, or the others wait for it);
//   - skewed: the "why is it hot?" panel names the subtask as a cause (a
//     hot, behind, keyed, backpressuring or slow-checkpoint line);
//   - ok: none of these.
//
// Stale figures rank as they read: the page marks them stale.
type Concern int

// Concerns, in rank order: a larger one is worse.
const (
	ConcernOK Concern = iota
	ConcernSkewed
	ConcernWatermark
	ConcernLagging
	ConcernGrowing
	ConcernRetention
	ConcernLosing
)

var concernNames = [...]string{"ok", "skewed", "watermark", "lagging", "growing", "retention", "losing"}

// String returns the concern's name in the JSON API.
func (c Concern) String() string {
	if c < 0 || int(c) >= len(concernNames) {
		return "ok"
	}
	return concernNames[c]
}

// MarshalJSON writes the concern's name.
func (c Concern) MarshalJSON() ([]byte, error) { return json.Marshal(c.String()) }

// UnmarshalJSON reads a concern's name; an unknown name is an error.
func (c *Concern) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	for i, n := range concernNames {
		if n == s {
			*c = Concern(i)
			return nil
		}
	}
	return fmt.Errorf("unknown concern %q", s)
}

// Level is the concern's colour step, 0–3, on the cells' scale: ok 0,
// skewed 1, watermark, lagging and growing 2, retention and losing 3.
func (c Concern) Level() int {
	return [...]int{0, 1, 2, 2, 2, 3, 3}[max(0, min(int(c), int(ConcernLosing)))]
}

// rowConcern is a source subtask's concern from its partitions' readings;
// skewed is set when the why panel names it.
func rowConcern(vv *VertexView, r *SubtaskRow, skewed bool) Concern {
	c := ConcernOK
	if skewed {
		c = ConcernSkewed
	}
	for i := range r.Partitions {
		p := &r.Partitions[i]
		switch {
		case p.Reading.State == ReaderLost:
			return ConcernLosing
		case p.TimeToRetentionSeconds >= 0:
			c = max(c, ConcernRetention)
		case (p.Reading.State == ReaderWarning || p.Reading.State == ReaderStalled):
			c = max(c, ConcernGrowing)
		case lagging(vv, p):
			c = max(c, ConcernLagging)
		}
	}
	return c
}

// lagging reports a partition a minute or more behind: by its lag time
// when known (a lower bound counts), else by its lag in records at the
// colour step a minute has.
func lagging(vv *VertexView, p *PartitionCell) bool {
	if p.LagKind.Known() {
		return p.LagSeconds >= vv.LagTimeSteps[1]
	}
	return p.Lag >= 0 && float64(p.Lag) >= vv.Thresholds[1]
}

// whySubjects marks, by index, the n subtasks the why panel's lines of
// kinds name; without kinds, those its lines name as a cause of load:
// hot, behind, receiving more than their share, where backpressure
// starts, or slowest to checkpoint. The subtasks a line names as waiting
// on another vertex (backpressured) or as idle are what the cause does,
// not the cause, and are not counted.
func whySubjects(w *WhyView, n int, kinds ...string) []bool {
	out := make([]bool, n)
	if w == nil {
		return out
	}
	if len(kinds) == 0 {
		kinds = []string{WhyHot, WhyBehind, WhyKeys, WhyRanges, WhyBackpressuring, WhySlowCheckpoint}
	}
	for _, l := range w.Lines {
		if !slices.Contains(kinds, l.Kind) {
			continue
		}
		for _, s := range l.Subtasks {
			if s >= 0 && s < n {
				out[s] = true
			}
		}
	}
	return out
}

// markConcerns sets every subtask's concern, the vertex's (its worst) and
// its Worst subtask: the one of the worst concern with the most records
// lost, then the furthest behind by colour step, then the lowest index,
// -1 when every subtask is ok. The steps, not the seconds, break ties so
// that two subtasks a second apart do not swap places at every poll.
func markConcerns(vv *VertexView) {
	named := whySubjects(vv.Why, len(vv.Subtasks))
	holds := whySubjects(vv.Why, len(vv.Subtasks), WhyWatermark)
	vv.Worst = -1
	best := [3]int64{}
	for i := range vv.Subtasks {
		r := &vv.Subtasks[i]
		if vv.Kafka {
			r.Concern = rowConcern(vv, r, named[i])
		} else if named[i] {
			r.Concern = ConcernSkewed
		}
		if holds[i] {
			r.Concern = max(r.Concern, ConcernWatermark)
		}
		if r.Concern == ConcernOK {
			continue
		}
		step := int64(-1)
		if r.LagKind.Known() {
			step = int64(lagStep(r.LagSeconds, vv.LagTimeSteps))
		}
		rank := [3]int64{int64(r.Concern), r.RecordsLost, step}
		if vv.Worst < 0 || rank[0] > best[0] || rank[0] == best[0] && (rank[1] > best[1] || rank[1] == best[1] && rank[2] > best[2]) {
			vv.Worst, best = r.Subtask, rank
		}
	}
	if vv.Worst >= 0 {
		vv.Concern = Concern(best[0])
	}
}

// LagTimeStep is the colour step (0–3) of a time behind on the cells'
// scale (LagTimeSteps: under 10 s, 1 min, 5 min, or more), for figures
// that are not cells: a job's or a vertex's furthest-behind subtask.
func LagTimeStep(seconds float64) int { return lagStep(seconds, lagTimeSteps) }

// lagStep is the colour step of a time behind.
func lagStep(seconds float64, steps [3]float64) int {
	for i, t := range steps {
		if seconds < t {
			return i
		}
	}
	return 3
}
