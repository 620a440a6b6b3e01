package flink

import (
	"time"

	"github.com/skewscope/skewscope/sqlplan"
)

// Freshness says whether a value is from the latest poll or an older one.
type Freshness struct {
	UpdatedAt time.Time     // UpdatedAt is the poll that last refreshed the value.
	Stale     bool          // Stale is true when the latest poll failed to refresh it.
	Age       time.Duration // Age is CollectedAt − UpdatedAt.
}

// Snapshot is the result of one poll of one Flink REST endpoint. It is
// immutable once published: readers must not modify it or its slices.
type Snapshot struct {
	Endpoint     string        // Endpoint is the configured name.
	URL          string        // URL is the endpoint's base URL (no credentials).
	CollectedAt  time.Time     // CollectedAt is when the poll started.
	PollDuration time.Duration // PollDuration is how long the poll took.
	FlinkVersion string        // FlinkVersion is from /overview, "" when unknown.
	// Err is set when the job list could not be read; the jobs of the last
	// good poll are kept, marked stale.
	Err  error
	Jobs []JobSnapshot // running jobs first, then by name and id
	// Cost is what the poll asked of the endpoint.
	Cost PollCost
	// Backoff says how long the collector pauses before the next poll,
	// and why when that is longer than the poll interval.
	Backoff Backoff
	// MaxInFlight and MaxRequestsPerSecond are the endpoint's request
	// budget (Config, defaults applied).
	MaxInFlight          int
	MaxRequestsPerSecond float64
	// DroppedJobs counts the finished jobs the job list held beyond
	// MaxJobs (Config, default applied), left out of Jobs, the oldest
	// first; nothing else was asked about them.
	DroppedJobs int
	MaxJobs     int
}

// JobSnapshot is one job as seen by a poll.
type JobSnapshot struct {
	ID        string
	Name      string
	State     JobState
	StartTime time.Time
	// Vertices are in the plan's topological order.
	Vertices []VertexSnapshot
	// LatestCheckpoint is the latest completed checkpoint, nil when none.
	LatestCheckpoint *CheckpointStats
	// Restored is set when the job started from a checkpoint or savepoint.
	// Every restart under the same job id from a checkpoint (a failover,
	// an in-place rescale by the adaptive scheduler) changes its
	// CheckpointID or At, so comparing it between snapshots shows them.
	Restored *RestoreInfo
	// NumRestarts is the job's numRestarts metric (job scope), −1 when
	// unknown.
	NumRestarts int64
	// Failures are the root causes of the job's latest restarts, newest
	// first (at most maxExceptions), from the exception history read when
	// NumRestarts last changed; nil when the job never restarted or the
	// history could not be read.
	Failures []Failure
	// failuresRead is the NumRestarts Failures were read at.
	failuresRead int64
	// Unlisted counts the consecutive job lists, up to the latest, that
	// left the job out; 0 when the latest listed it. Such a job is the
	// previous snapshot's, stale (MaxUnlistedPolls).
	Unlisted int
	Err      error
	Freshness
	// endedAsked is set on an ended job whose details the collector asked
	// for (ended.go): it is not asked again.
	endedAsked bool
}

// RestoreInfo says what a job was restored from (/jobs/:id/checkpoints
// latest.restored).
type RestoreInfo struct {
	CheckpointID int64
	IsSavepoint  bool
	ExternalPath string
	At           time.Time
}

// VertexSnapshot is one job vertex with its per-subtask figures.
type VertexSnapshot struct {
	ID             string
	Name           string
	Parallelism    int
	MaxParallelism int
	Source         bool // no inputs in the plan
	Keyed          bool // a HASH input in the plan: key groups apply
	// Inputs are the ids of the vertices it reads from, in the plan's input
	// order (the plan's edges); nil for a source.
	Inputs []string
	// BackpressureLevel is Flink's vertex level (ok, low, high), "" unknown.
	BackpressureLevel string
	Subtasks          []SubtaskSnapshot // by index, len == Parallelism
	// Kafka is the Kafka source observation (partitions per subtask with
	// current and committed offsets), nil when the vertex reports no
	// KafkaSourceReader offset metrics.
	Kafka *KafkaSourceObservation
	// StateCheckpointID is the checkpoint the subtasks' StateSize values
	// come from, 0 when none (only keyed and source vertices have them).
	StateCheckpointID int64
	// StateFreshness says whether StateSize is from the latest completed
	// checkpoint: Stale when that checkpoint's details could not be read
	// (e.g. it fell out of the JobManager's history) and older sizes are
	// kept.
	StateFreshness Freshness
	// StateCheckpointAt is when that checkpoint was last acknowledged
	// (completed), zero when unknown.
	StateCheckpointAt time.Time
	// SQL is the Flink SQL operator the vertex runs on its hashed input
	// and the key columns it names, read from the job plan's operator
	// descriptions; nil when the vertex runs no keyed SQL operator.
	SQL *SQLKey
	// startTime is the vertex's start-time in /jobs/:jobid (reuseDetails).
	startTime int64
	Err       error
	Freshness
}

// SQLKey is a keyed Flink SQL operator as the job plan describes it. Its
// records are keyed by a BinaryRowData of the key columns, so a key's
// subtask is murmurHash(BinaryRowData.hashCode()) % maxParallelism's.
type SQLKey struct {
	// Operator is the operator's name as Flink writes it: GroupAggregate,
	// GlobalGroupAggregate, Join, Rank, Deduplicate, OverAggregate, ...
	Operator string
	// Columns are, per keyed input (a join has two), the key columns in
	// key order; empty when Named is false.
	Columns [][]string
	// Named is false when the description does not name the key columns
	// (a join on expressions, say): the key is then not known.
	Named bool
	// Phase is "global" for the global half of a two-phase aggregation,
	// "incremental" for the second stage of a split distinct aggregation,
	// "" otherwise.
	Phase string
	// LocalInput is set when an input vertex runs the local half
	// (LocalGroupAggregate, LocalWindowAggregate), which combines each
	// key's records of a mini-batch before the hash exchange.
	LocalInput bool
	// InputParallelism is the parallelism of the (first) input vertex,
	// the local half's for a two-phase aggregation, and MiniBatchMs the
	// mini-batch interval of a local half (MiniBatchAssigner's interval);
	// 0 when not known.
	InputParallelism int
	MiniBatchMs      int64
	// Sources say, per keyed input and key column, where the column comes
	// from in the plan: a column of a scanned table (renamed or not on the
	// way) or an expression computed upstream; nil when not traced.
	Sources [][]sqlplan.Source
}

// SubtaskSnapshot holds one subtask's figures. Ratios are 0–1 and NaN when
// unknown; rates are records per second (Flink's 60 s meters) and NaN when
// unknown; StateSize is −1 when unknown.
type SubtaskSnapshot struct {
	Index    int
	Status   TaskState
	Endpoint string // task manager host:port
	// Attempt is the current execution attempt (0-based) and StartTime
	// its start-time (zero before it is deployed), from the vertex
	// details. A restart changes StartTime.
	Attempt             int
	StartTime           time.Time
	BusyRatio           float64
	BackPressuredRatio  float64
	IdleRatio           float64
	RecordsInPerSecond  float64
	RecordsOutPerSecond float64
	// StateSize is the subtask's full checkpointed state in the latest
	// completed checkpoint.
	StateSize int64
	// Checkpoint is the subtask's part of the checkpoint StateSize comes
	// from (VertexSnapshot.StateCheckpointID), validated; nil when it was
	// not read or the subtask had not acknowledged it.
	Checkpoint *SubtaskCheckpoint
	// EventTime is the subtask's watermark gauges (eventtime.go).
	EventTime SubtaskEventTime
}
