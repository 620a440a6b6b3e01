//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/skewscope/skewscope/assign"
)

// Recordings of the lifecycle (lifecycle_test.go) for the collector's unit
// tests: per step, the GET responses the dashboard's collector got in its
// one poll of that step, plus GET /jobs/:jobid/metrics?get=numRestarts
// (and, at the failover steps, GET /jobs/:jobid/exceptions?maxExceptions=10),
// under collectors/testdata/flink/lifecycle/<flink-version>/<step>/, with
// manifest.json naming each file's request (path template, query, vars,
// status) and the data path's owner of every partition at that step.
//
// With SKEWSCOPE_RECORD=1 the files are (re)written; without it the live
// responses are checked against the committed ones' top-level shape, as
// TestRecordRESTResponses does, except that arrays are only checked to be
// arrays (a first poll after a rescale may find an id list still empty).

const lifecycleRecordingsRoot = "../collectors/testdata/flink/lifecycle"

// restCall is one request through the recording proxy.
type restCall struct {
	path   string // as requested, escaped
	query  string // raw query
	status int
	body   []byte
}

// restRecorder is a reverse proxy in front of a Flink REST endpoint that
// keeps every GET and its response until take.
type restRecorder struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls []restCall
}

func newRESTRecorder(t *testing.T, base string) *restRecorder {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	rr := &restRecorder{}
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(u)
		pr.Out.Header.Del("Accept-Encoding") // identity bodies, recorded as sent
	}}
	rp.ModifyResponse = func(resp *http.Response) error {
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
		if resp.Request.Method == http.MethodGet {
			rr.mu.Lock()
			rr.calls = append(rr.calls, restCall{path: resp.Request.URL.EscapedPath(), query: resp.Request.URL.RawQuery, status: resp.StatusCode, body: b})
			rr.mu.Unlock()
		}
		return nil
	}
	rr.srv = httptest.NewServer(rp)
	t.Cleanup(rr.srv.Close)
	return rr
}

func (rr *restRecorder) URL() string { return rr.srv.URL }

// take returns the calls since the last take and forgets them.
func (rr *restRecorder) take() []restCall {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	out := rr.calls
	rr.calls = nil
	return out
}

// get requests path (with its query) through the proxy, so it is recorded.
func (rr *restRecorder) get(path string) (int, []byte, error) {
	resp, err := http.Get(rr.srv.URL + path)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// lifeStep is one recorded step of the lifecycle.
type lifeStep struct {
	Name        string
	Scenario    string // "rescale" or "failover"
	What        string
	Parallelism int
	History     []int
	OwnersFrom  string
	owners      map[assign.TopicPartition]int
	calls       []restCall
}

type lifeManifest struct {
	FlinkVersion  string           `json:"flinkVersion"`
	Line          string           `json:"line"`
	ConnectorLine string           `json:"connectorLine"`
	Scheduler     string           `json:"scheduler"`
	Recorder      string           `json:"recorder"`
	Job           map[string]any   `json:"job"`
	ScrubNote     string           `json:"scrubNote"`
	Scrubbed      []string         `json:"scrubbed"`
	Steps         []lifeManifestSt `json:"steps"`
}

type lifeManifestSt struct {
	Name        string `json:"name"`
	Scenario    string `json:"scenario"`
	What        string `json:"what"`
	Parallelism int    `json:"parallelism"`
	// History is the parallelism of the fresh start and of every in-place
	// rescale so far (assign.RestoreInput.History).
	History []int `json:"history"`
	// Owners is the data path's ground truth: per topic, the source
	// subtask that read a record of partition i at index i. OwnersFrom is
	// the step whose records gave it (the layout is the same).
	Owners     map[string][]int `json:"owners"`
	OwnersFrom string           `json:"ownersFrom"`
	Files      []lifeFile       `json:"files"`
}

// lifeFile is one recorded response. File is relative to the manifest; a
// response byte-identical to one of an earlier step points at that
// earlier file.
type lifeFile struct {
	Name   string            `json:"name"` // e.g. vertex-source-metrics-values(-2 for a second request of one poll)
	File   string            `json:"file"`
	Method string            `json:"method"`
	Path   string            `json:"path"`  // template, e.g. /jobs/{jobid}/vertices/{vertexid}/metrics
	Query  string            `json:"query"` // unescaped, "" for none
	Status int               `json:"status"`
	Vars   map[string]string `json:"vars,omitempty"`
}

// recordedFile is a call of a step, named and templated.
type recordedFile struct {
	name     string
	template string
	query    string
	vars     map[string]string
	status   int
	node     *jnode
}

// files names the calls of a step that the recordings keep: the job list,
// the job, its checkpoints, its numRestarts, its exception history (the
// failover steps), both vertices' details and the source vertex's metric
// ids and values. Other requests of the poll
// (/overview, the plan, backpressure, checkpoint details, the keyed
// vertex's metrics) are left out to keep the recordings small.
func (lr *lifecycleRun) files(t *testing.T, st *lifeStep) []recordedFile {
	t.Helper()
	roles := map[string]string{lr.srcID: "source"}
	j, err := lr.flink.REST.job(lr.jobID)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range j.Vertices {
		if v.ID != lr.srcID {
			roles[v.ID] = "keyed"
		}
	}
	var out []recordedFile
	seen := map[string]int{}
	for _, c := range st.calls {
		segs := strings.Split(strings.Trim(c.path, "/"), "/")
		q, err := url.QueryUnescape(c.query)
		if err != nil {
			q = c.query
		}
		var name, tmpl string
		v := map[string]string{}
		switch {
		case len(segs) == 2 && segs[0] == "jobs" && segs[1] == "overview":
			name, tmpl = "jobs-overview", "/jobs/overview"
		case len(segs) >= 2 && segs[0] == "jobs" && segs[1] == lr.jobID:
			v["jobid"] = lr.jobID
			rest := segs[2:]
			switch {
			case len(rest) == 0:
				name, tmpl = "job", "/jobs/{jobid}"
			case len(rest) == 1 && rest[0] == "checkpoints":
				name, tmpl = "job-checkpoints", "/jobs/{jobid}/checkpoints"
			case len(rest) == 1 && rest[0] == "metrics" && q == "get=numRestarts":
				name, tmpl = "job-metrics-numRestarts", "/jobs/{jobid}/metrics"
			case len(rest) == 1 && rest[0] == "exceptions":
				name, tmpl = "job-exceptions", "/jobs/{jobid}/exceptions"
			case len(rest) >= 2 && rest[0] == "vertices" && roles[rest[1]] != "":
				v["vertexid"] = rest[1]
				base := "vertex-" + roles[rest[1]]
				switch {
				case len(rest) == 2:
					name, tmpl = base, "/jobs/{jobid}/vertices/{vertexid}"
				case roles[rest[1]] != "source":
					// The keyed vertex's metrics say nothing about
					// partition owners and double the size.
				case len(rest) == 3 && rest[2] == "metrics" && q == "":
					name, tmpl = base+"-metrics-list", "/jobs/{jobid}/vertices/{vertexid}/metrics"
				case len(rest) == 3 && rest[2] == "metrics":
					name, tmpl = base+"-metrics-values", "/jobs/{jobid}/vertices/{vertexid}/metrics"
				}
			}
		}
		if name == "" {
			continue
		}
		// The collector splits long get= lists over requests: -2, -3, ….
		seen[name]++
		if seen[name] > 1 {
			if !strings.HasSuffix(name, "-metrics-values") {
				continue // asked twice in one poll; keep the first
			}
			name = fmt.Sprintf("%s-%d", name, seen[name])
		}
		n, err := parseJSON(c.body)
		if err != nil {
			t.Fatalf("step %s: GET %s?%s: not JSON: %v: %s", st.Name, c.path, c.query, err, clip(string(c.body), 300))
		}
		out = append(out, recordedFile{name: name, template: tmpl, query: q, vars: v, status: c.status, node: n})
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].name < out[b].name })
	return out
}

// ownersJSON is the manifest form of a truth: per topic, owner by partition.
func ownersJSON(owners map[assign.TopicPartition]int, topics []assign.Topic) map[string][]int {
	if owners == nil {
		return nil
	}
	out := map[string][]int{}
	for _, tp := range topics {
		l := make([]int, tp.Partitions)
		for i := range l {
			o, ok := owners[assign.TopicPartition{Topic: tp.Name, Partition: int32(i)}]
			if !ok {
				o = -1
			}
			l[i] = o
		}
		out[tp.Name] = l
	}
	return out
}

// recordings writes (SKEWSCOPE_RECORD=1) or checks the step recordings.
func (lr *lifecycleRun) recordings(t *testing.T) {
	t.Helper()
	dir := filepath.Join(lifecycleRecordingsRoot, lr.flink.Version)
	if os.Getenv("SKEWSCOPE_RECORD") != "1" {
		lr.compareRecordings(t, dir)
		return
	}
	host, _ := os.Hostname()
	restURL, err := url.Parse(lr.flink.REST.base)
	if err != nil {
		t.Fatal(err)
	}
	proxyURL, _ := url.Parse(lr.rec.URL())
	_, kafkaPort, _ := strings.Cut(lr.e.kafka.Bootstrap, ":")
	sc := newScrubber([]string{host}, []string{lr.flink.Dir, os.TempDir()}, []string{restURL.Port(), proxyURL.Port(), kafkaPort})
	m := lifeManifest{
		FlinkVersion:  lr.flink.Version,
		Line:          lr.flink.Line.Name,
		ConnectorLine: lr.flink.Line.ConnectorLine,
		Scheduler:     "adaptive (jobmanager.scheduler: adaptive; rescales by PUT /jobs/{jobid}/resource-requirements)",
		Recorder:      "SKEWSCOPE_RECORD=1 SKEWSCOPE_E2E_LINES=" + lr.flink.Line.Name + " go test -tags e2e -count=1 -run 'TestFlinkGroundTruth/flink-" + lr.flink.Line.Name + "/lifecycle' ./e2e/ (e2e/lifecycle_test.go)",
		Job: map[string]any{
			"name":                 lifeJob.Name,
			"topics":               topicsJSON(lifeTopics),
			"sourceParallelism":    "4, then 6, then 3 (keyed parallelism the same)",
			"checkpointIntervalMs": 2000,
			"metricsFetcherMs":     1000,
			"operators":            "KafkaSource \"Kafka Source\" -> \"Source Tagger\" (chained map: stamps the reading source subtask) -> keyBy(String key) -> \"Key Router\" -> KafkaSink \"Route Sink\"",
			"failover":             "a record keyed " + failOnceKey + " on partition 0 makes its reader throw once; the job restarts from its last checkpoint under the same id",
		},
		ScrubNote: "As in ../<flink-version>/manifest.json: only host-specific values are scrubbed (host names and IP addresses -> localhost, ports -> 0 or <port>, " +
			"temp directory paths -> /tmp/<scrubbed>); ids, timestamps and metric values are as Flink sent them. Files are the responses of one collector poll per step " +
			"(plus numRestarts), pretty-printed in the wire's key order; a response byte-identical to an earlier step's is not written again, its entry names the earlier file.",
		Scrubbed: []string{},
	}
	files := map[string][]byte{}
	byContent := map[string]string{}
	for _, st := range lr.steps {
		ms := lifeManifestSt{Name: st.Name, Scenario: st.Scenario, What: st.What, Parallelism: st.Parallelism, History: st.History,
			Owners: ownersJSON(st.owners, lifeTopics), OwnersFrom: st.OwnersFrom}
		for _, f := range lr.files(t, st) {
			sc.tree(f.node)
			b := f.node.pretty()
			rel := st.Name + "/" + f.name + ".json"
			if prev, ok := byContent[string(b)]; ok {
				rel = prev
			} else {
				byContent[string(b)] = rel
				files[rel] = b
			}
			vs := map[string]string{}
			for k, val := range f.vars {
				vs[k] = sc.str(val)
			}
			ms.Files = append(ms.Files, lifeFile{Name: f.name, File: rel, Method: http.MethodGet, Path: f.template, Query: f.query, Status: f.status, Vars: vs})
		}
		m.Steps = append(m.Steps, ms)
	}
	m.Scrubbed = sc.rules()
	files["manifest.json"] = manifestJSON(t, m)
	literal := []string{lr.flink.Dir, filepath.Join(os.TempDir(), "skewscope-e2e-"), lr.e.kafka.Bootstrap, lr.flink.REST.base, lr.rec.URL()}
	for name, b := range files {
		if l := sc.leaks(string(b), literal); len(l) > 0 {
			t.Errorf("%s: host-specific values left after scrubbing: %s", name, strings.Join(l, ", "))
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	total := 0
	for rel, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		total += len(b)
	}
	t.Logf("wrote %d files (%d KiB) for %d steps to %s", len(files), total>>10, len(m.Steps), dir)
}

// lifeShape is shape, except that any array is just "array".
func lifeShape(n *jnode) string {
	if n.kind == 'a' {
		return "array"
	}
	return n.shape()
}

// compareRecordings checks every live file against the committed file of
// the same step and name: same top-level shape (arrays: just arrays).
// Files only on one side are logged, not failed: which requests a poll
// makes belongs to the collector, which changes on its own.
func (lr *lifecycleRun) compareRecordings(t *testing.T, dir string) {
	t.Helper()
	mb, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatalf("no committed lifecycle recordings for Flink %s (%v); record them with SKEWSCOPE_RECORD=1", lr.flink.Version, err)
	}
	var m lifeManifest
	if err := json.Unmarshal(mb, &m); err != nil {
		t.Fatalf("%s/manifest.json: %v", dir, err)
	}
	committed := map[string]lifeFile{}
	var steps []string
	for _, st := range m.Steps {
		steps = append(steps, st.Name)
		for _, f := range st.Files {
			committed[st.Name+"/"+f.Name] = f
		}
	}
	var live []string
	for _, st := range lr.steps {
		live = append(live, st.Name)
		for _, f := range lr.files(t, st) {
			key := st.Name + "/" + f.name
			c, ok := committed[key]
			if !ok {
				t.Logf("%s: fetched live, not in the committed recordings (re-record with SKEWSCOPE_RECORD=1)", key)
				continue
			}
			delete(committed, key)
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(c.File)))
			if err != nil {
				t.Errorf("%s: %v", key, err)
				continue
			}
			rec, err := parseJSON(b)
			if err != nil {
				t.Errorf("%s: %v", c.File, err)
				continue
			}
			if c.Path != f.template || c.Status != f.status {
				t.Errorf("%s: live GET %s answered %d; recorded GET %s answered %d", key, f.template, f.status, c.Path, c.Status)
			}
			if got, want := lifeShape(f.node), lifeShape(rec); got != want {
				t.Errorf("%s (GET %s): live top-level shape differs from the recording\n  live:     %s\n  recorded: %s", key, f.template, got, want)
			}
		}
	}
	if !slices.Equal(live, steps) {
		t.Errorf("live steps %v, recorded steps %v", live, steps)
	}
	for key := range committed {
		t.Logf("%s: recorded but not fetched live", key)
	}
}
