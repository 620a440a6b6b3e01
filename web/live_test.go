package web

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gorilla/websocket"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

const (
	tJob    = "0123456789abcdef0123456789abcdef"
	tSource = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	tKeyed  = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

var liveTopics = []assign.Topic{{Name: "orders", Partitions: 12}, {Name: "payments.v1", Partitions: 6}}

// liveStore returns a store fed with two Kafka polls and one Flink poll of a
// job whose source reads liveTopics at p=4 as a fresh start places them.
func liveStore(t *testing.T, at time.Time) *live.Store {
	t.Helper()
	st := live.New(live.Options{Now: func() time.Time { return at.Add(15 * time.Second) }})
	group := kafka.Group{Name: "enrich", State: "Empty"}
	for i, end := range []int64{1000, 3000} {
		ks := &kafka.Snapshot{Cluster: "prod", CollectedAt: at.Add(time.Duration(i) * 10 * time.Second)}
		for _, tp := range liveTopics {
			topic := kafka.Topic{Name: tp.Name}
			for p := range tp.Partitions {
				topic.Partitions = append(topic.Partitions, kafka.Partition{Partition: int32(p), End: end + int64(p)*100, Rate: 200, RateOK: i > 0,
					Freshness: kafka.Freshness{UpdatedAt: ks.CollectedAt}})
			}
			ks.Topics = append(ks.Topics, topic)
		}
		if i == 1 {
			for _, tp := range assign.Partitions(liveTopics) {
				group.Partitions = append(group.Partitions, kafka.GroupPartition{Topic: tp.Topic, Partition: tp.Partition, Committed: 1500, Lag: 1500})
			}
			ks.Groups = []kafka.Group{group}
		}
		st.UpdateKafka(ks)
	}
	var ids []string
	var vals []flink.Metric
	for _, tp := range assign.Partitions(liveTopics) {
		o, _ := assign.KafkaSplitOwner(tp, 4)
		base := fmt.Sprintf("%d.Source__Kafka_Source.KafkaSourceReader.topic.%s.partition.%d.", o, flink.SanitizeMetricName(tp.Topic), tp.Partition)
		ids = append(ids, base+"currentOffset", base+"committedOffset")
		cur := int64(1999 + 100*o)
		vals = append(vals, flink.Metric{ID: base + "currentOffset", Raw: fmt.Sprint(cur)}, flink.Metric{ID: base + "committedOffset", Raw: "1500"})
	}
	obs := flink.ParseKafkaSourceMetricIDs(ids)
	obs.ApplyValues(vals)
	sub := func(p int) []flink.SubtaskSnapshot {
		out := make([]flink.SubtaskSnapshot, p)
		for i := range out {
			out[i] = flink.SubtaskSnapshot{Index: i, Status: "RUNNING", BusyRatio: 0.2 * float64(i+1), BackPressuredRatio: 0, IdleRatio: 0.1,
				RecordsInPerSecond: float64(10 * (i + 1)), RecordsOutPerSecond: float64(10 * (i + 1)), StateSize: int64(1000 * (i + 1))}
		}
		return out
	}
	fs := &flink.Snapshot{Endpoint: "jm", CollectedAt: at.Add(10 * time.Second), FlinkVersion: "2.2.1",
		Cost:        flink.PollCost{Requests: 412, Failed: 3, Bytes: 8_100_000},
		Backoff:     flink.Backoff{Polls: 2, Reason: "slow", Pause: 40 * time.Second},
		MaxInFlight: 4, MaxRequestsPerSecond: 50,
		Jobs: []flink.JobSnapshot{{
			ID: tJob, Name: "orders <enrichment>", State: "RUNNING", StartTime: at,
			Vertices: []flink.VertexSnapshot{
				{ID: tSource, Name: "Source: Kafka Source", Parallelism: 4, MaxParallelism: 128, Source: true, Kafka: obs, Subtasks: sub(4), BackpressureLevel: "ok"},
				{ID: tKeyed, Name: "Enrich <b>Orders</b>", Parallelism: 3, MaxParallelism: 128, Keyed: true, Subtasks: sub(3), BackpressureLevel: "high"},
			},
		}}}
	st.UpdateFlink(fs)
	return st
}

func newLiveServer(t *testing.T, st *live.Store, sb SandboxControl) *httptest.Server {
	t.Helper()
	return runServer(t, Options{Live: st, Sandbox: sb, LiveInterval: 10 * time.Millisecond})
}

// runServer serves a Server built from opts, running (hub and pushes)
// until the test ends.
func runServer(t *testing.T, opts Options) *httptest.Server {
	t.Helper()
	s, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); cancel(); <-done })
	return ts
}

func getDoc(t *testing.T, u string, wantStatus int) *goquery.Document {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != wantStatus {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d, want %d\n%s", u, resp.StatusCode, wantStatus, b)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// checkUpdateMatchesPage requires the update to address exactly the page's
// live elements, by key, with the texts, levels, values, times and samples
// the page shows.
func checkUpdateMatchesPage(t *testing.T, doc *goquery.Document, u views.Update) {
	t.Helper()
	root := doc.Find("[data-live-topic]")
	if root.Length() != 1 {
		t.Fatalf("%d live roots", root.Length())
	}
	if got := root.AttrOr("data-shape", ""); got != u.Shape {
		t.Errorf("page shape %q, update shape %q", got, u.Shape)
	}
	onPage := map[string]*goquery.Selection{}
	copies := map[string][]string{} // key → texts of its copies
	levels := map[string][]string{} // key → colour steps of its copies
	doc.Find("[data-live]").Each(func(_ int, s *goquery.Selection) {
		k := s.AttrOr("data-live", "")
		if _, ok := s.Attr("data-live-copy"); ok {
			copies[k] = append(copies[k], s.Text())
			levels[k] = append(levels[k], s.AttrOr("data-level", ""))
			return
		}
		if onPage[k] != nil {
			t.Errorf("data-live %q is on the page twice", k)
		}
		onPage[k] = s
	})
	// A copy repeats a text the update carries, and shows what it shows;
	// or a colour step (a Meter on an element that is not a <meter>).
	for k, texts := range copies {
		found := false
		for _, e := range u.M {
			if e.Key == k {
				found = true
				for _, l := range levels[k] {
					if l != e.Value {
						t.Errorf("copy of %s: page colour step %q, update %q", k, l, e.Value)
					}
				}
			}
		}
		for _, e := range u.T {
			if e.Key == k {
				found = true
				for _, c := range texts {
					if c != e.Value {
						t.Errorf("copy of %s: page %q, update %q", k, c, e.Value)
					}
				}
			}
		}
		if !found {
			t.Errorf("copy of %s repeats no text of the update", k)
		}
	}
	// The page script sorts its cell elements ([data-live][data-st]) by
	// key and applies the update's cells by index once their keys' hash
	// is the update's.
	var cellKeys []string
	doc.Find("[data-live][data-st]").Each(func(_ int, s *goquery.Selection) { cellKeys = append(cellKeys, s.AttrOr("data-live", "")) })
	if len(cellKeys) > 0 {
		slices.Sort(cellKeys)
		h := fnv.New32a()
		h.Write([]byte(strings.Join(cellKeys, "\n")))
		var sent struct {
			C struct{ K string }
		}
		if b, err := json.Marshal(u); err != nil || json.Unmarshal(b, &sent) != nil {
			t.Fatalf("update does not encode: %v", err)
		}
		if want := fmt.Sprintf("%08x", h.Sum32()); sent.C.K != want {
			t.Errorf("the update's cells hash %q, the page's %q", sent.C.K, want)
		}
	}
	keys := u.Keys()
	if len(keys) != len(onPage) {
		t.Errorf("page has %d live elements, update %d", len(onPage), len(keys))
	}
	for _, k := range keys {
		if onPage[k] == nil {
			t.Errorf("update key %q is not on the page", k)
		}
	}
	for _, e := range u.T {
		if s := onPage[e.Key]; s != nil && s.Text() != e.Value {
			t.Errorf("%s: page %q, update %q", e.Key, s.Text(), e.Value)
		}
	}
	for _, e := range u.C {
		if s := onPage[e.Key]; s != nil && (s.AttrOr("data-l", "") != strconv.Itoa(e.Value.Level) || s.Find("i").Text() != e.Value.Text) {
			t.Errorf("%s: page level %s text %q, update %d %q", e.Key, s.AttrOr("data-l", ""), s.Find("i").Text(), e.Value.Level, e.Value.Text)
		}
		// The reading is the figure's title, absent when it is "".
		if s := onPage[e.Key]; s != nil {
			title, has := s.Find("i").Attr("title")
			if title != e.Value.Title || has != (e.Value.Title != "") || s.AttrOr("data-st", "") != e.Value.State || !s.HasClass(e.Value.State) {
				t.Errorf("%s: page reading %q (present %t) state %q (class %q), update %q %q", e.Key, title, has, s.AttrOr("data-st", ""), s.AttrOr("class", ""), e.Value.Title, e.Value.State)
			}
		}
	}
	for _, e := range u.M {
		// A <meter> shows its value; any other element its colour step.
		attr := "value"
		if s := onPage[e.Key]; s != nil && !s.Is("meter, progress") {
			attr = "data-level"
		}
		if s := onPage[e.Key]; s != nil && s.AttrOr(attr, "") != e.Value {
			t.Errorf("%s: page %s %s, update %s", e.Key, attr, s.AttrOr(attr, ""), e.Value)
		}
	}
	for _, e := range u.Ages {
		if s := onPage[e.Key]; s != nil && s.AttrOr("data-at", "") != strconv.FormatInt(e.Value, 10) {
			t.Errorf("%s: page data-at %s, update %d", e.Key, s.AttrOr("data-at", ""), e.Value)
		}
	}
	for _, e := range u.Spark {
		if s := onPage[e.Key]; s != nil {
			attr := "data-spark"
			if _, axis := s.Attr("data-spark-axis"); axis {
				attr = "data-spark-axis"
			} else if s.AttrOr("data-spark-max", "") != e.Value.MaxAttr() || s.AttrOr("aria-label", "") != e.Value.Label {
				t.Errorf("%s: page max %s and label %q, update %v and %q", e.Key, s.AttrOr("data-spark-max", ""), s.AttrOr("aria-label", ""), e.Value.Max, e.Value.Label)
			}
			var got []float64
			if err := json.Unmarshal([]byte(s.AttrOr(attr, "")), &got); err != nil || !slices.Equal(got, e.Value.Values) {
				t.Errorf("%s: page samples %s, update %v", e.Key, s.AttrOr(attr, ""), e.Value.Values)
			}
		}
	}
}

// The updates the publisher sends for these views (see publishAll).
func updateOf(t testing.TB, p views.LivePage) views.Update {
	t.Helper()
	u, err := views.UpdateOf(p)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func overviewUpdate(t testing.TB, ov live.OverviewView) views.Update {
	return updateOf(t, newOverviewPage(pageLinks{}, ov))
}

func jobUpdate(t testing.TB, jv live.JobView) views.Update {
	return updateOf(t, newJobPage(pageLinks{}, jv, replacedBanner(views.Layout{}, jv.ReplacedBy, time.Now(), false)))
}

func vertexUpdate(t testing.TB, vv live.VertexView) views.Update {
	return updateOf(t, newVertexPage(vertexPageInput{update: true, replaced: replacedBanner(views.Layout{}, vv.ReplacedBy, time.Now(), true)}, vv))
}

func topicUpdate(t testing.TB, tv live.TopicView) views.Update {
	return updateOf(t, newTopicPage(pageLinks{}, tv))
}

func TestLivePagesAndUpdatesAgree(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := liveStore(t, at)
	ts := newLiveServer(t, st, nil)

	vv, err := st.State().Vertex(tJob, tSource, live.VertexQuery{Highlight: -1, Color: "lag"})
	if err != nil {
		t.Fatal(err)
	}
	doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource+"?highlight=subtask:2", 200)
	checkUpdateMatchesPage(t, doc, vertexUpdate(t, vv))
	rows := doc.Find("[data-testid=subtask-row]")
	if rows.Length() != 4 {
		t.Fatalf("%d rows, want 4", rows.Length())
	}
	fresh, _ := assign.FreshAssignment(liveTopics, 4)
	cells := 0
	rows.Each(func(i int, row *goquery.Selection) {
		row.Find("[data-testid=pcell]").Each(func(_ int, c *goquery.Selection) {
			cells++
			tp := assign.TopicPartition{Topic: c.AttrOr("data-topic", ""), Partition: int32(atoi(t, c.AttrOr("data-partition", "")))}
			if o, ok := fresh.OwnerOf(tp); !ok || o != i {
				t.Errorf("row %d shows %v, fresh start puts it on %d", i, tp, o)
			}
		})
		if row.HasClass("hl") != (i == 2) {
			t.Errorf("row %d highlighted = %v", i, row.HasClass("hl"))
		}
	})
	if cells != 18 {
		t.Errorf("%d partition cells, want 18", cells)
	}
	// An alert link naming a partition marks the row that reads it.
	o, _ := assign.KafkaSplitOwner(assign.TopicPartition{Topic: "payments.v1", Partition: 5}, 4)
	hl := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource+"?highlight=partition:payments.v1:5", 200).Find("tr.hl")
	if hl.Length() != 1 || hl.AttrOr("data-subtask", "") != fmt.Sprint(o) {
		t.Errorf("highlight=partition:payments.v1:5 marks %d rows (subtask %s), want subtask %d", hl.Length(), hl.AttrOr("data-subtask", ""), o)
	}
	if got := doc.Find("[data-testid=prediction-summary]").Text(); got != "all 18 partitions are where a fresh start puts them" {
		t.Errorf("prediction summary %q", got)
	}
	var topicLinks []string
	doc.Find("[data-testid=topic-link]").Each(func(_ int, a *goquery.Selection) { topicLinks = append(topicLinks, a.AttrOr("href", "")) })
	if got := strings.Join(topicLinks, " "); got != "/kafka/prod/topics/orders /kafka/prod/topics/payments.v1" {
		t.Errorf("topic links %q", got)
	}
	if got := doc.Find("[data-testid=group]").Text(); got != "enrich" {
		t.Errorf("group %q, want enrich", got)
	}
	// Every figure says where it comes from.
	doc.Find("[data-testid=figure]").Each(func(i int, f *goquery.Selection) {
		k := f.Find(".kind").Text()
		if k != string(live.Observed) && k != string(live.Estimated) && k != string(live.Computed) {
			t.Errorf("figure %q has provenance %q", f.Find(".flabel").Text(), k)
		}
	})
	planner, ok := doc.Find("[data-testid=open-planner]").Attr("href")
	if !ok || !strings.Contains(planner, "rates=") || !strings.Contains(planner, "topic=orders%3A12") {
		t.Errorf("planner link %q should carry the topics and measured rates", planner)
	}
	// The planner accepts what the link carries.
	getDoc(t, ts.URL+planner, 200).Find("[data-error-for]").Each(func(_ int, s *goquery.Selection) {
		if s.Text() != "" {
			t.Errorf("planner from the vertex link reports %q", s.Text())
		}
	})

	vr, _ := st.State().Vertex(tJob, tSource, live.VertexQuery{Highlight: -1, Color: "rate"})
	checkUpdateMatchesPage(t, getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource+"?color=rate", 200), vertexUpdate(t, vr))

	kv, _ := st.State().Vertex(tJob, tKeyed, live.VertexQuery{Highlight: -1})
	kdoc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tKeyed, 200)
	checkUpdateMatchesPage(t, kdoc, vertexUpdate(t, kv))
	var ranges []string
	kdoc.Find("[data-testid=keygroups]").Each(func(_ int, s *goquery.Selection) { ranges = append(ranges, s.Text()) })
	if got := strings.Join(ranges, " "); got != "0–42 43–85 86–127" {
		t.Errorf("key-group ranges %q, want Flink's for maxP 128, p 3", got)
	}
	var widths []string
	kdoc.Find("[data-testid=kg-strip] rect").Each(func(_ int, s *goquery.Selection) { widths = append(widths, s.AttrOr("width", "")) })
	if got := strings.Join(widths, " "); got != "33.594% 33.594% 32.812%" {
		t.Errorf("key-group strip widths %q, want 43, 43 and 42 of 128", got)
	}
	if kdoc.Find("[data-testid=key-lookup]").Length() != 1 {
		t.Error("keyed vertex page has no inline key lookup")
	}
	if strings.Contains(kdoc.Text(), "<b>") == false || kdoc.Find("b:contains(Orders)").Length() != 0 {
		t.Error("vertex name must be shown as text, not markup")
	}

	jv, _ := st.State().Job("", tJob)
	checkUpdateMatchesPage(t, getDoc(t, ts.URL+"/jobs/"+tJob, 200), jobUpdate(t, jv))
	checkUpdateMatchesPage(t, getDoc(t, ts.URL+"/", 200), overviewUpdate(t, st.State().Overview()))
	tv, _ := st.State().Topic("prod", "payments.v1")
	tdoc := getDoc(t, ts.URL+"/kafka/prod/topics/payments.v1", 200)
	checkUpdateMatchesPage(t, tdoc, topicUpdate(t, tv))
	if tdoc.Find("[data-testid=partition-row]").Length() != 6 {
		t.Error("topic page should list 6 partitions")
	}

	// An embedded page's links open the pages of their own outside the
	// frame.
	edoc := getDoc(t, ts.URL+"/?embed=1", 200)
	if edoc.Find("[data-testid=nav]").Length() != 0 {
		t.Error("embed shows navigation")
	}
	if a := edoc.Find("[data-testid=job-row] a").First(); strings.Contains(a.AttrOr("href", ""), "embed=1") || openTarget(edoc, a) != "_top" {
		t.Errorf("embedded job link %q opens in %q, want the job's own page opening in _top", a.AttrOr("href", ""), openTarget(edoc, a))
	}
}

func atoi(t *testing.T, s string) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

func TestLiveJSONTwinsAndErrors(t *testing.T) {
	st := liveStore(t, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	ts := newLiveServer(t, st, nil)
	for _, c := range []struct {
		path   string
		status int
		want   string
	}{
		{"/api/v1/jobs/" + tJob + "/vertices/" + tSource, 200, `"mode":"fresh"`},
		{"/api/v1/jobs/" + tJob + "/vertices/" + tSource + "?history=2", 200, `"mode":"restore"`},
		{"/api/v1/jobs/" + tJob, 200, `"name":"orders \u003cenrichment\u003e"`},
		{"/api/v1/jobs", 200, `"jobs":[{`},
		{"/api/v1/overview", 200, `"clusters":[{"name":"prod"`},
		{"/api/v1/kafka/prod/topics/orders", 200, `"groups":[{"name":"enrich"`},
		{"/api/v1/jobs/xyz", 400, `jobID: \"xyz\" is not a Flink id`},
		{"/api/v1/jobs/ffff", 404, `job \"ffff\": not found`},
		{"/api/v1/jobs/" + tJob + "/vertices/cccc", 404, "not found"},
		{"/api/v1/jobs/" + tJob + "/vertices/" + tSource + "?color=blue", 400, "color: \\\"blue\\\": colour partitions by lag, rate or watermark (event-time lag)"},
		{"/api/v1/jobs/" + tJob + "/vertices/" + tSource + "?history=4,x", 400, "history: "},
		{"/api/v1/jobs/" + tJob + "/vertices/" + tSource + "?history=0", 400, `history: \"0\" is not a parallelism`},
		{"/api/v1/jobs/" + tJob + "/vertices/" + tSource + "?highlight=row:1", 400, "highlight: "},
		{"/api/v1/kafka/prod/topics/" + url.PathEscape("a b"), 400, "topic: "},
		{"/api/v1/kafka/nope/topics/orders", 404, "not found"},
	} {
		resp, err := http.Get(ts.URL + c.path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(string(b), c.want) {
			t.Errorf("GET %s: %d %s\nwant %d containing %s", c.path, resp.StatusCode, b, c.status, c.want)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("GET %s: content type %q", c.path, ct)
		}
	}
	// Pages answer bad input with a page naming the parameter.
	doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource+"?color=blue", 400)
	if !strings.Contains(doc.Find("[data-testid=error]").Text(), "colour partitions by lag, rate or watermark (event-time lag)") {
		t.Error("bad colour: the page does not say what was wrong")
	}
	getDoc(t, ts.URL+"/jobs/ffff", 404)
}

func TestNoLiveDataConfigured(t *testing.T) {
	ts := newLiveServer(t, nil, nil)
	resp, err := http.Get(ts.URL + "/api/v1/overview")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(b), "configure a Kafka cluster or a Flink endpoint") {
		t.Errorf("overview without live data: %d %s", resp.StatusCode, b)
	}
	if getDoc(t, ts.URL+"/", 200).Find("[data-testid=home]").Length() != 1 {
		t.Error("home without live data should be the introduction")
	}
}

// getMetrics returns the text of base's /metrics.
func getMetrics(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /metrics = %d, %v", resp.StatusCode, err)
	}
	return string(b)
}

func TestMetricsExportLiveFigures(t *testing.T) {
	st := liveStore(t, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	ts := newLiveServer(t, st, nil)
	body := getMetrics(t, ts.URL)
	o, _ := assign.KafkaSplitOwner(assign.TopicPartition{Topic: "orders", Partition: 3}, 4)
	// end 3000+300, current 1999+100*o: lag = 3300 − (current+1).
	lag := 3300 - (1999 + 100*o + 1)
	for _, want := range []string{
		fmt.Sprintf(`skewscope_source_partition_lag_records{cluster="prod",endpoint="jm",job_id="%s",job_name="orders <enrichment>",partition="3",subtask="%d",topic="orders",vertex_id="%s",vertex_name="Source: Kafka Source"} %d`, tJob, o, tSource, lag),
		`skewscope_source_assignment_drift_partitions{endpoint="jm",job_id="` + tJob + `",job_name="orders <enrichment>",mode="fresh",vertex="Source: Kafka Source",vertex_id="` + tSource + `",vertex_name="Source: Kafka Source"} 0`,
		`skewscope_subtask_busy_ratio{endpoint="jm",job_id="` + tJob + `",job_name="orders <enrichment>",subtask="2",vertex_id="` + tKeyed + `",vertex_name="Enrich <b>Orders</b>"} 0.6`,
		`skewscope_group_partition_lag_records{cluster="prod",group="enrich",partition="0",topic="orders"} 1500`,
		`skewscope_backend_up{kind="kafka",name="prod"} 1`,
		`skewscope_backend_up{kind="flink",name="jm"} 1`,
		`skewscope_flink_poll_requests{name="jm"} 412`,
		`skewscope_flink_poll_response_bytes{name="jm"} 8.1e+06`,
		`skewscope_flink_backoff_polls{name="jm"} 2`,
		`skewscope_build_info`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestOverviewShowsWhatSkewscopeAsksOfTheJobManager: the endpoint row
// shows the latest poll's requests and bytes, the budget and the backoff,
// in the page and in its live update.
func TestOverviewShowsWhatSkewscopeAsksOfTheJobManager(t *testing.T) {
	st := liveStore(t, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	ts := newLiveServer(t, st, nil)
	resp, err := http.Get(ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	cost := "412 requests, " + format.Bytes(8_100_000) + ", 3 failed"
	budget, backoff := "4 in flight, 50/s", "backing off after 2 slow polls: polls 40 s apart"
	for _, want := range []string{cost, budget, backoff} {
		if !strings.Contains(string(b), want) {
			t.Errorf("GET / lacks %q", want)
		}
	}
	u := overviewUpdate(t, st.State().Overview())
	var texts []string
	for _, e := range u.T {
		texts = append(texts, e.Value)
	}
	if !slices.Contains(texts, cost) || !slices.Contains(texts, budget) || !slices.Contains(texts, backoff) {
		t.Errorf("the overview's live update texts %q lack the cost or the budget", u.T)
	}
}

// runLiveServer runs a Server over st, publishing every 10 ms, until the
// test ends.
func runLiveServer(t *testing.T, st *live.Store) (*Server, *httptest.Server) {
	t.Helper()
	s, err := NewServer(Options{Live: st, LiveInterval: 10 * time.Millisecond, WebSocket: HubOptions{AllowNoOrigin: true}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); cancel(); <-done })
	return s, ts
}

// pushedUpdate is an update as the page script reads it.
type pushedUpdate struct {
	Shape string            `json:"shape"`
	T     map[string]string `json:"t"`
	raw   []byte
}

// nextUpdate reads c's messages up to the first update of topic.
func nextUpdate(t *testing.T, c *websocket.Conn, topic string) pushedUpdate {
	t.Helper()
	for {
		_, msg, err := c.ReadMessage()
		if err != nil {
			t.Fatalf("no update for %s: %v", topic, err)
		}
		var m struct {
			Topic string          `json:"topic"`
			Data  json.RawMessage `json:"data"`
		}
		if json.Unmarshal(msg, &m) == nil && m.Topic == topic {
			var u pushedUpdate
			if err := json.Unmarshal(m.Data, &u); err != nil {
				t.Fatalf("update of %s: %v\n%s", topic, err, m.Data)
			}
			u.raw = m.Data
			return u
		}
	}
}

func TestWebsocketPushesVertexUpdates(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := liveStore(t, at)
	s, ts := runLiveServer(t, st)

	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	topic := vertexTopic(tJob, tSource, "lag", nil, nil, gridQuery{})
	if err := c.WriteJSON(map[string]any{"subscribe": []string{topic}}); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	// Wait for the acknowledgement, then check the hub knows the topic is
	// watched (publishers skip views nobody watches).
	var ack struct{ Subscribed []string }
	if err := c.ReadJSON(&ack); err != nil || len(ack.Subscribed) != 1 {
		t.Fatalf("ack %+v: %v", ack, err)
	}
	waitFor(t, "topic watched", 5*time.Second, func() bool { return s.hub.Subscribed(topic) })
	if s.hub.Subscribed(vertexTopic(tJob, tSource, "rate", nil, nil, gridQuery{})) {
		t.Error("the rate view is reported watched; nobody subscribed to it")
	}
	// Trigger a push: a new Kafka poll.
	st.UpdateKafka(&kafka.Snapshot{Cluster: "other", CollectedAt: at})
	vv, _ := st.State().Vertex(tJob, tSource, live.VertexQuery{Highlight: -1, Color: "lag"})
	want := vertexUpdate(t, vv)
	got := nextUpdate(t, c, topic)
	if wantJSON, _ := json.Marshal(want); string(got.raw) != string(wantJSON) {
		t.Fatalf("pushed update differs from the view's:\n%s\nwant\n%s", got.raw, wantJSON)
	}
	c.Close()
	waitFor(t, "topic unwatched after the client left", 5*time.Second, func() bool { return !s.hub.Subscribed(topic) })
}

type fakeSandbox struct {
	job string
	p   int
}

func (f *fakeSandbox) Restore(job string, p int) error {
	if job != "orders <enrichment>" {
		return fmt.Errorf("no sandbox job %q", job)
	}
	f.job, f.p = job, p
	return nil
}

func TestSandboxRestoreForm(t *testing.T) {
	st := liveStore(t, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	sb := &fakeSandbox{}
	ts := newLiveServer(t, st, sb)
	doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource, 200)
	if doc.Find("[data-testid=sandbox-banner]").Length() != 1 || doc.Find("[data-testid=sandbox-restore]").Length() != 1 {
		t.Fatal("sandbox pages need the banner and the restore form")
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.PostForm(ts.URL+"/sandbox/restore", url.Values{"job": {"orders <enrichment>"}, "parallelism": {"6"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || sb.p != 6 {
		t.Errorf("restore: %d, sandbox got p=%d", resp.StatusCode, sb.p)
	}
	for _, form := range []url.Values{{"job": {"orders <enrichment>"}, "parallelism": {"0"}}, {"job": {"nope"}, "parallelism": {"3"}}} {
		resp, err := noFollow.PostForm(ts.URL+"/sandbox/restore", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Errorf("restore %v: %d, want 400", form, resp.StatusCode)
		}
	}
	// Without a sandbox nothing can be changed.
	ts2 := newLiveServer(t, st, nil)
	resp, err = noFollow.PostForm(ts2.URL+"/sandbox/restore", url.Values{"job": {"x"}, "parallelism": {"3"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("restore without a sandbox: %d, want 404", resp.StatusCode)
	}
	if getDoc(t, ts2.URL+"/", 200).Find("[data-testid=sandbox-banner]").Length() != 0 {
		t.Error("banner shown without a sandbox")
	}
}

// TestLongestViewTopicIsSubscribable: a topic page of a 249-character Kafka
// topic on a 64-character cluster name can subscribe to its updates.
func TestLongestViewTopicIsSubscribable(t *testing.T) {
	f := newHubFixture(t, HubOptions{})
	c := f.mustDial(t)
	topic := "topic:" + strings.Repeat("c", 64) + "/" + strings.Repeat("t", 249)
	subscribe(t, c, topic)
}

// TestVertexPageWithHistoryGetsItsOwnUpdates: a vertex page opened with
// ?history= subscribes to a topic that carries the history, and the
// publisher builds that topic's updates with it, so their shape is the
// page's and the page does not fetch itself again on every push.
func TestVertexPageWithHistoryGetsItsOwnUpdates(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := liveStore(t, at)
	s, ts := runLiveServer(t, st)

	doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource+"?history=2,4&color=rate", 200)
	root := doc.Find("[data-live-topic]")
	topic, shape := root.AttrOr("data-live-topic", ""), root.AttrOr("data-shape", "")
	if want := "vertex:" + tJob + "/" + tSource + ":rate:history=2-4"; topic != want {
		t.Fatalf("page topic %q, want %q", topic, want)
	}
	plain := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource+"?color=rate", 200).Find("[data-live-topic]").AttrOr("data-shape", "")
	if plain == shape {
		t.Fatalf("the history 2,4 does not change the page's shape (%s); the test needs one that does", shape)
	}

	if got := pushedShape(t, s, ts, st, topic, at); got != shape {
		t.Fatalf("pushed shape %q, the page's %q: the page would fetch itself again", got, shape)
	}
}

func TestParseVertexTopic(t *testing.T) {
	for _, tc := range []struct {
		topic   string
		color   string
		history []int
		parts   vertexParts
	}{
		{"vertex:j/v", "lag", nil, nil},
		{"vertex:j/v:rate", "rate", nil, nil},
		{"vertex:j/v:history=4-6-3", "lag", []int{4, 6, 3}, nil},
		{"vertex:j/v:rate:history=8", "rate", []int{8}, nil},
		{"vertex:j/v:parts=grid", "lag", nil, vertexParts{partGrid}},
		{"vertex:j/v:rate:history=4-6:parts=grid-figures", "rate", []int{4, 6}, vertexParts{partGrid, partFigures}},
	} {
		job, vertex, q, parts, _, ok := parseVertexTopic(tc.topic)
		if !ok || job != "j" || vertex != "v" || q.Color != tc.color || !slices.Equal(q.History, tc.history) || q.Highlight != -1 || !slices.Equal(parts, tc.parts) {
			t.Errorf("parseVertexTopic(%q) = %q %q %+v %v %v", tc.topic, job, vertex, q, parts, ok)
		}
	}
	for _, bad := range []string{"vertex:j", "vertex:/v", "vertex:j/v:lag", "vertex:j/v:history=", "vertex:j/v:history=0",
		"vertex:j/v:history=4,6", "vertex:j/v:history=4-6:rate", "vertex:j/v:rate:rate", "vertex:j/v/w", "job:j", "vertex:j/v:history=99999",
		"vertex:j/v:parts=", "vertex:j/v:parts=gird", "vertex:j/v:parts=figures-grid", "vertex:j/v:parts=grid-grid",
		"vertex:j/v:parts=grid-why-figures-lineage", "vertex:j/v:parts=grid:rate", "vertex:j/v:parts=grid:parts=why"} {
		if _, _, _, _, _, ok := parseVertexTopic(bad); ok {
			t.Errorf("parseVertexTopic(%q) accepted it", bad)
		}
	}
}

// TestPagesShareTheirTopicsShape: the pages of one topic take the shape of
// the model the publisher builds for it, whatever their request adds (an
// embedding, a highlight, a sorted grid, its form): an update does not
// make them fetch themselves again.
func TestPagesShareTheirTopicsShape(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := liveStore(t, at)
	s, ts := runLiveServer(t, st)
	base := ts.URL + "/jobs/" + tJob + "/vertices/" + tSource
	const parts = "?parts=grid,figures,why,lineage"
	root := getDoc(t, base+parts, 200).Find("[data-live-topic]")
	topic, shape := root.AttrOr("data-live-topic", ""), root.AttrOr("data-shape", "")
	for _, q := range []string{parts + "&embed=1", parts + "&highlight=subtask:1&sort=lag"} {
		if got := getDoc(t, base+q, 200).Find("[data-live-topic]").AttrOr("data-shape", ""); got != shape {
			t.Errorf("%s: shape %s, the plain page's %s", q, got, shape)
		}
	}
	if got := pushedShape(t, s, ts, st, topic, at); got != shape {
		t.Fatalf("pushed shape %q, the pages' %q: they would fetch themselves again", got, shape)
	}
}

// pushedShape subscribes to topic, makes the store publish (a Kafka poll
// of another cluster) and returns the shape of the update pushed.
func pushedShape(t *testing.T, s *Server, ts *httptest.Server, st *live.Store, topic string, at time.Time) string {
	t.Helper()
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.WriteJSON(map[string]any{"subscribe": []string{topic}}); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	waitFor(t, "topic watched", 5*time.Second, func() bool { return s.hub.Subscribed(topic) })
	st.UpdateKafka(&kafka.Snapshot{Cluster: "other", CollectedAt: at})
	return nextUpdate(t, c, topic).Shape
}
