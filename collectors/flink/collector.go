package flink

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skewscope/skewscope/internal/polllog"
)

// Task-scope load metrics read for every subtask ("<i>.<name>" on the vertex
// endpoint). The *TimeMsPerSecond values are 0–1000 and become 0–1 ratios.
const (
	metricBusy          = "busyTimeMsPerSecond"
	metricBackPressured = "backPressuredTimeMsPerSecond"
	metricIdle          = "idleTimeMsPerSecond"
	metricRecordsIn     = "numRecordsInPerSecond"
	metricRecordsOut    = "numRecordsOutPerSecond"
	// The accumulated times add up to the time since the attempt started
	// running (TaskIOMetricGroup); see restarts.go.
	metricAccBusy          = "accumulateBusyTimeMs"
	metricAccIdle          = "accumulateIdleTimeMs"
	metricAccBackPressured = "accumulateBackPressuredTimeMs"
	// metricNumRestarts is the job-scope restart count.
	metricNumRestarts = "numRestarts"
)

// loadMetrics are the load metrics read for every subtask, in the order
// readMetrics takes them (metricPlan.load).
var loadMetrics = [...]string{metricBusy, metricBackPressured, metricIdle, metricRecordsIn, metricRecordsOut}

// Collector polls one Flink REST endpoint and publishes a Snapshot after
// every poll to the function set by OnSnapshot; polls never overlap.
//
// One poll reads /overview and /jobs/overview, then for every running job
// that Config.Jobs selects: the job (vertices and plan), its checkpoints and
// numRestarts, and per vertex the subtasks, the load and Kafka offset metric
// values (a source's metric-id list too, only when it can have changed:
// idcache.go; its committedOffset ids likewise: committed.go), the backpressure level (from the metrics when they have it)
// and, when the latest completed checkpoint changed, the per-subtask
// checkpoint figures (state sizes, duration, alignment, start delay); and,
// when numRestarts changed, the job's exception history (failures.go). It
// keeps
// to a request budget (MaxInFlight, MaxRequestsPerSecond) and backs off
// while the endpoint fails or is slow (budget.go).
//
// Across polls it follows each source vertex's subtask attempts and Kafka
// offset entries, so that the entries the JobManager keeps from before a
// restart under the same job id do not name partition owners
// (KafkaPartitionState.Evidence, KafkaSourceObservation.Owners).
//
// Failures are partial: a job or vertex that cannot be read keeps its
// values from the previous snapshot, marked stale, with its Err set.
type Collector struct {
	cfg    Config
	client *Client
	log    *slog.Logger
	sem    chan struct{}
	now    func() time.Time
	// backoff is the state after the last published poll (budget.go).
	backoff Backoff

	latest atomic.Pointer[Snapshot]
	// notify, when set, receives every published snapshot.
	notify atomic.Pointer[func(*Snapshot)]
	pollMu sync.Mutex // one poll at a time

	stateMu sync.Mutex
	states  map[stateKey]*stateEntry
	// kafka follows source vertices across polls; an entry is used by one
	// vertex poll at a time (polls never overlap).
	kafka map[stateKey]*kafkaTracker
	// ids holds the source vertices' metric-id lists (idcache.go).
	ids map[stateKey]*idEntry
	// details holds when each vertex's subtask details were last read.
	details map[stateKey]time.Time
	// committed holds the source vertices' committedOffset values as last
	// read (committed.go).
	committed map[stateKey]*committedEntry
	// plans holds each vertex's metricPlan, made again when its ids, its
	// parallelism or its being a source change.
	plans map[stateKey]*planEntry

	closeCtx context.Context
	close    context.CancelFunc
}

// NewCollector validates cfg, applies its defaults and builds the client.
// A nil logger discards logs.
func NewCollector(cfg Config, logger *slog.Logger) (*Collector, error) {
	return newCollector(cfg, logger)
}

func newCollector(cfg Config, logger *slog.Logger, opts ...Option) (*Collector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("flink endpoint %q: %w", cfg.Name, err)
	}
	cfg = cfg.WithDefaults()
	cl, err := cfg.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("endpoint", cfg.Name)
	if cfg.PollInterval < MetricFreshness {
		logger.Info("poll interval is below Flink's metric refresh interval; metric values will repeat",
			"poll_interval", cfg.PollInterval, "metric_refresh", MetricFreshness)
	}
	cl.pace = newPacer(cfg.MaxRequestsPerSecond, cfg.MaxInFlight)
	ctx, cancel := context.WithCancel(context.Background())
	return &Collector{
		cfg: cfg, client: cl, log: logger,
		sem: make(chan struct{}, cfg.MaxInFlight),

		now:      time.Now,
		states:   map[stateKey]*stateEntry{},
		kafka:    map[stateKey]*kafkaTracker{},
		ids:      map[stateKey]*idEntry{},
		details:  map[stateKey]time.Time{},
		closeCtx: ctx, close: cancel,
		committed: map[stateKey]*committedEntry{},
		plans:     map[stateKey]*planEntry{},
	}, nil
}

// URL returns the endpoint's base URL as snapshots carry it (no
// credentials).
func (c *Collector) URL() string { return c.client.base.Redacted() }

// Close stops Run, cancels a poll in progress and releases idle
// connections. It is safe to call more than once.
func (c *Collector) Close() {
	c.close()
	if t, ok := c.client.hc.Transport.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
}

// Run polls immediately, then PollInterval after the end of each poll,
// until ctx is done or Close is called. It returns promptly, cancelling a
// poll in progress.
func (c *Collector) Run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.closeCtx.Done():
			return
		case <-t.C:
		}
		t.Reset(c.PollOnce(ctx).Backoff.Pause)
	}
}

// PollOnce polls the endpoint once, bounded by pollTimeout, publishes
// the snapshot (unless ctx was cancelled or the collector closed meanwhile:
// a cut-short poll is not news) and returns it. Concurrent calls run one
// after the other.
func (c *Collector) PollOnce(ctx context.Context) *Snapshot {
	c.pollMu.Lock()
	defer c.pollMu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, c.pollTimeout())
	defer cancel()
	stop := context.AfterFunc(c.closeCtx, cancel)
	defer stop()

	before := c.client.stats.cost()
	s := c.pollRecovering(ctx, c.latest.Load())
	s.Cost = c.client.stats.cost().sub(before)
	s.MaxInFlight, s.MaxRequestsPerSecond = c.cfg.MaxInFlight, c.cfg.MaxRequestsPerSecond
	s.MaxJobs = c.cfg.MaxJobs
	// Running out of RequestTimeout is a result worth publishing (stale
	// values, errors); cancellation by the caller or Close is not.
	if errors.Is(ctx.Err(), context.Canceled) {
		s.Backoff = Backoff{Pause: c.cfg.PollInterval}
		return s
	}
	c.backoff = nextBackoff(c.backoff, pollHealth(s, errors.Is(ctx.Err(), context.DeadlineExceeded)), c.cfg.PollInterval)
	s.Backoff = c.backoff
	if c.backoff.Polls > 0 {
		c.log.Info("flink endpoint "+c.backoff.Reason+"; polling less often", "bad_polls", c.backoff.Polls, "pause", c.backoff.Pause)
	}
	c.latest.Store(s)
	if fn := c.notify.Load(); fn != nil {
		c.publish(*fn, s)
	}
	return s
}

// pollTimeout bounds one poll: RequestTimeout, plus the time that the
// last poll's number of requests takes at MaxRequestsPerSecond, so that
// keeping to the request rate does not cut the polls of a JobManager with
// many jobs short.
func (c *Collector) pollTimeout() time.Duration {
	d := c.cfg.RequestTimeout
	if prev := c.latest.Load(); prev != nil && c.client.pace != nil {
		d += time.Duration(float64(prev.Cost.Requests) / c.cfg.MaxRequestsPerSecond * float64(time.Second))
	}
	return d
}

// pollRecovering is poll, with a panic outside the job and vertex reads
// (which recover on their own) turned into a failed poll: the last jobs
// are kept, stale, as when the job list cannot be read.
func (c *Collector) pollRecovering(ctx context.Context, prev *Snapshot) (s *Snapshot) {
	at := c.now()
	defer func() {
		if r := recover(); r != nil {
			s = &Snapshot{Endpoint: c.cfg.Name, URL: c.client.base.Redacted(), CollectedAt: at, Err: recovered(c.log, "poll", r)}
			if prev != nil {
				s.FlinkVersion, s.DroppedJobs = prev.FlinkVersion, prev.DroppedJobs
				s.Jobs = make([]JobSnapshot, len(prev.Jobs))
				for i, j := range prev.Jobs {
					s.Jobs[i] = staleJob(j, at)
				}
			}
			s.PollDuration = c.now().Sub(at)
		}
	}()
	return c.poll(ctx, prev)
}

// publish hands s to fn (the store update), recovering a panic in it so
// that polling goes on.
func (c *Collector) publish(fn func(*Snapshot), s *Snapshot) {
	defer func() {
		if r := recover(); r != nil {
			recovered(c.log, "snapshot update", r)
		}
	}()
	fn(s)
}

// OnSnapshot sets a function that receives every snapshot the collector
// publishes, on the polling goroutine. It must not modify the snapshot.
func (c *Collector) OnSnapshot(fn func(*Snapshot)) { c.notify.Store(&fn) }

func (c *Collector) poll(ctx context.Context, prev *Snapshot) *Snapshot {
	at := c.now()
	pl := polllog.New(c.log.Handler())
	defer pl.Flush(context.WithoutCancel(ctx))
	log := pl.Logger()
	s := &Snapshot{Endpoint: c.cfg.Name, URL: c.client.base.Redacted(), CollectedAt: at}
	if prev != nil {
		s.FlinkVersion = prev.FlinkVersion
	}

	var (
		wg      sync.WaitGroup
		ov      *Overview
		ovErr   error
		jobs    []JobOverview
		jobsErr error
	)
	wg.Go(func() { ov, ovErr = call(ctx, c, c.client.Overview) })
	wg.Go(func() { jobs, jobsErr = call(ctx, c, c.client.JobsOverview) })
	wg.Wait()

	if ovErr != nil {
		log.Warn("flink overview failed; keeping the last known version", "error", ovErr)
	} else if ov.FlinkVersion != "" {
		s.FlinkVersion = ov.FlinkVersion
	}
	if jobsErr != nil {
		s.Err = jobsErr
		log.Warn("flink job list failed; keeping the last jobs, stale", "error", jobsErr)
		if prev != nil {
			s.Jobs = make([]JobSnapshot, len(prev.Jobs))
			for i, j := range prev.Jobs {
				s.Jobs[i] = staleJob(j, at)
			}
			s.DroppedJobs = prev.DroppedJobs
		}
		s.PollDuration = c.now().Sub(at)
		return s
	}

	prevJobs := map[string]*JobSnapshot{}
	if prev != nil {
		for i := range prev.Jobs {
			prevJobs[prev.Jobs[i].ID] = &prev.Jobs[i]
		}
	}
	var selected []JobOverview
	listed := make(map[string]bool, len(prevJobs))
	for _, j := range jobs {
		if prevJobs[j.ID] != nil {
			listed[j.ID] = true
		}
		if c.selected(j) {
			selected = append(selected, j)
		}
	}
	jobs = nil // the whole list of a session cluster can be large
	selected, s.DroppedJobs = limitJobs(selected, c.cfg.MaxJobs)
	if s.DroppedJobs > 0 {
		log.Debug("flink job list longer than maxJobs; leaving out the oldest finished jobs", "dropped", s.DroppedJobs, "max_jobs", c.cfg.MaxJobs)
	}
	s.Jobs = make([]JobSnapshot, len(selected))
	running := map[string]bool{}
	for _, j := range selected {
		if j.State.Running() {
			running[j.Name] = true
		}
	}
	endedAsks := 0
	for i, j := range selected {
		base := JobSnapshot{
			ID: j.ID, Name: j.Name, State: j.State, StartTime: msTime(j.StartTime),
			NumRestarts: -1, Freshness: Freshness{UpdatedAt: at},
		}
		if !j.State.Running() {
			carried, final := carryEnded(base, prevJobs[j.ID])
			s.Jobs[i] = carried
			if !final && running[j.Name] && endedAsks < MaxEndedDetailsPerPoll {
				endedAsks++
				wg.Go(func() {
					defer func() {
						if r := recover(); r != nil {
							recovered(log.With("job_id", j.ID), "ended job", r)
							s.Jobs[i] = base
						}
					}()
					s.Jobs[i] = c.endedJob(ctx, log, base, at)
				})
			}
			continue
		}
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					s.Jobs[i] = brokenJob(base, prevJobs[j.ID], recovered(log.With("job_id", j.ID), "job", r), at)
				}
			}()
			s.Jobs[i] = c.collectJob(ctx, log, base, prevJobs[j.ID], at)
		})
	}
	wg.Wait()
	s.Jobs = append(s.Jobs, unlistedJobs(prev, listed, at)...)
	slices.SortStableFunc(s.Jobs, func(a, b JobSnapshot) int {
		ra, rb := a.State.Running(), b.State.Running()
		if ra != rb {
			if ra {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
	})
	c.pruneStates(s.Jobs)
	c.client.metricURLs.sweep()
	s.PollDuration = c.now().Sub(at)
	c.log.Debug("flink poll done", "jobs", len(s.Jobs), "duration", s.PollDuration)
	return s
}

// MaxUnlistedPolls is how many consecutive job lists may leave out a job
// of the previous snapshot before it goes: a JobManager's list can miss a
// job for a poll (while it is being recovered, or behind a load balancer
// over JobManagers that disagree for a moment), and a job that disappears
// and comes back would otherwise flicker on every page. Until then it is
// kept with its last values, stale, its JobSnapshot.Unlisted counting the
// lists that missed it.
const MaxUnlistedPolls = 2

// unlistedJobs returns the jobs of prev that the job list left out (not
// in listed), carried over stale, while MaxUnlistedPolls allows.
func unlistedJobs(prev *Snapshot, listed map[string]bool, at time.Time) []JobSnapshot {
	if prev == nil {
		return nil
	}
	var out []JobSnapshot
	for _, j := range prev.Jobs {
		if listed[j.ID] || j.Unlisted >= MaxUnlistedPolls {
			continue
		}
		carried := staleJob(j, at)
		carried.Unlisted++
		out = append(out, carried)
	}
	return out
}

// selected reports whether Config.Jobs (names or ids) selects the job.
func (c *Collector) selected(j JobOverview) bool {
	if len(c.cfg.Jobs) == 0 {
		return true
	}
	return slices.Contains(c.cfg.Jobs, j.ID) || slices.Contains(c.cfg.Jobs, j.Name)
}

// call runs one client call while holding one of the MaxInFlight slots; a
// call's requests (a batched VertexMetrics makes several) go one after
// another, each at the pace of MaxRequestsPerSecond (Client.pace).
func call[T any](ctx context.Context, c *Collector, f func(context.Context) (T, error)) (T, error) {
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
	defer func() { <-c.sem }()
	return f(ctx)
}

// jobDetails reads /jobs/:id and its plan: the answer embeds the plan;
// older or trimmed answers fall back to /jobs/:id/plan.
func (c *Collector) jobDetails(ctx context.Context, id string) (*Job, *Plan, error) {
	job, err := call(ctx, c, func(ctx context.Context) (*Job, error) { return c.client.Job(ctx, id) })
	if err != nil {
		return nil, nil, err
	}
	plan := job.Plan
	if plan == nil || len(plan.Nodes) == 0 {
		if plan, err = call(ctx, c, func(ctx context.Context) (*Plan, error) { return c.client.JobPlan(ctx, id) }); err != nil {
			return nil, nil, err
		}
	}
	return job, plan, nil
}

func (c *Collector) collectJob(ctx context.Context, log *slog.Logger, js JobSnapshot, prev *JobSnapshot, at time.Time) JobSnapshot {
	log = log.With("job_id", js.ID)
	job, plan, err := c.jobDetails(ctx, js.ID)
	if err != nil {
		log.Warn("flink job details failed; keeping the last values, stale", "error", err)
		return brokenJob(js, prev, err, at)
	}

	var (
		errs        []error
		cps         *Checkpoints
		restarts    []Metric
		wg          sync.WaitGroup
		restartsErr error
	)
	wg.Go(func() {
		restarts, restartsErr = call(ctx, c, func(ctx context.Context) ([]Metric, error) {
			return c.client.JobMetrics(ctx, js.ID, []string{metricNumRestarts})
		})
	})
	cps, err = call(ctx, c, func(ctx context.Context) (*Checkpoints, error) { return c.client.Checkpoints(ctx, js.ID) })
	wg.Wait()
	if restartsErr != nil {
		log.Warn("flink numRestarts failed", "error", restartsErr)
		errs = append(errs, restartsErr)
	} else {
		js.NumRestarts = numRestarts(restarts, log)
	}
	if err := c.failures(ctx, &js, prev); err != nil {
		log.Warn("flink exceptions failed; keeping the last ones", "error", err)
		errs = append(errs, err)
	}
	if err != nil {
		log.Warn("flink checkpoints failed", "error", err)
		errs = append(errs, err)
		if prev != nil {
			js.LatestCheckpoint, js.Restored = prev.LatestCheckpoint, prev.Restored
			js.Freshness = stale(prev.Freshness, at)
		} else {
			js.Freshness = Freshness{Stale: true}
		}
	} else {
		js.LatestCheckpoint = cps.Latest.Completed
		if r := cps.Latest.Restored; r != nil {
			if r.ID < 0 || r.RestoreTimestamp < 0 {
				log.Warn("flink reported an impossible restore; ignoring it", "checkpoint_id", r.ID, "restore_timestamp", r.RestoreTimestamp)
			} else {
				js.Restored = &RestoreInfo{CheckpointID: r.ID, IsSavepoint: r.IsSavepoint, ExternalPath: r.ExternalPath, At: msTime(r.RestoreTimestamp)}
			}
		}
	}
	var cpID int64
	cpKnown := err == nil
	if js.LatestCheckpoint != nil {
		cpID = js.LatestCheckpoint.ID
	}

	sources, keyed := map[string]bool{}, map[string]bool{}
	for _, id := range SourceVertices(plan) {
		sources[id] = true
	}
	for _, id := range KeyedVertices(plan) {
		keyed[id] = true
	}
	prevVertices := map[string]*VertexSnapshot{}
	if prev != nil {
		for i := range prev.Vertices {
			prevVertices[prev.Vertices[i].ID] = &prev.Vertices[i]
		}
	}
	// job.Vertices are in topological order (the plan's nodes are not).
	js.Vertices = make([]VertexSnapshot, len(job.Vertices))
	for i, v := range job.Vertices {
		if err := validateVertex(v); err != nil {
			log.Warn("flink vertex has impossible numbers; not using them", "vertex_id", v.ID, "error", err)
			js.Vertices[i] = brokenVertex(v, sources[v.ID], keyed[v.ID], prevVertices[v.ID], err, at)
			continue
		}
		vs := VertexSnapshot{
			ID: v.ID, Name: v.Name, Parallelism: v.Parallelism, MaxParallelism: v.MaxParallelism,
			Source: sources[v.ID], Keyed: keyed[v.ID],
			Freshness: Freshness{UpdatedAt: at},
			startTime: v.StartTime,
		}
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					err := recovered(log.With("vertex_id", v.ID), "vertex", r)
					js.Vertices[i] = brokenVertex(v, vs.Source, vs.Keyed, prevVertices[v.ID], err, at)
				}
			}()
			reuse := c.reuseDetails(js, prev, v, prevVertices[v.ID], at)
			js.Vertices[i] = c.collectVertex(ctx, log, js.ID, vs, prevVertices[v.ID], cpID, cpKnown, reuse, at)
		})
	}
	wg.Wait()
	inputs, sqlKeys := PlanInputs(plan), SQLKeys(plan)
	for i := range js.Vertices {
		js.Vertices[i].Inputs = inputs[js.Vertices[i].ID]
		js.Vertices[i].SQL = sqlKeys[js.Vertices[i].ID]
	}
	for _, v := range js.Vertices {
		if v.Err != nil {
			errs = append(errs, fmt.Errorf("vertex %s: %w", v.ID, v.Err))
		}
	}
	if len(errs) > 0 {
		js.Err = errors.Join(errs...)
	}
	return js
}

func (c *Collector) collectVertex(ctx context.Context, log *slog.Logger, jobID string, vs VertexSnapshot, prev *VertexSnapshot, cpID int64, cpKnown, reuseDetails bool, at time.Time) VertexSnapshot {
	log = log.With("vertex_id", vs.ID)
	n := vs.Parallelism // validateVertex: 1..MaxParallelism
	vs.Subtasks = make([]SubtaskSnapshot, n)
	for i := range vs.Subtasks {
		vs.Subtasks[i] = SubtaskSnapshot{
			Index: i, BusyRatio: math.NaN(), BackPressuredRatio: math.NaN(), IdleRatio: math.NaN(),
			RecordsInPerSecond: math.NaN(), RecordsOutPerSecond: math.NaN(), StateSize: -1,
			EventTime: NoEventTime(),
		}
	}

	// Required parts: without them the vertex's figures are not current.
	var failed []error
	var det *VertexDetails
	var err error
	if reuseDetails {
		for i := range vs.Subtasks {
			p, sub := &prev.Subtasks[i], &vs.Subtasks[i]
			sub.Status, sub.Endpoint, sub.Attempt, sub.StartTime = p.Status, p.Endpoint, p.Attempt, p.StartTime
		}
	} else {
		det, err = call(ctx, c, func(ctx context.Context) (*VertexDetails, error) { return c.client.VertexDetails(ctx, jobID, vs.ID) })
		if err != nil {
			failed = append(failed, err)
		} else {
			c.stateMu.Lock()
			c.details[stateKey{jobID, vs.ID}] = at
			c.stateMu.Unlock()
		}
	}
	attempts := map[int]subtaskPoll{}
	if det != nil {
		for _, st := range det.Subtasks {
			if err := checkSubtask("vertex details", st.Subtask, n); err != nil {
				failed = append(failed, err)
				break
			}
			{
				sub := &vs.Subtasks[st.Subtask]
				sub.Status, sub.Endpoint = st.Status, st.Endpoint
				sub.Attempt, sub.StartTime = st.Attempt, msTime(st.StartTime)
				attempts[st.Subtask] = subtaskPoll{id: attemptID{st.Attempt, st.StartTime}, runMs: -1}
			}
		}
	}
	// Only a source's metric ids are listed (idcache.go); the other
	// vertices' load metrics have fixed names.
	key := stateKey{jobID, vs.ID}
	var ids []string
	if vs.Source {
		list := func() ([]string, error) {
			return call(ctx, c, func(ctx context.Context) ([]string, error) { return c.client.VertexMetricIDs(ctx, jobID, vs.ID) })
		}
		ids, _, err = c.sourceIDs(list, key, &vs, attempts, det != nil && len(failed) == 0, prev, at)
	}
	var runMs []int64
	var etErr error // an event-time gauge out of range: reported, not fatal
	if err != nil {
		failed = append(failed, err)
	} else {
		var missing bool
		cc := commitContext{attempts: attempts, detailsOK: det != nil && len(failed) == 0, cpID: cpID, cpKnown: cpKnown, prev: prev, at: at}
		if runMs, missing, etErr, err = c.readMetrics(ctx, jobID, &vs, ids, cc); err != nil {
			failed = append(failed, err)
		}
		if missing {
			c.idsMissing(key)
		}
	}
	if len(failed) == 0 && (vs.Source || vs.Kafka != nil) {
		for i, ms := range runMs {
			if a, ok := attempts[i]; ok {
				a.runMs = ms
				attempts[i] = a
			}
		}
		c.trackKafka(jobID, &vs, attempts)
	}

	// Optional parts: a failure is reported, the rest stays current.
	var errs []error
	if etErr != nil {
		errs = append(errs, etErr)
	}
	var bp *Backpressure
	if level, ok := backpressureLevel(vs.Subtasks); ok {
		// Flink computes the level from the metric just read.
		vs.BackpressureLevel = level
	} else {
		bp, err = call(ctx, c, func(ctx context.Context) (*Backpressure, error) { return c.client.Backpressure(ctx, jobID, vs.ID) })
	}
	switch {
	case bp == nil && err == nil:
	case err != nil:
		errs = append(errs, err)
		if prev != nil {
			vs.BackpressureLevel = prev.BackpressureLevel
		}
	case bp.Status == "deprecated":
		// The vertex has no metrics (yet): Flink answers without data.
	default:
		vs.BackpressureLevel = bp.Level
		// Ratios from the backpressure answer where the metrics had none.
		for _, s := range bp.Subtasks {
			if err := checkSubtask("backpressure", s.Subtask, n); err != nil {
				errs = append(errs, err)
				break
			}
			st := &vs.Subtasks[s.Subtask]
			st.BusyRatio = orNaN(st.BusyRatio, s.BusyRatio)
			st.IdleRatio = orNaN(st.IdleRatio, s.IdleRatio)
			st.BackPressuredRatio = orNaN(st.BackPressuredRatio, s.Ratio)
		}
	}
	if (vs.Source || vs.Keyed) && cpID > 0 {
		figs, used, fr, err := c.stateSizes(ctx, jobID, vs.ID, cpID, at)
		if err != nil {
			errs = append(errs, err)
		}
		vs.StateCheckpointID, vs.StateFreshness, vs.StateCheckpointAt = used, fr, figs.ackAt
		for i, st := range figs.subtasks {
			if i < n && st != nil {
				vs.Subtasks[i].StateSize = st.StateSize
				vs.Subtasks[i].Checkpoint = st
			}
		}
	}

	if len(failed) > 0 {
		err := errors.Join(append(failed, errs...)...)
		log.Warn("flink vertex failed; keeping the last values, stale", "error", err)
		if prev != nil && prev.Parallelism == vs.Parallelism {
			out := *prev
			out.Name, out.MaxParallelism, out.Source, out.Keyed = vs.Name, vs.MaxParallelism, vs.Source, vs.Keyed
			out.Err = err
			out.Freshness = stale(prev.Freshness, at)
			return out
		}
		vs.Err = err
		vs.Freshness = Freshness{Stale: true}
		return vs
	}
	if len(errs) > 0 {
		vs.Err = errors.Join(errs...)
		log.Warn("flink vertex partly failed", "error", vs.Err)
	}
	return vs
}

// metricPlan is what readMetrics asks for, from a vertex's metric ids.
type metricPlan struct {
	want []string // every id the vertex reads
	// base is want without committedIDs, which are asked for only when
	// they can have changed (committed.go).
	base         []string
	offsetIDs    []string                   // the Kafka currentOffset ids among want
	committedIDs []string                   // the Kafka committedOffset ids among want
	opIn         []string                   // per subtask, the source operator's records-in id, "" when not listed
	load         [][len(loadMetrics)]string // per subtask, the ids of loadMetrics
	accIDs       [][]string                 // per subtask, the accumulated-time ids listed
	kafka        *KafkaSourceObservation
	// operator is each subtask's source operator ("" when unknown).
	operator []string
}

// planMetrics builds the request of readMetrics from ids (a vertex's id
// list, or the part of it that keptIDs kept: both give the same plan).
func planMetrics(vs *VertexSnapshot, ids []string) metricPlan {
	listed := make(map[string]bool, len(ids))
	for _, id := range ids {
		listed[id] = true
	}
	var kafka *KafkaSourceObservation
	if obs := ParseKafkaSourceMetricIDs(ids); len(obs.States) > 0 {
		kafka = obs
	}
	// The source operator of each subtask: the first of its Kafka states.
	// A subtask that reads no partition has none; every subtask of a
	// vertex runs the same operators, so its event-time gauges (a
	// split-less reader's Long.MIN_VALUE watermark) are asked for under
	// the first operator seen (each id only if the subtask lists it).
	operator := map[int]string{}
	anyOperator := ""
	if vs.Source && kafka != nil {
		for _, st := range kafka.States {
			if _, ok := operator[st.Subtask]; !ok {
				operator[st.Subtask] = st.Operator
			}
			if anyOperator == "" {
				anyOperator = st.Operator
			}
		}
	}
	// The split gauges (Flink 2.1+) say per partition what the reader's
	// lag gauges say per reader: with them, those are not asked for.
	var splits []string
	if kafka != nil {
		splits = splitIDs(kafka, listed)
	}
	var want []string
	opIn := make([]string, len(vs.Subtasks))
	load := make([][len(loadMetrics)]string, len(vs.Subtasks))
	accIDs := make([][]string, len(vs.Subtasks))
	ops := make([]string, len(vs.Subtasks))
	for i := range vs.Subtasks {
		ops[i] = operator[i]
		if ops[i] == "" {
			ops[i] = anyOperator
		}
		want = append(want, eventTimeIDs(vs, i, ops[i], listed, len(splits) > 0)...)
		p := strconv.Itoa(i) + "."
		for k, m := range loadMetrics {
			load[i][k] = p + m
			want = append(want, load[i][k])
		}
		if op, ok := operator[i]; ok {
			if id := p + op + "." + metricRecordsIn; listed[id] {
				opIn[i] = id
				want = append(want, id)
			}
		}
		if vs.Source {
			for _, m := range []string{metricAccBusy, metricAccIdle, metricAccBackPressured} {
				if listed[p+m] {
					accIDs[i] = append(accIDs[i], p+m)
				}
			}
			want = append(want, accIDs[i]...)
		}
	}
	var offsetIDs, committedIDs []string
	if kafka != nil {
		for _, s := range kafka.States {
			if s.CurrentID != "" {
				offsetIDs = append(offsetIDs, s.CurrentID)
			}
			if s.CommittedID != "" {
				committedIDs = append(committedIDs, s.CommittedID)
			}
		}
		want = append(want, offsetIDs...)
		want = append(want, splits...)
	}
	base := slices.Clip(want)
	want = append(base, committedIDs...)
	return metricPlan{want: want, base: base, offsetIDs: offsetIDs, committedIDs: committedIDs, opIn: opIn, load: load, accIDs: accIDs, kafka: kafka, operator: ops}
}

// readMetrics reads the load metrics of every subtask and the Kafka source
// offsets in one batched VertexMetrics call.
//
// Records in and out are the task-scope meters, which is what Flink's Web
// UI shows. For a source vertex up to Flink 1.20 the task's
// numRecordsInPerSecond is 0 (FLINK-33681 fixed it in 2.0), so the source
// operator's own numRecordsInPerSecond (records read from Kafka, counted by
// the FLIP-27 reader) is preferred when the vertex lists it.
//
// For a source vertex it also reads each subtask's accumulated busy, idle
// and backpressured times and returns their sum (−1 where unknown), the
// running time of the attempt the JobManager holds metrics of.
func (c *Collector) readMetrics(ctx context.Context, jobID string, vs *VertexSnapshot, ids []string, cc commitContext) (runMs []int64, missing bool, etErr, err error) {
	key := stateKey{jobID, vs.ID}
	mp := c.metricPlan(key, vs, ids)
	opIn, accIDs, kafka := mp.opIn, mp.accIDs, mp.kafka
	segs := []string{"jobs", jobID, "vertices", vs.ID, "metrics"}
	// The committedOffset ids only when they can have changed; the two
	// id sets keep their URLs apart (metricURLCache).
	kept := c.keptCommitted(key, mp.committedIDs, vs.Parallelism, cc)
	want, set := mp.want, "with committedOffset "
	if kept != nil {
		want, set = mp.base, ""
	}
	vals, err := call(ctx, c, func(ctx context.Context) ([]Metric, error) {
		return c.client.cachedMetricValues(ctx, set, want, segs...)
	})
	if err != nil {
		return nil, false, nil, err
	}
	m := MetricMap(vals)
	// A listed offset id without a value: the JobManager dropped it, so
	// the cached list (idcache.go) is out of date.
	asked := mp.offsetIDs
	if kept == nil {
		asked = append(slices.Clip(asked), mp.committedIDs...)
	} else {
		for _, id := range mp.committedIDs {
			m[id] = kept.values[id]
		}
	}
	if kafka != nil {
		for _, id := range asked {
			if _, ok := m[id]; !ok {
				missing = true
				break
			}
		}
	}
	get := func(id string) float64 {
		// ±Infinity (a gauge divided by zero) is as unknown as "NaN".
		if v, ok := m[id]; ok && !math.IsInf(v.Value, 0) {
			return v.Value // NaN for "NaN"
		}
		return math.NaN()
	}
	ratio := func(id string) float64 {
		v := get(id)
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return math.NaN()
		}
		return min(max(v/1000, 0), 1)
	}
	for i := range vs.Subtasks {
		ld := &mp.load[i]
		st := &vs.Subtasks[i]
		st.BusyRatio = ratio(ld[0])
		st.BackPressuredRatio = ratio(ld[1])
		st.IdleRatio = ratio(ld[2])
		st.RecordsInPerSecond = get(ld[3])
		if opIn[i] != "" {
			if v := get(opIn[i]); !math.IsNaN(v) {
				st.RecordsInPerSecond = v
			}
		}
		st.RecordsOutPerSecond = get(ld[4])
		if err := applyEventTime(st, vs, mp.operator[i], m); err != nil && etErr == nil {
			etErr = err
		}
	}
	var offErr error
	if kafka != nil {
		kafka.applyValues(m)
		committedAt := cc.at
		if kept != nil {
			committedAt = kept.readAt
		} else if len(mp.committedIDs) > 0 {
			c.storeCommitted(key, mp.committedIDs, m, vs.Parallelism, cc)
		}
		for i := range kafka.States {
			if kafka.States[i].CommittedID != "" {
				kafka.States[i].CommittedAt = committedAt
			}
		}
		offErr = checkOffsets(kafka)
		if err := applySplits(kafka, m); err != nil && etErr == nil {
			etErr = err
		}
		vs.Kafka = kafka
	}
	runMs = make([]int64, len(vs.Subtasks))
	for i := range runMs {
		runMs[i] = -1
		for _, id := range accIDs[i] {
			if v := get(id); !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 {
				runMs[i] = max(runMs[i], 0) + int64(v)
			}
		}
	}
	return runMs, missing, etErr, offErr
}

// planEntry is one vertex's metricPlan as planMetrics made it from ids
// for a vertex of n subtasks, source or not. Its kafka is a template that
// is never handed out, only copies of it.
type planEntry struct {
	ids    []string
	n      int
	source bool
	mp     metricPlan
}

// metricPlan returns planMetrics(vs, ids), made again only when the ids
// (a source's thousand-odd, parsed on every poll otherwise), the
// parallelism or vs.Source differ from the last poll's. The plan's id
// lists are shared between polls and not to be changed; its kafka is
// the poll's own.
func (c *Collector) metricPlan(key stateKey, vs *VertexSnapshot, ids []string) metricPlan {
	c.stateMu.Lock()
	e := c.plans[key]
	c.stateMu.Unlock()
	if e == nil || e.n != len(vs.Subtasks) || e.source != vs.Source || !slices.Equal(e.ids, ids) {
		e = &planEntry{ids: slices.Clone(ids), n: len(vs.Subtasks), source: vs.Source, mp: planMetrics(vs, ids)}
		c.stateMu.Lock()
		c.plans[key] = e
		c.stateMu.Unlock()
	}
	mp := e.mp
	mp.kafka = e.mp.kafka.fresh()
	return mp
}

// trackKafka judges the vertex's Kafka entries against the earlier polls
// of the same job and vertex (restarts.go).
func (c *Collector) trackKafka(jobID string, vs *VertexSnapshot, attempts map[int]subtaskPoll) {
	key := stateKey{jobID, vs.ID}
	c.stateMu.Lock()
	t := c.kafka[key]
	if t == nil {
		t = &kafkaTracker{}
		c.kafka[key] = t
	}
	c.stateMu.Unlock()
	obs := vs.Kafka
	if obs == nil {
		obs = &KafkaSourceObservation{} // follow the attempts until entries appear
	}
	t.observe(vs.Parallelism, attempts, obs)
}

// numRestarts reads the job's numRestarts from a job metrics answer: −1
// when absent or not a non-negative integer.
func numRestarts(ms []Metric, log *slog.Logger) int64 {
	m, ok := MetricMap(ms)[metricNumRestarts]
	if !ok {
		return -1
	}
	if v, ok := m.Int64(); ok && v >= 0 {
		return v
	}
	log.Warn("flink numRestarts is not a non-negative integer; ignoring it", "value", m.Raw)
	return -1
}

type stateKey struct{ job, vertex string }

// stateEntry caches one vertex's per-subtask checkpoint figures of one
// checkpoint.
type stateEntry struct {
	checkpointID int64
	figures      checkpointFigures
	at           time.Time // when they were read
	gone         int64     // a newer checkpoint whose details were 404
}

// checkpointFigures is one vertex's part of one checkpoint: each
// subtask's figures by index (nil when it had not acknowledged), and when
// the checkpoint was last acknowledged.
type checkpointFigures struct {
	subtasks []*SubtaskCheckpoint
	ackAt    time.Time
}

// stateSizes returns the per-subtask checkpoint figures of the vertex in
// checkpoint cpID, reading them only when cpID is new. When they cannot be
// read the last good figures are returned, stale; a checkpoint that is no
// longer in Flink's history (404) is not asked for again. Figures out of
// range are dropped (unknown), the error names them.
func (c *Collector) stateSizes(ctx context.Context, jobID, vertexID string, cpID int64, at time.Time) (checkpointFigures, int64, Freshness, error) {
	key := stateKey{jobID, vertexID}
	c.stateMu.Lock()
	e := c.states[key]
	var cached stateEntry
	if e != nil {
		cached = *e
	}
	c.stateMu.Unlock()
	keep := func() (checkpointFigures, int64, Freshness) {
		if e == nil {
			return checkpointFigures{}, 0, Freshness{Stale: true}
		}
		return cached.figures, cached.checkpointID, Freshness{UpdatedAt: cached.at, Stale: true, Age: at.Sub(cached.at)}
	}
	if e != nil && cached.checkpointID == cpID {
		return cached.figures, cpID, Freshness{UpdatedAt: at}, nil
	}
	if e != nil && cached.gone == cpID {
		s, id, f := keep()
		return s, id, f, nil
	}
	t, err := call(ctx, c, func(ctx context.Context) (*CheckpointTask, error) {
		return c.client.CheckpointSubtasks(ctx, jobID, cpID, vertexID)
	})
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.StatusCode == http.StatusNotFound {
			c.stateMu.Lock()
			if e == nil {
				e = &stateEntry{}
				c.states[key] = e
			}
			e.gone = cpID
			c.stateMu.Unlock()
			s, id, f := keep()
			return s, id, f, nil
		}
		s, id, f := keep()
		return s, id, f, err
	}
	figs, bad := checkpointFiguresOf(t)
	c.stateMu.Lock()
	c.states[key] = &stateEntry{checkpointID: cpID, figures: figs, at: at}
	c.stateMu.Unlock()
	return figs, cpID, Freshness{UpdatedAt: at}, bad
}

// checkpointFiguresOf validates a vertex's checkpoint details: the
// figures of each acknowledged subtask by index, and an error naming the
// first figure out of range (dropped, the others kept).
func checkpointFiguresOf(t *CheckpointTask) (checkpointFigures, error) {
	n := 0
	for _, st := range t.Subtasks {
		n = max(n, st.Index+1)
	}
	figs := checkpointFigures{subtasks: make([]*SubtaskCheckpoint, min(n, MaxParallelism))}
	if t.LatestAckTimestamp > 0 {
		figs.ackAt = msTime(t.LatestAckTimestamp)
	}
	var errs []error
	for _, st := range t.Subtasks {
		if st.Index < 0 || st.Index >= len(figs.subtasks) || !st.Completed {
			continue
		}
		if err := checkSubtaskCheckpoint(&st); err != nil {
			errs = append(errs, err)
		}
		figs.subtasks[st.Index] = &st
	}
	return figs, errors.Join(errs...)
}

// pruneStates drops the cached state sizes and Kafka trackers of jobs no
// longer listed, and the metric-id lists of vertices no longer listed as
// sources.
func (c *Collector) pruneStates(jobs []JobSnapshot) {
	live := map[string]bool{}
	for _, j := range jobs {
		live[j.ID] = true
	}
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	for k := range c.states {
		if !live[k.job] {
			delete(c.states, k)
		}
	}
	for k := range c.kafka {
		if !live[k.job] {
			delete(c.kafka, k)
		}
	}
	for k := range c.plans {
		if !live[k.job] {
			delete(c.plans, k)
		}
	}
	sources := map[stateKey]bool{}
	for _, j := range jobs {
		for _, v := range j.Vertices {
			if v.Source {
				sources[stateKey{j.ID, v.ID}] = true
			}
		}
	}
	pruneIDs(c.ids, sources)
	pruneCommitted(c.committed, sources)
	for k := range c.details {
		if !live[k.job] {
			delete(c.details, k)
		}
	}
}

// brokenJob is a job that could not be read: the previous poll's values,
// stale, or none, with err.
func brokenJob(js JobSnapshot, prev *JobSnapshot, err error, at time.Time) JobSnapshot {
	if prev == nil {
		js.Err = err
		js.Freshness = Freshness{Stale: true}
		return js
	}
	j := staleJob(*prev, at)
	j.State, j.Name, j.StartTime = js.State, js.Name, js.StartTime
	j.Err = err
	return j
}

// brokenVertex is a vertex whose numbers failed validation: the previous
// poll's values, stale, or none, never the bad numbers.
func brokenVertex(v Vertex, source, keyed bool, prev *VertexSnapshot, err error, at time.Time) VertexSnapshot {
	err = fmt.Errorf("vertex %q: %w", v.Name, err)
	if prev != nil {
		out := *prev
		out.Err = err
		out.Freshness = stale(prev.Freshness, at)
		return out
	}
	return VertexSnapshot{ID: v.ID, Name: v.Name, Source: source, Keyed: keyed, Err: err, Freshness: Freshness{Stale: true}}
}

// stale marks a value from an earlier poll as not refreshed at at.
func stale(f Freshness, at time.Time) Freshness {
	f.Stale = true
	if !f.UpdatedAt.IsZero() {
		f.Age = at.Sub(f.UpdatedAt)
	}
	return f
}

// staleJob is a job of the previous snapshot carried over, stale.
func staleJob(j JobSnapshot, at time.Time) JobSnapshot {
	j.Freshness = stale(j.Freshness, at)
	vs := make([]VertexSnapshot, len(j.Vertices))
	for i, v := range j.Vertices {
		v.Freshness = stale(v.Freshness, at)
		vs[i] = v
	}
	j.Vertices = vs
	return j
}

// detailsRefresh is how long the subtask details (status, TaskManager,
// attempt) of a vertex that is not a source are used without reading them
// again, while nothing says that they changed (reuseDetails).
const detailsRefresh = time.Minute

// reuseDetails reports whether a vertex's subtask details can be taken
// from the previous poll instead of /jobs/:jobid/vertices/:vertexid. A
// source's are always read: its attempts are the evidence for its Kafka
// owners (restarts.go). For other vertices the details change only when
// subtasks restart or are rescheduled, which numRestarts (every failover
// and restart of the job counts), the restore the job started from, the
// parallelism, the vertex's state and its start-time in /jobs/:jobid all
// show; while each is as before and every subtask was RUNNING, the last
// details stand, up to detailsRefresh old (between half of it and all of
// it per vertex, so that the re-reads of many vertices spread over polls).
func (c *Collector) reuseDetails(js JobSnapshot, prevJob *JobSnapshot, v Vertex, prev *VertexSnapshot, at time.Time) bool {
	if prevJob == nil || prev == nil || prev.Source || prev.Err != nil || prev.Stale || prev.Parallelism != v.Parallelism ||
		len(prev.Subtasks) != v.Parallelism || !v.Status.Running() || js.NumRestarts < 0 || js.NumRestarts != prevJob.NumRestarts ||
		!sameRestore(js.Restored, prevJob.Restored) || prev.startTime != v.StartTime {
		return false
	}
	for _, st := range prev.Subtasks {
		if !st.Status.Running() {
			return false
		}
	}
	c.stateMu.Lock()
	key := stateKey{js.ID, v.ID}
	read, ok := c.details[key]
	c.stateMu.Unlock()
	return ok && at.Sub(read) < spread(key, detailsRefresh)
}

func sameRestore(a, b *RestoreInfo) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// backpressureLevel is the vertex's backpressure level as Flink's
// JobVertexBackPressureHandler (flink-runtime rest/handler/job, 1.13+)
// computes it from the same metric: each subtask's ratio is
// backPressuredTimeMsPerSecond / 1000, "ok" up to 0.10, "low" up to 0.5,
// "high" above; the vertex has the level of its highest ratio. ok is false
// when a subtask's ratio is unknown: the handler would count it as 0, but
// the collector then asks the handler instead of guessing.
func backpressureLevel(subs []SubtaskSnapshot) (level string, ok bool) {
	if len(subs) == 0 {
		return "", false
	}
	hi := 0.0
	for _, s := range subs {
		if math.IsNaN(s.BackPressuredRatio) {
			return "", false
		}
		hi = max(hi, s.BackPressuredRatio)
	}
	switch {
	case hi <= 0.10:
		return "ok", true
	case hi <= 0.5:
		return "low", true
	}
	return "high", true
}

func orNaN(v, fallback float64) float64 {
	if math.IsNaN(v) {
		return fallback
	}
	return v
}

// msTime converts Flink's epoch milliseconds; ≤0 ("not yet") is zero.
func msTime(ms int64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}
