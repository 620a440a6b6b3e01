package fakejm

import (
	"math"
	"strconv"
	"strings"
)

// metric says how a metric's value is made.
type metric uint8

const (
	mZero             metric = iota // "0": gauges nobody reads in a load test
	mBusy                           // busyTimeMsPerSecond (a Double gauge: "142.0")
	mIdle                           // idleTimeMsPerSecond
	mBackPressured                  // backPressuredTimeMsPerSecond
	mRecordsIn                      // numRecordsInPerSecond, a meter's rate
	mRecordsOut                     // numRecordsOutPerSecond
	mCountIn                        // numRecordsIn, a counter
	mCountOut                       // numRecordsOut
	mAccBusy                        // accumulateBusyTimeMs
	mAccIdle                        // accumulateIdleTimeMs
	mAccBackPressured               // accumulateBackPressuredTimeMs
	mWatermark                      // a watermark gauge before any watermark: Long.MIN_VALUE
	mCurrentOffset                  // KafkaSourceReader …currentOffset
	mCommittedOffset                // KafkaSourceReader …committedOffset
	mCommits                        // KafkaSourceReader.commitsSucceeded
)

// metricInfo resolves a subtask-relative metric id.
type metricInfo struct {
	m    metric
	part int32 // index of the partition in layout.partitions, −1 for none
}

// classify says how the value of a task-scope (task) or operator-scope
// metric name is made.
func classify(task bool, name string) metric {
	switch name {
	case "numRecordsInPerSecond":
		return mRecordsIn
	case "numRecordsOutPerSecond":
		return mRecordsOut
	case "numRecordsIn":
		return mCountIn
	case "numRecordsOut":
		return mCountOut
	case "KafkaSourceReader.commitsSucceeded":
		return mCommits
	}
	if task {
		switch name {
		case "busyTimeMsPerSecond":
			return mBusy
		case "idleTimeMsPerSecond":
			return mIdle
		case "backPressuredTimeMsPerSecond":
			return mBackPressured
		case "accumulateBusyTimeMs":
			return mAccBusy
		case "accumulateIdleTimeMs":
			return mAccIdle
		case "accumulateBackPressuredTimeMs":
			return mAccBackPressured
		}
	}
	if strings.HasSuffix(name, "Watermark") {
		return mWatermark
	}
	return mZero
}

// metricValues answers a vertex metric request with get=: the requested
// ids the vertex lists, in the requested order. subtask is −1 on the vertex
// endpoint (ids carry "<subtask>."), the subtask on the subtask endpoint.
func (v *vertex) metricValues(ids []string, subtask int) []byte {
	tick := v.calls.Add(1)
	k := v.kind
	l := v.job.l
	b := make([]byte, 0, 64*len(ids)+2)
	b = append(b, '[')
	first := true
	for _, id := range ids {
		s, rest := subtask, id
		if subtask < 0 {
			var ok bool
			if s, rest, ok = cutSubtask(id, l.cfg.Parallelism); !ok {
				continue
			}
		}
		info, ok := k.names[rest]
		if !ok || (info.part >= 0 && l.partitions[info.part].owner != s) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, `{"id":`...)
		b = appendJSONString(b, id)
		b = append(b, `,"value":"`...)
		b = v.appendValue(b, info, s, tick)
		b = append(b, `"}`...)
	}
	return append(b, ']')
}

// cutSubtask splits "<subtask>.<rest>" with a subtask below p.
func cutSubtask(id string, p int) (int, string, bool) {
	d := strings.IndexByte(id, '.')
	if d <= 0 || d > 5 || (d > 1 && id[0] == '0') {
		return 0, "", false
	}
	n := 0
	for i := range d {
		c := id[i]
		if c < '0' || c > '9' {
			return 0, "", false
		}
		n = n*10 + int(c-'0')
	}
	if n >= p {
		return 0, "", false
	}
	return n, id[d+1:], true
}

// appendValue appends the value of one metric of subtask s at the
// vertex's tick-th value request.
func (v *vertex) appendValue(b []byte, info metricInfo, s int, tick int64) []byte {
	ld := v.kind.load[s]
	// Running time in seconds: the job ran an hour before the first
	// request; every value request moves the clock a second.
	secs := jobDuration/1000 + tick
	switch info.m {
	case mBusy:
		return append(strconv.AppendInt(b, ld.busy, 10), ".0"...)
	case mIdle:
		return strconv.AppendInt(b, ld.idle, 10)
	case mBackPressured:
		return strconv.AppendInt(b, ld.backPressured, 10)
	case mRecordsIn:
		return appendJavaDouble(b, ld.in)
	case mRecordsOut:
		return appendJavaDouble(b, ld.out)
	case mCountIn:
		return strconv.AppendInt(b, int64(ld.in*float64(secs)), 10)
	case mCountOut:
		return strconv.AppendInt(b, int64(ld.out*float64(secs)), 10)
	case mAccBusy:
		return strconv.AppendInt(b, ld.busy*secs, 10)
	case mAccIdle:
		return strconv.AppendInt(b, ld.idle*secs, 10)
	case mAccBackPressured:
		return strconv.AppendInt(b, ld.backPressured*secs, 10)
	case mWatermark:
		return strconv.AppendInt(b, math.MinInt64, 10)
	case mCommits:
		return strconv.AppendInt(b, secs/60, 10)
	case mCurrentOffset, mCommittedOffset:
		p := v.job.l.partitions[info.part]
		cur := p.base + int64(p.rate*float64(tick))
		if info.m == mCommittedOffset {
			// The last checkpoint's position: next to read, a few
			// seconds behind.
			return strconv.AppendInt(b, max(cur+1-int64(3*p.rate), 0), 10)
		}
		return strconv.AppendInt(b, cur, 10)
	}
	return append(b, '0')
}

// appendJavaDouble appends x as Java's Double.toString writes common
// values: at least one decimal ("62.0", "102.91666666666667").
func appendJavaDouble(b []byte, x float64) []byte {
	n := len(b)
	b = strconv.AppendFloat(b, x, 'f', -1, 64)
	for _, c := range b[n:] {
		if c == '.' {
			return b
		}
	}
	return append(b, ".0"...)
}

// jobMetrics are the job-scope metrics, in the order the recording lists
// them.
var jobMetrics = []struct {
	name  string
	value func(j *job, latest int64) int64
}{
	{"lastCheckpointSize", func(j *job, latest int64) int64 { return j.checkpoint(latest, false).CheckpointedSize }},
	{"numberOfFailedCheckpoints", func(*job, int64) int64 { return 0 }},
	{"lastCheckpointFullSize", func(j *job, latest int64) int64 { return j.checkpoint(latest, false).StateSize }},
	{"lastCompletedCheckpointId", func(_ *job, latest int64) int64 { return latest }},
	{"numberOfCompletedCheckpoints", func(_ *job, latest int64) int64 { return latest }},
	{"lastCheckpointDuration", func(*job, int64) int64 { return 42 }},
	{"uptime", func(*job, int64) int64 { return jobDuration }},
	{"numRestarts", func(*job, int64) int64 { return 0 }},
}

// metricValues answers /jobs/:id/metrics?get=.
func (j *job) metricValues(ids []string) []byte {
	latest := j.latestCheckpoint(j.cpCalls.Load())
	b := []byte{'['}
	for _, id := range ids {
		for _, m := range jobMetrics {
			if m.name != id {
				continue
			}
			if len(b) > 1 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = appendJSONString(b, id)
			b = append(b, `,"value":"`...)
			b = strconv.AppendInt(b, m.value(j, latest), 10)
			b = append(b, `"}`...)
		}
	}
	return append(b, ']')
}
