package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

func TestParseGridQuery(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  gridQuery
	}{
		{"", gridQuery{}},
		{"sort=subtask", gridQuery{}},
		{"sort=lag", gridQuery{Sort: "lag"}},
		{"sort=lagtime&topic=orders.v2_x-1", gridQuery{Sort: "lagtime", Topic: "orders.v2_x-1"}},
		{"sort=busy&subtasks=10-20", gridQuery{Sort: "busy", Ranged: true, From: 10, To: 20}},
		{"sort=rate&subtasks=7", gridQuery{Sort: "rate", Ranged: true, From: 7, To: 7}},
		{"subtasks=0-0", gridQuery{Ranged: true}},
	} {
		q, _ := url.ParseQuery(tc.query)
		got, err := parseGridQuery(q)
		if err != nil || got != tc.want {
			t.Errorf("parseGridQuery(%q) = %+v, %v, want %+v", tc.query, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ query, want string }{
		{"sort=size", `sort: "size": sort rows by lag, lagtime, busy, rate or subtask`},
		{"sort=LAG", `sort: "LAG": sort rows by lag, lagtime, busy, rate or subtask`},
		{"topic=a:b", `topic: "a:b": a Kafka topic name is 1–249 letters, digits, '.', '_' or '-'`},
		{"topic=..", `topic: "..": a Kafka topic name`},
		{"subtasks=20-10", `subtasks: "20-10": want a subtask N or a range FROM-TO with FROM ≤ TO, e.g. 10-20`},
		{"subtasks=-3", `subtasks: "-3": want a subtask N`},
		{"subtasks=1-", `subtasks: "1-": want`},
		{"subtasks=01-2", `subtasks: "01-2": want`},
		{"subtasks=a-b", `subtasks: "a-b": want`},
	} {
		q, _ := url.ParseQuery(tc.query)
		if _, err := parseGridQuery(q); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("parseGridQuery(%q) = %v, want %s…", tc.query, err, tc.want)
		}
	}
}

// TestVertexTopicGrid: the grid's order and filter are in the page's topic
// and read back from it; a topic vertexTopic does not write is refused.
func TestVertexTopicGrid(t *testing.T) {
	for _, tc := range []struct {
		color   string
		history []int
		parts   vertexParts
		grid    gridQuery
		topic   string
	}{
		{"lag", nil, nil, gridQuery{Sort: "lag"}, "vertex:j/v:sort=lag"},
		{"rate", nil, nil, gridQuery{Topic: "orders"}, "vertex:j/v:rate:topic=orders"},
		{"lag", nil, nil, gridQuery{Ranged: true, From: 10, To: 20}, "vertex:j/v:subtasks=10-20"},
		{"rate", []int{4, 6}, vertexParts{partGrid}, gridQuery{Sort: "lagtime", Topic: "topic-01", Ranged: true, From: 3, To: 3},
			"vertex:j/v:rate:history=4-6:parts=grid:sort=lagtime:topic=topic-01:subtasks=3"},
	} {
		topic := vertexTopic("j", "v", tc.color, tc.history, tc.parts, tc.grid)
		if topic != tc.topic {
			t.Errorf("vertexTopic(%+v) = %q, want %q", tc.grid, topic, tc.topic)
		}
		job, vertex, q, parts, grid, ok := parseVertexTopic(topic)
		if !ok || job != "j" || vertex != "v" || q.Color != tc.color || !slices.Equal(parts, tc.parts) || grid != tc.grid {
			t.Errorf("parseVertexTopic(%q) = %q %q %+v %v %+v %v", topic, job, vertex, q, parts, grid, ok)
		}
	}
	// The longest topic a page can have fits the hub's limit.
	hist := make([]int, 64)
	for i := range hist {
		hist[i] = 32768 - i
	}
	long := vertexTopic(strings.Repeat("f", 32), strings.Repeat("e", 32), "rate", hist, vertexParts{partGrid, partFigures, partLineage},
		gridQuery{Sort: "lagtime", Topic: strings.Repeat("t", 249), Ranged: true, From: 32000, To: 32767})
	if len(long+embedOption) > maxTopicLen {
		t.Errorf("an embedded page's vertex topic of %d characters, the hub takes at most %d", len(long+embedOption), maxTopicLen)
	}
	if _, _, _, _, _, ok := parseVertexTopic(long); !ok {
		t.Errorf("parseVertexTopic refused the long topic %q", long)
	}
	for _, bad := range []string{"vertex:j/v:sort=", "vertex:j/v:sort=subtask", "vertex:j/v:sort=size", "vertex:j/v:topic=orders:sort=lag",
		"vertex:j/v:subtasks=20-10", "vertex:j/v:subtasks=3-3", "vertex:j/v:sort=lag:sort=rate", "vertex:j/v:sort=lag:rate",
		"vertex:j/v:topic=a b", "vertex:j/v:subtasks=1:parts=grid"} {
		if _, _, _, _, _, ok := parseVertexTopic(bad); ok {
			t.Errorf("parseVertexTopic(%q) accepted it", bad)
		}
	}
}

// TestNewVertexPageGrid: sorted by lag and showing one topic, the grid's
// rows are the topic's readers in descending lag (unknown last), with only
// that topic's cells; its controls keep the page's other parameters and
// link to the busiest shown subtask.
func TestNewVertexPageGrid(t *testing.T) {
	cell := func(topic string, p int32, lag int64) live.PartitionCell {
		return live.PartitionCell{Topic: topic, Partition: p, Label: topic[:1] + fmt.Sprint(p), Lag: lag, Predicted: -1, LagKind: kafka.TimeLagUnknown}
	}
	vv := live.VertexView{JobID: "j1", ID: "v1", Name: "Source", Parallelism: 4, Source: true, Kafka: true, Topics: []string{"orders", "pay"},
		Color: "lag", Thresholds: [3]float64{1000, 20000, 80000}, LagTimeSteps: [3]float64{10, 60, 300},
		Subtasks: []live.SubtaskRow{
			{Subtask: 0, Lag: 10, Busy: 0.9, Partitions: []live.PartitionCell{cell("orders", 0, 10)}},
			{Subtask: 1, Lag: -1, Busy: 0.2, Partitions: []live.PartitionCell{cell("orders", 1, -1), cell("pay", 0, 5)}},
			{Subtask: 2, Lag: 900, Busy: 0.5, Partitions: []live.PartitionCell{cell("orders", 2, 400), cell("pay", 1, 500)}},
			{Subtask: 3, Lag: 5000, Busy: 1, Partitions: []live.PartitionCell{cell("pay", 2, 5000)}},
		}}
	set := func(kv ...string) string {
		u := "/jobs/j1/vertices/v1?color=lag&sort=lag&topic=orders"
		for i := 0; i+1 < len(kv); i += 2 {
			u += "&" + kv[i] + "=" + kv[i+1]
		}
		return u
	}
	at := time.Date(2026, 12, 1, 12, 41, 3, 0, time.UTC)
	in := vertexPageInput{grid: gridQuery{Sort: "lag", Topic: "orders"}, gridURL: set, at: at,
		query: url.Values{"color": {"lag"}, "sort": {"lag"}, "topic": {"orders"}}}
	g := newVertexPage(in, vv).Grid
	var rows [][]string
	for _, r := range g.Rows {
		row := []string{r.Subtask}
		for _, c := range r.Cells {
			row = append(row, c.Live.Key)
		}
		rows = append(rows, row)
	}
	if diff := cmp.Diff([][]string{{"2", "c0.2"}, {"0", "c0.0"}, {"1", "c0.1"}}, rows); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	// A row's lag is that of the topic's cells it shows.
	if got := g.Rows[0].Lag.Text; got != "400" {
		t.Errorf("subtask 2's lag of orders reads %q, want 400 (not the subtask's 900)", got)
	}
	want := &views.GridControls{
		Action: "/jobs/j1/vertices/v1", Hidden: []views.Field{{Name: "color", Value: "lag"}},
		Sorts: []views.Option{{Value: "subtask", Label: "subtask"}, {Value: "lag", Label: "lag", Selected: true}, {Value: "lagtime", Label: "lag time"},
			{Value: "busy", Label: "busy"}, {Value: "rate", Label: "rate"}},
		Topics:      []views.Option{{Label: "all topics"}, {Value: "orders", Label: "orders", Selected: true}, {Value: "pay", Label: "pay"}},
		Placeholder: "0-3",
		Order:       "sorted by lag at 12:41:03 UTC", Resort: set(),
		Shown:   "3 of 4 subtasks shown; cells, produced, lag and lag time of orders only",
		Busiest: &views.Anchor{Text: "jump to the busiest, subtask 0 (90% busy)", URL: set("highlight", "subtask:0") + "#subtask-0"},
	}
	if diff := cmp.Diff(want, g.Controls); diff != "" {
		t.Errorf("controls (-want +got):\n%s", diff)
	}
	// The publisher's model (no controls) has the page's keys.
	pub := newVertexPage(vertexPageInput{grid: in.grid}, vv)
	if pub.Grid.Controls != nil {
		t.Error("an update's model has controls")
	}
	pu, pg := updateOf(t, pub), updateOf(t, newVertexPage(in, vv))
	if diff := cmp.Diff(pg.Keys(), pu.Keys()); diff != "" {
		t.Errorf("update keys (-page +publisher):\n%s", diff)
	}
	// Nothing matches: the grid says why.
	none := newVertexPage(vertexPageInput{grid: gridQuery{Topic: "pay", Ranged: true, From: 0, To: 0}}, vv).Grid
	if len(none.Rows) != 0 || none.Empty != "No row to show: none of subtasks 0 reads pay." {
		t.Errorf("no match: %d rows, %q", len(none.Rows), none.Empty)
	}
}

// TestVertexGridBadInput: the page answers a bad sort or filter with a 400
// naming the parameter and the choices.
func TestVertexGridBadInput(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	ts := newLiveServer(t, liveStore(t, at), nil)
	for q, want := range map[string]string{
		"sort=size":    `sort: "size": sort rows by lag, lagtime, busy, rate or subtask`,
		"subtasks=9-1": `subtasks: "9-1": want a subtask N or a range FROM-TO`,
		"topic=a%2Fb":  `topic: "a/b": a Kafka topic name`,
	} {
		doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource+"?"+q, http.StatusBadRequest)
		if got := doc.Find("[data-testid=error]").Text(); !strings.Contains(got, want) {
			t.Errorf("?%s: error %q, want it to say %q", q, got, want)
		}
	}
}

// largeSourceStore is a store with a Kafka source of parallelism p reading
// orders (3p/2 partitions) and pay (p/2), its lag growing with the
// partition.
func largeSourceStore(t testing.TB, p int, at time.Time) *live.Store {
	t.Helper()
	topics := []assign.Topic{{Name: "orders", Partitions: 3 * p / 2}, {Name: "pay", Partitions: p / 2}}
	return kafkaSourceStore(topics, p, 4096, func(i int) float64 { return float64(i%10) / 10 }, 1, at)
}

// kafkaSourceStore is a store with a Kafka source of parallelism p and
// max parallelism maxP reading topics as a fresh start assigns them, its lag
// growing with the partition, after two Kafka polls and flinkPolls Flink
// polls 2.5 s apart (which fill the sparklines); busy gives each subtask's
// busy ratio.
func kafkaSourceStore(topics []assign.Topic, p, maxP int, busy func(int) float64, flinkPolls int, at time.Time) *live.Store {
	st := live.New(live.Options{Now: func() time.Time { return at.Add(20 * time.Second) }})
	for i, end := range []int64{1_000_000, 1_050_000} {
		ks := &kafka.Snapshot{Cluster: "prod", CollectedAt: at.Add(time.Duration(i) * 10 * time.Second)}
		for _, tp := range topics {
			kt := kafka.Topic{Name: tp.Name}
			for n := range tp.Partitions {
				kt.Partitions = append(kt.Partitions, kafka.Partition{Partition: int32(n), End: end + int64(n*37), Rate: float64(n % 97), RateOK: i > 0,
					Freshness: kafka.Freshness{UpdatedAt: ks.CollectedAt}})
			}
			ks.Topics = append(ks.Topics, kt)
		}
		st.UpdateKafka(ks)
	}
	var ids []string
	var vals []flink.Metric
	for _, tp := range assign.Partitions(topics) {
		o, _ := assign.KafkaSplitOwner(tp, p)
		base := fmt.Sprintf("%d.Source__Kafka_Source.KafkaSourceReader.topic.%s.partition.%d.", o, tp.Topic, tp.Partition)
		ids = append(ids, base+"currentOffset", base+"committedOffset")
		vals = append(vals, flink.Metric{ID: base + "currentOffset", Raw: fmt.Sprint(1_020_000 + int64(tp.Partition)*13)}, flink.Metric{ID: base + "committedOffset", Raw: "1000000"})
	}
	obs := flink.ParseKafkaSourceMetricIDs(ids)
	obs.ApplyValues(vals)
	subs := make([]flink.SubtaskSnapshot, p)
	for i := range subs {
		subs[i] = flink.SubtaskSnapshot{Index: i, BusyRatio: busy(i), RecordsOutPerSecond: 100, RecordsInPerSecond: 100, StateSize: -1}
	}
	for i := range flinkPolls {
		st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: at.Add(10*time.Second + time.Duration(i)*2500*time.Millisecond), Jobs: []flink.JobSnapshot{{ID: tJob, Name: "big", State: "RUNNING",
			Vertices: []flink.VertexSnapshot{{ID: tSource, Name: "Source", Parallelism: p, MaxParallelism: maxP, Source: true, Kafka: obs, Subtasks: subs}}}}})
	}
	return st
}

// TestVertexGrid1000: a source of 1,000 subtasks sorted by lag and showing
// orders' partitions of subtasks 100–899 renders those rows in that order,
// and the update the publisher builds from the page's topic addresses
// exactly the page's live elements.
func TestVertexGrid1000(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := largeSourceStore(t, 1000, at)
	ts := newLiveServer(t, st, nil)
	doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource+"?sort=lag&topic=orders&subtasks=100-899", 200)
	topic := doc.Find("[data-live-topic]").AttrOr("data-live-topic", "")
	if want := "vertex:" + tJob + "/" + tSource + ":sort=lag:topic=orders:subtasks=100-899"; topic != want {
		t.Fatalf("page topic %q, want %q", topic, want)
	}
	job, vertex, q, parts, grid, ok := parseVertexTopic(topic)
	if !ok {
		t.Fatalf("parseVertexTopic(%q) refused the page's topic", topic)
	}
	vv, err := st.State().Vertex(job, vertex, q)
	if err != nil {
		t.Fatal(err)
	}
	// As publishAll builds it.
	checkUpdateMatchesPage(t, doc, updateOf(t, newVertexPage(vertexPageInput{topic: topic, parts: parts, grid: grid}, vv)))

	var want []string
	for _, r := range gridRows(vv.Subtasks, grid) {
		want = append(want, fmt.Sprint("subtask-", r.Subtask))
	}
	var got []string
	doc.Find("tr[data-testid=subtask-row]").Each(func(_ int, s *goquery.Selection) { got = append(got, s.AttrOr("id", "")) })
	if len(got) < 700 || len(got) > 800 {
		t.Errorf("%d rows shown, want the ~800 subtasks 100–899 reading orders", len(got))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("row order (-want +got):\n%s", diff)
	}
	prev := int64(1 << 62)
	for _, r := range gridRows(vv.Subtasks, grid) {
		if r.Lag > prev {
			t.Fatalf("subtask %d's lag %d after %d: not descending", r.Subtask, r.Lag, prev)
		}
		prev = r.Lag
		for _, c := range r.Partitions {
			if c.Topic != "orders" {
				t.Fatalf("subtask %d shows %s-%d", r.Subtask, c.Topic, c.Partition)
			}
		}
	}
	if n := doc.Find("[data-testid=pcell]").Length(); n < 1000 {
		t.Errorf("%d cells, want orders' ~1,200 partitions of those subtasks", n)
	}
	if doc.Find("[data-testid=grid-order]").Length() != 1 || doc.Find("[data-testid=grid-busiest]").Length() != 1 {
		t.Error("no order or busiest link")
	}
}
