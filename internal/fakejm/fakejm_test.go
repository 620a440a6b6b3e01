package fakejm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/assign"
)

const recordings = "../../collectors/testdata/flink/2.3.0"

// recordedConfig is the recorded job's shape: source parallelism 3, two
// topics of 5 and 3 partitions, max parallelism 128, with the event-time
// gauges the recording lists.
var recordedConfig = Config{
	Jobs: 1, Parallelism: 3, MaxParallelism: 128,
	Topics:    []assign.Topic{{Name: "orders", Partitions: 5}, {Name: "payments.v1", Partitions: 3}},
	EventTime: true,
}

// withoutWatermarkLag drops the readers' watermarkLag ids: the recorded
// job had no watermark strategy (its gauges read Long.MIN_VALUE), so its
// readers, having emitted no watermark, never registered the gauge; the
// fake's jobs with Config.EventTime have.
func withoutWatermarkLag(ids []string) []string {
	return slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return strings.HasSuffix(id, ".watermarkLag") })
}

func newHandler(t testing.TB, cfg Config) *Handler {
	t.Helper()
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// get answers one request; it fails the test unless the status is want.
func get(t testing.TB, h http.Handler, uri string, want int) []byte {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, uri, nil))
	if w.Code != want {
		t.Fatalf("GET %.120s = %d %.200s, want %d", uri, w.Code, w.Body, want)
	}
	return w.Body.Bytes()
}

func decode[T any](t testing.TB, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("decoding %.200s: %v", b, err)
	}
	return v
}

type ids = []struct {
	ID string `json:"id"`
}

// jobVertices returns the first job's id and its vertex ids by role.
func jobVertices(t testing.TB, h http.Handler) (string, [numRoles]string) {
	t.Helper()
	ov := decode[struct {
		Jobs []struct {
			JID string `json:"jid"`
		} `json:"jobs"`
	}](t, get(t, h, "/jobs/overview", 200))
	if len(ov.Jobs) == 0 {
		t.Fatal("no jobs")
	}
	jid := ov.Jobs[0].JID
	j := decode[struct {
		Vertices []struct {
			ID string `json:"id"`
		} `json:"vertices"`
	}](t, get(t, h, "/jobs/"+jid, 200))
	if len(j.Vertices) != int(numRoles) {
		t.Fatalf("job has %d vertices, want %d", len(j.Vertices), numRoles)
	}
	var vs [numRoles]string
	for i, v := range j.Vertices {
		vs[i] = v.ID
	}
	return jid, vs
}

func listIDs(t testing.TB, b []byte) []string {
	t.Helper()
	var out []string
	for _, m := range decode[ids](t, b) {
		out = append(out, m.ID)
	}
	return out
}

func recordedIDs(t testing.TB, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(recordings, name))
	if err != nil {
		t.Fatal(err)
	}
	return listIDs(t, b)
}

// bySubtask groups "<subtask>.<rest>" ids by subtask, rests sorted.
func bySubtask(t testing.TB, list []string) map[int][]string {
	t.Helper()
	out := map[int][]string{}
	for _, id := range list {
		s, rest, ok := strings.Cut(id, ".")
		n, err := strconv.Atoi(s)
		if !ok || err != nil {
			t.Fatalf("id %q has no subtask prefix", id)
		}
		out[n] = append(out[n], rest)
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}

// TestRecordedSourceIDs: configured like the recorded job, the fake's
// source vertex lists exactly the ids Flink 2.3.0 listed, subtask by
// subtask (which also checks the partition assignment).
func TestRecordedSourceIDs(t *testing.T) {
	h := newHandler(t, recordedConfig)
	jid, vs := jobVertices(t, h)
	got := withoutWatermarkLag(listIDs(t, get(t, h, "/jobs/"+jid+"/vertices/"+vs[roleSource]+"/metrics", 200)))
	want := recordedIDs(t, "vertex-source-metrics-list.json")
	if len(got) != len(want) {
		t.Errorf("source vertex lists %d ids, the recording %d", len(got), len(want))
	}
	if d := cmp.Diff(bySubtask(t, want), bySubtask(t, got)); d != "" {
		t.Errorf("source vertex ids by subtask (-recorded +fake):\n%s", d)
	}
}

// TestRecordedKeyedIDs: the recorded job chains the keyed operator with
// the sink; the fake splits them into two vertices, which together list
// per subtask what the recorded vertex listed.
func TestRecordedKeyedIDs(t *testing.T) {
	h := newHandler(t, recordedConfig)
	jid, vs := jobVertices(t, h)
	want := bySubtask(t, recordedIDs(t, "vertex-keyed-metrics-list.json"))[0]
	keyed := bySubtask(t, listIDs(t, get(t, h, "/jobs/"+jid+"/vertices/"+vs[roleKeyed]+"/metrics", 200)))
	sink := bySubtask(t, listIDs(t, get(t, h, "/jobs/"+jid+"/vertices/"+vs[roleSink]+"/metrics", 200)))
	for i := range recordedConfig.Parallelism {
		got := slices.Compact(slices.Sorted(slices.Values(slices.Concat(keyed[i], sink[i]))))
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("subtask %d: keyed and sink ids (-recorded +fake):\n%s", i, d)
		}
	}
}

// TestPartitionIDsFollowOwners: every partition's nine ids are listed
// under its owner (assign.KafkaSplitOwner) and nowhere else.
func TestPartitionIDsFollowOwners(t *testing.T) {
	cfg := Config{Jobs: 1, Parallelism: 7, Partitions: 40, Topics: []assign.Topic{{Name: "a.b"}, {Name: "c"}, {Name: "d"}}, EventTime: true}
	h := newHandler(t, cfg)
	jid, vs := jobVertices(t, h)
	list := listIDs(t, get(t, h, "/jobs/"+jid+"/vertices/"+vs[roleSource]+"/metrics", 200))
	re := regexp.MustCompile(`^(\d+)\.Source__Kafka_Source\.(?:KafkaSourceReader\.topic\.(.+)\.partition\.(\d+)\.\w+|split\.(.+)-(\d+)\.watermark\.\w+)$`)
	seen := map[string]int{}
	for _, id := range list {
		m := re.FindStringSubmatch(id)
		if m == nil {
			continue
		}
		topic, part := m[2]+m[4], m[3]+m[5]
		sub, _ := strconv.Atoi(m[1])
		p, _ := strconv.Atoi(part)
		real := map[string]string{"a_b": "a.b", "c": "c", "d": "d"}[topic]
		owner, err := assign.KafkaSplitOwner(assign.TopicPartition{Topic: real, Partition: int32(p)}, cfg.Parallelism)
		if err != nil || owner != sub {
			t.Errorf("%s listed under subtask %d, KafkaSplitOwner = %d, %v", id, sub, owner, err)
		}
		seen[topic+"-"+part]++
	}
	// 40 over three topics: 14, 13, 13.
	if len(seen) != 40 {
		t.Errorf("%d partitions listed, want 40", len(seen))
	}
	for p, n := range seen {
		if n != 9 {
			t.Errorf("partition %s has %d ids, want 9", p, n)
		}
	}
	if want := "a_b-13"; seen[want] == 0 || seen["c-13"] != 0 {
		t.Errorf("topic a.b should have 14 partitions and c 13: %v", slices.Sorted(func(yield func(string) bool) {
			for k := range seen {
				if !yield(k) {
					return
				}
			}
		}))
	}
}

// shape lists the key paths of a JSON document, arrays collapsed to [] and
// hex ids (object keys naming vertices) to <id>.
func shape(t testing.TB, b []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%.200s: %v", b, err)
	}
	hexID := regexp.MustCompile(`^[0-9a-f]{32}$`)
	set := map[string]bool{}
	var walk func(p string, v any)
	walk = func(p string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if hexID.MatchString(k) {
					k = "<id>"
				}
				set[p+"."+k] = true
				walk(p+"."+k, e)
			}
		case []any:
			for _, e := range x {
				walk(p+"[]", e)
			}
		}
	}
	walk("", v)
	return slices.Sorted(func(yield func(string) bool) {
		for k := range set {
			if !yield(k) {
				return
			}
		}
	})
}

// TestRecordedShapes: every answer has the recorded answer's fields.
func TestRecordedShapes(t *testing.T) {
	h := newHandler(t, recordedConfig)
	jid, vs := jobVertices(t, h)
	cps := decode[struct {
		Latest struct {
			Completed struct {
				ID int64 `json:"id"`
			} `json:"completed"`
		} `json:"latest"`
	}](t, get(t, h, "/jobs/"+jid+"/checkpoints", 200))
	cp := strconv.FormatInt(cps.Latest.Completed.ID, 10)
	for _, c := range []struct{ file, uri string }{
		{"overview.json", "/overview"},
		{"jobs-overview.json", "/jobs/overview"},
		{"job.json", "/jobs/" + jid},
		{"job-plan.json", "/jobs/" + jid + "/plan"},
		{"job-checkpoints.json", "/jobs/" + jid + "/checkpoints"},
		{"checkpoint-details.json", "/jobs/" + jid + "/checkpoints/details/" + cp},
		{"checkpoint-subtasks-source.json", "/jobs/" + jid + "/checkpoints/details/" + cp + "/subtasks/" + vs[roleSource]},
		{"job-metrics-list.json", "/jobs/" + jid + "/metrics"},
		{"job-metrics-values.json", "/jobs/" + jid + "/metrics?get=numberOfFailedCheckpoints,numberOfCompletedCheckpoints,lastCheckpointSize,numRestarts,lastCheckpointFullSize,lastCompletedCheckpointId,lastCheckpointDuration,uptime"},
		{"vertex-source.json", "/jobs/" + jid + "/vertices/" + vs[roleSource]},
		{"vertex-keyed.json", "/jobs/" + jid + "/vertices/" + vs[roleKeyed]},
		{"vertex-source-backpressure.json", "/jobs/" + jid + "/vertices/" + vs[roleSource] + "/backpressure"},
	} {
		rec, err := os.ReadFile(filepath.Join(recordings, c.file))
		if err != nil {
			t.Fatal(err)
		}
		// The subtask summary's checkpoint_duration and alignment
		// statistics are not modelled.
		var want []string
		for _, p := range shape(t, rec) {
			if !strings.HasPrefix(p, ".summary.checkpoint_duration") && !strings.HasPrefix(p, ".summary.alignment") || c.file != "checkpoint-subtasks-source.json" {
				want = append(want, p)
			}
		}
		if d := cmp.Diff(want, shape(t, get(t, h, c.uri, 200))); d != "" {
			t.Errorf("GET %s: fields (-%s +fake):\n%s", c.uri, c.file, d)
		}
	}
}

type value struct {
	ID    string `json:"id"`
	Value string `json:"value"`
}

func values(t testing.TB, h http.Handler, path string, ids ...string) []value {
	t.Helper()
	esc := make([]string, len(ids))
	for i, id := range ids {
		esc[i] = url.QueryEscape(id)
	}
	return decode[[]value](t, get(t, h, path+"?get="+strings.Join(esc, ","), 200))
}

// TestMetricValues: requested ids the vertex lists, in the requested
// order; others dropped, as Flink drops them.
func TestMetricValues(t *testing.T) {
	h := newHandler(t, recordedConfig)
	jid, vs := jobVertices(t, h)
	path := "/jobs/" + jid + "/vertices/" + vs[roleSource] + "/metrics"
	off := "Source__Kafka_Source.KafkaSourceReader.topic.orders.partition.3.currentOffset"
	got := values(t, h, path,
		"1.busyTimeMsPerSecond", "0."+off, "2."+off, "9.busyTimeMsPerSecond", "0.noSuchMetric",
		"01.idleTimeMsPerSecond", "1.idleTimeMsPerSecond", "1.backPressuredTimeMsPerSecond",
		"0.Source__Kafka_Source.split.orders-3.watermark.currentWatermark")
	var gotIDs []string
	for _, v := range got {
		gotIDs = append(gotIDs, v.ID)
	}
	wantIDs := []string{"1.busyTimeMsPerSecond", "0." + off, "1.idleTimeMsPerSecond", "1.backPressuredTimeMsPerSecond",
		"0.Source__Kafka_Source.split.orders-3.watermark.currentWatermark"}
	if d := cmp.Diff(wantIDs, gotIDs); d != "" {
		t.Fatalf("answered ids (-want +got):\n%s", d)
	}
	var sum float64
	for _, v := range got[2:4] {
		x, err := strconv.ParseFloat(v.Value, 64)
		if err != nil {
			t.Fatal(err)
		}
		sum += x
	}
	busy, err := strconv.ParseFloat(got[0].Value, 64)
	if err != nil || !strings.HasSuffix(got[0].Value, ".0") || sum+busy != 1000 {
		t.Errorf("busy %q + idle + backpressured = %v, want a Double and 1000", got[0].Value, sum+busy)
	}
	// The split's watermark is an event time, and its reader's is the
	// lowest of its splits'.
	out := values(t, h, path, "0.Source__Kafka_Source.currentOutputWatermark")
	split, err1 := strconv.ParseInt(got[4].Value, 10, 64)
	low, err2 := strconv.ParseInt(out[0].Value, 10, 64)
	if err1 != nil || err2 != nil || low < startMs || low > split {
		t.Errorf("split watermark %q, its reader's %q: want event times, the reader's the lower", got[4].Value, out[0].Value)
	}

	// Offsets grow from one request to the next; the committed offset
	// (next to read) is at most one past the current one.
	prev := int64(-1)
	for range 3 {
		vs := values(t, h, path, "0."+off, "0."+strings.Replace(off, "currentOffset", "committedOffset", 1))
		if len(vs) != 2 {
			t.Fatalf("offsets: %v", vs)
		}
		cur, err1 := strconv.ParseInt(vs[0].Value, 10, 64)
		com, err2 := strconv.ParseInt(vs[1].Value, 10, 64)
		if err1 != nil || err2 != nil || cur <= prev || com > cur+1 || com < 0 {
			t.Fatalf("offsets current %q committed %q after %d", vs[0].Value, vs[1].Value, prev)
		}
		prev = cur
	}

	// The subtask endpoint: ids without the prefix.
	sub := values(t, h, "/jobs/"+jid+"/vertices/"+vs[roleSource]+"/subtasks/0/metrics", off, "busyTimeMsPerSecond", "0.busyTimeMsPerSecond")
	if len(sub) != 2 || sub[0].ID != off || sub[1].ID != "busyTimeMsPerSecond" {
		t.Errorf("subtask 0 values = %v, want %s and busyTimeMsPerSecond", sub, off)
	}
	subList := listIDs(t, get(t, h, "/jobs/"+jid+"/vertices/"+vs[roleSource]+"/subtasks/0/metrics", 200))
	if want := bySubtask(t, recordedIDs(t, "vertex-source-metrics-list.json"))[0]; !cmp.Equal(want, slices.Sorted(slices.Values(withoutWatermarkLag(subList)))) {
		t.Errorf("subtask 0 lists %d ids, want the recorded %d", len(subList), len(want))
	}

	jm := values(t, h, "/jobs/"+jid+"/metrics", "numRestarts", "nope")
	if len(jm) != 1 || jm[0] != (value{"numRestarts", "0"}) {
		t.Errorf("job metrics = %v, want numRestarts 0", jm)
	}
}

func TestCheckpointsAdvance(t *testing.T) {
	cfg := recordedConfig
	cfg.CheckpointEvery = 2
	h := newHandler(t, cfg)
	jid, vs := jobVertices(t, h)
	latest := func() int64 {
		return decode[struct {
			Latest struct {
				Completed struct {
					ID int64 `json:"id"`
				} `json:"completed"`
			} `json:"latest"`
			History []struct {
				ID int64 `json:"id"`
			} `json:"history"`
		}](t, get(t, h, "/jobs/"+jid+"/checkpoints", 200)).Latest.Completed.ID
	}
	var got []int64
	for range 5 {
		got = append(got, latest())
	}
	if want := []int64{10, 10, 11, 11, 12}; !slices.Equal(got, want) {
		t.Errorf("latest checkpoint ids = %v, want %v", got, want)
	}
	base := "/jobs/" + jid + "/checkpoints/details/"
	sub := decode[struct {
		ID       int64 `json:"id"`
		Subtasks []struct {
			Index     int    `json:"index"`
			StateSize int64  `json:"state_size"`
			Status    string `json:"status"`
		} `json:"subtasks"`
	}](t, get(t, h, base+"12/subtasks/"+vs[roleKeyed], 200))
	if sub.ID != 12 || len(sub.Subtasks) != cfg.Parallelism || sub.Subtasks[2].Index != 2 || sub.Subtasks[2].StateSize <= 0 || sub.Subtasks[2].Status != "completed" {
		t.Errorf("checkpoint 12 subtasks = %+v", sub)
	}
	get(t, h, base+"2/subtasks/"+vs[roleKeyed], 404) // the history holds 3..12
	get(t, h, base+"13", 404)                        // not yet
	get(t, h, base+"x", http.StatusBadRequest)       // Flink parses the id as a long
}

// TestExceptions: nothing fails in the layout's jobs, so the history is
// empty, in Flink 2.x's shape; a maxExceptions that is not a number is
// refused as Flink refuses it.
func TestExceptions(t *testing.T) {
	h := newHandler(t, recordedConfig)
	jid, _ := jobVertices(t, h)
	x := decode[struct {
		ExceptionHistory *struct {
			Entries   []json.RawMessage `json:"entries"`
			Truncated *bool             `json:"truncated"`
		} `json:"exceptionHistory"`
	}](t, get(t, h, "/jobs/"+jid+"/exceptions?maxExceptions=10", 200))
	if x.ExceptionHistory == nil || x.ExceptionHistory.Entries == nil || len(x.ExceptionHistory.Entries) != 0 || x.ExceptionHistory.Truncated == nil {
		t.Errorf("exceptions = %+v, want an empty history with truncated", x.ExceptionHistory)
	}
	get(t, h, "/jobs/"+jid+"/exceptions?maxExceptions=x", http.StatusBadRequest)
}

func TestUnknownAndRefused(t *testing.T) {
	h := newHandler(t, recordedConfig)
	jid, _ := jobVertices(t, h)
	h.Reset()
	body := get(t, h, "/jobs/"+jid+"/accumulators", 404)
	if e := decode[struct{ Errors []string }](t, body); len(e.Errors) != 1 {
		t.Errorf("404 body %s, want Flink's {\"errors\":[...]}", body)
	}
	get(t, h, "/jobs/0123/vertices/abc/metrics", 404)
	get(t, h, "/jobs/"+jid+"/vertices/abc/backpressure", 404)
	long := "/jobs/" + jid + "/metrics?get=" + strings.Repeat("x", maxRequestLine)
	get(t, h, long, http.StatusRequestEntityTooLarge)
	st := h.Stats()
	if st.Kind(KindNotFound).Requests != 3 || st.Kind(KindRejected).Requests != 1 || st.Failed() != 4 {
		t.Errorf("stats %+v, want 3 not found and 1 refused", st)
	}
	if len(st.Unanswered) != 4 || st.Unanswered[0] != "/jobs/"+jid+"/accumulators" {
		t.Errorf("unanswered = %q", st.Unanswered)
	}
}

// TestStats: counts and body bytes per kind, Sub and Reset.
func TestStats(t *testing.T) {
	h := newHandler(t, recordedConfig)
	jid, vs := jobVertices(t, h) // jobs-overview + job
	before := h.Stats()
	list := get(t, h, "/jobs/"+jid+"/vertices/"+vs[roleSource]+"/metrics", 200)
	vals := get(t, h, "/jobs/"+jid+"/vertices/"+vs[roleSource]+"/metrics?get=0.busyTimeMsPerSecond", 200)
	bp := get(t, h, "/jobs/"+jid+"/vertices/"+vs[roleSink]+"/backpressure", 200)
	d := h.Stats().Sub(before)
	want := Stats{
		Total: Count{3, int64(len(list) + len(vals) + len(bp))},
		ByKind: map[string]Count{
			"metric-list": {1, int64(len(list))}, "metric-values": {1, int64(len(vals))},
			"backpressure": {1, int64(len(bp))},
		},
	}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("stats delta (-want +got):\n%s", diff)
	}
	if b := h.Stats(); b.Total.Requests != 5 || b.Kind(KindJobsOverview).Requests != 1 || b.Kind(KindJob).Requests != 1 {
		t.Errorf("stats %+v, want 5 requests, one jobs overview, one job", b)
	}
	h.Reset()
	if s := h.Stats(); s.Total != (Count{}) || len(s.ByKind) != 0 {
		t.Errorf("after Reset: %+v", s)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{Parallelism: 1, Partitions: 2}, "Jobs"},
		{Config{Jobs: 1, Partitions: 2}, "Parallelism"},
		{Config{Jobs: 1, Parallelism: 4, MaxParallelism: 2, Partitions: 2}, "MaxParallelism"},
		{Config{Jobs: 1, Parallelism: 1, Partitions: 1}, "Partitions"},
		{Config{Jobs: 1, Parallelism: 1, Partitions: 3, Topics: []assign.Topic{{Name: "a", Partitions: 2}}}, "Partitions: 3"},
		{Config{Jobs: 1, Parallelism: 1, Topics: []assign.Topic{{Name: "a", Partitions: 2}, {Name: "b"}}}, "every topic"},
		{Config{Jobs: 1, Parallelism: 1, Partitions: 2, Topics: []assign.Topic{{Name: "a.b"}, {Name: "a_b"}}}, "taken"},
	} {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error naming %s", c.cfg, err, c.want)
		}
	}
	h := newHandler(t, Config{Jobs: 2, Parallelism: 64, Partitions: 255})
	c := h.Config()
	if c.MaxParallelism != 128 || c.CheckpointEvery != DefaultCheckpointEvery || fmt.Sprint(c.Topics) != "[{orders 128} {payments.v1 127}]" {
		t.Errorf("defaults: %+v", c)
	}
}
