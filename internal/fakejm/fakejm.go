// Package fakejm is a fake Flink JobManager REST endpoint that scales to
// hundreds of jobs, for measuring what skewscope's Flink collector costs
// per poll (cmd/jmload, the benchmarks of this package).
//
// Handler serves Config.Jobs identical streaming jobs, each of three
// vertices at one parallelism:
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
// collectors/testdata/flink/2.3.0, compact as Flink sends them, and the
// vertex metric id lists hold every id a real Flink 2.3.0 lists for these
// operators: per subtask the task, Netty shuffle, operator and Kafka
// client metrics, and per assigned partition the source reader's two
// offset gauges and the split's seven watermark gauges (see
// metricnames.go). So the lists are as large as a real JobManager's,
// which is what the collector's cost depends on. Like Flink's, the lists
// are in no particular order, and a metric value request answers the
// requested ids it knows, in the requested order, silently dropping the
// others; a request line over 4096 bytes is refused as Netty refuses it.
//
// Values are plausible and cheap: per-subtask busy, idle and backpressured
// times that add up to 1000 ms/s, record rates, accumulated times, and
// Kafka offsets that grow with every value request of the vertex. A new
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
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/skewscope/skewscope/assign"
)

// FlinkVersion is the version the fake reports in /overview.
const FlinkVersion = "2.3.0"

// maxRequestLine is Netty's HttpServerCodec default initial line limit,
// which Flink's REST server keeps.
const maxRequestLine = 4096

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

// Handler is the fake JobManager's REST API. It is safe for concurrent use.
type Handler struct {
	cfg    Config
	mux    *http.ServeMux
	layout *layout
	jobs   map[string]*job
	stats  counters

	// Bodies of the cluster-wide endpoints.
	overview, jobsOverview []byte
}

// New builds the jobs of cfg and encodes their constant answers.
func New(cfg Config) (*Handler, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	l, err := newLayout(cfg)
	if err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg, layout: l, jobs: make(map[string]*job, cfg.Jobs)}
	order := make([]*job, cfg.Jobs)
	for i := range cfg.Jobs {
		order[i] = l.newJob(i)
		h.jobs[order[i].id] = order[i]
	}
	if h.overview, err = l.overviewBody(); err != nil {
		return nil, err
	}
	if h.jobsOverview, err = l.jobsOverviewBody(order); err != nil {
		return nil, err
	}
	h.routes()
	return h, nil
}

// Config returns the configuration, defaults applied.
func (h *Handler) Config() Config { return h.cfg }

// routes lists every URL the fake answers.
func (h *Handler) routes() {
	m := http.NewServeMux()
	m.Handle("GET /overview", h.serve(KindOverview, func(*http.Request) (int, []byte) { return http.StatusOK, h.overview }))
	m.Handle("GET /jobs/overview", h.serve(KindJobsOverview, func(*http.Request) (int, []byte) { return http.StatusOK, h.jobsOverview }))
	m.Handle("GET /jobs/{jid}", h.serveJob(KindJob, h.serveJobDetails))
	m.Handle("GET /jobs/{jid}/plan", h.serveJob(KindJob, func(j *job, _ *http.Request) (int, []byte) { return http.StatusOK, j.plan }))
	m.Handle("GET /jobs/{jid}/metrics", h.serveMetrics(h.serveJobMetrics))
	m.Handle("GET /jobs/{jid}/checkpoints", h.serveJob(KindCheckpoints, h.serveCheckpoints))
	m.Handle("GET /jobs/{jid}/checkpoints/details/{cp}", h.serveJob(KindCheckpoints, h.serveCheckpointDetails))
	m.Handle("GET /jobs/{jid}/checkpoints/details/{cp}/subtasks/{vid}", h.serveVertex(KindCheckpoints, h.serveCheckpointSubtasks))
	m.Handle("GET /jobs/{jid}/vertices/{vid}", h.serveVertex(KindVertex, func(v *vertex, _ *http.Request) (int, []byte) { return http.StatusOK, v.details }))
	m.Handle("GET /jobs/{jid}/vertices/{vid}/backpressure", h.serveVertex(KindBackpressure, func(v *vertex, _ *http.Request) (int, []byte) { return http.StatusOK, v.kind.backpressure }))
	m.Handle("GET /jobs/{jid}/vertices/{vid}/metrics", h.serveMetrics(h.serveVertexMetrics))
	m.Handle("GET /jobs/{jid}/vertices/{vid}/subtasks/{subtask}/metrics", h.serveMetrics(h.serveSubtaskMetrics))
	m.Handle("/", h.serve(KindNotFound, func(r *http.Request) (int, []byte) { return notFound("Not found: " + r.URL.Path) }))
	h.mux = m
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if len(r.Method)+1+len(r.RequestURI)+1+len(r.Proto) > maxRequestLine {
		h.write(w, r, KindRejected, http.StatusRequestEntityTooLarge, errorBody("An HTTP line is larger than 4096 bytes."))
		return
	}
	h.mux.ServeHTTP(w, r)
}

// serve adapts an answer function to a handler that writes and counts the
// answer; a 404 answer counts as KindNotFound, whatever the route.
func (h *Handler) serve(kind Kind, f func(*http.Request) (int, []byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status, body := f(r)
		h.write(w, r, kind, status, body)
	})
}

func (h *Handler) write(w http.ResponseWriter, r *http.Request, kind Kind, status int, body []byte) {
	if status == http.StatusNotFound {
		kind = KindNotFound
	}
	hd := w.Header()
	hd["Content-Type"] = []string{"application/json; charset=UTF-8"}
	hd["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
	h.stats.add(kind, len(body), r)
}

// serveJob resolves {jid}.
func (h *Handler) serveJob(kind Kind, f func(*job, *http.Request) (int, []byte)) http.Handler {
	return h.serve(kind, func(r *http.Request) (int, []byte) {
		j := h.jobs[r.PathValue("jid")]
		if j == nil {
			return notFound("Job " + r.PathValue("jid") + " not found")
		}
		return f(j, r)
	})
}

// serveVertex resolves {jid} and {vid}.
func (h *Handler) serveVertex(kind Kind, f func(*vertex, *http.Request) (int, []byte)) http.Handler {
	return h.serveJob(kind, func(j *job, r *http.Request) (int, []byte) {
		v := j.vertex(r.PathValue("vid"))
		if v == nil {
			return notFound("Vertex " + r.PathValue("vid") + " not found in job " + j.id)
		}
		return f(v, r)
	})
}

// serveMetrics serves a metric endpoint: the id list without get=
// (KindMetricList), values with it (KindMetricValues).
func (h *Handler) serveMetrics(f func(r *http.Request, get []string) (int, []byte)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		get := getList(r)
		kind := KindMetricList
		if get != nil {
			kind = KindMetricValues
		}
		status, body := f(r, get)
		h.write(w, r, kind, status, body)
	})
}

// getList returns the ids of the get= parameter, nil without one.
func getList(r *http.Request) []string {
	vals, ok := r.URL.Query()["get"]
	if !ok {
		return nil
	}
	ids := []string{}
	for _, v := range vals {
		for id := range strings.SplitSeq(v, ",") {
			if id != "" {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

func (h *Handler) serveJobDetails(j *job, _ *http.Request) (int, []byte) {
	return http.StatusOK, j.details
}

func (h *Handler) serveJobMetrics(r *http.Request, get []string) (int, []byte) {
	j := h.jobs[r.PathValue("jid")]
	if j == nil {
		return notFound("Job " + r.PathValue("jid") + " not found")
	}
	if get == nil {
		return http.StatusOK, h.layout.jobMetricList
	}
	return http.StatusOK, j.metricValues(get)
}

func (h *Handler) serveVertexMetrics(r *http.Request, get []string) (int, []byte) {
	v, status, body := h.vertexOf(r)
	if v == nil {
		return status, body
	}
	if get == nil {
		return http.StatusOK, v.kind.idList
	}
	return http.StatusOK, v.metricValues(get, -1)
}

func (h *Handler) serveSubtaskMetrics(r *http.Request, get []string) (int, []byte) {
	v, status, body := h.vertexOf(r)
	if v == nil {
		return status, body
	}
	s := r.PathValue("subtask")
	i, err := strconv.Atoi(s)
	if err != nil || i < 0 || i >= h.cfg.Parallelism || strconv.Itoa(i) != s {
		return notFound("Subtask " + s + " not found")
	}
	if get == nil {
		return http.StatusOK, v.kind.subtaskIDList(i)
	}
	return http.StatusOK, v.metricValues(get, i)
}

// vertexOf resolves {jid} and {vid}, or returns the 404 answer.
func (h *Handler) vertexOf(r *http.Request) (*vertex, int, []byte) {
	j := h.jobs[r.PathValue("jid")]
	if j == nil {
		s, b := notFound("Job " + r.PathValue("jid") + " not found")
		return nil, s, b
	}
	v := j.vertex(r.PathValue("vid"))
	if v == nil {
		s, b := notFound("Vertex " + r.PathValue("vid") + " not found in job " + j.id)
		return nil, s, b
	}
	return v, 0, nil
}

func (h *Handler) serveCheckpoints(j *job, _ *http.Request) (int, []byte) {
	return http.StatusOK, j.checkpoints()
}

func (h *Handler) serveCheckpointDetails(j *job, r *http.Request) (int, []byte) {
	cp, ok := j.retained(r.PathValue("cp"))
	if !ok {
		return notFound("Could not find checkpointing statistics for checkpoint " + r.PathValue("cp") + ".")
	}
	return http.StatusOK, j.checkpointDetails(cp)
}

func (h *Handler) serveCheckpointSubtasks(v *vertex, r *http.Request) (int, []byte) {
	cp, ok := v.job.retained(r.PathValue("cp"))
	if !ok {
		return notFound("Could not find checkpointing statistics for checkpoint " + r.PathValue("cp") + ".")
	}
	return http.StatusOK, v.checkpointSubtasks(cp)
}

// notFound is Flink's 404 answer.
func notFound(msg string) (int, []byte) { return http.StatusNotFound, errorBody(msg) }

func errorBody(msg string) []byte {
	b := append([]byte(`{"errors":[`), appendJSONString(nil, msg)...)
	return append(b, "]}"...)
}

// Stats returns the counts since New or the last Reset.
func (h *Handler) Stats() Stats { return h.stats.snapshot() }

// Reset zeroes the counts.
func (h *Handler) Reset() { h.stats.reset() }

var _ http.Handler = (*Handler)(nil)
