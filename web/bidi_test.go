package web

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

// rlo is a name holding a right-to-left override: unisolated, it would
// reverse the text that follows it on the page.
const rlo = "orders\u202Egnp.exe"

func renderComponent(t *testing.T, c templ.Component) (*goquery.Document, string) {
	t.Helper()
	var buf bytes.Buffer
	if err := c.Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	return doc, buf.String()
}

// checkIsolated fails unless every text node holding the name sits inside
// a <bdi>, and the document title has it between FSI and PDI.
func checkIsolated(t *testing.T, what string, doc *goquery.Document) {
	t.Helper()
	if title := doc.Find("title").First().Text(); !strings.Contains(title, "\u2068"+rlo+"\u2069") {
		t.Errorf("%s: <title> = %q, want the name between U+2068 and U+2069", what, title)
	}
	doc.Find("body *").Each(func(_ int, s *goquery.Selection) {
		for _, n := range s.Nodes {
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == 1 /* TextNode */ && strings.Contains(c.Data, "\u202E") && n.Data != "bdi" && !strings.Contains(c.Data, "\u2068"+rlo+"\u2069") {
					t.Errorf("%s: text %q in <%s> is not isolated", what, c.Data, n.Data)
				}
			}
			for _, a := range n.Attr {
				if (a.Key == "title" || a.Key == "aria-label") && strings.Contains(a.Val, "\u202E") && !strings.Contains(a.Val, "\u2068"+rlo+"\u2069") {
					t.Errorf("%s: %s=%q on <%s> is not isolated", what, a.Key, a.Val, n.Data)
				}
			}
		}
	})
}

func TestBackendNamesAreIsolated(t *testing.T) {
	l := views.Layout{Title: rlo}
	ov := live.OverviewView{
		Clusters:  []live.ClusterSummary{{Name: rlo}},
		Endpoints: []live.EndpointSummary{{Name: rlo, URL: "http://flink:8081"}},
		Jobs:      []live.JobSummary{{Endpoint: rlo, ID: "j1", Name: rlo}},
		Topics:    []live.TopicSummary{{Cluster: rlo, Name: rlo, Partitions: 1}},
	}
	doc, _ := renderComponent(t, views.Overview(l, newOverviewPage(linksOf(l), ov)))
	checkIsolated(t, "OverviewPage", doc)
	if n := doc.Find(`[data-testid="jobs"] bdi`).Length(); n == 0 {
		t.Errorf("OverviewPage: job cell has no <bdi>")
	}

	jv := live.JobView{Endpoint: rlo, ID: "j1", Name: rlo, Restarts: -1, Vertices: []live.VertexSummary{{ID: "v1", Name: rlo}}}
	doc, _ = renderComponent(t, views.Job(l, newJobPage(linksOf(l), jv, &views.ReplacedPage{Name: rlo, OldVertex: rlo})))
	checkIsolated(t, "JobPage", doc)

	vv := live.VertexView{
		Endpoint: rlo, Cluster: rlo, JobID: "j1", JobName: rlo, ID: "v1", Name: rlo, Parallelism: 1,
		Kafka: true, Source: true, Group: &live.GroupLink{Name: rlo}, Topics: []string{rlo},
		Subtasks: []live.SubtaskRow{{Subtask: 0, Partitions: []live.PartitionCell{{Topic: rlo, Partition: 0, Label: "o0", Predicted: -1}}}},
	}
	doc, _ = renderComponent(t, views.Vertex(l, newVertexPage(vertexPageInput{links: linksOf(l)}, vv)))
	checkIsolated(t, "VertexPage", doc)

	tv := live.TopicView{Cluster: rlo, Name: rlo, Groups: []live.TopicGroup{{Name: rlo}}}
	doc, _ = renderComponent(t, views.Topic(l, newTopicPage(pageLinks{}, tv)))
	checkIsolated(t, "TopicPage", doc)

	doc, _ = renderComponent(t, views.Replaced(l, views.ReplacedPage{Name: rlo, OldVertex: rlo}))
	checkIsolated(t, "ReplacedPage", doc)
}

// TestBackendTextsHoldNoBidiControls: a job name, a vertex name, a topic
// name and backend errors carrying a right-to-left override (U+202E, with
// a pop U+202C and an isolate U+2067) reach no page and no JSON answer with
// the control in them: the store writes each out visibly ([U+202E]).
func TestBackendTextsHoldNoBidiControls(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := live.New(live.Options{Now: func() time.Time { return at }})
	ts := newLiveServer(t, st, nil)
	bad := "orders\u202Egnp.exe\u202C\u2067x"
	const jobID, vertexID = "a1b2c3d4e5f60718293a4b5c6d7e8f90", "bc764cd8ddf7a0cff126f51c16239658"
	job := flink.JobSnapshot{ID: jobID, Name: "job " + bad, State: "RUNNING", NumRestarts: 0, Freshness: flink.Freshness{UpdatedAt: at},
		Err: errors.New("checkpoints: " + bad),
		Vertices: []flink.VertexSnapshot{{ID: vertexID, Name: "vertex " + bad, Parallelism: 1, MaxParallelism: 128, Err: errors.New("metrics: " + bad),
			Subtasks: []flink.SubtaskSnapshot{{Index: 0, Status: "RUNNING", StateSize: -1}}, Freshness: flink.Freshness{UpdatedAt: at}}}}
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: at, Jobs: []flink.JobSnapshot{job}})
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: at, Err: errors.New("jobs overview: " + bad), Jobs: []flink.JobSnapshot{job}})
	st.UpdateKafka(&kafka.Snapshot{Cluster: "prod", CollectedAt: at, Err: errors.New("metadata: " + bad),
		Topics: []kafka.Topic{{Name: "topic " + bad, Partitions: []kafka.Partition{{Partition: 0, End: 5, Freshness: kafka.Freshness{UpdatedAt: at}}}}}})

	ov := st.State().Overview()
	if len(ov.Jobs) != 1 || len(ov.Topics) != 1 || ov.Endpoints[0].Age.Err == "" || ov.Clusters[0].Age.Err == "" {
		t.Fatalf("overview = %+v, want the job, the topic and both errors", ov)
	}
	if want := "job orders[U+202E]gnp.exe[U+202C][U+2067]x"; ov.Jobs[0].Name != want {
		t.Errorf("job name = %q, want %q", ov.Jobs[0].Name, want)
	}
	// The topic's name is one Kafka itself refuses (its names are
	// [a-zA-Z0-9._-]), so it is on the overview, and its page is a 400.
	for _, u := range []string{"/", "/jobs/" + jobID, "/jobs/" + jobID + "/vertices/" + vertexID, "/api/v1/overview", "/api/v1/jobs",
		"/api/v1/jobs/" + jobID, "/api/v1/jobs/" + jobID + "/vertices/" + vertexID} {
		resp, err := http.Get(ts.URL + u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s = %d", u, resp.StatusCode)
			continue
		}
		for _, r := range []rune{0x202E, 0x202C, 0x2067} {
			if strings.ContainsRune(string(b), r) {
				t.Errorf("GET %s holds U+%04X", u, r)
			}
		}
		if !strings.Contains(string(b), "[U+202E]") {
			t.Errorf("GET %s does not show the escaped override [U+202E]", u)
		}
	}
}
