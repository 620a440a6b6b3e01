package web

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/a-h/templ"

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
	doc, _ := renderComponent(t, views.OverviewPage(l, newOverviewPage(linksOf(l), ov)))
	checkIsolated(t, "OverviewPage", doc)
	if n := doc.Find(`[data-testid="jobs"] bdi`).Length(); n == 0 {
		t.Errorf("OverviewPage: job cell has no <bdi>")
	}

	jv := live.JobView{Endpoint: rlo, ID: "j1", Name: rlo, Restarts: -1, Vertices: []live.VertexSummary{{ID: "v1", Name: rlo}}}
	doc, _ = renderComponent(t, views.JobPage(l, newJobPage(linksOf(l), jv, &views.Replaced{Name: rlo, OldVertex: rlo})))
	checkIsolated(t, "JobPage", doc)

	vv := live.VertexView{
		Endpoint: rlo, Cluster: rlo, JobID: "j1", JobName: rlo, ID: "v1", Name: rlo, Parallelism: 1,
		Kafka: true, Source: true, Group: &live.GroupLink{Name: rlo}, Topics: []string{rlo},
		Subtasks: []live.SubtaskRow{{Subtask: 0, Partitions: []live.PartitionCell{{Topic: rlo, Partition: 0, Label: "o0", Predicted: -1}}}},
	}
	doc, _ = renderComponent(t, views.VertexPage(l, newVertexPage(vertexPageInput{links: linksOf(l)}, vv)))
	checkIsolated(t, "VertexPage", doc)

	tv := live.TopicView{Cluster: rlo, Name: rlo, Groups: []live.TopicGroup{{Name: rlo}}}
	doc, _ = renderComponent(t, views.TopicPage(l, newTopicPage(tv)))
	checkIsolated(t, "TopicPage", doc)

	doc, _ = renderComponent(t, views.ReplacedPage(l, views.Replaced{Name: rlo, OldVertex: rlo}))
	checkIsolated(t, "ReplacedPage", doc)
}
