package flink

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

var versions = []string{"1.20.5", "2.2.1", "2.3.0"}

type recEntry struct {
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Status int               `json:"status"`
	Vars   map[string]string `json:"vars"`
}

type recording struct {
	name     string
	path     string   // concrete path (vars filled in)
	get, agg []string // from the recorded query
	body     []byte
}

// recServer serves the recorded responses of one Flink version, mimicking
// the metric endpoints: values of the requested ids only (unknown ids
// silently dropped), and [] from the aggregating endpoint when any id is
// missing. It fails the test on a request line over 4096 bytes.
type recServer struct {
	t      *testing.T
	prefix string
	recs   []recording
	vars   map[string]map[string]string // recording name → vars

	mu           sync.Mutex
	requests     []string
	maxLine      int
	authHeader   []string
	missingPaths []string
}

const netty4096 = 4096

func loadRecordings(t *testing.T, version string) *recServer {
	t.Helper()
	dir := filepath.Join("..", "testdata", "flink", version)
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		FlinkVersion string              `json:"flinkVersion"`
		Recordings   map[string]recEntry `json:"recordings"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m.FlinkVersion != version {
		t.Fatalf("manifest says %s", m.FlinkVersion)
	}
	s := &recServer{t: t, vars: map[string]map[string]string{}}
	for name, e := range m.Recordings {
		if e.Method != http.MethodGet || e.Status != 200 {
			continue
		}
		body, err := os.ReadFile(filepath.Join(dir, name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		p, q, _ := strings.Cut(e.Path, "?")
		for k, v := range e.Vars {
			p = strings.ReplaceAll(p, "{"+k+"}", v)
		}
		r := recording{name: name, path: p, body: body}
		for _, kv := range strings.Split(q, "&") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "get":
				r.get = strings.Split(v, ",")
			case "agg":
				r.agg = strings.Split(v, ",")
			}
		}
		s.recs = append(s.recs, r)
		s.vars[name] = e.Vars
	}
	return s
}

func (s *recServer) start(prefix string) *httptest.Server {
	s.prefix = prefix
	srv := httptest.NewServer(s)
	s.t.Cleanup(srv.Close)
	return srv
}

func (s *recServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	line := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto)
	s.mu.Lock()
	s.requests = append(s.requests, r.RequestURI)
	s.maxLine = max(s.maxLine, line)
	s.authHeader = append(s.authHeader, r.Header.Get("Authorization"))
	s.mu.Unlock()
	if line > netty4096 {
		s.t.Errorf("request line of %d bytes exceeds %d: %.100s…", line, netty4096, r.RequestURI)
		http.Error(w, `{"errors":["request line too long"]}`, http.StatusRequestURITooLong)
		return
	}
	path, ok := strings.CutPrefix(r.URL.Path, s.prefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	path = strings.TrimPrefix(path, "/v1")
	q := r.URL.Query()
	get := splitList(q.Get("get"))
	agg := splitList(q.Get("agg"))
	w.Header().Set("Content-Type", "application/json")
	if len(get) == 0 {
		for _, rec := range s.recs {
			if rec.path == path && rec.get == nil {
				w.Write(rec.body)
				return
			}
		}
		s.notFound(w, path)
		return
	}
	// Metric values: union over all recordings of this path.
	union := map[string]map[string]any{}
	found := false
	for _, rec := range s.recs {
		if rec.path != path || rec.get == nil {
			continue
		}
		found = true
		var items []map[string]any
		if err := json.Unmarshal(rec.body, &items); err != nil {
			s.t.Errorf("%s: %v", rec.name, err)
		}
		for _, it := range items {
			union[it["id"].(string)] = it
		}
	}
	if !found {
		s.notFound(w, path)
		return
	}
	out := []map[string]any{}
	aggregating := strings.HasSuffix(path, "/subtasks/metrics")
	for _, id := range get {
		it, ok := union[id]
		if !ok {
			if aggregating {
				out = []map[string]any{} // one missing id empties the answer
				break
			}
			continue
		}
		if aggregating && len(agg) > 0 {
			sub := map[string]any{"id": id}
			for _, a := range agg {
				sub[a] = it[a]
			}
			it = sub
		}
		out = append(out, it)
	}
	json.NewEncoder(w).Encode(out)
}

func (s *recServer) notFound(w http.ResponseWriter, path string) {
	s.mu.Lock()
	s.missingPaths = append(s.missingPaths, path)
	s.mu.Unlock()
	w.WriteHeader(http.StatusNotFound)
	w.Write([]byte(`{"errors":["Not found: ` + path + `"]}`))
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func (s *recServer) recordingIDs(name string) []string {
	for _, r := range s.recs {
		if r.name == name {
			return r.get
		}
	}
	s.t.Fatalf("no recording %s", name)
	return nil
}

func TestRecordedResponses(t *testing.T) {
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			rs := loadRecordings(t, version)
			srv := rs.start("/proxy/flink")
			c, err := NewClient(srv.URL+"/proxy/flink/", WithBearerToken("s3cret"))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			jobID := rs.vars["job"]["jobid"]
			sourceID := rs.vars["vertex-source"]["vertexid"]
			keyedID := rs.vars["vertex-keyed"]["vertexid"]
			cpVars := rs.vars["checkpoint-subtasks-keyed"]

			ov, err := c.Overview(ctx)
			if err != nil || ov.FlinkVersion != version || ov.TaskManagers != 1 || ov.JobsRunning != 1 {
				t.Fatalf("Overview = %+v, %v", ov, err)
			}

			jobs, err := c.JobsOverview(ctx)
			if err != nil || len(jobs) != 1 || jobs[0].ID != jobID || jobs[0].State != "RUNNING" || jobs[0].Tasks.Total != 7 {
				t.Fatalf("JobsOverview = %+v, %v", jobs, err)
			}

			job, err := c.Job(ctx, jobID)
			if err != nil {
				t.Fatal(err)
			}
			if job.MaxParallelism != -1 || len(job.Vertices) != 2 {
				t.Fatalf("Job = %+v", job)
			}
			wantPar := map[string]int{sourceID: 3, keyedID: 4}
			for _, v := range job.Vertices {
				if v.Parallelism != wantPar[v.ID] || v.MaxParallelism != 128 || v.Name == "" {
					t.Errorf("vertex %+v: want parallelism %d, maxParallelism 128", v, wantPar[v.ID])
				}
			}
			if got := KeyedVertices(job.Plan); !slices.Equal(got, []string{keyedID}) {
				t.Errorf("KeyedVertices(job.Plan) = %v", got)
			}

			plan, err := c.JobPlan(ctx, jobID)
			if err != nil {
				t.Fatal(err)
			}
			if got := KeyedVertices(plan); !slices.Equal(got, []string{keyedID}) {
				t.Errorf("KeyedVertices = %v, want [%s]", got, keyedID)
			}
			if got := SourceVertices(plan); !slices.Equal(got, []string{sourceID}) {
				t.Errorf("SourceVertices = %v, want [%s]", got, sourceID)
			}
			if got := PlanInputs(plan)[keyedID]; !slices.Equal(got, []string{sourceID}) {
				t.Errorf("PlanInputs[keyed] = %v, want [%s]", got, sourceID)
			}

			for id, par := range wantPar {
				vd, err := c.VertexDetails(ctx, jobID, id)
				if err != nil {
					t.Fatal(err)
				}
				if len(vd.Subtasks) != par || vd.MaxParallelism != 128 {
					t.Errorf("VertexDetails(%s) = %+v", id, vd)
				}
				for _, st := range vd.Subtasks {
					if st.Endpoint == "" || st.TaskManagerID == "" || st.Status != "RUNNING" {
						t.Errorf("subtask %+v", st)
					}
				}
			}

			// Observed assignment from the source vertex's metric ids.
			ids, err := c.VertexMetricIDs(ctx, jobID, sourceID)
			if err != nil || len(ids) < 100 {
				t.Fatalf("VertexMetricIDs: %d ids, %v", len(ids), err)
			}
			obs := ParseKafkaSourceMetricIDs(ids)
			owner, ambiguous := obs.Assignment()
			if len(ambiguous) != 0 {
				t.Errorf("ambiguous partitions: %v", ambiguous)
			}
			if len(owner) != 8 { // orders ×5, payments.v1 ×3
				t.Errorf("owner has %d partitions: %v", len(owner), owner)
			}
			for _, tp := range []struct {
				topic string
				n     int32
			}{{"orders", 5}, {"payments_v1", 3}} {
				for p := range tp.n {
					st, ok := owner[KafkaPartition{Topic: tp.topic, Partition: p}]
					if !ok || st < 0 || st >= 3 {
						t.Errorf("%s-%d: owner %d, %v", tp.topic, p, st, ok)
					}
				}
			}
			if got := ResolveTopic("payments_v1", []string{"orders", "payments.v1"}); !slices.Equal(got, []string{"payments.v1"}) {
				t.Errorf("ResolveTopic = %v", got)
			}
			// Consistent with the ids the recorder asked for (it built
			// them from the same list).
			recorded := slices.Clone(rs.recordingIDs("vertex-source-metrics-offsets"))
			got := obs.OffsetIDs()
			sort.Strings(got)
			sort.Strings(recorded)
			if !slices.Equal(got, recorded) {
				t.Errorf("OffsetIDs = %v\nrecorded  %v", got, recorded)
			}
			for _, s := range obs.States {
				if s.Operator != "Source__Kafka_Source" || s.Cluster != "" || s.CurrentID == "" || s.CommittedID == "" {
					t.Errorf("state %+v", s)
				}
			}

			vals, err := c.VertexMetrics(ctx, jobID, sourceID, obs.OffsetIDs())
			if err != nil || len(vals) != 16 {
				t.Fatalf("VertexMetrics(offsets) = %d values, %v", len(vals), err)
			}
			obs.ApplyValues(vals)
			for _, s := range obs.States {
				if s.CurrentOffset < 0 || s.CommittedOffset < 0 || s.CommittedOffset > s.CurrentOffset+1 {
					t.Errorf("offsets %+v", s)
				}
			}
			bySub := obs.BySubtask()
			n := 0
			for st, ps := range bySub {
				if st < 0 || st >= 3 || len(ps) == 0 {
					t.Errorf("subtask %d: %v", st, ps)
				}
				n += len(ps)
			}
			if n != 8 {
				t.Errorf("BySubtask covers %d partitions", n)
			}

			// Load metrics, plus an unknown id that is silently dropped.
			loadIDs := append(rs.recordingIDs("vertex-source-metrics-load"), "0.noSuchMetric")
			load, err := c.VertexMetrics(ctx, jobID, sourceID, loadIDs)
			if err != nil || len(load) != len(loadIDs)-1 {
				t.Fatalf("VertexMetrics(load) = %d, %v", len(load), err)
			}
			lm := MetricMap(load)
			if v := lm["0.busyTimeMsPerSecond"].Value; v < 0 || v > 1000 {
				t.Errorf("busyTimeMsPerSecond = %v", v)
			}

			sub, err := c.SubtaskMetrics(ctx, jobID, keyedID, 0, rs.recordingIDs("subtask-keyed-0-metrics-values"))
			if err != nil || len(sub) == 0 {
				t.Errorf("SubtaskMetrics = %v, %v", sub, err)
			}
			jm, err := c.JobMetrics(ctx, jobID, rs.recordingIDs("job-metrics-values"))
			if err != nil {
				t.Fatal(err)
			}
			if id, ok := MetricMap(jm)["lastCompletedCheckpointId"].Int64(); !ok || id <= 0 {
				t.Errorf("lastCompletedCheckpointId = %v, %v (%v)", id, ok, jm)
			}

			aggIDs := []string{"busyTimeMsPerSecond", "backPressuredTimeMsPerSecond", "idleTimeMsPerSecond", "numRecordsInPerSecond", "numRecordsIn"}
			ag, err := c.SubtaskMetricsAgg(ctx, jobID, keyedID, aggIDs, []string{"min", "max", "avg", "sum", "skew"})
			if err != nil || len(ag) != 5 {
				t.Fatalf("SubtaskMetricsAgg = %+v, %v", ag, err)
			}
			for _, a := range ag {
				if a.Min > a.Avg || a.Avg > a.Max || a.Skew < 0 || a.Skew > 100 {
					t.Errorf("agg %+v", a)
				}
			}
			// One missing id empties Flink's answer; the client retries per id.
			ag, err = c.SubtaskMetricsAgg(ctx, jobID, keyedID, []string{"busyTimeMsPerSecond", "noSuchMetric"}, []string{"max"})
			if err != nil || len(ag) != 1 || ag[0].ID != "busyTimeMsPerSecond" || ag[0].Max < 0 || ag[0].Min == ag[0].Min {
				t.Errorf("SubtaskMetricsAgg(missing id) = %+v, %v", ag, err)
			}

			for id, par := range wantPar {
				bp, err := c.Backpressure(ctx, jobID, id)
				if err != nil || bp.Status != "ok" || bp.Level != "ok" || len(bp.Subtasks) != par {
					t.Errorf("Backpressure(%s) = %+v, %v", id, bp, err)
				}
			}

			cps, err := c.Checkpoints(ctx, jobID)
			if err != nil || cps.Latest.Completed == nil {
				t.Fatalf("Checkpoints = %+v, %v", cps, err)
			}
			cpID := cps.Latest.Completed.ID
			if want := cpVars["checkpointid"]; want != itoa64(cpID) || cps.Counts.Completed < 1 {
				t.Errorf("latest completed %d, recorded %s", cpID, want)
			}
			for id, par := range wantPar {
				ct, err := c.CheckpointSubtasks(ctx, jobID, cpID, id)
				if err != nil || len(ct.Subtasks) != par {
					t.Fatalf("CheckpointSubtasks(%s) = %+v, %v", id, ct, err)
				}
				var sum int64
				for i, st := range ct.Subtasks {
					if st.Index != i || !st.Completed || st.StateSize <= 0 || st.CheckpointedSize <= 0 {
						t.Errorf("subtask checkpoint %+v", st)
					}
					sum += st.StateSize
				}
				if sum != ct.StateSize {
					t.Errorf("vertex %s: subtask state sizes sum to %d, task says %d", id, sum, ct.StateSize)
				}
			}

			tms, err := c.TaskManagers(ctx)
			if err != nil || len(tms) != 1 || tms[0].ID == "" || tms[0].SlotsNumber != 16 {
				t.Errorf("TaskManagers = %+v, %v", tms, err)
			}

			rs.mu.Lock()
			defer rs.mu.Unlock()
			if len(rs.missingPaths) > 0 {
				t.Errorf("requests with no recording: %v", rs.missingPaths)
			}
			for _, h := range rs.authHeader {
				if h != "Bearer s3cret" {
					t.Fatalf("Authorization = %q", h)
				}
			}
		})
	}
}

func itoa64(v int64) string { b, _ := json.Marshal(v); return string(b) }
