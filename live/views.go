package live

import (
	"time"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
)

// Provenance is whether a figure is observed, estimated or computed,
// shown next to it on every page (truth rule 2).
type Provenance string

// Provenances of figures.
const (
	// Observed figures were read from Kafka or Flink.
	Observed Provenance = "observed"
	// Estimated figures are derived from observations with a stated method
	// (lag in seconds from the offset→time table).
	Estimated Provenance = "estimated"
	// Computed figures come from Flink's own formulas (assign).
	Computed Provenance = "computed"
)

// Age is the freshness of a backend's data as pages show it.
type Age struct {
	// At is when the data was collected: the start of the latest poll that
	// refreshed it, which for a backend that is failing is the last
	// successful poll, not the latest try.
	At time.Time `json:"at"`
	// Seconds is now − At, rounded down.
	Seconds int64 `json:"ageSeconds"`
	// Stale is true when the latest poll could not refresh the data.
	Stale bool `json:"stale"`
	// Err is the latest poll's error for this item, "" when none.
	Err string `json:"error,omitempty"`
	// Tried is when the latest poll of a Kafka cluster or Flink endpoint
	// started, successful or not; zero for other items and before the
	// first poll.
	Tried time.Time `json:"triedAt,omitzero"`
	// State is StateOK, StateFailing (the latest poll could not refresh
	// the data: Stale), StateNeverReached (no poll ever did: there is no
	// data, whatever the counts say) or, for a configured backend whose
	// first poll has not ended yet, StateNotPolled (Stale, At zero).
	State BackendState `json:"state"`
}

// BackendState is the state of a backend's data (Age.State).
type BackendState string

// Age states.
const (
	StateOK           BackendState = "ok"
	StateFailing      BackendState = "failing"
	StateNeverReached BackendState = "never reached"
	StateNotPolled    BackendState = "not yet polled"
)

// Reached reports whether a poll of the backend or item ever succeeded,
// so that its counts mean something.
func (a Age) Reached() bool { return a.State == StateOK || a.State == StateFailing }

// Figure is one headline number with its provenance: Name says which
// figure it is (a Figure* value) and the fields after Kind what package
// web needs beside Value to say it and where it comes from (see each name).
type Figure struct {
	Name  string     `json:"name"`
	Value float64    `json:"value"` // -1 unknown
	Kind  Provenance `json:"kind"`  // Observed, Estimated or Computed
	// Partition is the figure's partition ("topic-3"), "" none.
	Partition string `json:"partition,omitempty"`
	// AtLeast: the partition's figure is a lower bound.
	AtLeast bool `json:"atLeast,omitempty"`
	// Unknown of Of partitions have no value for the figure.
	Unknown int `json:"unknown,omitempty"`
	Of      int `json:"of,omitempty"`
	// Subtask is the figure's subtask, -1 none.
	Subtask int `json:"subtask"`
	// Ratio is the figure's second ratio: the busiest subtask's
	// backpressure, the skew's max/mean.
	Ratio float64 `json:"ratio,omitempty"`
	// Min is the low end of a range whose high end is Value.
	Min float64 `json:"min,omitempty"`
	// Seconds is the retention a time to retention is counted against.
	Seconds float64 `json:"seconds,omitempty"`
	// Records is the records lost on Partition, Partitions how many
	// partitions lost some, Behind how many are below the log start now,
	// From and To when the losses were seen, Since when skewscope began
	// counting.
	Records    int64     `json:"records,omitempty"`
	Partitions int       `json:"partitions,omitempty"`
	Behind     int       `json:"behind,omitempty"`
	From       time.Time `json:"from,omitzero"`
	To         time.Time `json:"to,omitzero"`
	Since      time.Time `json:"since,omitzero"`
}

// ClusterSummary is one Kafka cluster on the overview.
type ClusterSummary struct {
	Name       string  `json:"name"`
	Topics     int     `json:"topics"`
	Partitions int     `json:"partitions"`
	Groups     int     `json:"groups"`
	Rate       float64 `json:"rate"` // records/s produced, observed
	PollMillis int64   `json:"pollMillis"`
	Age        Age     `json:"freshness"`
}

// EndpointSummary is one Flink REST endpoint on the overview.
type EndpointSummary struct {
	Name         string `json:"name"`
	URL          string `json:"url"`
	FlinkVersion string `json:"flinkVersion"`
	Jobs         int    `json:"jobs"`
	// DroppedJobs counts the finished jobs the endpoint lists beyond
	// MaxJobs, left out (flink.Config.MaxJobs).
	DroppedJobs int   `json:"droppedJobs"`
	MaxJobs     int   `json:"maxJobs"`
	PollMillis  int64 `json:"pollMillis"`
	Age         Age   `json:"freshness"`
	// Cost is what the latest poll asked of the JobManager, Budget what
	// skewscope allows itself there.
	Cost   PollCost      `json:"cost"`
	Budget RequestBudget `json:"budget"`
}

// PollCost is what one poll asked of a backend.
type PollCost struct {
	Requests int64 `json:"requests"`
	Failed   int64 `json:"failed"`
	Bytes    int64 `json:"bytes"`
}

// RequestBudget is the request budget of a Flink endpoint and whether the
// collector is backing off.
type RequestBudget struct {
	MaxInFlight          int     `json:"maxInFlight"`
	MaxRequestsPerSecond float64 `json:"maxRequestsPerSecond"`
	// PauseMillis is the pause before the next poll: the poll interval,
	// or longer while backing off.
	PauseMillis int64 `json:"pauseMillis"`
	// BackoffPolls counts the bad polls in a row (0: not backing off);
	// BackoffReason says what was wrong: failing or slow.
	BackoffPolls  int    `json:"backoffPolls"`
	BackoffReason string `json:"backoffReason"`
}

// JobSummary is one job on the overview.
type JobSummary struct {
	Endpoint string         `json:"endpoint"`
	ID       string         `json:"id"`
	Name     string         `json:"name"`
	State    flink.JobState `json:"state"`
	Vertices int            `json:"vertices"`
	// Lag is the total lag in records of its Kafka sources; -1 unknown.
	Lag int64 `json:"lag"`
	// MaxBusy is the highest subtask busy ratio over its vertices; NaN-free:
	// -1 when unknown.
	MaxBusy float64 `json:"maxBusy"`
	// Backpressure is the worst vertex level (ok, low, high), "" unknown.
	Backpressure string `json:"backpressure"`
	// Drift counts source partitions whose observed owner differs from the
	// prediction.
	Drift int `json:"drift"`
	// NotModelled counts Kafka sources whose layout is not modelled (restored
	// without a known parallelism history): their drift is unknown, not 0.
	NotModelled int `json:"notModelled"`
	// WithheldPartitions counts its Kafka sources' partitions whose
	// readers' metrics Flink withheld: not observed, so not counted in
	// Drift either way.
	WithheldPartitions int `json:"withheldPartitions"`
	// RecordsLost is the records of its Kafka sources' partitions that
	// Kafka deleted before they were read (Loss), observed since skewscope
	// started.
	RecordsLost int64 `json:"recordsLost"`
	// Concern is the worst of its vertices' (concern.go), Focus the vertex
	// and subtask with it, nil when every vertex is ok. LagSeconds,
	// LagKind and Trend are its sources' furthest-behind subtask's.
	Concern    Concern           `json:"concern"`
	Focus      *Focus            `json:"focus,omitempty"`
	LagSeconds float64           `json:"lagSeconds"`
	LagKind    kafka.TimeLagKind `json:"lagKind"`
	Trend      Trend             `json:"trend"`
	Age        Age               `json:"freshness"`
	// Unlisted is JobView.Unlisted.
	Unlisted int `json:"unlistedPolls"`
	// ReplacedBy is set when a later job with the same name replaced this
	// one (a restore gives the job a new id).
	ReplacedBy *Replacement `json:"replacedBy,omitempty"`
}

// Focus is the vertex and subtask a job's concern is about.
type Focus struct {
	VertexID   string `json:"vertexId"`
	VertexName string `json:"vertexName"`
	Subtask    int    `json:"subtask"`
}

// TopicSummary is one watched topic on the overview.
type TopicSummary struct {
	Cluster    string  `json:"cluster"`
	Name       string  `json:"name"`
	Partitions int     `json:"partitions"`
	Rate       float64 `json:"rate"`
	Groups     int     `json:"groups"`
	// Age is the age of the topic's data: stale, with the cluster's data
	// age, while its cluster is not fresh.
	Age Age `json:"freshness"`
}

// OverviewView is the overview page and /api/v1/overview.
type OverviewView struct {
	Clusters  []ClusterSummary  `json:"clusters"`
	Endpoints []EndpointSummary `json:"endpoints"`
	Jobs      []JobSummary      `json:"jobs"`
	Topics    []TopicSummary    `json:"topics"`
}

// VertexSummary is one vertex on the job page.
type VertexSummary struct {
	ID             string `json:"id"`
	Name           string `json:"name"`
	Parallelism    int    `json:"parallelism"`
	MaxParallelism int    `json:"maxParallelism"`
	Source         bool   `json:"source"`
	Keyed          bool   `json:"keyed"`
	Kafka          bool   `json:"kafka"`
	// Skew is Flink's data skew % of records/s per subtask (records out for
	// sources, in otherwise), computed from observed rates; -1 unknown.
	Skew float64 `json:"skewPercent"`
	// Busiest is the subtask with the highest busy ratio, -1 unknown.
	Busiest      int     `json:"busiest"`
	MaxBusy      float64 `json:"maxBusy"` // -1 unknown
	Backpressure string  `json:"backpressure"`
	Partitions   int     `json:"partitions"`
	// MissingPartitions is the source's Prediction.Missing: partitions
	// Kafka lists that its metric ids do not name yet.
	MissingPartitions int `json:"missingPartitions"`
	// WithheldPartitions is the source's Prediction.Withheld: partitions
	// whose readers' metrics Flink withheld, so that only the prediction
	// is shown.
	WithheldPartitions int   `json:"withheldPartitions"`
	Lag                int64 `json:"lag"` // -1 unknown or not a Kafka source
	Drift              int   `json:"drift"`
	// RecordsLost is the records of its partitions Kafka deleted before the
	// source read them (Loss), observed since skewscope started; 0 for
	// other vertices.
	RecordsLost int64 `json:"recordsLost"`
	// PredictionMode is the source's Prediction.Mode ("fresh", "restore",
	// "none" when not modelled), "" for other vertices.
	PredictionMode Mode   `json:"predictionMode,omitempty"`
	Error          string `json:"error,omitempty"`
	// Concern and Worst are the vertex's (VertexView.Concern, Worst).
	Concern Concern `json:"concern"`
	Worst   int     `json:"worstSubtask"`
	// LagSeconds is the largest lag time of its partitions, LagKind how it
	// was estimated and Trend that subtask's lag's (Kafka sources; -1 and
	// unknown otherwise).
	LagSeconds float64           `json:"lagSeconds"`
	LagKind    kafka.TimeLagKind `json:"lagKind"`
	Trend      Trend             `json:"trend"`
}

// JobView is the job page and /api/v1/jobs/{jobID}.
type JobView struct {
	Endpoint  string         `json:"endpoint"`
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	State     flink.JobState `json:"state"`
	StartTime time.Time      `json:"startTime"`
	Restored  *Restored      `json:"restored,omitempty"`
	// Restarts is Flink's numRestarts (failovers, and in-place rescales by
	// the adaptive scheduler); -1 unknown.
	Restarts int64           `json:"restarts"`
	Vertices []VertexSummary `json:"vertices"`
	Age      Age             `json:"freshness"`
	// Unlisted counts the latest job lists of its endpoint that left the
	// job out (its values are then the last ones, stale); 0 when listed.
	Unlisted int `json:"unlistedPolls"`
	// ReplacedBy is set when a later job with the same name replaced this
	// one.
	ReplacedBy *Replacement `json:"replacedBy,omitempty"`
	// LastReported is set when the job has ended and its vertices are what
	// Flink last reported while it ran, at this time (Flink has no metrics
	// for an ended job).
	// EventTime is the job's watermark and what holds it back, nil when
	// the job reports no event time (eventtime.go).
	EventTime    *JobEventTime `json:"eventTime,omitempty"`
	LastReported *time.Time    `json:"lastReported,omitempty"`
}

// Restored says what a job was restored from.
type Restored struct {
	CheckpointID int64     `json:"checkpointId"`
	Savepoint    bool      `json:"savepoint"`
	Path         string    `json:"path"`
	At           time.Time `json:"at"`
}

// GroupLink says which consumer group a source vertex commits to and how
// skewscope found it.
type GroupLink struct {
	Name string `json:"name"`
	// Found is how skewscope linked the group to the source: named in the
	// configuration, or discovered from the commits, with Matched of the
	// source's Partitions as the evidence.
	Found      GroupFound `json:"found"`
	Matched    int        `json:"matched,omitempty"`
	Partitions int        `json:"partitions,omitempty"`
}

// GroupFound is how a source's consumer group was found (GroupLink.Found).
type GroupFound string

// How groups are found.
const (
	// GroupConfigured: a link in the configuration names it.
	GroupConfigured GroupFound = "configured"
	// GroupCommitsEqual: its commits equal the job's committedOffset on
	// Matched of Partitions partitions (the most of any group).
	GroupCommitsEqual GroupFound = "commits-equal"
	// GroupCommitsOn: no group's commits equal the job's; this one has
	// commits on Matched of the source's Partitions partitions, the most.
	GroupCommitsOn GroupFound = "commits-on"
)

// PartitionCell is one partition of a source subtask.
type PartitionCell struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Label is the short on-screen name (topic initial + partition).
	Label string `json:"-"`
	// Current is Flink's currentOffset (last emitted), -1 before the first.
	Current int64 `json:"currentOffset"`
	// Committed is Flink's committedOffset metric, -1 unknown.
	Committed int64 `json:"committedOffset"`
	// CommittedAt is when Committed was read from Flink: the collector
	// reads committedOffset only when it can have changed (after a
	// completed checkpoint, a restart), so it can be older than Current.
	// Zero when unknown.
	CommittedAt time.Time `json:"committedAt,omitzero"`
	// End is the partition's end offset (high watermark), -1 unknown.
	End int64 `json:"endOffset"`
	// Lag is End − (Current+1), observed; -1 unknown.
	Lag int64 `json:"lag"`
	// LagSeconds is estimated from the offset→time table; LagKind says how
	// (unknown, caught-up, interpolated, at-least).
	LagSeconds float64           `json:"lagSeconds"`
	LagKind    kafka.TimeLagKind `json:"lagKind"`
	// Reading is how the source does on the partition: its state, trend,
	// rates, time to catch up and what it lost (readers.go).
	Reading Reading `json:"reading"`
	// Rate is the produce rate in records/s, observed from end-offset
	// deltas; -1 unknown.
	Rate float64 `json:"rate"`
	// RetentionSeconds is the topic's retention.ms in seconds when it
	// deletes records (observed), 0 unknown or no limit.
	// TimeToRetentionSeconds is, estimated, when the lag in time reaches
	// it at the lag time's trend (timeToRetention): -1 when the lag is not
	// growing or the retention is unknown, 0 when it is there already.
	RetentionSeconds       float64 `json:"retentionSeconds"`
	TimeToRetentionSeconds float64 `json:"timeToRetentionSeconds"`
	// Predicted is the subtask Flink's formula gives, -1 when not modelled.
	Predicted int `json:"predicted"`
	// Uncertain is true when the owner is not determined: the restore model
	// cannot place it exactly, or the observation cannot tell which subtask
	// reads it (OwnerUndetermined).
	Uncertain bool `json:"uncertain,omitempty"`
	// Basis says how far the cell's prediction can be trusted: "exact",
	// "inferred", "uncertain" or "not modelled".
	Basis Basis `json:"basis"`
	// OwnerUndetermined is true when Flink's metric ids do not tell which
	// subtask reads the partition: it is listed under several and no value
	// the current attempts wrote decides (Candidates lists them), or the
	// ids still predate the latest restart (Candidates is empty: any
	// subtask may read it). The cell is shown under the model's subtask
	// when that may be the reader, else under one that lists it.
	OwnerUndetermined bool  `json:"ownerUndetermined,omitempty"`
	Candidates        []int `json:"candidates,omitempty"`
	// Withheld is true when Flink withheld the metrics of the partition's
	// reader (VertexView.Withheld): no listed metric id with a value names
	// it, so there is no observed reader, only the prediction. Such a cell
	// is OwnerUndetermined too.
	Withheld bool `json:"withheld,omitempty"`
	// EventTime is the partition's watermark and state on its reader, nil
	// when the job reports no event time (eventtime.go).
	EventTime *PartitionEventTime `json:"eventTime,omitempty"`
	// Level is the colour step 0–3 of the chosen colouring.
	Level int `json:"-"`
}

// SubtaskRow is one subtask of a vertex.
type SubtaskRow struct {
	Subtask    int             `json:"subtask"`
	Status     flink.TaskState `json:"status"`
	Partitions []PartitionCell `json:"partitions,omitempty"`
	// KeyGroups is the subtask's key-group range (keyed vertices).
	KeyGroups *KeyGroupSpan `json:"keyGroups,omitempty"`
	// Rate is the sum of its partitions' produce rates (sources), -1 unknown.
	Rate float64 `json:"rate"`
	// Lag is the sum of its partitions' lags, -1 unknown.
	Lag        int64   `json:"lag"`
	LagSeconds float64 `json:"lagSeconds"` // the largest of its partitions
	// LagKind is how that partition's LagSeconds was estimated (at-least:
	// a lower bound), "unknown" when no partition's is known.
	LagKind kafka.TimeLagKind `json:"lagKind"`
	// RecordsLost is the records of its partitions Kafka deleted before it
	// read them (their Reading.Lost), observed.
	RecordsLost int64 `json:"recordsLost"`
	// TimeToRetentionSeconds is the soonest of its partitions' (-1 none),
	// RetentionSeconds and RetentionPartition that partition's retention
	// and split id. Estimated.
	TimeToRetentionSeconds float64 `json:"timeToRetentionSeconds"`
	RetentionSeconds       float64 `json:"retentionSeconds,omitempty"`
	RetentionPartition     string  `json:"retentionPartition,omitempty"`
	// CatchUp says whether and when the subtask catches up at its observed
	// rates (CatchUp* constants), CatchUpSeconds the estimate for
	// CatchUpETA: its lag over records out/s minus its partitions'
	// produced records/s. Trend is its lag's over the recent samples (the
	// sum of its partitions'). Estimated.
	CatchUp        CatchUp `json:"catchUp"`
	CatchUpSeconds float64 `json:"catchUpSeconds"`
	Trend          Trend   `json:"trend"`
	// Busy, BackPressured and Idle are Flink's time ratios 0–1, -1 unknown.
	Busy          float64 `json:"busy"`
	BackPressured float64 `json:"backPressured"`
	Idle          float64 `json:"idle"`
	RecordsIn     float64 `json:"recordsInPerSecond"`  // -1 unknown
	RecordsOut    float64 `json:"recordsOutPerSecond"` // -1 unknown
	StateSize     int64   `json:"stateSize"`           // -1 unknown
	// Checkpoint is the subtask's part of the vertex's checkpoint
	// (VertexView.Checkpoint), observed; nil when Flink gave none.
	Checkpoint *SubtaskCheckpoint `json:"checkpoint,omitempty"`
	// Drift counts partitions whose observed owner differs from Predicted.
	Drift int `json:"drift"`
	// Spark are the recent lag and rate samples (oldest first), at the
	// vertex's SparkTimes.
	SparkLag  []float64 `json:"sparkLag,omitempty"`
	SparkRate []float64 `json:"sparkRate,omitempty"`
	// SparkWatermark is the recent event-time lag samples in seconds (now
	// − the subtask's watermark at each poll, computed; -1 none yet), at
	// the vertex's SparkTimes, while the job reports watermarks.
	SparkWatermark []float64 `json:"sparkWatermarkLag,omitempty"`
	// Watermark is the subtask's watermark (eventtime.go), nil when the job
	// reports no event time.
	Watermark *SubtaskWatermark `json:"watermark,omitempty"`
	// Concern is how urgently the subtask needs a look (concern.go).
	Concern   Concern `json:"concern"`
	Highlight bool    `json:"-"`
}

// SubtaskCheckpoint is one subtask's figures in a checkpoint, as Flink's
// checkpoint details give them; every figure is -1 when unknown.
type SubtaskCheckpoint struct {
	// DurationMs is the checkpoint duration, sync + async (the Web UI's
	// "Checkpoint Duration"); SyncMs and AsyncMs its parts.
	DurationMs int64 `json:"durationMs"`
	SyncMs     int64 `json:"syncMs"`
	AsyncMs    int64 `json:"asyncMs"`
	// AlignmentMs is how long the subtask waited for its inputs' barriers;
	// AlignmentProcessed and AlignmentPersisted the bytes processed and
	// persisted (unaligned) meanwhile.
	AlignmentMs        int64 `json:"alignmentMs"`
	AlignmentProcessed int64 `json:"alignmentProcessedBytes"`
	AlignmentPersisted int64 `json:"alignmentPersistedBytes"`
	// StartDelayMs is from the checkpoint's trigger to the first barrier
	// reaching the subtask; EndToEndMs from the trigger to its ack.
	StartDelayMs int64 `json:"startDelayMs"`
	EndToEndMs   int64 `json:"endToEndMs"`
	// CheckpointedSize is what this checkpoint persisted for the subtask
	// (incremental), bytes.
	CheckpointedSize int64 `json:"checkpointedSize"`
	Unaligned        bool  `json:"unaligned"`
}

// VertexCheckpoint is the checkpoint the subtasks' state sizes and
// checkpoint figures come from, observed.
type VertexCheckpoint struct {
	ID int64 `json:"id"`
	// CompletedAt is when its last subtask acknowledged it, zero unknown.
	CompletedAt time.Time `json:"completedAt,omitzero"`
	// Age is when the figures were read; stale when the latest completed
	// checkpoint's details could not be read and these are older.
	Age Age `json:"freshness"`
	// Slowest is the subtask whose checkpoint duration stands out (at
	// least slowFactor times the mean of the others' and slowFloorMs), -1
	// none; SlowFactor is its duration over that mean (computed).
	Slowest    int     `json:"slowestSubtask"`
	SlowFactor float64 `json:"slowFactor,omitempty"`
}

// KeyGroupSpan is an inclusive key-group range.
type KeyGroupSpan struct {
	Start int `json:"start"`
	End   int `json:"end"`
	Size  int `json:"size"`
}

// Prediction says how the vertex's observed assignment compares with Flink's
// formulas.
type Prediction struct {
	// Mode is "fresh" (KafkaSource fresh start), "restore" (restore model
	// with History), "inferred" (restore model over a History inferred from
	// the observed layout) or "none" (not modelled).
	Mode    Mode  `json:"mode"`
	History []int `json:"history,omitempty"`
	// HistoryFrom says where History came from: a HistoryFrom* value.
	HistoryFrom HistoryOrigin `json:"historyFrom,omitempty"`
	// Matched, Drift, Uncertain and UncertainDiffer are counted from the
	// cells' verdicts (Judge; Headline.Verdicts): Matched is match +
	// guessed, Uncertain guessed + not guessed + undetermined.
	Matched   int `json:"matched"`
	Total     int `json:"total"`
	Drift     int `json:"drift"`
	Uncertain int `json:"uncertain"`
	// UncertainDiffer counts uncertain partitions found elsewhere than the
	// model's best guess; they are not drift.
	UncertainDiffer int `json:"uncertainDiffer"`
	// Withheld counts the partitions whose readers' metrics Flink withheld
	// (Headline.Verdicts.Withheld): shown as predicted, not observed; they
	// are neither matched nor uncertain.
	Withheld int `json:"withheld"`
	// Ambiguous counts partitions listed under several subtasks in the
	// metric ids (stale metric groups after a reassignment).
	Ambiguous int `json:"ambiguous"`
	// Missing counts the partitions of the source's topics that Kafka's
	// metadata lists and no metric id names yet: the source may read them
	// (discovered since its ids were read) and the page not show them.
	// UnknownToKafka counts the partitions the metric ids name that the
	// metadata does not list (a topic grown since it was read). Either
	// leaves the partition set unsettled: the headline is not exact.
	Missing        int `json:"missing"`
	UnknownToKafka int `json:"unknownToKafka"`
	// NotModelled says why Mode is ModeNone; nil when it is not, or when
	// no cell is modelled for another reason (the headline's counts say).
	NotModelled *NotModelled `json:"notModelled,omitempty"`
	Notes       []Note       `json:"notes,omitempty"`
	Source      string       `json:"source"`
	// Headline is the one verdict on the layout, with the count of each
	// kind of cell.
	Headline Headline `json:"headline"`
}

// VertexView is the vertex page and /api/v1/jobs/{jobID}/vertices/{vertexID}.
type VertexView struct {
	Endpoint       string         `json:"endpoint"`
	Cluster        string         `json:"cluster,omitempty"`
	JobID          string         `json:"jobId"`
	JobName        string         `json:"jobName"`
	JobState       flink.JobState `json:"jobState"`
	ID             string         `json:"id"`
	Name           string         `json:"name"`
	Parallelism    int            `json:"parallelism"`
	MaxParallelism int            `json:"maxParallelism"`
	Source         bool           `json:"source"`
	Keyed          bool           `json:"keyed"`
	Kafka          bool           `json:"kafka"`
	Group          *GroupLink     `json:"group,omitempty"`
	Topics         []string       `json:"topics,omitempty"`
	Figures        []Figure       `json:"figures"`
	// States counts the partitions in each reader state (Kafka sources),
	// worst first.
	States []StateCount `json:"states,omitempty"`
	// RecordsLost is the records of the source's partitions Kafka deleted
	// before it read them, observed since skewscope started.
	RecordsLost int64 `json:"recordsLost"`
	// Retention is the retention settings of the topics the source reads
	// (Kafka sources whose cluster was read), observed, by topic name.
	Retention  []TopicRetention `json:"retention,omitempty"`
	Prediction *Prediction      `json:"prediction,omitempty"`
	Subtasks   []SubtaskRow     `json:"subtasks"`
	// Concern is the worst of its subtasks' and Worst the subtask with it
	// (markConcerns), -1 when every subtask is ok.
	Concern Concern `json:"concern"`
	Worst   int     `json:"worstSubtask"`
	// Checkpoint is the checkpoint of the subtasks' state sizes and
	// checkpoint figures, nil when none was read.
	Checkpoint *VertexCheckpoint `json:"checkpoint,omitempty"`
	// SparkTimes are the times of the subtasks' spark samples (Unix
	// seconds, oldest first), shared by every subtask's SparkLag and
	// SparkRate.
	SparkTimes []float64 `json:"sparkTimes,omitempty"`
	Restored   *Restored `json:"restored,omitempty"`
	// Lineage is the source's life as skewscope saw it (Kafka sources).
	Lineage *LineageView `json:"lineage,omitempty"`
	// Why is what makes the vertex hot, as its figures show it (Kafka
	// sources and keyed vertices of running jobs).
	Why *WhyView `json:"why,omitempty"`
	// Color is what partition cells are coloured by: "lag", "rate" or
	// "watermark" (their event-time lag, on LagTimeSteps).
	Color string `json:"-"`
	// Thresholds are the upper bounds of colour levels 0, 1, 2: in records
	// per second by rate; by lag, in records for the cells whose lag time
	// is unknown (the others are coloured by LagTimeSteps).
	Thresholds [3]float64 `json:"-"`
	// LagTimeSteps are the upper bounds in seconds of colour levels 0, 1, 2
	// by lag time (Color "lag").
	LagTimeSteps [3]float64 `json:"-"`
	Flink        Age        `json:"flinkFreshness"`
	KafkaAge     *Age       `json:"kafkaFreshness,omitempty"`
	Error        string     `json:"error,omitempty"`
	// ReplacedBy is set when a later job with the same name replaced this
	// vertex's job; its VertexID is the successor's vertex of this name.
	ReplacedBy *Replacement `json:"replacedBy,omitempty"`
	// LastReported is set when the job has ended and the view is what
	// Flink last reported of the vertex while the job ran, at this time.
	LastReported *time.Time `json:"lastReported,omitempty"`
	// Withheld is set when Flink withheld the source's reader metrics (a
	// metric dump over its size limit): the cells it concerns are the
	// prediction alone.
	Withheld *Withheld `json:"withheld,omitempty"`
	// EventTime is the vertex's lowest watermark and its holder, nil when
	// the job reports no event time; JobEventTime the job's.
	EventTime    *VertexWatermark `json:"eventTime,omitempty"`
	JobEventTime *JobEventTime    `json:"jobEventTime,omitempty"`
	// SQL is the Flink SQL operator keying the vertex and its key columns,
	// observed in the job plan; nil when the vertex runs no keyed SQL
	// operator.
	SQL *SQLKeyView `json:"sqlKey,omitempty"`
}

// SQLKeyView is a keyed vertex's Flink SQL key, as the job plan names it.
type SQLKeyView struct {
	// Operator is Flink's name of the keyed operator (GroupAggregate,
	// GlobalGroupAggregate, Join, Rank, Deduplicate, OverAggregate, ...).
	Operator string `json:"operator"`
	// Columns are the key columns in key order, per keyed input (two for
	// a join: left, right); empty when Named is false.
	Columns [][]string `json:"columns"`
	// Named is false when the plan does not name the key columns.
	Named bool `json:"named"`
	// TwoPhase is set for the global half of a two-phase aggregation whose
	// local half runs upstream: each source subtask combines a key's
	// records of a mini-batch before they reach this vertex.
	TwoPhase bool `json:"twoPhase"`
	// Phase is "global", "incremental" (a split distinct aggregation's
	// second stage) or "".
	Phase string `json:"phase,omitempty"`
	// InputParallelism is the parallelism of the vertex feeding the key
	// (the local half's, for TwoPhase) and MiniBatchMs the local half's
	// mini-batch interval; 0 when not known.
	InputParallelism int   `json:"inputParallelism,omitempty"`
	MiniBatchMs      int64 `json:"miniBatchMs,omitempty"`
	// Sources are, per keyed input and key column, where the column comes
	// from as the plan traces it; omitted when not traced.
	Sources [][]SQLKeySource `json:"sources,omitempty"`
}

// SQLKeySource is where one SQL key column comes from: a column of a
// table a source vertex scans (Table, Column, the table's name for it, which
// a subquery may have renamed), an expression an upstream operator
// computes (Expr), or neither when the plan does not say.
type SQLKeySource struct {
	Vertex string `json:"vertex,omitempty"` // the vertex that scans the table or computes the expression
	Table  string `json:"table,omitempty"`
	Column string `json:"column,omitempty"`
	Expr   string `json:"expr,omitempty"`
}

// TopicPartitionRow is one partition of a topic page.
type TopicPartitionRow struct {
	Partition int32   `json:"partition"`
	Start     int64   `json:"startOffset"`
	End       int64   `json:"endOffset"`
	Rate      float64 `json:"rate"` // -1 unknown
	Error     string  `json:"error,omitempty"`
	Stale     bool    `json:"stale"`
	// Groups holds one entry per TopicView.Groups, in the same order.
	Groups []GroupOffset `json:"groups"`
}

// GroupOffset is one group's commit on a partition.
type GroupOffset struct {
	Committed int64 `json:"committed"` // -1 none
	Lag       int64 `json:"lag"`       // -1 unknown
	// LagSeconds is the commit's lag in time, estimated from the store's
	// offset→time table as a source position's is (so the two agree for
	// one offset); LagKind says how.
	LagSeconds float64           `json:"lagSeconds"`
	LagKind    kafka.TimeLagKind `json:"lagKind"`
	// Reading is how the group's commits do on the partition (readers.go);
	// a group has no stopped state, its commits only stop moving.
	Reading Reading `json:"reading"`
}

// TopicGroup is a group with commits on the topic.
type TopicGroup struct {
	Name  string `json:"name"`
	State string `json:"state"`
	// Lag is the group's total lag on the topic, -1 unknown.
	Lag int64 `json:"lag"`
	// RecordsLost is the records of the topic Kafka deleted before the
	// group committed past them, observed since skewscope started; States
	// counts its partitions in each reader state, worst first.
	RecordsLost int64        `json:"recordsLost"`
	States      []StateCount `json:"states"`
}

// TopicView is the topic page and /api/v1/kafka/{cluster}/topics/{topic}.
type TopicView struct {
	Cluster    string              `json:"cluster"`
	Name       string              `json:"name"`
	Rate       float64             `json:"rate"`
	Groups     []TopicGroup        `json:"groups"`
	Partitions []TopicPartitionRow `json:"partitions"`
	// Retention is the topic's retention settings, nil before they were
	// read.
	Retention *TopicRetention `json:"retention,omitempty"`
	Age       Age             `json:"freshness"`
	Error     string          `json:"error,omitempty"`
}
