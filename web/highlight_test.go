package web

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A highlight that names a subtask or a partition the vertex does not have
// (a link copied before a rescale) says so in a note near the top of the
// page; the page marks nothing, and the JSON answers as without it.
func TestStaleHighlightSaysSo(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ts := restoredServer(t, liveStore(t, at), at, "")
	source, keyed := "/jobs/"+tJob+"/vertices/"+tSource, "/jobs/"+tJob+"/vertices/"+tKeyed
	for _, tc := range []struct{ path, note string }{
		{source + "?highlight=subtask:99", "Subtask 99 is not one of this vertex's 4 subtasks (0–3); the job may have been rescaled since the link was made."},
		{keyed + "?highlight=subtask:3", "Subtask 3 is not one of this vertex's 3 subtasks (0–2); the job may have been rescaled since the link was made."},
		{source + "?highlight=partition:orders:99", `Partition 99 of topic "orders" is not one of the 12 partitions of that topic this source reads; the topic may have fewer partitions than the link assumes.`},
		{source + "?highlight=partition:t:99", `Partition 99 of topic "t" is not one this source reads: Flink's metrics list no partition of that topic here.`},
		{keyed + "?highlight=partition:orders:1", `Partition 1 of topic "orders" is not highlighted: this vertex reads no Kafka partitions; a partition is highlighted on its Kafka source's page.`},
		{source + "?highlight=subtask:3", ""},
		{source + "?highlight=partition:payments.v1:5", ""},
		{source, ""},
	} {
		doc := getDoc(t, ts.URL+tc.path, http.StatusOK)
		note := doc.Find("[data-testid=highlight-note]")
		if got := strings.TrimSpace(note.Text()); got != tc.note {
			t.Errorf("GET %s: highlight note %q, want %q", tc.path, got, tc.note)
		}
		if tc.note == "" {
			if strings.Contains(tc.path, "highlight=") && doc.Find("tr.hl, .pc.hl").Length() == 0 {
				t.Errorf("GET %s: nothing highlighted", tc.path)
			}
			continue
		}
		// Near the top: before the figures and the grid.
		if first := doc.Find("[data-testid=highlight-note], [data-testid=figures], [data-testid=prediction]").First(); first.AttrOr("data-testid", "") != "highlight-note" {
			t.Errorf("GET %s: the note comes after the figures", tc.path)
		}
		if strings.Contains(doc.Text(), "Highlighted from the link") {
			t.Errorf("GET %s: the page says the link highlights what it does not have", tc.path)
		}
		if n := doc.Find("tr.hl, .pc.hl").Length(); n != 0 {
			t.Errorf("GET %s: %d elements highlighted, want none", tc.path, n)
		}
		resp, err := http.Get(ts.URL + "/api/v1" + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var v struct {
			ID       string            `json:"id"`
			Subtasks []json.RawMessage `json:"subtasks"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &v) != nil || v.ID == "" || len(v.Subtasks) == 0 {
			t.Errorf("GET /api/v1%s = %d %.200s, want the vertex's JSON", tc.path, resp.StatusCode, body)
		}
	}
}

// The planner says so too when its highlight names a subtask neither
// layout has, a partition its topics do not have, or is not a highlight.
func TestPlannerStaleHighlightSaysSo(t *testing.T) {
	s := newTestServer(t)
	const plan = "/plan?topic=orders:12&topic=payments:6&parallelism=4&target=6&highlight="
	for _, tc := range []struct{ highlight, note string }{
		{"subtask:99", "Subtask 99 is in neither layout: now has 4 subtasks (0–3), the target 6 (0–5); the job may have been rescaled since the link was made."},
		{"partition:orders:99", `Partition 99 of topic "orders" is not highlighted: the plan gives that topic 12 partitions (0–11); it may have had more when the link was made.`},
		{"partition:t:1", `Partition 1 of topic "t" is not highlighted: the plan's topics do not include it.`},
		{"row:1", `Nothing is highlighted: highlight="row:1" is not subtask:N or partition:TOPIC:N.`},
		{"subtask:5", ""},
		{"partition:orders:11", ""},
	} {
		rec, doc := get(t, s, plan+tc.highlight)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s%s = %d", plan, tc.highlight, rec.Code)
		}
		if got := strings.TrimSpace(doc.Find(testid("highlight-note")).Text()); got != tc.note {
			t.Errorf("highlight=%s: note %q, want %q", tc.highlight, got, tc.note)
		}
	}
}
