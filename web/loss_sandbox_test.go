package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/sandbox"
)

// TestSandboxShowsRecordsDeletedUnread runs the sandbox with a retention of
// seconds, so that its hot orders subtask falls behind the log start soon,
// and the real collectors polled by the test itself (the log starts at every
// poll, as the dashboard does for the sandbox). Once the store counts
// records deleted unread, the vertex page's JSON and HTML show them on the
// partition's cell, its subtask and the headline figure, the job page on the
// vertex, and /metrics exports the same count. The only wait is on that
// condition; the deadline is a hang guard.
func TestSandboxShowsRecordsDeletedUnread(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the sandbox for a while")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	feed := startSandboxFeed(t, sandbox.Options{Seed: 13, Retention: 3 * time.Second, TrimEvery: time.Second},
		func(c *kafka.Config) { c.LogStartRefresh = time.Nanosecond })
	sb, st := feed.sb, feed.st
	job := feed.job(t, "orders-enrichment")
	// lostCell is the orders cell with the most records deleted unread.
	lostCell := func() (live.PartitionCell, int, bool) {
		vv, err := st.State().Vertex(job.ID, job.SourceVertexID, live.VertexQuery{Highlight: -1})
		if err != nil {
			return live.PartitionCell{}, -1, false
		}
		var best live.PartitionCell
		sub := -1
		for _, r := range vv.Subtasks {
			for _, c := range r.Partitions {
				if c.Topic == "orders" && c.Reading.Lost != nil && c.Reading.Lost.Records > 0 &&
					(sub < 0 || c.Reading.Lost.Records > best.Reading.Lost.Records) {
					best, sub = c, r.Subtask
				}
			}
		}
		return best, sub, sub >= 0
	}
	hangGuard := time.Now().Add(5 * time.Minute)
	polls := 0
	for {
		feed.poll(ctx)
		polls++
		if _, _, ok := lostCell(); ok {
			break
		}
		if time.Now().After(hangGuard) {
			t.Fatalf("after %d polls (5 minutes) no orders partition lost records; sandbox stats %+v", polls, sb.Stats())
		}
		time.Sleep(300 * time.Millisecond) // paces the polls; nothing waits on it
	}
	// No more polls: the store holds still while the pages are read.
	cell, sub, _ := lostCell()
	lost := cell.Reading.Lost.Records
	t.Logf("after %d polls: %s-%d on subtask %d lost %d records %s", polls, cell.Topic, cell.Partition, sub, lost,
		cell.Reading.Lost.FirstSeen.Format(time.TimeOnly))

	ts := newLiveServer(t, st, nil)
	path := "/jobs/" + job.ID + "/vertices/" + job.SourceVertexID
	var vj struct {
		RecordsLost int64 `json:"recordsLost"`
		Figures     []struct {
			Name, Kind, Partition string
			Value                 float64
		} `json:"figures"`
		Subtasks []struct {
			Subtask     int   `json:"subtask"`
			RecordsLost int64 `json:"recordsLost"`
			Partitions  []struct {
				Topic     string `json:"topic"`
				Partition int32  `json:"partition"`
				Reading   struct {
					State string `json:"state"`
					Lost  *struct {
						Records   int64     `json:"records"`
						FirstSeen time.Time `json:"firstSeen"`
					} `json:"lost"`
				} `json:"reading"`
			} `json:"partitions"`
		} `json:"subtasks"`
	}
	getJSONInto(t, ts.URL+"/api/v1"+path, &vj)
	if vj.RecordsLost < lost {
		t.Errorf("vertex JSON recordsLost %d, want at least orders-%d's %d", vj.RecordsLost, cell.Partition, lost)
	}
	var gotCell int64 = -1
	for _, r := range vj.Subtasks {
		for _, c := range r.Partitions {
			if c.Topic == "orders" && c.Partition == cell.Partition && c.Reading.Lost != nil {
				gotCell = c.Reading.Lost.Records
				if r.Subtask != sub || r.RecordsLost < lost || c.Reading.Lost.FirstSeen.IsZero() {
					t.Errorf("vertex JSON: orders-%d under subtask %d (row lost %d, first seen %v), want subtask %d, at least %d, a time",
						c.Partition, r.Subtask, r.RecordsLost, c.Reading.Lost.FirstSeen, sub, lost)
				}
			}
		}
	}
	if gotCell != lost {
		t.Errorf("vertex JSON: orders-%d reading.lost.records %d, want %d", cell.Partition, gotCell, lost)
	}
	found := false
	for _, f := range vj.Figures {
		if f.Name == live.FigureRecordsLost {
			found = true
			if f.Kind != string(live.Observed) || f.Value != float64(vj.RecordsLost) || f.Partition == "" {
				t.Errorf("vertex JSON figure %+v, want observed %d on a partition", f, vj.RecordsLost)
			}
		}
	}
	if !found {
		t.Errorf("vertex JSON has no Records deleted unread figure: %+v", vj.Figures)
	}

	doc := getDoc(t, ts.URL+path, 200)
	sel := fmt.Sprintf(`[data-testid=pcell][data-topic=orders][data-partition="%d"]`, cell.Partition)
	pc := doc.Find(sel)
	if !pc.HasClass("lost") || !strings.Contains(pc.Find("i").AttrOr("title", ""), "records deleted unread") {
		t.Errorf("vertex page cell %s: class %q, reading %q; want lost, naming the records deleted unread", sel, pc.AttrOr("class", ""), pc.Find("i").AttrOr("title", ""))
	}
	row := doc.Find(fmt.Sprintf(`[data-testid=subtask-row][data-subtask="%d"]`, sub))
	if !row.HasClass("lost") || !strings.HasSuffix(row.Find("[data-testid=row-lost]").Text(), " deleted unread") {
		t.Errorf("vertex page subtask %d: class %q, lost %q", sub, row.AttrOr("class", ""), row.Find("[data-testid=row-lost]").Text())
	}

	var jj struct {
		Vertices []struct {
			ID          string `json:"id"`
			RecordsLost int64  `json:"recordsLost"`
		} `json:"vertices"`
	}
	getJSONInto(t, ts.URL+"/api/v1/jobs/"+job.ID, &jj)
	for _, v := range jj.Vertices {
		if v.ID == job.SourceVertexID && v.RecordsLost != vj.RecordsLost {
			t.Errorf("job JSON: source recordsLost %d, vertex page %d", v.RecordsLost, vj.RecordsLost)
		}
	}

	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := fmt.Sprintf(`skewscope_source_partition_records_lost_total{cluster="sandbox",endpoint="sandbox",job_name="orders-enrichment",partition="%d",topic="orders",vertex_name="Source: Kafka Source"} %d`,
		cell.Partition, lost)
	if !strings.Contains(string(body), want+"\n") {
		var have []string
		for _, l := range strings.Split(string(body), "\n") {
			if strings.HasPrefix(l, "skewscope_source_partition_records_lost_total{") {
				have = append(have, l)
			}
		}
		t.Errorf("/metrics lacks\n%s\nhas\n%s", want, strings.Join(have, "\n"))
	}
}

func getJSONInto(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s = %d %s", u, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}
