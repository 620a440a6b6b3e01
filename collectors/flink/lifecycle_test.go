package flink

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// lifecycleManifest is collectors/testdata/flink/lifecycle/<version>/manifest.json,
// written by the e2e recorder (e2e/lifecycle_test.go): one collector poll's
// responses per step of a real job's life under one job id (in-place
// rescales by the adaptive scheduler, a failover), with the owners the job's
// records showed.
type lifecycleManifest struct {
	FlinkVersion string          `json:"flinkVersion"`
	Steps        []lifecycleStep `json:"steps"`
}

type lifecycleStep struct {
	Name        string           `json:"name"`
	What        string           `json:"what"`
	Parallelism int              `json:"parallelism"`
	Owners      map[string][]int `json:"owners"` // topic → owner per partition
	Files       []lifecycleFile  `json:"files"`
	byName      map[string]lifecycleFile
	bodies      map[string][]byte // file → body
}

type lifecycleFile struct {
	Name, File, Method, Path, Query string
	Status                          int
	Vars                            map[string]string
}

func (f lifecycleFile) concretePath() string {
	p := f.Path
	for k, v := range f.Vars {
		p = strings.ReplaceAll(p, "{"+k+"}", v)
	}
	return p
}

// stepServer serves one step's responses at a time, like recServer: values
// of the requested ids only, from every recorded values answer of the path.
type stepServer struct {
	t    *testing.T
	mu   sync.Mutex
	step *lifecycleStep
}

func (s *stepServer) set(st *lifecycleStep) { s.mu.Lock(); s.step = st; s.mu.Unlock() }

func (s *stepServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	st := s.step
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	get := splitList(r.URL.Query().Get("get"))
	union := map[string]json.RawMessage{}
	found := false
	for _, f := range st.Files {
		if f.Method != http.MethodGet || f.Status != http.StatusOK || f.concretePath() != r.URL.Path {
			continue
		}
		body := st.bodies[f.File]
		if len(get) == 0 && f.Query == "" {
			w.Write(body)
			return
		}
		if len(get) == 0 || f.Query == "" {
			continue
		}
		found = true
		var items []struct {
			ID string `json:"id"`
		}
		var raw []json.RawMessage
		if err := json.Unmarshal(body, &items); err != nil || json.Unmarshal(body, &raw) != nil {
			s.t.Errorf("%s: %v", f.File, err)
			continue
		}
		for i, it := range items {
			union[it.ID] = raw[i]
		}
	}
	if !found {
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"errors":["Not found: ` + r.URL.Path + `"]}`))
		return
	}
	out := []json.RawMessage{}
	for _, id := range get {
		if v, ok := union[id]; ok {
			out = append(out, v)
		}
	}
	json.NewEncoder(w).Encode(out)
}

func loadLifecycle(t *testing.T, dir string) *lifecycleManifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m lifecycleManifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Steps) == 0 {
		t.Fatalf("%s: no steps", dir)
	}
	for i := range m.Steps {
		st := &m.Steps[i]
		st.byName, st.bodies = map[string]lifecycleFile{}, map[string][]byte{}
		for _, f := range st.Files {
			st.byName[f.Name] = f
			body, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.File)))
			if err != nil {
				t.Fatal(err)
			}
			st.bodies[f.File] = body
		}
	}
	return &m
}

// TestRecordedLifecycle replays REST responses recorded from a real Flink
// job through its life under one job id: in-place rescales by the adaptive
// scheduler and a failover, each seen by a first poll (possibly still the
// JobManager's pre-restart dump), a poll after Flink refreshed its metrics
// and one after traffic. The Collector must never name a wrong owner; it
// names every owner once the vertex's metrics differ from the pre-restart
// dump, and none while the first poll after a restart still serves that
// dump unchanged. numRestarts and latest.restored follow the restarts.
//
// The recordings come from the e2e suite; without them the test skips.
func TestRecordedLifecycle(t *testing.T) {
	root := filepath.Join("..", "testdata", "flink", "lifecycle")
	dirs, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("no lifecycle recordings under %s", root)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		t.Run(d.Name(), func(t *testing.T) {
			m := loadLifecycle(t, filepath.Join(root, d.Name()))
			if m.FlinkVersion != d.Name() {
				t.Fatalf("manifest says Flink %s", m.FlinkVersion)
			}
			ss := &stepServer{t: t}
			srv := httptest.NewServer(ss)
			t.Cleanup(srv.Close)
			c := newTestCollector(t, Config{URL: srv.URL})
			var prev *lifecycleStep
			var prevAttempts string
			for i := range m.Steps {
				st := &m.Steps[i]
				ss.set(st)
				s := c.PollOnce(context.Background())
				checkLifecycleStep(t, st, prev, prevAttempts, s)
				if src := lifecycleSource(t, st, s); src != nil {
					prevAttempts = attemptsOf(*src)
				}
				prev = st
			}
		})
	}
}

func lifecycleSource(t *testing.T, st *lifecycleStep, s *Snapshot) *VertexSnapshot {
	f, ok := st.byName["vertex-source"]
	if !ok || len(s.Jobs) != 1 {
		t.Fatalf("%s: no source vertex recording, or %d jobs", st.Name, len(s.Jobs))
	}
	for i := range s.Jobs[0].Vertices {
		if v := &s.Jobs[0].Vertices[i]; v.ID == f.Vars["vertexid"] {
			return v
		}
	}
	t.Fatalf("%s: the job has no vertex %s", st.Name, f.Vars["vertexid"])
	return nil
}

func attemptsOf(v VertexSnapshot) string {
	var b []string
	for _, s := range v.Subtasks {
		b = append(b, itoa64(int64(s.Attempt))+"@"+itoa64(s.StartTime.UnixMilli()))
	}
	return strings.Join(b, " ")
}

func checkLifecycleStep(t *testing.T, st, prev *lifecycleStep, prevAttempts string, s *Snapshot) {
	t.Helper()
	j := s.Jobs[0]
	src := lifecycleSource(t, st, s)
	if src.Stale || src.Kafka == nil {
		t.Fatalf("%s: source vertex err %v, stale %v, kafka %v", st.Name, src.Err, src.Stale, src.Kafka != nil)
	}
	if src.Parallelism != st.Parallelism {
		t.Errorf("%s: parallelism %d, want %d", st.Name, src.Parallelism, st.Parallelism)
	}

	// Restart signals, as recorded.
	if f, ok := st.byName["job-metrics-numRestarts"]; ok {
		want := int64(-1)
		if n, ok := MetricMap(mustMetrics(t, st.bodies[f.File]))[metricNumRestarts].Int64(); ok {
			want = n
		}
		if j.NumRestarts != want {
			t.Errorf("%s: NumRestarts = %d, want %d", st.Name, j.NumRestarts, want)
		}
	}
	var cps Checkpoints
	if err := json.Unmarshal(st.bodies[st.byName["job-checkpoints"].File], &cps); err != nil {
		t.Fatal(err)
	}
	switch r := cps.Latest.Restored; {
	case r == nil && j.Restored != nil, r != nil && (j.Restored == nil || j.Restored.CheckpointID != r.ID || j.Restored.At.UnixMilli() != r.RestoreTimestamp):
		t.Errorf("%s: Restored = %+v, recorded %+v", st.Name, j.Restored, r)
	}

	// Owners: never wrong. None certain when this poll sees a restart and
	// the source's metrics are still the previous step's answers; all
	// certain on the polls after the one that saw the restart.
	restartSeen := prevAttempts != "" && attemptsOf(*src) != prevAttempts
	sameDump := prev != nil && sameFile(st, prev, "vertex-source-metrics-list") && sameFile(st, prev, "vertex-source-metrics-values")
	wantCertain := -1 // all
	switch {
	case restartSeen && sameDump:
		wantCertain = 0
	case restartSeen:
		wantCertain = -2 // any number
	}
	truth := map[KafkaPartition]int{}
	for topic, owners := range st.Owners {
		for p, o := range owners {
			truth[KafkaPartition{Topic: SanitizeMetricName(topic), Partition: int32(p)}] = o
		}
	}
	certain := 0
	for _, p := range src.Kafka.Owners() {
		want, ok := truth[p.KafkaPartition]
		if !ok {
			t.Errorf("%s: %s-%d is listed but not in the recorded owners", st.Name, p.Topic, p.Partition)
			continue
		}
		if p.Certain() {
			certain++
			if p.Owner != want {
				t.Errorf("%s: %s-%d owner %d (%s), the job's records say %d", st.Name, p.Topic, p.Partition, p.Owner, p.Reason, want)
			}
		}
	}
	if wantCertain == -1 {
		wantCertain = len(truth)
	}
	if wantCertain >= 0 && certain != wantCertain {
		t.Errorf("%s (%s): %d certain owners, want %d; owners %s\nstates %s", st.Name, st.What, certain, wantCertain, owners(src.Kafka), evidenceList(src.Kafka))
	}
}

func sameFile(a, b *lifecycleStep, name string) bool {
	fa, oka := a.byName[name]
	fb, okb := b.byName[name]
	return oka && okb && fa.File == fb.File
}

func mustMetrics(t *testing.T, body []byte) []Metric {
	t.Helper()
	var ms []Metric
	if err := json.Unmarshal(body, &ms); err != nil {
		t.Fatal(err)
	}
	return ms
}
