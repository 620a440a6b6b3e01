package flink

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// TestStarvedReadersWatermark: a reader without a split lists no Kafka
// offset ids, but its currentOutputWatermark (Long.MIN_VALUE for the whole
// run) is listed under the same source operator as its siblings'; the
// collector must ask for it and read it as WatermarkNone. Recorded from real
// MiniClusters (testdata/flink/eventtime/<version>/starved: 2 partitions, 4
// readers).
func TestStarvedReadersWatermark(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("..", "testdata", "flink", "eventtime", "*", "starved"))
	if len(dirs) == 0 {
		t.Fatal("no recordings under testdata/flink/eventtime/*/starved (record them: SKEWSCOPE_RECORD=1 go test -tags e2e -run 'TestFlinkGroundTruth/.*/eventtime' ./e2e/)")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(filepath.Dir(dir)), func(t *testing.T) {
			var m struct {
				Starved []int `json:"starvedSubtasks"`
				Owners  []int `json:"owners"`
			}
			readJSON(t, filepath.Join(dir, "manifest.json"), &m)
			var list []struct {
				ID string `json:"id"`
			}
			readJSON(t, filepath.Join(dir, "vertex-source-metrics-list.json"), &list)
			ids := make([]string, len(list))
			for i, e := range list {
				ids[i] = e.ID
			}
			values := map[string]Metric{}
			files, _ := filepath.Glob(filepath.Join(dir, "vertex-source-metrics-values*.json"))
			for _, f := range files {
				var vs []struct {
					ID    string `json:"id"`
					Value string `json:"value"`
				}
				readJSON(t, f, &vs)
				for _, v := range vs {
					fv, _ := strconv.ParseFloat(v.Value, 64)
					values[v.ID] = Metric{ID: v.ID, Raw: v.Value, Value: fv}
				}
			}
			const p = 4
			vs := &VertexSnapshot{Source: true, Parallelism: p, Subtasks: make([]SubtaskSnapshot, p)}
			for i := range vs.Subtasks {
				vs.Subtasks[i].Index = i
			}
			mp := planMetrics(vs, ids)
			if len(m.Starved) == 0 {
				t.Fatalf("manifest names no starved subtask")
			}
			for i := range vs.Subtasks {
				id := strconv.Itoa(i) + ".Source__Kafka_Source.currentOutputWatermark"
				if !slices.Contains(mp.want, id) {
					t.Errorf("subtask %d: planMetrics does not ask for %s", i, id)
					continue
				}
				st := &vs.Subtasks[i]
				if err := applyEventTime(st, vs, mp.operator[i], values); err != nil {
					t.Errorf("subtask %d: applyEventTime: %v", i, err)
				}
				starved := slices.Contains(m.Starved, i)
				switch w := st.EventTime.OutputWatermark; {
				case !st.EventTime.Read:
					t.Errorf("subtask %d: event time not read", i)
				case starved && w != WatermarkNone:
					t.Errorf("subtask %d (no split): output watermark %d, want WatermarkNone", i, w)
				case !starved && !IsEventTime(w):
					t.Errorf("subtask %d (reads a partition): output watermark %d, want an event time", i, w)
				}
			}
		})
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
