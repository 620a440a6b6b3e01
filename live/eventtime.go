package live

import (
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
)

// Event time: where a job's watermark stands and which partition, on which
// source subtask, holds it back.
//
// Flink's rules (StatusWatermarkValve, SourceOperator, the FLIP-27 reader's
// WatermarkOutputMultiplexer), as observed on real MiniClusters
// (../shared/reference/event-time.md):
//   - a source subtask's output watermark is the minimum over its non-idle
//     splits; a split is idle only when the strategy has an idle timeout
//     and it had no record for that long;
//   - an operator's input watermark is the minimum over its non-idle
//     input channels, so without idleness one silent partition, or one
//     reader without splits (Long.MIN_VALUE for its whole run), holds back
//     everything downstream;
//   - nothing in REST marks idleness: an idle subtask keeps its last
//     watermark, and the sign is a downstream input watermark above it.
//
// The holder is found by following the plan's edges upstream from the
// lowest input watermark: at each vertex, the input subtask whose
// watermark equals it, down to a source subtask, then the split whose
// watermark is the subtask's (observed, Flink ≥ 2.1) or, before 2.1, the
// partition whose last record read is the oldest (estimated from the
// offset→time table: a record's event time is taken as its produce time).

// PartitionState is what a partition's reader does in event time.
type PartitionState string

const (
	// PartitionActive: records arrive and the reader reads them.
	PartitionActive PartitionState = "active"
	// PartitionIdle: the partition has had no new record for idleAfter
	// (observed from its end offset) and the reader has read it all.
	PartitionIdle PartitionState = "idle"
	// PartitionPaused: watermark alignment pauses its split (the split's
	// paused time, or the whole reader's positive alignment drift).
	PartitionPaused PartitionState = "paused"
	// PartitionBackpressured: its reader's subtask is mostly backpressured.
	PartitionBackpressured PartitionState = "backpressured"
)

// HoldCause is why the holder holds the watermark back.
type HoldCause string

const (
	HoldIdle          HoldCause = "idle"          // its partition has no new records
	HoldStarved       HoldCause = "starved"       // the source subtask reads no partition
	HoldPaused        HoldCause = "paused"        // alignment pauses its partition
	HoldBehind        HoldCause = "behind"        // its reader is far behind the partition's end
	HoldBackpressured HoldCause = "backpressured" // its subtask is backpressured
	HoldOldest        HoldCause = "oldest"        // active, its records are simply the oldest
	// HoldAligning: active and its records the oldest, like HoldOldest,
	// while watermark alignment pauses the job's partitions that run
	// ahead of it (WatermarkHolder.Paused): they wait for it.
	HoldAligning HoldCause = "aligning"
	// HoldUndetermined: the subtask is known, the partition is not (its
	// reader is not determined by the metric ids).
	HoldUndetermined HoldCause = "undetermined"
)

// Thresholds of the partition states.
const (
	// idleAfter is how long a partition must have had no new record to be
	// idle: a few polls, so that a quiet second is not a state.
	idleAfter = 10 * time.Second
	// pausedPerS is the split's paused ms per second from which it is
	// paused: the figure ramps and varies (real 2.2.1 and 2.3.0 splits
	// paused by alignment read 491 to 1000, active ones 0), so a tenth of
	// the time paused counts.
	pausedPerS = 100
	// backpressuredRatio is the subtask's backpressured share from which
	// its partitions are backpressured.
	backpressuredRatio = 0.5
	// behindSeconds is the lag in time from which a holder is behind (a
	// minute, as the lag colours' first concern).
	behindSeconds = 60
	// estimateTie is how much older than the others a partition's
	// estimated last produce time must be to hold its subtask's watermark
	// (an idle partition aside): the time table's samples are a poll
	// apart, and produce times only stand in for record timestamps.
	estimateTie = idleAfter
)

// PartitionEventTime is a partition's event time on its reader.
type PartitionEventTime struct {
	// WatermarkMs is the split's watermark (Kind observed, Flink ≥ 2.1)
	// or, estimated, the produce time of the last record the reader read:
	// the watermark is that minus the strategy's bound. 0 with None.
	WatermarkMs int64 `json:"watermarkMs"`
	// None is set when there is no watermark yet: Flink's Long.MIN_VALUE,
	// or no record read.
	None bool       `json:"none"`
	Kind Provenance `json:"kind"`
	// LagSeconds is now − WatermarkMs, computed; -1 with None.
	LagSeconds float64        `json:"lagSeconds"`
	State      PartitionState `json:"state"`
	// QuietSeconds is how long the partition has had no new record, at
	// least (observed from its end offsets); -1 unknown.
	QuietSeconds float64 `json:"quietSeconds"`
	// PausedPerS is the split's ms per second paused by alignment
	// (observed, Flink ≥ 2.1 with alignment), -1 unknown.
	PausedPerS float64 `json:"pausedMsPerSecond"`
}

// SubtaskWatermark is one subtask's watermark: the input watermark of an
// operator subtask, the output watermark of a source subtask. Observed.
type SubtaskWatermark struct {
	WatermarkMs int64 `json:"watermarkMs"` // 0 with None
	None        bool  `json:"none"`
	// LagSeconds is now − WatermarkMs (computed), -1 with None.
	LagSeconds float64 `json:"lagSeconds"`
	// IdleSeconds is a source reader's sourceIdleTime, -1 unknown;
	// DriftMs its watermarkAlignmentDrift (jobs with alignment), 0
	// unknown; Paused is set when that drift is positive.
	IdleSeconds float64 `json:"idleSeconds"`
	DriftMs     float64 `json:"alignmentDriftMs,omitempty"`
	Paused      bool    `json:"paused,omitempty"`
	// Starved is set on a source subtask that reads no partition
	// (observed from its metric ids).
	Starved bool `json:"starved,omitempty"`
	// Skipped is set on a source subtask whose watermark is below what
	// the vertices it feeds report as their input, or that has none while
	// they have one: Flink takes it as idle and skips it (the strategy has
	// an idle timeout).
	Skipped bool `json:"skipped,omitempty"`
	// Holds is set on the subtask with its vertex's lowest watermark.
	Holds bool `json:"holds,omitempty"`
}

// WatermarkHolder is the source subtask, and its partition, whose
// watermark is a vertex's lowest input watermark.
type WatermarkHolder struct {
	VertexID   string `json:"vertexId"`
	VertexName string `json:"vertexName"`
	Subtask    int    `json:"subtask"`
	// Topic and Partition name the partition, "" and -1 when the subtask
	// reads none or its partition is not determined.
	Topic     string    `json:"topic,omitempty"`
	Partition int32     `json:"partition"`
	Label     string    `json:"label,omitempty"`
	Cause     HoldCause `json:"cause"`
	// Kind is how the partition is known: observed (Flink's split
	// watermark, or its metric ids for a subtask without partitions),
	// estimated (the oldest record read, before Flink 2.1).
	Kind Provenance `json:"kind"`
	// Starved lists every source subtask that reads no partition, and
	// Partitions counts the source's partitions (cause starved).
	Starved    []int `json:"starved,omitempty"`
	Partitions int   `json:"partitions,omitempty"`
	// QuietSeconds is how long the partition has had no new record (idle),
	// LagSeconds its lag in time (behind), AheadMs how far the paused
	// subtask runs ahead of the group's minimum plus the maximum drift
	// (paused, where the reader reports it).
	QuietSeconds float64 `json:"quietSeconds,omitempty"`
	LagSeconds   float64 `json:"lagSeconds,omitempty"`
	AheadMs      float64 `json:"aheadMs,omitempty"`
	// Candidates lists the subtask's partitions ("topic-partition") when
	// none can be told to hold it (cause undetermined, kind estimated: the
	// produce times of their last records read do not separate them).
	Candidates []string `json:"candidates,omitempty"`
	// Paused lists the job's other partitions ("topic-partition") that
	// watermark alignment pauses (their state paused), in the order of the
	// source vertices, subtasks and cells.
	Paused []string `json:"paused,omitempty"`
	// SkipsIdle is set when the job is seen to skip an idle input (a
	// source subtask below its consumers' input watermark): its strategy
	// has an idle timeout. Unset, the job may still have one longer than
	// the holder's quiet time.
	SkipsIdle bool `json:"skipsIdle,omitempty"`
}

// VertexWatermark is a vertex's lowest watermark and the subtask with it.
type VertexWatermark struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Source      bool    `json:"source"`
	WatermarkMs int64   `json:"watermarkMs"` // 0 with None
	None        bool    `json:"none"`
	Subtask     int     `json:"subtask"`    // -1 unknown
	LagSeconds  float64 `json:"lagSeconds"` // -1 with None
	// Holder is where the watermark comes from, nil when not found.
	Holder *WatermarkHolder `json:"holder,omitempty"`
}

// JobEventTime is the job's watermark: the lowest of its operators' input
// watermarks (its sources' when it has no other vertex), observed, and
// where it comes from.
type JobEventTime struct {
	WatermarkMs int64   `json:"watermarkMs"`
	None        bool    `json:"none"`
	LagSeconds  float64 `json:"lagSeconds"`
	// VertexID is the vertex with that watermark (the most downstream of
	// equals).
	VertexID string            `json:"vertexId"`
	Holder   *WatermarkHolder  `json:"holder,omitempty"`
	Vertices []VertexWatermark `json:"vertices"`
	// At is when Flink reported the watermarks (its poll).
	At time.Time `json:"at"`
}

// jobEventTime is a job's event time as every view of one State reads it.
type jobEventTime struct {
	view *JobEventTime
	// rows holds each vertex's subtask watermarks, by vertex id.
	rows map[string][]*SubtaskWatermark
	// vertices indexes view.Vertices by id.
	vertices map[string]*VertexWatermark
}

// etCache holds the jobs' event time of one State, each found once.
type etCache struct {
	mu   sync.Mutex
	jobs map[vertexKey]*jobEventTime // endpoint, job id, ""
}

// hasEventTime reports whether any watermark gauge of j holds an event
// time: a job without a watermark strategy reports Long.MIN_VALUE
// everywhere, forever, and gets no event-time figures.
func hasEventTime(j *flink.JobSnapshot) bool {
	for k := range j.Vertices {
		for _, st := range j.Vertices[k].Subtasks {
			if st.EventTime.Read && (flink.IsEventTime(st.EventTime.InputWatermark) || flink.IsEventTime(st.EventTime.OutputWatermark)) {
				return true
			}
		}
		if o := j.Vertices[k].Kafka; o != nil {
			for i := range o.States {
				if sw := o.States[i].Split; sw != nil && flink.IsEventTime(sw.Watermark) {
					return true
				}
			}
		}
	}
	return false
}

// subtaskWatermark is the watermark a subtask passes on: a source's
// output, an operator's input (its operators pass it on unchanged, or
// hold it back further: a window's output is its input).
func subtaskWatermark(v *flink.VertexSnapshot, i int) int64 {
	if i < 0 || i >= len(v.Subtasks) || !v.Subtasks[i].EventTime.Read {
		return flink.WatermarkUnread
	}
	if v.Source {
		return v.Subtasks[i].EventTime.OutputWatermark
	}
	return v.Subtasks[i].EventTime.InputWatermark
}

// lowest is the lowest watermark of v's subtasks (Long.MIN_VALUE below
// every event time) and the first subtask with it; -1 when none is read.
// skip leaves subtasks out.
func lowest(v *flink.VertexSnapshot, skip func(int) bool) (int64, int) {
	low, at := flink.WatermarkUnread, -1
	for i := range v.Subtasks {
		if skip != nil && skip(i) {
			continue
		}
		w := subtaskWatermark(v, i)
		if w == flink.WatermarkUnread || w == flink.WatermarkEnd {
			continue
		}
		if at < 0 || w < low {
			low, at = w, i
		}
	}
	return low, at
}

func lagOf(w int64, now time.Time) float64 {
	if !flink.IsEventTime(w) {
		return -1
	}
	return float64(now.UnixMilli()-w) / 1000
}

// eventTime returns j's event time in this State, nil when j reports
// none. It is found once per State and job.
func (s *picture) eventTime(fs *flink.Snapshot, j *flink.JobSnapshot, now time.Time) *jobEventTime {
	if !hasEventTime(j) {
		return nil
	}
	key := vertexKey{fs.Endpoint, j.ID, ""}
	if s.et != nil {
		s.et.mu.Lock()
		defer s.et.mu.Unlock()
		if e, ok := s.et.jobs[key]; ok {
			return e
		}
	}
	e := s.findEventTime(fs, j, now)
	if s.et != nil {
		s.et.jobs[key] = e
	}
	return e
}

func (s *picture) findEventTime(fs *flink.Snapshot, j *flink.JobSnapshot, now time.Time) *jobEventTime {
	byID := make(map[string]*flink.VertexSnapshot, len(j.Vertices))
	for k := range j.Vertices {
		byID[j.Vertices[k].ID] = &j.Vertices[k]
	}
	// The vertices each vertex feeds.
	feeds := map[string][]string{}
	for k := range j.Vertices {
		for _, in := range j.Vertices[k].Inputs {
			feeds[in] = append(feeds[in], j.Vertices[k].ID)
		}
	}
	e := &jobEventTime{view: &JobEventTime{At: fs.CollectedAt}, rows: map[string][]*SubtaskWatermark{}, vertices: map[string]*VertexWatermark{}}
	cells := map[string][][]PartitionCell{} // source vertex id → rows of cells
	starved := map[string][]int{}
	for k := range j.Vertices {
		v := &j.Vertices[k]
		rows := make([]*SubtaskWatermark, len(v.Subtasks))
		for i, st := range v.Subtasks {
			w := subtaskWatermark(v, i)
			if w == flink.WatermarkUnread {
				continue
			}
			sw := &SubtaskWatermark{None: w == flink.WatermarkNone, LagSeconds: lagOf(w, now), IdleSeconds: -1}
			if flink.IsEventTime(w) {
				sw.WatermarkMs = w
			}
			if v.Source {
				if ms := st.EventTime.SourceIdleMs; !math.IsNaN(ms) {
					sw.IdleSeconds = ms / 1000
				}
				if d := st.EventTime.AlignmentDriftMs; !math.IsNaN(d) {
					sw.DriftMs, sw.Paused = d, d > 0
				}
			}
			rows[i] = sw
		}
		e.rows[v.ID] = rows
		if v.Source && v.Kafka != nil {
			sc := s.sourceCells(fs, j, v, len(v.Subtasks), now)
			cells[v.ID] = sc.rows
			undetermined := len(sc.oo.candidates) > 0
			for i, r := range sc.rows {
				if len(r) == 0 && !undetermined && rows[i] != nil {
					rows[i].Starved = true
					starved[v.ID] = append(starved[v.ID], i)
				}
			}
		}
	}
	// The partitions alignment pauses, over every source of the job (an
	// alignment group may span sources).
	var paused []string
	for k := range j.Vertices {
		for _, r := range cells[j.Vertices[k].ID] {
			for _, c := range r {
				if c.EventTime != nil && c.EventTime.State == PartitionPaused {
					paused = append(paused, c.Topic+"-"+strconv.Itoa(int(c.Partition)))
				}
			}
		}
	}
	// A source subtask below every consumer's lowest input watermark, or
	// without one while they have one, is skipped by them as idle.
	skipsIdle := false
	for k := range j.Vertices {
		v := &j.Vertices[k]
		if !v.Source || len(feeds[v.ID]) == 0 {
			continue
		}
		floor, ok := int64(math.MaxInt64), false
		for _, c := range feeds[v.ID] {
			if w, at := lowest(byID[c], nil); at >= 0 && flink.IsEventTime(w) {
				floor, ok = min(floor, w), true
			}
		}
		if !ok {
			continue
		}
		for _, sw := range e.rows[v.ID] {
			if sw != nil && (sw.None || sw.WatermarkMs < floor) {
				sw.Skipped, skipsIdle = true, true
			}
		}
	}
	for k := range j.Vertices {
		v := &j.Vertices[k]
		rows := e.rows[v.ID]
		low, at := lowest(v, func(i int) bool { return rows[i] == nil || rows[i].Skipped })
		if at < 0 {
			continue
		}
		vw := VertexWatermark{ID: v.ID, Name: v.Name, Source: v.Source, None: low == flink.WatermarkNone, Subtask: at, LagSeconds: lagOf(low, now)}
		if flink.IsEventTime(low) {
			vw.WatermarkMs = low
		}
		for i, sw := range rows {
			if sw != nil && !sw.Skipped && subtaskWatermark(v, i) == low {
				sw.Holds = true
			}
		}
		if src, sub, ok := traceWatermark(byID, v, at, low, e.rows); ok {
			vw.Holder = holderOf(src, sub, cells[src.ID], starved[src.ID], now)
			if vw.Holder != nil {
				vw.Holder.SkipsIdle = skipsIdle
				withPaused(vw.Holder, paused)
			}
		}
		e.view.Vertices = append(e.view.Vertices, vw)
	}
	for i := range e.view.Vertices {
		e.vertices[e.view.Vertices[i].ID] = &e.view.Vertices[i]
	}
	// The job's watermark: the lowest over its operators (non-sources),
	// the most downstream of equals; its sources' when it has no other.
	var job *VertexWatermark
	for pass := 0; pass < 2 && job == nil; pass++ {
		for i := range e.view.Vertices {
			vw := &e.view.Vertices[i]
			if vw.Source != (pass == 1) {
				continue
			}
			if job == nil || watermarkOrder(vw) <= watermarkOrder(job) {
				job = vw
			}
		}
	}
	if job != nil {
		ev := e.view
		ev.WatermarkMs, ev.None, ev.LagSeconds, ev.VertexID, ev.Holder = job.WatermarkMs, job.None, job.LagSeconds, job.ID, job.Holder
	}
	return e
}

// watermarkOrder orders watermarks with none below every event time.
func watermarkOrder(vw *VertexWatermark) int64 {
	if vw.None {
		return math.MinInt64
	}
	return vw.WatermarkMs
}

// traceWatermark follows watermark w of subtask sub of v upstream, to the
// source subtask it comes from: at each vertex, the first input subtask
// (the same index first, for a forward edge) whose watermark is w and
// that its consumers do not skip. ok is false when no input has it (an
// operator that holds the watermark back itself).
func traceWatermark(byID map[string]*flink.VertexSnapshot, v *flink.VertexSnapshot, sub int, w int64, rows map[string][]*SubtaskWatermark) (*flink.VertexSnapshot, int, bool) {
	for range len(byID) + 1 {
		if v.Source {
			return v, sub, true
		}
		next, nextSub := (*flink.VertexSnapshot)(nil), -1
		for _, in := range v.Inputs {
			u := byID[in]
			if u == nil {
				continue
			}
			ok := func(i int) bool {
				r := rows[u.ID]
				return subtaskWatermark(u, i) == w && (i >= len(r) || r[i] == nil || !r[i].Skipped)
			}
			if u.Parallelism == v.Parallelism && ok(sub) {
				next, nextSub = u, sub
				break
			}
			for i := range u.Subtasks {
				if ok(i) {
					next, nextSub = u, i
					break
				}
			}
			if next != nil {
				break
			}
		}
		if next == nil {
			return nil, -1, false
		}
		v, sub = next, nextSub
	}
	return nil, -1, false
}

// holderOf names the partition of source subtask sub that holds its
// watermark, from its cells.
func holderOf(v *flink.VertexSnapshot, sub int, rows [][]PartitionCell, starved []int, now time.Time) *WatermarkHolder {
	h := &WatermarkHolder{VertexID: v.ID, VertexName: v.Name, Subtask: sub, Partition: -1, Kind: Observed}
	if slices.Contains(starved, sub) {
		h.Cause, h.Starved = HoldStarved, slices.Clone(starved)
		for _, r := range rows {
			h.Partitions += len(r)
		}
		return h
	}
	if sub < 0 || sub >= len(rows) {
		h.Cause = HoldUndetermined
		return h
	}
	w := subtaskWatermark(v, sub)
	var best, next *PartitionCell // next: the estimated runner-up
	unknown := false              // an estimated cell without an estimate
	for k := range rows[sub] {
		c := &rows[sub][k]
		if c.EventTime == nil || c.OwnerUndetermined {
			continue
		}
		et := c.EventTime
		switch {
		case et.Kind == Observed:
			// Flink's own split watermark: the one equal to the subtask's.
			if (et.None && w == flink.WatermarkNone) || (!et.None && et.WatermarkMs == w) {
				if best == nil || best.EventTime.Kind != Observed || quietOf(c) > quietOf(best) {
					best = c
				}
			}
		case best != nil && best.EventTime.Kind == Observed:
		case et.None:
			unknown = true
		case best == nil || olderThan(et, best.EventTime):
			best, next = c, best
		case next == nil || olderThan(et, next.EventTime):
			next = c
		}
	}
	// Estimated, a partition holds the subtask's watermark only when its
	// last record read is clearly the oldest (clearlyOldest); otherwise
	// the produce times do not say which, and the record timestamps the
	// watermark follows may not be the produce times at all.
	if best != nil && best.EventTime.Kind == Estimated && !clearlyOldest(best, next, unknown) {
		h.Cause, h.Kind = HoldUndetermined, Estimated
		for _, c := range rows[sub] {
			if !c.OwnerUndetermined {
				h.Candidates = append(h.Candidates, c.Topic+"-"+strconv.Itoa(int(c.Partition)))
			}
		}
		return h
	}
	if best == nil {
		h.Cause = HoldUndetermined
		return h
	}
	et := best.EventTime
	h.Topic, h.Partition, h.Label, h.Kind = best.Topic, best.Partition, best.Label, et.Kind
	switch {
	case et.State == PartitionPaused:
		h.Cause = HoldPaused
		if d := v.Subtasks[sub].EventTime.AlignmentDriftMs; d > 0 {
			h.AheadMs = d
		}
	case et.State == PartitionIdle:
		h.Cause, h.QuietSeconds = HoldIdle, et.QuietSeconds
	case et.State == PartitionBackpressured:
		h.Cause = HoldBackpressured
	case best.LagKind.Known() && best.LagSeconds >= behindSeconds:
		h.Cause, h.LagSeconds = HoldBehind, best.LagSeconds
	default:
		h.Cause = HoldOldest
	}
	return h
}

// withPaused gives h the paused partitions other than its own and, when
// it simply has the oldest records, the cause aligning: alignment pauses
// those partitions until it catches up.
func withPaused(h *WatermarkHolder, paused []string) {
	own := ""
	if h.Topic != "" {
		own = h.Topic + "-" + strconv.Itoa(int(h.Partition))
	}
	for _, p := range paused {
		if p != own {
			h.Paused = append(h.Paused, p)
		}
	}
	if len(h.Paused) > 0 && h.Cause == HoldOldest {
		h.Cause = HoldAligning
	}
}

// clearlyOldest reports whether best, the estimated cell whose last record
// read was produced first, holds its subtask's watermark: it is idle while
// the runner-up next is not (an idle partition's watermark stands still
// while the others' advance), or its last record is estimateTie older
// than next's; never with a cell whose estimate is unknown.
func clearlyOldest(best, next *PartitionCell, unknown bool) bool {
	switch {
	case unknown:
		return false
	case next == nil:
		return true
	case best.EventTime.State == PartitionIdle && next.EventTime.State != PartitionIdle:
		return true
	}
	return next.EventTime.WatermarkMs-best.EventTime.WatermarkMs >= estimateTie.Milliseconds()
}

func quietOf(c *PartitionCell) float64 { return c.EventTime.QuietSeconds }

// olderThan orders estimated partition watermarks, none first.
func olderThan(a, b *PartitionEventTime) bool {
	if a.None != b.None {
		return a.None
	}
	return a.WatermarkMs < b.WatermarkMs
}

// partitionEventTime is the event time of a partition cell read by sub
// (its Kafka figures filled) at current (the last offset read): split's
// watermark where Flink reports it, else the produce time of the record
// at current from table.
func partitionEventTime(c *PartitionCell, split *flink.SplitWatermark, current int64, sub *flink.SubtaskSnapshot, table *kafka.TimeTable, now time.Time) *PartitionEventTime {
	et := &PartitionEventTime{QuietSeconds: -1, PausedPerS: -1, LagSeconds: -1, State: PartitionActive}
	switch {
	case split != nil && split.Watermark != flink.WatermarkUnread:
		et.Kind = Observed
		if flink.IsEventTime(split.Watermark) {
			et.WatermarkMs = split.Watermark
		} else {
			et.None = true
		}
		if p := split.PausedPerS; !math.IsNaN(p) {
			et.PausedPerS = p
		}
	default:
		et.Kind = Estimated
		et.None = true
		if table != nil && current >= 0 {
			if at, kind := table.Passed(current); kind == kafka.TimeLagInterpolated || kind == kafka.TimeLagAtLeast {
				et.WatermarkMs, et.None = time.Unix(0, at).UnixMilli(), false
			} else if at, ok := table.QuietSince(); ok && c.Lag == 0 {
				// Caught up: the last record read is the partition's last,
				// produced by when the table first saw its end offset.
				et.WatermarkMs, et.None = at.UnixMilli(), false
			}
		}
	}
	if !et.None {
		et.LagSeconds = lagOf(et.WatermarkMs, now)
	}
	if table != nil {
		if at, ok := table.QuietSince(); ok {
			et.QuietSeconds = max(0, now.Sub(at).Seconds())
		}
	}
	switch {
	case et.PausedPerS >= pausedPerS || (sub != nil && sub.EventTime.AlignmentDriftMs > 0):
		et.State = PartitionPaused
	case c.Lag == 0 && et.QuietSeconds >= idleAfter.Seconds():
		et.State = PartitionIdle
	case sub != nil && sub.BackPressuredRatio >= backpressuredRatio:
		et.State = PartitionBackpressured
	}
	return et
}
