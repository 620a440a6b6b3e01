package sandbox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Flink's REST server uses Netty's HttpServerCodec with its default
// 4096-byte initial line limit.
const maxRequestLine = 4096

const (
	flinkVersion  = "2.2.1"
	flinkCommit   = "450c63e"
	flinkRevision = "450c63e @ 2026-05-03T10:10:44+02:00"
	slotsPerTM    = 32
)

// obj is a JSON object under construction. The REST bodies are built as
// maps because they mirror Flink's wire JSON one field at a time; the shape
// test compares them with recorded responses.
type obj = map[string]any

type restError struct {
	status int
	msg    string
}

func (e *restError) Error() string { return e.msg }

func notFound(format string, args ...any) error {
	return &restError{http.StatusNotFound, fmt.Sprintf(format, args...)}
}

// restHandler serves the simulated JobManager REST API.
func (s *Sandbox) restHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.Method)+len(r.RequestURI)+len(r.Proto)+2 > maxRequestLine {
			writeJSON(w, http.StatusRequestEntityTooLarge, obj{"errors": []string{"An HTTP line is larger than 4096 bytes."}})
			return
		}
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			writeJSON(w, http.StatusMethodNotAllowed, obj{"errors": []string{"Method not allowed: " + r.Method}})
			return
		}
		path := strings.TrimSuffix(r.URL.Path, "/")
		path = strings.TrimPrefix(path, "/v1")
		body, err := s.route(strings.Split(strings.TrimPrefix(path, "/"), "/"), r)
		if err != nil {
			re, ok := err.(*restError)
			if !ok {
				re = &restError{http.StatusInternalServerError, err.Error()}
			}
			writeJSON(w, re.status, obj{"errors": []string{re.msg}})
			return
		}
		writeJSON(w, http.StatusOK, body)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"errors":["Internal server error."]}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// route dispatches on the path segments.
func (s *Sandbox) route(seg []string, r *http.Request) (any, error) {
	q := r.URL.Query()
	nf := notFound("Not found: %s", r.URL.Path)
	switch {
	case len(seg) == 1 && seg[0] == "config":
		return s.config(), nil
	case len(seg) == 1 && seg[0] == "overview":
		return s.overview(), nil
	case len(seg) == 1 && seg[0] == "taskmanagers":
		return s.taskManagers(), nil
	case len(seg) == 2 && seg[0] == "jobs" && seg[1] == "overview":
		return s.jobsOverview(), nil
	case len(seg) < 2 || seg[0] != "jobs":
		return nil, nf
	}
	j := s.jobByID(seg[1])
	if j == nil {
		return nil, notFound("Job %s not found", seg[1])
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	rest := seg[2:]
	switch {
	case len(rest) == 0:
		return j.details(), nil
	case len(rest) == 1 && rest[0] == "plan":
		return obj{"plan": j.plan()}, nil
	case len(rest) == 1 && rest[0] == "config":
		return j.config(), nil
	case len(rest) == 1 && rest[0] == "metrics":
		return metricsBody(q, j.jobMetrics()), nil
	case len(rest) == 1 && rest[0] == "checkpoints":
		return j.checkpoints(), nil
	case len(rest) == 2 && rest[0] == "checkpoints" && rest[1] == "config":
		return j.checkpointConfig(), nil
	case len(rest) >= 3 && rest[0] == "checkpoints" && rest[1] == "details":
		id, err := strconv.ParseInt(rest[2], 10, 64)
		if err != nil {
			return nil, &restError{http.StatusBadRequest, "Bad request, could not parse parameters: checkpointid"}
		}
		cp := j.findCheckpoint(id)
		if cp == nil {
			return nil, notFound("Could not find checkpointing statistics for checkpoint %d.", id)
		}
		if len(rest) == 3 {
			return j.checkpointStats(cp, true), nil
		}
		if len(rest) == 5 && rest[3] == "subtasks" {
			b := j.checkpointSubtasks(cp, rest[4])
			if b == nil {
				return nil, notFound("There is no checkpoint statistics for task %s.", rest[4])
			}
			return b, nil
		}
		return nil, nf
	case len(rest) >= 2 && rest[0] == "vertices":
		return j.vertexRoute(rest[1], rest[2:], q, nf)
	}
	return nil, nf
}

func (j *job) vertexRoute(vid string, rest []string, q map[string][]string, nf error) (any, error) {
	keyed, ok := j.vertexKeyed(vid)
	if !ok {
		return nil, notFound("JobVertex %s not found", vid)
	}
	switch {
	case len(rest) == 0:
		return j.vertexDetails(keyed), nil
	case len(rest) == 1 && rest[0] == "metrics":
		return metricsBody(q, vertexStore(j.subtaskMetrics(keyed))), nil
	case len(rest) == 1 && rest[0] == "backpressure":
		return backpressure(j.subtaskMetrics(keyed)), nil
	case len(rest) == 1 && rest[0] == "watermarks":
		out := []obj{}
		for i, m := range j.subtaskMetrics(keyed) {
			if v, ok := m.get("currentInputWatermark"); ok {
				out = append(out, obj{"id": strconv.Itoa(i) + ".currentInputWatermark", "value": v})
			}
		}
		return out, nil
	case len(rest) == 2 && rest[0] == "subtasks" && rest[1] == "metrics":
		return aggregate(q, j.subtaskMetrics(keyed)), nil
	case len(rest) == 3 && rest[0] == "subtasks" && rest[2] == "metrics":
		i, err := strconv.Atoi(rest[1])
		if err != nil || i < 0 || i >= j.vertexParallelism(keyed) {
			return nil, notFound("Subtask %s not found", rest[1])
		}
		return metricsBody(q, j.subtaskMetrics(keyed)[i]), nil
	}
	return nil, nf
}

// vertexKeyed reports whether vid is the keyed vertex; ok is false when it
// is neither of the job's vertices.
func (j *job) vertexKeyed(vid string) (keyed, ok bool) {
	switch vid {
	case j.srcVID:
		return false, true
	case j.keyedVID:
		return true, true
	}
	return false, false
}

func (j *job) vertexID(keyed bool) string {
	if keyed {
		return j.keyedVID
	}
	return j.srcVID
}

func (s *Sandbox) jobByID(id string) *job {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range s.jobs {
		if j.id == id {
			return j
		}
	}
	return nil
}

func (s *Sandbox) allJobs() []*job {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.jobs)
}

func (s *Sandbox) config() obj {
	return obj{
		"refresh-interval": 3000, "timezone-name": "Coordinated Universal Time", "timezone-offset": 0,
		"flink-version": flinkVersion, "flink-revision": flinkRevision,
		"features": obj{"web-submit": false, "web-cancel": false, "web-rescale": false, "web-history": false},
	}
}

func (s *Sandbox) overview() obj {
	used, running, finished, canceled := 0, 0, 0, 0
	for _, j := range s.allJobs() {
		j.mu.Lock()
		switch j.state {
		case "RUNNING":
			running++
			used += j.p
		case "FINISHED":
			finished++
		case "CANCELED":
			canceled++
		}
		j.mu.Unlock()
	}
	return obj{
		"taskmanagers": 1, "slots-total": slotsPerTM, "slots-available": slotsPerTM - used,
		"jobs-running": running, "jobs-finished": finished, "jobs-cancelled": canceled, "jobs-failed": 0,
		"flink-version": flinkVersion, "flink-commit": flinkCommit,
	}
}

func (s *Sandbox) taskManagers() obj {
	used := 0
	for _, j := range s.allJobs() {
		j.mu.Lock()
		if j.state == "RUNNING" {
			used += j.p
		}
		j.mu.Unlock()
	}
	free := slotsPerTM - used
	res := func(slots int) obj {
		return obj{
			"cpuCores": float64(slots), "taskHeapMemory": slots * 32, "taskOffHeapMemory": 0,
			"managedMemory": slots * 16, "networkMemory": slots * 4, "extendedResources": obj{},
		}
	}
	return obj{"taskmanagers": []obj{{
		"id": s.tmID, "path": "pekko.tcp://flink@127.0.0.1:6122/user/rpc/taskmanager_0",
		"dataPort": 6121, "jmxPort": -1, "timeSinceLastHeartbeat": time.Now().UnixMilli() - 1200,
		"slotsNumber": slotsPerTM, "freeSlots": free,
		"totalResource": res(slotsPerTM), "freeResource": res(free),
		"hardware": obj{
			"cpuCores": 2, "physicalMemory": int64(8) << 30, "freeMemory": int64(1) << 30, "managedMemory": int64(512) << 20,
		},
		"memoryConfiguration": obj{
			"frameworkHeap": 134217728, "taskHeap": 1073741824, "frameworkOffHeap": 134217728,
			"taskOffHeap": 0, "networkMemory": 134217728, "managedMemory": 536870912,
			"jvmMetaspace": 268435456, "jvmOverhead": 201326592,
			"totalFlinkMemory": 1979711488, "totalProcessMemory": 2449473536,
		},
	}}}
}

var execStates = []string{"CREATED", "SCHEDULED", "DEPLOYING", "INITIALIZING", "RUNNING", "FINISHED", "CANCELING", "CANCELED", "FAILED", "RECONCILING"}
var jobStates = []string{"INITIALIZING", "CREATED", "RUNNING", "FAILING", "FAILED", "CANCELLING", "CANCELED", "FINISHED", "RESTARTING", "SUSPENDED", "RECONCILING"}

// taskState is the execution state of the job's subtasks: the job states
// the sandbox uses (RUNNING, FINISHED, CANCELED) are execution states too.
func (j *job) taskState() string { return j.state }

func (j *job) endTime() int64 {
	if j.state == "RUNNING" {
		return -1
	}
	return j.end
}

func (j *job) duration(now int64) int64 {
	if j.state == "RUNNING" {
		return now - j.created
	}
	return j.end - j.created
}

func (j *job) numTasks() int { return len(j.src) + len(j.keyed) }

func (s *Sandbox) jobsOverview() obj {
	now := time.Now().UnixMilli()
	jobs := []obj{}
	for _, j := range s.allJobs() {
		j.mu.Lock()
		tasks := obj{"total": j.numTasks()}
		for _, st := range execStates {
			tasks[strings.ToLower(st)] = 0
		}
		tasks[strings.ToLower(j.taskState())] = j.numTasks()
		lm := j.created + 400
		if j.state != "RUNNING" {
			lm = j.end
		}
		jobs = append(jobs, obj{
			"jid": j.id, "name": j.spec.name, "start-time": j.created, "end-time": j.endTime(),
			"duration": j.duration(now), "state": j.state, "last-modification": lm,
			"tasks": tasks, "pending-operators": 0,
		})
		j.mu.Unlock()
	}
	return obj{"jobs": jobs}
}

func stateCounts(states []string, set string, n int) obj {
	m := obj{}
	for _, st := range states {
		m[st] = 0
	}
	m[set] = n
	return m
}

// ioMetrics is Flink's IOMetricsInfo for a subtask or, summed, a vertex.
type ioMetrics struct {
	readBytes, writeBytes, readRecords, writeRecords int64
	bp, idle                                         int64
	busy                                             float64
}

func (m ioMetrics) json() obj {
	return obj{
		"read-bytes": m.readBytes, "read-bytes-complete": true,
		"write-bytes": m.writeBytes, "write-bytes-complete": true,
		"read-records": m.readRecords, "read-records-complete": true,
		"write-records": m.writeRecords, "write-records-complete": true,
		"accumulated-backpressured-time": m.bp, "accumulated-idle-time": m.idle,
		"accumulated-busy-time": m.busy,
	}
}

func (j *job) subtaskIO(keyed bool) []ioMetrics {
	var out []ioMetrics
	if keyed {
		for _, kt := range j.keyed {
			out = append(out, ioMetrics{
				readBytes: kt.bytes + kt.in*8, writeBytes: int64(float64(kt.bytes) * j.spec.outPerIn),
				readRecords: kt.in, writeRecords: int64(float64(kt.in) * j.spec.outPerIn),
				bp: kt.win.accBP, idle: kt.win.accIdle, busy: float64(kt.win.accBusy),
			})
		}
		return out
	}
	for _, st := range j.src {
		out = append(out, ioMetrics{
			readBytes: st.bytes, writeBytes: st.bytes + st.records*8,
			readRecords: st.records, writeRecords: st.records,
			bp: st.win.accBP, idle: st.win.accIdle, busy: float64(st.win.accBusy),
		})
	}
	return out
}

func sumIO(ms []ioMetrics) ioMetrics {
	var t ioMetrics
	for _, m := range ms {
		t.readBytes += m.readBytes
		t.writeBytes += m.writeBytes
		t.readRecords += m.readRecords
		t.writeRecords += m.writeRecords
		t.bp += m.bp
		t.idle += m.idle
		t.busy += m.busy
	}
	return t
}

func (j *job) vertexName(keyed bool) string {
	if keyed {
		return j.spec.keyedName
	}
	return sourceName
}

func (j *job) vertexParallelism(keyed bool) int {
	if keyed {
		return len(j.keyed)
	}
	return len(j.src)
}

func (j *job) vertexSummary(keyed bool, now int64) obj {
	p := j.vertexParallelism(keyed)
	start := j.created + 300
	return obj{
		"id": j.vertexID(keyed), "slotSharingGroupId": j.ssgID, "name": j.vertexName(keyed),
		"maxParallelism": j.spec.maxP, "parallelism": p, "status": j.taskState(),
		"start-time": start, "end-time": j.endTime(), "duration": max(0, j.duration(now)-300),
		"tasks":   stateCounts(execStates, j.taskState(), p),
		"metrics": sumIO(j.subtaskIO(keyed)).json(),
	}
}

func (j *job) details() obj {
	now := time.Now().UnixMilli()
	ts := stateCounts(jobStates, "", 0)
	delete(ts, "")
	ts["INITIALIZING"] = j.created
	ts["CREATED"] = j.created + 200
	ts["RUNNING"] = j.created + 400
	if j.state != "RUNNING" {
		ts[j.state] = j.end
	}
	return obj{
		"jid": j.id, "name": j.spec.name, "isStoppable": false, "state": j.state, "job-type": "STREAMING",
		"start-time": j.created, "end-time": j.endTime(), "duration": j.duration(now),
		"maxParallelism": -1, "now": now, "timestamps": ts,
		"vertices":          []obj{j.vertexSummary(false, now), j.vertexSummary(true, now)},
		"status-counts":     stateCounts(execStates, j.taskState(), 2),
		"plan":              j.plan(),
		"pending-operators": 0,
	}
}

func (j *job) plan() obj {
	return obj{
		"jid": j.id, "name": j.spec.name, "type": "STREAMING",
		"nodes": []obj{
			{
				"id": j.keyedVID, "operator": "", "parallelism": len(j.keyed), "operator_strategy": "",
				"description": j.spec.keyedName + "<br/>", "optimizer_properties": obj{},
				"inputs": []obj{{"id": j.srcVID, "num": 0, "exchange": "pipelined_bounded", "ship_strategy": "HASH"}},
			},
			{
				"id": j.srcVID, "operator": "", "parallelism": len(j.src), "operator_strategy": "",
				"description": sourceName + "<br/>", "optimizer_properties": obj{},
			},
		},
	}
}

func (j *job) config() obj {
	return obj{
		"jid": j.id, "name": j.spec.name,
		"execution-config": obj{
			"restart-strategy": "Cluster level default restart strategy", "job-parallelism": j.p,
			"object-reuse-mode": false,
			"user-config": obj{
				"source.topics": strings.Join(j.spec.topics, ","), "group.id": j.groupID(),
				"partition.discovery.interval.ms": strconv.FormatInt(j.s.opts.discoverEvery.Milliseconds(), 10),
			},
		},
	}
}

func (j *job) checkpointConfig() obj {
	return obj{
		"mode": "exactly_once", "interval": j.s.opts.checkpointEvery.Milliseconds(), "timeout": 600000,
		"min_pause": 0, "max_concurrent": 1,
		"externalization":       obj{"enabled": false, "delete_on_cancellation": true},
		"state_backend":         "HashMapStateBackend",
		"checkpoint_storage":    "JobManagerCheckpointStorage",
		"unaligned_checkpoints": false, "tolerable_failed_checkpoints": 0, "aligned_checkpoint_timeout": 0,
		"checkpoints_after_tasks_finish": true, "state_changelog_enabled": false,
		"changelog_periodic_materialization_interval": 600000, "changelog_storage": "memory",
	}
}

func (j *job) vertexDetails(keyed bool) obj {
	now := time.Now().UnixMilli()
	p := j.vertexParallelism(keyed)
	ios := j.subtaskIO(keyed)
	subs := []obj{}
	durs := map[string][]float64{}
	start := j.created + 300
	for i := range p {
		sd := obj{}
		for k, v := range map[string]int64{
			"CREATED": int64(190 + i), "SCHEDULED": int64(300 + i), "DEPLOYING": int64(280 + 2*i),
			"INITIALIZING": int64(270 + 3*i), "RUNNING": max(0, j.duration(now)-300-int64(1040+6*i)),
		} {
			sd[k] = v
			durs[k] = append(durs[k], float64(v))
		}
		subs = append(subs, obj{
			"subtask": i, "status": j.taskState(), "attempt": 0, "endpoint": "127.0.0.1:6121",
			"start-time": start + int64(i), "end-time": j.endTime(), "duration": max(0, j.duration(now)-300-int64(i)),
			"metrics": ios[i].json(), "taskmanager-id": j.s.tmID, "status-duration": sd,
			"start_time": start + int64(i),
		})
	}
	aggM := obj{}
	cols := map[string]func(ioMetrics) float64{
		"read-bytes":                     func(m ioMetrics) float64 { return float64(m.readBytes) },
		"write-bytes":                    func(m ioMetrics) float64 { return float64(m.writeBytes) },
		"read-records":                   func(m ioMetrics) float64 { return float64(m.readRecords) },
		"write-records":                  func(m ioMetrics) float64 { return float64(m.writeRecords) },
		"accumulated-backpressured-time": func(m ioMetrics) float64 { return float64(m.bp) },
		"accumulated-idle-time":          func(m ioMetrics) float64 { return float64(m.idle) },
		"accumulated-busy-time":          func(m ioMetrics) float64 { return m.busy },
	}
	for k, f := range cols {
		var vs []float64
		for _, m := range ios {
			vs = append(vs, f(m))
		}
		aggM[k] = stats(vs)
	}
	aggS := obj{}
	for k, vs := range durs {
		aggS[k] = stats(vs)
	}
	return obj{
		"id": j.vertexID(keyed), "name": j.vertexName(keyed), "parallelism": p, "maxParallelism": j.spec.maxP, "now": now,
		"subtasks": subs, "aggregated": obj{"metrics": aggM, "status-duration": aggS},
	}
}

// stats is Flink's StatsSummaryDto-like {min,max,avg,sum,median,p25,p75,p95}
// over integers (the vertex "aggregated" block).
func stats(vs []float64) obj {
	if len(vs) == 0 {
		return obj{"min": 0, "max": 0, "avg": 0, "sum": 0, "median": 0, "p25": 0, "p75": 0, "p95": 0}
	}
	s := slices.Clone(vs)
	sort.Float64s(s)
	var sum float64
	for _, v := range s {
		sum += v
	}
	pct := func(p float64) int64 { return int64(nearestRank(s, p)) }
	return obj{
		"min": int64(s[0]), "max": int64(s[len(s)-1]), "avg": int64(sum / float64(len(s))), "sum": int64(sum),
		"median": pct(0.5), "p25": pct(0.25), "p75": pct(0.75), "p95": pct(0.95),
	}
}

// backpressure is the vertex backpressure answer from its subtask metrics.
func backpressure(ms []*metricSet) obj {
	level := func(r float64) string {
		switch {
		case r <= 0.10:
			return "ok"
		case r <= 0.5:
			return "low"
		}
		return "high"
	}
	var maxR float64
	subs := []obj{}
	for i, m := range ms {
		r := m.num("backPressuredTimeMsPerSecond") / 1000
		maxR = max(maxR, r)
		l := level(r)
		subs = append(subs, obj{
			"subtask": i, "backpressureLevel": l, "backpressure-level": l, "ratio": r,
			"idleRatio": m.num("idleTimeMsPerSecond") / 1000, "busyRatio": m.num("busyTimeMsPerSecond") / 1000,
		})
	}
	l := level(maxR)
	return obj{
		"status": "ok", "backpressureLevel": l, "backpressure-level": l,
		"end-timestamp": time.Now().UnixMilli(), "subtasks": subs,
	}
}
