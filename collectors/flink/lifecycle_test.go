package flink

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skewscope/skewscope/internal/flinkreplay"
)

// TestRecordedLifecycle replays REST responses recorded from a real Flink
// job through its life under one job id: in-place rescales by the adaptive
// scheduler and a failover, each seen by a first poll (possibly still the
// JobManager's pre-restart dump), a poll after Flink refreshed its metrics
// and one after traffic. The Collector must never name a wrong owner; it
// names every owner once the vertex's metrics differ from the pre-restart
// dump, and none while the first poll after a restart still serves that
// dump unchanged. numRestarts and latest.restored follow the restarts.
//
// The recordings come from the e2e suite (its recorder writes them).
func TestRecordedLifecycle(t *testing.T) {
	root := filepath.Join("..", "testdata", "flink", "lifecycle")
	dirs, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no lifecycle recordings under %s (record them: SKEWSCOPE_RECORD=1 go test -tags e2e ./e2e/)", root)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if !d.IsDir() {
			continue
		}
		t.Run(d.Name(), func(t *testing.T) {
			m, err := flinkreplay.Load(filepath.Join(root, d.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if m.FlinkVersion != d.Name() {
				t.Fatalf("manifest says Flink %s", m.FlinkVersion)
			}
			ss := &flinkreplay.Server{Errorf: t.Errorf}
			srv := httptest.NewServer(ss)
			t.Cleanup(srv.Close)
			c := newTestCollector(t, Config{URL: srv.URL})
			var prev *flinkreplay.Step
			var prevAttempts string
			for i := range m.Steps {
				st := &m.Steps[i]
				ss.Set(st)
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

func lifecycleSource(t *testing.T, st *flinkreplay.Step, s *Snapshot) *VertexSnapshot {
	f, ok := st.ByName["vertex-source"]
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

func checkLifecycleStep(t *testing.T, st, prev *flinkreplay.Step, prevAttempts string, s *Snapshot) {
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
	if f, ok := st.ByName["job-metrics-numRestarts"]; ok {
		want := int64(-1)
		if n, ok := MetricMap(mustMetrics(t, st.Bodies[f.File]))[metricNumRestarts].Int64(); ok {
			want = n
		}
		if j.NumRestarts != want {
			t.Errorf("%s: NumRestarts = %d, want %d", st.Name, j.NumRestarts, want)
		}
	}
	var cps Checkpoints
	if err := json.Unmarshal(st.Bodies[st.ByName["job-checkpoints"].File], &cps); err != nil {
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
	sameDump := prev != nil && flinkreplay.SameFile(st, prev, "vertex-source-metrics-list") && flinkreplay.SameFile(st, prev, "vertex-source-metrics-values")
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

func mustMetrics(t *testing.T, body []byte) []Metric {
	t.Helper()
	var ms []Metric
	if err := json.Unmarshal(body, &ms); err != nil {
		t.Fatal(err)
	}
	return ms
}
