package web

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a-h/templ"
	"github.com/go-chi/chi/v5"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/collectors/kafka/sample"
	"github.com/skewscope/skewscope/internal/quote"
	"github.com/skewscope/skewscope/keysample"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/plan"
	"github.com/skewscope/skewscope/views"
)

// Key samples: a bounded, read-only read of a topic's records whose keys
// are routed exactly as Flink's keyBy routes them, to show which keys make
// which subtask hot, now and at any parallelism.

const (
	// summaryCounters is the heavy-hitter summary's size: keys whose share
	// is above 1/summaryCounters are always in it.
	summaryCounters = 4096
	// shownTopKeys is how many top keys the page lists (the CSV and JSON
	// have summaryCounters at most).
	shownTopKeys = 25
)

// sampleForm is the sampler's input as typed, and parsed.
type sampleForm struct {
	Cluster, Topic                  string
	Partitions, Mode, LastN, Window string
	From, Format, Path, Type        string
	// Table, KeyColumns and Schema are a Flink SQL key's (type sql): the
	// table's CREATE TABLE statement or column list, the key columns and
	// an Avro writer schema.
	Table, KeyColumns, Schema                 string
	Parallelism, Target, MaxParallelism       string
	MaxRecords, MaxMegabytes, MaxSeconds, Job string
	Vertex                                    string

	req  sample.Request
	spec keysample.KeySpec
	// sqlVertex is the SQL key of the keyed vertex the sample was started
	// from (Job, Vertex), as the live store had it then; nil otherwise.
	sqlVertex *live.SQLKeyView
	// registry is the cluster's schema registry, nil when none.
	registry keysample.SchemaSource
	p        int
	target   int
	maxP     int
	Errors   map[string]string
}

func (f *sampleForm) fail(field, format string, args ...any) {
	if f.Errors == nil {
		f.Errors = map[string]string{}
	}
	if _, dup := f.Errors[field]; !dup {
		f.Errors[field] = fmt.Sprintf(format, args...)
	}
}

// parseSampleForm reads a sample request; every bad field gets a message.
//
// registry, when not nil, is the cluster's schema registry, which an
// avro-confluent table without a pasted schema reads.
func parseSampleForm(cluster, topic string, v url.Values, registry keysample.SchemaSource) *sampleForm {
	get := func(k, def string) string {
		if s := strings.TrimSpace(v.Get(k)); s != "" {
			return s
		}
		return def
	}
	f := &sampleForm{
		Cluster: cluster, Topic: topic,
		Partitions: get("partitions", ""), Mode: get("mode", "last"), LastN: get("n", "10000"), Window: get("window", "10"),
		From: get("from", "key"), Format: get("format", "string"), Path: get("path", ""), Type: get("type", "string"),
		Parallelism: get("parallelism", ""), Target: get("target", ""), MaxParallelism: get("maxParallelism", ""),
		MaxRecords: get("maxRecords", "1000000"), MaxMegabytes: get("maxMegabytes", "256"), MaxSeconds: get("maxSeconds", "60"),
		Job: get("job", ""), Vertex: get("vertex", ""),
		Table: v.Get("table"), KeyColumns: get("keyColumns", ""), Schema: v.Get("schema"),
		registry: registry,
	}
	f.req.Topic = topic
	if f.Partitions != "" {
		for _, s := range strings.FieldsFunc(f.Partitions, func(r rune) bool { return r == ',' || r == ' ' }) {
			n, err := strconv.Atoi(s)
			if err != nil || n < 0 || n >= assign.MaxPartitions {
				f.fail("partitions", "%s is not a partition number", quote.Clip(s))
				break
			}
			f.req.Partitions = append(f.req.Partitions, int32(n))
		}
	}
	num := func(field, s string, lo, hi int64) int64 {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < lo || n > hi {
			f.fail(field, "%s: want a whole number in %d..%d", quote.Clip(s), lo, hi)
			return 0
		}
		return n
	}
	switch f.Mode {
	case "last":
		f.req.Mode, f.req.LastN = "last", num("n", f.LastN, 1, 10_000_000)
	case "live":
		f.req.Mode, f.req.Window = "live", time.Duration(num("window", f.Window, 1, 600))*time.Second
	default:
		f.fail("mode", "%s: read the last N records of each partition (last) or a live window (live)", quote.Clip(f.Mode))
	}
	f.req.Limits = sample.Limits{
		MaxRecords: num("maxRecords", f.MaxRecords, 1, 10_000_000),
		MaxBytes:   num("maxMegabytes", f.MaxMegabytes, 1, 1024) << 20,
		MaxTime:    time.Duration(num("maxSeconds", f.MaxSeconds, 1, 600)) * time.Second,
	}
	if strings.EqualFold(f.Type, "sql") {
		f.Type = "sql"
		if strings.TrimSpace(v.Get("from")) == "" {
			// A SQL table reads its columns from the record value unless
			// it says otherwise ('key.fields').
			f.From = "value"
		}
		f.spec, _ = f.sqlKeySpec()
	} else {
		spec, err := keysample.ParseKeySpec(f.From, f.Format, f.Path, f.Type)
		if err != nil {
			f.fail("format", "%v", err)
		}
		f.spec = spec
	}
	par := func(field, s string) int {
		if s == "" {
			return 0
		}
		n, err := strconv.Atoi(s)
		if err != nil || assign.CheckParallelism(n) != nil {
			f.fail(field, "%s is not a parallelism: Flink accepts 1..%d", quote.Clip(s), assign.UpperBoundMaxParallelism)
			return 0
		}
		return n
	}
	f.p = par("parallelism", f.Parallelism)
	f.target = par("target", f.Target)
	f.maxP = par("maxParallelism", f.MaxParallelism)
	if f.p == 0 && f.Errors["parallelism"] == "" {
		f.fail("parallelism", "required: the keyed vertex's parallelism, to say which subtask each key lands on")
	}
	if f.maxP == 0 && f.p > 0 && f.Errors["maxParallelism"] == "" {
		f.maxP, _ = assign.DefaultMaxParallelism(f.p)
		f.MaxParallelism = strconv.Itoa(f.maxP)
	}
	if f.maxP > 0 && f.p > f.maxP {
		f.fail("maxParallelism", "%d is below the parallelism %d: Flink requires max parallelism ≥ parallelism", f.maxP, f.p)
	}
	if f.maxP > 0 && f.target > f.maxP {
		f.fail("target", "%d is above the max parallelism %d, which a restored job keeps", f.target, f.maxP)
	}
	if f.Job != "" && !jobIDRE.MatchString(f.Job) || f.Vertex != "" && !jobIDRE.MatchString(f.Vertex) {
		f.fail("job", "job and vertex are Flink ids (hex)")
	}
	return f
}

// query is the form as a URL query, defaults left out.
func (f *sampleForm) query() url.Values {
	q := url.Values{}
	set := func(k, v, def string) {
		if v != "" && v != def {
			q.Set(k, v)
		}
	}
	set("partitions", f.Partitions, "")
	set("mode", f.Mode, "last")
	set("n", f.LastN, "10000")
	set("window", f.Window, "10")
	set("from", f.From, "key")
	set("format", f.Format, "string")
	set("path", f.Path, "")
	set("type", f.Type, "string")
	set("parallelism", f.Parallelism, "")
	set("target", f.Target, "")
	set("maxParallelism", f.MaxParallelism, "")
	set("maxRecords", f.MaxRecords, "1000000")
	set("maxMegabytes", f.MaxMegabytes, "256")
	set("maxSeconds", f.MaxSeconds, "60")
	set("job", f.Job, "")
	set("vertex", f.Vertex, "")
	set("table", f.Table, "")
	set("keyColumns", f.KeyColumns, "")
	set("schema", f.Schema, "")
	return q
}

// sampleRun is what the dashboard keeps with each sample of its manager:
// the form it was started from, who started it, and what its records add
// up to. The manager keeps the id, times and progress.
type sampleRun struct {
	form *sampleForm
	// by started the sample; keys is "clear" or "hashed", as its texts
	// are kept.
	by   requester
	keys string

	mu  sync.Mutex
	sum *keysample.Summary
	// cancelledBy cancelled the sample (nil: nobody).
	cancelledBy *requester
	// final is the snapshot of the finished sample, computed once: the
	// summary does not change after its last record.
	final *sampleSnapshot
}

// keptSample is a sample as the manager keeps it, with its run.
type keptSample = sample.Info[*sampleRun]

// snapshot is the run's state for one page or answer, taken under its lock.
type sampleSnapshot struct {
	ID       string
	Form     *sampleForm
	Started  time.Time
	Progress sample.Progress
	Records  int64
	Top      []keysample.HeavyKey
	Distinct float64
	DistErr  float64
	KG       []int64
	Errors   []keysample.ErrorCount
	Now      *keysample.Layout
	Target   *keysample.Layout
	Verdict  keysample.Verdict
	Done     bool
	Finished time.Time
	By       requester
	Keys     string
	// CancelledBy is who cancelled the sample, nil when nobody did.
	CancelledBy *requester
}

// snapshotOf is a kept sample's state: its progress while it reads, and
// with it the result once it is done. The manager says a sample is done
// only after its last record reached the summary.
func snapshotOf(ks keptSample) sampleSnapshot {
	run := ks.Value
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.final != nil {
		return *run.final
	}
	f := run.form
	s := sampleSnapshot{ID: ks.ID, Form: f, Started: ks.Started, Progress: ks.Progress, Records: run.sum.Records(), Done: ks.Progress.Done, Finished: ks.Finished,
		By: run.by, Keys: run.keys, CancelledBy: run.cancelledBy}
	if !s.Done {
		return s
	}
	s.Top = run.sum.Top(summaryCounters)
	s.Distinct, s.DistErr = run.sum.Distinct()
	s.KG = run.sum.KeyGroupCounts()
	s.Errors = run.sum.Errors()
	if l, err := run.sum.AtParallelism(f.p); err == nil {
		s.Now = &l
	}
	if f.target > 0 && f.target != f.p {
		if l, err := run.sum.AtParallelism(f.target); err == nil {
			s.Target = &l
		}
	}
	// From 2: one subtask is trivially "even".
	hi := min(f.maxP, max(2*f.p, 2*f.target, 16))
	s.Verdict = run.sum.Verdict(f.p, min(2, hi), hi)
	run.final = &s
	return s
}

// samples holds the dashboard's key samples: the manager keeps them (ids,
// the bounds of sample.DefaultConcurrent running and sample.Kept kept,
// progress), each with its run; here are the clusters they may read and
// who may read what.
type samples struct {
	mgr      *sample.Manager[*sampleRun]
	clusters map[string]kafka.Config
	// registries are the clusters' schema registries (Config.SchemaRegistry)
	// for key samples of avro-confluent tables, by cluster name.
	registries map[string]keysample.SchemaSource
	access     *sampleAccess
	// startMu makes a start's check of the per-user bound and its start
	// one step.
	startMu sync.Mutex
}

// newSamples returns the key samples of clusters, nil without any;
// onProgress hears each sample's progress (see sample.ManagerOptions).
func newSamples(clusters []kafka.Config, opts SampleOptions, now func() time.Time, onProgress func(keptSample)) (*samples, error) {
	if len(clusters) == 0 {
		return nil, nil
	}
	a, err := newSampleAccess(opts)
	if err != nil {
		return nil, err
	}
	s := &samples{
		mgr:      sample.NewManager(sample.ManagerOptions[*sampleRun]{Now: now, OnProgress: onProgress}),
		clusters: map[string]kafka.Config{}, access: a,
	}
	for _, c := range clusters {
		s.clusters[c.Name] = c
		if c.SchemaRegistry == "" {
			continue
		}
		cl, err := sr.NewClient(sr.URLs(c.SchemaRegistry), sr.HTTPClient(&http.Client{Timeout: 10 * time.Second}))
		if err != nil {
			return nil, fmt.Errorf("kafka cluster %s: schemaRegistry: %w", c.Name, err)
		}
		if s.registries == nil {
			s.registries = map[string]keysample.SchemaSource{}
		}
		s.registries[c.Name] = cl
	}
	return s, nil
}

// registry is the schema registry of cluster, nil when none is configured.
func (ss *samples) registry(cluster string) keysample.SchemaSource {
	if ss == nil {
		return nil
	}
	return ss.registries[cluster]
}

// running counts the samples in flight that count under quota.
func (ss *samples) running(quota string) int {
	n := 0
	for _, ks := range ss.mgr.List() {
		if !ks.Progress.Done && ks.Value.by.quotaKey() == quota {
			n++
		}
	}
	return n
}

// has reports whether cluster is one samples may read.
func (ss *samples) has(cluster string) bool {
	_, ok := ss.clusters[cluster]
	return ok
}

// startSample starts the sample the form describes for by, and returns
// it: refused (403) when the topic may not be sampled, (429) when by runs
// as many samples as one user may, (503) when as many run as may.
func (s *Server) startSample(f *sampleForm, by requester) (keptSample, error) {
	ss := s.samples
	cfg, ok := ss.clusters[f.Cluster]
	if !ok {
		return keptSample{}, &inputError{Status: http.StatusNotFound, Field: "cluster", Msg: "no Kafka cluster " + quote.Clip(f.Cluster) + " is configured"}
	}
	if err := ss.access.allow(f.Cluster, f.Topic); err != nil {
		return keptSample{}, err
	}
	run := &sampleRun{form: f, sum: keysample.NewSummary(summaryCounters, f.maxP), by: by, keys: ss.access.keysMode()}
	var hasher *keyHasher
	if ss.access.hashKey != nil {
		hasher = newKeyHasher(ss.access.hashKey)
	}
	sink := func(rec sample.Record) {
		k, err := f.spec.Key(rec.Key, rec.Value)
		if err == nil && hasher != nil {
			k.Text = hasher.text(k.Text)
		}
		run.mu.Lock()
		switch {
		case err != nil && hasher != nil:
			run.sum.AddError(errors.New(redactQuoted(err.Error())))
		case err != nil:
			run.sum.AddError(err)
		default:
			run.sum.Add(k)
		}
		run.mu.Unlock()
	}
	ss.startMu.Lock()
	defer ss.startMu.Unlock()
	if n := ss.running(by.quotaKey()); n >= ss.access.maxPerUser {
		return keptSample{}, &inputError{Status: http.StatusTooManyRequests, Field: "sample",
			Msg: fmt.Sprintf("%s already runs %d key sample(s), the most one user may (samples.maxPerUser = %d); wait for it to end or cancel it on %s/samples",
				by.quotaKey(), n, ss.access.maxPerUser, s.prefix)}
	}
	id, err := ss.mgr.Start(s.bgContext(), cfg, f.req, run, sink)
	switch {
	case errors.Is(err, sample.ErrTooMany):
		return keptSample{}, &inputError{Status: http.StatusServiceUnavailable, Field: "sample", Msg: err.Error() + " on " + s.prefix + "/samples"}
	case errors.Is(err, sample.ErrClosed):
		return keptSample{}, &inputError{Status: http.StatusServiceUnavailable, Field: "sample", Msg: "the dashboard is shutting down: no new key samples"}
	case err != nil:
		// The form let through what the sampler refuses (limits that
		// contradict each other): the request is at fault, not the server.
		return keptSample{}, &inputError{Status: http.StatusBadRequest, Field: "sample", Msg: err.Error()}
	}
	ks, _ := ss.mgr.Get(id) // there: a running sample is never forgotten
	s.auditSample("key sample started", ks, by, ks.Started)
	return ks, nil
}

// bgContext is the context samples run under: the server's Run context.
func (s *Server) bgContext() context.Context {
	if c := s.runCtx.Load(); c != nil {
		return *c
	}
	return context.Background()
}

// publishSample pushes a sample's progress, then its result, to its page;
// the manager calls it on every progress of every sample.
func (s *Server) publishSample(ks keptSample) {
	if !s.hub.Subscribed(sampleTopic(ks.ID)) {
		return
	}
	s.publish(newSamplePage(views.Layout{Base: s.prefix}, snapshotOf(ks), s.now()))
}

// sampleSubscribed publishes the pages of the samples that a websocket
// subscription names (the hub calls it for the topics a socket joins): a
// page rendered while its sample read may subscribe only after the
// sample's last progress, and so still turns into the result.
func (s *Server) sampleSubscribed(topics []string) {
	if s.samples == nil {
		return
	}
	for _, t := range topics {
		id, ok := strings.CutPrefix(t, sampleTopicPrefix)
		if !ok {
			continue
		}
		if ks, ok := s.samples.mgr.Get(id); ok {
			s.publishSample(ks)
		}
	}
}

// sampleTopicPrefix starts the websocket topic of each sample's page.
const sampleTopicPrefix = "sample:"

func sampleTopic(id string) string { return sampleTopicPrefix + id }

// serveSampleForm answers GET (the form) and POST (start a sample) of
// /kafka/{cluster}/topics/{topic}/sample.
func (s *Server) serveSampleForm(w http.ResponseWriter, r *http.Request) (int, templ.Component, error) {
	if s.samples == nil {
		return 0, nil, &inputError{Status: http.StatusNotFound, Msg: "no Kafka cluster is configured, so there is nothing to sample"}
	}
	cluster, topic, err := sampledTopic(r)
	if err != nil {
		return 0, nil, err
	}
	if !s.samples.has(cluster) {
		return 0, nil, &inputError{Status: http.StatusNotFound, Field: "cluster", Msg: "no Kafka cluster " + quote.Clip(cluster) + " is configured"}
	}
	if err := s.samples.access.allow(cluster, topic); err != nil {
		return 0, nil, err
	}
	l := s.layout(r, "Sample keys of "+topic, "samples")
	vals := r.URL.Query()
	if r.Method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			return 0, nil, badInput("form", "%v", err)
		}
		vals = r.PostForm
	}
	f := parseSampleForm(cluster, topic, vals, s.samples.registry(cluster))
	if r.Method == http.MethodGet {
		// Opening the form is not submitting it: a link that leaves a
		// field to fill in (the topic page's has no parallelism) must not
		// open on an error. The form is checked when it is posted.
		f.Errors = nil
		return http.StatusOK, views.SampleForm(l, newSampleFormView(l, f, s.samples.access.hashKey != nil)), nil
	}
	if len(f.Errors) > 0 {
		return http.StatusBadRequest, views.SampleForm(l, newSampleFormView(l, f, s.samples.access.hashKey != nil)), nil
	}
	if f.Job != "" && f.Type == "sql" && s.live != nil {
		if vv, err := s.live.State().Vertex(f.Job, f.Vertex, live.VertexQuery{Highlight: -1}); err == nil && vv.SQL != nil {
			k := *vv.SQL
			f.sqlVertex = &k
		}
	}
	ks, err := s.startSample(f, s.requesterOf(r))
	if err != nil {
		status, _ := statusOf(err)
		f.fail("sample", "%v", err)
		return status, views.SampleForm(l, newSampleFormView(l, f, s.samples.access.hashKey != nil)), nil
	}
	http.Redirect(w, r, s.prefix+"/samples/"+ks.ID, http.StatusSeeOther)
	return 0, nil, nil
}

// sampledTopic is the cluster and topic a sample route names.
func sampledTopic(r *http.Request) (cluster, topic string, err error) {
	cluster, topic = chi.URLParam(r, "cluster"), chi.URLParam(r, "topic")
	if !nameRE.MatchString(cluster) || !nameRE.MatchString(topic) {
		return "", "", badInput("topic", "%s/%s is not a cluster and topic name", quote.Clip(cluster), quote.Clip(topic))
	}
	return cluster, topic, nil
}

// sampleOf is the sample r names.
func (s *Server) sampleOf(r *http.Request) (keptSample, error) {
	id := chi.URLParam(r, "id")
	if s.samples == nil {
		return keptSample{}, &inputError{Status: http.StatusNotFound, Msg: "no Kafka cluster is configured, so there are no samples"}
	}
	if s.samples.access.off {
		return keptSample{}, s.samples.access.offError()
	}
	ks, ok := s.samples.mgr.Get(id)
	if !ok {
		return keptSample{}, &inputError{Status: http.StatusNotFound, Field: "id", Msg: fmt.Sprintf("no sample %s: samples live in memory and the last %d are kept", quote.Clip(id), sample.Kept)}
	}
	return ks, nil
}

// serveSample answers GET /samples/{id}: the sample's progress, then its
// result.
func (s *Server) serveSample(w http.ResponseWriter, r *http.Request) (int, templ.Component, error) {
	ks, err := s.sampleOf(r)
	if err != nil {
		return 0, nil, err
	}
	snap := snapshotOf(ks)
	l := s.layout(r, "Key sample of "+snap.Form.Topic, "samples")
	return http.StatusOK, views.Sample(l, newSamplePage(l, snap, s.now())), nil
}

// serveSampleCancel answers POST /samples/{id}/cancel, from the sample's
// page (back to it) or the list (?back=list, back to the list).
func (s *Server) serveSampleCancel(w http.ResponseWriter, r *http.Request) (int, templ.Component, error) {
	id, _, err := s.cancelSample(r)
	if err != nil {
		return 0, nil, err
	}
	back := s.prefix + "/samples/" + id
	if r.URL.Query().Get("back") == "list" {
		back = s.prefix + "/samples"
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
	return 0, nil, nil
}

// cancelSample cancels the sample r names, for whoever sends r if they may
// sample its topic, and logs who did; cancelled is false when the sample
// had ended or been cancelled already, which changes nothing; id is the
// sample's.
func (s *Server) cancelSample(r *http.Request) (id string, cancelled bool, err error) {
	ks, err := s.sampleOf(r)
	if err != nil {
		return "", false, err
	}
	run := ks.Value
	if err := s.samples.access.allow(run.form.Cluster, run.form.Topic); err != nil {
		return "", false, err
	}
	by := s.requesterOf(r)
	// Under the run's lock, so that the sample's final snapshot, taken
	// under it too, names who cancelled it.
	run.mu.Lock()
	cancelled = run.cancelledBy == nil && s.samples.mgr.Cancel(ks.ID)
	if cancelled {
		run.cancelledBy = &by
	}
	run.mu.Unlock()
	if cancelled {
		s.auditSample("key sample cancelled", ks, by, s.now())
	}
	return ks.ID, cancelled, nil
}

// sampleResponse is GET /api/v1/samples/{id}.
type sampleResponse struct {
	ID      string `json:"id"`
	Cluster string `json:"cluster"`
	Topic   string `json:"topic"`
	Key     string `json:"key"`
	// Keys says what topKeys[].key holds: "clear" (the key's text) or
	// "hashed" (a short keyed hash of it, and no javaHash).
	Keys string `json:"keys"`
	// StartedBy is who started the sample: the user a trusted proxy
	// named, or "anonymous (address)"; CancelledBy who cancelled it.
	StartedBy   string        `json:"startedBy"`
	CancelledBy *string       `json:"cancelledBy"`
	Request     sampleRequest `json:"request"`
	Started     time.Time     `json:"started"`
	Progress    progressJSON  `json:"progress"`
	Done        bool          `json:"done"`
	Records     int64         `json:"records"`
	Distinct    *distinctJSON `json:"distinct"`
	TopKeys     []topKeyJSON  `json:"topKeys"`
	// KeyGroups are the sampled records per key group, exact.
	KeyGroups []int64 `json:"keyGroupCounts"`
	// Now and Target are the sampled records per subtask at the current
	// and target parallelism (computed from the exact key groups).
	Now     *layoutJSON      `json:"now"`
	Target  *layoutJSON      `json:"target"`
	Verdict *verdictJSON     `json:"verdict"`
	Errors  []errorCountJSON `json:"errors"`
	// Kinds say which figures are observed, computed or estimated.
	Kinds map[string]string `json:"kinds"`
}

type progressJSON struct {
	Records        int64   `json:"records"`
	Bytes          int64   `json:"bytes"`
	Partitions     int     `json:"partitions"`
	PartitionsDone int     `json:"partitionsDone"`
	ElapsedSeconds float64 `json:"elapsedSeconds"`
	Done           bool    `json:"done"`
	StoppedBy      string  `json:"stoppedBy"`
	Skipped        int64   `json:"skipped"`
	Error          string  `json:"error,omitempty"`
}

type layoutJSON struct {
	Parallelism int     `json:"parallelism"`
	PerSubtask  []int64 `json:"perSubtask"`
	Busiest     int     `json:"busiest"`
	// Share is the busiest subtask's share of the records.
	Share float64 `json:"share"`
}

type verdictJSON struct {
	Sentences []string `json:"sentences"`
	From      int      `json:"from"`
	To        int      `json:"to"`
}

type errorCountJSON struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
	// Example is the value at fault of the first such record, left out
	// when keys are hashed (it may be a key) or when the message says it.
	Example string `json:"example,omitempty"`
}

type limitsJSON struct {
	MaxRecords     int64   `json:"maxRecords"`
	MaxBytes       int64   `json:"maxBytes"`
	MaxSeconds     float64 `json:"maxSeconds"`
	MaxRecordBytes int     `json:"maxRecordBytes"`
}

func layoutOf(l *keysample.Layout) *layoutJSON {
	if l == nil {
		return nil
	}
	return &layoutJSON{Parallelism: l.Parallelism, PerSubtask: l.PerSubtask, Busiest: l.Busiest, Share: l.Share}
}

type sampleRequest struct {
	Limits         limitsJSON `json:"limits"`
	Mode           string     `json:"mode"`
	LastN          int64      `json:"lastN,omitempty"`
	WindowSeconds  float64    `json:"windowSeconds,omitempty"`
	Partitions     []int32    `json:"partitions"`
	Parallelism    int        `json:"parallelism"`
	Target         int        `json:"target"`
	MaxParallelism int        `json:"maxParallelism"`
}

type distinctJSON struct {
	Estimate float64 `json:"estimate"`
	StdError float64 `json:"stdError"`
}

type topKeyJSON struct {
	Key string `json:"key"`
	// JavaHash is the key's Java hashCode, left out when keys are hashed
	// (for a short key it gives the key away).
	JavaHash   *int32  `json:"javaHash,omitempty"`
	KeyGroup   int     `json:"keyGroup"`
	Count      int64   `json:"count"`
	ErrorBound int64   `json:"errorBound"`
	Share      float64 `json:"share"`
	Subtask    int     `json:"subtask"`
	// TargetSubtask is the key's subtask at the target parallelism, -1
	// without one.
	TargetSubtask int `json:"targetSubtask"`
}

func newSampleResponse(snap sampleSnapshot) sampleResponse {
	f := snap.Form
	pr := snap.Progress
	lim := f.req.WithDefaults().Limits
	resp := sampleResponse{
		ID: snap.ID, Cluster: f.Cluster, Topic: f.Topic, Key: f.spec.String(), Keys: snap.Keys, StartedBy: snap.By.String(), Started: snap.Started,
		Progress: progressJSON{Records: pr.Records, Bytes: pr.Bytes, Partitions: pr.Partitions, PartitionsDone: pr.PartitionsDone,
			ElapsedSeconds: pr.Elapsed.Seconds(), Done: pr.Done, StoppedBy: pr.StoppedBy, Skipped: pr.Skipped, Error: pr.Err},
		Done: snap.Done, Records: snap.Records,
		Request: sampleRequest{Mode: f.req.Mode, LastN: f.req.LastN, WindowSeconds: f.req.Window.Seconds(), Partitions: f.req.Partitions,
			Parallelism: f.p, Target: f.target, MaxParallelism: f.maxP,
			Limits: limitsJSON{MaxRecords: lim.MaxRecords, MaxBytes: lim.MaxBytes, MaxSeconds: lim.MaxTime.Seconds(), MaxRecordBytes: lim.MaxRecordBytes}},
		Kinds: map[string]string{
			"keyGroupCounts": "observed: every sampled record's key group is computed exactly",
			"topKeys":        "estimated: each count is at most errorBound above the true count (Space-Saving)",
			"distinct":       "estimated: within stdError, one standard error (HyperLogLog)",
			"now":            "computed from the key-group counts",
		},
		TopKeys: []topKeyJSON{}, Errors: []errorCountJSON{},
	}
	if resp.Request.Partitions == nil {
		resp.Request.Partitions = []int32{}
	}
	if c := snap.CancelledBy; c != nil {
		name := c.String()
		resp.CancelledBy = &name
	}
	for _, e := range snap.Errors {
		ec := errorCountJSON{Message: e.Message, Count: e.Count}
		if snap.Keys != "hashed" {
			ec.Example = quote.Clip(e.Example)
		}
		resp.Errors = append(resp.Errors, ec)
	}
	if !snap.Done {
		return resp
	}
	resp.Distinct = &distinctJSON{Estimate: snap.Distinct, StdError: snap.DistErr}
	if math.IsNaN(snap.DistErr) || math.IsInf(snap.DistErr, 0) {
		resp.Distinct.StdError = 0
	}
	resp.KeyGroups = snap.KG
	resp.Now, resp.Target = layoutOf(snap.Now), layoutOf(snap.Target)
	resp.Verdict = &verdictJSON{Sentences: snap.Verdict.Sentences, From: snap.Verdict.From, To: snap.Verdict.To}
	if resp.Verdict.Sentences == nil {
		resp.Verdict.Sentences = []string{}
	}
	for _, k := range snap.Top {
		tk := topKeyJSON{Key: k.Text, KeyGroup: k.KeyGroup, Count: k.Count, ErrorBound: k.ErrorBound,
			Subtask: assign.OperatorIndex(f.maxP, f.p, k.KeyGroup), TargetSubtask: -1}
		if snap.Keys != "hashed" {
			tk.JavaHash = &k.Hash
		}
		if snap.Records > 0 {
			tk.Share = float64(k.Count) / float64(snap.Records)
		}
		if f.target > 0 {
			tk.TargetSubtask = assign.OperatorIndex(f.maxP, f.target, k.KeyGroup)
		}
		resp.TopKeys = append(resp.TopKeys, tk)
	}
	return resp
}

// serveSampleJSON answers GET /api/v1/samples/{id}.
func (s *Server) serveSampleJSON(w http.ResponseWriter, r *http.Request) error {
	ks, err := s.sampleOf(r)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, newSampleResponse(snapshotOf(ks)))
}

// serveSampleStartJSON answers POST /api/v1/kafka/{cluster}/topics/{topic}/samples.
func (s *Server) serveSampleStartJSON(w http.ResponseWriter, r *http.Request) error {
	if s.samples == nil {
		return &inputError{Status: http.StatusNotFound, Msg: "no Kafka cluster is configured, so there is nothing to sample"}
	}
	cluster, topic, err := sampledTopic(r)
	if err != nil {
		return err
	}
	if !s.samples.has(cluster) {
		return &inputError{Status: http.StatusNotFound, Field: "cluster", Msg: "no Kafka cluster " + quote.Clip(cluster) + " is configured"}
	}
	if err := s.samples.access.allow(cluster, topic); err != nil {
		return err
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		return badInput("form", "%v", err)
	}
	f := parseSampleForm(cluster, topic, r.Form, s.samples.registry(cluster))
	if err := firstError(f.Errors); err != nil {
		return err
	}
	ks, err := s.startSample(f, s.requesterOf(r))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, map[string]string{"id": ks.ID, "page": s.prefix + "/samples/" + ks.ID, "json": s.prefix + "/api/v1/samples/" + ks.ID})
}

// serveSampleCSV answers GET /samples/{id}.csv: the top keys.
func (s *Server) serveSampleCSV(w http.ResponseWriter, r *http.Request) error {
	ks, err := s.sampleOf(r)
	if err != nil {
		return err
	}
	resp := newSampleResponse(snapshotOf(ks))
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="keys-`+resp.Topic+`.csv"`)
	cw := csv.NewWriter(w)
	// Hashed keys come without their Java hash, which would give a short
	// key away.
	hashed := resp.Keys == "hashed"
	head := []string{"key", "java_hash"}
	if hashed {
		head = []string{"key_hash"}
	}
	cw.Write(append(head, "key_group", "count", "error_bound", "share", "subtask", "target_subtask"))
	for _, k := range resp.TopKeys {
		row := []string{csvSafe(k.Key)}
		if !hashed && k.JavaHash != nil {
			row = append(row, strconv.Itoa(int(*k.JavaHash)))
		}
		cw.Write(append(row, strconv.Itoa(k.KeyGroup), strconv.FormatInt(k.Count, 10),
			strconv.FormatInt(k.ErrorBound, 10), strconv.FormatFloat(k.Share, 'f', 6, 64), strconv.Itoa(k.Subtask), strconv.Itoa(k.TargetSubtask)))
	}
	cw.Flush()
	return cw.Error()
}

// sampleState is a sample's state in a word: running, done, stopped (at
// a limit, partial), cancelled or failed.
func sampleState(snap sampleSnapshot) string {
	if !snap.Done {
		return "running"
	}
	switch snap.Progress.StoppedBy {
	case sample.StoppedComplete:
		return "done"
	case sample.StoppedCancelled:
		return "cancelled"
	case sample.StoppedError:
		return "failed"
	}
	return "stopped"
}

// sampleListItem is one sample of GET /api/v1/samples.
type sampleListItem struct {
	ID          string        `json:"id"`
	Cluster     string        `json:"cluster"`
	Topic       string        `json:"topic"`
	StartedBy   string        `json:"startedBy"`
	CancelledBy *string       `json:"cancelledBy"`
	State       string        `json:"state"`
	Started     time.Time     `json:"started"`
	Progress    progressJSON  `json:"progress"`
	Request     sampleRequest `json:"request"`
	Page        string        `json:"page"`
	JSON        string        `json:"json"`
}

// sampleListResponse is GET /api/v1/samples: the kept samples, newest
// first, and the bounds on running ones.
type sampleListResponse struct {
	Samples    []sampleListItem `json:"samples"`
	Running    int              `json:"running"`
	MaxRunning int              `json:"maxRunning"`
	MaxPerUser int              `json:"maxPerUser"`
	Keys       string           `json:"keys"`
}

func (s *Server) newSampleListResponse() sampleListResponse {
	resp := sampleListResponse{Samples: []sampleListItem{}, MaxRunning: s.samples.mgr.Concurrent(), MaxPerUser: s.samples.access.maxPerUser, Keys: s.samples.access.keysMode()}
	for _, ks := range s.samples.mgr.List() {
		snap := snapshotOf(ks)
		full := newSampleResponse(snap)
		it := sampleListItem{ID: snap.ID, Cluster: full.Cluster, Topic: full.Topic, StartedBy: full.StartedBy, CancelledBy: full.CancelledBy,
			State: sampleState(snap), Started: snap.Started, Progress: full.Progress, Request: full.Request,
			Page: s.prefix + "/samples/" + snap.ID, JSON: s.prefix + "/api/v1/samples/" + snap.ID}
		if it.State == "running" {
			resp.Running++
		}
		resp.Samples = append(resp.Samples, it)
	}
	return resp
}

// samplesOn is nil when samples may be listed, else why not.
func (s *Server) samplesOn() error {
	if s.samples == nil {
		return &inputError{Status: http.StatusNotFound, Msg: "no Kafka cluster is configured, so there are no samples"}
	}
	if s.samples.access.off {
		return s.samples.access.offError()
	}
	return nil
}

// serveSamplesJSON answers GET /api/v1/samples.
func (s *Server) serveSamplesJSON(w http.ResponseWriter, r *http.Request) error {
	if err := s.samplesOn(); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, s.newSampleListResponse())
}

// serveSampleCancelJSON answers POST /api/v1/samples/{id}/cancel:
// cancelled is false when the sample had ended already.
func (s *Server) serveSampleCancelJSON(w http.ResponseWriter, r *http.Request) error {
	id, cancelled, err := s.cancelSample(r)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"id": id, "cancelled": cancelled, "json": s.prefix + "/api/v1/samples/" + id})
}

// serveSamples answers GET /samples: the running and recent samples, with
// a cancel button for each running one.
func (s *Server) serveSamples(w http.ResponseWriter, r *http.Request) (int, templ.Component, error) {
	if s.samples == nil {
		return 0, nil, &inputError{Status: http.StatusNotFound, Msg: "no Kafka cluster is configured, so there are no samples"}
	}
	l := s.layout(r, "Key samples", "samples")
	if s.samples.access.off {
		return http.StatusOK, views.Samples(l, views.SamplesPage{Off: upperFirst(s.samples.access.offError().(*inputError).Msg) + "."}), nil
	}
	return http.StatusOK, views.Samples(l, newSamplesView(l, s.newSampleListResponse(), s.now())), nil
}

// sampleLinks are the "sample keys" links for a topic, from a keyed vertex
// (its parallelism and max parallelism filled in) or a topic page.
func sampleURL(prefix, cluster, topic string, p, maxP int, job, vertex string, sqlKey ...string) string {
	q := url.Values{}
	if len(sqlKey) > 0 && sqlKey[0] != "" {
		// A Flink SQL vertex's key columns, as its plan names them.
		q.Set("type", "sql")
		q.Set("keyColumns", sqlKey[0])
	}
	if p > 0 {
		q.Set("parallelism", strconv.Itoa(p))
	}
	if maxP > 0 {
		q.Set("maxParallelism", strconv.Itoa(maxP))
	}
	if job != "" {
		q.Set("job", job)
		q.Set("vertex", vertex)
	}
	u := prefix + "/kafka/" + url.PathEscape(cluster) + "/topics/" + url.PathEscape(topic) + "/sample"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// attachSample looks up the key sample a plan names (?sample=ID) and
// attaches its key groups, or says why it cannot.
func (s *Server) attachSample(f *planForm) {
	if f.req.Sample == "" {
		return
	}
	if s.samples == nil {
		f.fail("sample", "no Kafka cluster is configured, so there are no key samples")
		return
	}
	ks, ok := s.samples.mgr.Get(f.req.Sample)
	if !ok {
		f.fail("sample", "no sample %s: samples live in memory and the last %d are kept; sample the keys again", quote.Clip(f.req.Sample), sample.Kept)
		return
	}
	snap := snapshotOf(ks)
	if !snap.Done {
		f.fail("sample", "sample %s is still reading; plan with it once it is done", quote.Clip(f.req.Sample))
		return
	}
	sl := &plan.Sample{ID: snap.ID, Topic: snap.Form.Topic, Records: snap.Records, KG: snap.KG, At: snap.Finished}
	if snap.Form.req.Mode == "live" && snap.Progress.Elapsed > 0 {
		sl.Rate = float64(snap.Records) / snap.Progress.Elapsed.Seconds()
	}
	f.sample = sl
}
