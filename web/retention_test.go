package web

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
)

// The source page warns, before any record is lost, when a subtask's lag
// time will reach its topic's retention, and names the retention; the
// topic page and both JSON twins carry the retention, observed.
func TestRetentionOnSourceAndTopicPages(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ts := newLiveServer(t, retentionStore(t, at, 120000), nil)
	o, _ := assign.KafkaSplitOwner(assign.TopicPartition{Topic: "orders", Partition: 1}, 2)
	doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource, 200)
	page := doc.Text()
	// At 90 s the lag time is 45 s, growing 0.5 s a second: 150 s to go.
	want := "at this rate subtask " + strconv.Itoa(o) + " falls past the 2-minute retention of orders-1 in about 3 min"
	if !strings.Contains(page, want) {
		t.Errorf("source page lacks %q", want)
	}
	if !strings.Contains(page, "orders: 2 m 0 s, cleanup delete") {
		t.Errorf("source page lacks the topic's retention")
	}
	if strings.Contains(page, "deleted unread: ≈") {
		t.Errorf("source page counts records lost; none were")
	}
	tdoc := getDoc(t, ts.URL+"/kafka/prod/topics/orders", 200)
	if r := tdoc.Find("[data-testid=retention-text]").Text(); r != "2 m 0 s, cleanup delete" {
		t.Errorf("topic page retention %q, want 2 m 0 s, cleanup delete", r)
	}

	var tv struct {
		Retention struct {
			RetentionMs   *int64 `json:"retentionMs"`
			CleanupPolicy string `json:"cleanupPolicy"`
			Basis         string `json:"basis"`
		} `json:"retention"`
	}
	getJSONURL(t, ts.URL+"/api/v1/kafka/prod/topics/orders", &tv)
	if tv.Retention.RetentionMs == nil || *tv.Retention.RetentionMs != 120000 || tv.Retention.Basis != "observed" {
		t.Errorf("topic JSON retention %+v, want 120000 ms observed", tv.Retention)
	}
	var vv struct {
		Retention []struct {
			Topic       string `json:"topic"`
			RetentionMs *int64 `json:"retentionMs"`
		} `json:"retention"`
		Subtasks []struct {
			Subtask                int     `json:"subtask"`
			TimeToRetentionSeconds float64 `json:"timeToRetentionSeconds"`
		} `json:"subtasks"`
	}
	getJSONURL(t, ts.URL+"/api/v1/jobs/"+tJob+"/vertices/"+tSource, &vv)
	if len(vv.Retention) != 1 || vv.Retention[0].Topic != "orders" || *vv.Retention[0].RetentionMs != 120000 {
		t.Errorf("vertex JSON retention %+v", vv.Retention)
	}
	for _, r := range vv.Subtasks {
		if want := -1.0; r.Subtask == o {
			want = 150
			if r.TimeToRetentionSeconds != want {
				t.Errorf("vertex JSON subtask %d time to retention %v, want %v", r.Subtask, r.TimeToRetentionSeconds, want)
			}
		}
	}
}

// getJSONURL decodes a 200 JSON answer of u into v.
func getJSONURL(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s = %d", u, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}
