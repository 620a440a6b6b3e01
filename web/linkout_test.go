package web

import (
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/internal/linkout"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

// testLinkOut is a Flink endpoint's Web UI at its REST URL with a subtask
// template, and a kafka-ui for a Kafka cluster.
func testLinkOut(t *testing.T) (map[string]linkout.Flink, map[string]linkout.Kafka) {
	t.Helper()
	f, errs := linkout.NewFlink("http://jm.example:8081/", linkout.FlinkTemplates{
		Subtask: "https://grafana.example.com/d/subtask?var-job={job}&var-vertex={vertex}&var-subtask={subtask}",
	})
	if errs != nil {
		t.Fatal(errs)
	}
	k, errs := linkout.NewKafka("https://kafka-ui.example.com/ui/clusters/{cluster}/all-topics/{topic}",
		"https://kafka-ui.example.com/ui/clusters/{cluster}/consumer-groups/{group}")
	if errs != nil {
		t.Fatal(errs)
	}
	return map[string]linkout.Flink{"jm": f}, map[string]linkout.Kafka{"prod": k}
}

func newLinkOutServer(t *testing.T, st *live.Store, flinkUI map[string]linkout.Flink, kafkaUI map[string]linkout.Kafka) *httptest.Server {
	t.Helper()
	return runServer(t, Options{Live: st, LiveInterval: 10 * time.Millisecond, FlinkUI: flinkUI, KafkaUI: kafkaUI})
}

// linksOutOf are the page's links of a kind (data-testid), each with its
// href, checked to open in a new tab that learns nothing of the page.
func linksOutOf(t *testing.T, doc *goquery.Document, id string) []string {
	t.Helper()
	var hrefs []string
	doc.Find(testid(id)).Each(func(_ int, a *goquery.Selection) {
		if a.AttrOr("target", "") != "_blank" || a.AttrOr("rel", "") != "noopener noreferrer" {
			t.Errorf("%s link %q: target %q, rel %q; want _blank, noopener noreferrer", id, a.AttrOr("href", ""), a.AttrOr("target", ""), a.AttrOr("rel", ""))
		}
		hrefs = append(hrefs, a.AttrOr("href", ""))
	})
	return hrefs
}

func TestLinksOutOnThePages(t *testing.T) {
	flinkUI, kafkaUI := testLinkOut(t)
	ts := newLinkOutServer(t, liveStore(t, pagesAt), flinkUI, kafkaUI)
	jobUI := "http://jm.example:8081/#/job/running/" + tJob + "/overview"
	vertexUI := "http://jm.example:8081/#/job/running/" + tJob + "/overview/" + tSource + "/detail"
	for _, tc := range []struct {
		path, id string
		want     []string
	}{
		{"/", "flink-ui", []string{jobUI}},
		{"/", "kafka-ui", []string{"https://kafka-ui.example.com/ui/clusters/prod/all-topics/orders", "https://kafka-ui.example.com/ui/clusters/prod/all-topics/payments.v1"}},
		{"/jobs/" + tJob, "flink-ui", []string{jobUI}},
		{"/jobs/" + tJob + "/vertices/" + tSource, "flink-ui", []string{vertexUI}},
		// Only a highlighted subtask links to its page: the rows are the
		// grid's.
		{"/jobs/" + tJob + "/vertices/" + tSource, "flink-ui-subtask", nil},
		{"/jobs/" + tJob + "/vertices/" + tSource + "?highlight=subtask:2", "flink-ui-subtask",
			[]string{"https://grafana.example.com/d/subtask?var-job=" + tJob + "&var-vertex=" + tSource + "&var-subtask=2"}},
		// A subtask the vertex does not have is not highlighted, nor linked.
		{"/jobs/" + tJob + "/vertices/" + tSource + "?highlight=subtask:9", "flink-ui-subtask", nil},
		{"/jobs/" + tJob + "/vertices/" + tKeyed, "flink-ui", []string{"http://jm.example:8081/#/job/running/" + tJob + "/overview/" + tKeyed + "/detail"}},
		{"/kafka/prod/topics/orders", "kafka-ui", []string{"https://kafka-ui.example.com/ui/clusters/prod/all-topics/orders"}},
		{"/kafka/prod/topics/orders", "kafka-ui-group", []string{"https://kafka-ui.example.com/ui/clusters/prod/consumer-groups/enrich"}},
		// The source's group, beside its name on the vertex page.
		{"/jobs/" + tJob + "/vertices/" + tSource, "kafka-ui-group", []string{"https://kafka-ui.example.com/ui/clusters/prod/consumer-groups/enrich"}},
		{"/jobs/" + tJob + "/vertices/" + tSource + "?embed=1", "kafka-ui-group", nil},
		// An embedded page links to nothing but skewscope.
		{"/jobs/" + tJob + "/vertices/" + tSource + "?embed=1&highlight=subtask:2", "flink-ui", nil},
		{"/jobs/" + tJob + "/vertices/" + tSource + "?embed=1&highlight=subtask:2", "flink-ui-subtask", nil},
		{"/kafka/prod/topics/orders?embed=1", "kafka-ui", nil},
	} {
		got := linksOutOf(t, getDoc(t, ts.URL+tc.path, 200), tc.id)
		if !slices.Equal(got, tc.want) {
			t.Errorf("GET %s: %s links %q, want %q", tc.path, tc.id, got, tc.want)
		}
	}
}

// TestNoLinksOutUnconfigured: without links configured (the sandbox, or a
// Kafka cluster without a UI), no page links out.
func TestNoLinksOutUnconfigured(t *testing.T) {
	ts := newLiveServer(t, liveStore(t, pagesAt), nil)
	for _, path := range []string{"/", "/jobs/" + tJob, "/jobs/" + tJob + "/vertices/" + tSource + "?highlight=subtask:2", "/kafka/prod/topics/orders"} {
		doc := getDoc(t, ts.URL+path, 200)
		if n := doc.Find("a.out, a[rel~=noreferrer]").Length(); n != 0 {
			t.Errorf("GET %s: %d links out, want none", path, n)
		}
	}
}

// TestLinksOutBuilders: an ended job links to the Web UI's completed
// route; hostile topic and group names stay in their path segment; an
// endpoint or cluster without links gets none.
func TestLinksOutBuilders(t *testing.T) {
	flinkUI, kafkaUI := testLinkOut(t)
	pl := pageLinks{out: outLinks{flink: flinkUI, kafka: kafkaUI}}
	for _, tc := range []struct {
		endpoint, state, want string
	}{
		{"jm", "RUNNING", "http://jm.example:8081/#/job/running/j1/overview"},
		{"jm", "RESTARTING", "http://jm.example:8081/#/job/running/j1/overview"},
		{"jm", "SUSPENDED", "http://jm.example:8081/#/job/running/j1/overview"},
		{"jm", "FINISHED", "http://jm.example:8081/#/job/completed/j1/overview"},
		{"jm", "FAILED", "http://jm.example:8081/#/job/completed/j1/overview"},
		{"jm", "CANCELED", "http://jm.example:8081/#/job/completed/j1/overview"},
		{"sandbox", "RUNNING", ""},
	} {
		jv := live.JobView{Endpoint: tc.endpoint, ID: "j1", Name: "orders", State: flink.JobState(tc.state), Restarts: -1, Age: okAge(2)}
		if got := newJobPage(pl, jv, nil).FlinkUI; got != tc.want {
			t.Errorf("newJobPage(endpoint %s, %s).FlinkUI = %q, want %q", tc.endpoint, tc.state, got, tc.want)
		}
	}

	tv := live.TopicView{Cluster: "prod", Name: "\u202eorders/../admin?x#y", Age: okAge(1),
		Groups: []live.TopicGroup{{Name: "flink orders/1#ü"}, {Name: "\u05e9\u05dc\u05d5\u05dd"}}}
	tp := newTopicPage(pl, tv)
	if want := "https://kafka-ui.example.com/ui/clusters/prod/all-topics/%E2%80%AEorders%2F..%2Fadmin%3Fx%23y"; tp.KafkaUI != want {
		t.Errorf("newTopicPage(hostile topic).KafkaUI = %q, want %q", tp.KafkaUI, want)
	}
	wantGroups := []string{"https://kafka-ui.example.com/ui/clusters/prod/consumer-groups/flink%20orders%2F1%23%C3%BC",
		"https://kafka-ui.example.com/ui/clusters/prod/consumer-groups/%D7%A9%D7%9C%D7%95%D7%9D"}
	for i, g := range tp.Groups {
		if g.KafkaUI != wantGroups[i] {
			t.Errorf("newTopicPage(hostile groups).Groups[%d].KafkaUI = %q, want %q", i, g.KafkaUI, wantGroups[i])
		}
	}
	doc, _ := renderComponent(t, views.Topic(views.Layout{}, tp))
	if got := linksOutOf(t, doc, "kafka-ui-group"); !slices.Equal(got, wantGroups) {
		t.Errorf("topic page's group links %q, want %q", got, wantGroups)
	}
	tv.Cluster = "other"
	if tp := newTopicPage(pl, tv); tp.KafkaUI != "" || tp.Groups[0].KafkaUI != "" {
		t.Errorf("newTopicPage(cluster without a UI) = %q, %q; want no links", tp.KafkaUI, tp.Groups[0].KafkaUI)
	}
}
