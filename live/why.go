package live

import (
	"cmp"
	"errors"
	"slices"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/plan"
)

// The "why is it hot?" of a vertex page: the causes of a vertex's uneven
// load that its figures support, hottest first. Each line names its
// subjects and carries every figure it rests on with that figure's
// provenance; a line whose figures are not all known is left out. The web
// builder writes the sentences.

// Kinds of WhyLine.
const (
	// WhyHot: a source subtask carries a large share of the records its
	// vertex's partitions produce.
	WhyHot = "hot-partitions"
	// WhyBehind: a source subtask that is not hot reads less than its
	// partitions produce.
	WhyBehind = "behind"
	// WhyIdle: source subtasks read no partition.
	WhyIdle = "idle-subtasks"
	// WhyKeys: a keyed subtask receives more than its key groups' share of
	// the records: the imbalance is in the keys.
	WhyKeys = "keyed-keys"
	// WhyRanges: a keyed subtask receives what its larger key-group range
	// predicts: the imbalance is in the range sizes.
	WhyRanges = "keyed-ranges"
	// WhyKeyedIdle: keyed subtasks receive no records.
	WhyKeyedIdle = "keyed-idle"
	// WhyBackpressured: the vertex's subtasks wait to send downstream.
	WhyBackpressured = "backpressured"
	// WhyBackpressuring: busy subtasks of the vertex, where the
	// backpressure of a vertex that sends to it starts.
	WhyBackpressuring = "backpressuring"
	// WhySlowCheckpoint: a subtask's checkpoints take much longer than
	// the others' (VertexCheckpoint.Slowest), with its share of the
	// vertex's state when the state sizes are known.
	WhySlowCheckpoint = "slow-checkpoint"
	// WhyWatermark: the vertex's watermark is held back (VertexView.EventTime
	// names the holder and the cause), or watermark alignment pauses some
	// of a source's partitions (Partitions, with FactAheadMs).
	WhyWatermark = "watermark"
	// WhyBalanced: no subtask stands out.
	WhyBalanced = "balanced"
	// WhyUnknown: the figures needed to say anything are not known yet.
	WhyUnknown = "unknown"
)

// Names of WhyFact.
const (
	// FactAheadMs is how far the paused partitions' watermarks run ahead
	// of the source's lowest, the most of them (computed from observed
	// split watermarks).
	FactAheadMs = "aheadMs"
	// FactWatermarkLag is the vertex's event-time lag, now − its lowest
	// watermark (computed); absent while it has none.
	FactWatermarkLag = "watermarkLagSeconds"
	// FactShare is the subjects' part (0–1) of the vertex's records:
	// produced on its partitions (sources) or received (keyed).
	FactShare = "share"
	// FactPartitionsShare is the named partitions' part (0–1) of the
	// records produced, when the subject reads more partitions than those.
	FactPartitionsShare = "partitionsShare"
	// FactProduced is the records/s produced on the subject's partitions.
	FactProduced = "produced"
	// FactTotal is the records/s produced on all the vertex's partitions
	// (sources) or received by all its subtasks (keyed).
	FactTotal = "total"
	// FactRead is the records/s the subject reads (sources: the reader's
	// records in, records out where Flink reports no records in).
	FactRead = "read"
	// FactRecordsIn is the records/s the subject receives (keyed).
	FactRecordsIn = "recordsIn"
	// FactBusy is the subject's busy ratio (0–1), the highest of several.
	FactBusy = "busy"
	// FactBackPressured is the highest backpressured ratio (0–1) of the
	// subjects.
	FactBackPressured = "backPressured"
	// FactLagGrowth is produced − read, records/s, estimated; 0 when the
	// subtask keeps up.
	FactLagGrowth = "lagGrowth"
	// FactOnePartition is the rate of the one partition that makes the
	// subject hot: a partition is read by one subtask, so no parallelism
	// brings the subject below it.
	FactOnePartition = "onePartition"
	// FactUnknownRates counts the vertex's partitions whose produce rate
	// is not known yet (a partition needs two Kafka polls): they are left
	// out of the shares.
	FactUnknownRates = "unknownRates"
	// FactPartitions is how many partitions the vertex reads.
	FactPartitions = "partitions"
	// FactKeyGroupShare is the subject's key groups over maxParallelism.
	FactKeyGroupShare = "keyGroupShare"
	// FactRangeMin and FactRangeMax are the smallest and largest key-group
	// range of the vertex's subtasks.
	FactRangeMin = "rangeMin"
	FactRangeMax = "rangeMax"
	// FactMinShare and FactMaxShare are the smallest and largest share of
	// any subtask (balanced lines).
	FactMinShare = "minShare"
	FactMaxShare = "maxShare"
	// FactPeerBusy and FactPeerBackPressured are the other vertex's
	// figures on a backpressure line: the busy ratio of its busiest
	// subtask, and its highest backpressured ratio.
	FactPeerBusy          = "peerBusy"
	FactPeerBackPressured = "peerBackPressured"
	// FactCheckpointMs is the subject's checkpoint duration (sync +
	// async, ms) and FactOthersCheckpointMs the mean of the other
	// subtasks'; FactSlowFactor the one over the other.
	FactCheckpointMs       = "checkpointMs"
	FactOthersCheckpointMs = "othersCheckpointMs"
	FactSlowFactor         = "slowFactor"
	// FactStateShare is the subject's part (0–1) of the vertex's
	// checkpointed state.
	FactStateShare = "stateShare"
	// FactCheckpointID is the checkpoint the figures are of.
	FactCheckpointID = "checkpointId"
)

// Peer relations: how a backpressure line knows the other vertex is
// downstream or upstream.
const (
	RelDownstream = "downstream" // the job plan's edges lead from the vertex to it
	RelUpstream   = "upstream"   // the job plan's edges lead from it to the vertex
	RelLater      = "later"      // after the vertex in the plan's order; no edges known
	RelEarlier    = "earlier"    // before the vertex in the plan's order; no edges known
)

// Missing figures of a WhyUnknown line.
const (
	MissingPartitions = "partitions" // no partition is listed by Flink's metric ids
	MissingRates      = "rates"      // the produce rate of every partition (two Kafka polls)
	MissingRecordsIn  = "recordsIn"  // records in per subtask (Flink's metrics)
	MissingKeyGroups  = "keyGroups"  // maxParallelism unknown
)

// Thresholds of the lines.
const (
	// hotFactor: a subtask is hot when it carries this many times the
	// mean per subtask.
	hotFactor = 1.5
	// namedShare: a hot line names the subtask's partitions, hottest
	// first, until they carry this part of its load (at most maxNamed).
	namedShare = 0.75
	maxNamed   = 3
	// busyHigh is the busy ratio of a subtask that holds others up (the
	// meter's "high").
	busyHigh = 0.8
	// bpLow is Flink's boundary between "ok" and "low" backpressure.
	bpLow = 0.1
	// maxHot and maxBehind bound the lines of one kind; the last says how
	// many more subtasks are like it.
	maxHot    = 3
	maxBehind = 1
	// maxLines bounds the panel.
	maxLines = 6
	// maxTargetSteps bounds the parallelisms tried for a target.
	maxTargetSteps = 64
	// maxRestoreWork bounds partitions × candidates for restore-model
	// targets (a restore model of 10,000 partitions takes about 5 ms).
	maxRestoreWork = 20_000
)

// WhyView is the vertex's "why is it hot?".
type WhyView struct {
	Lines []WhyLine `json:"lines"`
}

// WhyLine is one cause, with the figures it rests on.
type WhyLine struct {
	Kind string `json:"kind"`
	// Subtasks are the subjects, hottest first.
	Subtasks []int `json:"subtasks"`
	// More counts further subtasks with this cause that have no line.
	More int `json:"more,omitempty"`
	// Partitions are the named partitions with their produce rates
	// (observed), hottest first.
	Partitions []WhyPartition `json:"partitions,omitempty"`
	Facts      []WhyFact      `json:"facts,omitempty"`
	// Placement is how Flink's rules put the partitions there (computed).
	Placement *WhyPlacement `json:"placement,omitempty"`
	// KeyGroups is the subject's key-group range (computed).
	KeyGroups *KeyGroupSpan `json:"keyGroups,omitempty"`
	// Peer is the other vertex of a backpressure line.
	Peer *WhyPeer `json:"peer,omitempty"`
	// Target is a parallelism that removes this cause in the layout the
	// planner link models (PlannerModelOf: a restore from a savepoint taken
	// now), 0 when none is computed.
	Target int `json:"targetParallelism,omitempty"`
	// Rescale is how a hot line's Target was judged, or why there is none.
	Rescale *WhyRescale `json:"rescale,omitempty"`
	// Missing names what a WhyUnknown line lacks.
	Missing []string `json:"missing,omitempty"`
	// Holder is what holds a WhyWatermark line's watermark back, nil when
	// the line is only about paused partitions.
	Holder *WatermarkHolder `json:"holder,omitempty"`
}

// WhyPartition is a named partition and its produce rate (records/s).
type WhyPartition struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Rate      float64 `json:"rate"`
}

// WhyFact is one figure of a line with its provenance.
type WhyFact struct {
	Name  string     `json:"name"`
	Value float64    `json:"value"`
	Kind  Provenance `json:"kind"` // Observed, Estimated or Computed
}

// WhyPlacement says which of Flink's rules put partitions where they are.
type WhyPlacement struct {
	// Model is ModeFresh (KafkaSourceEnumerator.getSplitOwner) or
	// ModeRestore (the restore model over History).
	Model       Mode `json:"model"`
	Parallelism int  `json:"parallelism"`
	// Topics are the topics involved with their start indexes (fresh).
	Topics []WhyTopic `json:"topics,omitempty"`
	// Reached are the subtasks the topics' partitions reach (fresh, idle
	// lines).
	Reached []int `json:"reached,omitempty"`
	// History is the restore model's parallelism history (restore).
	History []int `json:"history,omitempty"`
}

// WhyTopic is a topic's partition count and start index at the
// placement's parallelism.
type WhyTopic struct {
	Name       string `json:"name"`
	Partitions int    `json:"partitions"`
	Start      int    `json:"start"`
}

// Reasons a hot line has no restore target (WhyRescale.None).
const (
	// NoTargetHistory: the source was restored before skewscope saw it and
	// its parallelism history is not known, so no restore is modelled.
	NoTargetHistory = "history"
	// NoTargetPartition: a named partition alone needs more than a source
	// subtask's capacity; a partition is read by one subtask, so no
	// parallelism carries it.
	NoTargetPartition = "partition"
	// NoTargetApart: no restore up to the limit puts the partitions on
	// different subtasks.
	NoTargetApart = "apart"
	// NoTargetCapacity: where a restore parts them, its busiest subtask
	// needs more than its capacity, up to the limit.
	NoTargetCapacity = "capacity"
	// NoTargetPlanner: the source could run at more subtasks, but the
	// planner draws at most plan.MaxSubtasks (parallelism and target
	// together), so no target above the current parallelism is judged.
	NoTargetPlanner = "planner"
)

// WhyRescale is a hot line's rescale target, judged on the path a running
// job takes: a restore from a savepoint (or checkpoint) taken now, under
// the restore model over the source's history, at the smallest p above
// the current one that puts the named partitions on different subtasks
// and whose busiest subtask the capacity model carries.
type WhyRescale struct {
	// History is the parallelism history the restore continues, ending at
	// the current parallelism.
	History []int `json:"history"`
	// Target is the parallelism, 0 when none up to Limit.
	Target int `json:"targetParallelism"`
	// Limit is the highest parallelism judged: the source's max
	// parallelism and partition count, within the model's work bounds.
	Limit int `json:"limit"`
	// Capacity is what a source subtask processes at 100 % busy, records/s,
	// estimated from its busy ratios as the planner does; 0 unknown.
	Capacity float64 `json:"capacity"`
	// Utilization is the busiest subtask's predicted share of Capacity at
	// Target (at Apart when there is no Target), Busiest that subtask;
	// -1 unknown.
	Utilization float64 `json:"utilization"`
	Busiest     int     `json:"busiestSubtask"`
	// None says why there is no Target (NoTarget*), "" when there is one.
	None string `json:"none,omitempty"`
	// Apart is the smallest parallelism at which a restore parts the
	// partitions, whatever its load; 0 none.
	Apart int `json:"apart,omitempty"`
	// Partition is the partition that alone needs more than Capacity
	// (NoTargetPartition).
	Partition *WhyPartition `json:"partition,omitempty"`
	// Fresh is the smallest parallelism whose fresh start (no source
	// state) parts them and carries the load, offered only when no restore
	// does, with FreshUtilization its busiest subtask's share; 0 none.
	Fresh            int     `json:"freshParallelism,omitempty"`
	FreshUtilization float64 `json:"freshUtilization,omitempty"`
	// Lag is the records of the source's partitions not read yet
	// (observed), which a fresh start from the latest offsets skips; -1
	// unknown.
	Lag int64 `json:"lag"`
}

// WhyPeer is the other vertex of a backpressure line.
type WhyPeer struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Relation is RelDownstream, RelUpstream, RelLater or RelEarlier.
	Relation string `json:"relation"`
	// Via names the backpressured vertices between the two (downstream).
	Via []string `json:"via,omitempty"`
	// Subtask is the peer's busiest subtask, -1 when the line names none.
	Subtask int `json:"subtask"`
	// Culprit is true when the peer is busy and not backpressured itself:
	// by Flink's rule, where the backpressure starts.
	Culprit bool `json:"culprit"`
}

// PlannerModel is the layout a planner link of a Kafka source models and
// its targets are judged under: the topics with the partition counts its
// metric ids show, and the parallelism history as the vertex page's
// restore model has it. A running job is rescaled from a savepoint or a
// checkpoint, so every target is the restore from one taken now:
// History + the target. A fresh start is only ever offered as such.
type PlannerModel struct {
	Topics []assign.Topic
	// Restore is true: targets are judged as a restore (kept for the
	// planner link's mode).
	Restore bool
	// Unknown is true when the source was restored before skewscope saw it
	// and its history is not known: no restore layout can be computed.
	Unknown bool
	// History ends at the current parallelism: the fresh start's alone
	// when the job was not restored, else the restore model's history.
	History []int
	// layouts keeps the restore model's layouts by parallelism, so that
	// the lines of one view share them.
	layouts map[int]modelLayout
}

type modelLayout struct {
	a         assign.Assignment
	uncertain []assign.TopicPartition
	err       error
}

// PlannerModelOf returns the planner model of a Kafka source's view.
func PlannerModelOf(vv *VertexView) PlannerModel {
	counts := map[string]int{}
	for _, r := range vv.Subtasks {
		// A row's cells come grouped by topic: each run's highest
		// partition is looked up once.
		for k := 0; k < len(r.Partitions); {
			t, top := r.Partitions[k].Topic, 0
			for ; k < len(r.Partitions) && r.Partitions[k].Topic == t; k++ {
				top = max(top, int(r.Partitions[k].Partition)+1)
			}
			counts[t] = max(counts[t], top)
		}
	}
	m := PlannerModel{Restore: true, History: []int{vv.Parallelism}, layouts: map[int]modelLayout{}}
	for _, t := range vv.Topics {
		m.Topics = append(m.Topics, assign.Topic{Name: t, Partitions: counts[t]})
	}
	pr := vv.Prediction
	switch {
	case pr != nil && (pr.Mode == ModeRestore || pr.Mode == ModeInferred) && len(pr.History) > 1:
		m.History = slices.Clone(pr.History)
	case vv.Restored != nil && (pr == nil || pr.Mode != ModeFresh):
		m.Unknown = true
	}
	return m
}

func (m PlannerModel) partitions() int {
	n := 0
	for _, t := range m.Topics {
		n += t.Partitions
	}
	return n
}

// layout is the restore model's assignment at parallelism p (History + p)
// and its uncertain partitions.
func (m PlannerModel) layout(p int) (assign.Assignment, []assign.TopicPartition, error) {
	if m.Unknown {
		return assign.Assignment{}, nil, errors.New("the source's parallelism history is not known")
	}
	if l, ok := m.layouts[p]; ok {
		return l.a, l.uncertain, l.err
	}
	rr, err := assign.Restore(assign.RestoreInput{Topics: m.Topics, History: append(slices.Clone(m.History), p)})
	if m.layouts != nil {
		m.layouts[p] = modelLayout{rr.Assignment, rr.Uncertain, err}
	}
	return rr.Assignment, rr.Uncertain, err
}

// targetLimit is the highest target considered from parallelism p: the
// source's max parallelism (Flink's default for p when not reported) and
// its partition count, beyond which subtasks only idle, and the most the
// planner a target links to draws (plan.MaxSubtasks, parallelism and
// target together).
func (m PlannerModel) targetLimit(p, maxP int) int {
	return min(m.sourceLimit(p, maxP), plan.MaxSubtasks-p)
}

// sourceLimit is targetLimit without the planner's bound.
func (m PlannerModel) sourceLimit(p, maxP int) int {
	if maxP <= 0 {
		dm, err := assign.DefaultMaxParallelism(p)
		if err != nil {
			return 0
		}
		maxP = dm
	}
	return min(maxP, m.partitions())
}

// judged is the highest target the model computes from p: the limit, and
// no more than maxTargetSteps above p nor maxRestoreWork partitions ×
// candidates.
func (m PlannerModel) judged(p, maxP int) int {
	return min(m.targetLimit(p, maxP), p+maxTargetSteps, p+max(1, maxRestoreWork/max(1, m.partitions())))
}

func apart(tps, uncertain []assign.TopicPartition, owner func(assign.TopicPartition) (int, bool)) bool {
	seen := map[int]bool{}
	for _, tp := range tps {
		o, ok := owner(tp)
		if !ok || seen[o] || slices.Contains(uncertain, tp) {
			return false
		}
		seen[o] = true
	}
	return true
}

// filling is the largest parallelism below p at which a restore from a
// savepoint taken now gives every subtask a partition, 0 when none.
func (m PlannerModel) filling(p int) int {
	n := m.partitions()
	if n == 0 || m.Unknown {
		return 0
	}
	// A restore deals the saved splits out in contiguous chunks: every
	// subtask gets one once there are as many splits as subtasks.
	q := min(p-1, n)
	if q < 1 {
		return 0
	}
	if a, unc, err := m.layout(q); err == nil && len(unc) == 0 && !hasIdle(a) {
		return q
	}
	return 0
}

func hasIdle(a assign.Assignment) bool {
	for _, ps := range a.Subtasks {
		if len(ps) == 0 {
			return true
		}
	}
	return false
}

// reached is the sorted set of subtasks that topics' partitions reach on a
// fresh start at p: each topic covers the subtasks from its start index
// on, one per partition, wrapping at p.
func reached(topics []assign.Topic, p int) []int {
	on := make([]bool, p)
	for _, t := range topics {
		s, err := assign.KafkaStartIndex(t.Name, p)
		if err != nil {
			return nil
		}
		for k := range min(t.Partitions, p) {
			on[(s+k)%p] = true
		}
	}
	var out []int
	for i, b := range on {
		if b {
			out = append(out, i)
		}
	}
	return out
}

// whyVertex is what a why line needs of a vertex of the job.
type whyVertex struct {
	ID, Name string
	// Inputs are the vertices it reads from (the plan's edges), nil when
	// unknown or a source.
	Inputs []string
	// Busy and BackPressured are per subtask, -1 unknown.
	Busy, BackPressured []float64
}

func whyVertices(j *flink.JobSnapshot) []whyVertex {
	out := make([]whyVertex, len(j.Vertices))
	for i, v := range j.Vertices {
		w := whyVertex{ID: v.ID, Name: v.Name, Inputs: v.Inputs, Busy: make([]float64, len(v.Subtasks)), BackPressured: make([]float64, len(v.Subtasks))}
		for k, st := range v.Subtasks {
			w.Busy[k], w.BackPressured[k] = orMinus(st.BusyRatio), orMinus(st.BackPressuredRatio)
		}
		out[i] = w
	}
	return out
}

// why explains the load of a Kafka source or a keyed vertex of a running
// job; nil for other vertices.
func (s *picture) why(vv *VertexView, j *flink.JobSnapshot) *WhyView {
	if !j.State.Running() || !(vv.Kafka || vv.Keyed) {
		return nil
	}
	return explain(vv, whyVertices(j))
}

// explain is why's pure part: the lines for vv among the job's vertices.
func explain(vv *VertexView, job []whyVertex) *WhyView {
	if vv.Parallelism <= 0 || len(vv.Subtasks) != vv.Parallelism {
		return nil
	}
	var hot, rest []WhyLine
	var missing []string
	balanced := func() *WhyLine { return nil }
	switch {
	case vv.Kafka:
		e := newSourceExplainer(vv)
		hot, missing = e.hot()
		rest = append(rest, e.behind()...)
		rest = append(rest, e.idle()...)
		balanced = e.balanced
	case vv.Keyed:
		e := newKeyedExplainer(vv)
		hot, missing = e.hot()
		rest = append(rest, e.idle()...)
		balanced = e.balanced
	}
	var bp []WhyLine
	if l := backpressured(vv, job); l != nil {
		bp = append(bp, *l)
	}
	if l := backpressuring(vv, job); l != nil {
		bp = append(bp, *l)
	}
	if l := slowCheckpoint(vv); l != nil {
		rest = append(rest, *l)
	}
	if l := watermarkLine(vv); l != nil {
		bp = append(bp, *l)
	}
	lines := append(append(hot, bp...), rest...)
	lines = lines[:min(len(lines), maxLines)]
	if len(lines) == 0 {
		if l := balanced(); l != nil {
			lines = append(lines, *l)
		} else if len(missing) > 0 {
			lines = append(lines, WhyLine{Kind: WhyUnknown, Subtasks: []int{}, Missing: missing})
		}
	}
	if len(lines) == 0 {
		return nil
	}
	return &WhyView{Lines: lines}
}

func observed(name string, v float64) WhyFact { return WhyFact{Name: name, Value: v, Kind: Observed} }
func computed(name string, v float64) WhyFact { return WhyFact{Name: name, Value: v, Kind: Computed} }

// ranked returns the subtasks whose load is at least hotFactor times the
// mean, hottest first.
func ranked(load []float64, total float64) []int {
	if len(load) < 2 || total <= 0 {
		return nil
	}
	mean := total / float64(len(load))
	var out []int
	for i, x := range load {
		if x >= hotFactor*mean {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int { return cmp.Compare(load[b], load[a]) })
	return out
}

// bounded keeps the first n lines; the last kept says how many more
// subtasks are like it.
func bounded(lines []WhyLine, n int) []WhyLine {
	if len(lines) <= n {
		return lines
	}
	more := 0
	for _, l := range lines[n:] {
		more += len(l.Subtasks)
	}
	lines = lines[:n]
	lines[n-1].More = more
	return lines
}

func shares(load []float64, total float64) (lo, hi float64) {
	lo, hi = 1, 0
	for _, x := range load {
		lo, hi = min(lo, x/total), max(hi, x/total)
	}
	return lo, hi
}

// sourceExplainer holds what a Kafka source's lines are computed from.
type sourceExplainer struct {
	vv    *VertexView
	p     int
	cells [][]PartitionCell // per subtask, the cells whose reader is determined
	// load is the records/s produced on each subtask's determined
	// partitions, total on all partitions, both over the partitions whose
	// rate is known; unknownRates counts the others.
	load         []float64
	total        float64
	unknownRates int
	nCells       int
	// maybe marks the subtasks that may read a partition whose reader is
	// not determined.
	maybe []bool
	// model is the planner link's layout model, for targets.
	model PlannerModel
	// rates are the known produce rates by partition; capacity is what a
	// subtask processes at 100 % busy (0 unknown); lag the records not
	// read yet (-1 unknown).
	rates    *partIndex[float64]
	capacity float64
	lag      int64
}

func newSourceExplainer(vv *VertexView) *sourceExplainer {
	p := vv.Parallelism
	e := &sourceExplainer{vv: vv, p: p, cells: make([][]PartitionCell, p), load: make([]float64, p), maybe: make([]bool, p), model: PlannerModelOf(vv)}
	// The model counts each topic's partitions: the rates' rows are made
	// to size once. An unknown rate counts as 0 (none).
	e.rates = newPartIndex(e.model.Topics, 0.0)
	for i, r := range vv.Subtasks {
		// A row without an undetermined cell is shared, not copied: the
		// explainer only reads its cells (hotLine sorts a copy).
		shared := !slices.ContainsFunc(r.Partitions, func(c PartitionCell) bool { return c.OwnerUndetermined })
		if shared && len(r.Partitions) > 0 {
			e.cells[i] = r.Partitions
		}
		for _, c := range r.Partitions {
			e.nCells++
			if c.Rate < 0 {
				e.unknownRates++
			} else {
				e.total += c.Rate
				e.rates.set(c.Topic, c.Partition, c.Rate)
			}
			if c.Lag < 0 || e.lag < 0 {
				e.lag = -1
			} else {
				e.lag += c.Lag
			}
			if c.OwnerUndetermined {
				if len(c.Candidates) == 0 {
					for k := range e.maybe {
						e.maybe[k] = true
					}
				}
				for _, k := range c.Candidates {
					if k >= 0 && k < p {
						e.maybe[k] = true
					}
				}
				continue
			}
			if !shared {
				e.cells[i] = append(e.cells[i], c)
			}
			e.load[i] += max(c.Rate, 0)
		}
	}
	e.capacity = e.sourceCapacity()
	return e
}

// sourceCapacity is what a source subtask processes at 100 % busy, as the
// planner estimates it from the same figures (assign.EstimateCapacity
// over each subtask's records out, or its partitions' produced records
// where records out is not known, and busy ratio); 0 unless every
// subtask's busy ratio is known.
func (e *sourceExplainer) sourceCapacity() float64 {
	rs := make([]assign.SubtaskReading, len(e.vv.Subtasks))
	for i, r := range e.vv.Subtasks {
		if r.Busy < 0 {
			return 0
		}
		rs[i] = assign.SubtaskReading{Rate: r.RecordsOut, Busy: r.Busy}
	}
	if slices.ContainsFunc(e.vv.Subtasks, func(r SubtaskRow) bool { return r.RecordsOut < 0 }) {
		for i := range rs {
			rs[i].Rate = e.load[i]
		}
	}
	return assign.EstimateCapacity(rs).PerSubtask
}

// busiest is the busiest subtask of layout a by the known rates, and its
// share of the capacity (-1 unknown).
func (e *sourceExplainer) busiest(a assign.Assignment) (float64, int) {
	top, at := -1.0, -1
	for s, ps := range a.Subtasks {
		sum := 0.0
		for _, tp := range ps {
			r, _ := e.rates.get(tp.Topic, tp.Partition)
			sum += r
		}
		if sum > top {
			top, at = sum, s
		}
	}
	if e.capacity <= 0 {
		return -1, at
	}
	return top / e.capacity, at
}

// rescale judges the targets that part the named partitions tps: under
// the restore model, the smallest p above the current one that parts them
// and whose busiest subtask the capacity carries (any that parts them
// when the capacity is not known); when none does, why, and the fresh
// start that would, if any.
func (e *sourceExplainer) rescale(tps []assign.TopicPartition, named []PartitionCell) *WhyRescale {
	m := e.model
	rs := &WhyRescale{History: slices.Clone(m.History), Capacity: e.capacity, Utilization: -1, Busiest: -1, Lag: e.lag}
	if m.Unknown {
		rs.None = NoTargetHistory
		return rs
	}
	rs.Limit = max(e.p, m.judged(e.p, e.vv.MaxParallelism))
	if rs.Limit <= e.p && m.sourceLimit(e.p, e.vv.MaxParallelism) > e.p {
		rs.None = NoTargetPlanner
		return rs
	}
	for q := e.p + 1; q <= rs.Limit; q++ {
		a, unc, err := m.layout(q)
		if err != nil {
			break
		}
		if !apart(tps, unc, a.OwnerOf) {
			continue
		}
		u, at := e.busiest(a)
		if rs.Apart == 0 {
			rs.Apart, rs.Utilization, rs.Busiest = q, u, at
		}
		if u <= 1 {
			rs.Target, rs.Utilization, rs.Busiest = q, u, at
			return rs
		}
	}
	for _, c := range named {
		if e.capacity > 0 && c.Rate > e.capacity {
			rs.None, rs.Partition = NoTargetPartition, &WhyPartition{Topic: c.Topic, Partition: c.Partition, Rate: c.Rate}
			return rs
		}
	}
	rs.None = NoTargetApart
	if rs.Apart > 0 {
		rs.None = NoTargetCapacity
	}
	for q := e.p + 1; q <= rs.Limit; q++ {
		a, err := assign.FreshAssignment(m.Topics, q)
		if err != nil {
			break
		}
		if u, _ := e.busiest(a); apart(tps, nil, a.OwnerOf) && u <= 1 {
			rs.Fresh, rs.FreshUtilization = q, u
			break
		}
	}
	return rs
}

// readRate is what a source subtask reads, records/s: the reader's
// records in, or its records out where Flink reports none in (a task's
// records in is 0 for sources before Flink 2.0 unless the reader's own
// meter is listed); -1 unknown.
func readRate(r SubtaskRow) float64 {
	if r.RecordsIn > 0 || r.RecordsOut < 0 {
		return r.RecordsIn
	}
	return r.RecordsOut
}

// loadFacts are the busy, read and lag-growth figures of a source subtask.
func loadFacts(r SubtaskRow, produced float64) []WhyFact {
	var fs []WhyFact
	if r.Busy >= 0 {
		fs = append(fs, observed(FactBusy, r.Busy))
	}
	if read := readRate(r); read >= 0 {
		fs = append(fs, observed(FactRead, read))
		growth := produced - read
		if growth <= max(1, produced/20) {
			growth = 0
		}
		fs = append(fs, WhyFact{Name: FactLagGrowth, Value: growth, Kind: Estimated})
	}
	return fs
}

func (e *sourceExplainer) missing() []string {
	switch {
	case e.nCells == 0:
		return []string{MissingPartitions}
	case e.unknownRates == e.nCells:
		return []string{MissingRates}
	}
	return nil
}

func (e *sourceExplainer) hot() ([]WhyLine, []string) {
	if m := e.missing(); m != nil {
		return nil, m
	}
	var lines []WhyLine
	for _, s := range ranked(e.load, e.total) {
		lines = append(lines, e.hotLine(s))
	}
	return bounded(lines, maxHot), nil
}

func (e *sourceExplainer) hotLine(s int) WhyLine {
	r := e.vv.Subtasks[s]
	cells := slices.Clone(e.cells[s])
	slices.SortStableFunc(cells, func(a, b PartitionCell) int { return cmp.Compare(b.Rate, a.Rate) })
	var named []PartitionCell
	sum := 0.0
	for _, c := range cells {
		if len(named) == maxNamed || sum >= namedShare*e.load[s] {
			break
		}
		named = append(named, c)
		sum += c.Rate
	}
	l := WhyLine{Kind: WhyHot, Subtasks: []int{s}, Facts: []WhyFact{observed(FactShare, e.load[s]/e.total)}}
	tps := make([]assign.TopicPartition, len(named))
	for i, c := range named {
		l.Partitions = append(l.Partitions, WhyPartition{Topic: c.Topic, Partition: c.Partition, Rate: c.Rate})
		tps[i] = assign.TopicPartition{Topic: c.Topic, Partition: c.Partition}
	}
	if len(named) < len(cells) {
		l.Facts = append(l.Facts, observed(FactPartitionsShare, sum/e.total))
	}
	l.Facts = append(l.Facts, observed(FactProduced, e.load[s]), observed(FactTotal, e.total), observed(FactUnknownRates, float64(e.unknownRates)))
	if len(named) == 1 {
		l.Facts = append(l.Facts, computed(FactOnePartition, named[0].Rate))
	} else {
		l.Placement = e.placement(s, named)
		l.Rescale = e.rescale(tps, named)
		l.Target = l.Rescale.Target
	}
	l.Facts = append(l.Facts, loadFacts(r, e.load[s])...)
	return l
}

// placement says which rule put the cells on subtask s, nil when the
// observed layout is not the one a model places exactly.
func (e *sourceExplainer) placement(s int, cells []PartitionCell) *WhyPlacement {
	pr := e.vv.Prediction
	if pr == nil {
		return nil
	}
	for _, c := range cells {
		if c.Predicted != s || (c.Basis != BasisExact && c.Basis != BasisInferred) {
			return nil
		}
	}
	switch pr.Mode {
	case ModeFresh:
		pl := &WhyPlacement{Model: ModeFresh, Parallelism: e.p}
		for _, c := range cells {
			st, err := assign.KafkaStartIndex(c.Topic, e.p)
			if o, err2 := assign.KafkaSplitOwner(assign.TopicPartition{Topic: c.Topic, Partition: c.Partition}, e.p); err != nil || err2 != nil || o != s {
				return nil
			}
			if !slices.ContainsFunc(pl.Topics, func(t WhyTopic) bool { return t.Name == c.Topic }) {
				pl.Topics = append(pl.Topics, WhyTopic{Name: c.Topic, Partitions: e.topicPartitions(c.Topic), Start: st})
			}
		}
		return pl
	case ModeRestore, ModeInferred:
		if len(pr.History) < 2 {
			return nil
		}
		return &WhyPlacement{Model: ModeRestore, Parallelism: e.p, History: slices.Clone(pr.History)}
	}
	return nil
}

// topicPartitions is the topic's partition count as the metric ids show
// it (the highest partition + 1).
func (e *sourceExplainer) topicPartitions(topic string) int {
	n := 0
	for _, r := range e.vv.Subtasks {
		for _, c := range r.Partitions {
			if c.Topic == topic {
				n = max(n, int(c.Partition)+1)
			}
		}
	}
	return n
}

func (e *sourceExplainer) behind() []WhyLine {
	if e.missing() != nil {
		return nil
	}
	hot := ranked(e.load, e.total)
	var lines []WhyLine
	for s, r := range e.vv.Subtasks {
		if slices.Contains(hot, s) || e.load[s] <= 0 {
			continue
		}
		fs := loadFacts(r, e.load[s])
		i := slices.IndexFunc(fs, func(f WhyFact) bool { return f.Name == FactLagGrowth })
		if i < 0 || fs[i].Value <= 0 {
			continue
		}
		lines = append(lines, WhyLine{Kind: WhyBehind, Subtasks: []int{s},
			Facts: append([]WhyFact{observed(FactProduced, e.load[s]), observed(FactUnknownRates, float64(e.unknownRates))}, fs...)})
	}
	slices.SortStableFunc(lines, func(a, b WhyLine) int { return cmp.Compare(growthOf(b), growthOf(a)) })
	return bounded(lines, maxBehind)
}

func growthOf(l WhyLine) float64 {
	for _, f := range l.Facts {
		if f.Name == FactLagGrowth {
			return f.Value
		}
	}
	return 0
}

func (e *sourceExplainer) idle() []WhyLine {
	if e.nCells == 0 || e.p < 2 {
		return nil
	}
	var idle []int
	for s := range e.p {
		if len(e.cells[s]) == 0 && !e.maybe[s] {
			idle = append(idle, s)
		}
	}
	if len(idle) == 0 {
		return nil
	}
	l := WhyLine{Kind: WhyIdle, Subtasks: idle, Facts: []WhyFact{observed(FactPartitions, float64(e.nCells))}}
	m := e.model
	if pr := e.vv.Prediction; pr != nil && pr.Mode == ModeFresh && pr.Headline.Kind == BasisExact {
		pl := &WhyPlacement{Model: ModeFresh, Parallelism: e.p}
		for _, t := range m.Topics {
			st, err := assign.KafkaStartIndex(t.Name, e.p)
			if err != nil {
				return nil
			}
			pl.Topics = append(pl.Topics, WhyTopic{Name: t.Name, Partitions: t.Partitions, Start: st})
		}
		pl.Reached = reached(m.Topics, e.p)
		// The rule must reach exactly the subtasks that read.
		if len(pl.Reached)+len(idle) == e.p && !slices.ContainsFunc(idle, func(s int) bool { return slices.Contains(pl.Reached, s) }) {
			l.Placement = pl
		}
	}
	l.Target = m.filling(e.p)
	return []WhyLine{l}
}

func (e *sourceExplainer) balanced() *WhyLine {
	if e.missing() != nil {
		return nil
	}
	l := &WhyLine{Kind: WhyBalanced, Subtasks: []int{}, Facts: []WhyFact{observed(FactTotal, e.total)}}
	if e.total > 0 {
		lo, hi := shares(e.load, e.total)
		l.Facts = append(l.Facts, observed(FactMinShare, lo), observed(FactMaxShare, hi), observed(FactUnknownRates, float64(e.unknownRates)))
	}
	if bp := maxKnown(e.vv.Subtasks, func(r SubtaskRow) float64 { return r.BackPressured }); bp >= 0 {
		l.Facts = append(l.Facts, observed(FactBackPressured, bp))
	}
	return l
}

// maxKnown is the largest figure of the rows, -1 unless every row's is
// known.
func maxKnown(rows []SubtaskRow, f func(SubtaskRow) float64) float64 {
	m := -1.0
	for _, r := range rows {
		x := f(r)
		if x < 0 {
			return -1
		}
		m = max(m, x)
	}
	return m
}

// keyedExplainer holds what a keyed vertex's lines are computed from.
type keyedExplainer struct {
	vv      *VertexView
	in      []float64
	total   float64
	known   bool // every subtask's records in
	ranges  bool // every subtask's key-group range
	lo, hi  int  // smallest and largest range
	missing []string
}

func newKeyedExplainer(vv *VertexView) *keyedExplainer {
	e := &keyedExplainer{vv: vv, in: make([]float64, vv.Parallelism), known: true, ranges: vv.MaxParallelism > 0, lo: -1}
	for i, r := range vv.Subtasks {
		if r.RecordsIn < 0 {
			e.known = false
		}
		e.in[i] = max(r.RecordsIn, 0)
		e.total += e.in[i]
		if r.KeyGroups == nil {
			e.ranges = false
			continue
		}
		if e.lo < 0 || r.KeyGroups.Size < e.lo {
			e.lo = r.KeyGroups.Size
		}
		e.hi = max(e.hi, r.KeyGroups.Size)
	}
	if !e.known {
		e.missing = append(e.missing, MissingRecordsIn)
	}
	if !e.ranges {
		e.missing = append(e.missing, MissingKeyGroups)
	}
	return e
}

func (e *keyedExplainer) hot() ([]WhyLine, []string) {
	if len(e.missing) > 0 {
		return nil, e.missing
	}
	maxP := float64(e.vv.MaxParallelism)
	var lines []WhyLine
	for _, s := range ranked(e.in, e.total) {
		r := e.vv.Subtasks[s]
		kg := *r.KeyGroups
		share, kgShare := e.in[s]/e.total, float64(kg.Size)/maxP
		l := WhyLine{Kind: WhyKeys, Subtasks: []int{s}, KeyGroups: &kg, Facts: []WhyFact{
			observed(FactShare, share), observed(FactRecordsIn, e.in[s]), observed(FactTotal, e.total),
			computed(FactKeyGroupShare, kgShare), computed(FactRangeMin, float64(e.lo)), computed(FactRangeMax, float64(e.hi)),
		}}
		if share < hotFactor*kgShare && kg.Size == e.hi && e.hi > e.lo {
			l.Kind = WhyRanges
			l.Target = evenTarget(e.vv.MaxParallelism, e.vv.Parallelism)
		}
		if r.Busy >= 0 {
			l.Facts = append(l.Facts, observed(FactBusy, r.Busy))
		}
		lines = append(lines, l)
	}
	return bounded(lines, maxHot), nil
}

// evenTarget is the parallelism nearest p (the larger when two are as
// near) that divides maxP, so that every subtask owns as many key groups;
// 0 when p already does.
func evenTarget(maxP, p int) int {
	if maxP <= 0 || maxP%p == 0 {
		return 0
	}
	best := 0
	for q := 1; q <= maxP; q++ {
		if maxP%q == 0 && q != p {
			if d, bd := abs(q-p), abs(best-p); best == 0 || d < bd || (d == bd && q > best) {
				best = q
			}
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func (e *keyedExplainer) idle() []WhyLine {
	if len(e.missing) > 0 || e.total <= 0 {
		return nil
	}
	var idle []int
	for s, x := range e.in {
		if x == 0 {
			idle = append(idle, s)
		}
	}
	if len(idle) == 0 {
		return nil
	}
	return []WhyLine{{Kind: WhyKeyedIdle, Subtasks: idle, Facts: []WhyFact{computed(FactRangeMin, float64(e.lo)), computed(FactRangeMax, float64(e.hi))}}}
}

func (e *keyedExplainer) balanced() *WhyLine {
	if len(e.missing) > 0 {
		return nil
	}
	l := &WhyLine{Kind: WhyBalanced, Subtasks: []int{}, Facts: []WhyFact{observed(FactTotal, e.total)}}
	if e.total > 0 {
		lo, hi := shares(e.in, e.total)
		l.Facts = append(l.Facts, observed(FactMinShare, lo), observed(FactMaxShare, hi))
	}
	if bp := maxKnown(e.vv.Subtasks, func(r SubtaskRow) float64 { return r.BackPressured }); bp >= 0 {
		l.Facts = append(l.Facts, observed(FactBackPressured, bp))
	}
	return l
}

// maxOf is the largest known figure and its index, (-1, -1) when none.
func maxOf(xs []float64) (float64, int) {
	m, at := -1.0, -1
	for i, x := range xs {
		if x > m {
			m, at = x, i
		}
	}
	return m, at
}

// backpressured says where the vertex's backpressure starts (trace).
func backpressured(vv *VertexView, job []whyVertex) *WhyLine {
	var subj []int
	bp := -1.0
	for _, r := range vv.Subtasks {
		if r.BackPressured > bpLow {
			subj = append(subj, r.Subtask)
		}
		bp = max(bp, r.BackPressured)
	}
	if len(subj) == 0 {
		return nil
	}
	slices.SortStableFunc(subj, func(a, b int) int { return cmp.Compare(vv.Subtasks[b].BackPressured, vv.Subtasks[a].BackPressured) })
	l := &WhyLine{Kind: WhyBackpressured, Subtasks: subj, Facts: []WhyFact{observed(FactBackPressured, bp)}}
	me := slices.IndexFunc(job, func(w whyVertex) bool { return w.ID == vv.ID })
	if me < 0 {
		return l
	}
	t := trace(job, me)
	if t.at < 0 {
		return l
	}
	peer := job[t.at]
	b, at := maxOf(peer.Busy)
	p, _ := maxOf(peer.BackPressured)
	if b < 0 {
		return l
	}
	l.Peer = &WhyPeer{ID: peer.ID, Name: peer.Name, Relation: t.rel, Via: t.via, Subtask: at, Culprit: t.culprit}
	l.Facts = append(l.Facts, observed(FactPeerBusy, b))
	if p >= 0 {
		l.Facts = append(l.Facts, observed(FactPeerBackPressured, p))
	}
	return l
}

// culprit reports whether a vertex is where backpressure starts by
// Flink's rule: a subtask is busy and none is backpressured.
func culprit(w whyVertex) bool {
	b, _ := maxOf(w.Busy)
	p, _ := maxOf(w.BackPressured)
	return b >= busyHigh && p >= 0 && p <= bpLow
}

// traced is where trace found the backpressure of a vertex to start.
type traced struct {
	at      int      // the vertex's index in the job, -1 none
	via     []string // the backpressured vertices passed
	rel     string   // RelDownstream or RelLater
	culprit bool     // at is a culprit; else it is only the first vertex downstream
}

// trace finds where the backpressure of job[from] starts. Along the plan's
// edges: breadth first through backpressured vertices, the first culprit
// (or, when there is none, the first vertex it sends to, named as a fact).
// Without edges: the busiest culprit after it in the plan's order, named
// without a claimed link.
func trace(job []whyVertex, from int) traced {
	if !edgesKnown(job) {
		t, best := traced{at: -1, rel: RelLater}, -1.0
		for k := from + 1; k < len(job); k++ {
			if b, _ := maxOf(job[k].Busy); culprit(job[k]) && b > best {
				best, t.at, t.culprit = b, k, true
			}
		}
		return t
	}
	type step struct {
		at  int
		via []string
	}
	queue, seen, first := []step{{from, nil}}, map[int]bool{from: true}, -1
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		for k := range job {
			if seen[k] || !slices.Contains(job[k].Inputs, job[st.at].ID) {
				continue
			}
			seen[k] = true
			if first < 0 {
				first = k
			}
			if culprit(job[k]) {
				return traced{at: k, via: st.via, rel: RelDownstream, culprit: true}
			}
			if p, _ := maxOf(job[k].BackPressured); p > bpLow {
				queue = append(queue, step{k, append(slices.Clone(st.via), job[k].Name)})
			}
		}
	}
	return traced{at: first, rel: RelDownstream}
}

// backpressuring names the vertex's busy subtasks that are not
// backpressured when it is where the backpressure of a vertex sending to
// it starts (trace): along the plan's edges one of its inputs; without
// edges, a vertex before it in the plan's order, named as a fact without a
// claimed link.
func backpressuring(vv *VertexView, job []whyVertex) *WhyLine {
	me := slices.IndexFunc(job, func(w whyVertex) bool { return w.ID == vv.ID })
	if me < 0 {
		return nil
	}
	var subj []int
	busy := -1.0
	for _, r := range vv.Subtasks {
		if r.Busy >= busyHigh && r.BackPressured >= 0 && r.BackPressured <= bpLow {
			subj = append(subj, r.Subtask)
			busy = max(busy, r.Busy)
		}
	}
	if len(subj) == 0 {
		return nil
	}
	slices.SortStableFunc(subj, func(a, b int) int { return cmp.Compare(vv.Subtasks[b].Busy, vv.Subtasks[a].Busy) })
	known := edgesKnown(job)
	rel := RelEarlier
	if known {
		rel = RelUpstream
	}
	peer, best := -1, bpLow
	for k := range job {
		if k == me || (known && !slices.Contains(job[me].Inputs, job[k].ID)) || (!known && k > me) {
			continue
		}
		if p, _ := maxOf(job[k].BackPressured); p > best {
			if t := trace(job, k); t.at == me && t.culprit {
				best, peer = p, k
			}
		}
	}
	if peer < 0 {
		return nil
	}
	return &WhyLine{Kind: WhyBackpressuring, Subtasks: subj,
		Peer:  &WhyPeer{ID: job[peer].ID, Name: job[peer].Name, Relation: rel, Subtask: -1},
		Facts: []WhyFact{observed(FactBusy, busy), observed(FactPeerBackPressured, best)}}
}

// edgesKnown reports whether the snapshot has the plan's edges: some vertex
// lists its inputs.
func edgesKnown(job []whyVertex) bool {
	return slices.ContainsFunc(job, func(w whyVertex) bool { return len(w.Inputs) > 0 })
}

// slowCheckpoint says which subtask's checkpoints stand out, with its
// share of the state: state grows a snapshot's asynchronous part, so a
// subtask holding most of it checkpoints slowest.
func slowCheckpoint(vv *VertexView) *WhyLine {
	c := vv.Checkpoint
	if c == nil || c.Slowest < 0 || c.Slowest >= len(vv.Subtasks) {
		return nil
	}
	me := vv.Subtasks[c.Slowest].Checkpoint
	if me == nil || me.DurationMs < 0 {
		return nil
	}
	l := &WhyLine{Kind: WhySlowCheckpoint, Subtasks: []int{c.Slowest}, Facts: []WhyFact{
		observed(FactCheckpointMs, float64(me.DurationMs)),
		computed(FactOthersCheckpointMs, float64(me.DurationMs)/c.SlowFactor),
		computed(FactSlowFactor, c.SlowFactor),
		observed(FactCheckpointID, float64(c.ID)),
	}}
	var total int64
	for _, r := range vv.Subtasks {
		if r.StateSize < 0 {
			return l // a share of part of the state would mislead
		}
		total += r.StateSize
	}
	if total > 0 {
		l.Facts = append(l.Facts, observed(FactStateShare, float64(vv.Subtasks[c.Slowest].StateSize)/float64(total)))
	}
	return l
}

// watermarkLine is the vertex's event-time line: its watermark's holder
// when the cause is one to act on (idle, starved, paused, behind,
// backpressured, aligning, or simply far behind), and a source's partitions that
// watermark alignment pauses; nil when there is nothing to say.
func watermarkLine(vv *VertexView) *WhyLine {
	w := vv.EventTime
	if w == nil {
		return nil
	}
	l := WhyLine{Kind: WhyWatermark, Subtasks: []int{}}
	if !w.None {
		l.Facts = append(l.Facts, computed(FactWatermarkLag, w.LagSeconds))
	}
	held := false
	if h := w.Holder; h != nil {
		switch h.Cause {
		case HoldIdle, HoldStarved, HoldPaused, HoldBehind, HoldBackpressured, HoldAligning:
			held = true
		case HoldOldest:
			held = w.None || w.LagSeconds >= behindSeconds
		}
		if held {
			l.Holder = h
			switch {
			case h.VertexID != vv.ID:
			case h.Cause == HoldStarved && len(h.Starved) > 0:
				l.Subtasks = slices.Clone(h.Starved)
			default:
				l.Subtasks = []int{h.Subtask}
			}
		}
	}
	ahead := 0.0
	if !w.None {
		for _, r := range vv.Subtasks {
			for _, c := range r.Partitions {
				if e := c.EventTime; e != nil && e.State == PartitionPaused && !e.None && e.Kind == Observed {
					l.Partitions = append(l.Partitions, WhyPartition{Topic: c.Topic, Partition: c.Partition, Rate: c.Rate})
					ahead = max(ahead, float64(e.WatermarkMs-w.WatermarkMs))
				}
			}
		}
	}
	if len(l.Partitions) > 0 {
		l.Facts = append(l.Facts, computed(FactAheadMs, ahead))
	}
	if !held && len(l.Partitions) == 0 {
		return nil
	}
	return &l
}
