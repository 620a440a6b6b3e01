package web

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
)

// The live JSON endpoints answer the JSON of the structs in live/views.go.
// These tests marshal the structs and compare the keys and value types with
// openapi.json, so the document cannot drift from the structs.

type oaLiveDoc struct {
	Paths      map[string]map[string]any `json:"paths"`
	Components struct {
		Schemas map[string]map[string]any `json:"schemas"`
	} `json:"components"`
}

func oaLiveLoad(t *testing.T) oaLiveDoc {
	t.Helper()
	b, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc oaLiveDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	return doc
}

// oaLiveChecker walks a marshalled value next to its schema.
type oaLiveChecker struct {
	t   *testing.T
	doc oaLiveDoc
	// zero: the value is a zero struct, so the keys present are exactly
	// the fields without omitempty: they must be the required ones.
	zero bool
	// partial: the value is a real answer, in which optional keys may be
	// left out (the required ones are still checked).
	partial bool
	seen    map[string]bool // component schemas reached
}

func (c *oaLiveChecker) ref(s map[string]any) (map[string]any, string) {
	r, ok := s["$ref"].(string)
	if !ok {
		return s, ""
	}
	name := strings.TrimPrefix(r, "#/components/schemas/")
	target, ok := c.doc.Components.Schemas[name]
	if !ok {
		c.t.Errorf("$ref %s: no such schema", r)
		return map[string]any{}, name
	}
	c.seen[name] = true
	return target, name
}

// branches returns the schema's alternatives (anyOf/oneOf) or the schema.
func oaLiveBranches(s map[string]any) []map[string]any {
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[k].([]any); ok {
			var out []map[string]any
			for _, a := range alts {
				if m, ok := a.(map[string]any); ok {
					out = append(out, m)
				}
			}
			return out
		}
	}
	return []map[string]any{s}
}

func oaLiveTypes(s map[string]any) []string {
	switch ty := s["type"].(type) {
	case string:
		return []string{ty}
	case []any:
		var out []string
		for _, x := range ty {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

func (c *oaLiveChecker) check(path string, s map[string]any, v any) {
	c.t.Helper()
	s, _ = c.ref(s)
	if v == nil {
		for _, b := range oaLiveBranches(s) {
			if slices.Contains(oaLiveTypes(b), "null") {
				return
			}
		}
		c.t.Errorf("%s: the JSON is null but the schema does not allow null", path)
		return
	}
	// Pick the non-null alternative.
	var alt map[string]any
	for _, b := range oaLiveBranches(s) {
		b, _ = c.ref(b)
		if ts := oaLiveTypes(b); len(ts) == 1 && ts[0] == "null" {
			continue
		}
		alt = b
	}
	if alt == nil {
		c.t.Errorf("%s: the schema allows only null, the JSON is %v", path, v)
		return
	}
	s = alt
	types := oaLiveTypes(s)
	want := func(ty string) bool {
		if !slices.Contains(types, ty) {
			c.t.Errorf("%s: the JSON is a %s, the schema says %v", path, ty, types)
			return false
		}
		return true
	}
	switch v := v.(type) {
	case map[string]any:
		if !want("object") {
			return
		}
		props, _ := s["properties"].(map[string]any)
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p, ok := props[k].(map[string]any)
			if !ok {
				c.t.Errorf("%s: key %q is in the JSON but not in the schema's properties", path, k)
				continue
			}
			c.check(path+"."+k, p, v[k])
		}
		var required []string
		if rs, ok := s["required"].([]any); ok {
			for _, r := range rs {
				required = append(required, r.(string))
			}
		}
		for _, r := range required {
			if _, ok := v[r]; !ok {
				c.t.Errorf("%s: required key %q is not in the JSON", path, r)
			}
			if _, ok := props[r]; !ok {
				c.t.Errorf("%s: required key %q is not in the schema's properties", path, r)
			}
		}
		for k := range props {
			if _, ok := v[k]; !ok && !c.zero && !c.partial {
				c.t.Errorf("%s: property %q is in the schema but not in the JSON of a fully populated value", path, k)
			}
			if _, ok := v[k]; ok && c.zero && !slices.Contains(required, k) {
				c.t.Errorf("%s: key %q is always sent (no omitempty) but is not required in the schema", path, k)
			}
		}
	case []any:
		if !want("array") {
			return
		}
		items, _ := s["items"].(map[string]any)
		if items == nil {
			c.t.Errorf("%s: array schema without items", path)
			return
		}
		for i, x := range v {
			c.check(path+"["+strconv.Itoa(i)+"]", items, x)
		}
	case string:
		if !want("string") {
			return
		}
		// A zero struct's strings are "", not a value the server sends.
		if enum, ok := s["enum"].([]any); ok && !c.zero && !slices.Contains(enum, any(v)) {
			c.t.Errorf("%s: %q is not in the schema's enum %v", path, v, enum)
		}
		if s["format"] == "date-time" {
			if _, err := time.Parse(time.RFC3339, v); err != nil {
				c.t.Errorf("%s: %q is not a date-time: %v", path, v, err)
			}
		}
	case float64:
		if slices.Contains(types, "integer") {
			if v != math.Trunc(v) {
				c.t.Errorf("%s: %v is not an integer but the schema says integer", path, v)
			}
			return
		}
		want("number")
	case bool:
		want("boolean")
	default:
		c.t.Errorf("%s: unexpected JSON value %T", path, v)
	}
}

func oaLiveMarshal(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// populated live views: every pointer set, every slice non-empty, every
// omitempty field non-zero, every float with a fraction (so that a float
// field described as an integer is caught).
func oaLivePopulated() (live.OverviewView, []live.JobSummary, live.JobView, live.VertexView, live.TopicView) {
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	age := live.Age{At: at, Seconds: 3, Stale: true, Err: "poll: timeout", Tried: at.Add(time.Second), State: live.StateFailing}
	replaced := &live.Replacement{OldID: "a1b2", Endpoint: "prod", Name: "orders", NewID: "c3d4", At: at, Chain: []string{"c3d4", "e5f6"}, Current: "e5f6",
		VertexName: "Source: orders", VertexID: "c3"}
	job := live.JobSummary{Endpoint: "prod", ID: "a1b2", Name: "orders", State: "RUNNING", Vertices: 3, Lag: 120, MaxBusy: 0.5, NotModelled: 1, RecordsLost: 2200,
		Backpressure: "low", Drift: 1, Age: age, Unlisted: 1, ReplacedBy: replaced,
		Concern: live.ConcernLosing, Focus: &live.Focus{VertexID: "c3", VertexName: "Source: orders", Subtask: 1}, LagSeconds: 12.5, LagKind: kafka.TimeLagAtLeast, Trend: live.TrendGrowing}
	ov := live.OverviewView{
		Clusters: []live.ClusterSummary{{Name: "main", Topics: 2, Partitions: 12, Groups: 3, Rate: 10.5, PollMillis: 40, Age: age}},
		Endpoints: []live.EndpointSummary{{Name: "prod", URL: "http://flink:8081", FlinkVersion: "1.20.0", Jobs: 1, DroppedJobs: 2, MaxJobs: 500, PollMillis: 30, Age: age,
			Cost:   live.PollCost{Requests: 9, Bytes: 81234},
			Budget: live.RequestBudget{MaxInFlight: 4, MaxRequestsPerSecond: 50, PauseMillis: 40000, BackoffPolls: 2, BackoffReason: "failing"}}},
		Jobs:   []live.JobSummary{job},
		Topics: []live.TopicSummary{{Cluster: "main", Name: "orders", Partitions: 12, Rate: 10.5, Groups: 1, Age: age}},
	}
	restored := &live.Restored{CheckpointID: 7, Savepoint: true, Path: "s3://sp/1", At: at}
	ms, bytes := int64(120000), int64(-1)
	retention := live.TopicRetention{Topic: "orders", RetentionMs: &ms, RetentionBytes: &bytes, CleanupPolicy: "delete", Deletes: true,
		Errors: []string{"the latest read failed, these are older values: timeout"}, Basis: "observed", Age: age}
	reading := live.Reading{State: live.ReaderLost, Trend: live.TrendGrowing, PositionRate: 1.5, ProducedRate: 2.5, CatchUp: live.CatchUpUnknown,
		CatchUpSeconds: 0.5, Samples: 12, WindowSeconds: 55.5, Lost: &live.Loss{Records: 2200, FirstSeen: at, LastSeen: at, Behind: 300}}
	holder := &live.WatermarkHolder{VertexID: "c3", VertexName: "Source: orders", Subtask: 1, Topic: "orders", Partition: 3, Label: "o3",
		Cause: live.HoldIdle, Kind: live.Observed, Starved: []int{2}, Partitions: 4, QuietSeconds: 61.5, LagSeconds: 70.5, AheadMs: 1500, SkipsIdle: true, Paused: []string{"orders-1"}, Candidates: []string{"orders-3", "orders-7"}}
	vw := live.VertexWatermark{ID: "c3", Name: "Source: orders", Source: true, WatermarkMs: 1764547200500, None: true, Subtask: 1, LagSeconds: 61.5, Holder: holder}
	jet := &live.JobEventTime{WatermarkMs: 1764547200500, None: true, LagSeconds: 61.5, VertexID: "c3", Holder: holder, Vertices: []live.VertexWatermark{vw}, At: at}
	jv := live.JobView{Endpoint: "prod", ID: "a1b2", Name: "orders", State: "RUNNING", StartTime: at, Restored: restored, EventTime: jet,
		Vertices: []live.VertexSummary{{ID: "c3", Name: "Source: orders", Parallelism: 2, MaxParallelism: 128, Source: true, Keyed: true, Kafka: true, PredictionMode: "fresh",
			Skew: 12.5, Busiest: 1, MaxBusy: 0.5, Backpressure: "ok", Partitions: 4, Lag: 120, Drift: 1, RecordsLost: 2200, Error: "metrics: timeout",
			Concern: live.ConcernGrowing, Worst: 1, LagSeconds: 12.5, LagKind: kafka.TimeLagInterpolated, Trend: live.TrendGrowing}},
		Age: age, Unlisted: 1, ReplacedBy: replaced, LastReported: &at}
	vv := live.VertexView{Endpoint: "prod", Cluster: "main", JobID: "a1b2", JobName: "orders", JobState: "RUNNING", ID: "c3", Name: "Source: orders",
		Parallelism: 2, MaxParallelism: 128, Source: true, Keyed: true, Kafka: true,
		Group:       &live.GroupLink{Name: "orders-app", Found: live.GroupCommitsEqual, Matched: 12, Partitions: 12},
		Topics:      []string{"orders"},
		Figures:     []live.Figure{{Name: live.FigureRecordsLost, Value: 120.5, Kind: live.Observed, Partition: "orders-3", AtLeast: true, Unknown: 1, Of: 4, Subtask: 1, Ratio: 0.5, Min: 1, Seconds: 60, Records: 120, Partitions: 1, Behind: 1, From: at, To: at, Since: at}},
		States:      []live.StateCount{{State: live.ReaderLost, Count: 1}},
		RecordsLost: 2200,
		Retention:   []live.TopicRetention{retention},
		Prediction: &live.Prediction{Mode: "restore", History: []int{2, 4}, HistoryFrom: live.HistoryFromURL, Matched: 3, Total: 4, Drift: 1,
			Uncertain: 1, Ambiguous: 1, NotModelled: &live.NotModelled{Reason: live.ReasonRestoredUnseen, JobState: "RUNNING", From: 2, To: 4, Savepoint: true, Inference: &live.Inference{Outcome: live.InferSeveral, Steps: 2, Bound: 8, Tail: []int{2, 4}, Observed: 6, Limit: 100, Fits: [][]int{{1, 2, 4}}, More: true, Error: "x"}, Topics: []string{"a_b"}, Restore: true, Error: "x"}, Notes: []live.Note{{Kind: live.NoteUndetermined, Text: "a note", P: 2, Partitions: 1, From: 2, To: 4, Topics: []string{"a_b"}, Withheld: true, Listed: true, Before: true, Step: live.EventRescale,
				Inference: &live.Inference{Outcome: live.InferOne, Steps: 1, Bound: 8, Tail: []int{4}, Observed: 6, Limit: 100, Fits: [][]int{{2, 4}}, More: true, Error: "x"}}}, Source: "flink-connector-kafka",
			Headline: live.Headline{Kind: live.BasisUncertain, Exact: 3, Uncertain: 1}},
		Subtasks: []live.SubtaskRow{{Subtask: 0, Status: "RUNNING",
			Partitions: []live.PartitionCell{{Topic: "orders", Partition: 3, Label: "o3", Current: 10, Committed: 9, CommittedAt: at, End: 20, Lag: 9, LagSeconds: 1.5,
				LagKind: kafka.TimeLagInterpolated, Reading: reading, Rate: 2.5, RetentionSeconds: 120, TimeToRetentionSeconds: 75, Predicted: 1, Uncertain: true, Basis: live.BasisUncertain, OwnerUndetermined: true, Candidates: []int{0, 1}, Withheld: true, Level: 2,
				EventTime: &live.PartitionEventTime{WatermarkMs: 1764547200500, None: true, Kind: live.Observed, LagSeconds: 61.5, State: live.PartitionIdle, QuietSeconds: 61.5, PausedPerS: 500}}},
			Watermark:              &live.SubtaskWatermark{WatermarkMs: 1764547200500, None: true, LagSeconds: 61.5, IdleSeconds: 60, DriftMs: 1500, Paused: true, Starved: true, Skipped: true, Holds: true},
			KeyGroups:              &live.KeyGroupSpan{Start: 0, End: 63, Size: 64},
			TimeToRetentionSeconds: 75, RetentionSeconds: 120, RetentionPartition: "orders-3",
			Rate: 2.5, Lag: 9, LagSeconds: 1.5, LagKind: kafka.TimeLagAtLeast, RecordsLost: 2200, CatchUp: live.CatchUpETA, CatchUpSeconds: 12.5, Trend: live.TrendShrinking,
			Busy: 0.25, BackPressured: 0.5, Idle: 0.25, RecordsIn: 1.5, RecordsOut: 2.5, StateSize: 1024, Drift: 1,
			Checkpoint: &live.SubtaskCheckpoint{DurationMs: 12, SyncMs: 2, AsyncMs: 10, AlignmentMs: 3, AlignmentProcessed: 100, AlignmentPersisted: 5,
				StartDelayMs: 4, EndToEndMs: 20, CheckpointedSize: 512, Unaligned: true},
			SparkLag: []float64{1.5}, SparkRate: []float64{2.5}, SparkWatermark: []float64{3.5}, Highlight: true, Concern: live.ConcernLosing}},
		Concern: live.ConcernLosing, Worst: 0, EventTime: &vw, JobEventTime: jet,
		SparkTimes: []float64{1764547200.5},
		Lineage: &live.LineageView{History: []int{2, 4}, Known: true, Events: []live.LineageEvent{{At: at, Kind: live.EventRescale, JobID: "a1b2", From: 2, To: 4,
			CheckpointID: 7, Savepoint: true, Path: "s3://sp/1", NewPartitions: 2, Moved: []string{"orders-3 0→1"}, MovedCount: 1,
			Rescaled: []live.VertexRescale{{Name: "Window", From: 2, To: 4}},
			Cause: &live.FailureCause{At: at, Class: "java.lang.RuntimeException", Message: "boom", Task: "Key Router", Subtask: 2, Endpoint: "tm:1",
				Labels: []live.FailureLabel{{Key: "type", Value: "user"}}, Concurrent: 1, Cause: "java.lang.IllegalStateException: bad key"}}}},
		Checkpoint: &live.VertexCheckpoint{ID: 42, CompletedAt: at, Age: age, Slowest: 0, SlowFactor: 4},
		Why: &live.WhyView{Lines: []live.WhyLine{{Kind: live.WhyHot, Subtasks: []int{0}, More: 2,
			Partitions: []live.WhyPartition{{Topic: "orders", Partition: 3, Rate: 2.5}},
			Facts:      []live.WhyFact{{Name: live.FactShare, Value: 0.5, Kind: live.Observed}},
			Placement: &live.WhyPlacement{Model: live.ModeFresh, Parallelism: 2, Topics: []live.WhyTopic{{Name: "orders", Partitions: 4, Start: 1}},
				Reached: []int{1}, History: []int{2, 4}},
			KeyGroups: &live.KeyGroupSpan{Start: 0, End: 63, Size: 64},
			Peer:      &live.WhyPeer{ID: "d4", Name: "Window", Relation: live.RelDownstream, Via: []string{"Map"}, Subtask: 1, Culprit: true},
			Target:    3, Missing: []string{live.MissingRates},
			Rescale: &live.WhyRescale{History: []int{2}, Target: 3, Limit: 4, Capacity: 120, Utilization: 0.6, Busiest: 1, None: live.NoTargetApart, Apart: 3,
				Partition: &live.WhyPartition{Topic: "orders", Partition: 0, Rate: 9}, Fresh: 3, FreshUtilization: 0.5, Lag: 10}, Holder: holder}}},
		Restored: restored, Color: "rate", Thresholds: [3]float64{1, 2, 3}, Flink: age, KafkaAge: &age, Error: "metrics: timeout",
		ReplacedBy: replaced, LastReported: &at,
		Withheld: &live.Withheld{Cause: live.CauseMetricDumpLimit, Setting: "pekko.framesize (default 10485760 bytes)", Subtasks: []int{1, 3}, Unlisted: []int{3}, Missing: 4,
			Topics: []string{"orders"}, Pending: live.PendingReadersStarted},
		SQL: &live.SQLKeyView{Operator: "GlobalGroupAggregate", Columns: [][]string{{"user_id"}}, Named: true, TwoPhase: true, Phase: "global", InputParallelism: 4, MiniBatchMs: 1000,
			Sources: [][]live.SQLKeySource{{{Vertex: "src", Table: "clicks", Column: "user_id", Expr: "LOWER(user_id)"}}}},
	}
	tv := live.TopicView{Cluster: "main", Name: "orders", Rate: 10.5,
		Groups: []live.TopicGroup{{Name: "orders-app", State: "Stable", Lag: 9, RecordsLost: 2200, States: []live.StateCount{{State: live.ReaderLost, Count: 1}}}},
		Partitions: []live.TopicPartitionRow{{Partition: 3, Start: 0, End: 20, Rate: 2.5, Error: "offsets: timeout", Stale: true,
			Groups: []live.GroupOffset{{Committed: 10, Lag: 9, LagSeconds: 1.5, LagKind: kafka.TimeLagAtLeast, Reading: reading}}}},
		Retention: &retention, Age: age, Error: "metadata: timeout"}
	return ov, ov.Jobs, jv, vv, tv
}

// responseSchema is the 200 application/json schema of GET path.
func oaLiveResponseSchema(t *testing.T, doc oaLiveDoc, path string) map[string]any {
	t.Helper()
	var s any = doc.Paths[path]
	for _, k := range []string{"get", "responses", "200", "content", "application/json", "schema"} {
		m, ok := s.(map[string]any)
		if !ok {
			t.Fatalf("openapi.json: %s has no GET 200 application/json schema (at %q)", path, k)
		}
		s = m[k]
	}
	m, ok := s.(map[string]any)
	if !ok {
		t.Fatalf("openapi.json: %s has no GET 200 application/json schema", path)
	}
	return m
}

func TestOpenAPILiveSchemasMatchViews(t *testing.T) {
	doc := oaLiveLoad(t)
	ov, jobs, jv, vv, tv := oaLivePopulated()
	c := &oaLiveChecker{t: t, doc: doc, seen: map[string]bool{}}
	for _, tc := range []struct {
		path, schema string
		v            any
	}{
		{"/api/v1/overview", "OverviewView", ov},
		{"/api/v1/jobs", "", map[string]any{"jobs": jobs}},
		{"/api/v1/jobs/{jobID}", "JobView", jv},
		{"/api/v1/jobs/{jobID}/vertices/{vertexID}", "VertexView", vv},
		{"/api/v1/jobs/by-name/{job}", "JobView", jv},
		{"/api/v1/jobs/by-name/{job}/vertices/{vertex}", "VertexView", vv},
		{"/api/v1/kafka/{cluster}/topics/{topic}", "TopicView", tv},
	} {
		s := oaLiveResponseSchema(t, doc, tc.path)
		if tc.schema != "" && s["$ref"] != "#/components/schemas/"+tc.schema {
			t.Errorf("GET %s answers %s, but openapi.json says %v", tc.path, tc.schema, s["$ref"])
		}
		c.check(tc.path, s, oaLiveMarshal(t, tc.v))
	}

	// Zero values: the keys sent are exactly the required ones, and nil
	// slices (sent as null) are nullable.
	zeros := map[string]any{
		"Age": live.Age{}, "Figure": live.Figure{}, "ClusterSummary": live.ClusterSummary{}, "EndpointSummary": live.EndpointSummary{},
		"JobSummary": live.JobSummary{}, "TopicSummary": live.TopicSummary{}, "OverviewView": live.OverviewView{},
		"VertexSummary": live.VertexSummary{}, "JobView": live.JobView{}, "Restored": live.Restored{}, "GroupLink": live.GroupLink{},
		"PartitionCell": live.PartitionCell{}, "SubtaskRow": live.SubtaskRow{}, "KeyGroupSpan": live.KeyGroupSpan{},
		"Prediction": live.Prediction{}, "VertexView": live.VertexView{}, "TopicPartitionRow": live.TopicPartitionRow{},
		"GroupOffset": live.GroupOffset{}, "TopicGroup": live.TopicGroup{}, "TopicView": live.TopicView{},
		"Headline": live.Headline{}, "Tally": live.Tally{}, "LineageView": live.LineageView{}, "LineageEvent": live.LineageEvent{},
		"Replacement": live.Replacement{}, "PollCost": live.PollCost{}, "RequestBudget": live.RequestBudget{},
		"Reading": live.Reading{}, "Loss": live.Loss{}, "StateCount": live.StateCount{},
		"WhyView": live.WhyView{}, "WhyLine": live.WhyLine{}, "WhyPartition": live.WhyPartition{}, "WhyFact": live.WhyFact{},
		"WhyPlacement": live.WhyPlacement{}, "WhyTopic": live.WhyTopic{}, "WhyPeer": live.WhyPeer{}, "WhyRescale": live.WhyRescale{},
		"TopicRetention": live.TopicRetention{}, "Inference": live.Inference{},
		"WatermarkHolder": live.WatermarkHolder{}, "VertexWatermark": live.VertexWatermark{}, "JobEventTime": live.JobEventTime{},
		"SubtaskWatermark": live.SubtaskWatermark{}, "PartitionEventTime": live.PartitionEventTime{},
	}
	for name := range zeros {
		if !c.seen[name] {
			t.Errorf("schema %s is not reached from the live endpoints' responses", name)
		}
	}
	z := &oaLiveChecker{t: t, doc: doc, zero: true, seen: map[string]bool{}}
	for name, v := range zeros {
		z.check(name+"{}", map[string]any{"$ref": "#/components/schemas/" + name}, oaLiveMarshal(t, v))
	}
}

// TestOpenAPIAgeStates: the schema's freshness states are exactly the
// store's.
func TestOpenAPIAgeStates(t *testing.T) {
	doc := oaLiveLoad(t)
	props, _ := doc.Components.Schemas["Age"]["properties"].(map[string]any)
	state, _ := props["state"].(map[string]any)
	var got []string
	for _, v := range state["enum"].([]any) {
		got = append(got, v.(string))
	}
	want := []string{string(live.StateOK), string(live.StateFailing), string(live.StateNeverReached), string(live.StateNotPolled)}
	if !slices.Equal(got, want) {
		t.Errorf("openapi.json Age.state enum = %q, want %q", got, want)
	}
}
