package sandbox

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skewscope/skewscope/internal/fakejm"
)

// metricSet is one store of metric ids and their string values, as Flink's
// MetricStore holds them.
type metricSet struct {
	ids  []string
	vals map[string]string
}

func newMetricSet() *metricSet { return &metricSet{vals: map[string]string{}} }

func (m *metricSet) set(id, v string) {
	if _, ok := m.vals[id]; !ok {
		m.ids = append(m.ids, id)
	}
	m.vals[id] = v
}

// IDs implements fakejm.Metrics.
func (m *metricSet) IDs() []string { return m.ids }

// AppendValue implements fakejm.Metrics.
func (m *metricSet) AppendValue(b []byte, id string) ([]byte, bool) {
	v, ok := m.vals[id]
	return append(b, v...), ok
}

func (m *metricSet) num(id string) float64 {
	v, _ := strconv.ParseFloat(m.vals[id], 64)
	return v
}

// javaDouble formats v like Java's Double.toString for the magnitudes used
// here ("35.0", "97.75").
func javaDouble(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "Infinity"
	case math.IsInf(v, -1):
		return "-Infinity"
	}
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

func javaLong(v int64) string { return strconv.FormatInt(v, 10) }

// srcLoad returns busy, backpressured and idle ms per second of a source
// subtask: busy is the share of its capacity it used, backpressured the time
// it waited on a full keyed subtask.
func (j *job) srcLoad(st *srcTask) (busy, bp, idle float64) {
	in, _, _, bpFrac := st.win.rates()
	bp = math.Round(bpFrac * 1000)
	busy = min(math.Round(in/j.spec.srcCap*1000), 1000-bp)
	return busy, bp, 1000 - busy - bp
}

func (j *job) keyedLoad(kt *keyedTask) (busy, bp, idle float64) {
	in, _, _, _ := kt.win.rates()
	busy = min(math.Round(in/j.spec.keyedCap*1000), 1000)
	return busy, 0, 1000 - busy
}

// addTaskMetrics sets the task-scope metrics of one subtask.
func addTaskMetrics(m *metricSet, in, out int64, inRate, outRate, bytesIn, bytesOut, bytesRate float64, busy, bp, idle float64, acc *window, keyed bool, watermark int64) {
	m.set("numRecordsIn", javaLong(in))
	m.set("numRecordsOut", javaLong(out))
	m.set("numRecordsInPerSecond", javaDouble(inRate))
	m.set("numRecordsOutPerSecond", javaDouble(outRate))
	m.set("numBytesIn", javaLong(int64(bytesIn)))
	m.set("numBytesOut", javaLong(int64(bytesOut)))
	m.set("numBytesInPerSecond", javaDouble(bytesRate))
	m.set("numBytesOutPerSecond", javaDouble(bytesRate))
	m.set("numBuffersOut", javaLong(out/40))
	m.set("numBuffersOutPerSecond", javaDouble(outRate/40))
	m.set("busyTimeMsPerSecond", javaDouble(busy))
	m.set("backPressuredTimeMsPerSecond", javaLong(int64(bp)))
	m.set("softBackPressuredTimeMsPerSecond", "0")
	m.set("hardBackPressuredTimeMsPerSecond", javaLong(int64(bp)))
	m.set("idleTimeMsPerSecond", javaLong(int64(idle)))
	m.set("isBackPressured", strconv.FormatBool(bp > 500))
	m.set("accumulateBusyTimeMs", javaLong(acc.accBusy))
	m.set("accumulateBackPressuredTimeMs", javaLong(acc.accBP))
	m.set("accumulateIdleTimeMs", javaLong(acc.accIdle))
	m.set("maxSoftBackPressureTimeMs", "0")
	m.set("maxHardBackPressureTimeMs", javaLong(int64(bp)))
	m.set("mailboxMailsPerSecond", javaDouble(math.Round(outRate/50*100)/100))
	m.set("mailboxQueueSize", "0")
	m.set("initializationTime", "212")
	m.set("checkpointStartDelayNanos", "0")
	m.set("Shuffle.Netty.Output.Buffers.outPoolUsage", javaDouble(math.Round(bp/10)/100))
	m.set("Shuffle.Netty.Output.Buffers.outputQueueLength", "0")
	if keyed {
		m.set("currentInputWatermark", javaLong(watermark))
		m.set("checkpointAlignmentTime", "0")
		m.set("Shuffle.Netty.Input.Buffers.inPoolUsage", javaDouble(math.Round(busy/10)/100))
		m.set("Shuffle.Netty.Input.Buffers.inputQueueLength", "0")
	}
}

// subtaskMetrics returns the subtask metric stores of a vertex at now (ids
// relative to the subtask, as on …/subtasks/:i/metrics), with the
// watermarks of the last emission. j.mu must be held.
func (j *job) subtaskMetrics(keyed bool, now time.Time) []*metricSet {
	var out []*metricSet
	if keyed {
		op := fakejm.OperatorScope(j.spec.keyedOperator()) + "."
		for _, kt := range j.keyed {
			m := newMetricSet()
			in, outR, bytesR, _ := kt.win.rates()
			busy, bp, idle := j.keyedLoad(kt)
			outN := int64(float64(kt.in) * j.spec.outPerIn)
			addTaskMetrics(m, kt.in, outN, in, outR, float64(kt.bytes), float64(kt.bytes), bytesR, busy, bp, idle, &kt.win, true, kt.watermark)
			m.set(op+"numRecordsIn", javaLong(kt.in))
			m.set(op+"numRecordsOut", javaLong(outN))
			m.set(op+"numRecordsInPerSecond", javaDouble(in))
			m.set(op+"numRecordsOutPerSecond", javaDouble(outR))
			// The process function passes its input watermark on.
			m.set(op+"currentInputWatermark", javaLong(kt.watermark))
			m.set(op+"currentOutputWatermark", javaLong(kt.watermark))
			out = append(out, m)
		}
		return out
	}
	op := fakejm.OperatorScope(j.spec.srcOperator()) + "."
	for _, st := range j.src {
		m := newMetricSet()
		in, outR, bytesR, _ := st.win.rates()
		busy, bp, idle := j.srcLoad(st)
		addTaskMetrics(m, st.records, st.records, in, outR, float64(st.bytes), float64(st.bytes), bytesR, busy, bp, idle, &st.win, false, watermarkNone)
		var pending, lagMax int64
		for _, sp := range st.splits {
			if sp.hw >= 0 {
				lag := sp.hw - max(sp.next, 0)
				pending += max(lag, 0)
				lagMax = max(lagMax, lag)
			}
		}
		m.set(op+"numRecordsIn", javaLong(st.records))
		m.set(op+"numRecordsOut", javaLong(st.records))
		m.set(op+"numRecordsInPerSecond", javaDouble(in))
		m.set(op+"numRecordsOutPerSecond", javaDouble(outR))
		m.set(op+"numBytesIn", javaLong(st.bytes))
		m.set(op+"numBytesInPerSecond", javaDouble(bytesR))
		m.set(op+"numRecordsInErrors", "0")
		// A reader without a split lists neither pendingRecords nor,
		// having emitted no watermark, watermarkLag (the recordings of
		// readers without a partition).
		if len(st.splits) > 0 {
			m.set(op+"pendingRecords", javaLong(pending))
		}
		m.set(op+"currentOutputWatermark", javaLong(st.et.output))
		m.set(op+"sourceIdleTime", javaLong(st.et.sourceIdleMs(now)))
		m.set(op+"currentEmitEventTimeLag", javaLong(st.et.emitLagMs()))
		if lag, ok := st.et.watermarkLagMs(); ok {
			m.set(op+"watermarkLag", javaLong(lag))
		}
		kr := op + "KafkaSourceReader."
		m.set(kr+"commitsSucceeded", javaLong(st.commitsOK))
		m.set(kr+"commitsFailed", "0")
		kc := kr + "KafkaConsumer."
		m.set(kc+"records-lag-max", javaDouble(float64(lagMax)))
		m.set(kc+"records-consumed-rate", javaDouble(in))
		m.set(kc+"records-consumed-total", javaDouble(float64(st.records)))
		m.set(kc+"bytes-consumed-rate", javaDouble(bytesR))
		m.set(kc+"bytes-consumed-total", javaDouble(float64(st.bytes)))
		m.set(kc+"assigned-partitions", javaDouble(float64(len(st.splits))))
		for _, sp := range st.splits {
			t, p := sp.tp.Topic, sp.tp.Partition
			m.set(fakejm.KafkaOffsetID(j.spec.srcOperator(), t, p, fakejm.CurrentOffset), javaLong(sp.current))
			m.set(fakejm.KafkaOffsetID(j.spec.srcOperator(), t, p, fakejm.CommittedOffset), javaLong(sp.committed))
			addSplitMetrics(m, j.spec.srcOperator(), sp, j.spec.watermarks.bound)
		}
		out = append(out, m)
	}
	return out
}

// addSplitMetrics sets a split's watermark gauges (FLIP-513, Flink ≥ 2.1)
// in the forms the recordings have: the times per second of an active
// split read "1000.0" and "0", accumulated active time a double, the
// others whole numbers. Nothing pauses a sandbox split: no job aligns
// watermarks.
func addSplitMetrics(m *metricSet, operator string, sp *split, bound time.Duration) {
	t, p := sp.tp.Topic, sp.tp.Partition
	active, idle := 1000.0, int64(0)
	if sp.et.idle {
		active, idle = 0, 1000
	}
	id := func(gauge string) string { return fakejm.SplitWatermarkID(operator, t, p, gauge) }
	m.set(id("currentWatermark"), javaLong(sp.et.watermark(bound)))
	m.set(id("activeTimeMsPerSecond"), javaDouble(active))
	m.set(id("idleTimeMsPerSecond"), javaLong(idle))
	m.set(id("pausedTimeMsPerSecond"), "0")
	m.set(id("accumulatedActiveTimeMs"), javaDouble(sp.et.accActive))
	m.set(id("accumulatedIdleTimeMs"), javaLong(int64(sp.et.accIdle)))
	m.set(id("accumulatedPausedTimeMs"), "0")
}

// vertexStore prefixes each subtask's ids with "<subtask>.", as the vertex
// metrics endpoint lists them.
func vertexStore(ms []*metricSet) *metricSet {
	v := newMetricSet()
	for i, m := range ms {
		for _, id := range m.ids {
			v.set(strconv.Itoa(i)+"."+id, m.vals[id])
		}
	}
	return v
}

// jobMetrics is the job-scope store (/jobs/:jid/metrics). j.mu must be held.
func (j *job) jobMetrics() *metricSet {
	m := newMetricSet()
	var last *checkpoint
	for _, cp := range j.cps {
		if !cp.failed {
			last = cp
		}
	}
	size, dur, id, ts := int64(-1), int64(-1), int64(-1), int64(-1)
	if last != nil {
		size, dur, id, ts = last.size(), last.ack-last.trigger, last.id, last.ack
	}
	up := j.duration(time.Now().UnixMilli())
	restoreTS := int64(-1)
	if j.restored != nil {
		restoreTS = j.restored.at
	}
	for _, kv := range [][2]string{
		{"numRestarts", "0"}, {"numRescales", "0"}, {"uptime", javaLong(up)}, {"downtime", "0"},
		{"restartingTime", "0"}, {"failingTime", "0"}, {"cancellingTime", "0"}, {"createdTime", "0"},
		{"initializingTime", "0"}, {"deployingTime", "0"}, {"runningTime", javaLong(up)},
		{"allSubTasksRunningOrFinishedTime", "0"},
		{"numberOfCompletedCheckpoints", strconv.Itoa(j.cpTotal - j.cpFailed)},
		{"numberOfFailedCheckpoints", strconv.Itoa(j.cpFailed)},
		{"numberOfInProgressCheckpoints", "0"},
		{"totalNumberOfCheckpoints", strconv.Itoa(j.cpTotal)},
		{"lastCheckpointSize", javaLong(size)}, {"lastCheckpointFullSize", javaLong(size)},
		{"lastCheckpointDuration", javaLong(dur)}, {"lastCompletedCheckpointId", javaLong(id)},
		{"lastCheckpointCompletedTimestamp", javaLong(ts)},
		{"lastCheckpointRestoreTimestamp", javaLong(restoreTS)},
		{"lastCheckpointMetadataSize", javaLong(min(size, 2048))},
		{"lastCheckpointProcessedData", "0"}, {"lastCheckpointPersistedData", "0"},
		{"lastCheckpointExternalPath", externalPath(last)},
	} {
		m.set(kv[0], kv[1])
	}
	return m
}

func externalPath(cp *checkpoint) string {
	if cp == nil {
		return "n/a"
	}
	return cp.path
}

func (j *job) findCheckpoint(id int64) *checkpoint {
	for _, cp := range j.cps {
		if cp.id == id {
			return cp
		}
	}
	return nil
}

// checkpointStats is CheckpointStatistics; with tasks it fills the
// per-vertex task statistics like the details endpoint.
func (j *job) checkpointStats(cp *checkpoint, withTasks bool) *fakejm.CheckpointStatistics {
	cls, status := "completed", "COMPLETED"
	if cp.failed {
		cls, status = "failed", "FAILED"
	}
	n := len(cp.srcState) + len(cp.keyedState)
	acked := n
	if cp.failed {
		acked = len(cp.keyedState)
	}
	cpType := "CHECKPOINT"
	var format *string
	if cp.savepoint {
		cpType, format = "SYNC_SAVEPOINT", ptr("CANONICAL")
	}
	tasks := map[string]fakejm.TaskCheckpointStatistics{}
	if withTasks {
		tasks[j.keyedVID] = j.taskCheckpoint(cp, true)
		tasks[j.srcVID] = j.taskCheckpoint(cp, false)
	}
	o := &fakejm.CheckpointStatistics{
		ClassName: cls, ID: cp.id, Status: status, IsSavepoint: cp.savepoint,
		SavepointFormat: format, TriggerTimestamp: cp.trigger, LatestAckTimestamp: cp.ack,
		CheckpointedSize: cp.size(), StateSize: cp.size(), EndToEndDuration: cp.ack - cp.trigger,
		NumSubtasks: n, NumAcknowledged: acked, CheckpointType: cpType, Tasks: tasks,
	}
	if cp.failed {
		o.FailureTimestamp, o.FailureMessage = ptr(cp.ack), ptr(cp.failure)
	} else {
		o.ExternalPath, o.Discarded = cp.path, ptr(false)
	}
	return o
}

func ptr[T any](v T) *T { return &v }

// task returns the per-subtask state sizes and ack delays of one vertex.
func (cp *checkpoint) task(keyed bool) (sizes, delays []int64) {
	if keyed {
		return cp.keyedState, cp.keyAckDelay
	}
	return cp.srcState, cp.srcAckDelay
}

func (j *job) taskCheckpoint(cp *checkpoint, keyed bool) fakejm.TaskCheckpointStatistics {
	sizes, delays := cp.task(keyed)
	var total, maxDelay int64
	for i, s := range sizes {
		total += s
		maxDelay = max(maxDelay, delays[i])
	}
	return fakejm.TaskCheckpointStatistics{
		ID: cp.id, Status: "COMPLETED", LatestAckTimestamp: cp.trigger + maxDelay,
		CheckpointedSize: total, StateSize: total, EndToEndDuration: maxDelay,
		NumSubtasks: len(sizes), NumAcknowledged: len(sizes),
	}
}

// minMaxAvg is a StatsSummaryDto as the per-task checkpoint summary writes
// it: percentiles are not kept there, so Jackson writes them as "NaN".
func minMaxAvg(vs []int64) fakejm.MinMaxAvg {
	if len(vs) == 0 {
		vs = []int64{0}
	}
	mn, mx, sum := vs[0], vs[0], int64(0)
	for _, v := range vs {
		mn, mx, sum = min(mn, v), max(mx, v), sum+v
	}
	nan := fakejm.Float(math.NaN())
	return fakejm.MinMaxAvg{Min: mn, Max: mx, Avg: sum / int64(len(vs)), P50: nan, P90: nan, P95: nan, P99: nan, P999: nan}
}

// checkpointSubtasks answers …/checkpoints/details/:cp/subtasks/:vid. j.mu
// must be held.
func (j *job) checkpointSubtasks(cp *checkpoint, keyed bool) *fakejm.CheckpointSubtasks {
	sizes, delays := cp.task(keyed)
	zeros := make([]int64, len(sizes))
	async := make([]int64, len(sizes))
	align := make([]int64, len(sizes))
	for i := range async {
		async[i] = 1 + delays[i]/4
		if keyed {
			// The keyed vertex waits for the barriers of its inputs'
			// channels; a source has none to align.
			align[i] = delays[i] / 4
		}
	}
	o := &fakejm.CheckpointSubtasks{TaskCheckpointStatistics: j.taskCheckpoint(cp, keyed), Subtasks: []fakejm.SubtaskCheckpoint{}}
	for i, s := range sizes {
		sub := fakejm.SubtaskCheckpoint{
			ClassName: "completed", Index: i, AckTimestamp: cp.trigger + delays[i],
			EndToEndDuration: delays[i], CheckpointedSize: s, StateSize: s,
			StartDelay: delays[i] / 2, Status: "completed",
		}
		sub.Checkpoint.Async = async[i]
		sub.Alignment.Duration = align[i]
		o.Subtasks = append(o.Subtasks, sub)
	}
	buffered := minMaxAvg(zeros)
	buffered.P50, buffered.P90, buffered.P95, buffered.P99, buffered.P999 = 0, 0, 0, 0, 0
	halves := make([]int64, len(delays))
	for i, d := range delays {
		halves[i] = d / 2
	}
	o.Summary = fakejm.CheckpointSubtaskSummary{
		CheckpointedSize: minMaxAvg(sizes), StateSize: minMaxAvg(sizes),
		EndToEndDuration:   minMaxAvg(delays),
		CheckpointDuration: &fakejm.CheckpointDurationSummary{Sync: minMaxAvg(zeros), Async: minMaxAvg(async)},
		Alignment: &fakejm.AlignmentSummary{
			Buffered: buffered, Processed: minMaxAvg(zeros), Persisted: minMaxAvg(zeros), Duration: minMaxAvg(align),
		},
		StartDelay: minMaxAvg(halves),
	}
	return o
}

// percentiles is the job-level checkpoint summary StatsSummaryDto.
func percentiles(vs []int64) fakejm.MinMaxAvg {
	if len(vs) == 0 {
		return fakejm.MinMaxAvg{}
	}
	s := slices.Sorted(slices.Values(vs))
	var sum int64
	for _, v := range s {
		sum += v
	}
	q := func(p float64) fakejm.Float { return fakejm.Float(nearestRank(s, p)) }
	return fakejm.MinMaxAvg{
		Min: s[0], Max: s[len(s)-1], Avg: sum / int64(len(s)),
		P50: q(0.5), P90: q(0.9), P95: q(0.95), P99: q(0.99), P999: q(0.999),
	}
}

// nearestRank is the p quantile (0 < p ≤ 1) of the non-empty sorted, by
// the nearest-rank method.
func nearestRank[T int64 | float64](sorted []T, p float64) T {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// checkpoints answers /jobs/:id/checkpoints. j.mu must be held.
func (j *job) checkpoints() *fakejm.Checkpoints {
	var sizes, durs, zeros []int64
	var latestOK, latestFailed *checkpoint
	out := &fakejm.Checkpoints{History: []*fakejm.CheckpointStatistics{}}
	for i := len(j.cps) - 1; i >= 0; i-- {
		cp := j.cps[i]
		out.History = append(out.History, j.checkpointStats(cp, false))
		if cp.failed {
			if latestFailed == nil {
				latestFailed = cp
			}
			continue
		}
		if latestOK == nil && !cp.savepoint {
			latestOK = cp
		}
		sizes = append(sizes, cp.size())
		durs = append(durs, cp.ack-cp.trigger)
		zeros = append(zeros, 0)
	}
	if latestOK != nil {
		out.Latest.Completed = j.checkpointStats(latestOK, false)
	}
	if j.latestSP != nil {
		out.Latest.Savepoint = j.checkpointStats(j.latestSP, false)
	}
	if latestFailed != nil {
		out.Latest.Failed = j.checkpointStats(latestFailed, false)
	}
	if j.restored != nil {
		out.Counts.Restored = 1
		out.Latest.Restored = &fakejm.RestoredCheckpoint{
			ID: j.restored.id, RestoreTimestamp: j.restored.at, IsSavepoint: true, ExternalPath: j.restored.path,
		}
	}
	out.Counts.Total = int64(j.cpTotal)
	out.Counts.Completed = int64(j.cpTotal - j.cpFailed)
	out.Counts.Failed = int64(j.cpFailed)
	out.Summary = map[string]fakejm.MinMaxAvg{
		"checkpointed_size": percentiles(sizes), "state_size": percentiles(sizes),
		"end_to_end_duration": percentiles(durs), "alignment_buffered": percentiles(zeros),
		"processed_data": percentiles(zeros), "persisted_data": percentiles(zeros),
	}
	return out
}
