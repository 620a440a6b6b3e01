//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Recordings of the event-time scenarios (eventtime_test.go) for the
// collector's unit tests: at the end of each scenario, with Flink's
// answers frozen where the scenario freezes them, the harness fetches one
// after another (within about a second) the job list, the job, its plan,
// both vertices, their metric-id lists, the values of every event-time,
// offset and load metric they list (through skewscope's client, which
// splits a long get= over requests within Flink's request-line limit:
// -2, -3, …) and both vertices' GET …/watermarks, through a recording
// proxy. With SKEWSCOPE_RECORD=1 they are written, scrubbed of
// host-specific values and pretty-printed in the wire's key order, to
// collectors/testdata/flink/eventtime/<flink-version>/<scenario>/ with a
// manifest.json (the scenario, what was written to each partition, the
// data path's owners, the watermarks the timestamps imply, and each file's
// request). Without it nothing under testdata is written: the same files
// go to a temp directory and are compared with the committed ones'
// format (file names, manifest keys, request templates, top-level shapes),
// and a difference fails the run.

const eventTimeRecordingsRoot = "../collectors/testdata/flink/eventtime"

// etManifest is a scenario's manifest.json.
type etManifest struct {
	FlinkVersion    string         `json:"flinkVersion"`
	Line            string         `json:"line"`
	Variant         string         `json:"variant"`
	What            string         `json:"what"`
	Recorder        string         `json:"recorder"`
	Job             map[string]any `json:"job"`
	Topic           string         `json:"topic"`
	Partitions      int            `json:"partitions"`
	HeldPartition   int            `json:"heldPartition"`
	Owners          []int          `json:"owners"`
	StarvedSubtasks []int          `json:"starvedSubtasks"`
	SourceVertex    string         `json:"sourceVertex"`
	KeyedVertex     string         `json:"keyedVertex"`
	Produced        []etProduced   `json:"produced"`
	Expected        map[string]any `json:"expected"`
	recScrub
}

// etMetricNames are the metrics whose values are recorded: the
// watermark gauges of every task and operator, the FLIP-33 reader gauges,
// the alignment drift, the Kafka offsets and the load the collector reads;
// with every split gauge (FLIP-513).
var (
	etMetricNames = map[string]bool{
		"currentInputWatermark": true, "currentOutputWatermark": true, "numRecordsInPerSecond": true, "numRecordsOutPerSecond": true,
		"currentEmitEventTimeLag": true, "currentFetchEventTimeLag": true, "watermarkLag": true, "sourceIdleTime": true,
		"pendingRecords": true, "watermarkAlignmentDrift": true, "accumulateIdleTimeMs": true, "backPressuredTimeMsPerSecond": true,
		"busyTimeMsPerSecond": true, "idleTimeMsPerSecond": true, "committedOffset": true, "currentOffset": true,
	}
	etSplitGaugeRE = regexp.MustCompile(`\.split\..+\.watermark\.`)
)

// etRecordedIDs picks the ids to record from a vertex's list, sorted.
func etRecordedIDs(ids []string) []string {
	var out []string
	for _, id := range ids {
		name := id[strings.LastIndexByte(id, '.')+1:]
		if (etMetricNames[name] && !strings.Contains(id, ".KafkaConsumer.")) || etSplitGaugeRE.MatchString(id) {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// record fetches the scenario's responses and writes them
// (SKEWSCOPE_RECORD=1) or checks their format against the committed ones.
func (r *etRun) record(t *testing.T) {
	t.Helper()
	proxy := newRESTRecorder(t, r.e.flink.REST.base)
	rc, err := newREST(proxy.URL())
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) {
		t.Helper()
		if _, _, err := proxy.get(path); err != nil {
			t.Fatal(err)
		}
	}
	job := "/jobs/" + r.jobID
	get("/jobs/overview")
	get(job)
	get(job + "/plan")
	get(job + "/vertices/" + r.srcID)
	get(job + "/vertices/" + r.keyID)
	for _, vid := range []string{r.srcID, r.keyID} {
		ids, err := rc.fc.VertexMetricIDs(t.Context(), r.jobID, vid)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rc.fc.VertexMetrics(t.Context(), r.jobID, vid, etRecordedIDs(ids)); err != nil {
			t.Fatal(err)
		}
	}
	get(job + "/vertices/" + r.srcID + "/watermarks")
	get(job + "/vertices/" + r.keyID + "/watermarks")
	recs := r.recordings(t, proxy.take())

	m := r.manifest()
	r.e.keepRecordings(t, eventTimeRecordingsRoot, r.sc.Name, &m, recs, proxy.URL())
}

// keepRecordings writes recs, the responses of scenario name, and the
// manifest m to root/<flink-version>/name with SKEWSCOPE_RECORD=1.
// Without it nothing under testdata is written: they go to a temp
// directory, whose format must be that of the committed ones. The unit
// tests read the committed files: a Flink whose answers no longer have
// their form fails here, not silently there. proxyURL is as writeScrubbed
// takes it.
func (e *lineEnv) keepRecordings(t *testing.T, root, name string, m scrubbedManifest, recs []*recording, proxyURL string) {
	t.Helper()
	committed := filepath.Join(root, e.flink.Version, name)
	if os.Getenv("SKEWSCOPE_RECORD") == "1" {
		writeScrubbed(t, committed, e.flink, e.kafka, m, recs, proxyURL)
		return
	}
	tmp := t.TempDir()
	writeScrubbed(t, tmp, e.flink, e.kafka, m, recs, proxyURL)
	if diffs := compareETFormat(committed, tmp); len(diffs) > 0 {
		t.Errorf("recordings (not written, SKEWSCOPE_RECORD unset) differ in format from the committed %s/%s (re-record with SKEWSCOPE_RECORD=1 and check the unit tests):\n  %s",
			e.flink.Version, name, strings.Join(diffs, "\n  "))
		return
	}
	t.Logf("recordings (not written, SKEWSCOPE_RECORD unset): same files, manifest keys, requests and top-level shapes as the committed %s/%s", e.flink.Version, name)
}

// recordings names the proxied calls as the manifest does.
func (r *etRun) recordings(t *testing.T, calls []restCall) []*recording {
	t.Helper()
	roles := map[string]string{r.srcID: "source", r.keyID: "keyed"}
	seen := map[string]int{}
	var out []*recording
	for _, c := range calls {
		segs := strings.Split(strings.Trim(c.path, "/"), "/")
		v := map[string]string{}
		var name, tmpl string
		switch {
		case len(segs) == 2 && segs[0] == "jobs" && segs[1] == "overview":
			name, tmpl = "jobs-overview", "/jobs/overview"
		case len(segs) == 2 && segs[1] == r.jobID:
			name, tmpl = "job", "/jobs/{jobid}"
		case len(segs) == 3 && segs[1] == r.jobID && segs[2] == "plan":
			name, tmpl = "job-plan", "/jobs/{jobid}/plan"
		case len(segs) >= 4 && segs[1] == r.jobID && segs[2] == "vertices" && roles[segs[3]] != "":
			v["vertexid"] = segs[3]
			base := "vertex-" + roles[segs[3]]
			switch {
			case len(segs) == 4:
				name, tmpl = base, "/jobs/{jobid}/vertices/{vertexid}"
			case len(segs) == 5 && segs[4] == "watermarks":
				name, tmpl = base+"-watermarks", "/jobs/{jobid}/vertices/{vertexid}/watermarks"
			case len(segs) == 5 && segs[4] == "metrics" && c.query == "":
				name, tmpl = base+"-metrics-list", "/jobs/{jobid}/vertices/{vertexid}/metrics"
			case len(segs) == 5 && segs[4] == "metrics":
				name, tmpl = base+"-metrics-values", "/jobs/{jobid}/vertices/{vertexid}/metrics"
			}
		}
		if name == "" {
			t.Fatalf("unexpected recorded request GET %s?%s", c.path, c.query)
		}
		if tmpl != "/jobs/overview" {
			v["jobid"] = r.jobID
		}
		if seen[name]++; seen[name] > 1 {
			name = fmt.Sprintf("%s-%d", name, seen[name])
		}
		if c.status != http.StatusOK {
			t.Fatalf("%s: GET %s answered %d: %s", name, c.path, c.status, clip(string(c.body), 300))
		}
		n, err := parseJSON(c.body)
		if err != nil {
			t.Fatalf("%s: GET %s: not JSON: %v", name, c.path, err)
		}
		var query [][2]string
		if c.query != "" {
			qv, err := url.ParseQuery(c.query)
			if err != nil || len(qv) != 1 || len(qv["get"]) != 1 {
				t.Fatalf("%s: query %q: want one get=", name, c.query)
			}
			query = [][2]string{{"get", qv.Get("get")}}
		}
		out = append(out, &recording{name: name, template: tmpl, query: query, vars: v, status: c.status, body: c.body, node: n})
	}
	for _, want := range []string{"jobs-overview", "job", "job-plan", "vertex-source", "vertex-keyed", "vertex-source-metrics-list",
		"vertex-keyed-metrics-list", "vertex-source-metrics-values", "vertex-keyed-metrics-values", "vertex-source-watermarks", "vertex-keyed-watermarks"} {
		if seen[want] == 0 {
			t.Fatalf("no %s among the recorded requests", want)
		}
	}
	return out
}

// manifest describes the scenario as recorded.
func (r *etRun) manifest() etManifest {
	sc := r.sc
	job := map[string]any{
		"autoWatermarkInterval": "200 ms (Flink's default)",
		"boundMs":               etBoundMs,
		"checkpointIntervalMs":  2000,
		"eventTime":             fmt.Sprintf("record n of partition p has timestamp firstTs(p) + n·%d ms, one record per partition every %dms; firstTs is %d min behind the wall clock at the start", etTickMs, etTickMs, int(etStartBehind.Minutes())),
		"idleMs":                sc.IdleMs,
		"keyedParallelism":      etKeyedP,
		"metricsFetcherMs":      1000,
		"name":                  r.spec.Name,
		"operators":             "KafkaSource \"Kafka Source\" -> \"Source Tagger\" (chained map) -> keyBy(String key) -> \"Key Router\" -> KafkaSink \"Route Sink\"",
		"sourceParallelism":     sc.SourceP,
		"watermarkStrategy":     fmt.Sprintf("WatermarkStrategy.forBoundedOutOfOrderness(%d ms) on the Kafka record timestamp", etBoundMs),
	}
	if sc.Align {
		job["alignment"] = map[string]any{
			"allowUnalignedSourceSplits": false,
			"group":                      r.spec.AlignGroup,
			"maxDriftMs":                 r.spec.AlignDriftMs,
			"slowPartitionBehindMs":      sc.BehindMs,
			"updateIntervalMs":           r.spec.AlignUpdateMs,
		}
	}
	exp := map[string]any{}
	switch sc.Name {
	case "idle":
		w := r.heldWatermark(sc.Held)
		exp["heldSubtask"], exp["heldSubtaskOutputWatermark"], exp["keyedMinInputWatermark"] = r.owners[sc.Held], w, w
		exp["rule"] = "BoundedOutOfOrdernessWatermarks: last timestamp of the held partition − boundMs − 1; downstream the minimum over the readers"
	case "idleness":
		w := r.heldWatermark(sc.Held)
		exp["heldSubtask"], exp["heldSubtaskOutputWatermark"], exp["keyedMinInputWatermarkAbove"] = r.owners[sc.Held], w, w+sc.IdleMs
		exp["rule"] = "withIdleness: the idle reader keeps its last output watermark; downstream skips it"
	case "starved":
		exp["keyedMinInputWatermark"], exp["starvedOutputWatermark"], exp["starvedSubtasks"] = int64(math.MinInt64), int64(math.MinInt64), r.starved
		exp["rule"] = "a reader without a split emits no watermark (Long.MIN_VALUE); without idleness the keyed vertex waits for it"
	case "aligned":
		w := r.heldWatermark(sc.Held)
		var ahead []int
		paused := -1
		for p, o := range r.owners {
			if p != sc.Held {
				ahead = append(ahead, p)
				if o != r.owners[sc.Held] {
					paused = o
				}
			}
		}
		exp["keyedMinInputWatermark"], exp["slowPartition"], exp["slowSubtask"], exp["slowSubtaskOutputWatermark"] = w, sc.Held, r.owners[sc.Held], w
		exp["pausedSubtask"], exp["pausedSubtaskDriftAbove"], exp["splitPausedPartitions"] = paused, 0, ahead
		exp["rule"] = "alignment: a reader or split ahead of the group minimum + maxDrift is paused; downstream the minimum over the readers, the slow partition's last timestamp − boundMs − 1"
	}
	starved := r.starved
	if starved == nil {
		starved = []int{}
	}
	return etManifest{
		FlinkVersion: r.e.flink.Version, Line: r.e.line.Name, Variant: sc.Name, What: sc.What,
		Recorder: "SKEWSCOPE_RECORD=1 SKEWSCOPE_E2E_LINES=" + r.e.line.Name + " go test -tags e2e -count=1 -run 'TestFlinkGroundTruth/flink-" + r.e.line.Name + "/eventtime' ./e2e/ (e2e/eventtime_test.go)",
		Job:      job, Topic: r.topic.Name, Partitions: r.topic.Partitions, HeldPartition: sc.Held, Owners: r.owners, StarvedSubtasks: starved,
		SourceVertex: r.srcID, KeyedVertex: r.keyID, Produced: r.prod.produced(), Expected: exp,
		recScrub: recScrub{ScrubNote: "As in ../../<flink-version>/manifest.json: only host-specific values are scrubbed; ids, timestamps and metric values are as Flink sent them. " +
			"The responses were fetched one after another within about a second, Flink's metric store refreshing every second."},
	}
}

// compareETFormat lists how the recordings in dir differ in format from
// those in committed: the files, the manifest's keys (top level, job,
// expected, each produced entry), each recording's request (path
// template, status, vars) and each file's top-level shape.
func compareETFormat(committed, dir string) []string {
	var diffs []string
	names := func(d string) []string {
		fs, _ := filepath.Glob(filepath.Join(d, "*.json"))
		var out []string
		for _, f := range fs {
			out = append(out, strings.TrimSuffix(filepath.Base(f), ".json"))
		}
		sort.Strings(out)
		return out
	}
	cn, ln := names(committed), names(dir)
	if len(cn) == 0 {
		return []string{"no committed recordings in " + committed}
	}
	if !slices.Equal(cn, ln) {
		diffs = append(diffs, fmt.Sprintf("files: committed %v, now %v", cn, ln))
	}
	read := func(d, name string) *jnode {
		b, err := os.ReadFile(filepath.Join(d, name+".json"))
		if err != nil {
			diffs = append(diffs, err.Error())
			return nil
		}
		n, err := parseJSON(b)
		if err != nil {
			diffs = append(diffs, fmt.Sprintf("%s/%s.json: %v", d, name, err))
		}
		return n
	}
	cm, lm := read(committed, "manifest"), read(dir, "manifest")
	if cm == nil || lm == nil {
		return diffs
	}
	keys := func(n *jnode) string {
		if n == nil || n.kind != 'o' {
			return "not an object"
		}
		return strings.Join(n.keys, ",")
	}
	if a, b := keys(cm), keys(lm); a != b {
		diffs = append(diffs, fmt.Sprintf("manifest keys: committed %s, now %s", a, b))
	}
	for _, k := range []string{"job", "expected"} {
		if a, b := keys(cm.get(k)), keys(lm.get(k)); a != b {
			diffs = append(diffs, fmt.Sprintf("manifest %s keys: committed %s, now %s", k, a, b))
		}
	}
	if cp, lp := cm.get("produced"), lm.get("produced"); cp != nil && lp != nil && len(cp.elems) > 0 && len(lp.elems) > 0 {
		if a, b := keys(cp.elems[0]), keys(lp.elems[0]); a != b {
			diffs = append(diffs, fmt.Sprintf("manifest produced keys: committed %s, now %s", a, b))
		}
	}
	var cr, lr map[string]recManifestEntry
	if err := json.Unmarshal([]byte(rawOf(committed)), &struct {
		R *map[string]recManifestEntry `json:"recordings"`
	}{&cr}); err != nil {
		diffs = append(diffs, "committed manifest: "+err.Error())
	}
	if err := json.Unmarshal([]byte(rawOf(dir)), &struct {
		R *map[string]recManifestEntry `json:"recordings"`
	}{&lr}); err != nil {
		diffs = append(diffs, "manifest: "+err.Error())
	}
	for name, c := range cr {
		l, ok := lr[name]
		if !ok {
			diffs = append(diffs, "recording "+name+" not made now")
			continue
		}
		cpath, _, _ := strings.Cut(c.Path, "?")
		lpath, _, _ := strings.Cut(l.Path, "?")
		if cpath != lpath || c.Method != l.Method || c.Status != l.Status || strings.Contains(c.Path, "?") != strings.Contains(l.Path, "?") {
			diffs = append(diffs, fmt.Sprintf("recording %s: committed %s %s (%d), now %s %s (%d)", name, c.Method, clip(c.Path, 80), c.Status, l.Method, clip(l.Path, 80), l.Status))
		}
		if !slices.Equal(slices.Sorted(maps.Keys(c.Vars)), slices.Sorted(maps.Keys(l.Vars))) {
			diffs = append(diffs, fmt.Sprintf("recording %s: vars %v, now %v", name, c.Vars, l.Vars))
		}
	}
	for name := range lr {
		if _, ok := cr[name]; !ok {
			diffs = append(diffs, "recording "+name+" made now, not committed")
		}
	}
	for _, name := range cn {
		if name == "manifest" || !slices.Contains(ln, name) {
			continue
		}
		c, l := read(committed, name), read(dir, name)
		if c != nil && l != nil && lifeShape(c) != lifeShape(l) {
			diffs = append(diffs, fmt.Sprintf("%s: committed shape %s, now %s", name, clip(lifeShape(c), 200), clip(lifeShape(l), 200)))
		}
	}
	return diffs
}

func rawOf(dir string) string {
	b, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	return string(b)
}
