package fakejm

import (
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
	mCurrentOffset                  // KafkaSourceReader …currentOffset
	mCommittedOffset                // KafkaSourceReader …committedOffset
	mCommits                        // KafkaSourceReader.commitsSucceeded

	// Event-time gauges (Config.EventTime, eventtime.go).
	mSplitWatermark  // a split's currentWatermark
	mSourceWatermark // a source subtask's watermark (its operators' input and output)
	mJobWatermark    // any other vertex's: the lowest of the sources'
	mEmitLag         // currentEmitEventTimeLag
	mWatermarkLag    // watermarkLag
	mSourceIdle      // sourceIdleTime
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
	return mZero
}

// vertexStore is one request's view of a vertex's metric store (subtask
// −1) or one subtask's.
type vertexStore struct {
	v       *vertex
	subtask int
	// tick numbers the value requests of the vertex: offsets and counters
	// grow with it. It is taken at the first value asked.
	tick int64
}

func (st *vertexStore) IDs() []string {
	if st.subtask < 0 {
		return st.v.kind.allIDs
	}
	return st.v.kind.subIDs[st.subtask]
}

func (st *vertexStore) idListBody() []byte {
	if st.subtask < 0 {
		return st.v.kind.idList
	}
	return st.v.kind.subtaskLists[st.subtask]
}

// AppendValue appends the value of id: on the vertex store ids carry
// "<subtask>.", on a subtask's they do not.
func (st *vertexStore) AppendValue(b []byte, id string) ([]byte, bool) {
	v := st.v
	l := v.job.l
	s, rest := st.subtask, id
	if s < 0 {
		var ok bool
		if s, rest, ok = cutSubtask(id, l.cfg.Parallelism); !ok {
			return b, false
		}
	}
	info, ok := v.kind.names[rest]
	if !ok || (info.part >= 0 && l.partitions[info.part].owner != s) ||
		(info.m == mWatermarkLag && len(l.owned[s]) == 0) {
		return b, false
	}
	if st.tick == 0 {
		st.tick = v.calls.Add(1)
	}
	return v.appendValue(b, info, s, st.tick), true
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
	case mSplitWatermark, mSourceWatermark, mJobWatermark, mEmitLag, mWatermarkLag, mSourceIdle:
		return v.appendEventTime(b, info, s)
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

// jobStore is one request's view of a job's metric store.
type jobStore struct {
	j      *job
	latest int64 // the latest completed checkpoint
}

func (st *jobStore) IDs() []string {
	ids := make([]string, len(jobMetrics))
	for i, m := range jobMetrics {
		ids[i] = m.name
	}
	return ids
}

func (st *jobStore) idListBody() []byte { return st.j.l.jobMetricList }

func (st *jobStore) AppendValue(b []byte, id string) ([]byte, bool) {
	for _, m := range jobMetrics {
		if m.name == id {
			return strconv.AppendInt(b, m.value(st.j, st.latest), 10), true
		}
	}
	return b, false
}
