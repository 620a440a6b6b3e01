package sandbox

import (
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skewscope/skewscope/internal/fakejm"
)

// The simulated JobManager is a fakejm.Cluster: fakejm's Handler owns
// Flink's REST API (routes, errors, metric queries, wire types), the
// sandbox says what its jobs are doing. The answers have the shapes of the
// Flink 2.2.1 recordings (shape_test.go).

const (
	flinkVersion  = "2.2.1"
	flinkCommit   = "450c63e"
	flinkRevision = "450c63e @ 2026-05-03T10:10:44+02:00"
	slotsPerTM    = 32
)

// restHandler serves the simulated JobManager REST API.
func (s *Sandbox) restHandler() http.Handler { return fakejm.NewHandler(cluster{s}) }

// cluster is the sandbox as a fakejm.Cluster.
type cluster struct{ s *Sandbox }

// restJob is a job as a fakejm.Job; each answer is read under the job's
// lock.
type restJob struct{ j *job }

// restVertex is one of a job's two vertices as a fakejm.Vertex.
type restVertex struct {
	j     *job
	keyed bool
}

var (
	_ fakejm.Cluster = cluster{}
	_ fakejm.Job     = restJob{}
	_ fakejm.Vertex  = restVertex{}
)

func (c cluster) Job(id string) fakejm.Job {
	if j := c.s.jobByID(id); j != nil {
		return restJob{j}
	}
	return nil
}

func (r restJob) Vertex(id string) fakejm.Vertex {
	switch id {
	case r.j.srcVID:
		return restVertex{r.j, false}
	case r.j.keyedVID:
		return restVertex{r.j, true}
	}
	return nil
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

func (c cluster) DashboardConfig() *fakejm.DashboardConfig {
	return &fakejm.DashboardConfig{
		RefreshInterval: 3000, TimezoneName: "Coordinated Universal Time", TimezoneOffset: 0,
		FlinkVersion: flinkVersion, FlinkRevision: flinkRevision,
	}
}

func (c cluster) Overview() *fakejm.Overview {
	used, running, finished, canceled := 0, 0, 0, 0
	for _, j := range c.s.allJobs() {
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
	return &fakejm.Overview{
		TaskManagers: 1, SlotsTotal: slotsPerTM, SlotsAvailable: slotsPerTM - used,
		JobsRunning: running, JobsFinished: finished, JobsCancelled: canceled, JobsFailed: 0,
		FlinkVersion: flinkVersion, FlinkCommit: flinkCommit,
	}
}

func (c cluster) TaskManagers() *fakejm.TaskManagers {
	used := 0
	for _, j := range c.s.allJobs() {
		j.mu.Lock()
		if j.state == "RUNNING" {
			used += j.p
		}
		j.mu.Unlock()
	}
	free := slotsPerTM - used
	res := func(slots int) fakejm.Resource {
		n := int64(slots)
		return fakejm.Resource{CPUCores: float64(slots), TaskHeapMemory: n * 32, ManagedMemory: n * 16, NetworkMemory: n * 4}
	}
	return &fakejm.TaskManagers{TaskManagers: []fakejm.TaskManager{{
		ID: c.s.tmID, Path: "pekko.tcp://flink@127.0.0.1:6122/user/rpc/taskmanager_0",
		DataPort: 6121, JmxPort: -1, TimeSinceLastHeartbeat: time.Now().UnixMilli() - 1200,
		SlotsNumber: slotsPerTM, FreeSlots: free,
		TotalResource: res(slotsPerTM), FreeResource: res(free),
		Hardware: fakejm.Hardware{CPUCores: 2, PhysicalMemory: 8 << 30, FreeMemory: 1 << 30, ManagedMemory: 512 << 20},
		MemoryConfiguration: fakejm.MemoryConfiguration{
			FrameworkHeap: 134217728, TaskHeap: 1073741824, FrameworkOffHeap: 134217728,
			TaskOffHeap: 0, NetworkMemory: 134217728, ManagedMemory: 536870912,
			JvmMetaspace: 268435456, JvmOverhead: 201326592,
			TotalFlinkMemory: 1979711488, TotalProcessMemory: 2449473536,
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

func (c cluster) JobsOverview() *fakejm.JobsOverview {
	now := time.Now().UnixMilli()
	out := &fakejm.JobsOverview{Jobs: []fakejm.JobOverview{}}
	for _, j := range c.s.allJobs() {
		j.mu.Lock()
		tasks := map[string]int{"total": j.numTasks()}
		for _, st := range execStates {
			tasks[strings.ToLower(st)] = 0
		}
		tasks[strings.ToLower(j.taskState())] = j.numTasks()
		lm := j.created + 400
		if j.state != "RUNNING" {
			lm = j.end
		}
		out.Jobs = append(out.Jobs, fakejm.JobOverview{
			JID: j.id, Name: j.spec.name, StartTime: j.created, EndTime: j.endTime(),
			Duration: j.duration(now), State: j.state, LastModification: lm, Tasks: tasks,
		})
		j.mu.Unlock()
	}
	return out
}

// stateCounts is a count of n in state set and 0 in every other of states.
func stateCounts(states []string, set string, n int) map[string]int {
	m := map[string]int{}
	for _, st := range states {
		m[st] = 0
	}
	m[set] = n
	return m
}

// subtaskIO is each subtask's IOMetricsInfo. j.mu must be held.
func (j *job) subtaskIO(keyed bool) []fakejm.IOMetrics {
	var out []fakejm.IOMetrics
	io := func(readBytes, writeBytes, readRecords, writeRecords int64, w *window) fakejm.IOMetrics {
		return fakejm.IOMetrics{
			ReadBytes: readBytes, ReadBytesComplete: true, WriteBytes: writeBytes, WriteBytesComplete: true,
			ReadRecords: readRecords, ReadRecordsComplete: true, WriteRecords: writeRecords, WriteRecordsComplete: true,
			AccBackPressured: w.accBP, AccIdle: w.accIdle, AccBusy: float64(w.accBusy),
		}
	}
	if keyed {
		for _, kt := range j.keyed {
			out = append(out, io(kt.bytes+kt.in*8, int64(float64(kt.bytes)*j.spec.outPerIn),
				kt.in, int64(float64(kt.in)*j.spec.outPerIn), &kt.win))
		}
		return out
	}
	for _, st := range j.src {
		out = append(out, io(st.bytes, st.bytes+st.records*8, st.records, st.records, &st.win))
	}
	return out
}

func (j *job) vertexName(keyed bool) string {
	if keyed {
		return j.spec.keyedVertexName()
	}
	return j.spec.sourceVertexName()
}

func (j *job) vertexParallelism(keyed bool) int {
	if keyed {
		return len(j.keyed)
	}
	return len(j.src)
}

func (j *job) vertexSummary(keyed bool, now int64) fakejm.JobVertex {
	p := j.vertexParallelism(keyed)
	return fakejm.JobVertex{
		ID: j.vertexID(keyed), SlotSharingGroupID: j.ssgID, Name: j.vertexName(keyed),
		MaxParallelism: j.spec.maxP, Parallelism: p, Status: j.taskState(),
		StartTime: j.created + 300, EndTime: j.endTime(), Duration: max(0, j.duration(now)-300),
		Tasks: stateCounts(execStates, j.taskState(), p), Metrics: fakejm.SumIO(j.subtaskIO(keyed)),
	}
}

func (r restJob) Details() *fakejm.JobDetails {
	j := r.j
	j.mu.Lock()
	defer j.mu.Unlock()
	t := time.Now()
	// A poll starts with the job's details: the metric store it reads
	// from here on is of this instant (fetcher.go).
	j.metrics(t, storeRefresh)
	now := t.UnixMilli()
	ts := map[string]int64{}
	for _, st := range jobStates {
		ts[st] = 0
	}
	ts["INITIALIZING"] = j.created
	ts["CREATED"] = j.created + 200
	ts["RUNNING"] = j.created + 400
	if j.state != "RUNNING" {
		ts[j.state] = j.end
	}
	return &fakejm.JobDetails{
		JID: j.id, Name: j.spec.name, IsStoppable: false, State: j.state, JobType: "STREAMING",
		StartTime: j.created, EndTime: j.endTime(), Duration: j.duration(now),
		MaxParallelism: -1, Now: now, Timestamps: ts,
		Vertices:     []fakejm.JobVertex{j.vertexSummary(false, now), j.vertexSummary(true, now)},
		StatusCounts: stateCounts(execStates, j.taskState(), 2),
		Plan:         j.plan(),
	}
}

func (r restJob) Plan() *fakejm.JobPlan {
	r.j.mu.Lock()
	defer r.j.mu.Unlock()
	return &fakejm.JobPlan{Plan: r.j.plan()}
}

// plan is the job's plan. j.mu must be held.
func (j *job) plan() fakejm.Plan {
	return fakejm.Plan{
		JID: j.id, Name: j.spec.name, Type: "STREAMING",
		Nodes: []fakejm.PlanNode{
			{
				ID: j.keyedVID, Parallelism: len(j.keyed), Description: j.spec.description(true),
				Inputs: []fakejm.PlanInput{{ID: j.srcVID, Num: 0, Exchange: "pipelined_bounded", ShipStrategy: "HASH"}},
			},
			{ID: j.srcVID, Parallelism: len(j.src), Description: j.spec.description(false)},
		},
	}
}

func (r restJob) Config() *fakejm.JobConfig {
	j := r.j
	j.mu.Lock()
	defer j.mu.Unlock()
	return &fakejm.JobConfig{
		JID: j.id, Name: j.spec.name,
		ExecutionConfig: fakejm.ExecutionConfig{
			RestartStrategy: "Cluster level default restart strategy", JobParallelism: j.p,
			UserConfig: map[string]string{
				"source.topics": strings.Join(j.spec.topics, ","), "group.id": j.groupID(),
				"partition.discovery.interval.ms": strconv.FormatInt(j.s.opts.discoverEvery.Milliseconds(), 10),
			},
		},
	}
}

func (r restJob) CheckpointConfig() *fakejm.CheckpointConfig {
	return &fakejm.CheckpointConfig{
		Mode: "exactly_once", Interval: r.j.s.opts.checkpointEvery.Milliseconds(), Timeout: 600000,
		MinPause: 0, MaxConcurrent: 1,
		Externalization:                          fakejm.CheckpointExternalization{Enabled: false, DeleteOnCancellation: true},
		StateBackend:                             "HashMapStateBackend",
		CheckpointStorage:                        "JobManagerCheckpointStorage",
		CheckpointsAfterTasksFinish:              true,
		ChangelogPeriodicMaterializationInterval: 600000, ChangelogStorage: "memory",
	}
}

func (r restJob) Metrics() fakejm.Metrics {
	r.j.mu.Lock()
	defer r.j.mu.Unlock()
	return r.j.jobMetrics()
}

func (r restJob) Checkpoints() *fakejm.Checkpoints {
	r.j.mu.Lock()
	defer r.j.mu.Unlock()
	return r.j.checkpoints()
}

func (r restJob) Checkpoint(id int64) *fakejm.CheckpointStatistics {
	r.j.mu.Lock()
	defer r.j.mu.Unlock()
	cp := r.j.findCheckpoint(id)
	if cp == nil {
		return nil
	}
	return r.j.checkpointStats(cp, true)
}

// Exceptions is the job's exception history: the sandbox's jobs never
// fail (numRestarts stays 0), so it is empty, as Flink's is for a job that
// has not failed.
func (r restJob) Exceptions(int) *fakejm.JobExceptions {
	return &fakejm.JobExceptions{ExceptionHistory: fakejm.ExceptionHistory{Entries: []fakejm.RootException{}}}
}

func (v restVertex) Parallelism() int {
	v.j.mu.Lock()
	defer v.j.mu.Unlock()
	return v.j.vertexParallelism(v.keyed)
}

func (v restVertex) Metrics(subtask int) fakejm.Metrics {
	v.j.mu.Lock()
	defer v.j.mu.Unlock()
	st := v.j.metrics(time.Now(), storeMaxAge)
	k := vertexIndex(v.keyed)
	if subtask < 0 {
		return st.vertex[k]
	}
	ms := st.subtasks[k]
	if subtask >= len(ms) {
		// Rescaled between the handler's check and now.
		return newMetricSet()
	}
	return ms[subtask]
}

func (v restVertex) CheckpointSubtasks(id int64) *fakejm.CheckpointSubtasks {
	v.j.mu.Lock()
	defer v.j.mu.Unlock()
	cp := v.j.findCheckpoint(id)
	if cp == nil {
		return nil
	}
	return v.j.checkpointSubtasks(cp, v.keyed)
}

func (v restVertex) Details() *fakejm.VertexDetails {
	j, keyed := v.j, v.keyed
	j.mu.Lock()
	defer j.mu.Unlock()
	now := time.Now().UnixMilli()
	p := j.vertexParallelism(keyed)
	ios := j.subtaskIO(keyed)
	subs := []fakejm.Subtask{}
	durs := map[string][]float64{}
	start := j.created + 300
	for i := range p {
		sd := map[string]int64{}
		for k, d := range map[string]int64{
			"CREATED": int64(190 + i), "SCHEDULED": int64(300 + i), "DEPLOYING": int64(280 + 2*i),
			"INITIALIZING": int64(270 + 3*i), "RUNNING": max(0, j.duration(now)-300-int64(1040+6*i)),
		} {
			sd[k] = d
			durs[k] = append(durs[k], float64(d))
		}
		subs = append(subs, fakejm.Subtask{
			Subtask: i, Status: j.taskState(), Attempt: 0, Endpoint: "127.0.0.1:6121",
			StartTime: start + int64(i), EndTime: j.endTime(), Duration: max(0, j.duration(now)-300-int64(i)),
			Metrics: ios[i], TaskManagerID: j.s.tmID, StatusDuration: sd, StartTimeOld: start + int64(i),
		})
	}
	cols := map[string]func(fakejm.IOMetrics) float64{
		"read-bytes":                     func(m fakejm.IOMetrics) float64 { return float64(m.ReadBytes) },
		"write-bytes":                    func(m fakejm.IOMetrics) float64 { return float64(m.WriteBytes) },
		"read-records":                   func(m fakejm.IOMetrics) float64 { return float64(m.ReadRecords) },
		"write-records":                  func(m fakejm.IOMetrics) float64 { return float64(m.WriteRecords) },
		"accumulated-backpressured-time": func(m fakejm.IOMetrics) float64 { return float64(m.AccBackPressured) },
		"accumulated-idle-time":          func(m fakejm.IOMetrics) float64 { return float64(m.AccIdle) },
		"accumulated-busy-time":          func(m fakejm.IOMetrics) float64 { return m.AccBusy },
	}
	agg := fakejm.Aggregated{Metrics: map[string]fakejm.StatsSummary{}, StatusDuration: map[string]fakejm.StatsSummary{}}
	for k, f := range cols {
		var vs []float64
		for _, m := range ios {
			vs = append(vs, f(m))
		}
		agg.Metrics[k] = stats(vs)
	}
	for k, vs := range durs {
		agg.StatusDuration[k] = stats(vs)
	}
	return &fakejm.VertexDetails{
		ID: j.vertexID(keyed), Name: j.vertexName(keyed), Parallelism: p, MaxParallelism: j.spec.maxP, Now: now,
		Subtasks: subs, Aggregated: agg,
	}
}

// stats is the vertex details' StatsSummaryDto over integers.
func stats(vs []float64) fakejm.StatsSummary {
	if len(vs) == 0 {
		return fakejm.StatsSummary{}
	}
	s := slices.Sorted(slices.Values(vs))
	var sum float64
	for _, v := range s {
		sum += v
	}
	pct := func(p float64) int64 { return int64(nearestRank(s, p)) }
	return fakejm.StatsSummary{
		Min: int64(s[0]), Max: int64(s[len(s)-1]), Avg: int64(sum / float64(len(s))), Sum: int64(sum),
		Median: pct(0.5), P25: pct(0.25), P75: pct(0.75), P95: pct(0.95),
	}
}

// Backpressure is the vertex backpressure answer from its subtask metrics
// in the metric store.
func (v restVertex) Backpressure() *fakejm.Backpressure {
	v.j.mu.Lock()
	ms := v.j.metrics(time.Now(), storeMaxAge).subtasks[vertexIndex(v.keyed)]
	v.j.mu.Unlock()
	var maxR float64
	subs := []fakejm.SubtaskBackpressure{}
	for i, m := range ms {
		r := m.num("backPressuredTimeMsPerSecond") / 1000
		maxR = math.Max(maxR, r)
		l := fakejm.BackpressureLevel(r)
		subs = append(subs, fakejm.SubtaskBackpressure{
			Subtask: i, Level: l, LevelOld: l, Ratio: r,
			IdleRatio: m.num("idleTimeMsPerSecond") / 1000, BusyRatio: m.num("busyTimeMsPerSecond") / 1000,
		})
	}
	l := fakejm.BackpressureLevel(maxR)
	return &fakejm.Backpressure{
		Status: "ok", Level: l, LevelOld: l, EndTimestamp: time.Now().UnixMilli(), Subtasks: subs,
	}
}
