package fakejm

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Wire types: the fields of the Flink 2.3.0 recordings, in their order.

type wireOverview struct {
	TaskManagers   int    `json:"taskmanagers"`
	SlotsTotal     int    `json:"slots-total"`
	SlotsAvailable int    `json:"slots-available"`
	JobsRunning    int    `json:"jobs-running"`
	JobsFinished   int    `json:"jobs-finished"`
	JobsCancelled  int    `json:"jobs-cancelled"`
	JobsFailed     int    `json:"jobs-failed"`
	FlinkVersion   string `json:"flink-version"`
	FlinkCommit    string `json:"flink-commit"`
}

func (l *layout) overviewBody() ([]byte, error) {
	used := l.cfg.Jobs * l.cfg.Parallelism
	return marshal(wireOverview{
		TaskManagers: l.tms, SlotsTotal: l.tms * slotsPerTM, SlotsAvailable: l.tms*slotsPerTM - used,
		JobsRunning: l.cfg.Jobs, FlinkVersion: FlinkVersion, FlinkCommit: "c0f8d1a",
	})
}

type wireJobOverview struct {
	JID              string         `json:"jid"`
	Name             string         `json:"name"`
	JobType          string         `json:"jobType"`
	SchedulerType    string         `json:"schedulerType"`
	StartTime        int64          `json:"start-time"`
	EndTime          int64          `json:"end-time"`
	Duration         int64          `json:"duration"`
	State            string         `json:"state"`
	LastModification int64          `json:"last-modification"`
	Tasks            map[string]int `json:"tasks"`
	PendingOperators int            `json:"pending-operators"`
}

// jobDuration is the duration every answer reports: an hour of running.
const jobDuration int64 = 3_600_000

func (l *layout) jobsOverviewBody(jobs []*job) ([]byte, error) {
	n := int(numRoles) * l.cfg.Parallelism
	tasks := map[string]int{
		"running": n, "canceling": 0, "canceled": 0, "total": n, "created": 0, "scheduled": 0,
		"deploying": 0, "reconciling": 0, "finished": 0, "initializing": 0, "failed": 0,
	}
	var body struct {
		Jobs []wireJobOverview `json:"jobs"`
	}
	for _, j := range jobs {
		body.Jobs = append(body.Jobs, wireJobOverview{
			JID: j.id, Name: j.name, JobType: "STREAMING", SchedulerType: "Default",
			StartTime: startMs, EndTime: -1, Duration: jobDuration, State: "RUNNING",
			LastModification: startMs + 5_000, Tasks: tasks,
		})
	}
	states := [...]string{"FINISHED", "CANCELED", "FAILED"}
	done := map[string]int{
		"running": 0, "canceling": 0, "canceled": 0, "total": n, "created": 0, "scheduled": 0,
		"deploying": 0, "reconciling": 0, "finished": n, "initializing": 0, "failed": 0,
	}
	for i := range l.cfg.Finished {
		end := startMs - int64(i)*60_000
		body.Jobs = append(body.Jobs, wireJobOverview{
			JID: FinishedJobID(i), Name: fmt.Sprintf("done-job-%05d", i), JobType: "STREAMING", SchedulerType: "Default",
			StartTime: end - jobDuration, EndTime: end, Duration: jobDuration, State: states[i%len(states)],
			LastModification: end, Tasks: done,
		})
	}
	return marshal(body)
}

// FinishedJobID is the id of the i-th finished job (Config.Finished), the
// most recently ended first.
func FinishedJobID(i int) string { return hexID("finished job " + strconv.Itoa(i)) }

type wireJob struct {
	JID              string           `json:"jid"`
	ApplicationID    string           `json:"application-id"`
	Name             string           `json:"name"`
	IsStoppable      bool             `json:"isStoppable"`
	State            string           `json:"state"`
	JobType          string           `json:"job-type"`
	SchedulerType    string           `json:"schedulerType"`
	StartTime        int64            `json:"start-time"`
	EndTime          int64            `json:"end-time"`
	Duration         int64            `json:"duration"`
	MaxParallelism   int              `json:"maxParallelism"`
	Now              int64            `json:"now"`
	Timestamps       map[string]int64 `json:"timestamps"`
	Vertices         []wireJobVertex  `json:"vertices"`
	StatusCounts     map[string]int   `json:"status-counts"`
	Plan             wirePlan         `json:"plan"`
	PendingOperators int              `json:"pending-operators"`
}

type wireJobVertex struct {
	ID                 string         `json:"id"`
	SlotSharingGroupID string         `json:"slotSharingGroupId"`
	Name               string         `json:"name"`
	MaxParallelism     int            `json:"maxParallelism"`
	Parallelism        int            `json:"parallelism"`
	Status             string         `json:"status"`
	StartTime          int64          `json:"start-time"`
	EndTime            int64          `json:"end-time"`
	Duration           int64          `json:"duration"`
	Tasks              map[string]int `json:"tasks"`
	Metrics            wireIOMetrics  `json:"metrics"`
}

type wireIOMetrics struct {
	ReadBytes            int64   `json:"read-bytes"`
	ReadBytesComplete    bool    `json:"read-bytes-complete"`
	WriteBytes           int64   `json:"write-bytes"`
	WriteBytesComplete   bool    `json:"write-bytes-complete"`
	ReadRecords          int64   `json:"read-records"`
	ReadRecordsComplete  bool    `json:"read-records-complete"`
	WriteRecords         int64   `json:"write-records"`
	WriteRecordsComplete bool    `json:"write-records-complete"`
	AccBackPressured     int64   `json:"accumulated-backpressured-time"`
	AccIdle              int64   `json:"accumulated-idle-time"`
	AccBusy              float64 `json:"accumulated-busy-time"`
}

// ioMetrics are a subtask's totals after jobDuration at its load (a
// Flink 2.x source counts the records it reads too).
func ioMetrics(ld subtaskLoad) wireIOMetrics {
	secs := float64(jobDuration) / 1000
	m := wireIOMetrics{
		ReadRecords: int64(ld.in * secs), WriteRecords: int64(ld.out * secs),
		ReadRecordsComplete: true, ReadBytesComplete: true, WriteBytesComplete: true, WriteRecordsComplete: true,
		AccBackPressured: ld.backPressured * jobDuration / 1000, AccIdle: ld.idle * jobDuration / 1000,
		AccBusy: float64(ld.busy * jobDuration / 1000),
	}
	m.ReadBytes, m.WriteBytes = m.ReadRecords*18, m.WriteRecords*51
	return m
}

func sumIO(ms []wireIOMetrics) wireIOMetrics {
	t := wireIOMetrics{ReadBytesComplete: true, WriteBytesComplete: true, ReadRecordsComplete: true, WriteRecordsComplete: true}
	for _, m := range ms {
		t.ReadBytes += m.ReadBytes
		t.WriteBytes += m.WriteBytes
		t.ReadRecords += m.ReadRecords
		t.WriteRecords += m.WriteRecords
		t.AccBackPressured += m.AccBackPressured
		t.AccIdle += m.AccIdle
		t.AccBusy += m.AccBusy
	}
	return t
}

type wirePlan struct {
	JID   string         `json:"jid"`
	Name  string         `json:"name"`
	Type  string         `json:"type"`
	Nodes []wirePlanNode `json:"nodes"`
}

type wirePlanNode struct {
	ID                  string          `json:"id"`
	Operator            string          `json:"operator"`
	Parallelism         int             `json:"parallelism"`
	OperatorStrategy    string          `json:"operator_strategy"`
	Description         string          `json:"description"`
	OptimizerProperties struct{}        `json:"optimizer_properties"`
	Inputs              []wirePlanInput `json:"inputs,omitempty"`
}

type wirePlanInput struct {
	ID           string `json:"id"`
	Num          int    `json:"num"`
	Exchange     string `json:"exchange"`
	ShipStrategy string `json:"ship_strategy"`
}

// plan is the job's plan. Like Flink's, its nodes are not in topological
// order.
func (l *layout) plan(j *job) wirePlan {
	node := func(r role, in *wirePlanInput) wirePlanNode {
		v := j.vertices[r]
		desc := ""
		for i, op := range v.kind.operators {
			if i > 0 {
				desc += "+- "
			}
			desc += op.name + "<br/>"
		}
		n := wirePlanNode{ID: v.id, Parallelism: l.cfg.Parallelism, Description: desc}
		if in != nil {
			n.Inputs = []wirePlanInput{*in}
		}
		return n
	}
	return wirePlan{JID: j.id, Name: j.name, Type: "STREAMING", Nodes: []wirePlanNode{
		node(roleKeyed, &wirePlanInput{ID: j.vertices[roleSource].id, Exchange: "pipelined_bounded", ShipStrategy: "HASH"}),
		node(roleSink, &wirePlanInput{ID: j.vertices[roleKeyed].id, Exchange: "pipelined_bounded", ShipStrategy: "REBALANCE"}),
		node(roleSource, nil),
	}}
}

var zeroStates = []string{"CANCELING", "INITIALIZING", "CREATED", "CANCELED", "FAILED", "DEPLOYING", "SCHEDULED", "FINISHED", "RECONCILING"}

func stateCounts(running int) map[string]int {
	m := map[string]int{"RUNNING": running}
	for _, s := range zeroStates {
		m[s] = 0
	}
	return m
}

func (l *layout) jobDetails(j *job) wireJob {
	w := wireJob{
		JID: j.id, ApplicationID: j.id, Name: j.name, State: "RUNNING", JobType: "STREAMING",
		SchedulerType: "Default", StartTime: startMs, EndTime: -1, Duration: jobDuration,
		MaxParallelism: -1, Now: startMs + jobDuration,
		Timestamps: map[string]int64{
			"RECONCILING": 0, "FAILED": 0, "CANCELLING": 0, "RESTARTING": 0, "CREATED": startMs + 1960,
			"RUNNING": startMs + 2876, "FINISHED": 0, "SUSPENDED": 0, "CANCELED": 0, "FAILING": 0,
			"INITIALIZING": startMs,
		},
		StatusCounts: stateCounts(int(numRoles)),
		Plan:         l.plan(j),
	}
	slot := hexID("job " + strconv.Itoa(j.index) + " slot sharing group")
	for _, v := range j.vertices {
		ms := make([]wireIOMetrics, l.cfg.Parallelism)
		for i := range ms {
			ms[i] = ioMetrics(v.kind.load[i])
		}
		w.Vertices = append(w.Vertices, wireJobVertex{
			ID: v.id, SlotSharingGroupID: slot, Name: v.kind.name, MaxParallelism: l.cfg.MaxParallelism,
			Parallelism: l.cfg.Parallelism, Status: "RUNNING", StartTime: l.subtaskStart(v, 0), EndTime: -1,
			Duration: jobDuration - 3367, Tasks: stateCounts(l.cfg.Parallelism), Metrics: sumIO(ms),
		})
	}
	return w
}

// subtaskStart is when subtask i of v started running its only attempt.
func (l *layout) subtaskStart(v *vertex, i int) int64 {
	return startMs + 3367 + int64(v.kind.role)*61 + int64(i%97)*7
}

type wireVertexDetails struct {
	ID             string         `json:"id"`
	Name           string         `json:"name"`
	Parallelism    int            `json:"parallelism"`
	MaxParallelism int            `json:"maxParallelism"`
	Now            int64          `json:"now"`
	Subtasks       []wireSubtask  `json:"subtasks"`
	Aggregated     wireAggregated `json:"aggregated"`
}

type wireSubtask struct {
	Subtask        int              `json:"subtask"`
	Status         string           `json:"status"`
	Attempt        int              `json:"attempt"`
	Endpoint       string           `json:"endpoint"`
	StartTime      int64            `json:"start-time"`
	EndTime        int64            `json:"end-time"`
	Duration       int64            `json:"duration"`
	Metrics        wireIOMetrics    `json:"metrics"`
	TaskManagerID  string           `json:"taskmanager-id"`
	StatusDuration map[string]int64 `json:"status-duration"`
	StartTimeOld   int64            `json:"start_time"`
}

type wireAggregated struct {
	Metrics        map[string]wireStats `json:"metrics"`
	StatusDuration map[string]wireStats `json:"status-duration"`
}

type wireStats struct {
	P25    int64 `json:"p25"`
	Min    int64 `json:"min"`
	Avg    int64 `json:"avg"`
	Median int64 `json:"median"`
	Max    int64 `json:"max"`
	Sum    int64 `json:"sum"`
	P95    int64 `json:"p95"`
	P75    int64 `json:"p75"`
}

func statsOf(xs []int64) wireStats {
	s := slices.Sorted(slices.Values(xs))
	q := func(p float64) int64 { return s[min(len(s)-1, int(p*float64(len(s))))] }
	var sum int64
	for _, x := range s {
		sum += x
	}
	return wireStats{P25: q(0.25), Min: s[0], Avg: sum / int64(len(s)), Median: q(0.5), Max: s[len(s)-1], Sum: sum, P95: q(0.95), P75: q(0.75)}
}

func (l *layout) vertexDetails(j *job, v *vertex) wireVertexDetails {
	p := l.cfg.Parallelism
	d := wireVertexDetails{ID: v.id, Name: v.kind.name, Parallelism: p, MaxParallelism: l.cfg.MaxParallelism, Now: startMs + jobDuration}
	cols := map[string][]int64{}
	for i := range p {
		start := l.subtaskStart(v, i)
		tm := l.tm(j, i)
		m := ioMetrics(v.kind.load[i])
		sd := map[string]int64{"INITIALIZING": 834, "CREATED": 601, "RUNNING": startMs + jobDuration - start - 2600, "DEPLOYING": 1167, "SCHEDULED": 473}
		d.Subtasks = append(d.Subtasks, wireSubtask{
			Subtask: i, Status: "RUNNING", Endpoint: tmEndpoint(tm), StartTime: start, EndTime: -1,
			Duration: startMs + jobDuration - start, Metrics: m, TaskManagerID: tmID(tm),
			StatusDuration: sd, StartTimeOld: start,
		})
		for k, x := range map[string]int64{
			"read-bytes": m.ReadBytes, "write-bytes": m.WriteBytes, "read-records": m.ReadRecords,
			"write-records": m.WriteRecords, "accumulated-backpressured-time": m.AccBackPressured,
			"accumulated-idle-time": m.AccIdle, "accumulated-busy-time": int64(m.AccBusy),
		} {
			cols[k] = append(cols[k], x)
		}
		for k, x := range sd {
			cols["status "+k] = append(cols["status "+k], x)
		}
	}
	d.Aggregated = wireAggregated{Metrics: map[string]wireStats{}, StatusDuration: map[string]wireStats{}}
	for k, xs := range cols {
		if s, ok := strings.CutPrefix(k, "status "); ok {
			d.Aggregated.StatusDuration[s] = statsOf(xs)
		} else {
			d.Aggregated.Metrics[k] = statsOf(xs)
		}
	}
	return d
}

// Flink's backpressure levels: ok up to a ratio of 0.10, low up to 0.5.
func level(ratio float64) string {
	switch {
	case ratio <= 0.10:
		return "ok"
	case ratio <= 0.5:
		return "low"
	}
	return "high"
}

func backpressureBody(load []subtaskLoad) []byte {
	type sub struct {
		Subtask   int     `json:"subtask"`
		Level     string  `json:"backpressureLevel"`
		Ratio     float64 `json:"ratio"`
		IdleRatio float64 `json:"idleRatio"`
		BusyRatio float64 `json:"busyRatio"`
		LevelOld  string  `json:"backpressure-level"`
	}
	var body struct {
		Status       string `json:"status"`
		Level        string `json:"backpressureLevel"`
		EndTimestamp int64  `json:"end-timestamp"`
		Subtasks     []sub  `json:"subtasks"`
		LevelOld     string `json:"backpressure-level"`
	}
	worst := 0.0
	for i, ld := range load {
		r := float64(ld.backPressured) / 1000
		worst = math.Max(worst, r)
		body.Subtasks = append(body.Subtasks, sub{
			Subtask: i, Level: level(r), Ratio: r, IdleRatio: float64(ld.idle) / 1000,
			BusyRatio: float64(ld.busy) / 1000, LevelOld: level(r),
		})
	}
	body.Status, body.Level, body.LevelOld, body.EndTimestamp = "ok", level(worst), level(worst), startMs+jobDuration
	return must(marshal(body))
}
