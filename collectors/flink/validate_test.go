package flink

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// editJSON decodes a recorded body, lets edit change it and encodes it again.
func editJSON(t *testing.T, body []byte, edit func(any)) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	edit(v)
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPollRejectsImpossibleNumbers: numbers Flink cannot mean (a negative
// or huge parallelism, a max parallelism below it, a subtask index outside
// it, an offset below −1) mark the vertex broken with an Err naming the
// field and the value, and never reach the snapshot.
func TestPollRejectsImpossibleNumbers(t *testing.T) {
	vertexField := func(field string, value any) func(f *fakeFlink) (string, http.HandlerFunc) {
		return func(f *fakeFlink) (string, http.HandlerFunc) {
			body := editJSON(t, f.recordedBody("job"), func(v any) {
				for _, vx := range v.(map[string]any)["vertices"].([]any) {
					if vx := vx.(map[string]any); vx["id"] == f.sourceID {
						vx[field] = value
					}
				}
			})
			return f.jobPath(), func(w http.ResponseWriter, r *http.Request) { w.Write(body) }
		}
	}
	cases := []struct {
		name    string
		fault   func(f *fakeFlink) (string, http.HandlerFunc)
		wantErr string
	}{
		{"negative parallelism", vertexField("parallelism", -1), "parallelism -1"},
		{"zero parallelism", vertexField("parallelism", 0), "parallelism 0"},
		{"huge parallelism", vertexField("parallelism", 200000), "parallelism 200000"},
		{"max parallelism zero", vertexField("maxParallelism", 0), "maxParallelism 0"},
		{"max parallelism below parallelism", vertexField("maxParallelism", 2), "maxParallelism 2"},
		{"max parallelism huge", vertexField("maxParallelism", 1<<20), "maxParallelism 1048576"},
		{"subtask index outside the parallelism", func(f *fakeFlink) (string, http.HandlerFunc) {
			body := editJSON(t, f.recordedBody("vertex-source"), func(v any) {
				v.(map[string]any)["subtasks"].([]any)[1].(map[string]any)["subtask"] = 7
			})
			return f.jobPath("vertices", f.sourceID), func(w http.ResponseWriter, r *http.Request) { w.Write(body) }
		}, "subtask index 7"},
		{"offset below -1", func(f *fakeFlink) (string, http.HandlerFunc) {
			return f.jobPath("vertices", f.sourceID, "metrics"), func(w http.ResponseWriter, r *http.Request) {
				rec := httptest.NewRecorder()
				f.rs.ServeHTTP(rec, r)
				body := rec.Body.Bytes()
				if r.URL.Query().Has("get") {
					body = editJSON(t, body, func(v any) {
						for _, m := range v.([]any) {
							if m := m.(map[string]any); strings.HasSuffix(m["id"].(string), ".currentOffset") {
								m["value"] = "-5"
							}
						}
					})
				}
				w.Write(body)
			}
		}, "currentOffset -5"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeFlink(t, "2.2.1")
			srv := f.start()
			f.setFault(tc.fault(f))
			c := newTestCollector(t, Config{URL: srv.URL})
			s := c.PollOnce(context.Background())
			if len(s.Jobs) != 1 {
				t.Fatalf("PollOnce() has %d jobs, want 1 (err %v)", len(s.Jobs), s.Err)
			}
			v := findVertex(t, s.Jobs[0], f.sourceID)
			if v.Err == nil || !strings.Contains(v.Err.Error(), tc.wantErr) {
				t.Errorf("vertex Err = %v, want one naming %q", v.Err, tc.wantErr)
			}
			if !v.Stale {
				t.Errorf("vertex Stale = false, want true")
			}
			checkVertexNumbers(t, v)
			// The other vertex is untouched.
			if k := findVertex(t, s.Jobs[0], f.keyedID); k.Err != nil || k.Stale {
				t.Errorf("keyed vertex: err %v, stale %v", k.Err, k.Stale)
			}
		})
	}
}

// checkVertexNumbers checks the invariants a published vertex keeps.
func checkVertexNumbers(t *testing.T, v VertexSnapshot) {
	t.Helper()
	if v.Parallelism < 0 || v.Parallelism > MaxParallelism || len(v.Subtasks) != v.Parallelism {
		t.Errorf("vertex parallelism %d with %d subtasks, want 0..%d and one subtask each", v.Parallelism, len(v.Subtasks), MaxParallelism)
	}
	if v.MaxParallelism < 0 || v.MaxParallelism > MaxParallelism || v.MaxParallelism > 0 && v.MaxParallelism < v.Parallelism {
		t.Errorf("vertex maxParallelism %d (parallelism %d)", v.MaxParallelism, v.Parallelism)
	}
	if v.Kafka != nil {
		for _, st := range v.Kafka.States {
			if st.Partition < 0 || st.CurrentOffset < -1 || st.CommittedOffset < -1 {
				t.Errorf("Kafka state %+v: partition < 0 or offset < -1", st)
			}
		}
	}
}

// TestPollNonFiniteMetrics: "Infinity" and "-Infinity" metric values are
// unknown (NaN), like "NaN".
func TestPollNonFiniteMetrics(t *testing.T) {
	values := `[{"id":"0.numRecordsInPerSecond","value":"Infinity"},{"id":"1.numRecordsOutPerSecond","value":"-Infinity"},` +
		`{"id":"2.busyTimeMsPerSecond","value":"Infinity"},{"id":"3.numRecordsInPerSecond","value":"NaN"}]`
	f := newFakeFlink(t, "2.2.1")
	srv := f.start()
	list := f.recordedBody("vertex-keyed-metrics-list")
	f.setFault(f.jobPath("vertices", f.keyedID, "metrics"), func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("get") {
			w.Write([]byte(values))
			return
		}
		w.Write(list)
	})
	f.setFault(f.jobPath("vertices", f.keyedID, "backpressure"), func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"status":"deprecated"}`))
	})
	c := newTestCollector(t, Config{URL: srv.URL})
	k := findVertex(t, c.PollOnce(context.Background()).Jobs[0], f.keyedID)
	for _, st := range k.Subtasks {
		for name, v := range map[string]float64{"busy": st.BusyRatio, "backpressured": st.BackPressuredRatio, "idle": st.IdleRatio,
			"records in": st.RecordsInPerSecond, "records out": st.RecordsOutPerSecond} {
			if !math.IsNaN(v) {
				t.Errorf("subtask %d %s = %v, want NaN (unknown)", st.Index, name, v)
			}
		}
	}
}
