package flink

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Float is a JSON number that also accepts the strings Jackson writes for
// non-finite doubles ("NaN", "Infinity", "-Infinity") and numeric strings.
type Float float64

// UnmarshalJSON implements json.Unmarshaler.
func (f *Float) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = Float(math.NaN())
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := parseMetricFloat(s)
		if err != nil {
			return err
		}
		*f = Float(v)
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = Float(v)
	return nil
}

func parseMetricFloat(s string) (float64, error) {
	switch strings.TrimSpace(s) {
	case "NaN":
		return math.NaN(), nil
	case "Infinity", "+Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return math.NaN(), fmt.Errorf("not a number: %q", s)
	}
	return v, nil
}

// Overview is GET /overview.
type Overview struct {
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

// Overview returns the cluster overview; FlinkVersion picks version quirks.
func (c *Client) Overview(ctx context.Context) (*Overview, error) {
	u, err := c.buildURL("", "overview")
	if err != nil {
		return nil, err
	}
	var o Overview
	return &o, c.get(ctx, u, &o)
}

// JobOverview is one entry of GET /jobs/overview.
type JobOverview struct {
	ID               string   `json:"jid"`
	Name             string   `json:"name"`
	State            JobState `json:"state"`
	StartTime        int64    `json:"start-time"`
	EndTime          int64    `json:"end-time"`
	Duration         int64    `json:"duration"`
	LastModification int64    `json:"last-modification"`
	Tasks            JobTasks `json:"tasks"`
}

// JobTasks is the part of a job's task counts (lower-case ExecutionState
// keys) that skewscope reads: fixed fields, not a map, so that a list of
// many jobs decodes without a map per job.
type JobTasks struct {
	Total   int `json:"total"`
	Running int `json:"running"`
}

// JobsOverview lists the jobs.
func (c *Client) JobsOverview(ctx context.Context) ([]JobOverview, error) {
	u, err := c.buildURL("", "jobs", "overview")
	if err != nil {
		return nil, err
	}
	var r struct {
		Jobs []JobOverview `json:"jobs"`
	}
	if err := c.get(ctx, u, &r); err != nil {
		return nil, err
	}
	return r.Jobs, nil
}

// Vertex is one entry of a job's vertices (topological order).
type Vertex struct {
	ID             string    `json:"id"`
	Name           string    `json:"name"`
	Parallelism    int       `json:"parallelism"`
	MaxParallelism int       `json:"maxParallelism"` // effective number of key groups
	Status         TaskState `json:"status"`
	StartTime      int64     `json:"start-time"`
	EndTime        int64     `json:"end-time"`
	Duration       int64     `json:"duration"`
}

// Job is GET /jobs/:jobid.
type Job struct {
	ID        string   `json:"jid"`
	Name      string   `json:"name"`
	State     JobState `json:"state"`
	JobType   string   `json:"job-type"` // ≥1.20
	StartTime int64    `json:"start-time"`
	EndTime   int64    `json:"end-time"`
	Duration  int64    `json:"duration"`
	Now       int64    `json:"now"`
	// MaxParallelism is the job-level setting, -1 when unset: use the
	// vertex values.
	MaxParallelism int      `json:"maxParallelism"`
	Vertices       []Vertex `json:"vertices"`
	Plan           *Plan    `json:"plan"`
}

// Job returns a job's details.
func (c *Client) Job(ctx context.Context, jobID string) (*Job, error) {
	u, err := c.buildURL("", "jobs", jobID)
	if err != nil {
		return nil, err
	}
	var j Job
	return &j, c.get(ctx, u, &j)
}

// Plan is the job plan (JsonPlanGenerator); same shape in 1.x and 2.x.
type Plan struct {
	JobID string     `json:"jid"`
	Name  string     `json:"name"`
	Type  string     `json:"type"`
	Nodes []PlanNode `json:"nodes"`
}

// PlanNode is one vertex of the plan.
type PlanNode struct {
	ID          string      `json:"id"`
	Parallelism int         `json:"parallelism"`
	Operator    string      `json:"operator"`
	Description string      `json:"description"` // HTML-escaped
	Inputs      []PlanInput `json:"inputs"`      // absent for sources
}

// PlanInput is one input edge; ShipStrategy "HASH" means keyBy.
type PlanInput struct {
	Num          int    `json:"num"`
	ID           string `json:"id"` // producer vertex
	ShipStrategy string `json:"ship_strategy"`
	Exchange     string `json:"exchange"`
}

// JobPlan returns GET /jobs/:jobid/plan.
func (c *Client) JobPlan(ctx context.Context, jobID string) (*Plan, error) {
	u, err := c.buildURL("", "jobs", jobID, "plan")
	if err != nil {
		return nil, err
	}
	var r struct {
		Plan *Plan `json:"plan"`
	}
	if err := c.get(ctx, u, &r); err != nil {
		return nil, err
	}
	if r.Plan == nil {
		return nil, fmt.Errorf("flink: GET %s: no plan in the answer", u.Path)
	}
	return r.Plan, nil
}

// KeyedVertices returns the ids of the plan's vertices with a HASH input
// (keyBy), in plan order. Their key groups are [0, maxParallelism).
func KeyedVertices(p *Plan) []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, n := range p.Nodes {
		for _, in := range n.Inputs {
			if strings.EqualFold(in.ShipStrategy, "HASH") {
				out = append(out, n.ID)
				break
			}
		}
	}
	return out
}

// PlanInputs returns, for each vertex of the plan with inputs, the ids of
// the vertices it reads from, in the plan's input order.
func PlanInputs(p *Plan) map[string][]string {
	if p == nil {
		return nil
	}
	out := map[string][]string{}
	for _, n := range p.Nodes {
		for _, in := range n.Inputs {
			if !slices.Contains(out[n.ID], in.ID) {
				out[n.ID] = append(out[n.ID], in.ID)
			}
		}
	}
	return out
}

// SourceVertices returns the ids of the plan's vertices without inputs.
func SourceVertices(p *Plan) []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, n := range p.Nodes {
		if len(n.Inputs) == 0 {
			out = append(out, n.ID)
		}
	}
	return out
}

// VertexDetails is GET /jobs/:jobid/vertices/:vertexid.
type VertexDetails struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Parallelism    int             `json:"parallelism"`
	MaxParallelism int             `json:"maxParallelism"`
	Now            int64           `json:"now"`
	Subtasks       []SubtaskDetail `json:"subtasks"`
}

// SubtaskDetail is one subtask's current attempt.
type SubtaskDetail struct {
	Subtask int       `json:"subtask"`
	Status  TaskState `json:"status"`
	Attempt int       `json:"attempt"` // 0-based
	// Endpoint is "<host>:<dataPort>" (≥1.19); filled from the removed
	// Host field (≤1.20) when absent.
	Endpoint      string `json:"endpoint"`
	Host          string `json:"host"`
	TaskManagerID string `json:"taskmanager-id"`
	StartTime     int64  `json:"start-time"`
	Duration      int64  `json:"duration"`
}

// VertexDetails returns a vertex's subtasks.
func (c *Client) VertexDetails(ctx context.Context, jobID, vertexID string) (*VertexDetails, error) {
	u, err := c.buildURL("", "jobs", jobID, "vertices", vertexID)
	if err != nil {
		return nil, err
	}
	var v VertexDetails
	if err := c.get(ctx, u, &v); err != nil {
		return nil, err
	}
	for i := range v.Subtasks {
		if v.Subtasks[i].Endpoint == "" {
			v.Subtasks[i].Endpoint = v.Subtasks[i].Host
		}
	}
	return &v, nil
}

// Backpressure is GET /jobs/:jobid/vertices/:vertexid/backpressure.
type Backpressure struct {
	Status       string // "ok", or "deprecated" when the vertex has no metrics
	Level        string // ok, low, high
	EndTimestamp int64
	Subtasks     []SubtaskBackpressure
}

// SubtaskBackpressure is one subtask's ratios (0–1).
type SubtaskBackpressure struct {
	Subtask   int
	Level     string
	Ratio     float64
	IdleRatio float64
	BusyRatio float64
}

type wireBackpressure struct {
	Status       string `json:"status"`
	Level        string `json:"backpressureLevel"`
	LevelOld     string `json:"backpressure-level"`
	EndTimestamp int64  `json:"end-timestamp"`
	Subtasks     []struct {
		Subtask   int    `json:"subtask"`
		Level     string `json:"backpressureLevel"`
		LevelOld  string `json:"backpressure-level"`
		Ratio     Float  `json:"ratio"`
		IdleRatio Float  `json:"idleRatio"`
		BusyRatio Float  `json:"busyRatio"`
	} `json:"subtasks"`
}

// Backpressure returns a vertex's backpressure (computed from metrics).
func (c *Client) Backpressure(ctx context.Context, jobID, vertexID string) (*Backpressure, error) {
	u, err := c.buildURL("", "jobs", jobID, "vertices", vertexID, "backpressure")
	if err != nil {
		return nil, err
	}
	var w wireBackpressure
	if err := c.get(ctx, u, &w); err != nil {
		return nil, err
	}
	b := &Backpressure{Status: w.Status, Level: firstNonEmpty(w.Level, w.LevelOld), EndTimestamp: w.EndTimestamp}
	for _, s := range w.Subtasks {
		b.Subtasks = append(b.Subtasks, SubtaskBackpressure{
			Subtask: s.Subtask, Level: firstNonEmpty(s.Level, s.LevelOld),
			Ratio: float64(s.Ratio), IdleRatio: float64(s.IdleRatio), BusyRatio: float64(s.BusyRatio),
		})
	}
	return b, nil
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// CheckpointStats is one checkpoint of GET /jobs/:jobid/checkpoints.
type CheckpointStats struct {
	ClassName          string `json:"className"` // completed, failed, in_progress
	ID                 int64  `json:"id"`
	Status             string `json:"status"`
	IsSavepoint        bool   `json:"is_savepoint"`
	TriggerTimestamp   int64  `json:"trigger_timestamp"`
	LatestAckTimestamp int64  `json:"latest_ack_timestamp"`
	CheckpointedSize   int64  `json:"checkpointed_size"`
	StateSize          int64  `json:"state_size"`
	EndToEndDuration   int64  `json:"end_to_end_duration"`
	NumSubtasks        int    `json:"num_subtasks"`
	NumAcknowledged    int    `json:"num_acknowledged_subtasks"`
	ExternalPath       string `json:"external_path"`
	FailureMessage     string `json:"failure_message"`
}

// Checkpoints is GET /jobs/:jobid/checkpoints (summary percentiles omitted).
type Checkpoints struct {
	Counts struct {
		Restored   int `json:"restored"`
		Total      int `json:"total"`
		InProgress int `json:"in_progress"`
		Completed  int `json:"completed"`
		Failed     int `json:"failed"`
	} `json:"counts"`
	Latest struct {
		Completed *CheckpointStats `json:"completed"`
		Savepoint *CheckpointStats `json:"savepoint"`
		Failed    *CheckpointStats `json:"failed"`
		Restored  *struct {
			ID               int64  `json:"id"`
			RestoreTimestamp int64  `json:"restore_timestamp"`
			IsSavepoint      bool   `json:"is_savepoint"`
			ExternalPath     string `json:"external_path"`
		} `json:"restored"`
	} `json:"latest"`
	History []CheckpointStats `json:"history"`
}

// Checkpoints returns the checkpoint counts, latest and history.
func (c *Client) Checkpoints(ctx context.Context, jobID string) (*Checkpoints, error) {
	u, err := c.buildURL("", "jobs", jobID, "checkpoints")
	if err != nil {
		return nil, err
	}
	var cp Checkpoints
	return &cp, c.get(ctx, u, &cp)
}

// CheckpointTask is GET /jobs/:jobid/checkpoints/details/:cpid/subtasks/:vid.
type CheckpointTask struct {
	ID                 int64               `json:"id"`
	Status             string              `json:"status"`
	LatestAckTimestamp int64               `json:"latest_ack_timestamp"`
	CheckpointedSize   int64               `json:"checkpointed_size"`
	StateSize          int64               `json:"state_size"`
	NumSubtasks        int                 `json:"num_subtasks"`
	NumAcknowledged    int                 `json:"num_acknowledged_subtasks"`
	Subtasks           []SubtaskCheckpoint `json:"subtasks"`
}

// SubtaskCheckpoint is one subtask's part of a checkpoint. A subtask that
// has not acknowledged has Completed false and sizes -1. Every figure is
// -1 when the answer does not carry it.
type SubtaskCheckpoint struct {
	Index     int
	Status    string // completed, pending_or_failed
	Completed bool
	// CheckpointedSize is what this (possibly incremental) checkpoint
	// persisted; StateSize is the subtask's full checkpointed state. Both
	// lines (1.20, 2.x) use these names; a body with only the pre-1.15
	// state_size sets both from it.
	CheckpointedSize int64
	StateSize        int64
	AckTimestamp     int64
	EndToEndDuration int64
	// SyncMs and AsyncMs are checkpoint.sync and checkpoint.async: the
	// snapshot's synchronous and asynchronous parts, in milliseconds.
	SyncMs  int64
	AsyncMs int64
	// AlignmentMs is alignment.duration: how long the subtask waited for
	// the barriers of all its inputs. AlignmentBuffered (pre-1.12, -1 on
	// the lines we read), AlignmentProcessed and AlignmentPersisted are
	// alignment.buffered, .processed and .persisted in bytes.
	AlignmentMs        int64
	AlignmentBuffered  int64
	AlignmentProcessed int64
	AlignmentPersisted int64
	// StartDelayMs is start_delay: from the checkpoint's trigger to the
	// first barrier reaching the subtask.
	StartDelayMs int64
	// Unaligned is unaligned_checkpoint: the subtask took an unaligned
	// checkpoint (in-flight data persisted instead of aligned).
	Unaligned bool
}

// DurationMs is the subtask's checkpoint duration, sync + async (what the
// Web UI shows as "Checkpoint Duration"), -1 when either is unknown.
func (s SubtaskCheckpoint) DurationMs() int64 {
	if s.SyncMs < 0 || s.AsyncMs < 0 {
		return -1
	}
	return s.SyncMs + s.AsyncMs
}

// UnmarshalJSON implements json.Unmarshaler.
func (s *SubtaskCheckpoint) UnmarshalJSON(b []byte) error {
	var w struct {
		ClassName        string `json:"className"`
		Index            int    `json:"index"`
		Status           string `json:"status"`
		AckTimestamp     *int64 `json:"ack_timestamp"`
		EndToEndDuration *int64 `json:"end_to_end_duration"`
		CheckpointedSize *int64 `json:"checkpointed_size"`
		StateSize        *int64 `json:"state_size"`
		Checkpoint       *struct {
			Sync  *int64 `json:"sync"`
			Async *int64 `json:"async"`
		} `json:"checkpoint"`
		Alignment *struct {
			Buffered  *int64 `json:"buffered"`
			Processed *int64 `json:"processed"`
			Persisted *int64 `json:"persisted"`
			Duration  *int64 `json:"duration"`
		} `json:"alignment"`
		StartDelay *int64 `json:"start_delay"`
		Unaligned  bool   `json:"unaligned_checkpoint"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*s = SubtaskCheckpoint{Index: w.Index, Status: w.Status, CheckpointedSize: -1, StateSize: -1, AckTimestamp: -1, EndToEndDuration: -1,
		SyncMs: -1, AsyncMs: -1, AlignmentMs: -1, AlignmentBuffered: -1, AlignmentProcessed: -1, AlignmentPersisted: -1, StartDelayMs: -1,
		Unaligned: w.Unaligned}
	s.Completed = w.ClassName == "completed" || w.Status == "completed"
	set := func(dst *int64, v *int64) {
		if v != nil {
			*dst = *v
		}
	}
	set(&s.StateSize, w.StateSize)
	set(&s.CheckpointedSize, w.StateSize)
	set(&s.CheckpointedSize, w.CheckpointedSize)
	set(&s.AckTimestamp, w.AckTimestamp)
	set(&s.EndToEndDuration, w.EndToEndDuration)
	if c := w.Checkpoint; c != nil {
		set(&s.SyncMs, c.Sync)
		set(&s.AsyncMs, c.Async)
	}
	if a := w.Alignment; a != nil {
		set(&s.AlignmentMs, a.Duration)
		set(&s.AlignmentBuffered, a.Buffered)
		set(&s.AlignmentProcessed, a.Processed)
		set(&s.AlignmentPersisted, a.Persisted)
	}
	set(&s.StartDelayMs, w.StartDelay)
	return nil
}

// CheckpointSubtasks returns per-subtask checkpoint sizes of one vertex.
// Only checkpoints still in the JobManager's history are available.
func (c *Client) CheckpointSubtasks(ctx context.Context, jobID string, checkpointID int64, vertexID string) (*CheckpointTask, error) {
	u, err := c.buildURL("", "jobs", jobID, "checkpoints", "details", strconv.FormatInt(checkpointID, 10), "subtasks", vertexID)
	if err != nil {
		return nil, err
	}
	var t CheckpointTask
	return &t, c.get(ctx, u, &t)
}

// JobExceptions is GET /jobs/:jobid/exceptions: the failures Flink
// handled, newest first (exceptionHistory; the deprecated first-level
// members of 1.x are not read).
type JobExceptions struct {
	History struct {
		Entries   []RootException `json:"entries"`
		Truncated bool            `json:"truncated"`
	} `json:"exceptionHistory"`
}

// ExceptionInfo is one failure of the exception history: a root cause or
// one of its concurrent exceptions.
type ExceptionInfo struct {
	// ExceptionName is the failure's class; Stacktrace its whole trace,
	// whose first line is the class and the message.
	ExceptionName string `json:"exceptionName"`
	Stacktrace    string `json:"stacktrace"`
	Timestamp     int64  `json:"timestamp"`
	// TaskName is the failed task with its subtask, e.g.
	// "Source: orders (2/4)#1", "" for a global failure.
	TaskName string `json:"taskName"`
	// Endpoint (1.19+) and Location (1.x, deprecated) are the task
	// manager's host:port.
	Endpoint      string            `json:"endpoint"`
	Location      string            `json:"location"`
	TaskManagerID string            `json:"taskManagerId"`
	FailureLabels map[string]string `json:"failureLabels"`
}

// RootException is one entry of the exception history: the failure that
// caused a restart and those that happened with it.
type RootException struct {
	ExceptionInfo
	ConcurrentExceptions []ExceptionInfo `json:"concurrentExceptions"`
}

// Exceptions returns the job's most recent failures, at most
// maxExceptions of them (Flink's default when 0).
func (c *Client) Exceptions(ctx context.Context, jobID string, maxExceptions int) (*JobExceptions, error) {
	q := ""
	if maxExceptions > 0 {
		q = "maxExceptions=" + strconv.Itoa(maxExceptions)
	}
	u, err := c.buildURL(q, "jobs", jobID, "exceptions")
	if err != nil {
		return nil, err
	}
	var e JobExceptions
	return &e, c.get(ctx, u, &e)
}

// TaskManager is one entry of GET /taskmanagers.
type TaskManager struct {
	ID                     string `json:"id"` // ResourceID: not hex
	Path                   string `json:"path"`
	DataPort               int    `json:"dataPort"`
	JMXPort                int    `json:"jmxPort"`
	TimeSinceLastHeartbeat int64  `json:"timeSinceLastHeartbeat"`
	SlotsNumber            int    `json:"slotsNumber"`
	FreeSlots              int    `json:"freeSlots"`
	Blocked                bool   `json:"blocked"`
}

// TaskManagers lists the task managers.
func (c *Client) TaskManagers(ctx context.Context) ([]TaskManager, error) {
	u, err := c.buildURL("", "taskmanagers")
	if err != nil {
		return nil, err
	}
	var r struct {
		TaskManagers []TaskManager `json:"taskmanagers"`
	}
	if err := c.get(ctx, u, &r); err != nil {
		return nil, err
	}
	return r.TaskManagers, nil
}
