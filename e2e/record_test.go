//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/assign"
	fcollect "github.com/skewscope/skewscope/collectors/flink"
)

// recordingsRoot holds one directory of recorded REST responses per Flink
// version (collectors/testdata/flink/<flink-version>/), relative to e2e/.
const recordingsRoot = "../collectors/testdata/flink"

// The job whose responses are recorded: two topics (one with a '.' in its
// name, which metric ids carry as '_'), source parallelism 3 (so subtasks
// own different numbers of partitions), keyed parallelism 4 and an
// explicit maxParallelism.
var (
	recTopics = []assign.Topic{{Name: "orders", Partitions: 5}, {Name: "payments.v1", Partitions: 3}}
	recJob    = jobSpec{Name: "skewscope-recording", Topics: topicNames(recTopics), Out: "recording-out",
		Group: "skewscope-recording", SourceP: 3, KeyedP: 4, MaxP: 128}
)

const (
	recSourceOp   = "Source__Kafka_Source" // "Source: Kafka Source" sanitised
	maxRequestURI = 3500                   // Flink's request line limit is 4096 bytes
)

// TestRecordRESTResponses runs the recording job on each Flink line, drives
// traffic until at least two checkpoints completed and the metrics the
// collector reads are populated, and fetches every endpoint the collector
// will use.
//
// With SKEWSCOPE_RECORD=1 it writes the responses, pretty-printed with
// host-specific values scrubbed, to
// collectors/testdata/flink/<flink-version>/<name>.json with a
// manifest.json (name → request path with placeholders, status, ids).
// Without it, it checks that the live responses still have the top-level
// shape of the committed recordings (root type; keys of an object, element
// keys of an array), so the tier keeps exercising the endpoints.
func TestRecordRESTResponses(t *testing.T) {
	buildJob(t)
	record := os.Getenv("SKEWSCOPE_RECORD") == "1"
	for _, line := range selectedLines(t) {
		t.Run("flink-"+line.Name, func(t *testing.T) {
			start := time.Now()
			kafka := startKafka(t)
			kc := newKafkaClient(t, kafka.Bootstrap)
			flink := startFlink(t, line, kafka.Bootstrap)
			recordLine(t, kafka, kc, flink, record)
			t.Logf("Flink %s: recordings (record=%v) took %s including broker and cluster start", flink.Version, record, time.Since(start).Round(time.Second))
		})
	}
}

// recording is one request and its response.
type recording struct {
	name     string
	template string      // OpenAPI path template, e.g. /jobs/{jobid}/vertices/{vertexid}
	query    [][2]string // in request order
	vars     map[string]string
	status   int
	body     []byte
	node     *jnode
}

// requestPath is the path actually requested: placeholders filled in,
// the query escaped (commas kept, as the Web UI sends them).
func (r *recording) requestPath() string {
	p := r.template
	for k, v := range r.vars {
		p = strings.ReplaceAll(p, "{"+k+"}", url.PathEscape(v))
	}
	if len(r.query) > 0 {
		var q []string
		for _, kv := range r.query {
			q = append(q, kv[0]+"="+strings.ReplaceAll(url.QueryEscape(kv[1]), "%2C", ","))
		}
		p += "?" + strings.Join(q, "&")
	}
	return p
}

// manifestPath is the path with placeholders and the query unescaped.
func (r *recording) manifestPath() string {
	p := r.template
	if len(r.query) > 0 {
		var q []string
		for _, kv := range r.query {
			q = append(q, kv[0]+"="+kv[1])
		}
		p += "?" + strings.Join(q, "&")
	}
	return p
}

type recManifestEntry struct {
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Status int               `json:"status"`
	Vars   map[string]string `json:"vars,omitempty"`
}

type recManifest struct {
	FlinkVersion string         `json:"flinkVersion"`
	Line         string         `json:"line"`
	Recorder     string         `json:"recorder"`
	Job          map[string]any `json:"job"`
	recScrub
}

// recScrub ends every recordings manifest but the lifecycle's: how the
// responses were scrubbed and each file's request. The writer fills in
// Scrubbed and Recordings.
type recScrub struct {
	ScrubNote  string                      `json:"scrubNote"`
	Scrubbed   []string                    `json:"scrubbed"`
	Recordings map[string]recManifestEntry `json:"recordings"`
}

func (s *recScrub) scrubPart() *recScrub { return s }

// scrubbedManifest is a manifest that embeds a recScrub, as a pointer.
type scrubbedManifest interface{ scrubPart() *recScrub }

type recorder struct {
	t    *testing.T
	rest *restClient
	recs []*recording
}

func vars(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func q(kv ...string) [][2]string {
	var out [][2]string
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, [2]string{kv[i], kv[i+1]})
	}
	return out
}

// fetch requests one endpoint, requires 200 and a JSON body, and keeps it.
func (rc *recorder) fetch(name, template string, v map[string]string, query [][2]string) *jnode {
	rc.t.Helper()
	r := &recording{name: name, template: template, vars: v, query: query}
	path := r.requestPath()
	if len(path) > maxRequestURI {
		rc.t.Fatalf("%s: request path of %d bytes is over the %d-byte budget (Flink rejects request lines over 4096 bytes)", name, len(path), maxRequestURI)
	}
	status, body, err := rc.rest.raw(path)
	if err != nil {
		rc.t.Fatalf("%s: GET %s: %v", name, path, err)
	}
	if status != http.StatusOK {
		rc.t.Fatalf("%s: GET %s: status %d: %s", name, path, status, clip(string(body), 600))
	}
	n, err := parseJSON(body)
	if err != nil {
		rc.t.Fatalf("%s: GET %s: not JSON: %v: %s", name, path, err, clip(string(body), 600))
	}
	r.status, r.body, r.node = status, body, n
	rc.recs = append(rc.recs, r)
	return n
}

// raw is GET path with the status and body as they came.
func (r *restClient) raw(path string) (int, []byte, error) {
	resp, err := r.hc.Get(r.base + path)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// metricIDList is the ids of a metric list response ([{"id": ...}]).
func metricIDList(n *jnode) []string {
	var ids []string
	if n == nil || n.kind != 'a' {
		return nil
	}
	for _, e := range n.elems {
		if id := e.get("id"); id != nil && id.kind == 's' {
			ids = append(ids, id.str)
		}
	}
	return ids
}

// present keeps the ids of want that are in have, in want's order.
func present(have []string, want ...string) []string {
	set := map[string]bool{}
	for _, h := range have {
		set[h] = true
	}
	var out []string
	for _, w := range want {
		if set[w] {
			out = append(out, w)
		}
	}
	return out
}

// perSubtask expands names to "<i>.<name>" for subtasks 0..p-1.
func perSubtask(p int, names ...string) []string {
	var out []string
	for i := 0; i < p; i++ {
		for _, n := range names {
			out = append(out, fmt.Sprintf("%d.%s", i, n))
		}
	}
	return out
}

var (
	splitWatermarkRE = regexp.MustCompile(`^\d+\..+\.split\..+\.watermark\.currentWatermark$`)
)

// supportsSkew reports whether agg=skew exists on the line (≥1.20, FLINK-34025).
func supportsSkew(version string) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, _ := strconv.Atoi(parts[0])
	minor, _ := strconv.Atoi(parts[1])
	return major > 1 || (major == 1 && minor >= 20)
}

// produceTraffic writes records to every partition of topics until ctx is
// done: 40 records every 50 ms, half of them with one hot key so the keyed
// subtasks carry skewed load. It returns a function that stops it and
// reports the first error and the record count.
func produceTraffic(ctx context.Context, kc *kafkaClient, topics []assign.Topic) (stop func() (int64, error)) {
	ctx, cancel := context.WithCancel(ctx)
	tps := assign.Partitions(topics)
	var (
		wg    sync.WaitGroup
		n     int64
		first error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		rnd := rand.New(rand.NewPCG(4, 5))
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			recs := make([]*kgo.Record, 40)
			for k := range recs {
				key := "hot-key"
				if rnd.IntN(2) == 0 {
					key = fmt.Sprintf("user-%d", rnd.IntN(1000))
				}
				tp := tps[(i*len(recs)+k)%len(tps)]
				recs[k] = &kgo.Record{Topic: tp.Topic, Partition: tp.Partition, Key: []byte(key), Value: []byte("r" + strconv.Itoa(i))}
			}
			if err := kc.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				if ctx.Err() == nil && first == nil {
					first = err
				}
				return
			}
			n += int64(len(recs))
		}
	}()
	return func() (int64, error) {
		cancel()
		wg.Wait()
		return n, first
	}
}

// waitPopulated waits until at least two checkpoints completed, every
// partition has currentOffset and committedOffset >= 0, every source
// subtask emits and every keyed subtask receives records (rates > 0), the
// keyed busy time is a number and the keyed backpressure is computed, and
// traffic has run for at least minTraffic (rates are 60 s averages, so
// they need a while to mean something).
func waitPopulated(t *testing.T, r *restClient, jobID string, src, keyed fcollect.Vertex, minTraffic, timeout time.Duration) int {
	t.Helper()
	start := time.Now()
	deadline := start.Add(timeout)
	nextLog := time.Now().Add(15 * time.Second)
	wantParts := len(assign.Partitions(recTopics))
	for {
		var missing []string
		cps, err := r.checkpointsCompleted(jobID)
		if err != nil {
			missing = append(missing, err.Error())
		} else if cps < 2 {
			missing = append(missing, fmt.Sprintf("%d checkpoints completed", cps))
		}
		ids, err := r.fc.VertexMetricIDs(context.Background(), jobID, src.ID)
		if err != nil {
			t.Fatal(err)
		}
		offs := fcollect.ParseKafkaSourceMetricIDs(ids).OffsetIDs()
		if len(offs) != 2*wantParts {
			missing = append(missing, fmt.Sprintf("%d of %d offset metric ids", len(offs), 2*wantParts))
		}
		check := func(vertexID string, ids []string, ok func(string) bool, what string) {
			vals, err := r.metricValues(jobID, vertexID, ids)
			if err != nil {
				t.Fatal(err)
			}
			bad := 0
			for _, id := range ids {
				if v, found := vals[id]; !found || !ok(v) {
					bad++
				}
			}
			if bad > 0 {
				missing = append(missing, fmt.Sprintf("%d of %d %s", bad, len(ids), what))
			}
		}
		nonNeg := func(v string) bool { i, err := strconv.ParseInt(v, 10, 64); return err == nil && i >= 0 }
		positive := func(v string) bool { f, err := strconv.ParseFloat(v, 64); return err == nil && f > 0 }
		number := func(v string) bool { _, err := strconv.ParseFloat(v, 64); return err == nil && v != "NaN" }
		check(src.ID, offs, nonNeg, "offsets not yet >= 0")
		check(src.ID, perSubtask(src.Parallelism, "numRecordsOutPerSecond"), positive, "source subtasks with numRecordsOutPerSecond 0")
		check(keyed.ID, perSubtask(keyed.Parallelism, "numRecordsInPerSecond"), positive, "keyed subtasks with numRecordsInPerSecond 0")
		check(keyed.ID, perSubtask(keyed.Parallelism, "busyTimeMsPerSecond"), number, "keyed subtasks without busyTimeMsPerSecond")
		var bp struct {
			Status   string            `json:"status"`
			Subtasks []json.RawMessage `json:"subtasks"`
		}
		if err := r.get("/jobs/"+jobID+"/vertices/"+keyed.ID+"/backpressure", &bp); err != nil {
			t.Fatal(err)
		} else if bp.Status != "ok" || len(bp.Subtasks) != keyed.Parallelism {
			missing = append(missing, fmt.Sprintf("keyed backpressure status %q with %d subtasks", bp.Status, len(bp.Subtasks)))
		}
		if len(missing) == 0 && time.Since(start) >= minTraffic {
			return cps
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics not populated after %s: %s", timeout, strings.Join(missing, "; "))
		}
		if time.Now().After(nextLog) {
			if len(missing) == 0 {
				missing = append(missing, fmt.Sprintf("traffic for at least %s", minTraffic))
			}
			t.Logf("waiting: %s", strings.Join(missing, "; "))
			nextLog = time.Now().Add(15 * time.Second)
		}
		time.Sleep(time.Second)
	}
}

func recordLine(t *testing.T, kafka *kafkaBroker, kc *kafkaClient, flink *flinkCluster, record bool) {
	kc.createTopics(t, recTopics...)
	kc.createTopics(t, assign.Topic{Name: recJob.Out, Partitions: 2})
	jobID := flink.submit(t, recJob)
	defer func() {
		if err := flink.REST.cancel(jobID); err != nil {
			t.Errorf("cancel %s: %v", jobID, err)
		}
	}()
	stopTraffic := produceTraffic(context.Background(), kc, recTopics)
	trafficStopped := false
	defer func() {
		if !trafficStopped {
			stopTraffic()
		}
	}()
	d, err := flink.REST.job(jobID)
	if err != nil {
		t.Fatal(err)
	}
	src, err := vertexNamed(d, "Source: Kafka Source")
	if err != nil {
		t.Fatal(err)
	}
	keyed, err := vertexNamed(d, "Key Router")
	if err != nil {
		t.Fatal(err)
	}
	waitStart := time.Now()
	cps := waitPopulated(t, flink.REST, jobID, src, keyed, 20*time.Second, 180*time.Second)
	t.Logf("Flink %s, job %s (%s): %d checkpoints completed and metrics populated after %s",
		flink.Version, jobID, recJob, cps, time.Since(waitStart).Round(100*time.Millisecond))

	rc := &recorder{t: t, rest: flink.REST}
	fetchAll(t, rc, flink.Version, jobID, src, keyed)
	produced, perr := stopTraffic()
	trafficStopped = true
	if perr != nil {
		t.Fatalf("producing traffic: %v", perr)
	}
	t.Logf("fetched %d endpoints; %d records produced", len(rc.recs), produced)

	dir := filepath.Join(recordingsRoot, flink.Version)
	if record {
		writeRecordings(t, rc, dir, flink, kafka, map[string]any{
			"name":                                recJob.Name,
			"topics":                              topicsJSON(recTopics),
			"sourceParallelism":                   recJob.SourceP,
			"keyedParallelism":                    recJob.KeyedP,
			"maxParallelism":                      recJob.MaxP,
			"checkpointIntervalMs":                2000,
			"checkpointsCompletedBeforeRecording": cps,
			"traffic":                             "40 records every 50 ms round-robin over all partitions; half with key \"hot-key\", half with user-<0..999>",
			"operators":                           "KafkaSource \"Kafka Source\" (group.id, offsets committed on checkpoints) -> keyBy(String key) -> \"Key Router\" (KeyedProcessFunction, per-key ValueState) -> KafkaSink \"Route Sink\"",
		})
		return
	}
	compareRecordings(t, rc, dir, flink.Version)
}

// fetchAll requests every endpoint the collector will use, in an order
// where later requests take ids from earlier responses.
func fetchAll(t *testing.T, rc *recorder, version, jobID string, src, keyed fcollect.Vertex) {
	job := vars("jobid", jobID)
	srcV := vars("jobid", jobID, "vertexid", src.ID)
	keyedV := vars("jobid", jobID, "vertexid", keyed.ID)
	aggs := "min,max,avg,sum"
	if supportsSkew(version) {
		aggs += ",skew"
	}

	rc.fetch("overview", "/overview", nil, nil)
	rc.fetch("config", "/config", nil, nil)
	rc.fetch("jobs-overview", "/jobs/overview", nil, nil)
	rc.fetch("job", "/jobs/{jobid}", job, nil)
	rc.fetch("job-plan", "/jobs/{jobid}/plan", job, nil)
	rc.fetch("job-config", "/jobs/{jobid}/config", job, nil)
	rc.fetch("job-checkpoints-config", "/jobs/{jobid}/checkpoints/config", job, nil)
	jobMetrics := metricIDList(rc.fetch("job-metrics-list", "/jobs/{jobid}/metrics", job, nil))
	rc.fetch("job-metrics-values", "/jobs/{jobid}/metrics", job, q("get", strings.Join(present(jobMetrics,
		"numRestarts", "uptime", "numberOfCompletedCheckpoints", "numberOfFailedCheckpoints", "lastCheckpointSize",
		"lastCheckpointFullSize", "lastCheckpointDuration", "lastCompletedCheckpointId"), ",")))

	// Vertices.
	rc.fetch("vertex-source", "/jobs/{jobid}/vertices/{vertexid}", srcV, nil)
	rc.fetch("vertex-keyed", "/jobs/{jobid}/vertices/{vertexid}", keyedV, nil)

	// Source vertex metrics: id list, per-partition offsets, load, split watermarks.
	srcIDs := metricIDList(rc.fetch("vertex-source-metrics-list", "/jobs/{jobid}/vertices/{vertexid}/metrics", srcV, nil))
	offs := fcollect.ParseKafkaSourceMetricIDs(srcIDs).OffsetIDs()
	var splits []string
	for _, id := range srcIDs {
		if splitWatermarkRE.MatchString(id) {
			splits = append(splits, id)
		}
	}
	sort.Strings(offs)
	sort.Strings(splits)
	rc.fetch("vertex-source-metrics-offsets", "/jobs/{jobid}/vertices/{vertexid}/metrics", srcV, q("get", strings.Join(offs, ",")))
	rc.fetch("vertex-source-metrics-load", "/jobs/{jobid}/vertices/{vertexid}/metrics", srcV, q("get", strings.Join(present(srcIDs,
		perSubtask(src.Parallelism, "numRecordsInPerSecond", "numRecordsOutPerSecond", "busyTimeMsPerSecond",
			"backPressuredTimeMsPerSecond", "idleTimeMsPerSecond",
			recSourceOp+".pendingRecords", recSourceOp+".KafkaSourceReader.KafkaConsumer.records-lag-max",
			recSourceOp+".KafkaSourceReader.commitsSucceeded", recSourceOp+".currentOutputWatermark")...), ",")))
	if len(splits) > 0 {
		rc.fetch("vertex-source-metrics-split-watermarks", "/jobs/{jobid}/vertices/{vertexid}/metrics", srcV, q("get", strings.Join(splits, ",")))
	}

	// Keyed vertex metrics.
	keyedIDs := metricIDList(rc.fetch("vertex-keyed-metrics-list", "/jobs/{jobid}/vertices/{vertexid}/metrics", keyedV, nil))
	rc.fetch("vertex-keyed-metrics-load", "/jobs/{jobid}/vertices/{vertexid}/metrics", keyedV, q("get", strings.Join(present(keyedIDs,
		perSubtask(keyed.Parallelism, "numRecordsIn", "numRecordsInPerSecond", "numRecordsOutPerSecond", "busyTimeMsPerSecond",
			"backPressuredTimeMsPerSecond", "idleTimeMsPerSecond", "currentInputWatermark")...), ",")))

	// Aggregated subtask metrics.
	rc.fetch("vertex-source-subtasks-metrics-agg", "/jobs/{jobid}/vertices/{vertexid}/subtasks/metrics", srcV,
		q("get", "busyTimeMsPerSecond,backPressuredTimeMsPerSecond,idleTimeMsPerSecond,numRecordsOutPerSecond", "agg", aggs))
	rc.fetch("vertex-keyed-subtasks-metrics-agg", "/jobs/{jobid}/vertices/{vertexid}/subtasks/metrics", keyedV,
		q("get", "busyTimeMsPerSecond,backPressuredTimeMsPerSecond,idleTimeMsPerSecond,numRecordsInPerSecond,numRecordsIn", "agg", aggs))
	// One id without a value empties the whole answer
	// (AbstractAggregatingMetricsHandler.getAggregatedMetricValues).
	missing := rc.fetch("vertex-keyed-subtasks-metrics-agg-missing-id", "/jobs/{jobid}/vertices/{vertexid}/subtasks/metrics", keyedV,
		q("get", "busyTimeMsPerSecond,noSuchMetric", "agg", "max"))
	for _, name := range []string{"vertex-source-subtasks-metrics-agg", "vertex-keyed-subtasks-metrics-agg"} {
		if n := rc.byName(name).node; n.kind != 'a' || len(n.elems) == 0 {
			t.Errorf("%s: want a non-empty array, got %s", name, n.shape())
		}
	}
	t.Logf("aggregated request with an unknown id (busyTimeMsPerSecond,noSuchMetric) answered %s with %d entries", missing.shape(), len(missing.elems))

	// One subtask of each vertex: id list and values.
	src0 := vars("jobid", jobID, "vertexid", src.ID, "subtaskindex", "0")
	keyed0 := vars("jobid", jobID, "vertexid", keyed.ID, "subtaskindex", "0")
	src0IDs := metricIDList(rc.fetch("subtask-source-0-metrics-list", "/jobs/{jobid}/vertices/{vertexid}/subtasks/{subtaskindex}/metrics", src0, nil))
	var src0Get []string
	for _, id := range src0IDs {
		if m, ok := fcollect.ParseKafkaOffsetID(id); ok && m.Subtask < 0 {
			src0Get = append(src0Get, id)
		}
	}
	sort.Strings(src0Get)
	src0Get = append(src0Get, present(src0IDs, "numRecordsOutPerSecond", "busyTimeMsPerSecond", "backPressuredTimeMsPerSecond",
		"idleTimeMsPerSecond", recSourceOp+".pendingRecords", recSourceOp+".KafkaSourceReader.KafkaConsumer.records-lag-max")...)
	rc.fetch("subtask-source-0-metrics-values", "/jobs/{jobid}/vertices/{vertexid}/subtasks/{subtaskindex}/metrics", src0, q("get", strings.Join(src0Get, ",")))
	keyed0IDs := metricIDList(rc.fetch("subtask-keyed-0-metrics-list", "/jobs/{jobid}/vertices/{vertexid}/subtasks/{subtaskindex}/metrics", keyed0, nil))
	rc.fetch("subtask-keyed-0-metrics-values", "/jobs/{jobid}/vertices/{vertexid}/subtasks/{subtaskindex}/metrics", keyed0, q("get", strings.Join(present(keyed0IDs,
		"numRecordsIn", "numRecordsInPerSecond", "busyTimeMsPerSecond", "backPressuredTimeMsPerSecond", "idleTimeMsPerSecond", "currentInputWatermark"), ",")))

	// Backpressure and watermarks.
	rc.fetch("vertex-source-backpressure", "/jobs/{jobid}/vertices/{vertexid}/backpressure", srcV, nil)
	rc.fetch("vertex-keyed-backpressure", "/jobs/{jobid}/vertices/{vertexid}/backpressure", keyedV, nil)
	rc.fetch("vertex-source-watermarks", "/jobs/{jobid}/vertices/{vertexid}/watermarks", srcV, nil)
	rc.fetch("vertex-keyed-watermarks", "/jobs/{jobid}/vertices/{vertexid}/watermarks", keyedV, nil)

	// Checkpoints: statistics, the latest completed one, its per-subtask details.
	cps := rc.fetch("job-checkpoints", "/jobs/{jobid}/checkpoints", job, nil)
	idNode := cps.get("latest").get("completed").get("id")
	if idNode == nil || idNode.kind != 'n' {
		t.Fatalf("job-checkpoints: no latest.completed.id")
	}
	cp := vars("jobid", jobID, "checkpointid", idNode.num.String())
	rc.fetch("checkpoint-details", "/jobs/{jobid}/checkpoints/details/{checkpointid}", cp, nil)
	rc.fetch("checkpoint-subtasks-source", "/jobs/{jobid}/checkpoints/details/{checkpointid}/subtasks/{vertexid}",
		vars("jobid", jobID, "checkpointid", idNode.num.String(), "vertexid", src.ID), nil)
	rc.fetch("checkpoint-subtasks-keyed", "/jobs/{jobid}/checkpoints/details/{checkpointid}/subtasks/{vertexid}",
		vars("jobid", jobID, "checkpointid", idNode.num.String(), "vertexid", keyed.ID), nil)

	// Task managers.
	tms := rc.fetch("taskmanagers", "/taskmanagers", nil, nil)
	tmList := tms.get("taskmanagers")
	if tmList == nil || tmList.kind != 'a' || len(tmList.elems) == 0 || tmList.elems[0].get("id") == nil {
		t.Fatalf("taskmanagers: no task manager id in %s", tms.shape())
	}
	tm := vars("taskmanagerid", tmList.elems[0].get("id").str)
	rc.fetch("taskmanager", "/taskmanagers/{taskmanagerid}", tm, nil)
	tmIDs := metricIDList(rc.fetch("taskmanager-metrics-list", "/taskmanagers/{taskmanagerid}/metrics", tm, nil))
	rc.fetch("taskmanager-metrics-values", "/taskmanagers/{taskmanagerid}/metrics", tm, q("get", strings.Join(present(tmIDs,
		"Status.JVM.CPU.Load", "Status.JVM.Memory.Heap.Used", "Status.JVM.Memory.Heap.Max", "Status.Flink.Memory.Managed.Used",
		"Status.Flink.Memory.Managed.Total", "Status.Shuffle.Netty.UsedMemory", "Status.Shuffle.Netty.TotalMemory"), ",")))

	// The metric value requests must have found what they asked for.
	for _, r := range rc.recs {
		if len(r.query) == 0 || r.query[0][0] != "get" || strings.Contains(r.name, "missing-id") {
			continue
		}
		asked := strings.Split(r.query[0][1], ",")
		if r.query[0][1] == "" || r.node.kind != 'a' || len(r.node.elems) != len(asked) {
			t.Errorf("%s: asked for %d metric ids, got %s with %d entries", r.name, len(asked), r.node.shape(), len(r.node.elems))
		}
	}
}

func topicsJSON(ts []assign.Topic) []map[string]any {
	var out []map[string]any
	for _, t := range ts {
		out = append(out, map[string]any{"name": t.Name, "partitions": t.Partitions})
	}
	return out
}

func (rc *recorder) byName(name string) *recording {
	for _, r := range rc.recs {
		if r.name == name {
			return r
		}
	}
	rc.t.Fatalf("no recording %q", name)
	return nil
}

// writeRecordings scrubs and writes every response and the manifest,
// replacing the version's previous recordings.
func writeRecordings(t *testing.T, rc *recorder, dir string, flink *flinkCluster, kafka *kafkaBroker, job map[string]any) {
	m := recManifest{
		FlinkVersion: flink.Version,
		Line:         flink.Line.Name,
		Recorder:     "SKEWSCOPE_RECORD=1 go test -tags e2e -count=1 -run TestRecordRESTResponses ./e2e/ (e2e/record_test.go)",
		Job:          job,
		recScrub: recScrub{ScrubNote: "Only host-specific values are scrubbed: host names and IP addresses (-> localhost), ports (-> 0 or <port>), temp directory paths (-> /tmp/<scrubbed>); " +
			"ids, timestamps and metric values are as Flink sent them. 'scrubbed' lists the rules that changed something; empty means the responses held no host-specific value " +
			"(a MiniCluster reports its task executor as localhost with data port -1)."},
	}
	names := writeScrubbed(t, dir, flink, kafka, &m, rc.recs, "")
	scrubbed := strings.Join(m.Scrubbed, "; ")
	if scrubbed == "" {
		scrubbed = "nothing host-specific found"
	}
	t.Logf("scrubbed: %s; files:\n  %s", scrubbed, strings.Join(names, "\n  "))
}

// writeScrubbed scrubs recs, responses of flink's cluster, into dir (its
// previous .json files removed) with the manifest m, whose scrubbing rules
// and recordings it fills in, and returns the files' names, sorted.
// proxyURL, unless empty, is the recording proxy the responses came
// through, whose address is host-specific too.
func writeScrubbed(t *testing.T, dir string, flink *flinkCluster, kafka *kafkaBroker, m scrubbedManifest, recs []*recording, proxyURL string) []string {
	t.Helper()
	host, _ := os.Hostname()
	restURL, err := url.Parse(flink.REST.base)
	if err != nil {
		t.Fatal(err)
	}
	ports := []string{restURL.Port()}
	literal := []string{flink.Dir, "skewscope-e2e-", kafka.Bootstrap, flink.REST.base}
	if proxyURL != "" {
		pu, err := url.Parse(proxyURL)
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, pu.Port())
		literal = append(literal, proxyURL)
	}
	_, kafkaPort, _ := strings.Cut(kafka.Bootstrap, ":")
	sc := newScrubber([]string{host}, []string{flink.Dir, os.TempDir()}, append(ports, kafkaPort))
	part := m.scrubPart()
	part.Recordings = map[string]recManifestEntry{}
	files := scrubRecordings(t, sc, recs, part.Recordings)
	part.Scrubbed = sc.rules()
	files["manifest"] = manifestJSON(t, m)
	names := slices.Sorted(maps.Keys(files))
	var leaks []string
	for _, name := range names {
		if l := sc.leaks(string(files[name]), literal); len(l) > 0 {
			leaks = append(leaks, fmt.Sprintf("%s: %s", name, strings.Join(l, ", ")))
		}
	}
	if len(leaks) > 0 {
		t.Fatalf("host-specific values left after scrubbing: %s", strings.Join(leaks, "; "))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	total := 0
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(dir, name+".json"), files[name], 0o644); err != nil {
			t.Fatal(err)
		}
		total += len(files[name])
	}
	t.Logf("wrote %d files (%d KiB) to %s", len(files), total>>10, dir)
	return names
}

// compareRecordings checks that each live response has the top-level shape
// of the committed recording of the same name.
func compareRecordings(t *testing.T, rc *recorder, dir, version string) {
	mb, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatalf("no committed recordings for Flink %s (%v); record them with SKEWSCOPE_RECORD=1", version, err)
	}
	var m recManifest
	if err := json.Unmarshal(mb, &m); err != nil {
		t.Fatalf("%s/manifest.json: %v", dir, err)
	}
	if m.FlinkVersion != version {
		t.Fatalf("%s/manifest.json is for Flink %s, the cluster runs %s", dir, m.FlinkVersion, version)
	}
	seen := map[string]bool{}
	for _, r := range rc.recs {
		seen[r.name] = true
		e, ok := m.Recordings[r.name]
		if !ok {
			t.Errorf("%s: fetched live but not in the committed recordings; re-record with SKEWSCOPE_RECORD=1", r.name)
			continue
		}
		if p, _, _ := strings.Cut(e.Path, "?"); p != r.template || e.Status != r.status {
			t.Errorf("%s: live GET %s answered %d; recorded GET %s answered %d", r.name, r.template, r.status, p, e.Status)
		}
		b, err := os.ReadFile(filepath.Join(dir, r.name+".json"))
		if err != nil {
			t.Errorf("%s: %v", r.name, err)
			continue
		}
		rec, err := parseJSON(b)
		if err != nil {
			t.Errorf("%s.json: %v", r.name, err)
			continue
		}
		if got, want := r.node.shape(), rec.shape(); got != want {
			t.Errorf("%s (GET %s): live top-level shape differs from the recording\n  live:     %s\n  recorded: %s", r.name, r.manifestPath(), got, want)
		} else {
			t.Logf("%-45s %s", r.name, clip(got, 160))
		}
	}
	for name := range m.Recordings {
		if !seen[name] {
			t.Errorf("%s: recorded but not fetched live", name)
		}
	}
}

// scrubRecordings scrubs recs with sc into their files (name → indented
// JSON) and their manifest entries, added to entries.
func scrubRecordings(t *testing.T, sc *scrubber, recs []*recording, entries map[string]recManifestEntry) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, r := range recs {
		if _, dup := files[r.name]; dup {
			t.Fatalf("recording name %s used twice", r.name)
		}
		sc.tree(r.node)
		files[r.name] = r.node.pretty()
		v := map[string]string{}
		for k, val := range r.vars {
			v[k] = sc.str(val)
		}
		entries[r.name] = recManifestEntry{Method: http.MethodGet, Path: r.manifestPath(), Status: r.status, Vars: v}
	}
	return files
}

// manifestJSON is a recordings manifest as the files hold it: indented,
// with HTML characters left as they are.
func manifestJSON(t *testing.T, m any) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
