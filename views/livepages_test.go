package views

import (
	"context"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

func TestTopicPageGroupLabel(t *testing.T) {
	one := TopicPage{Groups: []TopicGroupHead{{Name: "enrich"}}}
	two := TopicPage{Groups: []TopicGroupHead{{Name: "enrich"}, {Name: "audit"}}}
	for _, tc := range []struct {
		name string
		p    TopicPage
		i    int
		want string
	}{
		{"one group: its name heads the cards", one, 0, "commit lag"},
		{"two groups: each figure names its group", two, 1, "audit · commit lag"},
		{"out of range", two, 2, "commit lag"},
	} {
		if got := tc.p.GroupLabel(tc.i, "commit lag"); got != tc.want {
			t.Errorf("%s: GroupLabel(%d, %q) = %q, want %q", tc.name, tc.i, "commit lag", got, tc.want)
		}
	}
}

// TestVertexLinksSeparators: every link of a vertex page's links row stands
// apart from the dots between them, as the row reads aloud and on screen.
func TestVertexLinksSeparators(t *testing.T) {
	links := VertexLinks{PlanRescale: "/plan?a", Samples: []Anchor{{Text: "sample keys of orders", URL: "/s1"}, {Text: "sample keys of payments", URL: "/s2"}},
		Planner: "/plan?b", JSON: "/api", Embed: "/e", Highlight: "subtask 3", ColorLag: "/l", ColorRate: "/r"}
	var sb strings.Builder
	if err := vertexLinks(links, true).Render(context.Background(), &sb); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(sb.String()))
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(strings.Fields(doc.Text()), " ")
	want := "Highlighted from the link: subtask 3 · plan a rescale · sample keys of orders · sample keys of payments · " +
		"open in planner with these rates · JSON · embed · colour by lag / rate"
	if got != want {
		t.Errorf("vertexLinks reads\n\t%q, want\n\t%q", got, want)
	}
}
