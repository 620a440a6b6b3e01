package live

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
)

// What a partition's reader lost, how it is doing, and when it catches up.
//
// A reader is a Kafka source vertex, followed by its endpoint, job name and
// vertex name (as its lineage is, so across restores: a restore from an old
// savepoint is the same source going on), or a consumer group (shown on the
// topic page). Its position is the next offset it will read: Flink's
// currentOffset + 1 for a source, the committed offset for a group. For
// every reader and partition the store keeps a ring of the latest readRing
// samples of (time, position, end offset and its time), taken at every
// Flink poll for a source and every Kafka poll for a group, and what Kafka
// deleted before the reader read it. Everything here lives in memory: it
// starts empty when skewscope starts, and is forgotten when Flink no
// longer lists a job of the source's name (or the group no longer commits
// on the topic).
//
// # Records deleted unread
//
// Kafka deletes a partition's oldest records (retention, DeleteRecords) by
// moving its log start offset up. A position below the log start means
// records were deleted before the reader read them; its Kafka client then
// skips to the log start (auto.offset.reset) or fails. Each reader and
// partition carries a count of them (Loss.Records) and the offset below
// which deletions are accounted for (counted, 0 at first), and whenever a
// Flink poll brings a position or a Kafka poll a log start, with p the
// latest position and L the latest log start:
//
//   - L > max(p, counted): the records from max(p, counted) up to L were
//     deleted before the reader got to them and are added; counted moves up
//     to L. Each deleted offset is counted once: when the log start moves
//     further while the reader is still behind, only the difference is
//     added, and when the reader has moved past a log start that moved
//     further still, only what lies between its position and the new log
//     start.
//   - L ≤ p: nothing is added, and nothing is taken away: a reader that
//     skipped to the log start, or caught up past it, keeps its count. The
//     count never decreases while skewscope runs.
//   - L < counted: the log restarted lower (the topic was deleted and
//     created again); counted starts again from L, the count stays.
//
// Both figures are observed: p from a Flink poll that was not stale, for a
// partition whose reader the metric ids determine (the sum over subtasks is
// the source's: a partition that moves between subtasks keeps its count);
// L the latest log start Kafka answered, which only grows, so an older one
// still bounds the deletions from below. The count is approximate both
// ways: a deletion that the client skipped between two polls is not seen
// (Behind is positive only until the client skips, often for one poll),
// records the client had fetched but not yet emitted when they were
// deleted were read although they count (at most a fetch,
// max.partition.fetch.bytes), and Flink's currentOffset can be one metric
// refresh (10 s) old.
//
// # States
//
// The state of a reader on a partition (Reading.State) is judged on the
// samples of the last readWindow, at most readRing, by the first rule that
// holds, after Burrow's evaluation (linkedin/Burrow, evaluator/caching.go)
// applied to skewscope's own samples rather than to commits:
//
//   - ReaderLost: records were counted lost within the window, or the
//     position is below the log start now.
//   - ReaderStopped: the job or the reader's subtask is not RUNNING (a
//     source; a group's commits can only stall).
//   - ReaderUnknown: no sample, the figures are stale or the lag unknown.
//   - ReaderRewind: a position is below the one before it, and no later
//     position in the window is back up to that one.
//   - ReaderCaughtUp: the lag is 0.
//   - ReaderUnknown: fewer than readMinSamples samples, or a window shorter
//     than readMinSpan, more than Flink's metric refresh: too little to
//     judge a trend or a stall on.
//   - ReaderStalled: behind at every sample of the window and the position
//     the same at all of them.
//   - ReaderWarning: behind at every sample and the lag growing (Trend).
//   - ReaderOK: otherwise.
//
// Burrow's ERR, a group's worst partition, has no equivalent: pages count
// the partitions in each state instead.
//
// # Rates, trend and time to catch up
//
// PositionRate and ProducedRate are least-squares slopes, over the window,
// of the position against the Flink polls' times and of the end offset
// against the Kafka polls' times: the records/s the reader read and the
// partition received, observed deltas. Their difference is the lag's
// slope; within rateTolerance of 0 the trend is steady, above it growing,
// below it shrinking. The time to catch up (estimated) is the lag over
// (processing − produced) when processing is faster by more than
// rateTolerance: CatchUpETA; CatchUpNever when it is slower by more,
// CatchUpSteady in between, CatchUpCaughtUp at lag 0, and CatchUpUnknown
// without both rates (a partition's need readMinSamples over readMinSpan,
// as its trend does) or while records are deleted unread (the reader skips
// rather than reads). A partition's processing rate is its position's; a
// subtask's is Flink's records out/s, its produced rate the sum of its
// partitions'.

// ReaderState is what a partition's reader is doing (Reading.State).
type ReaderState string

// Reader states (Reading.State).
const (
	ReaderOK       ReaderState = "ok"
	ReaderCaughtUp ReaderState = "caught-up"
	ReaderWarning  ReaderState = "warning" // lag growing
	ReaderStalled  ReaderState = "stalled"
	ReaderStopped  ReaderState = "stopped"
	ReaderRewind   ReaderState = "rewind"
	ReaderLost     ReaderState = "lost"
	ReaderUnknown  ReaderState = "unknown"
)

// readerStates lists the states worst first, the order pages count them in.
var readerStates = []ReaderState{ReaderLost, ReaderStopped, ReaderRewind, ReaderStalled, ReaderWarning, ReaderOK, ReaderCaughtUp, ReaderUnknown}

// Trend is where a lag is going (Reading.Trend, SubtaskRow.Trend).
type Trend string

// Lag trends (Reading.Trend, SubtaskRow.Trend).
const (
	TrendGrowing   Trend = "growing"
	TrendShrinking Trend = "shrinking"
	TrendSteady    Trend = "steady"
	TrendUnknown   Trend = "unknown"
)

// CatchUp is when a reader catches up (Reading.CatchUp,
// SubtaskRow.CatchUp).
type CatchUp string

// Time to catch up (Reading.CatchUp, SubtaskRow.CatchUp).
const (
	CatchUpCaughtUp CatchUp = "caught-up"
	CatchUpETA      CatchUp = "eta"
	CatchUpNever    CatchUp = "never"
	CatchUpSteady   CatchUp = "steady"
	CatchUpUnknown  CatchUp = "unknown"
)

const (
	// readRing is the samples kept per reader and partition.
	readRing = 32
	// readWindow is how far back the states, rates and trend look.
	readWindow = time.Minute
	// readMinSamples and readMinSpan are the least a trend or a stall is
	// judged on: readMinSpan is twice Flink's metric refresh
	// (metrics.fetcher.update-interval, 10 s), within which a position can
	// stand still however fast the reader reads.
	readMinSamples = 3
	readMinSpan    = 20 * time.Second
)

// Reading is how a reader does on one partition (see the rules above).
type Reading struct {
	// State is one of the Reader* states.
	State ReaderState `json:"state"`
	// Trend is the lag's over the window, a Trend* constant.
	Trend Trend `json:"trend"`
	// PositionRate and ProducedRate are the records/s the position and the
	// end offset advanced over the window, observed; -1 unknown.
	PositionRate float64 `json:"positionRate"`
	ProducedRate float64 `json:"producedRate"`
	// CatchUp is a CatchUp* constant; CatchUpSeconds the estimate for
	// CatchUpETA, else 0. Estimated.
	CatchUp        CatchUp `json:"catchUp"`
	CatchUpSeconds float64 `json:"catchUpSeconds"`
	// Samples and WindowSeconds are what the state rests on.
	Samples       int     `json:"samples"`
	WindowSeconds float64 `json:"windowSeconds"`
	// Lost is set once skewscope saw Kafka delete records before the
	// reader read them, or the reader below the log start.
	Lost *Loss `json:"lost,omitempty"`
}

// Loss is what Kafka deleted of a partition before a reader read it,
// observed since skewscope started (see the rule above).
type Loss struct {
	// Records is the count so far; it never decreases while skewscope runs.
	Records int64 `json:"records"`
	// FirstSeen and LastSeen are the polls that first and last added to
	// it, zero while nothing was added.
	FirstSeen time.Time `json:"firstSeen,omitzero"`
	LastSeen  time.Time `json:"lastSeen,omitzero"`
	// Behind is log start − position at the latest poll when positive: the
	// reader has not skipped to the log start yet.
	Behind int64 `json:"behind"`
}

// StateCount is how many partitions are in a reader state.
type StateCount struct {
	State ReaderState `json:"state"`
	Count int         `json:"count"`
}

// readSample is one sample of a reader's position on a partition.
type readSample struct {
	at  int64 // when the position was read, in Unix nanoseconds
	pos int64
	// end is the partition's end offset read at endAt (Unix nanoseconds),
	// 0 when unknown.
	end   int64
	endAt int64
}

// nanos is a sample's time: t in Unix nanoseconds, 0 for the zero time. A
// source of ten thousand partitions keeps readRing samples of each, so
// they hold no pointer for the garbage collector to follow.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// lagAnchor remembers when the end offset passed a reader's position, so
// that while the position stands still its lag in time does not fall when
// the offset→time table no longer holds the samples around it.
type lagAnchor struct {
	pos  int64
	at   time.Time
	kind kafka.TimeLagKind // TimeLagInterpolated or TimeLagAtLeast; 0 none
}

// lagEval is where a reader's position stood by the offset→time tables of
// one Kafka update: when the end offset passed it (kafka.TimeTable.Passed).
// It holds until the tables or the position change, so a view takes the
// lag in time from it at any moment without reading the table again (a
// source of ten thousand partitions would read ten thousand tables, each
// a cache miss, for every view).
type lagEval struct {
	gen    uint64 // the topic index whose tables it was read from (topicIndex.gen); 0 none
	pos    int64
	passed int64 // Unix nanoseconds
	kind   kafka.TimeLagKind
}

// evaluate reads pos against table tt of generation gen.
func evaluate(tt *kafka.TimeTable, pos int64, gen uint64) lagEval {
	e := lagEval{gen: gen, pos: pos, kind: kafka.TimeLagUnknown}
	if tt != nil {
		e.passed, e.kind = tt.Passed(pos)
	}
	return e
}

// readTrack is what the store keeps of one reader on one partition. It is
// changed in place under the store's lock; views read its readStatus.
type readTrack struct {
	ring                []readSample // oldest first
	lost, counted       int64
	lostFirst, lostLast time.Time
	behind              int64
	// pos is the latest position, -1 none yet; pending a log start above
	// it that a Kafka poll brought before the next position did.
	pos     int64
	pending pendingStart
	// evaluated is the latest poll the loss rule ran at.
	evaluated time.Time
	anchor    lagAnchor
	// eval is the position read against the latest tables.
	eval lagEval
	// memo is what status last found of the samples in its window: a
	// Kafka poll moves evaluated on without adding a sample, and while
	// the window holds the same samples their rates are the same.
	memo windowMemo
}

// windowMemo is status's reading of one window of samples, with the first
// and last sample's times and the count that name the window.
type windowMemo struct {
	n                          int
	first, last                int64
	span                       time.Duration
	behindAll, samePos, rewind bool
	posRate, endRate           float64
}

// pendingStart is a log start above the latest position, seen at the poll
// at, not counted yet.
type pendingStart struct {
	start int64 // 0 none
	at    time.Time
}

func newTrack() *readTrack { return &readTrack{pos: -1} }

// observeStart applies the loss rule to position pos and log start start,
// both seen at the poll at (a Flink poll with the latest log start, or a
// Kafka poll with a group's commit).
//
// A log start that a Kafka poll brought above the position seen before
// (observeLaterStart) is counted here, once the next position tells how
// far the reader got: while it is still below the log start, from the new
// position (what it read meanwhile was not lost); once past it, from the
// position seen before the log start moved (it may have skipped them).
func (t *readTrack) observeStart(at time.Time, pos, start int64) {
	if pos < 0 || start < 0 {
		return
	}
	if start < t.counted {
		t.counted, t.pending = start, pendingStart{} // the log restarted lower
	}
	if p := t.pending; p.start > 0 && pos >= p.start {
		t.count(p.at, max(t.pos, 0), p.start)
	}
	t.pending = pendingStart{}
	t.pos, t.behind = pos, max(0, start-pos)
	t.count(at, pos, start)
	t.evaluated = at
}

// observeLaterStart takes a log start seen at the Kafka poll at, after the
// latest position: it is counted (observeStart) when the next position
// comes. The reader is behind meanwhile.
func (t *readTrack) observeLaterStart(at time.Time, start int64) {
	if t.pos < 0 || start < 0 {
		return
	}
	if start < t.counted {
		t.counted, t.pending = start, pendingStart{}
	}
	t.behind = max(0, start-t.pos)
	if start > max(t.pos, t.counted) && start > t.pending.start {
		if t.pending.start == 0 {
			t.pending.at = at
		}
		t.pending.start = start
	}
	t.evaluated = at
}

// count adds the records from max(pos, counted) up to start, seen deleted
// at the poll at.
func (t *readTrack) count(at time.Time, pos, start int64) {
	if from := max(pos, t.counted); start > from {
		t.lost += start - from
		if t.lostFirst.IsZero() {
			t.lostFirst = at
		}
		t.lostLast = at
	}
	t.counted = max(t.counted, start)
}

// add appends a sample, keeping the newest readRing.
func (t *readTrack) add(s readSample) {
	if n := len(t.ring); n > 0 && s.at <= t.ring[n-1].at {
		return // a poll seen twice or out of order
	}
	if len(t.ring) == readRing {
		copy(t.ring, t.ring[1:])
		t.ring = t.ring[:readRing-1]
	}
	t.ring = append(t.ring, s)
}

// anchorAt remembers when, by table tt seen at the poll at, the end offset
// passed pos; an earlier time already known for the same position wins.
// gen is the tables' generation: the track keeps the reading (eval).
func (t *readTrack) anchorAt(tt *kafka.TimeTable, pos int64, at time.Time, gen uint64) {
	if tt == nil {
		t.eval = lagEval{}
		return
	}
	t.eval = evaluate(tt, pos, gen)
	kind := t.eval.kind
	sec := kafka.LagAt(t.eval.passed, kind, at)
	if kind != kafka.TimeLagInterpolated && kind != kafka.TimeLagAtLeast {
		if kind == kafka.TimeLagCaughtUp || t.anchor.pos != pos {
			t.anchor = lagAnchor{}
		}
		return
	}
	passed := at.Add(-time.Duration(sec * float64(time.Second)))
	if t.anchor.kind != 0 && t.anchor.pos == pos && !passed.Before(t.anchor.at) {
		return
	}
	t.anchor = lagAnchor{pos: pos, at: passed, kind: kind}
}

// readStatus is what views read of a readTrack: the window's facts and
// the loss, taken after every update. It is immutable.
type readStatus struct {
	n         int
	span      time.Duration
	behindAll bool // the end offset above the position at every sample
	samePos   bool
	rewound   bool
	posRate   float64 // NaN unknown
	endRate   float64 // NaN unknown
	loss      *Loss   // nil while nothing was lost and the reader is not behind
	anchor    lagAnchor
	eval      lagEval
}

// lostSince reports whether records were counted lost within readWindow
// before now, or the reader was below the log start at the latest poll.
func (st *readStatus) lostSince(now time.Time) bool {
	if st == nil || st.loss == nil {
		return false
	}
	return st.loss.Behind > 0 || (!st.loss.LastSeen.IsZero() && now.Sub(st.loss.LastSeen) <= readWindow)
}

// status sums up the track as of its newest sample (or loss evaluation).
func (t *readTrack) status() readStatus {
	st := readStatus{posRate: math.NaN(), endRate: math.NaN(), anchor: t.anchor, eval: t.eval}
	latest := nanos(t.evaluated)
	if n := len(t.ring); n > 0 && t.ring[n-1].at > latest {
		latest = t.ring[n-1].at
	}
	if t.lost > 0 || t.behind > 0 {
		st.loss = &Loss{Records: t.lost, FirstSeen: t.lostFirst, LastSeen: t.lostLast, Behind: t.behind}
	}
	w := t.ring
	for len(w) > 0 && time.Duration(latest-w[0].at) > readWindow {
		w = w[1:]
	}
	st.n = len(w)
	if st.n == 0 {
		return st
	}
	if m := &t.memo; m.n == st.n && m.first == w[0].at && m.last == w[st.n-1].at {
		st.span, st.behindAll, st.samePos, st.rewound, st.posRate, st.endRate = m.span, m.behindAll, m.samePos, m.rewind, m.posRate, m.endRate
		return st
	}
	defer func() {
		t.memo = windowMemo{n: st.n, first: w[0].at, last: w[st.n-1].at, span: st.span, behindAll: st.behindAll, samePos: st.samePos,
			rewind: st.rewound, posRate: st.posRate, endRate: st.endRate}
	}()
	st.span = time.Duration(w[st.n-1].at - w[0].at)
	st.behindAll, st.samePos = true, true
	top := w[0].pos // the highest position so far
	for i, s := range w {
		if s.endAt == 0 || s.end <= s.pos {
			st.behindAll = false
		}
		if s.pos != w[0].pos {
			st.samePos = false
		}
		if i > 0 && s.pos < w[i-1].pos {
			st.rewound = true
		}
		top = max(top, s.pos)
	}
	if st.rewound {
		// Burrow's rule: a rewind that later positions made up for is not
		// one.
		st.rewound = w[st.n-1].pos < top
	}
	// The ring holds at most readRing samples: the regressions' points fit
	// on the stack (a source of ten thousand partitions computes them all
	// after every poll).
	var tsBuf, ysBuf [readRing]float64
	if !st.rewound {
		ts, ys := tsBuf[:0], ysBuf[:0]
		for _, s := range w {
			ts, ys = append(ts, time.Duration(s.at-w[0].at).Seconds()), append(ys, float64(s.pos))
		}
		st.posRate = slope(ts, ys)
	}
	ts, ys := tsBuf[:0], ysBuf[:0]
	var last int64
	for _, s := range w {
		if s.endAt == 0 || (last != 0 && s.endAt <= last) {
			continue // one point per Kafka poll
		}
		last = s.endAt
		ts, ys = append(ts, time.Duration(s.endAt-w[0].at).Seconds()), append(ys, float64(s.end))
	}
	st.endRate = slope(ts, ys)
	return st
}

// slope is the least-squares slope of ys over ts, NaN with fewer than two
// distinct times.
func slope(ts, ys []float64) float64 {
	n := float64(len(ts))
	if len(ts) < 2 {
		return math.NaN()
	}
	var mt, my float64
	for i := range ts {
		mt += ts[i]
		my += ys[i]
	}
	mt, my = mt/n, my/n
	var sxy, sxx float64
	for i := range ts {
		sxy += (ts[i] - mt) * (ys[i] - my)
		sxx += (ts[i] - mt) * (ts[i] - mt)
	}
	if sxx == 0 {
		return math.NaN()
	}
	return sxy / sxx
}

// rateTolerance is the difference between two rates that still counts as
// none: 2 % of the larger, at least 0.1 records/s, within what a window
// of a few polls can tell apart.
func rateTolerance(a, b float64) float64 { return max(0.1, 0.02*max(a, b)) }

// trendOf is the lag's trend when the reader reads at processing and the
// partition receives produced records/s.
func trendOf(processing, produced float64) Trend {
	if isNaN(processing) || isNaN(produced) {
		return TrendUnknown
	}
	d, tol := produced-processing, rateTolerance(processing, produced)
	switch {
	case d > tol:
		return TrendGrowing
	case d < -tol:
		return TrendShrinking
	}
	return TrendSteady
}

// catchUp says when a reader lag records behind catches up, reading at
// processing while produced records/s arrive; lost is set while it skips
// deleted records rather than reading them.
func catchUp(lag int64, processing, produced float64, lost bool) (CatchUp, float64) {
	switch {
	case lag < 0:
		return CatchUpUnknown, 0
	case lag == 0:
		return CatchUpCaughtUp, 0
	case lost || isNaN(processing) || isNaN(produced):
		return CatchUpUnknown, 0
	}
	net, tol := processing-produced, rateTolerance(processing, produced)
	switch {
	case net > tol:
		return CatchUpETA, float64(lag) / net
	case net < -tol:
		return CatchUpNever, 0
	}
	return CatchUpSteady, 0
}

// reading judges, at now, a reader lag records behind (-1 unknown) by its
// status; running is false when the job or the subtask does not run, fresh
// false when the figures are stale or the reader not determined.
func reading(st *readStatus, lag int64, running, fresh bool, now time.Time) Reading {
	r := Reading{State: ReaderUnknown, Trend: TrendUnknown, PositionRate: -1, ProducedRate: -1, CatchUp: CatchUpUnknown}
	if st != nil {
		r.Samples, r.WindowSeconds, r.Lost = st.n, st.span.Seconds(), st.loss
		r.PositionRate, r.ProducedRate = orMinus(st.posRate), orMinus(st.endRate)
		if r.Lost != nil {
			l := *r.Lost
			r.Lost = &l
		}
	}
	lost := st.lostSince(now)
	// The rates need as many samples as a trend: before, only "caught up"
	// can be told.
	enough := st != nil && st.n >= readMinSamples && st.span >= readMinSpan
	if enough {
		r.Trend = trendOf(st.posRate, st.endRate)
	}
	if fresh && st != nil {
		pos, end := st.posRate, st.endRate
		if !enough {
			pos, end = math.NaN(), math.NaN()
		}
		r.CatchUp, r.CatchUpSeconds = catchUp(lag, pos, end, lost)
	}
	switch {
	case lost:
		r.State = ReaderLost
	case !running:
		r.State = ReaderStopped
	case st == nil || !fresh || lag < 0:
	case st.rewound:
		r.State = ReaderRewind
	case lag == 0:
		r.State = ReaderCaughtUp
	case st.n < readMinSamples || st.span < readMinSpan:
	case st.samePos && st.behindAll:
		r.State = ReaderStalled
	case r.Trend == TrendGrowing && st.behindAll:
		r.State = ReaderWarning
	default:
		r.State = ReaderOK
	}
	return r
}

// lagSeconds is the lag in time of a reader at pos by table tt at now, held
// up by the reader's anchor while the position stands still (see
// lagAnchor).
func (st *readStatus) lagSeconds(tt *kafka.TimeTable, pos int64, now time.Time) (float64, kafka.TimeLagKind) {
	if tt == nil {
		return 0, kafka.TimeLagUnknown
	}
	sec, kind := tt.LagSeconds(pos, now)
	return st.held(sec, kind, pos, now)
}

// lagFrom is lagSeconds for a view of partition p of the topic index ti:
// the reader's evaluation answers when it was read from ti's tables at
// pos, and p's table is read only when it was not.
func (st *readStatus) lagFrom(ti *topicIndex, p int32, pos int64, now time.Time) (float64, kafka.TimeLagKind) {
	if st == nil || ti.gen == 0 || st.eval.gen != ti.gen || st.eval.pos != pos {
		return st.lagSeconds(ti.table(p), pos, now)
	}
	return st.held(kafka.LagAt(st.eval.passed, st.eval.kind, now), st.eval.kind, pos, now)
}

// held applies the reader's anchor to a lag the table gave.
func (st *readStatus) held(sec float64, kind kafka.TimeLagKind, pos int64, now time.Time) (float64, kafka.TimeLagKind) {
	if st == nil || kind != kafka.TimeLagAtLeast || st.anchor.kind == 0 || st.anchor.pos != pos {
		return sec, kind
	}
	if held := now.Sub(st.anchor.at).Seconds(); held > sec {
		return held, st.anchor.kind
	}
	return sec, kind
}

// countStates counts readings by state, worst first, leaving out states
// no partition is in.
func countStates(rs []Reading) []StateCount {
	n := map[ReaderState]int{}
	for _, r := range rs {
		n[r.State]++
	}
	return stateCounts(n)
}

// stateCounts lists counts by state, worst first, leaving out states no
// partition is in.
func stateCounts(n map[ReaderState]int) []StateCount {
	out := []StateCount{}
	for _, s := range readerStates {
		if n[s] > 0 {
			out = append(out, StateCount{State: s, Count: n[s]})
		}
	}
	return out
}

// groupKey names a consumer group of a Kafka cluster.
type groupKey struct{ cluster, group string }

// sourceReads are a source's tracks (by lineage key: endpoint, job name,
// vertex name) and their status, rebuilt after every update that changes
// them; groupReads a group's.
type sourceReads struct {
	cluster string
	tracks  map[topicPart]*readTrack
}

// trackSource samples a running Kafka source's positions (sample set: a
// Flink poll at at) or applies the loss rule to them again (a Kafka poll
// at at brought log starts).
func (s *Store) trackSource(endpoint string, j *flink.JobSnapshot, v *flink.VertexSnapshot, at time.Time, sample bool) {
	if !j.State.Running() || v.Kafka == nil || v.Stale {
		return
	}
	key := vertexKey{endpoint, j.Name, v.Name}
	cluster := s.clusterFor(endpoint, v)
	sr := s.srcReads[key]
	if sr == nil || sr.cluster != cluster {
		sr = &sourceReads{cluster: cluster, tracks: map[topicPart]*readTrack{}}
		s.srcReads[key] = sr
	}
	parts, idx := s.parts[cluster], s.topicIdx[cluster]
	oo := s.owners[vertexKey{endpoint, j.ID, v.ID}]
	// The owners' roles by listed entry, when decided from this listing,
	// spare a lookup per partition; so does the topic of the entry before.
	byState := oo.byState
	if len(byState) != len(v.Kafka.States) {
		byState = nil
	}
	var lastName, topic string
	var ti *topicIndex
	var gen uint64 // ti's: a view reads evaluations only through an index
	for i, st := range v.Kafka.States {
		if byState != nil {
			if byState[i] != stateOwner {
				continue
			}
		} else if o, ok := oo.owner[st.KafkaPartition]; !ok || o != st.Subtask {
			continue
		}
		if st.CurrentOffset < 0 {
			continue
		}
		if st.Topic != lastName || topic == "" {
			lastName, topic = st.Topic, s.resolve(cluster, st.Topic)
			ti, gen = idx[topic], 0
			if ti != nil {
				gen = ti.gen
			}
		}
		tp := topicPart{topic, st.Partition}
		t := sr.tracks[tp]
		if t == nil {
			t = newTrack()
			sr.tracks[tp] = t
		}
		pos := st.CurrentOffset + 1
		var p kafka.Partition
		var ok bool
		var tt *kafka.TimeTable
		if ti != nil {
			if pp := ti.part(st.Partition); pp != nil {
				p, ok = *pp, true
			}
			if tt = ti.table(st.Partition); tt == nil {
				// Not in the latest listing: a table may remain.
				tt = s.tables[tpKey{cluster, tp.topic, tp.partition}]
			}
		} else {
			p, ok = parts[tp]
			tt = s.tables[tpKey{cluster, tp.topic, tp.partition}]
		}
		if !sample {
			if ok {
				t.observeLaterStart(at, p.Start)
			}
			// The tables moved on: the position is read against them
			// again, for the views of this update.
			t.eval = evaluate(tt, pos, gen)
			continue
		}
		if ok {
			t.observeStart(at, pos, p.Start)
		}
		rs := readSample{at: nanos(at), pos: pos}
		if ok && knownEnd(p) {
			rs.end, rs.endAt = p.End, nanos(p.UpdatedAt)
		}
		t.add(rs)
		t.anchorAt(tt, pos, at, gen)
	}
	s.publishSource(key, sr)
}

// publishSource rebuilds the status views read of a source's tracks.
func (s *Store) publishSource(key vertexKey, sr *sourceReads) {
	m := make(map[topicPart]readStatus, len(sr.tracks))
	for tp, t := range sr.tracks {
		m[tp] = t.status()
	}
	s.srcStatus[key] = sourceStatus{cluster: sr.cluster, parts: m, byTopic: indexReads(m)}
}

// topicReads is one topic's part of a source's published status, indexed
// by partition number: a view of many partitions finds each one's status
// without hashing its topic name. Never changed once published.
type topicReads struct {
	st  []readStatus
	has []bool
}

// get returns partition p's status, nil when the source tracks no reader
// of it.
func (tr *topicReads) get(p int32) *readStatus {
	if p < 0 || int(p) >= len(tr.has) || !tr.has[p] {
		return nil
	}
	return &tr.st[p]
}

// indexReads indexes a source's published status by topic and partition
// number. A topic whose partition numbers are negative or far sparser
// than its tracks (an answer no broker gives) is left out: views find its
// partitions in the map.
func indexReads(m map[topicPart]readStatus) map[string]*topicReads {
	size, count, sparse := map[string]int{}, map[string]int{}, map[string]bool{}
	for tp := range m {
		if tp.partition < 0 {
			sparse[tp.topic] = true
			continue
		}
		size[tp.topic] = max(size[tp.topic], int(tp.partition)+1)
		count[tp.topic]++
	}
	out := make(map[string]*topicReads, len(size))
	for t, n := range size {
		if !sparse[t] && n <= 2*count[t]+64 {
			out[t] = &topicReads{st: make([]readStatus, n), has: make([]bool, n)}
		}
	}
	for tp, rs := range m {
		if tr := out[tp.topic]; tr != nil {
			tr.st[tp.partition], tr.has[tp.partition] = rs, true
		}
	}
	return out
}

// sourceStatus is the published status of a source's tracks; its map is
// never changed once published.
type sourceStatus struct {
	cluster string
	parts   map[topicPart]readStatus
	// byTopic is parts again by topic and partition number (indexReads).
	byTopic map[string]*topicReads
}

// trackSourceStarts applies the loss rule to the latest positions of every
// running Kafka source that reads cluster, after a Kafka poll at at.
func (s *Store) trackSourceStarts(cluster string, at time.Time) {
	for _, endpoint := range sortedKeys(s.flink) {
		fs := s.flink[endpoint]
		if fs.Err != nil {
			continue // the positions are the last good poll's
		}
		for i := range fs.Jobs {
			j := &fs.Jobs[i]
			for k := range j.Vertices {
				if v := &j.Vertices[k]; v.Kafka != nil && s.clusterFor(endpoint, v) == cluster {
					s.trackSource(endpoint, j, v, at, false)
				}
			}
		}
	}
}

// forgetSources drops the tracks of the sources endpoint no longer lists
// a job and vertex of (by name).
func (s *Store) forgetSources(snap *flink.Snapshot) {
	listed := map[vertexKey]bool{}
	for _, j := range snap.Jobs {
		for _, v := range j.Vertices {
			listed[vertexKey{snap.Endpoint, j.Name, v.Name}] = true
		}
	}
	for k := range s.srcReads {
		if k.endpoint == snap.Endpoint && !listed[k] {
			delete(s.srcReads, k)
			delete(s.srcStatus, k)
		}
	}
}

// trackGroups samples every group's commits of a Kafka poll and applies
// the loss rule to them; groups the poll no longer lists are forgotten.
func (s *Store) trackGroups(snap *kafka.Snapshot) {
	parts := s.parts[snap.Cluster]
	listed := map[string]bool{}
	for _, g := range snap.Groups {
		listed[g.Name] = true
		if g.Stale {
			continue // the commits are the last good poll's
		}
		key := groupKey{snap.Cluster, g.Name}
		tracks := s.grpReads[key]
		if tracks == nil {
			tracks = map[topicPart]*readTrack{}
			s.grpReads[key] = tracks
		}
		for _, gp := range g.Partitions {
			if gp.Err != nil || gp.Committed < 0 {
				continue
			}
			tp := topicPart{gp.Topic, gp.Partition}
			t := tracks[tp]
			if t == nil {
				t = newTrack()
				tracks[tp] = t
			}
			rs := readSample{at: nanos(snap.CollectedAt), pos: gp.Committed}
			if p, ok := parts[tp]; ok {
				t.observeStart(snap.CollectedAt, gp.Committed, p.Start)
				if knownEnd(p) && !p.Stale {
					rs.end, rs.endAt = p.End, nanos(p.UpdatedAt)
				}
			}
			t.add(rs)
			// A group's lag is read from the table (commitLagOf): its
			// reading records no index.
			t.anchorAt(s.tables[tpKey{snap.Cluster, gp.Topic, gp.Partition}], gp.Committed, snap.CollectedAt, 0)
		}
		m := make(map[topicPart]readStatus, len(tracks))
		for tp, t := range tracks {
			m[tp] = t.status()
		}
		s.grpStatus[key] = m
	}
	for k := range s.grpReads {
		if k.cluster == snap.Cluster && !listed[k.group] {
			delete(s.grpReads, k)
			delete(s.grpStatus, k)
		}
	}
}

// PartitionLoss is one reader's loss on one partition, for /metrics.
type PartitionLoss struct {
	// Endpoint, Job and Vertex name a source (by name), Group a group.
	Endpoint, Job, Vertex, Group string
	Cluster, Topic               string
	Partition                    int32
	Records                      int64
}

// SourceLosses lists, for every partition a running Kafka source read
// since skewscope started, the records Kafka deleted before the source
// read them (0 when none): one entry per source by name, so across
// restores. Sorted.
func (s *State) SourceLosses() []PartitionLoss {
	out := s.sourceLosses()
	sortLosses(out)
	return out
}

// sourceLosses is SourceLosses unsorted.
func (s *picture) sourceLosses() []PartitionLoss {
	running := map[vertexKey]bool{}
	for name, fs := range s.flink {
		for _, j := range fs.Jobs {
			if j.State.Running() {
				for _, v := range j.Vertices {
					running[vertexKey{name, j.Name, v.Name}] = true
				}
			}
		}
	}
	var out []PartitionLoss
	for k, st := range s.srcStatus {
		if !running[k] {
			continue
		}
		for tp, rs := range st.parts {
			pl := PartitionLoss{Endpoint: k.endpoint, Job: k.job, Vertex: k.vertex, Cluster: st.cluster, Topic: tp.topic, Partition: tp.partition}
			if rs.loss != nil {
				pl.Records = rs.loss.Records
			}
			out = append(out, pl)
		}
	}
	return out
}

// GroupLosses lists, for every partition a consumer group commits on, the
// records Kafka deleted before its commit passed them (0 when none).
// Sorted.
func (s *State) GroupLosses() []PartitionLoss {
	out := s.groupLosses()
	sortLosses(out)
	return out
}

// groupLosses is GroupLosses unsorted.
func (s *picture) groupLosses() []PartitionLoss {
	n := 0
	for _, m := range s.grpStatus {
		n += len(m)
	}
	out := make([]PartitionLoss, 0, n)
	for k, m := range s.grpStatus {
		for tp, rs := range m {
			pl := PartitionLoss{Group: k.group, Cluster: k.cluster, Topic: tp.topic, Partition: tp.partition}
			if rs.loss != nil {
				pl.Records = rs.loss.Records
			}
			out = append(out, pl)
		}
	}
	return out
}

func sortLosses(ls []PartitionLoss) {
	slices.SortFunc(ls, func(a, b PartitionLoss) int {
		return cmp.Or(cmp.Compare(a.Endpoint, b.Endpoint), cmp.Compare(a.Job, b.Job), cmp.Compare(a.Vertex, b.Vertex),
			cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Group, b.Group), cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
}
