package flink

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCommittedOffsetReadWhenItCanChange: a source's committedOffset ids
// are asked for on the first polls and for committedSettle after a newer
// completed checkpoint shows, when the checkpoints cannot be read, and when
// a subtask's attempt changes; otherwise the values read last are shown,
// their CommittedAt saying when, while currentOffset is read every poll.
func TestCommittedOffsetReadWhenItCanChange(t *testing.T) {
	f := newFakeFlink(t, "2.3.0")
	srv := f.start()
	src := f.jobPath("vertices", f.sourceID, "metrics")

	var (
		mu     sync.Mutex
		asks   int   // value requests that asked for a committedOffset id
		shift  int64 // added to every offset value the fake answers
		cpBody []byte
	)
	f.setFault(src, func(w http.ResponseWriter, r *http.Request) {
		if !r.URL.Query().Has("get") {
			f.rs.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		if strings.Contains(r.URL.RawQuery, KafkaCommittedOffset) {
			asks++
		}
		d := shift
		mu.Unlock()
		rec := httptest.NewRecorder()
		f.rs.ServeHTTP(rec, r)
		var items []map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &items); err != nil {
			t.Errorf("values answer: %v", err)
		}
		for _, it := range items {
			id, _ := it["id"].(string)
			if _, ok := ParseKafkaOffsetID(id); ok {
				v, _ := strconv.ParseInt(it["value"].(string), 10, 64)
				if v >= 0 {
					it["value"] = strconv.FormatInt(v+d, 10)
				}
			}
		}
		json.NewEncoder(w).Encode(items)
	})
	setCheckpoint := func(id int, fail bool) {
		var cps map[string]any
		if err := json.Unmarshal(f.recordedBody("job-checkpoints"), &cps); err != nil {
			t.Fatal(err)
		}
		cps["latest"].(map[string]any)["completed"].(map[string]any)["id"] = id
		b, _ := json.Marshal(cps)
		mu.Lock()
		cpBody = b
		mu.Unlock()
		f.setFault(f.jobPath("checkpoints"), func(w http.ResponseWriter, r *http.Request) {
			if fail {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			w.Write(cpBody)
		})
	}
	setCheckpoint(20, false)

	clock := newTestClock()
	c := newTestCollector(t, Config{URL: srv.URL, PollInterval: 10 * time.Second})
	clock.install(c)
	var readAt time.Time
	poll := func(step string, wantAsk bool, wantShift int64) {
		t.Helper()
		mu.Lock()
		before, d := asks, shift
		mu.Unlock()
		s := c.PollOnce(context.Background())
		v := findVertex(t, s.Jobs[0], f.sourceID)
		if v.Err != nil || v.Kafka == nil || len(v.Kafka.States) == 0 {
			t.Fatalf("%s: source vertex err %v, kafka %+v", step, v.Err, v.Kafka)
		}
		mu.Lock()
		asked := asks > before
		mu.Unlock()
		if asked != wantAsk {
			t.Errorf("%s: asked for committedOffset %v, want %v", step, asked, wantAsk)
		}
		if asked {
			readAt = s.CollectedAt
		}
		base := recordedOffsets(t, f)
		for _, st := range v.Kafka.States {
			if st.CommittedID == "" {
				continue
			}
			if st.CommittedAt != readAt {
				t.Errorf("%s: %s CommittedAt %v, want %v", step, st.CommittedID, st.CommittedAt, readAt)
			}
			if b := base[st.CommittedID]; b >= 0 && st.CommittedOffset != b+wantShift {
				t.Errorf("%s: %s = %d, want %d", step, st.CommittedID, st.CommittedOffset, b+wantShift)
			}
			if b := base[st.CurrentID]; st.CurrentID != "" && b >= 0 && st.CurrentOffset != b+d {
				t.Errorf("%s: %s = %d, want the fresh %d", step, st.CurrentID, st.CurrentOffset, b+d)
			}
		}
		clock.add(10 * time.Second)
	}
	setShift := func(d int64) { mu.Lock(); shift = d; mu.Unlock() }

	poll("first poll", true, 0)
	poll("10 s after the checkpoint showed", true, 0)
	poll("20 s after", true, 0)
	setShift(5)
	poll("30 s after: settled", false, 0)
	poll("40 s after", false, 0)
	setCheckpoint(21, false)
	poll("a newer checkpoint", true, 5)
	setShift(6)
	poll("10 s after it", true, 6)
	poll("20 s after it", true, 6)
	setShift(7)
	poll("settled again", false, 6)
	setCheckpoint(21, true)
	poll("checkpoints unreadable", true, 7)
	setCheckpoint(21, false)
	poll("checkpoints back, same one", false, 7)

	// A restart: the subtasks' attempts change, the new readers register.
	f.setFault(f.jobPath("vertices", f.sourceID), func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		f.rs.ServeHTTP(rec, r)
		var det map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &det); err != nil {
			t.Fatal(err)
		}
		for _, st := range det["subtasks"].([]any) {
			m := st.(map[string]any)
			m["attempt"] = 1
			m["start-time"] = m["start-time"].(float64) + 60000
		}
		json.NewEncoder(w).Encode(det)
	})
	setShift(8)
	poll("a new attempt", true, 8)
}

// recordedOffsets returns the recorded source vertex values by id.
func recordedOffsets(t *testing.T, f *fakeFlink) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	ms, err := decodeMetrics(f.recordedBody("vertex-source-metrics-offsets"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if v, ok := m.Int64(); ok {
			out[m.ID] = v
		}
	}
	return out
}

// TestMetricPlanKept: the plan kept between polls is the one planMetrics
// makes, each poll gets Kafka entries of its own, and a change of ids or
// parallelism makes it again.
func TestMetricPlanKept(t *testing.T) {
	f := newFakeFlink(t, "2.3.0")
	var list []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(f.recordedBody("vertex-source-metrics-list"), &list); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range list {
		ids = append(ids, m.ID)
	}
	vs := &VertexSnapshot{ID: "src", Source: true, Parallelism: 4, Subtasks: make([]SubtaskSnapshot, 4)}
	c := newTestCollector(t, Config{URL: "http://127.0.0.1:1"})
	key := stateKey{"j", "src"}
	a := c.metricPlan(key, vs, ids)
	want := planMetrics(vs, ids)
	if !slices.Equal(a.want, want.want) || !slices.Equal(a.base, want.base) || a.kafka == nil || len(a.kafka.States) == 0 {
		t.Fatalf("kept plan asks for %d ids (%d without committedOffset), want %d (%d)", len(a.want), len(a.base), len(want.want), len(want.base))
	}
	a.kafka.States[0].CurrentOffset = 42
	for i := range a.kafka.States {
		if a.kafka.States[i].Split != nil {
			a.kafka.States[i].Split.Watermark = 42
		}
	}
	b := c.metricPlan(key, vs, slices.Clone(ids))
	if &b.want[0] != &a.want[0] {
		t.Error("the same ids made the plan again")
	}
	if b.kafka == a.kafka || b.kafka.States[0].CurrentOffset != -1 {
		t.Errorf("the second poll's Kafka entries are the first's: %+v", b.kafka.States[0])
	}
	for i, st := range b.kafka.States {
		if st.Split != nil && (st.Split == a.kafka.States[i].Split || st.Split.Watermark != WatermarkUnread) {
			t.Fatalf("entry %d: split gauges shared between polls: %+v", i, st.Split)
		}
	}
	vs2 := &VertexSnapshot{ID: "src", Source: true, Parallelism: 2, Subtasks: make([]SubtaskSnapshot, 2)}
	if got := c.metricPlan(key, vs2, ids); len(got.opIn) != 2 {
		t.Errorf("after a rescale to 2 the plan has %d subtasks", len(got.opIn))
	}
	if got := c.metricPlan(key, vs2, ids[:len(ids)/2]); slices.Equal(got.want, a.want) {
		t.Error("other ids kept the plan")
	}
}
