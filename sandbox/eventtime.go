package sandbox

import (
	"math"
	"time"
)

// Event time, as Flink computes it for a KafkaSource with
// WatermarkStrategy.forBoundedOutOfOrderness(bound) on the records' Kafka
// timestamps, optionally .withIdleness(timeout) (see
// ../shared/reference/event-time.md and the recordings in
// collectors/testdata/flink/eventtime):
//
//   - each split (partition) has its own generator: its watermark is the
//     highest timestamp read minus the bound minus 1 ms
//     (BoundedOutOfOrdernessWatermarks), Long.MIN_VALUE before its first
//     record; with an idle timeout a split that has emitted no record for
//     that long is idle (WatermarksWithIdleness);
//   - a source subtask's output watermark is the minimum over its non-idle
//     splits, and it only ever advances (WatermarkOutputMultiplexer's
//     combined watermark); a subtask whose splits are all idle is idle and
//     keeps its last watermark; one that reads no partition emits none
//     (Long.MIN_VALUE) and holds back everything downstream, unless the
//     strategy has an idle timeout: then it goes idle after that long;
//   - a downstream subtask's input watermark is the minimum over its
//     non-idle inputs, and only ever advances (StatusWatermarkValve); the
//     keyed vertex's process function passes it on.
//
// Watermarks are emitted at every sample (once a second) and when the
// JobManager's metric store is refreshed (fetcher.go), both under the job's
// lock, so a store holds the split, source and keyed watermarks of one
// instant.

// watermarkStrategy is a job's WatermarkStrategy.
type watermarkStrategy struct {
	// bound is forBoundedOutOfOrderness's maximum out-of-orderness.
	bound time.Duration
	// idleTimeout is withIdleness's timeout; 0 for none.
	idleTimeout time.Duration
}

const (
	// watermarkNone is Flink's Long.MIN_VALUE: no watermark yet.
	watermarkNone int64 = math.MinInt64
	// noTimestamp marks a split or subtask that has read no record.
	noTimestamp int64 = math.MinInt64
	// undefinedLag is what FLIP-33's lag gauges report before the first
	// record (InternalSourceReaderMetricGroup's UNDEFINED).
	undefinedLag int64 = -1
	// eventTimeBound is the sandbox jobs' out-of-orderness bound and
	// maxJitter how far a record's timestamp is before its produce time
	// (at most): the bound covers the jitter, so no record is late.
	eventTimeBound = time.Second
	maxJitter      = 400 * time.Millisecond
)

// splitEventTime is one split's event time on its reader. j.mu guards it.
type splitEventTime struct {
	// maxTs is the highest record timestamp read (ms), noTimestamp before
	// the first.
	maxTs int64
	// active is when the split last emitted a record, or was assigned.
	active time.Time
	// idle is the split's idleness at the last emission.
	idle bool
	// accActive and accIdle accumulate its active and idle time (ms).
	accActive, accIdle float64
}

func newSplitEventTime(now time.Time) splitEventTime {
	return splitEventTime{maxTs: noTimestamp, active: now}
}

// watermark is the split's current watermark under a bound.
func (e *splitEventTime) watermark(bound time.Duration) int64 {
	if e.maxTs == noTimestamp {
		return watermarkNone
	}
	return e.maxTs - bound.Milliseconds() - 1
}

// sourceEventTime is one source subtask's reader state. j.mu guards it.
type sourceEventTime struct {
	started time.Time
	// lastEmit is when the reader last emitted a record (zero before the
	// first), lastTs that record's timestamp.
	lastEmit time.Time
	lastTs   int64
	// output is the last watermark the subtask emitted (its
	// currentOutputWatermark), idle whether it is idle.
	output int64
	idle   bool
}

func newSourceEventTime(now time.Time) sourceEventTime {
	return sourceEventTime{started: now, lastTs: noTimestamp, output: watermarkNone}
}

// recordRead notes a record of sp, with timestamp ts (ms), emitted by st
// at now. j.mu must be held.
func recordRead(st *srcTask, sp *split, ts int64, now time.Time) {
	sp.et.maxTs = max(sp.et.maxTs, ts)
	sp.et.active = now
	st.et.lastEmit, st.et.lastTs = now, ts
}

// emitWatermarks is one periodic watermark emission of the whole job at
// now: every split's idleness, every source subtask's output and every
// keyed subtask's input watermark. elapsed is the time since the last
// sample, for the splits' accumulated times (0 when not sampling). j.mu
// must be held.
func (j *job) emitWatermarks(now time.Time, elapsed time.Duration) {
	ws := j.spec.watermarks
	for _, st := range j.src {
		low, active := int64(math.MaxInt64), false
		for _, sp := range st.splits {
			e := &sp.et
			e.idle = ws.idleTimeout > 0 && now.Sub(e.active) >= ws.idleTimeout
			if e.idle {
				e.accIdle += float64(elapsed.Milliseconds())
				continue
			}
			e.accActive += float64(elapsed.Milliseconds())
			active = true
			low = min(low, e.watermark(ws.bound))
		}
		// A reader without splits goes idle only with an idle timeout,
		// once it has run that long without a record; without one it is
		// an input at Long.MIN_VALUE downstream for as long as it runs.
		st.et.idle = !active && ws.idleTimeout > 0 &&
			(len(st.splits) > 0 || now.Sub(st.et.started) >= ws.idleTimeout)
		if active && low > st.et.output {
			st.et.output = low
		}
	}
	low, active := int64(math.MaxInt64), false
	for _, st := range j.src {
		if st.et.idle {
			continue
		}
		active = true
		low = min(low, st.et.output)
	}
	for _, kt := range j.keyed {
		if active && low > kt.watermark {
			kt.watermark = low
		}
	}
}

// sourceIdleMs is the reader's sourceIdleTime at now: how long it has
// emitted no record (since it started, before the first).
func (e *sourceEventTime) sourceIdleMs(now time.Time) int64 {
	since := e.lastEmit
	if since.IsZero() {
		since = e.started
	}
	return max(0, now.Sub(since).Milliseconds())
}

// emitLagMs is currentEmitEventTimeLag: the last record's emit time minus
// its timestamp; undefinedLag before the first.
func (e *sourceEventTime) emitLagMs() int64 {
	if e.lastTs == noTimestamp {
		return undefinedLag
	}
	return e.lastEmit.UnixMilli() - e.lastTs
}

// watermarkLagMs is watermarkLag: the last emit time minus the output
// watermark. ok is false until the first watermark, as Flink registers the
// gauge only then.
func (e *sourceEventTime) watermarkLagMs() (int64, bool) {
	if e.output == watermarkNone {
		return 0, false
	}
	at := e.lastEmit
	if at.IsZero() {
		at = e.started
	}
	return at.UnixMilli() - e.output, true
}
