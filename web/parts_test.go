package web

import (
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

// allParts are the parts in the page's own order.
var allParts = vertexParts{partGrid, partWhy, partFigures, partLineage}

func TestParseParts(t *testing.T) {
	for _, tc := range []struct {
		query string
		embed bool
		want  vertexParts
		err   string
	}{
		{query: "", want: nil},
		{query: "", embed: true, want: vertexParts{partGrid}},
		{query: "parts=", embed: true, want: vertexParts{partGrid}},
		{query: "parts=grid", want: vertexParts{partGrid}},
		{query: "parts=grid,why,figures,lineage", embed: true, want: allParts},
		{query: "parts=+figures+,+lineage", embed: true, want: vertexParts{partFigures, partLineage}},
		{query: "parts=lineage,grid,grid,", embed: true, want: vertexParts{partLineage, partGrid}},
		{query: "parts=why,grid", embed: true, want: vertexParts{partWhy, partGrid}},
		{query: "parts=figures,why,lineage,grid", want: vertexParts{partFigures, partWhy, partLineage, partGrid}},
		{query: "parts=why", embed: true, want: vertexParts{partWhy}},
		{query: "parts=gird", embed: true, err: `parts: "gird" is not a part of the vertex page; the parts are grid, why, figures, lineage`},
		{query: "parts=grid,Figures", err: `parts: "Figures" is not a part of the vertex page`},
		{query: "parts=,", err: `parts: "," names no part; the parts are grid, why, figures, lineage`},
		{query: "parts=grid&parts=why", err: "parts: given 2 times; give it once"},
	} {
		v, err := url.ParseQuery(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		got, err := parseParts(query{v}, tc.embed)
		switch {
		case tc.err != "":
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("parseParts(%q, embed %t) = %v, %v; want error %q", tc.query, tc.embed, got, err, tc.err)
			} else if status, public := statusOf(err); status != 400 || !public {
				t.Errorf("parseParts(%q): status %d public %t, want a 400 the page shows", tc.query, status, public)
			}
		case err != nil || !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil):
			t.Errorf("parseParts(%q, embed %t) = %v, %v; want %v", tc.query, tc.embed, got, err, tc.want)
		}
	}
}

// TestVertexPartFields: every part names fields of the page's model, so
// that clearing them hides its section.
func TestVertexPartFields(t *testing.T) {
	typ := reflect.TypeFor[views.VertexPage]()
	for _, p := range vertexPartList {
		for _, name := range p.fields {
			f, ok := typ.FieldByName(name)
			switch {
			case !ok:
				t.Errorf("part %s names field %s, which views.VertexPage does not have", p.name, name)
			case f.Type.Kind() != reflect.Pointer && f.Type.Kind() != reflect.Slice:
				t.Errorf("part %s: field %s is a %s; a part's field is a pointer or a slice, nil when hidden", p.name, name, f.Type)
			}
		}
	}
}

func TestHideParts(t *testing.T) {
	full := func() views.VertexPage {
		return views.VertexPage{Name: "Source", Figures: []views.FigureCard{{Label: "Total lag"}}, Lineage: &views.LineagePanel{Intro: "i"},
			Grid: &views.SourceGrid{Color: "lag"}, Table: &views.SubtaskTable{}, Why: &views.WhyPanel{}}
	}
	for _, tc := range []struct {
		parts                              vertexParts
		grid, table, figures, lineage, why bool
	}{
		{nil, true, true, true, true, true},
		{allParts, true, true, true, true, true},
		{vertexParts{partGrid}, true, true, false, false, false},
		{vertexParts{partFigures, partLineage}, false, false, true, true, false},
		{vertexParts{partWhy}, false, false, false, false, true},
	} {
		p := full()
		hideParts(&p, tc.parts)
		if (p.Grid != nil) != tc.grid || (p.Table != nil) != tc.table || (p.Figures != nil) != tc.figures || (p.Lineage != nil) != tc.lineage ||
			(p.Why != nil) != tc.why || p.Name != "Source" {
			t.Errorf("hideParts(%v): grid %t table %t figures %t lineage %t why %t name %q",
				tc.parts, p.Grid != nil, p.Table != nil, p.Figures != nil, p.Lineage != nil, p.Why != nil, p.Name)
		}
	}
}

// TestNewVertexPageEmbedded: an embedded page shows its grid, the verdict
// and who it is, without explanations, forms or the parts it did not ask
// for; the publisher's update for its topic addresses exactly its figures.
func TestNewVertexPageEmbedded(t *testing.T) {
	vv := live.VertexView{
		Endpoint: "jm", Cluster: "prod", JobID: "j1", JobName: "orders", ID: "v1", Name: "Source", Parallelism: 2,
		Source: true, Kafka: true, Topics: []string{"orders"}, Color: "lag", Thresholds: [3]float64{1000, 20000, 80000}, LagTimeSteps: [3]float64{10, 60, 300},
		Flink: okAge(3), KafkaAge: &live.Age{At: pagesAt, Seconds: 5, State: live.StateOK},
		Figures:  []live.Figure{{Name: live.FigureTotalLag, Value: 1200, Kind: live.Observed, Subtask: -1}},
		Restored: &live.Restored{Savepoint: true, Path: "s3://sp/1"},
		Prediction: &live.Prediction{Mode: "restore", History: []int{1, 2},
			HistoryFrom: live.HistoryObserved, Notes: []live.Note{{Kind: live.NoteModel, Text: "a note"}}, Source: "RoundRobinOperatorStateRepartitioner",
			Headline: live.Headline{Kind: "exact", Exact: 2}},
		Lineage: &live.LineageView{Events: []live.LineageEvent{{Kind: "start", At: pagesAt, To: 1}}},
		Subtasks: []live.SubtaskRow{
			{Subtask: 0, Lag: 1, Rate: 1, RecordsOut: 1, Busy: 0.1, Partitions: []live.PartitionCell{{Topic: "orders", Partition: 0, Label: "o0", Lag: 1, Predicted: 0}}},
			{Subtask: 1, Lag: 1200, Rate: 1, RecordsOut: 1, Busy: 0.9, Highlight: true,
				Partitions: []live.PartitionCell{{Topic: "orders", Partition: 1, Label: "o1", Lag: 1200, Predicted: 1, Level: 1}}},
		},
	}
	peers := []views.PeerLink{{Kind: "keyed vertex", Name: "Window", URL: "/jobs/j1/vertices/v2?embed=1&highlight=subtask%3A1"}}
	topic := vertexTopic("j1", "v1", "lag", nil, vertexParts{partGrid}, gridQuery{})
	in := vertexPageInput{links: pageLinks{embed: true}, topic: topic + embedOption, parts: vertexParts{partGrid}, peers: peers, sandboxRestore: "/sandbox/restore",
		cell: &cellRef{topic: "orders", partition: 1}}
	got := newVertexPage(in, vv)
	if got.Figures != nil || got.Lineage != nil || got.Restored != "" || got.LagMethod || got.SandboxRestore != nil {
		t.Errorf("embedded grid: figures %v, lineage %v, restored %q, lag method %t, sandbox form %v; want none of them",
			got.Figures, got.Lineage, got.Restored, got.LagMethod, got.SandboxRestore)
	}
	if got.Prediction != nil {
		t.Errorf("embedded prediction %+v, want none: the one-line head stands in for it", got.Prediction)
	}
	if !slices.Equal(got.Parts, []string{"grid"}) {
		t.Errorf("embedded parts %v, want [grid]", got.Parts)
	}
	if got.Grid == nil || !slices.Equal(got.Peers, peers) {
		t.Fatalf("embedded grid %v, peers %v", got.Grid, got.Peers)
	}
	var marked []string
	for _, r := range got.Grid.Rows {
		for _, c := range r.Cells {
			if c.Highlight {
				marked = append(marked, c.Topic+"-"+c.Partition)
			}
		}
	}
	if !slices.Equal(marked, []string{"orders-1"}) {
		t.Errorf("highlighted cells %v, want orders-1", marked)
	}
	// What the publisher sends to the page's topic.
	job, vertex, q, parts, _, ok := parseVertexTopic(topic)
	if !ok || job != "j1" || vertex != "v1" || q.Color != "lag" || !slices.Equal(parts, vertexParts{partGrid}) {
		t.Fatalf("parseVertexTopic(%q) = %s %s %+v %v %t", topic, job, vertex, q, parts, ok)
	}
	pushed := updateOf(t, newVertexPage(vertexPageInput{links: pageLinks{embed: true}, topic: topic + embedOption, parts: parts}, vv))
	if page := updateOf(t, got); !slices.Equal(page.Keys(), pushed.Keys()) {
		t.Errorf("the embedded page's live keys %v, the pushed update's %v", page.Keys(), pushed.Keys())
	}
	// The page of its own with the same parts has the prediction's keys:
	// it must not share the embedded page's topic.
	own := updateOf(t, newVertexPage(vertexPageInput{topic: topic, parts: parts}, vv))
	if slices.Equal(own.Keys(), pushed.Keys()) {
		t.Errorf("the page of its own has the embedded page's keys %v; the prediction card is missing from one of them", own.Keys())
	}
	// A page of its own with every part: figures and lineage come back.
	all := newVertexPage(vertexPageInput{links: pageLinks{}, topic: vertexTopic("j1", "v1", "lag", nil, allParts, gridQuery{})}, vv)
	if all.Figures == nil || all.Lineage == nil || all.Restored == "" || !all.Prediction.Explained() || !all.LagMethod {
		t.Errorf("full page: figures %v lineage %v restored %q prediction %+v lag method %t", all.Figures, all.Lineage, all.Restored, all.Prediction, all.LagMethod)
	}
}

func TestNewVertexPageKeyedHighlight(t *testing.T) {
	vv := live.VertexView{JobID: "j1", JobName: "orders", ID: "v2", Name: "Window", Parallelism: 2, MaxParallelism: 128, Keyed: true, Flink: okAge(1),
		Subtasks: []live.SubtaskRow{
			{Subtask: 0, KeyGroups: &live.KeyGroupSpan{Start: 0, End: 63, Size: 64}, RecordsIn: 5, RecordsOut: 5, Busy: 0.1, StateSize: 1},
			{Subtask: 1, KeyGroups: &live.KeyGroupSpan{Start: 64, End: 127, Size: 64}, RecordsIn: 5, RecordsOut: 5, Busy: 0.1, StateSize: 1, Highlight: true},
		}}
	got := newVertexPage(vertexPageInput{links: pageLinks{embed: true}}, vv).Table
	var marked []bool
	for _, s := range got.Strip.Segments {
		marked = append(marked, s.Highlight)
	}
	if !slices.Equal(marked, []bool{false, true}) || !got.Rows[1].Highlight {
		t.Errorf("highlighted segments %v, row %t; want subtask 1's", marked, got.Rows[1].Highlight)
	}
	if got.Lookup != nil {
		t.Errorf("an embedded keyed vertex offers the key lookup form %+v", got.Lookup)
	}
}

// TestVertexPageParts renders vertex pages with ?embed=1 and ?parts=: the
// embedded sandbox page says it is the sandbox in a word, shows its
// one-line head and the grid, and no banner, context, live bar, prediction,
// explanations, forms, figures or lineage; parts= brings sections back;
// an unknown part is a 400 naming it.
func TestVertexPageParts(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st, _ := restoredStore(t, at)
	ts := newLiveServer(t, st, &fakeSandbox{})
	src := ts.URL + "/jobs/" + tNewJob + "/vertices/" + tNewSource
	has := func(doc *goquery.Document, sel string) bool { return doc.Find(sel).Length() > 0 }

	full := getDoc(t, src+"?highlight=subtask:2", 200)
	for _, sel := range []string{testid("sandbox-banner"), testid("figures"), testid("lineage"), testid("prediction-notes"), testid("lag-method"), testid("sandbox-restore"), testid("grid")} {
		if !has(full, sel) {
			t.Errorf("the full source page has no %s", sel)
		}
	}

	emb := getDoc(t, src+"?embed=1&highlight=subtask:2", 200)
	for _, sel := range []string{"nav", testid("sandbox-banner"), testid("context"), testid("livebar"), testid("prediction"), testid("figures"), testid("lineage"),
		testid("prediction-notes"), testid("lag-method"), "form", "footer"} {
		if has(emb, sel) {
			t.Errorf("the embedded source page shows %s", sel)
		}
	}
	for _, sel := range []string{testid("sandbox-tag"), testid("embed-head"), testid("live-dot"), testid("grid"), "tr.hl" + testid("subtask-row"), testid("full-link")} {
		if !has(emb, sel) {
			t.Errorf("the embedded source page has no %s", sel)
		}
	}
	if topic := emb.Find("[data-live-topic]").AttrOr("data-live-topic", ""); !strings.HasSuffix(topic, ":parts=grid"+embedOption) {
		t.Errorf("the embedded page subscribes to %q, want its parts in the topic", topic)
	}
	if href := emb.Find(testid("full-link")).AttrOr("href", ""); href != "/jobs/"+tNewJob+"/vertices/"+tNewSource+"?highlight=subtask%3A2" {
		t.Errorf("the embedded page's full-page link is %q", href)
	}

	picked := getDoc(t, src+"?embed=1&parts=figures,lineage", 200)
	if !has(picked, testid("figures")) || !has(picked, testid("lineage")) || has(picked, testid("grid")) {
		t.Errorf("parts=figures,lineage: figures %t lineage %t grid %t", has(picked, testid("figures")), has(picked, testid("lineage")), has(picked, testid("grid")))
	}
	keyed := getDoc(t, ts.URL+"/jobs/"+tNewJob+"/vertices/"+tNewKeyed+"?embed=1&parts=grid,why", 200)
	if !has(keyed, testid("kg-strip")) || has(keyed, testid("key-lookup")) || has(keyed, testid("figures")) {
		t.Errorf("embedded keyed grid: strip %t, lookup form %t, figures %t", has(keyed, testid("kg-strip")), has(keyed, testid("key-lookup")), has(keyed, testid("figures")))
	}

	bad := getDoc(t, src+"?embed=1&parts=grid,sparklines", 400)
	if msg := bad.Find(testid("error")).Text(); !strings.Contains(msg, `parts: "sparklines" is not a part of the vertex page; the parts are grid, why, figures, lineage`) {
		t.Errorf("unknown part: the error page reads %q", msg)
	}
}

// TestVertexPeerLinks: a source's page links to the job's keyed vertex and
// back, keeping the highlighted subtask; a partition's highlight marks its
// cell and its subtask.
func TestVertexPeerLinks(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := liveStore(t, at)
	ts := newLiveServer(t, st, nil)
	src := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource+"?highlight=subtask:2", 200)
	link := src.Find(testid("peer-link"))
	if link.Length() != 1 || link.Text() != "Enrich <b>Orders</b>" || link.AttrOr("href", "") != "/jobs/"+tJob+"/vertices/"+tKeyed+"?highlight=subtask%3A2" {
		t.Fatalf("source page's peer links: %d, %q → %q", link.Length(), link.Text(), link.AttrOr("href", ""))
	}
	if ctx := strings.Join(strings.Fields(src.Find(testid("context")).Text()), " "); !strings.Contains(ctx, "· keyed vertex: Enrich <b>Orders</b>") {
		t.Errorf("context line %q", ctx)
	}
	keyed := getDoc(t, ts.URL+link.AttrOr("href", ""), 200)
	back := keyed.Find(testid("peer-link"))
	if back.Length() != 1 || back.Text() != "Source: Kafka Source" || back.AttrOr("href", "") != "/jobs/"+tJob+"/vertices/"+tSource+"?highlight=subtask%3A2" {
		t.Errorf("keyed page's peer links: %d, %q → %q", back.Length(), back.Text(), back.AttrOr("href", ""))
	}
	if seg := keyed.Find(testid("kg-segment") + ".hl"); seg.Length() != 1 || !strings.HasPrefix(seg.Find("title").Text(), "subtask 2:") {
		t.Errorf("highlighted key-group segments: %d (%q), want subtask 2's", seg.Length(), seg.Find("title").Text())
	}

	cell := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource+"?highlight=partition:payments.v1:4", 200)
	marked := cell.Find(testid("pcell") + ".hl")
	if marked.Length() != 1 || marked.AttrOr("data-topic", "") != "payments.v1" || marked.AttrOr("data-partition", "") != "4" {
		t.Errorf("highlighted cells: %d (%s-%s), want payments.v1-4", marked.Length(), marked.AttrOr("data-topic", ""), marked.AttrOr("data-partition", ""))
	}
	row := cell.Find("tr.hl")
	if row.Length() != 1 || row.Find(testid("pcell")+".hl").Length() != 1 {
		t.Errorf("%d highlighted rows, want the one with the cell", row.Length())
	}
	if href := cell.Find(testid("peer-link")).AttrOr("href", ""); !strings.Contains(href, "highlight=subtask%3A"+row.AttrOr("data-subtask", "?")) {
		t.Errorf("peer link %q, want the cell's subtask", href)
	}
}

// TestTopicGroupStates: the topic page says what a group state means,
// Flink's member-less "Empty" groups above all.
func TestTopicGroupStates(t *testing.T) {
	st := liveStore(t, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	ts := newLiveServer(t, st, nil)
	doc := getDoc(t, ts.URL+"/kafka/prod/topics/orders", 200)
	const empty = "Empty: the group has no active members; Flink's KafkaSource commits offsets without joining the group"
	if title := doc.Find(testid("group-head")+" abbr").AttrOr("title", ""); title != empty {
		t.Errorf("the Empty group's state title %q, want %q", title, empty)
	}
	if note := doc.Find(testid("group-state-note")).Text(); note != empty {
		t.Errorf("the state note reads %q", note)
	}
}

// TestVertexPageWhyPart: the "why is it hot?" panel is a part: a page of
// its own shows it, an embedded grid does not unless parts names it.
func TestVertexPageWhyPart(t *testing.T) {
	st, _ := sandboxStore(t, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	ts := newLiveServer(t, st, nil)
	src := ts.URL + "/jobs/" + sbOrdersJob + "/vertices/" + sbOrdersSrc
	for _, tc := range []struct {
		query     string
		why, grid bool
	}{
		{"", true, true},
		{"?embed=1", false, true},
		{"?embed=1&parts=grid,why", true, true},
		{"?embed=1&parts=why", true, false},
		{"?parts=grid", false, true},
	} {
		doc := getDoc(t, src+tc.query, 200)
		if why, grid := doc.Find(testid("why")).Length() > 0, doc.Find(testid("grid")).Length() > 0; why != tc.why || grid != tc.grid {
			t.Errorf("%s: why panel %t, grid %t; want %t, %t", tc.query, why, grid, tc.why, tc.grid)
		}
	}
}
