package fakejm

import (
	"strconv"
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

// retained parses a checkpoint id and reports whether its details are in
// the history.
func (j *job) retained(s string) (int64, bool) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	latest := j.latestCheckpoint(j.cpCalls.Load())
	return id, id <= latest && id > latest-historySize && id > 0
}

// checkpoints answers /jobs/:id/checkpoints, advancing the checkpoints.
func (j *job) checkpoints() []byte {
	id := j.latestCheckpoint(j.cpCalls.Add(1))
	if c := j.cpBody.Load(); c != nil && c.id == id {
		return c.body
	}
	body := must(marshal(j.checkpointStats(id)))
	j.cpBody.Store(&cachedBody{id: id, body: body})
	return body
}

type wireCheckpoint struct {
	ClassName          string         `json:"className"`
	ID                 int64          `json:"id"`
	Status             string         `json:"status"`
	IsSavepoint        bool           `json:"is_savepoint"`
	SavepointFormat    *string        `json:"savepointFormat"`
	TriggerTimestamp   int64          `json:"trigger_timestamp"`
	LatestAckTimestamp int64          `json:"latest_ack_timestamp"`
	CheckpointedSize   int64          `json:"checkpointed_size"`
	StateSize          int64          `json:"state_size"`
	EndToEndDuration   int64          `json:"end_to_end_duration"`
	AlignmentBuffered  int64          `json:"alignment_buffered"`
	ProcessedData      int64          `json:"processed_data"`
	PersistedData      int64          `json:"persisted_data"`
	NumSubtasks        int            `json:"num_subtasks"`
	NumAcknowledged    int            `json:"num_acknowledged_subtasks"`
	CheckpointType     string         `json:"checkpoint_type"`
	Tasks              map[string]any `json:"tasks"`
	ExternalPath       string         `json:"external_path"`
	Discarded          bool           `json:"discarded"`
}

type wireTaskCheckpoint struct {
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

func (j *job) taskCheckpoint(v *vertex, id int64) wireTaskCheckpoint {
	var size int64
	for i := range j.l.cfg.Parallelism {
		size += v.stateSize(id, i)
	}
	return wireTaskCheckpoint{
		ID: id, Status: "COMPLETED", LatestAckTimestamp: j.triggerMs(id) + 40, CheckpointedSize: size,
		StateSize: size, EndToEndDuration: 40, NumSubtasks: j.l.cfg.Parallelism, NumAcknowledged: j.l.cfg.Parallelism,
	}
}

func (j *job) checkpoint(id int64, withTasks bool) wireCheckpoint {
	c := wireCheckpoint{
		ClassName: "completed", ID: id, Status: "COMPLETED", TriggerTimestamp: j.triggerMs(id),
		LatestAckTimestamp: j.triggerMs(id) + 42, EndToEndDuration: 42, ProcessedData: 1965,
		NumSubtasks:     int(numRoles) * j.l.cfg.Parallelism,
		NumAcknowledged: int(numRoles) * j.l.cfg.Parallelism, CheckpointType: "CHECKPOINT",
		Tasks: map[string]any{}, ExternalPath: "<checkpoint-not-externally-addressable>",
		Discarded: id < j.latestCheckpoint(j.cpCalls.Load()),
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

type wireMinMaxAvg struct {
	Min  int64   `json:"min"`
	Max  int64   `json:"max"`
	Avg  int64   `json:"avg"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
}

func flat(x int64) wireMinMaxAvg {
	f := float64(x)
	return wireMinMaxAvg{x, x, x, f, f, f, f, f}
}

func (j *job) checkpointStats(latest int64) any {
	type counts struct {
		Restored   int   `json:"restored"`
		Total      int64 `json:"total"`
		InProgress int   `json:"in_progress"`
		Completed  int64 `json:"completed"`
		Failed     int   `json:"failed"`
	}
	type latestT struct {
		Completed wireCheckpoint `json:"completed"`
		Savepoint *struct{}      `json:"savepoint"`
		Failed    *struct{}      `json:"failed"`
		Restored  *struct{}      `json:"restored"`
	}
	var body struct {
		Counts  counts                   `json:"counts"`
		Summary map[string]wireMinMaxAvg `json:"summary"`
		Latest  latestT                  `json:"latest"`
		History []wireCheckpoint         `json:"history"`
	}
	body.Counts = counts{Total: latest, Completed: latest}
	last := j.checkpoint(latest, false)
	body.Summary = map[string]wireMinMaxAvg{
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

func (j *job) checkpointDetails(id int64) []byte { return must(marshal(j.checkpoint(id, true))) }

// checkpointSubtasks answers
// /jobs/:id/checkpoints/details/:cp/subtasks/:vid.
func (v *vertex) checkpointSubtasks(id int64) []byte {
	type align struct {
		Buffered  int64 `json:"buffered"`
		Processed int64 `json:"processed"`
		Persisted int64 `json:"persisted"`
		Duration  int64 `json:"duration"`
	}
	type sub struct {
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
		Alignment  align  `json:"alignment"`
		StartDelay int64  `json:"start_delay"`
		Unaligned  bool   `json:"unaligned_checkpoint"`
		Aborted    bool   `json:"aborted"`
		Status     string `json:"status"`
	}
	j := v.job
	t := j.taskCheckpoint(v, id)
	var body struct {
		wireTaskCheckpoint
		Summary  map[string]wireMinMaxAvg `json:"summary"`
		Subtasks []sub                    `json:"subtasks"`
	}
	body.wireTaskCheckpoint = t
	var lo, hi int64 = -1, 0
	for i := range j.l.cfg.Parallelism {
		sz := v.stateSize(id, i)
		if lo < 0 || sz < lo {
			lo = sz
		}
		hi = max(hi, sz)
		s := sub{
			ClassName: "completed", Index: i, AckTimestamp: j.triggerMs(id) + 20 + int64(i%20),
			EndToEndDuration: 20 + int64(i%20), CheckpointedSize: sz, StateSize: sz, StartDelay: 10,
			Status: "completed",
		}
		s.Checkpoint.Sync, s.Checkpoint.Async = 1, 2
		body.Subtasks = append(body.Subtasks, s)
	}
	avg := t.StateSize / int64(j.l.cfg.Parallelism)
	body.Summary = map[string]wireMinMaxAvg{
		"checkpointed_size":   {Min: lo, Max: hi, Avg: avg},
		"state_size":          {Min: lo, Max: hi, Avg: avg},
		"end_to_end_duration": {Min: 20, Max: 39, Avg: 30},
		"start_delay":         flat(10),
	}
	return must(marshal(body))
}
