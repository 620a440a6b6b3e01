package web

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
)

// withheldJob is the job of liveStore with its source at p = 4 listing no
// KafkaSourceReader id, as Flink's REST answers when the TaskManagers'
// metric dumps exceed the RPC frame size (seen at 10,000 partitions).
func withheldJob(at time.Time) *flink.Snapshot {
	return &flink.Snapshot{Endpoint: "jm", CollectedAt: at, FlinkVersion: "2.2.1", Jobs: []flink.JobSnapshot{{
		ID: tJob, Name: "orders <enrichment>", State: "RUNNING", StartTime: at.Add(-time.Minute),
		Vertices: []flink.VertexSnapshot{
			{ID: tSource, Name: "Source: Kafka Source", Parallelism: 4, MaxParallelism: 128, Source: true, Subtasks: subtasks(4)},
			{ID: tKeyed, Name: "Enrich <b>Orders</b>", Parallelism: 3, MaxParallelism: 128, Keyed: true, Subtasks: subtasks(3)},
		}}}}
}

// checkWithheldPage checks that a source whose ids Flink withheld shows
// every partition of its topics where a fresh start at p = 4 puts them,
// outlined as undetermined, with a note naming the cause and the setting.
func checkWithheldPage(t *testing.T, ts string) {
	t.Helper()
	doc := getDoc(t, ts+"/jobs/"+tJob+"/vertices/"+tSource, 200)
	note := doc.Find("[data-testid=withheld-note]").Text()
	for _, want := range []string{"metric dump", "pekko.framesize", "10485760", "prediction alone", "18 partitions"} {
		if !strings.Contains(note, want) {
			t.Errorf("withheld note %q, want it to say %q", note, want)
		}
	}
	n := 0
	doc.Find("[data-testid=subtask-row]").Each(func(_ int, row *goquery.Selection) {
		st := atoi(t, row.AttrOr("data-subtask", ""))
		row.Find("[data-testid=pcell]").Each(func(_ int, c *goquery.Selection) {
			n++
			tp := assign.TopicPartition{Topic: c.AttrOr("data-topic", ""), Partition: int32(atoi(t, c.AttrOr("data-partition", "")))}
			if o, _ := assign.KafkaSplitOwner(tp, 4); o != st {
				t.Errorf("%v drawn under subtask %d, want the fresh start's %d", tp, st, o)
			}
			if !c.HasClass("unc") {
				t.Errorf("%v is not outlined as undetermined", tp)
			}
		})
	})
	if n != 18 {
		t.Errorf("%d partition cells, want the topics' 18", n)
	}
	if doc.Find("[data-testid=prediction]").Length() != 1 {
		t.Error("no prediction section")
	}
	_, body := getNoFollow(t, ts+"/api/v1/jobs/"+tJob+"/vertices/"+tSource)
	var vv live.VertexView
	if err := json.Unmarshal([]byte(body), &vv); err != nil || vv.Withheld == nil || vv.Withheld.Cause != live.CauseMetricDumpLimit ||
		!vv.Withheld.All || vv.Withheld.Missing != 18 || vv.Prediction == nil || vv.Prediction.Mode != live.ModeFresh {
		t.Errorf("vertex JSON: withheld %+v, prediction %+v (%v), want the metric-dump cause for 18 partitions and the fresh-start model", vv.Withheld, vv.Prediction, err)
	}
}

// A source that listed its ids, then lists none: its earlier polls name
// its topics.
func TestSourceWhoseMetricsFlinkDroppedShowsThePrediction(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := liveStore(t, at)
	st.UpdateFlink(withheldJob(at.Add(20 * time.Second)))
	ts := restoredServer(t, st, at, "")
	checkWithheldPage(t, ts.URL)
}

// A source that never listed an id, linked by configuration to its
// consumer group: the group's commits name its topics. Its ids are called
// withheld once skewscope has asked the JobManager for longer than its
// metric fetches take.
func TestSourceNeverListedShowsThePredictionFromItsGroup(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := live.New(live.Options{Now: func() time.Time { return at.Add(50 * time.Second) },
		Links: []live.Link{{Job: "orders <enrichment>", Group: "enrich"}}})
	ks := &kafka.Snapshot{Cluster: "prod", CollectedAt: at}
	g := kafka.Group{Name: "enrich", State: "Empty"}
	for _, tp := range liveTopics {
		topic := kafka.Topic{Name: tp.Name}
		for p := range tp.Partitions {
			topic.Partitions = append(topic.Partitions, kafka.Partition{Partition: int32(p), End: 1000, Freshness: kafka.Freshness{UpdatedAt: at}})
			g.Partitions = append(g.Partitions, kafka.GroupPartition{Topic: tp.Name, Partition: int32(p), Committed: 900, Lag: 100})
		}
		ks.Topics = append(ks.Topics, topic)
	}
	ks.Groups = []kafka.Group{g}
	st.UpdateKafka(ks)
	st.UpdateFlink(withheldJob(at.Add(10 * time.Second)))
	st.UpdateFlink(withheldJob(at.Add(45 * time.Second)))
	ts := restoredServer(t, st, at, "")
	checkWithheldPage(t, ts.URL)
}

// A source one of whose subtasks lists no id while the others do (that
// subtask's TaskManager lost its gauges): the page names the subtask and
// the cause.
func TestSourceWithOneSubtaskWithheldSaysSo(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := liveStore(t, at)
	snap := withheldJob(at.Add(20 * time.Second))
	snap.Jobs[0].Vertices[0].Kafka = sourceObs(func(tp assign.TopicPartition) int {
		o, _ := assign.KafkaSplitOwner(tp, 4)
		return o
	})
	var kept []flink.KafkaPartitionState
	for _, s := range snap.Jobs[0].Vertices[0].Kafka.States {
		if s.Subtask != 3 {
			kept = append(kept, s)
		}
	}
	snap.Jobs[0].Vertices[0].Kafka.States = kept
	st.UpdateFlink(snap)
	ts := restoredServer(t, st, at, "")
	doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource, 200)
	note := doc.Find("[data-testid=withheld-note]").Text()
	if !strings.Contains(note, "subtask 3 of 4 subtasks") || !strings.Contains(note, "pekko.framesize") {
		t.Errorf("withheld note %q, want it to name subtask 3 and pekko.framesize", note)
	}
	if n := doc.Find("[data-testid=pcell]").Length(); n != 18 {
		t.Errorf("%d partition cells, want the topics' 18", n)
	}
}

// Readers that started seconds ago have not had their metrics fetched yet:
// the note says so, not that a dump was over its limit.
func TestSourceJustStartedIsNotCalledWithheldByTheDumpLimit(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := liveStore(t, at)
	snap := withheldJob(at.Add(20 * time.Second))
	for i := range snap.Jobs[0].Vertices[0].Subtasks {
		snap.Jobs[0].Vertices[0].Subtasks[i].StartTime = at.Add(15 * time.Second)
	}
	st.UpdateFlink(snap)
	vv, err := st.State().Vertex(tJob, tSource, live.VertexQuery{Highlight: -1})
	if err != nil || vv.Withheld == nil || vv.Withheld.Cause != live.CauseNotYetListed || vv.Withheld.Pending != live.PendingReadersStarted {
		t.Errorf("withheld = %+v (%v), want the not-yet-listed cause, the readers just started", vv.Withheld, err)
	}
	ts := restoredServer(t, st, at, "")
	note := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource, 200).Find("[data-testid=withheld-note]").Text()
	for _, want := range []string{"its readers started less than 30s ago", "metrics.fetcher.update-interval"} {
		if !strings.Contains(note, want) {
			t.Errorf("withheld note %q, want it to say %q", note, want)
		}
	}
	if strings.Contains(note, "metric dump") {
		t.Errorf("withheld note %q blames the metric dump", note)
	}
}

// With every reader's metrics withheld there is no observed owner: the
// page, the API, the job page and the overview say the prediction alone
// is shown and why, and count nothing as matched or undetermined; the
// rows' marks say the same as the headline's counts.
func TestWithheldSourceSaysPredictionOnlyEverywhere(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := liveStore(t, at)
	st.UpdateFlink(withheldJob(at.Add(20 * time.Second)))
	ts := restoredServer(t, st, at, "")
	doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource, 200)
	summary := doc.Find("[data-testid=prediction-summary]").Text()
	for _, want := range []string{"prediction only", "Flink withheld the readers' metrics of 18 partitions", "pekko.framesize", "a fresh start"} {
		if !strings.Contains(summary, want) {
			t.Errorf("prediction summary %q, want it to say %q", summary, want)
		}
	}
	if counts := doc.Find("[data-testid=headline-counts]").Text(); counts != "Cells: 18 prediction only (metrics withheld)" {
		t.Errorf("headline counts %q, want %q", counts, "Cells: 18 prediction only (metrics withheld)")
	}
	page := doc.Find("[data-testid=prediction]").Text() + doc.Find("[data-testid=subtask-row]").Text()
	for _, bad := range []string{"0 of 18", "not determined", "before the latest restart", "predate"} {
		if strings.Contains(page, bad) {
			t.Errorf("the prediction or a row says %q", bad)
		}
	}
	doc.Find("[data-testid=subtask-row]").Each(func(_ int, row *goquery.Selection) {
		if vs := row.Find("[data-testid=row-vs]").Text(); !strings.HasSuffix(vs, "prediction only (metrics withheld)") {
			t.Errorf("row %s vs prediction %q, want prediction only", row.AttrOr("data-subtask", ""), vs)
		}
		row.Find("[data-testid=pcell]").Each(func(_ int, c *goquery.Selection) {
			if title := c.AttrOr("title", ""); !strings.Contains(title, "Flink withheld its reader's metrics") {
				t.Errorf("cell title %q, want it to say the reader's metrics are withheld", title)
			}
		})
	})
	_, body := getNoFollow(t, ts.URL+"/api/v1/jobs/"+tJob+"/vertices/"+tSource)
	var vv live.VertexView
	if err := json.Unmarshal([]byte(body), &vv); err != nil || vv.Prediction == nil || vv.Prediction.Withheld != 18 ||
		vv.Prediction.Headline.Verdicts != (live.Tally{Withheld: 18}) || vv.Prediction.NotModelled != nil {
		t.Errorf("vertex JSON prediction %+v (%v), want 18 withheld, nothing else counted", vv.Prediction, err)
	}
	job := getDoc(t, ts.URL+"/jobs/"+tJob, 200)
	if got := job.Find("td[data-label=assignment]").First().Text(); got != "prediction only: Flink withheld the readers' metrics" {
		t.Errorf("job page assignment %q, want prediction only", got)
	}
	ov := getDoc(t, ts.URL+"/", 200)
	if got := ov.Find("td[data-label=assignment]").First().Text(); got != "18 partitions prediction only (metrics withheld)" {
		t.Errorf("overview assignment %q, want 18 partitions prediction only", got)
	}
}

// A source one of whose subtasks lists no id: that row says prediction
// only, the others as predicted, and the counts hold both.
func TestPartlyWithheldSourceCountsBoth(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := liveStore(t, at)
	snap := withheldJob(at.Add(20 * time.Second))
	snap.Jobs[0].Vertices[0].Kafka = sourceObs(func(tp assign.TopicPartition) int {
		o, _ := assign.KafkaSplitOwner(tp, 4)
		return o
	})
	var kept []flink.KafkaPartitionState
	n := 0
	for _, s := range snap.Jobs[0].Vertices[0].Kafka.States {
		if s.Subtask != 3 {
			kept = append(kept, s)
		} else {
			n++
		}
	}
	snap.Jobs[0].Vertices[0].Kafka.States = kept
	st.UpdateFlink(snap)
	ts := restoredServer(t, st, at, "")
	doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource, 200)
	want := strconv.Itoa(18-n) + " as predicted · " + strconv.Itoa(n) + " prediction only (metrics withheld)"
	if counts := doc.Find("[data-testid=headline-counts]").Text(); counts != "Cells: "+want {
		t.Errorf("headline counts %q, want %q", counts, "Cells: "+want)
	}
	doc.Find("[data-testid=subtask-row]").Each(func(_ int, row *goquery.Selection) {
		vs := row.Find("[data-testid=row-vs]").Text()
		if w := "as predicted"; row.AttrOr("data-subtask", "") == "3" {
			if w = strconv.Itoa(n) + " prediction only (metrics withheld)"; !strings.HasSuffix(vs, w) {
				t.Errorf("row 3 vs prediction %q, want %q", vs, w)
			}
		} else if !strings.HasSuffix(vs, w) {
			t.Errorf("row %s vs prediction %q, want %q", row.AttrOr("data-subtask", ""), vs, w)
		}
	})
	job := getDoc(t, ts.URL+"/jobs/"+tJob, 200)
	if got, w := job.Find("td[data-label=assignment]").First().Text(), "as predicted · "+strconv.Itoa(n)+" prediction only (metrics withheld)"; got != w {
		t.Errorf("job page assignment %q, want %q", got, w)
	}
}

// A withheld source's note, from the store's facts: each cause in its
// words, the subtasks that list none apart from those listed without
// values, the topics named (the first five, each isolated), and the
// reason the JobManager may not have fetched the ids yet.
func TestWithheldText(t *testing.T) {
	const frame = "pekko.framesize (default 10485760 bytes)"
	const fetch = "metrics.fetcher.update-interval (default 10 s)"
	for _, tc := range []struct {
		name string
		w    live.Withheld
		want []string
		not  []string
	}{
		{"metric dump, all", live.Withheld{Cause: live.CauseMetricDumpLimit, Setting: frame, All: true, Missing: 1200, Topics: []string{"orders"}},
			[]string{"Flink lists none of this source's KafkaSourceReader offset metrics, for any of the 1,200 partitions of orders: ", "The limit is " + frame, "register.consumer.metrics=false", "the prediction alone"}, nil},
		{"metric dump, one subtask", live.Withheld{Cause: live.CauseMetricDumpLimit, Setting: frame, Subtasks: []int{3}, Missing: 4, Topics: []string{"orders", "pay"}},
			[]string{"subtask 3 of 4 subtasks list no KafkaSourceReader offset metric, and no listed metric names 4 of the partitions of orders, pay: ", "(" + frame + ")"}, nil},
		{"no values, all", live.Withheld{Cause: live.CauseNoValues, Setting: frame, All: true, Missing: 18, Topics: []string{"orders"}},
			[]string{"returned no value for any of them (listed but no values returned), for the 18 partitions of orders. REST does not say why"}, []string{"list none"}},
		{"no values and none listed", live.Withheld{Cause: live.CauseNoValues, Setting: frame, Subtasks: []int{0, 1, 2}, Unlisted: []int{0}, Missing: 14, Topics: []string{"orders"}},
			[]string{"metrics of subtasks 1, 2 of 4 subtasks, but returned no value for them (listed but no values returned), and subtask 0 list none. ", "The 14 partitions of orders no reported metric names"}, nil},
		{"readers just started", live.Withheld{Cause: live.CauseNotYetListed, Setting: fetch, All: true, Missing: 18, Topics: []string{"orders"}, Pending: live.PendingReadersStarted},
			[]string{"metrics yet, for any of the 18 partitions of orders: its readers started less than 30s ago, and the JobManager fetches", "at most once per " + fetch}, []string{"metric dump"}},
		{"first poll", live.Withheld{Cause: live.CauseNotYetListed, Setting: fetch, All: true, Missing: 18, Topics: []string{"orders"}, Pending: live.PendingFirstPoll},
			[]string{": skewscope started asking this JobManager for metrics less than 30s ago, and"}, []string{"readers started"}},
		{"many topics", live.Withheld{Cause: live.CauseMetricDumpLimit, Setting: frame, All: true, Missing: 70, Topics: []string{"t-a", "t-b", "t-c", "t-d", "t-e", "t-f", "t-g"}},
			[]string{"partitions of t-a, t-b, t-c, t-d, t-e and 2 more topics: "}, []string{"t-f", "t-g"}},
		{"a right-to-left topic", live.Withheld{Cause: live.CauseMetricDumpLimit, Setting: frame, All: true, Missing: 4, Topics: []string{"הזמנות", "orders"}},
			[]string{"partitions of \u2068הזמנות\u2069, orders: "}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := withheldText(&tc.w, 4)
			for _, want := range tc.want {
				if !strings.Contains(got, want) {
					t.Errorf("note %q, want it to say %q", got, want)
				}
			}
			for _, bad := range tc.not {
				if strings.Contains(got, bad) {
					t.Errorf("note %q says %q", got, bad)
				}
			}
		})
	}
}
