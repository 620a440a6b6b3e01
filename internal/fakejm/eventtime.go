package fakejm

import (
	"math"
	"strconv"
)

// Event time (Config.EventTime): every job reads its partitions with
// WatermarkStrategy.forBoundedOutOfOrderness(eventTimeBoundMs), no idle
// timeout. A job's clock moves ten seconds with every request for its
// details (/jobs/:id), which a collector sends once per poll before any
// metric request, so every watermark a poll reads is of one instant, as
// one refresh of a real JobManager's metric store holds them:
//
//   - partition p's last record read is p.lagMs behind the job's clock and
//     its split's watermark that minus the bound minus 1 ms;
//   - a source subtask's output watermark (and its chained operator's
//     input and output) is the lowest of its splits', Long.MIN_VALUE for a
//     subtask without a partition, which then holds back the vertices
//     downstream;
//   - every other vertex's input and output watermark is the lowest of the
//     source subtasks'.
//
// The source reader's FLIP-33 gauges follow: currentEmitEventTimeLag is
// its freshest partition's lag, watermarkLag its output's (listed only by
// a reader that has emitted a watermark, as Flink registers it then),
// sourceIdleTime a few milliseconds (every partition receives records).

// eventTimeBoundMs is the strategy's out-of-orderness bound.
const eventTimeBoundMs = 1000

// pollMs is how far a job's clock moves per poll: the collector's default
// poll interval.
const pollMs = 10_000

// eventTimeClass says how the value of an event-time gauge of a vertex of
// role r (task or operator scope, without the operator) is made; ok is
// false for any other name. Without Config.EventTime these names are not
// listed; nor are the splits' watermark groups (partitionMetricIDs).
func eventTimeClass(r role, name string) (metric, bool) {
	switch name {
	case "currentInputWatermark", "currentOutputWatermark":
		if r == roleSource {
			return mSourceWatermark, true
		}
		return mJobWatermark, true
	case "currentEmitEventTimeLag":
		return mEmitLag, true
	case "sourceIdleTime":
		return mSourceIdle, true
	case "watermarkLag":
		return mWatermarkLag, true
	}
	return 0, false
}

// partitionLagMs is how far behind the job's clock partition n of topic
// index ti was last read: 0.3 to 5 s, uneven.
func partitionLagMs(n, ti int) int64 { return 300 + int64((n*131+ti*57)%4700) }

// eventTimeLags computes each source subtask's largest partition lag
// (−1 without a partition) and the job's.
func (l *layout) eventTimeLags() {
	l.subtaskLagMs = make([]int64, l.cfg.Parallelism)
	l.jobLagMs = 0
	for i, owned := range l.owned {
		l.subtaskLagMs[i] = -1
		for _, pi := range owned {
			l.subtaskLagMs[i] = max(l.subtaskLagMs[i], l.partitions[pi].lagMs)
		}
		if l.subtaskLagMs[i] < 0 {
			l.jobLagMs = -1 // a reader without a partition: no watermark
		} else if l.jobLagMs >= 0 {
			l.jobLagMs = max(l.jobLagMs, l.subtaskLagMs[i])
		}
	}
}

// clockMs is job j's event-time clock: the hour it has run, plus ten
// seconds per poll.
func (j *job) clockMs() int64 { return startMs + jobDuration + pollMs*j.polls.Load() }

// watermarkBehind is the watermark of a last record lagMs behind the
// clock now; Long.MIN_VALUE for lagMs −1.
func watermarkBehind(now, lagMs int64) int64 {
	if lagMs < 0 {
		return math.MinInt64
	}
	return now - lagMs - eventTimeBoundMs - 1
}

// appendEventTime appends the value of event-time gauge m of subtask s.
func (v *vertex) appendEventTime(b []byte, info metricInfo, s int) []byte {
	l := v.job.l
	now := v.job.clockMs()
	switch info.m {
	case mSplitWatermark:
		return strconv.AppendInt(b, watermarkBehind(now, l.partitions[info.part].lagMs), 10)
	case mSourceWatermark:
		return strconv.AppendInt(b, watermarkBehind(now, l.subtaskLagMs[s]), 10)
	case mJobWatermark:
		return strconv.AppendInt(b, watermarkBehind(now, l.jobLagMs), 10)
	case mEmitLag:
		lag := int64(-1)
		for _, pi := range l.owned[s] {
			if p := l.partitions[pi].lagMs; lag < 0 || p < lag {
				lag = p
			}
		}
		return strconv.AppendInt(b, lag, 10)
	case mWatermarkLag:
		return strconv.AppendInt(b, l.subtaskLagMs[s]+eventTimeBoundMs+1, 10)
	case mSourceIdle:
		return strconv.AppendInt(b, 3+int64(s%40), 10)
	}
	return append(b, '0')
}
