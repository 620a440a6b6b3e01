package sandbox

import (
	"math"
	"net/url"
	"slices"
	"sort"
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

func (m *metricSet) get(id string) (string, bool) {
	v, ok := m.vals[id]
	return v, ok
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

const longMin = "-9223372036854775808"

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
func addTaskMetrics(m *metricSet, in, out int64, inRate, outRate, bytesIn, bytesOut, bytesRate float64, busy, bp, idle float64, acc *window, keyed bool) {
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
		m.set("currentInputWatermark", longMin)
		m.set("checkpointAlignmentTime", "0")
		m.set("Shuffle.Netty.Input.Buffers.inPoolUsage", javaDouble(math.Round(busy/10)/100))
		m.set("Shuffle.Netty.Input.Buffers.inputQueueLength", "0")
	}
}

// subtaskMetrics returns the subtask metric stores of a vertex (ids
// relative to the subtask, as on …/subtasks/:i/metrics). j.mu must be held.
func (j *job) subtaskMetrics(keyed bool) []*metricSet {
	var out []*metricSet
	if keyed {
		op := fakejm.OperatorScope(j.spec.keyedName) + "."
		for _, kt := range j.keyed {
			m := newMetricSet()
			in, outR, bytesR, _ := kt.win.rates()
			busy, bp, idle := j.keyedLoad(kt)
			outN := int64(float64(kt.in) * j.spec.outPerIn)
			addTaskMetrics(m, kt.in, outN, in, outR, float64(kt.bytes), float64(kt.bytes), bytesR, busy, bp, idle, &kt.win, true)
			m.set(op+"numRecordsIn", javaLong(kt.in))
			m.set(op+"numRecordsOut", javaLong(outN))
			m.set(op+"numRecordsInPerSecond", javaDouble(in))
			m.set(op+"numRecordsOutPerSecond", javaDouble(outR))
			m.set(op+"currentInputWatermark", longMin)
			m.set(op+"currentOutputWatermark", longMin)
			out = append(out, m)
		}
		return out
	}
	op := fakejm.OperatorScope(sourceName) + "."
	for _, st := range j.src {
		m := newMetricSet()
		in, outR, bytesR, _ := st.win.rates()
		busy, bp, idle := j.srcLoad(st)
		addTaskMetrics(m, st.records, st.records, in, outR, float64(st.bytes), float64(st.bytes), bytesR, busy, bp, idle, &st.win, false)
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
		m.set(op+"pendingRecords", javaLong(pending))
		m.set(op+"currentOutputWatermark", longMin)
		m.set(op+"sourceIdleTime", "0")
		m.set(op+"currentEmitEventTimeLag", "0")
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
			m.set(fakejm.KafkaOffsetID(sourceName, t, p, fakejm.CurrentOffset), javaLong(sp.current))
			m.set(fakejm.KafkaOffsetID(sourceName, t, p, fakejm.CommittedOffset), javaLong(sp.committed))
			m.set(fakejm.SplitWatermarkID(sourceName, t, p, "currentWatermark"), longMin)
			m.set(fakejm.SplitWatermarkID(sourceName, t, p, "activeTimeMsPerSecond"), javaDouble(busy))
			m.set(fakejm.SplitWatermarkID(sourceName, t, p, "pausedTimeMsPerSecond"), "0.0")
			m.set(fakejm.SplitWatermarkID(sourceName, t, p, "idleTimeMsPerSecond"), javaDouble(idle))
		}
		out = append(out, m)
	}
	return out
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

// metricsBody answers a metrics request: without get the list of ids, with
// get the requested ids that exist (unknown ones silently dropped).
func metricsBody(q url.Values, m *metricSet) []obj {
	out := []obj{}
	get := q.Get("get")
	if get == "" {
		for _, id := range m.ids {
			out = append(out, obj{"id": id})
		}
		return out
	}
	for _, id := range strings.Split(get, ",") {
		if v, ok := m.vals[id]; ok {
			out = append(out, obj{"id": id, "value": v})
		}
	}
	return out
}

// aggregate is AggregatingSubtasksMetricsHandler: agg of each requested id
// over the selected subtasks; an id no selected subtask has empties the
// whole answer.
func aggregate(q url.Values, ms []*metricSet) []obj {
	sel := parseSubtasks(q.Get("subtasks"), len(ms))
	out := []obj{}
	get := q.Get("get")
	if get == "" {
		seen := map[string]bool{}
		for _, i := range sel {
			for _, id := range ms[i].ids {
				if !seen[id] {
					seen[id] = true
					out = append(out, obj{"id": id})
				}
			}
		}
		return out
	}
	aggs := []string{"min", "max", "avg", "sum", "skew"}
	if a := q.Get("agg"); a != "" {
		aggs = nil
		for _, x := range strings.Split(strings.ToLower(a), ",") {
			switch x {
			case "min", "max", "avg", "sum", "skew":
				aggs = append(aggs, x)
			}
		}
	}
	for _, id := range strings.Split(get, ",") {
		var vs []float64
		found := false
		for _, i := range sel {
			v, ok := ms[i].vals[id]
			if !ok {
				continue
			}
			found = true
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			vs = append(vs, f)
		}
		if !found {
			return []obj{}
		}
		if len(vs) == 0 {
			continue
		}
		o := obj{"id": id}
		mn, mx, sum := vs[0], vs[0], 0.0
		for _, v := range vs {
			mn, mx, sum = min(mn, v), max(mx, v), sum+v
		}
		avg := sum / float64(len(vs))
		var mad float64
		for _, v := range vs {
			mad += math.Abs(v - avg)
		}
		mad /= float64(len(vs))
		skew := 0.0
		if avg != 0 {
			skew = min(100, mad/avg*100)
		}
		for _, a := range aggs {
			o[a] = map[string]float64{"min": mn, "max": mx, "avg": avg, "sum": sum, "skew": skew}[a]
		}
		out = append(out, o)
	}
	return out
}

// parseSubtasks parses "0-3,7"; empty or invalid means all.
func parseSubtasks(s string, n int) []int {
	var out []int
	if s != "" {
		for _, part := range strings.Split(s, ",") {
			lo, hi, isRange := strings.Cut(part, "-")
			a, err1 := strconv.Atoi(lo)
			b := a
			var err2 error
			if isRange {
				b, err2 = strconv.Atoi(hi)
			}
			if err1 != nil || err2 != nil {
				continue
			}
			for i := a; i <= b; i++ {
				if i >= 0 && i < n {
					out = append(out, i)
				}
			}
		}
	}
	if len(out) == 0 {
		for i := range n {
			out = append(out, i)
		}
	}
	sort.Ints(out)
	return out
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
func (j *job) checkpointStats(cp *checkpoint, withTasks bool) obj {
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
	var format any
	if cp.savepoint {
		cpType, format = "SYNC_SAVEPOINT", "CANONICAL"
	}
	tasks := obj{}
	if withTasks {
		tasks[j.keyedVID] = j.taskCheckpoint(cp, true)
		tasks[j.srcVID] = j.taskCheckpoint(cp, false)
	}
	o := obj{
		"className": cls, "id": cp.id, "status": status, "is_savepoint": cp.savepoint,
		"savepointFormat": format, "trigger_timestamp": cp.trigger, "latest_ack_timestamp": cp.ack,
		"checkpointed_size": cp.size(), "state_size": cp.size(), "end_to_end_duration": cp.ack - cp.trigger,
		"alignment_buffered": 0, "processed_data": 0, "persisted_data": 0,
		"num_subtasks": n, "num_acknowledged_subtasks": acked, "checkpoint_type": cpType, "tasks": tasks,
	}
	if cp.failed {
		o["failure_timestamp"] = cp.ack
		o["failure_message"] = cp.failure
	} else {
		o["external_path"] = cp.path
		o["discarded"] = false
	}
	return o
}

// task returns the per-subtask state sizes and ack delays of one vertex.
func (cp *checkpoint) task(keyed bool) (sizes, delays []int64) {
	if keyed {
		return cp.keyedState, cp.keyAckDelay
	}
	return cp.srcState, cp.srcAckDelay
}

func (j *job) taskCheckpoint(cp *checkpoint, keyed bool) obj {
	sizes, delays := cp.task(keyed)
	var total, maxDelay int64
	for i, s := range sizes {
		total += s
		maxDelay = max(maxDelay, delays[i])
	}
	return obj{
		"id": cp.id, "status": "COMPLETED", "latest_ack_timestamp": cp.trigger + maxDelay,
		"checkpointed_size": total, "state_size": total, "end_to_end_duration": maxDelay,
		"alignment_buffered": 0, "processed_data": 0, "persisted_data": 0,
		"num_subtasks": len(sizes), "num_acknowledged_subtasks": len(sizes),
	}
}

// minMaxAvg is a StatsSummaryDto as the per-task checkpoint summary writes
// it: percentiles are not kept there, so Jackson writes them as "NaN".
func minMaxAvg(vs []int64) obj {
	if len(vs) == 0 {
		vs = []int64{0}
	}
	mn, mx, sum := vs[0], vs[0], int64(0)
	for _, v := range vs {
		mn, mx, sum = min(mn, v), max(mx, v), sum+v
	}
	return obj{
		"min": mn, "max": mx, "avg": sum / int64(len(vs)),
		"p50": "NaN", "p90": "NaN", "p95": "NaN", "p99": "NaN", "p999": "NaN",
	}
}

func (j *job) checkpointSubtasks(cp *checkpoint, vid string) obj {
	keyed, ok := j.vertexKeyed(vid)
	if !ok {
		return nil
	}
	o := j.taskCheckpoint(cp, keyed)
	sizes, delays := cp.task(keyed)
	zeros := make([]int64, len(sizes))
	async := make([]int64, len(sizes))
	for i := range async {
		async[i] = 1 + delays[i]/4
	}
	subs := []obj{}
	for i, s := range sizes {
		subs = append(subs, obj{
			"className": "completed", "index": i, "ack_timestamp": cp.trigger + delays[i],
			"end_to_end_duration": delays[i], "checkpointed_size": s, "state_size": s,
			"checkpoint":           obj{"sync": 0, "async": async[i]},
			"alignment":            obj{"buffered": 0, "processed": 0, "persisted": 0, "duration": 0},
			"start_delay":          delays[i] / 2,
			"unaligned_checkpoint": false, "aborted": false, "status": "completed",
		})
	}
	buffered := minMaxAvg(zeros)
	for _, k := range []string{"p50", "p90", "p95", "p99", "p999"} {
		buffered[k] = 0.0
	}
	halves := make([]int64, len(delays))
	for i, d := range delays {
		halves[i] = d / 2
	}
	o["summary"] = obj{
		"checkpointed_size": minMaxAvg(sizes), "state_size": minMaxAvg(sizes),
		"end_to_end_duration": minMaxAvg(delays),
		"checkpoint_duration": obj{"sync": minMaxAvg(zeros), "async": minMaxAvg(async)},
		"alignment": obj{
			"buffered": buffered, "processed": minMaxAvg(zeros), "persisted": minMaxAvg(zeros),
			"duration": minMaxAvg(zeros),
		},
		"start_delay": minMaxAvg(halves),
	}
	o["subtasks"] = subs
	return o
}

// percentiles is the job-level checkpoint summary StatsSummaryDto.
func percentiles(vs []int64) obj {
	if len(vs) == 0 {
		return obj{"min": 0, "max": 0, "avg": 0, "p50": 0.0, "p90": 0.0, "p95": 0.0, "p99": 0.0, "p999": 0.0}
	}
	s := slices.Sorted(slices.Values(vs))
	var sum int64
	for _, v := range s {
		sum += v
	}
	q := func(p float64) float64 { return float64(nearestRank(s, p)) }
	return obj{
		"min": s[0], "max": s[len(s)-1], "avg": sum / int64(len(s)),
		"p50": q(0.5), "p90": q(0.9), "p95": q(0.95), "p99": q(0.99), "p999": q(0.999),
	}
}

// nearestRank is the p quantile (0 < p ≤ 1) of the non-empty sorted, by
// the nearest-rank method.
func nearestRank[T int64 | float64](sorted []T, p float64) T {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func (j *job) checkpoints() obj {
	var sizes, durs, zeros []int64
	var latestOK, latestFailed *checkpoint
	history := []obj{}
	for i := len(j.cps) - 1; i >= 0; i-- {
		cp := j.cps[i]
		history = append(history, j.checkpointStats(cp, false))
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
	latest := obj{"completed": nil, "savepoint": nil, "failed": nil, "restored": nil}
	if latestOK != nil {
		latest["completed"] = j.checkpointStats(latestOK, false)
	}
	if j.latestSP != nil {
		latest["savepoint"] = j.checkpointStats(j.latestSP, false)
	}
	if latestFailed != nil {
		latest["failed"] = j.checkpointStats(latestFailed, false)
	}
	restoredN := 0
	if j.restored != nil {
		restoredN = 1
		latest["restored"] = obj{
			"id": j.restored.id, "restore_timestamp": j.restored.at, "is_savepoint": true,
			"external_path": j.restored.path,
		}
	}
	return obj{
		"counts": obj{
			"restored": restoredN, "total": j.cpTotal, "in_progress": 0,
			"completed": j.cpTotal - j.cpFailed, "failed": j.cpFailed,
		},
		"summary": obj{
			"checkpointed_size": percentiles(sizes), "state_size": percentiles(sizes),
			"end_to_end_duration": percentiles(durs), "alignment_buffered": percentiles(zeros),
			"processed_data": percentiles(zeros), "persisted_data": percentiles(zeros),
		},
		"latest":  latest,
		"history": history,
	}
}
