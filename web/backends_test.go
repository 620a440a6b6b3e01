package web

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
)

// backendCells returns the text of each backend row of the overview: name
// → its cells, squeezed.
func backendCells(doc *goquery.Document) map[string][]string {
	out := map[string][]string{}
	doc.Find("[data-testid=endpoint-row], [data-testid=cluster-row]").Each(func(_ int, row *goquery.Selection) {
		var cells []string
		row.Find("td").Each(func(_ int, td *goquery.Selection) {
			cells = append(cells, strings.Join(strings.Fields(td.Text()), " "))
		})
		out[row.AttrOr("data-testid", "")+" "+row.Find("bdi").First().Text()] = cells
	})
	return out
}

// TestOverviewBackendsNotYetPolled: configured backends are rows of the
// overview before their first poll ends (not yet polled, no figures) and
// after a failed one (never reached, the error); the page, its live update
// and /metrics agree.
func TestOverviewBackendsNotYetPolled(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := live.New(live.Options{Now: func() time.Time { return at.Add(4 * time.Second) },
		Kafka: []string{"prod", "lost"}, Flink: []live.Endpoint{{Name: "jm", URL: "http://jm.example:8081"}}})
	ts := newLiveServer(t, st, nil)

	doc := getDoc(t, ts.URL+"/", 200)
	checkUpdateMatchesPage(t, doc, overviewUpdate(t, st.State().Overview()))
	got := backendCells(doc)
	for row, want := range map[string][]string{
		"endpoint-row jm":  {"jm http://jm.example:8081", "", "–", "–", "–", "–", "not yet polled"},
		"cluster-row prod": {"prod", "–", "–", "–", "–", "–", "not yet polled"},
		"cluster-row lost": {"lost", "–", "–", "–", "–", "–", "not yet polled"},
	} {
		if strings.Join(got[row], " | ") != strings.Join(want, " | ") {
			t.Errorf("before the first polls, %s = %q, want %q", row, got[row], want)
		}
	}
	if n := doc.Find("tr.stale").Length(); n != 3 {
		t.Errorf("%d rows marked stale before the first polls, want 3", n)
	}

	down := errors.New("dial tcp 10.0.0.9:9092: connection refused")
	st.UpdateKafka(&kafka.Snapshot{Cluster: "lost", CollectedAt: at, PollDuration: 1500 * time.Millisecond, Err: down})
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", URL: "http://jm.example:8081", CollectedAt: at, PollDuration: 20 * time.Millisecond, Err: down})
	doc = getDoc(t, ts.URL+"/", 200)
	checkUpdateMatchesPage(t, doc, overviewUpdate(t, st.State().Overview()))
	got = backendCells(doc)
	for row, want := range map[string][]string{
		"endpoint-row jm":  {"jm http://jm.example:8081", "", "–", "20 ms", "–", "–", "never reached · no data · " + down.Error()},
		"cluster-row prod": {"prod", "–", "–", "–", "–", "–", "not yet polled"},
		"cluster-row lost": {"lost", "–", "–", "–", "–", "1500 ms", "never reached · no data · " + down.Error()},
	} {
		if strings.Join(got[row], " | ") != strings.Join(want, " | ") {
			t.Errorf("after the failed polls, %s = %q, want %q", row, got[row], want)
		}
	}

	body := getMetrics(t, ts.URL)
	for _, want := range []string{
		`skewscope_backend_up{kind="kafka",name="prod"} 0`,
		`skewscope_backend_state{kind="kafka",name="prod",state="not yet polled"} 1`,
		`skewscope_backend_state{kind="kafka",name="prod",state="ok"} 0`,
		`skewscope_backend_up{kind="kafka",name="lost"} 0`,
		`skewscope_backend_state{kind="kafka",name="lost",state="never reached"} 1`,
		`skewscope_backend_poll_duration_seconds{kind="kafka",name="lost"} 1.5`,
		`skewscope_backend_up{kind="flink",name="jm"} 0`,
		`skewscope_backend_state{kind="flink",name="jm",state="never reached"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// A backend not yet polled has no poll to report.
	for _, absent := range []string{
		`skewscope_backend_last_poll_timestamp_seconds{kind="kafka",name="prod"}`,
		`skewscope_backend_poll_duration_seconds{kind="kafka",name="prod"}`,
	} {
		if strings.Contains(body, absent) {
			t.Errorf("/metrics has %s before the first poll", absent)
		}
	}
}

// TestOverviewStaleRows: a JobManager answering 500 and a Kafka cluster
// unreachable for 75 s after a good poll. The overview gives their data's
// age, not the latest try's, marks every job and topic row stale with it,
// and its live update carries the same ages; /api/v1/overview agrees.
func TestOverviewStaleRows(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	// The clock is read by the server's publishing goroutine while the
	// test moves it.
	var clock atomic.Int64
	clock.Store(at.UnixNano())
	st := live.New(live.Options{Now: func() time.Time { return time.Unix(0, clock.Load()).UTC() }})
	ts := newLiveServer(t, st, nil)
	job := flink.JobSnapshot{ID: "j1", Name: "orders-enrich", State: "RUNNING", NumRestarts: 0, Freshness: flink.Freshness{UpdatedAt: at}}
	part := kafka.Partition{Partition: 0, End: 10, Rate: 2, RateOK: true, Freshness: kafka.Freshness{UpdatedAt: at}}
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: at, Jobs: []flink.JobSnapshot{job}})
	st.UpdateKafka(&kafka.Snapshot{Cluster: "prod", CollectedAt: at, Topics: []kafka.Topic{{Name: "orders", Partitions: []kafka.Partition{part}}}})

	doc := getDoc(t, ts.URL+"/", 200)
	if n := doc.Find(`[data-testid=row-stale]`).Length(); n != 0 {
		t.Fatalf("fresh overview has %d stale marks, want none", n)
	}
	now := at
	for polls := 0; polls < 5; polls++ { // a poll every 15 s, each failing
		now = now.Add(15 * time.Second)
		clock.Store(now.UnixNano())
		old := job
		old.Freshness = flink.Freshness{UpdatedAt: at, Stale: true, Age: now.Sub(at)}
		st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: now, Err: errors.New("GET /jobs/overview: 500 Internal Server Error"), Jobs: []flink.JobSnapshot{old}})
		p := part
		p.Freshness = kafka.Freshness{UpdatedAt: at, Stale: true, Age: now.Sub(at)}
		st.UpdateKafka(&kafka.Snapshot{Cluster: "prod", CollectedAt: now, Err: errors.New("dial tcp: connection refused"),
			Topics: []kafka.Topic{{Name: "orders", Partitions: []kafka.Partition{p}}}})
	}
	doc = getDoc(t, ts.URL+"/", 200)
	checkUpdateMatchesPage(t, doc, overviewUpdate(t, st.State().Overview()))
	cells := backendCells(doc)
	if got := cells["endpoint-row jm"]; len(got) == 0 || !strings.HasPrefix(got[len(got)-1], "failing · data from 1 m 15 s ago") {
		t.Errorf("endpoint row = %q, want its data age: failing · data from 1 m 15 s ago", got)
	}
	if got := cells["cluster-row prod"]; len(got) == 0 || !strings.HasPrefix(got[len(got)-1], "failing · data from 1 m 15 s ago") {
		t.Errorf("cluster row = %q, want its data age: failing · data from 1 m 15 s ago", got)
	}
	for _, row := range []string{"job-row", "topic-row"} {
		sel := doc.Find(`[data-testid=` + row + `]`)
		mark := strings.Join(strings.Fields(sel.Find(`[data-testid=row-stale]`).Text()), " ")
		if sel.Length() != 1 || !sel.HasClass("stale") || mark != "stale · data from 1 m 15 s ago" {
			t.Errorf("%s: %d rows, class stale %v, mark %q; want 1, true, %q", row, sel.Length(), sel.HasClass("stale"), mark, "stale · data from 1 m 15 s ago")
		}
	}
	var ov live.OverviewView
	getJSONInto(t, ts.URL+"/api/v1/overview", &ov)
	if len(ov.Endpoints) != 1 || ov.Endpoints[0].Age.Seconds != 75 || !ov.Endpoints[0].Age.At.Equal(at) || !ov.Endpoints[0].Age.Tried.Equal(now) {
		t.Errorf("/api/v1/overview endpoints = %+v, want ageSeconds 75 at %v, tried at %v", ov.Endpoints, at, now)
	}
}

// TestOverviewDroppedJobs: the finished jobs an endpoint lists beyond
// maxJobs are counted on the overview and in /api/v1/overview.
func TestOverviewDroppedJobs(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := live.New(live.Options{Now: func() time.Time { return at }})
	ts := newLiveServer(t, st, nil)
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: at, DroppedJobs: 49_503, MaxJobs: 500,
		Jobs: []flink.JobSnapshot{{ID: "j1", Name: "orders-enrich", State: "RUNNING", NumRestarts: 0, Freshness: flink.Freshness{UpdatedAt: at}}}})
	doc := getDoc(t, ts.URL+"/", 200)
	checkUpdateMatchesPage(t, doc, overviewUpdate(t, st.State().Overview()))
	if got, want := doc.Find(`[data-testid=dropped-jobs]`).Text(), "49,503 finished jobs not shown: more than maxJobs (500)"; got != want {
		t.Errorf("dropped jobs note = %q, want %q", got, want)
	}
	var ov live.OverviewView
	getJSONInto(t, ts.URL+"/api/v1/overview", &ov)
	if len(ov.Endpoints) != 1 || ov.Endpoints[0].DroppedJobs != 49_503 || ov.Endpoints[0].MaxJobs != 500 {
		t.Errorf("/api/v1/overview endpoints = %+v, want droppedJobs 49503, maxJobs 500", ov.Endpoints)
	}
}

// TestOverviewUnlistedJob: a job the latest job list left out is on the
// overview with its last values, said to be not listed and stale.
func TestOverviewUnlistedJob(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	now := at.Add(10 * time.Second)
	st := live.New(live.Options{Now: func() time.Time { return now }})
	ts := newLiveServer(t, st, nil)
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: at, Jobs: []flink.JobSnapshot{{ID: "j1", Name: "orders-enrich", State: "RUNNING", Freshness: flink.Freshness{UpdatedAt: at}}}})
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: now, Jobs: []flink.JobSnapshot{
		{ID: "j1", Name: "orders-enrich", State: "RUNNING", Unlisted: 1, Freshness: flink.Freshness{UpdatedAt: at, Stale: true, Age: 10 * time.Second}}}})
	doc := getDoc(t, ts.URL+"/", 200)
	checkUpdateMatchesPage(t, doc, overviewUpdate(t, st.State().Overview()))
	row := doc.Find(`[data-testid=job-row]`)
	if got, want := row.Find(`[data-testid=job-unlisted]`).Text(), "not listed in the last poll"; got != want {
		t.Errorf("job row unlisted note = %q, want %q", got, want)
	}
	if mark := strings.Join(strings.Fields(row.Find(`[data-testid=row-stale]`).Text()), " "); mark != "stale · data from 10 s ago" {
		t.Errorf("job row stale mark = %q, want %q", mark, "stale · data from 10 s ago")
	}
	var ov live.OverviewView
	getJSONInto(t, ts.URL+"/api/v1/overview", &ov)
	if len(ov.Jobs) != 1 || ov.Jobs[0].Unlisted != 1 {
		t.Errorf("/api/v1/overview jobs = %+v, want the job with unlistedPolls 1", ov.Jobs)
	}
}
