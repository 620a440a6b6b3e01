package fakejm

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Wire types: Flink's REST answers, with the fields of the Flink 2.3.0
// recordings in their order; a field a 2.2 JobManager does not send is
// omitted when empty (the sandbox answers as 2.2.1 does). Every answer
// type embeds frozen, so an answer that never changes is encoded once.

// frozen holds the encoding of an answer that does not change (freeze).
type frozen struct{ enc []byte }

func (f *frozen) encoding() []byte     { return f.enc }
func (f *frozen) setEncoding(b []byte) { f.enc = b }

// freeze encodes v once: Handler then serves the encoding, so v must not
// change afterwards.
func freeze[T any, P interface {
	*T
	setEncoding([]byte)
}](v P) P {
	v.setEncoding(must(marshal(v)))
	return v
}

// Overview answers /overview.
type Overview struct {
	frozen
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

func (l *layout) overview() *Overview {
	used := l.cfg.Jobs * l.cfg.Parallelism
	return &Overview{
		TaskManagers: l.tms, SlotsTotal: l.tms * slotsPerTM, SlotsAvailable: l.tms*slotsPerTM - used,
		JobsRunning: l.cfg.Jobs, FlinkVersion: FlinkVersion, FlinkCommit: "c0f8d1a",
	}
}

// JobsOverview answers /jobs/overview.
type JobsOverview struct {
	frozen
	Jobs []JobOverview `json:"jobs"`
}

// JobOverview is one job of JobsOverview.
type JobOverview struct {
	JID              string         `json:"jid"`
	Name             string         `json:"name"`
	JobType          string         `json:"jobType,omitempty"`       // 2.3
	SchedulerType    string         `json:"schedulerType,omitempty"` // 2.3
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

func (l *layout) jobsOverview(jobs []*job) *JobsOverview {
	n := int(numRoles) * l.cfg.Parallelism
	tasks := map[string]int{
		"running": n, "canceling": 0, "canceled": 0, "total": n, "created": 0, "scheduled": 0,
		"deploying": 0, "reconciling": 0, "finished": 0, "initializing": 0, "failed": 0,
	}
	body := &JobsOverview{}
	for _, j := range jobs {
		body.Jobs = append(body.Jobs, JobOverview{
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
		body.Jobs = append(body.Jobs, JobOverview{
			JID: FinishedJobID(i), Name: fmt.Sprintf("done-job-%05d", i), JobType: "STREAMING", SchedulerType: "Default",
			StartTime: end - jobDuration, EndTime: end, Duration: jobDuration, State: states[i%len(states)],
			LastModification: end, Tasks: done,
		})
	}
	return body
}

// FinishedJobID is the id of the i-th finished job (Config.Finished), the
// most recently ended first.
func FinishedJobID(i int) string { return hexID("finished job " + strconv.Itoa(i)) }

// JobDetails answers /jobs/:id.
type JobDetails struct {
	frozen
	JID              string           `json:"jid"`
	ApplicationID    string           `json:"application-id,omitempty"` // 2.3
	Name             string           `json:"name"`
	IsStoppable      bool             `json:"isStoppable"`
	State            string           `json:"state"`
	JobType          string           `json:"job-type"`
	SchedulerType    string           `json:"schedulerType,omitempty"` // 2.3
	StartTime        int64            `json:"start-time"`
	EndTime          int64            `json:"end-time"`
	Duration         int64            `json:"duration"`
	MaxParallelism   int              `json:"maxParallelism"`
	Now              int64            `json:"now"`
	Timestamps       map[string]int64 `json:"timestamps"`
	Vertices         []JobVertex      `json:"vertices"`
	StatusCounts     map[string]int   `json:"status-counts"`
	Plan             Plan             `json:"plan"`
	PendingOperators int              `json:"pending-operators"`
}

// JobVertex is one vertex of JobDetails.
type JobVertex struct {
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
	Metrics            IOMetrics      `json:"metrics"`
}

// IOMetrics is Flink's IOMetricsInfo of a subtask or, summed, a vertex.
type IOMetrics struct {
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
func ioMetrics(ld subtaskLoad) IOMetrics {
	secs := float64(jobDuration) / 1000
	m := IOMetrics{
		ReadRecords: int64(ld.in * secs), WriteRecords: int64(ld.out * secs),
		ReadRecordsComplete: true, ReadBytesComplete: true, WriteBytesComplete: true, WriteRecordsComplete: true,
		AccBackPressured: ld.backPressured * jobDuration / 1000, AccIdle: ld.idle * jobDuration / 1000,
		AccBusy: float64(ld.busy * jobDuration / 1000),
	}
	m.ReadBytes, m.WriteBytes = m.ReadRecords*18, m.WriteRecords*51
	return m
}

// SumIO is a vertex's metrics as Flink sums its subtasks'.
func SumIO(ms []IOMetrics) IOMetrics {
	t := IOMetrics{ReadBytesComplete: true, WriteBytesComplete: true, ReadRecordsComplete: true, WriteRecordsComplete: true}
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

// JobPlan answers /jobs/:id/plan.
type JobPlan struct {
	frozen
	Plan Plan `json:"plan"`
}

// Plan is a job's JSON plan.
type Plan struct {
	JID   string     `json:"jid"`
	Name  string     `json:"name"`
	Type  string     `json:"type"`
	Nodes []PlanNode `json:"nodes"`
}

// PlanNode is one vertex of a Plan.
type PlanNode struct {
	ID                  string      `json:"id"`
	Operator            string      `json:"operator"`
	Parallelism         int         `json:"parallelism"`
	OperatorStrategy    string      `json:"operator_strategy"`
	Description         string      `json:"description"`
	OptimizerProperties struct{}    `json:"optimizer_properties"`
	Inputs              []PlanInput `json:"inputs,omitempty"`
}

// PlanInput is one input of a PlanNode.
type PlanInput struct {
	ID           string `json:"id"`
	Num          int    `json:"num"`
	Exchange     string `json:"exchange"`
	ShipStrategy string `json:"ship_strategy"`
}

// plan is the job's plan. Like Flink's, its nodes are not in topological
// order.
func (l *layout) plan(j *job) Plan {
	node := func(r role, in *PlanInput) PlanNode {
		v := j.vertices[r]
		desc := ""
		for i, op := range v.kind.operators {
			if i > 0 {
				desc += "+- "
			}
			desc += op.name + "<br/>"
		}
		n := PlanNode{ID: v.id, Parallelism: l.cfg.Parallelism, Description: desc}
		if in != nil {
			n.Inputs = []PlanInput{*in}
		}
		return n
	}
	return Plan{JID: j.id, Name: j.name, Type: "STREAMING", Nodes: []PlanNode{
		node(roleKeyed, &PlanInput{ID: j.vertices[roleSource].id, Exchange: "pipelined_bounded", ShipStrategy: "HASH"}),
		node(roleSink, &PlanInput{ID: j.vertices[roleKeyed].id, Exchange: "pipelined_bounded", ShipStrategy: "REBALANCE"}),
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

func (l *layout) jobDetails(j *job) JobDetails {
	w := JobDetails{
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
		ms := make([]IOMetrics, l.cfg.Parallelism)
		for i := range ms {
			ms[i] = ioMetrics(v.kind.load[i])
		}
		w.Vertices = append(w.Vertices, JobVertex{
			ID: v.id, SlotSharingGroupID: slot, Name: v.kind.name, MaxParallelism: l.cfg.MaxParallelism,
			Parallelism: l.cfg.Parallelism, Status: "RUNNING", StartTime: l.subtaskStart(v, 0), EndTime: -1,
			Duration: jobDuration - 3367, Tasks: stateCounts(l.cfg.Parallelism), Metrics: SumIO(ms),
		})
	}
	return w
}

// subtaskStart is when subtask i of v started running its only attempt.
func (l *layout) subtaskStart(v *vertex, i int) int64 {
	return startMs + 3367 + int64(v.kind.role)*61 + int64(i%97)*7
}

// VertexDetails answers /jobs/:id/vertices/:vid.
type VertexDetails struct {
	frozen
	ID             string     `json:"id"`
	Name           string     `json:"name"`
	Parallelism    int        `json:"parallelism"`
	MaxParallelism int        `json:"maxParallelism"`
	Now            int64      `json:"now"`
	Subtasks       []Subtask  `json:"subtasks"`
	Aggregated     Aggregated `json:"aggregated"`
}

// Subtask is one subtask of VertexDetails.
type Subtask struct {
	Subtask        int              `json:"subtask"`
	Status         string           `json:"status"`
	Attempt        int              `json:"attempt"`
	Endpoint       string           `json:"endpoint"`
	StartTime      int64            `json:"start-time"`
	EndTime        int64            `json:"end-time"`
	Duration       int64            `json:"duration"`
	Metrics        IOMetrics        `json:"metrics"`
	TaskManagerID  string           `json:"taskmanager-id"`
	StatusDuration map[string]int64 `json:"status-duration"`
	StartTimeOld   int64            `json:"start_time"`
}

// Aggregated is VertexDetails' summary over the subtasks.
type Aggregated struct {
	Metrics        map[string]StatsSummary `json:"metrics"`
	StatusDuration map[string]StatsSummary `json:"status-duration"`
}

// StatsSummary is a summary of integers over subtasks.
type StatsSummary struct {
	P25    int64 `json:"p25"`
	Min    int64 `json:"min"`
	Avg    int64 `json:"avg"`
	Median int64 `json:"median"`
	Max    int64 `json:"max"`
	Sum    int64 `json:"sum"`
	P95    int64 `json:"p95"`
	P75    int64 `json:"p75"`
}

func statsOf(xs []int64) StatsSummary {
	s := slices.Sorted(slices.Values(xs))
	q := func(p float64) int64 { return s[min(len(s)-1, int(p*float64(len(s))))] }
	var sum int64
	for _, x := range s {
		sum += x
	}
	return StatsSummary{P25: q(0.25), Min: s[0], Avg: sum / int64(len(s)), Median: q(0.5), Max: s[len(s)-1], Sum: sum, P95: q(0.95), P75: q(0.75)}
}

func (l *layout) vertexDetails(j *job, v *vertex) VertexDetails {
	p := l.cfg.Parallelism
	d := VertexDetails{ID: v.id, Name: v.kind.name, Parallelism: p, MaxParallelism: l.cfg.MaxParallelism, Now: startMs + jobDuration}
	cols := map[string][]int64{}
	for i := range p {
		start := l.subtaskStart(v, i)
		tm := l.tm(j, i)
		m := ioMetrics(v.kind.load[i])
		sd := map[string]int64{"INITIALIZING": 834, "CREATED": 601, "RUNNING": startMs + jobDuration - start - 2600, "DEPLOYING": 1167, "SCHEDULED": 473}
		d.Subtasks = append(d.Subtasks, Subtask{
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
	d.Aggregated = Aggregated{Metrics: map[string]StatsSummary{}, StatusDuration: map[string]StatsSummary{}}
	for k, xs := range cols {
		if s, ok := strings.CutPrefix(k, "status "); ok {
			d.Aggregated.StatusDuration[s] = statsOf(xs)
		} else {
			d.Aggregated.Metrics[k] = statsOf(xs)
		}
	}
	return d
}

// Backpressure answers /jobs/:id/vertices/:vid/backpressure.
type Backpressure struct {
	frozen
	Status       string                `json:"status"`
	Level        string                `json:"backpressureLevel"`
	EndTimestamp int64                 `json:"end-timestamp"`
	Subtasks     []SubtaskBackpressure `json:"subtasks"`
	LevelOld     string                `json:"backpressure-level"`
}

// SubtaskBackpressure is one subtask of Backpressure.
type SubtaskBackpressure struct {
	Subtask   int     `json:"subtask"`
	Level     string  `json:"backpressureLevel"`
	Ratio     float64 `json:"ratio"`
	IdleRatio float64 `json:"idleRatio"`
	BusyRatio float64 `json:"busyRatio"`
	LevelOld  string  `json:"backpressure-level"`
}

// BackpressureLevel is Flink's level of a backpressured-time ratio: ok up
// to 0.10, low up to 0.5, high above.
func BackpressureLevel(ratio float64) string {
	switch {
	case ratio <= 0.10:
		return "ok"
	case ratio <= 0.5:
		return "low"
	}
	return "high"
}

func backpressure(load []subtaskLoad) *Backpressure {
	body := &Backpressure{}
	worst := 0.0
	for i, ld := range load {
		r := float64(ld.backPressured) / 1000
		worst = math.Max(worst, r)
		body.Subtasks = append(body.Subtasks, SubtaskBackpressure{
			Subtask: i, Level: BackpressureLevel(r), Ratio: r, IdleRatio: float64(ld.idle) / 1000,
			BusyRatio: float64(ld.busy) / 1000, LevelOld: BackpressureLevel(r),
		})
	}
	body.Status, body.Level, body.LevelOld, body.EndTimestamp = "ok", BackpressureLevel(worst), BackpressureLevel(worst), startMs+jobDuration
	return freeze(body)
}

// DashboardConfig answers /config.
type DashboardConfig struct {
	frozen
	RefreshInterval int64             `json:"refresh-interval"`
	TimezoneName    string            `json:"timezone-name"`
	TimezoneOffset  int64             `json:"timezone-offset"`
	FlinkVersion    string            `json:"flink-version"`
	FlinkRevision   string            `json:"flink-revision"`
	Features        DashboardFeatures `json:"features"`
}

// DashboardFeatures are the web UI's switches in DashboardConfig.
type DashboardFeatures struct {
	WebSubmit  bool `json:"web-submit"`
	WebCancel  bool `json:"web-cancel"`
	WebRescale bool `json:"web-rescale"`
	WebHistory bool `json:"web-history"`
}

// TaskManagers answers /taskmanagers.
type TaskManagers struct {
	frozen
	TaskManagers []TaskManager `json:"taskmanagers"`
}

// TaskManager is one TaskManager of TaskManagers.
type TaskManager struct {
	ID                     string              `json:"id"`
	Path                   string              `json:"path"`
	DataPort               int                 `json:"dataPort"`
	JmxPort                int                 `json:"jmxPort"`
	TimeSinceLastHeartbeat int64               `json:"timeSinceLastHeartbeat"`
	SlotsNumber            int                 `json:"slotsNumber"`
	FreeSlots              int                 `json:"freeSlots"`
	TotalResource          Resource            `json:"totalResource"`
	FreeResource           Resource            `json:"freeResource"`
	Hardware               Hardware            `json:"hardware"`
	MemoryConfiguration    MemoryConfiguration `json:"memoryConfiguration"`
}

// Resource is a TaskManager's total or free resource profile (MB).
type Resource struct {
	CPUCores          float64  `json:"cpuCores"`
	TaskHeapMemory    int64    `json:"taskHeapMemory"`
	TaskOffHeapMemory int64    `json:"taskOffHeapMemory"`
	ManagedMemory     int64    `json:"managedMemory"`
	NetworkMemory     int64    `json:"networkMemory"`
	ExtendedResources struct{} `json:"extendedResources"`
}

// Hardware is a TaskManager's machine (bytes).
type Hardware struct {
	CPUCores       int   `json:"cpuCores"`
	PhysicalMemory int64 `json:"physicalMemory"`
	FreeMemory     int64 `json:"freeMemory"`
	ManagedMemory  int64 `json:"managedMemory"`
}

// MemoryConfiguration is a TaskManager's memory model (bytes).
type MemoryConfiguration struct {
	FrameworkHeap      int64 `json:"frameworkHeap"`
	TaskHeap           int64 `json:"taskHeap"`
	FrameworkOffHeap   int64 `json:"frameworkOffHeap"`
	TaskOffHeap        int64 `json:"taskOffHeap"`
	NetworkMemory      int64 `json:"networkMemory"`
	ManagedMemory      int64 `json:"managedMemory"`
	JvmMetaspace       int64 `json:"jvmMetaspace"`
	JvmOverhead        int64 `json:"jvmOverhead"`
	TotalFlinkMemory   int64 `json:"totalFlinkMemory"`
	TotalProcessMemory int64 `json:"totalProcessMemory"`
}

// JobConfig answers /jobs/:id/config.
type JobConfig struct {
	frozen
	JID             string          `json:"jid"`
	Name            string          `json:"name"`
	ExecutionConfig ExecutionConfig `json:"execution-config"`
}

// ExecutionConfig is JobConfig's execution configuration.
type ExecutionConfig struct {
	RestartStrategy string            `json:"restart-strategy"`
	JobParallelism  int               `json:"job-parallelism"`
	ObjectReuseMode bool              `json:"object-reuse-mode"`
	UserConfig      map[string]string `json:"user-config"`
}

// CheckpointConfig answers /jobs/:id/checkpoints/config.
type CheckpointConfig struct {
	frozen
	Mode                                     string                    `json:"mode"`
	Interval                                 int64                     `json:"interval"`
	Timeout                                  int64                     `json:"timeout"`
	MinPause                                 int64                     `json:"min_pause"`
	MaxConcurrent                            int                       `json:"max_concurrent"`
	Externalization                          CheckpointExternalization `json:"externalization"`
	StateBackend                             string                    `json:"state_backend"`
	CheckpointStorage                        string                    `json:"checkpoint_storage"`
	UnalignedCheckpoints                     bool                      `json:"unaligned_checkpoints"`
	TolerableFailedCheckpoints               int                       `json:"tolerable_failed_checkpoints"`
	AlignedCheckpointTimeout                 int64                     `json:"aligned_checkpoint_timeout"`
	CheckpointsAfterTasksFinish              bool                      `json:"checkpoints_after_tasks_finish"`
	StateChangelogEnabled                    bool                      `json:"state_changelog_enabled"`
	ChangelogPeriodicMaterializationInterval int64                     `json:"changelog_periodic_materialization_interval"`
	ChangelogStorage                         string                    `json:"changelog_storage"`
}

// CheckpointExternalization is CheckpointConfig's retention setting.
type CheckpointExternalization struct {
	Enabled              bool `json:"enabled"`
	DeleteOnCancellation bool `json:"delete_on_cancellation"`
}
