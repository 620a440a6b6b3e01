package fakejm

import (
	"encoding/json"
	"math"
)

// Checkpoints: the job has completed firstCheckpoint checkpoints when the
// fake starts, and one more every Config.CheckpointEvery requests of its
// checkpoint list. Like Flink (web.checkpoints.history, default 10) the
// JobManager keeps the last historySize in its history; details of older
// ones are 404.
const (
	firstCheckpoint = 10
	historySize     = 10
	// checkpointIntervalMs is the (nominal) time between checkpoints.
	checkpointIntervalMs = 60_000
)

// latestCheckpoint is the id of the latest completed checkpoint after n
// checkpoint-list requests.
func (j *job) latestCheckpoint(n int64) int64 {
	return firstCheckpoint + max(n-1, 0)/int64(j.l.cfg.CheckpointEvery)
}

// retained reports whether the details of checkpoint id are in the
// history.
func (j *job) retained(id int64) bool {
	latest := j.latestCheckpoint(j.cpCalls.Load())
	return id <= latest && id > latest-historySize && id > 0
}

// Checkpoints answers /jobs/:id/checkpoints, advancing the checkpoints.
func (j *job) Checkpoints() *Checkpoints {
	id := j.latestCheckpoint(j.cpCalls.Add(1))
	if c := j.cpBody.Load(); c != nil && c.id == id {
		return c.body
	}
	body := freeze(j.checkpointStats(id))
	j.cpBody.Store(&cachedBody{id: id, body: body})
	return body
}

// CheckpointStatistics is one checkpoint: an element of the history, and
// with Tasks the answer of /jobs/:id/checkpoints/details/:cp.
type CheckpointStatistics struct {
	frozen
	ClassName          string                              `json:"className"`
	ID                 int64                               `json:"id"`
	Status             string                              `json:"status"`
	IsSavepoint        bool                                `json:"is_savepoint"`
	SavepointFormat    *string                             `json:"savepointFormat"`
	TriggerTimestamp   int64                               `json:"trigger_timestamp"`
	LatestAckTimestamp int64                               `json:"latest_ack_timestamp"`
	CheckpointedSize   int64                               `json:"checkpointed_size"`
	StateSize          int64                               `json:"state_size"`
	EndToEndDuration   int64                               `json:"end_to_end_duration"`
	AlignmentBuffered  int64                               `json:"alignment_buffered"`
	ProcessedData      int64                               `json:"processed_data"`
	PersistedData      int64                               `json:"persisted_data"`
	NumSubtasks        int                                 `json:"num_subtasks"`
	NumAcknowledged    int                                 `json:"num_acknowledged_subtasks"`
	CheckpointType     string                              `json:"checkpoint_type"`
	Tasks              map[string]TaskCheckpointStatistics `json:"tasks"`
	// A completed checkpoint's.
	ExternalPath string `json:"external_path,omitempty"`
	Discarded    *bool  `json:"discarded,omitempty"`
	// A failed checkpoint's.
	FailureTimestamp *int64  `json:"failure_timestamp,omitempty"`
	FailureMessage   *string `json:"failure_message,omitempty"`
}

// TaskCheckpointStatistics is one vertex's part of a checkpoint.
type TaskCheckpointStatistics struct {
	ID                 int64  `json:"id"`
	Status             string `json:"status"`
	LatestAckTimestamp int64  `json:"latest_ack_timestamp"`
	CheckpointedSize   int64  `json:"checkpointed_size"`
	StateSize          int64  `json:"state_size"`
	EndToEndDuration   int64  `json:"end_to_end_duration"`
	AlignmentBuffered  int64  `json:"alignment_buffered"`
	ProcessedData      int64  `json:"processed_data"`
	PersistedData      int64  `json:"persisted_data"`
	NumSubtasks        int    `json:"num_subtasks"`
	NumAcknowledged    int    `json:"num_acknowledged_subtasks"`
}

func (j *job) triggerMs(id int64) int64 { return startMs + id*checkpointIntervalMs }

// stateSize is vertex v's state in checkpoint id: its subtasks' steady
// state, growing a little per checkpoint.
func (v *vertex) stateSize(id int64, i int) int64 { return v.kind.load[i].state + id*8 }

func (j *job) taskCheckpoint(v *vertex, id int64) TaskCheckpointStatistics {
	var size int64
	for i := range j.l.cfg.Parallelism {
		size += v.stateSize(id, i)
	}
	return TaskCheckpointStatistics{
		ID: id, Status: "COMPLETED", LatestAckTimestamp: j.triggerMs(id) + 40, CheckpointedSize: size,
		StateSize: size, EndToEndDuration: 40, NumSubtasks: j.l.cfg.Parallelism, NumAcknowledged: j.l.cfg.Parallelism,
	}
}

func (j *job) checkpoint(id int64, withTasks bool) *CheckpointStatistics {
	discarded := id < j.latestCheckpoint(j.cpCalls.Load())
	c := &CheckpointStatistics{
		ClassName: "completed", ID: id, Status: "COMPLETED", TriggerTimestamp: j.triggerMs(id),
		LatestAckTimestamp: j.triggerMs(id) + 42, EndToEndDuration: 42, ProcessedData: 1965,
		NumSubtasks:     int(numRoles) * j.l.cfg.Parallelism,
		NumAcknowledged: int(numRoles) * j.l.cfg.Parallelism, CheckpointType: "CHECKPOINT",
		Tasks: map[string]TaskCheckpointStatistics{}, ExternalPath: "<checkpoint-not-externally-addressable>",
		Discarded: &discarded,
	}
	for _, v := range j.vertices {
		t := j.taskCheckpoint(v, id)
		c.CheckpointedSize += t.CheckpointedSize
		c.StateSize += t.StateSize
		if withTasks {
			c.Tasks[v.id] = t
		}
	}
	return c
}

// MinMaxAvg is a StatsSummaryDto: a summary over checkpoints or subtasks.
type MinMaxAvg struct {
	Min  int64 `json:"min"`
	Max  int64 `json:"max"`
	Avg  int64 `json:"avg"`
	P50  Float `json:"p50"`
	P90  Float `json:"p90"`
	P95  Float `json:"p95"`
	P99  Float `json:"p99"`
	P999 Float `json:"p999"`
}

// Float is a double as Jackson writes it: a non-finite one as the string
// "NaN", "Infinity" or "-Infinity".
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		return []byte(`"NaN"`), nil
	case math.IsInf(x, 1):
		return []byte(`"Infinity"`), nil
	case math.IsInf(x, -1):
		return []byte(`"-Infinity"`), nil
	}
	return json.Marshal(x)
}

func flat(x int64) MinMaxAvg {
	f := Float(x)
	return MinMaxAvg{x, x, x, f, f, f, f, f}
}

// Checkpoints answers /jobs/:id/checkpoints.
type Checkpoints struct {
	frozen
	Counts  CheckpointCounts        `json:"counts"`
	Summary map[string]MinMaxAvg    `json:"summary"`
	Latest  LatestCheckpoints       `json:"latest"`
	History []*CheckpointStatistics `json:"history"`
}

// CheckpointCounts are Checkpoints' counts.
type CheckpointCounts struct {
	Restored   int   `json:"restored"`
	Total      int64 `json:"total"`
	InProgress int   `json:"in_progress"`
	Completed  int64 `json:"completed"`
	Failed     int64 `json:"failed"`
}

// LatestCheckpoints are Checkpoints' latest of each kind, null for none.
type LatestCheckpoints struct {
	Completed *CheckpointStatistics `json:"completed"`
	Savepoint *CheckpointStatistics `json:"savepoint"`
	Failed    *CheckpointStatistics `json:"failed"`
	Restored  *RestoredCheckpoint   `json:"restored"`
}

// RestoredCheckpoint is the checkpoint or savepoint the job restored from.
type RestoredCheckpoint struct {
	ID               int64  `json:"id"`
	RestoreTimestamp int64  `json:"restore_timestamp"`
	IsSavepoint      bool   `json:"is_savepoint"`
	ExternalPath     string `json:"external_path"`
}

// CheckpointSubtasks answers
// /jobs/:id/checkpoints/details/:cp/subtasks/:vid.
type CheckpointSubtasks struct {
	frozen
	TaskCheckpointStatistics
	Summary  CheckpointSubtaskSummary `json:"summary"`
	Subtasks []SubtaskCheckpoint      `json:"subtasks"`
}

// CheckpointSubtaskSummary is CheckpointSubtasks' summary (its fields in
// Flink's alphabetical order; 2.3 leaves out the first two).
type CheckpointSubtaskSummary struct {
	Alignment          *AlignmentSummary          `json:"alignment,omitempty"`
	CheckpointDuration *CheckpointDurationSummary `json:"checkpoint_duration,omitempty"`
	CheckpointedSize   MinMaxAvg                  `json:"checkpointed_size"`
	EndToEndDuration   MinMaxAvg                  `json:"end_to_end_duration"`
	StartDelay         MinMaxAvg                  `json:"start_delay"`
	StateSize          MinMaxAvg                  `json:"state_size"`
}

// AlignmentSummary summarises the subtasks' alignment.
type AlignmentSummary struct {
	Buffered  MinMaxAvg `json:"buffered"`
	Processed MinMaxAvg `json:"processed"`
	Persisted MinMaxAvg `json:"persisted"`
	Duration  MinMaxAvg `json:"duration"`
}

// CheckpointDurationSummary summarises the subtasks' checkpoint phases.
type CheckpointDurationSummary struct {
	Sync  MinMaxAvg `json:"sync"`
	Async MinMaxAvg `json:"async"`
}

// JobExceptions is /jobs/:id/exceptions as Flink 2.x writes it: the
// exception history alone (the 1.x first-level members are gone).
type JobExceptions struct {
	ExceptionHistory ExceptionHistory `json:"exceptionHistory"`
}

// ExceptionHistory is the job's failures, newest first.
type ExceptionHistory struct {
	Entries   []RootException `json:"entries"`
	Truncated bool            `json:"truncated"`
}

// ExceptionInfo is one failure of the history.
type ExceptionInfo struct {
	ExceptionName string            `json:"exceptionName"`
	Stacktrace    string            `json:"stacktrace"`
	Timestamp     int64             `json:"timestamp"`
	TaskName      *string           `json:"taskName"`
	Endpoint      *string           `json:"endpoint"`
	TaskManagerID *string           `json:"taskManagerId"`
	FailureLabels map[string]string `json:"failureLabels"`
}

// RootException is an entry of the history: the failure that restarted
// the job with those that happened with it.
type RootException struct {
	ExceptionInfo
	ConcurrentExceptions []ExceptionInfo `json:"concurrentExceptions"`
}

// Exceptions implements Job: nothing fails in the layout's jobs.
func (j *job) Exceptions(int) *JobExceptions {
	return &JobExceptions{ExceptionHistory: ExceptionHistory{Entries: []RootException{}}}
}

// SubtaskCheckpoint is one subtask of CheckpointSubtasks.
type SubtaskCheckpoint struct {
	ClassName        string `json:"className"`
	Index            int    `json:"index"`
	AckTimestamp     int64  `json:"ack_timestamp"`
	EndToEndDuration int64  `json:"end_to_end_duration"`
	CheckpointedSize int64  `json:"checkpointed_size"`
	StateSize        int64  `json:"state_size"`
	Checkpoint       struct {
		Sync  int64 `json:"sync"`
		Async int64 `json:"async"`
	} `json:"checkpoint"`
	Alignment struct {
		Buffered  int64 `json:"buffered"`
		Processed int64 `json:"processed"`
		Persisted int64 `json:"persisted"`
		Duration  int64 `json:"duration"`
	} `json:"alignment"`
	StartDelay int64  `json:"start_delay"`
	Unaligned  bool   `json:"unaligned_checkpoint"`
	Aborted    bool   `json:"aborted"`
	Status     string `json:"status"`
}

func (j *job) checkpointStats(latest int64) *Checkpoints {
	body := &Checkpoints{}
	body.Counts = CheckpointCounts{Total: latest, Completed: latest}
	last := j.checkpoint(latest, false)
	body.Summary = map[string]MinMaxAvg{
		"checkpointed_size": flat(last.CheckpointedSize), "state_size": flat(last.StateSize),
		"end_to_end_duration": flat(last.EndToEndDuration), "alignment_buffered": flat(0),
		"processed_data": flat(last.ProcessedData), "persisted_data": flat(0),
	}
	body.Latest.Completed = last
	for id := latest; id > max(latest-historySize, 0); id-- {
		body.History = append(body.History, j.checkpoint(id, false))
	}
	return body
}

// Checkpoint answers /jobs/:id/checkpoints/details/:cp.
func (j *job) Checkpoint(id int64) *CheckpointStatistics {
	if !j.retained(id) {
		return nil
	}
	return j.checkpoint(id, true)
}

// CheckpointSubtasks answers
// /jobs/:id/checkpoints/details/:cp/subtasks/:vid.
func (v *vertex) CheckpointSubtasks(id int64) *CheckpointSubtasks {
	j := v.job
	if !j.retained(id) {
		return nil
	}
	t := j.taskCheckpoint(v, id)
	body := &CheckpointSubtasks{TaskCheckpointStatistics: t}
	var lo, hi int64 = -1, 0
	for i := range j.l.cfg.Parallelism {
		sz := v.stateSize(id, i)
		if lo < 0 || sz < lo {
			lo = sz
		}
		hi = max(hi, sz)
		s := SubtaskCheckpoint{
			ClassName: "completed", Index: i, AckTimestamp: j.triggerMs(id) + 20 + int64(i%20),
			EndToEndDuration: 20 + int64(i%20), CheckpointedSize: sz, StateSize: sz, StartDelay: 10,
			Status: "completed",
		}
		s.Checkpoint.Sync, s.Checkpoint.Async = 1, 2+v.stateSize(id, i)>>20
		if v.kind.role != roleSource {
			// Only a vertex with inputs aligns barriers.
			s.Alignment.Duration, s.Alignment.Processed = 1+int64(i%3), 100*int64(i+1)
		}
		body.Subtasks = append(body.Subtasks, s)
	}
	avg := t.StateSize / int64(j.l.cfg.Parallelism)
	body.Summary = CheckpointSubtaskSummary{
		CheckpointedSize: MinMaxAvg{Min: lo, Max: hi, Avg: avg},
		StateSize:        MinMaxAvg{Min: lo, Max: hi, Avg: avg},
		EndToEndDuration: MinMaxAvg{Min: 20, Max: 39, Avg: 30},
		StartDelay:       flat(10),
	}
	return body
}
