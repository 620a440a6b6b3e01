// Package fakejm is a fake Flink JobManager REST endpoint: the one the
// sandbox serves its simulated jobs through, and one that scales to
// hundreds of jobs, for measuring what skewscope's Flink collector costs
// per poll (cmd/jmload, the benchmarks of this package).
//
// Handler owns Flink's REST API: its routes, error answers, request-line
// limit, metric-store queries (id lists, get=, the subtask aggregation)
// and wire types; a Cluster says what there is to answer (NewHandler).
// The package writes Flink's metric ids itself (names.go), so a test of
// the collector against a fake checks it against Flink's naming rules, not
// against the collector's own helpers.
//
// New serves a synthetic Cluster of Config.Jobs identical streaming jobs,
// each of three vertices at one parallelism:
//
//   - "Source: Kafka Source -> Source Tagger": a KafkaSource reading
//     Config.Partitions partitions spread over Config.Topics, assigned to
//     the source subtasks the way Flink's KafkaSourceEnumerator assigns
//     them on a fresh start (assign.KafkaSplitOwner);
//   - "Key Router": a keyBy (HASH) input from the source;
//   - "Route Sink: Writer -> Route Sink: Committer": a Kafka sink, fed by a
//     rebalance.
//
// The answers have the JSON shapes of the Flink 2.3.0 recordings in
// collectors/testdata/flink/2.3.0, compact as Flink sends them, and with
// Config.EventTime the vertex metric id lists hold every id a real Flink
// 2.3.0 lists for these operators: per subtask the task, Netty shuffle,
// operator and Kafka client metrics, and per assigned partition the
// source reader's two offset gauges and the split's seven watermark
// gauges (see metricnames.go). So the lists are as large as a real
// JobManager's, which is what the collector's cost depends on; without
// it they leave the event-time gauges out. Like Flink's, the lists
// are in no particular order, and a metric value request answers the
// requested ids it knows, in the requested order, silently dropping the
// others; a request line over 4096 bytes is refused as Netty refuses it.
//
// Values are plausible and cheap: per-subtask busy, idle and backpressured
// times that add up to 1000 ms/s, record rates, accumulated times, Kafka
// offsets that grow with every value request of the vertex and, with
// Config.EventTime, watermarks that advance ten seconds with every poll of
// the job (eventtime.go). A new
// checkpoint completes every Config.CheckpointEvery checkpoint-list
// requests of a job. Nothing restarts or rescales.
//
// Bodies that do not change (overviews, job details and plans, vertex
// details, backpressure, the metric id lists) are encoded once by New, so
// the fake's own cost per poll is mostly writing bytes. Handler counts the
// requests it answers and their body bytes per kind of endpoint (Stats),
// so a report can say where the bytes go.
package fakejm

import (
	"errors"
	"fmt"
	"slices"

	"github.com/skewscope/skewscope/assign"
)

// FlinkVersion is the version the fake reports in /overview.
const FlinkVersion = "2.3.0"

// DefaultTopics are the topic names a source reads when Config.Topics is
// empty: the recorded job's, one of them with a dot that Flink's metric ids
// turn into an underscore.
var DefaultTopics = []string{"orders", "payments.v1"}

// DefaultCheckpointEvery is Config.CheckpointEvery when it is 0: at the
// collector's default 10 s poll interval, a checkpoint a minute.
const DefaultCheckpointEvery = 6

// Config shapes the fake cluster.
type Config struct {
	// Jobs is the number of running jobs (≥ 1).
	Jobs int
	// Finished is the number of finished jobs /jobs/overview lists after
	// the running ones, as a session cluster keeps them until its job
	// store expires them: FINISHED, CANCELED and FAILED in turn, each
	// ended a minute before the one before it. Only the list has them:
	// anything asked about one is a 404 (KindNotFound).
	Finished int
	// Parallelism is the parallelism of every vertex (1..32768).
	Parallelism int
	// Partitions is the number of partitions each job's source reads,
	// spread over Topics whose Partitions are 0 as evenly as possible (the
	// first topics take one more when they do not divide evenly). With
	// every topic's count given it may be 0; otherwise it must equal
	// their sum.
	Partitions int
	// Topics are the topics every source reads, with their partition
	// counts or 0 for a share of Partitions (all or none must be 0);
	// empty means DefaultTopics.
	Topics []assign.Topic
	// MaxParallelism is every vertex's max parallelism (the number of key
	// groups); 0 means Flink's default for Parallelism.
	MaxParallelism int
	// CheckpointEvery is how many /jobs/:id/checkpoints requests of one job
	// see the same latest completed checkpoint before the next completes;
	// 0 means DefaultCheckpointEvery.
	CheckpointEvery int
	// EventTime gives the jobs a bounded-out-of-orderness watermark
	// strategy (eventtime.go): every watermark gauge Flink registers is
	// listed and reports event time, and each source reader that has
	// emitted a watermark lists its watermarkLag. Without it the lists
	// hold no event-time gauge at all, so a collector reads none: the
	// baseline that cmd/jmload measures event time's cost against (a real
	// Flink lists them for every job, at Long.MIN_VALUE without a
	// strategy).
	EventTime bool
}

// withDefaults fills in the zero fields and checks the result.
func (c Config) withDefaults() (Config, error) {
	if len(c.Topics) == 0 {
		for _, t := range DefaultTopics {
			c.Topics = append(c.Topics, assign.Topic{Name: t})
		}
	}
	c.Topics = slices.Clone(c.Topics)
	if c.CheckpointEvery == 0 {
		c.CheckpointEvery = DefaultCheckpointEvery
	}
	if c.MaxParallelism == 0 && c.Parallelism > 0 {
		if mp, err := assign.DefaultMaxParallelism(c.Parallelism); err == nil {
			c.MaxParallelism = mp
		}
	}
	// Each problem names its Config field, as flink.Config.Validate's do.
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Jobs < 1 {
		add("Jobs: %d, want at least 1", c.Jobs)
	}
	if err := assign.CheckMaxParallelism(c.MaxParallelism, c.Parallelism); err != nil {
		add("Parallelism %d, MaxParallelism %d: %w", c.Parallelism, c.MaxParallelism, err)
	}
	if c.Finished < 0 {
		add("Finished: %d, want at least 0", c.Finished)
	}
	if c.CheckpointEvery < 1 {
		add("CheckpointEvery: %d, want at least 1", c.CheckpointEvery)
	}
	given, sum := 0, 0
	seen := map[string]bool{}
	for _, t := range c.Topics {
		if t.Name == "" || seen[MetricName(t.Name)] {
			add("Topics: %q is empty or its metric name is taken", t.Name)
		}
		seen[MetricName(t.Name)] = true
		if t.Partitions < 0 || t.Partitions > assign.MaxPartitions {
			add("Topics: %q has %d partitions", t.Name, t.Partitions)
		}
		if t.Partitions != 0 {
			given++
			sum += t.Partitions
		}
	}
	switch {
	case given == len(c.Topics) && c.Partitions != 0 && c.Partitions != sum:
		add("Partitions: %d, but the topics have %d", c.Partitions, sum)
	case given == len(c.Topics):
		c.Partitions = sum
	case given > 0:
		add("Topics: give every topic's partition count or none")
	case c.Partitions < len(c.Topics) || c.Partitions > assign.MaxPartitions:
		add("Partitions: %d, want at least one per topic (%d)", c.Partitions, len(c.Topics))
	default:
		for i := range c.Topics {
			c.Topics[i].Partitions = c.Partitions / len(c.Topics)
			if i < c.Partitions%len(c.Topics) {
				c.Topics[i].Partitions++
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return c, fmt.Errorf("fakejm: %w", err)
	}
	return c, nil
}

// synthetic is the Cluster of a Config: its jobs and the answers they
// share, encoded once.
type synthetic struct {
	cfg    Config
	layout *layout
	jobs   map[string]*job

	overview     *Overview
	jobsOverview *JobsOverview
}

// New builds the jobs of cfg and serves them.
func New(cfg Config) (*Handler, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	l, err := newLayout(cfg)
	if err != nil {
		return nil, err
	}
	c := &synthetic{cfg: cfg, layout: l, jobs: make(map[string]*job, cfg.Jobs)}
	order := make([]*job, cfg.Jobs)
	for i := range cfg.Jobs {
		order[i] = l.newJob(i)
		c.jobs[order[i].id] = order[i]
	}
	c.overview = freeze(l.overview())
	c.jobsOverview = freeze(l.jobsOverview(order))
	h := NewHandler(c)
	h.cfg = cfg
	return h, nil
}

// Config returns the configuration of a Handler made by New, defaults
// applied; the zero Config for any other Cluster.
func (h *Handler) Config() Config { return h.cfg }

func (c *synthetic) Overview() *Overview               { return c.overview }
func (c *synthetic) JobsOverview() *JobsOverview       { return c.jobsOverview }
func (c *synthetic) DashboardConfig() *DashboardConfig { return nil }
func (c *synthetic) TaskManagers() *TaskManagers       { return nil }

func (c *synthetic) Job(id string) Job {
	if j := c.jobs[id]; j != nil {
		return j
	}
	return nil
}
