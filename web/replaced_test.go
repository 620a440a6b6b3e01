package web

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/live"
)

const (
	tNewJob    = "fedcba9876543210fedcba9876543210"
	tNewSource = "cccccccccccccccccccccccccccccccc"
	tNewKeyed  = "dddddddddddddddddddddddddddddddd"
	tOtherJob  = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
	// slashy is a job name that only an escaped path segment can carry.
	slashy = "a/b + c"
)

// sourceObs is a Kafka source observation with each of liveTopics'
// partitions on owner(tp), at currentOffset 1999 + 100·owner.
func sourceObs(owner func(assign.TopicPartition) int) *flink.KafkaSourceObservation {
	var ids []string
	var vals []flink.Metric
	for _, tp := range assign.Partitions(liveTopics) {
		o := owner(tp)
		base := fmt.Sprintf("%d.Source__Kafka_Source.KafkaSourceReader.topic.%s.partition.%d.", o, flink.SanitizeMetricName(tp.Topic), tp.Partition)
		ids = append(ids, base+"currentOffset", base+"committedOffset")
		vals = append(vals, flink.Metric{ID: base + "currentOffset", Raw: fmt.Sprint(1999 + 100*o)}, flink.Metric{ID: base + "committedOffset", Raw: "1500"})
	}
	obs := flink.ParseKafkaSourceMetricIDs(ids)
	obs.ApplyValues(vals)
	return obs
}

func subtasks(p int) []flink.SubtaskSnapshot {
	out := make([]flink.SubtaskSnapshot, p)
	for i := range out {
		out[i] = flink.SubtaskSnapshot{Index: i, Status: "RUNNING", BusyRatio: 0.1, RecordsInPerSecond: 10, RecordsOutPerSecond: 10, StateSize: 1000}
	}
	return out
}

// restoredStore is liveStore after a restore: the job tJob (p=4) was
// stopped with a savepoint (FINISHED) and resubmitted as tNewJob at p=6,
// whose source reads the partitions where Flink's restore puts them. The
// new job's vertex ids differ from the old ones, so only names link them.
// A second job, named slashy, runs beside it.
func restoredStore(t *testing.T, at time.Time) (*live.Store, *flink.Snapshot) {
	t.Helper()
	return restoredStoreListing(t, at, true)
}

// restoredStoreListing is restoredStore; withOldVertices false lists the
// ended job as the collector does, without vertices (Flink has no metrics
// for it and skewscope asks nothing more of it).
func restoredStoreListing(t *testing.T, at time.Time, withOldVertices bool) (*live.Store, *flink.Snapshot) {
	t.Helper()
	st := liveStore(t, at)
	res, err := assign.Restore(assign.RestoreInput{Topics: liveTopics, History: []int{4, 6}})
	if err != nil {
		t.Fatal(err)
	}
	owner := func(tp assign.TopicPartition) int {
		o, _ := res.Assignment.OwnerOf(tp)
		return o
	}
	cur := flink.JobSnapshot{ID: tNewJob, Name: "orders <enrichment>", State: "RUNNING", StartTime: at.Add(20 * time.Second),
		Restored: &flink.RestoreInfo{CheckpointID: 7, IsSavepoint: true, ExternalPath: "s3://sp/savepoint-1"},
		Vertices: []flink.VertexSnapshot{
			{ID: tNewSource, Name: "Source: Kafka Source", Parallelism: 6, MaxParallelism: 128, Source: true, Kafka: sourceObs(owner), Subtasks: subtasks(6)},
			{ID: tNewKeyed, Name: "Enrich <b>Orders</b>", Parallelism: 6, MaxParallelism: 128, Keyed: true, Subtasks: subtasks(6)},
		}}
	old := flink.JobSnapshot{ID: tJob, Name: "orders <enrichment>", State: "FINISHED", StartTime: at,
		Vertices: []flink.VertexSnapshot{
			{ID: tSource, Name: "Source: Kafka Source", Parallelism: 4, MaxParallelism: 128, Source: true, Subtasks: subtasks(4)},
			{ID: tKeyed, Name: "Enrich <b>Orders</b>", Parallelism: 3, MaxParallelism: 128, Keyed: true, Subtasks: subtasks(3)},
		}}
	if !withOldVertices {
		old.Vertices, old.NumRestarts = nil, -1
	}
	other := flink.JobSnapshot{ID: tOtherJob, Name: slashy, State: "RUNNING", StartTime: at,
		Vertices: []flink.VertexSnapshot{{ID: tKeyed, Name: "Enrich", Parallelism: 2, MaxParallelism: 128, Keyed: true, Subtasks: subtasks(2)}}}
	fs := &flink.Snapshot{Endpoint: "jm", CollectedAt: at.Add(30 * time.Second), FlinkVersion: "2.2.1", Jobs: []flink.JobSnapshot{cur, other, old}}
	st.UpdateFlink(fs)
	// What the endpoint lists once Flink's job store has expired tJob.
	later := *fs
	later.Jobs = []flink.JobSnapshot{cur, other}
	return st, &later
}

// restoredServer serves st with a fixed clock, a minute after the restore.
func restoredServer(t *testing.T, st *live.Store, at time.Time, prefix string) *httptest.Server {
	t.Helper()
	s, err := NewServer(Options{Live: st, RoutePrefix: prefix, Now: func() time.Time { return at.Add(80 * time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

// getNoFollow fetches u without following redirects.
func getNoFollow(t *testing.T, u string) (*http.Response, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestByNameLinksRedirectToTheCurrentRun(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st, _ := restoredStore(t, at)
	ts := restoredServer(t, st, at, "")
	newVertex := "/jobs/" + tNewJob + "/vertices/" + tNewSource
	for _, c := range []struct{ path, location string }{
		{"/jobs/by-name/orders%20%3Cenrichment%3E", "/jobs/" + tNewJob},
		{"/jobs/by-name/orders%20%3Cenrichment%3E/vertices/Source:%20Kafka%20Source", newVertex},
		// What urlquery in an alert template writes: '+' for a space.
		{"/jobs/by-name/orders+%3Cenrichment%3E/vertices/Source%3A+Kafka+Source", newVertex},
		// The query goes along.
		{"/jobs/by-name/orders%20%3Cenrichment%3E/vertices/Source:%20Kafka%20Source?history=4,6&color=rate&highlight=subtask:1&embed=1&endpoint=jm",
			newVertex + "?color=rate&embed=1&endpoint=jm&highlight=subtask%3A1&history=4%2C6#subtask-1"},
		// A slash in a name is %2F; a plus is %2B.
		{"/jobs/by-name/a%2Fb%20%2B%20c", "/jobs/" + tOtherJob},
		{"/jobs/by-name/a%2Fb+%2B+c/vertices/Enrich", "/jobs/" + tOtherJob + "/vertices/" + tKeyed},
	} {
		resp, body := getNoFollow(t, ts.URL+c.path)
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != c.location {
			t.Errorf("GET %s = %d Location %q, want 302 to %s\n%.300s", c.path, resp.StatusCode, resp.Header.Get("Location"), c.location, body)
		}
	}
	for _, c := range []struct {
		path   string
		status int
		want   string
	}{
		{"/jobs/by-name/nope", 404, `job named &#34;nope&#34;: not found`},
		{"/jobs/by-name/orders%20%3Cenrichment%3E/vertices/Sink", 404, `vertex named &#34;Sink&#34; in job &#34;orders &lt;enrichment&gt;&#34;`},
		{"/jobs/by-name/orders%20%3Cenrichment%3E?endpoint=other", 404, `on endpoint &#34;other&#34;: not found`},
		{"/jobs/by-name/" + strings.Repeat("x", 1100), 400, "job: the name is 1100 bytes; at most 1024"},
	} {
		resp, body := getNoFollow(t, ts.URL+c.path)
		if resp.StatusCode != c.status || !strings.Contains(body, c.want) {
			t.Errorf("GET %s = %d, want %d with %s\n%.600s", c.path, resp.StatusCode, c.status, c.want, body)
		}
	}

	// Under a route prefix.
	pts := restoredServer(t, st, at, "/skewscope")
	resp, _ := getNoFollow(t, pts.URL+"/skewscope/jobs/by-name/a%2Fb+%2B+c?embed=1")
	if want := "/skewscope/jobs/" + tOtherJob + "?embed=1"; resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != want {
		t.Errorf("prefixed by-name link = %d %q, want 302 to %s", resp.StatusCode, resp.Header.Get("Location"), want)
	}
}

func TestByNameJSONAnswersTheCurrentRun(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st, _ := restoredStore(t, at)
	ts := restoredServer(t, st, at, "")
	resp, body := getNoFollow(t, ts.URL+"/api/v1/jobs/by-name/orders%20%3Cenrichment%3E")
	var jv live.JobView
	if err := json.Unmarshal([]byte(body), &jv); resp.StatusCode != 200 || err != nil || jv.ID != tNewJob || jv.ReplacedBy != nil {
		t.Errorf("GET /api/v1/jobs/by-name/… = %d %+v (%v), want 200 with the current run %s", resp.StatusCode, jv.ID, err, tNewJob)
	}
	resp, body = getNoFollow(t, ts.URL+"/api/v1/jobs/by-name/orders+%3Cenrichment%3E/vertices/Source%3A+Kafka+Source?color=rate")
	var vv live.VertexView
	if err := json.Unmarshal([]byte(body), &vv); resp.StatusCode != 200 || err != nil || vv.JobID != tNewJob || vv.ID != tNewSource {
		t.Errorf("GET vertex by name = %d %s/%s (%v), want 200 with %s/%s", resp.StatusCode, vv.JobID, vv.ID, err, tNewJob, tNewSource)
	}
	for _, c := range []struct {
		path   string
		status int
		want   string
	}{
		{"/api/v1/jobs/by-name/nope", 404, `{"error":"job named \"nope\": not found"}`},
		{"/api/v1/jobs/by-name/a%2Fb%20%2B%20c/vertices/Nope", 404, `vertex named \"Nope\" in job \"a/b + c\"`},
		{"/api/v1/jobs/by-name/orders%20%3Cenrichment%3E/vertices/Source:%20Kafka%20Source?color=blue", 400, "color: "},
	} {
		resp, body := getNoFollow(t, ts.URL+c.path)
		if resp.StatusCode != c.status || !strings.Contains(body, c.want) {
			t.Errorf("GET %s = %d %s, want %d with %s", c.path, resp.StatusCode, body, c.status, c.want)
		}
	}
}

func TestReplacedJobShowsItsSuccessor(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st, _ := restoredStore(t, at)
	ts := restoredServer(t, st, at, "")

	jv, err := st.State().Job("", tJob)
	if err != nil {
		t.Fatal(err)
	}
	doc := getDoc(t, ts.URL+"/jobs/"+tJob, 200)
	checkUpdateMatchesPage(t, doc, jobUpdate(t, jv))
	banner := doc.Find("[data-testid=replaced-banner]")
	if href := banner.Find("[data-testid=replaced-link]").AttrOr("href", ""); href != "/jobs/"+tNewJob {
		t.Errorf("job banner links to %q, want /jobs/%s", href, tNewJob)
	}
	if txt := banner.Text(); !strings.Contains(txt, "(orders <enrichment>) at 2026-11-30 12:00:20 UTC") || !strings.Contains(txt, "ago") {
		t.Errorf("job banner says %q, want the successor's name and start time", txt)
	}
	if n := getDoc(t, ts.URL+"/jobs/"+tNewJob, 200).Find("[data-testid=replaced-banner]").Length(); n != 0 {
		t.Errorf("the current run shows %d replaced banners", n)
	}

	// The vertex banner links to the successor's vertex of the same name.
	vv, err := st.State().Vertex(tJob, tSource, live.VertexQuery{Color: "lag", Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	vdoc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource, 200)
	checkUpdateMatchesPage(t, vdoc, vertexUpdate(t, vv))
	if href := vdoc.Find("[data-testid=replaced-banner] [data-testid=replaced-link]").AttrOr("href", ""); href != "/jobs/"+tNewJob+"/vertices/"+tNewSource {
		t.Errorf("vertex banner links to %q, want the new job's source %s", href, tNewSource)
	}
	edoc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tKeyed+"?embed=1", 200)
	if href := edoc.Find("[data-testid=replaced-link]").AttrOr("href", ""); href != "/jobs/"+tNewJob+"/vertices/"+tNewKeyed {
		t.Errorf("embedded banner links to %q, want the keyed vertex's own page", href)
	}

	for _, c := range []struct{ path, location string }{
		{"/jobs/" + tJob + "?follow=1", "/jobs/" + tNewJob},
		{"/jobs/" + tJob + "/vertices/" + tSource + "?follow=1&color=rate", "/jobs/" + tNewJob + "/vertices/" + tNewSource + "?color=rate"},
		{"/api/v1/jobs/" + tJob + "/vertices/" + tKeyed + "?follow=1", "/api/v1/jobs/" + tNewJob + "/vertices/" + tNewKeyed},
	} {
		resp, _ := getNoFollow(t, ts.URL+c.path)
		if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != c.location {
			t.Errorf("GET %s = %d %q, want 302 to %s", c.path, resp.StatusCode, resp.Header.Get("Location"), c.location)
		}
	}
	_, body := getNoFollow(t, ts.URL+"/api/v1/jobs/"+tJob+"/vertices/"+tSource)
	var got live.VertexView
	if err := json.Unmarshal([]byte(body), &got); err != nil || got.ReplacedBy == nil || got.ReplacedBy.NewID != tNewJob || got.ReplacedBy.VertexID != tNewSource {
		t.Errorf("vertex JSON of the replaced job: replacedBy = %+v (%v), want %s/%s", got.ReplacedBy, err, tNewJob, tNewSource)
	}
	if !strings.Contains(body, `"replacedBy":{"endpoint":"jm","name":"orders \u003cenrichment\u003e","id":"`+tNewJob+`","at":"2026-11-30T12:00:20Z"`) {
		t.Errorf("vertex JSON replacedBy fields: %s", body)
	}
}

func TestOverviewFoldsReplacedRunsUnderTheCurrentRun(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st, _ := restoredStore(t, at)
	ts := restoredServer(t, st, at, "")
	ov := st.State().Overview()
	if n := len(ov.Jobs); n != 3 || ov.Jobs[2].ID != tJob {
		t.Fatalf("overview JSON lists %d jobs, the replaced one last? %+v", n, ov.Jobs)
	}
	doc := getDoc(t, ts.URL+"/", 200)
	checkUpdateMatchesPage(t, doc, overviewUpdate(t, ov))
	var ids []string
	doc.Find("[data-testid=job-row] .mono").Each(func(i int, s *goquery.Selection) {
		if s.Parent().Is("td") && s.Is("span") {
			ids = append(ids, s.Text())
		}
	})
	if want := []string{tNewJob, tOtherJob}; !slices.Equal(ids, want) {
		t.Errorf("overview job rows %v, want the running ones only: %v", ids, want)
	}
	// The replaced run is folded under the run that replaced it.
	current := doc.Find("[data-testid=job-row][data-job=" + tNewJob + "]")
	earlier := current.Next()
	if !earlier.Is("[data-testid=earlier-runs]") {
		t.Fatalf("the row after the current run is %q, want its earlier runs", earlier.AttrOr("data-testid", ""))
	}
	run := earlier.Find("[data-testid=earlier-run]")
	if run.Length() != 1 || run.Find("a").AttrOr("href", "") != "/jobs/"+tJob || !strings.Contains(run.Text(), "replaced by "+shortID(tNewJob)) {
		t.Errorf("earlier run %q (link %q), want %s replaced by %s", run.Text(), run.Find("a").AttrOr("href", ""), tJob, tNewJob)
	}
	if got := earlier.Find("summary").Text(); got != "1 earlier run" {
		t.Errorf("earlier runs' summary %q", got)
	}
}

func TestForgottenJobLinksToItsSuccessor(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st, later := restoredStore(t, at)
	st.UpdateFlink(later) // Flink's job store expired tJob
	ts := restoredServer(t, st, at, "")

	doc := getDoc(t, ts.URL+"/jobs/"+tJob, 200)
	page := doc.Find("[data-testid=replaced-page]")
	if page.Length() != 1 || page.Find("[data-testid=replaced-link]").AttrOr("href", "") != "/jobs/"+tNewJob {
		t.Fatalf("GET /jobs/%s after Flink forgot it: want a page linking to %s, got %q", tJob, tNewJob, page.Text())
	}
	vdoc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tKeyed, 200)
	vpage := vdoc.Find("[data-testid=replaced-page]")
	if href := vpage.Find("[data-testid=replaced-link]").AttrOr("href", ""); href != "/jobs/"+tNewJob+"/vertices/"+tNewKeyed {
		t.Errorf("forgotten vertex page links to %q, want the new job's vertex of the same name", href)
	}
	if !strings.Contains(vpage.Text(), "Enrich <b>Orders</b>") || vpage.Find("b").Length() != 0 {
		t.Errorf("forgotten vertex page must name the vertex as text: %q", vpage.Text())
	}
	stable := vpage.Find("[data-testid=stable-link]").AttrOr("href", "")
	resp, _ := getNoFollow(t, ts.URL+stable)
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/jobs/"+tNewJob+"/vertices/"+tNewKeyed+"?endpoint=jm" {
		t.Errorf("the page's stable link %s answers %d %q, want a redirect to the current run's vertex", stable, resp.StatusCode, resp.Header.Get("Location"))
	}

	resp, _ = getNoFollow(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource+"?follow=1&highlight=subtask:2")
	if want := "/jobs/" + tNewJob + "/vertices/" + tNewSource + "?highlight=subtask%3A2"; resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != want {
		t.Errorf("follow=1 on a forgotten vertex = %d %q, want 302 to %s", resp.StatusCode, resp.Header.Get("Location"), want)
	}

	resp, body := getNoFollow(t, ts.URL+"/api/v1/jobs/"+tJob)
	var eb struct {
		Error      string            `json:"error"`
		ReplacedBy *live.Replacement `json:"replacedBy"`
	}
	if err := json.Unmarshal([]byte(body), &eb); resp.StatusCode != 404 || err != nil || eb.ReplacedBy == nil || eb.ReplacedBy.Current != tNewJob ||
		!strings.Contains(eb.Error, "replaced by "+tNewJob) {
		t.Errorf("GET /api/v1/jobs/%s after Flink forgot it = %d %s, want 404 naming the successor with replacedBy", tJob, resp.StatusCode, body)
	}
	// The vertex twin's 404 carries the vertex too, every field the schema
	// describes.
	resp, body = getNoFollow(t, ts.URL+"/api/v1/jobs/"+tJob+"/vertices/"+tSource)
	var vb any
	if err := json.Unmarshal([]byte(body), &vb); resp.StatusCode != 404 || err != nil || !strings.Contains(body, `"vertexId":"`+tNewSource+`"`) {
		t.Errorf("GET the forgotten vertex's JSON = %d %s, want 404 with replacedBy.vertexId %s", resp.StatusCode, body, tNewSource)
	}
	c := &oaLiveChecker{t: t, doc: oaLiveLoad(t), seen: map[string]bool{}}
	c.check("404 body", oaLive404Schema(t, c.doc, "/api/v1/jobs/{jobID}/vertices/{vertexID}"), vb)
	resp, _ = getNoFollow(t, ts.URL+"/api/v1/jobs/"+tJob+"/vertices/"+tSource+"?follow=1")
	if want := "/api/v1/jobs/" + tNewJob + "/vertices/" + tNewSource; resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != want {
		t.Errorf("follow=1 on the JSON twin = %d %q, want 302 to %s", resp.StatusCode, resp.Header.Get("Location"), want)
	}
	// Ids skewscope never saw replaced are still 404.
	getDoc(t, ts.URL+"/jobs/ffff", 404)
	getDoc(t, ts.URL+"/jobs/"+tNewJob+"/vertices/ffff", 404)
}

// After a restore Flink lists the stopped job without metrics, and the
// collector reports it without vertices: its links (copied into tickets
// while it ran) still answer with what Flink last reported, under the
// banner; follow=1 goes to the current run; an id skewscope never saw is a
// 404 that names what it knows.
func TestEndedJobLinksKeepTheirLastData(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st, _ := restoredStoreListing(t, at, false)
	ts := restoredServer(t, st, at, "")

	jdoc := getDoc(t, ts.URL+"/jobs/"+tJob, 200)
	if n := jdoc.Find("[data-testid=vertex-row]").Length(); n != 2 {
		t.Errorf("the stopped job's page lists %d vertices, want its 2 as Flink last reported them", n)
	}
	if jdoc.Find("[data-testid=replaced-banner]").Length() != 1 {
		t.Error("the stopped job's page has no replaced banner")
	}
	for _, c := range []struct {
		vertex, newVertex string
		rows              int
	}{{tSource, tNewSource, 4}, {tKeyed, tNewKeyed, 3}} {
		path := "/jobs/" + tJob + "/vertices/" + c.vertex
		vdoc := getDoc(t, ts.URL+path, 200)
		if href := vdoc.Find("[data-testid=replaced-banner] [data-testid=replaced-link]").AttrOr("href", ""); href != "/jobs/"+tNewJob+"/vertices/"+c.newVertex {
			t.Errorf("%s: banner links to %q, want the current run's vertex", path, href)
		}
		if n := vdoc.Find("[data-testid=subtask-row]").Length(); n != c.rows {
			t.Errorf("%s: %d subtask rows, want the last reported %d", path, n, c.rows)
		}
		if note := vdoc.Find("[data-testid=ended-note]").Text(); !strings.Contains(note, "last reported") || !strings.Contains(note, "FINISHED") {
			t.Errorf("%s: ended note %q, want it to say the job FINISHED and the figures are the last reported", path, note)
		}
		resp, _ := getNoFollow(t, ts.URL+path+"?follow=1")
		if want := "/jobs/" + tNewJob + "/vertices/" + c.newVertex; resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != want {
			t.Errorf("%s?follow=1 = %d %q, want 302 to %s", path, resp.StatusCode, resp.Header.Get("Location"), want)
		}
		resp, body := getNoFollow(t, ts.URL+"/api/v1"+path)
		var vv live.VertexView
		if err := json.Unmarshal([]byte(body), &vv); resp.StatusCode != 200 || err != nil || vv.LastReported == nil ||
			vv.ReplacedBy == nil || vv.ReplacedBy.VertexID != c.newVertex || len(vv.Subtasks) != c.rows {
			t.Errorf("GET /api/v1%s = %d %.300s, want 200 with lastReported and replacedBy", path, resp.StatusCode, body)
		}
	}
	vdoc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource, 200)
	vv, err := st.State().Vertex(tJob, tSource, live.VertexQuery{Color: "lag", Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	checkUpdateMatchesPage(t, vdoc, vertexUpdate(t, vv))
	jv, err := st.State().Job("", tJob)
	if err != nil {
		t.Fatal(err)
	}
	checkUpdateMatchesPage(t, jdoc, jobUpdate(t, jv))
	if n := vdoc.Find("[data-testid=pcell]").Length(); n != 18 {
		t.Errorf("the stopped source shows %d partition cells, want its 18", n)
	}

	// Ids never seen: the 404 names what skewscope knows.
	_, body := getNoFollow(t, ts.URL+"/jobs/"+tJob+"/vertices/ffff")
	if !strings.Contains(body, "replaced by "+tNewJob) || !strings.Contains(body, "/jobs/by-name/") {
		t.Errorf("unknown vertex of a replaced job: %.600s, want the 404 to name the successor and the by-name link", body)
	}
	resp, body := getNoFollow(t, ts.URL+"/api/v1/jobs/"+tJob+"/vertices/ffff")
	if resp.StatusCode != 404 || !strings.Contains(body, "replaced by "+tNewJob) {
		t.Errorf("unknown vertex JSON of a replaced job = %d %s, want 404 naming the successor", resp.StatusCode, body)
	}
	resp, body = getNoFollow(t, ts.URL+"/api/v1/jobs/ffff")
	if resp.StatusCode != 404 || !strings.Contains(body, "never seen") {
		t.Errorf("never-seen job = %d %s, want 404 saying skewscope never saw it", resp.StatusCode, body)
	}
}

// A dashboard started after the restore never saw the old job run: Flink's
// job graph (the collector reads an ended job's vertices once) still
// answers its vertex links, with the banner and a note saying what is
// missing.
func TestEndedJobNeverSeenRunningAnswersItsVertexLinks(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := live.New(live.Options{Now: func() time.Time { return at.Add(time.Minute) }})
	cur := flink.JobSnapshot{ID: tNewJob, Name: "orders <enrichment>", State: "RUNNING", StartTime: at.Add(20 * time.Second),
		Vertices: []flink.VertexSnapshot{{ID: tNewSource, Name: "Source: Kafka Source", Parallelism: 6, MaxParallelism: 128, Source: true, Subtasks: subtasks(6)}}}
	old := flink.JobSnapshot{ID: tJob, Name: "orders <enrichment>", State: "FINISHED", StartTime: at, NumRestarts: -1,
		Vertices: []flink.VertexSnapshot{{ID: tSource, Name: "Source: Kafka Source", Parallelism: 4, MaxParallelism: 128, Source: true}}}
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: at.Add(30 * time.Second), FlinkVersion: "2.2.1", Jobs: []flink.JobSnapshot{cur, old}})
	ts := restoredServer(t, st, at, "")
	doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource, 200)
	if href := doc.Find("[data-testid=replaced-banner] [data-testid=replaced-link]").AttrOr("href", ""); href != "/jobs/"+tNewJob+"/vertices/"+tNewSource {
		t.Errorf("banner links to %q, want the current run's vertex", href)
	}
	if note := doc.Find("[data-testid=ended-note]").Text(); !strings.Contains(note, "did not see this one run") {
		t.Errorf("ended note %q, want it to say skewscope did not see the job run", note)
	}
	if n := doc.Find("[data-testid=subtask-row]").Length(); n != 4 {
		t.Errorf("%d subtask rows, want the job graph's 4", n)
	}
}

// TestPlannerLinkShowsTheRestoredLayout: the live page of a restored job
// models the restore 4→6; its planner link must carry that history, or the
// planner's "now" would be a fresh start at 6 and contradict the page.
func TestPlannerLinkShowsTheRestoredLayout(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st, _ := restoredStore(t, at)
	ts := restoredServer(t, st, at, "")
	doc := getDoc(t, ts.URL+"/jobs/"+tNewJob+"/vertices/"+tNewSource, 200)
	if got := doc.Find("[data-testid=prediction-summary]").Text(); got != "all 18 partitions are where the restore model for 4→6 puts them" {
		t.Fatalf("live page prediction %q, want the restore model 4→6 to match", got)
	}
	live := map[int][]string{}
	doc.Find("[data-testid=subtask-row]").Each(func(_ int, row *goquery.Selection) {
		st := atoi(t, row.AttrOr("data-subtask", ""))
		row.Find("[data-testid=pcell]").Each(func(_ int, c *goquery.Selection) {
			live[st] = append(live[st], c.AttrOr("data-topic", "")+"-"+c.AttrOr("data-partition", ""))
		})
	})
	link := doc.Find("[data-testid=open-planner]").AttrOr("href", "")
	u, err := url.Parse(link)
	if err != nil || u.Query().Get("history") != "4,6" || u.Query().Get("parallelism") != "6" {
		t.Fatalf("planner link %q, want history=4,6 and parallelism=6", link)
	}
	pdoc := getDoc(t, ts.URL+link, 200)
	if mode := pdoc.Find("[data-testid=grid-now] h2 small").Text(); !strings.Contains(mode, "restored: 4 → 6") {
		t.Errorf("planner's now grid says %q, want restored: 4 → 6", mode)
	}
	planned := map[int][]string{}
	pdoc.Find("[data-testid=grid-now] tr[data-subtask]").Each(func(_ int, row *goquery.Selection) {
		st := atoi(t, row.AttrOr("data-subtask", ""))
		row.Find("td.parts i").Each(func(_ int, c *goquery.Selection) {
			name, _, _ := strings.Cut(c.AttrOr("title", ""), " · ")
			planned[st] = append(planned[st], strings.Trim(name, "\u2068\u2069"))
		})
	})
	for i := range 6 {
		a, b := slices.Sorted(slices.Values(live[i])), slices.Sorted(slices.Values(planned[i]))
		if !slices.Equal(a, b) {
			t.Errorf("subtask %d: live page shows %v, planner's now %v", i, a, b)
		}
	}
	if len(live) == 0 {
		t.Fatal("the live page shows no partitions")
	}
	if j := pdoc.Find("[data-testid=json-link]").AttrOr("href", ""); !strings.Contains(j, "from=4%2C6") {
		t.Errorf("planner's JSON link %q, want the restore history from=4,6", j)
	}
}

// oaLive404Schema is the 404 application/json schema of GET path.
func oaLive404Schema(t *testing.T, doc oaLiveDoc, path string) map[string]any {
	t.Helper()
	var s any = doc.Paths[path]
	for _, k := range []string{"get", "responses", "404"} {
		s = s.(map[string]any)[k]
	}
	r := s.(map[string]any)
	if ref, ok := r["$ref"].(string); ok {
		var d struct {
			Components struct {
				Responses map[string]map[string]any `json:"responses"`
			} `json:"components"`
		}
		b, _ := os.ReadFile("openapi.json")
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		r = d.Components.Responses[strings.TrimPrefix(ref, "#/components/responses/")]
	}
	return r["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
}

func TestHighlightFragment(t *testing.T) {
	for in, want := range map[string]string{
		"subtask:3": "#subtask-3", "subtask:12": "#subtask-12", "": "", "subtask:": "", "subtask:x": "",
		"subtask:-1": "", "subtask:+2": "", "partition:orders:3": "",
	} {
		if got := highlightFragment(url.Values{"highlight": {in}, "embed": {"1"}}); got != want {
			t.Errorf("highlightFragment(%q, embedded) = %q, want %q", in, got, want)
		}
		// A page of its own opens at its brief, not at the row.
		if got := highlightFragment(url.Values{"highlight": {in}}); got != "" {
			t.Errorf("highlightFragment(%q) = %q, want none", in, got)
		}
	}
}

// A follow= that is not 1 is refused by name on every page and JSON twin
// that takes it, instead of silently showing the replaced run.
func TestFollowOtherThanOneIsRefused(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st, _ := restoredStore(t, at)
	ts := restoredServer(t, st, at, "")
	for _, path := range []string{
		"/jobs/" + tJob + "?follow=-58800",
		"/jobs/" + tJob + "/vertices/" + tSource + "?follow=yes",
		"/api/v1/jobs/" + tJob + "?follow=0",
		"/api/v1/jobs/" + tJob + "/vertices/" + tKeyed + "?follow=2",
	} {
		resp, body := getNoFollow(t, ts.URL+path)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "follow") || !strings.Contains(body, "want 1") {
			t.Errorf("GET %s = %d %q, want 400 naming follow", path, resp.StatusCode, body)
		}
	}
	for _, path := range []string{"/api/v1/jobs/" + tNewJob + "?follow=", "/api/v1/jobs/" + tNewJob + "?follow=1"} {
		if resp, body := getNoFollow(t, ts.URL+path); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d %q, want 200", path, resp.StatusCode, body)
		}
	}
}

// A job cancelled without a successor keeps its last data too; the
// overview does not judge an ended job's layout.
func TestCanceledJobKeepsItsLastDataUnjudged(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := liveStore(t, at)
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: at.Add(30 * time.Second), FlinkVersion: "2.2.1",
		Jobs: []flink.JobSnapshot{{ID: tJob, Name: "orders <enrichment>", State: "CANCELED", StartTime: at, NumRestarts: -1}}})
	ts := restoredServer(t, st, at, "")
	row := getDoc(t, ts.URL+"/", 200).Find("[data-testid=job-row]")
	if txt := row.Text(); !strings.Contains(txt, "not compared: the job has ended") || strings.Contains(txt, "as predicted") || strings.Contains(txt, "not modelled") {
		t.Errorf("overview row of the cancelled job reads %q, want its layout not judged", txt)
	}
	doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource, 200)
	if note := doc.Find("[data-testid=ended-note]").Text(); !strings.Contains(note, "Job CANCELED") || doc.Find("[data-testid=pcell]").Length() != 18 {
		t.Errorf("cancelled source: note %q, %d cells; want the last reported 18", note, doc.Find("[data-testid=pcell]").Length())
	}
	if doc.Find("[data-testid=replaced-banner]").Length() != 0 {
		t.Error("a job nothing replaced shows the replaced banner")
	}
}

// A highlight that names a subtask or partition the page does not have
// (a link from before a rescale) says so on the page.
func TestStaleHighlightAfterARestoreSaysSo(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st, _ := restoredStore(t, at)
	ts := restoredServer(t, st, at, "")
	src := "/jobs/" + tNewJob + "/vertices/" + tNewSource
	for _, c := range []struct{ query, want string }{
		{"?highlight=subtask:99", "Subtask 99 is not one of this vertex's 6 subtasks (0–5)"},
		{"?highlight=partition:orders:40", "Partition 40 of topic \"orders\" is not one of the 12 partitions"},
		{"?highlight=partition:nope:1", "Partition 1 of topic \"nope\" is not one this source reads"},
	} {
		doc := getDoc(t, ts.URL+src+c.query, 200)
		if got := doc.Find("[data-testid=highlight-note]").Text(); !strings.Contains(got, c.want) {
			t.Errorf("%s: note %q, want it to say %q", c.query, got, c.want)
		}
	}
	for _, q := range []string{"?highlight=subtask:5", "?highlight=partition:orders:3", ""} {
		if n := getDoc(t, ts.URL+src+q, 200).Find("[data-testid=highlight-note]").Length(); n != 0 {
			t.Errorf("%s: %d highlight notes for a highlight the page has", q, n)
		}
	}
	// A peer link carries the highlight only where the peer has the
	// subtask: the old job's source runs at 4, its keyed vertex at 3.
	for q, want := range map[string]string{"?highlight=subtask:3": "/jobs/" + tJob + "/vertices/" + tKeyed, "?highlight=subtask:2": "/jobs/" + tJob + "/vertices/" + tKeyed + "?highlight=subtask%3A2"} {
		doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource+q, 200)
		if href := doc.Find("[data-testid=peer-link]").AttrOr("href", ""); href != want {
			t.Errorf("source %s: peer link %q, want %q", q, href, want)
		}
	}
	keyed := "/jobs/" + tNewJob + "/vertices/" + tNewKeyed + "?highlight=partition:orders:3"
	if got := getDoc(t, ts.URL+keyed, 200).Find("[data-testid=highlight-note]").Text(); !strings.Contains(got, "reads no Kafka partitions") {
		t.Errorf("keyed vertex: note %q, want it to say it reads no partitions", got)
	}
}
