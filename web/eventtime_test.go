package web

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
)

// eventTimeStore is a job "sessions" whose source reads clicks (4
// partitions) at 4, keyed into "Sessionize" at 2; clicks-2 receives no
// record after the first of eight Kafka polls and holds the watermark.
func eventTimeStore(t *testing.T, at time.Time) *live.Store {
	t.Helper()
	return eventTimeStoreAt(t, at, 4)
}

// eventTimeStoreAt is eventTimeStore's job with its source at sourceP: at
// more than 4, the subtasks from 4 on read no partition and emit no
// watermark, so the keyed vertex has none and they hold it.
func eventTimeStoreAt(t *testing.T, at time.Time, sourceP int) *live.Store {
	t.Helper()
	const polls = 8
	now := at.Add(polls * 10 * time.Second)
	st := live.New(live.Options{Now: func() time.Time { return now }})
	end := func(p, k int) int64 {
		if p == 2 || k == 0 {
			return 1000
		}
		return 1000 + int64(100*k)
	}
	for k := range polls + 1 {
		ks := &kafka.Snapshot{Cluster: "prod", CollectedAt: at.Add(time.Duration(k) * 10 * time.Second)}
		topic := kafka.Topic{Name: "clicks"}
		for p := range 4 {
			topic.Partitions = append(topic.Partitions, kafka.Partition{Partition: int32(p), End: end(p, k), Rate: 10, RateOK: k > 0,
				Freshness: kafka.Freshness{UpdatedAt: ks.CollectedAt}})
		}
		ks.Topics = []kafka.Topic{topic}
		st.UpdateKafka(ks)
	}
	base := at.UnixMilli()
	wm := func(p int32) int64 {
		if p == 2 {
			return base
		}
		return base + 70_000
	}
	nan := math.NaN()
	et := func() flink.SubtaskEventTime {
		e := flink.NoEventTime()
		e.Read, e.OutputWatermark = true, flink.WatermarkNone
		return e
	}
	var ids []string
	var vals []flink.Metric
	topics := []assign.Topic{{Name: "clicks", Partitions: 4}}
	for _, tp := range assign.Partitions(topics) {
		o, _ := assign.KafkaSplitOwner(tp, sourceP)
		base := fmt.Sprintf("%d.Source__Kafka_Source.KafkaSourceReader.topic.clicks.partition.%d.", o, tp.Partition)
		ids = append(ids, base+"currentOffset", base+"committedOffset")
		vals = append(vals, flink.Metric{ID: base + "currentOffset", Raw: fmt.Sprint(end(int(tp.Partition), polls) - 1)}, flink.Metric{ID: base + "committedOffset", Raw: "900"})
	}
	obs := flink.ParseKafkaSourceMetricIDs(ids)
	obs.ApplyValues(vals)
	src := flink.VertexSnapshot{ID: tSource, Name: "Source: Kafka Source", Parallelism: sourceP, MaxParallelism: 128, Source: true, Kafka: obs}
	for i := range sourceP {
		src.Subtasks = append(src.Subtasks, flink.SubtaskSnapshot{Index: i, Status: "RUNNING", BusyRatio: 0.1, BackPressuredRatio: 0, IdleRatio: 0.9,
			RecordsInPerSecond: 10, RecordsOutPerSecond: 10, StateSize: -1, EventTime: et()})
	}
	for i := range obs.States {
		s := &obs.States[i]
		s.Split = &flink.SplitWatermark{Watermark: wm(s.Partition), PausedPerS: nan}
		sub := &src.Subtasks[s.Subtask].EventTime
		if sub.OutputWatermark == flink.WatermarkNone || wm(s.Partition) < sub.OutputWatermark {
			sub.OutputWatermark = wm(s.Partition)
		}
	}
	keyed := flink.VertexSnapshot{ID: tKeyed, Name: "Sessionize", Parallelism: 2, MaxParallelism: 128, Keyed: true, Inputs: []string{tSource}}
	for i := range 2 {
		e := et()
		e.InputWatermark, e.OutputWatermark = base, flink.WatermarkUnread
		if sourceP > 4 {
			e.InputWatermark = flink.WatermarkNone
		}
		keyed.Subtasks = append(keyed.Subtasks, flink.SubtaskSnapshot{Index: i, Status: "RUNNING", BusyRatio: 0.1, BackPressuredRatio: 0, IdleRatio: 0.9,
			RecordsInPerSecond: 10, RecordsOutPerSecond: 1, StateSize: -1, EventTime: e})
	}
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: now, FlinkVersion: "2.2.1",
		Jobs: []flink.JobSnapshot{{ID: tJob, Name: "sessions", State: "RUNNING", StartTime: at, Vertices: []flink.VertexSnapshot{src, keyed}}}})
	return st
}

// The job page and the keyed vertex's page name the partition, its
// subtask and the cause of a stalled watermark, in one sentence.
func TestPagesNameTheWatermarkHolder(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	ts := newLiveServer(t, eventTimeStore(t, at), nil)
	reader, _ := assign.KafkaSplitOwner(assign.TopicPartition{Topic: "clicks", Partition: 2}, 4)

	doc := getDoc(t, ts.URL+"/jobs/"+tJob, 200)
	note := doc.Find(`[data-testid="watermark-note"]`).Text()
	for _, want := range []string{
		"The watermark of the job is 2026-12-02 10:00:00 UTC, 1 m 20 s behind",
		fmt.Sprintf("partition clicks-2 (subtask %d of Source: Kafka Source) has had no new record for at least", reader),
		"withIdleness", "observed: Flink's split watermark",
	} {
		if !strings.Contains(note, want) {
			t.Errorf("job page's event-time note %q lacks %q", note, want)
		}
	}
	if got := doc.Find(`[data-testid="vertex-watermark"]`).Last().Text(); !strings.HasPrefix(got, "2026-12-02 10:00:00 UTC") {
		t.Errorf("the keyed vertex's watermark cell %q", got)
	}

	// The keyed vertex's page says it once, in its why panel; embedded
	// without the panel, in its note.
	doc = getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tKeyed, 200)
	if n := doc.Find(`[data-testid="watermark-note"]`).Length(); n != 0 {
		t.Errorf("keyed vertex page has a watermark note beside its why line: %q", doc.Find(`[data-testid="watermark-note"]`).Text())
	}
	if line := doc.Find(`[data-testid="why-line"][data-kind="watermark"]`).Text(); !strings.Contains(line, "clicks-2") {
		t.Errorf("keyed vertex page's why line %q", line)
	}
	doc = getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tKeyed+"?embed=1&parts=grid", 200)
	if note := doc.Find(`[data-testid="watermark-note"]`).Text(); !strings.Contains(note, "The watermark of Sessionize is") || !strings.Contains(note, "clicks-2") {
		t.Errorf("embedded keyed vertex's note %q", note)
	}
}

// The sentence for a holder with the oldest records while watermark
// alignment pauses the partitions ahead of it names them; another cause
// keeps its sentence and adds them.
func TestHolderTextNamesThePartitionsAlignmentPauses(t *testing.T) {
	w := func(h live.WatermarkHolder) *live.VertexWatermark {
		return &live.VertexWatermark{ID: tKeyed, Name: "Sessionize", WatermarkMs: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC).UnixMilli(), LagSeconds: 900, Holder: &h}
	}
	h := live.WatermarkHolder{VertexID: tSource, VertexName: "Source: Kafka Source", Subtask: 1, Topic: "clicks", Partition: 1,
		Kind: live.Observed, Cause: live.HoldAligning, Paused: []string{"clicks-0", "clicks-2", "clicks-3"}}
	for _, tc := range []struct {
		name string
		h    live.WatermarkHolder
		want string
	}{
		{"aligning", h, "The watermark of the job is 2026-12-02 10:00:00 UTC, 15 m 0 s behind: it follows partition clicks-1 (subtask 1 of Source: Kafka Source), whose records are the oldest read, and watermark alignment pauses partitions clicks-0, clicks-2, clicks-3, which run ahead of it by more than the group's maximum drift, until it catches up (observed: Flink's split watermark; the pauses observed from Flink's paused times and alignment drift)."},
		{"idle while others are paused", func() live.WatermarkHolder {
			h := h
			h.Cause, h.QuietSeconds, h.Paused = live.HoldIdle, 12, []string{"clicks-0"}
			return h
		}(),
			"has had no new record for at least 12 s and no idle timeout shorter than that lets the job skip it; with WatermarkStrategy.withIdleness (or scan.watermark.idle-timeout in SQL) it would advance (observed: Flink's split watermark; the quiet time observed from its end offsets). Watermark alignment pauses partition clicks-0 meanwhile: they wait for it."},
		{"many paused", func() live.WatermarkHolder {
			h := h
			h.Paused = []string{"a-0", "a-1", "a-2", "a-3", "a-4", "a-5", "a-6"}
			return h
		}(), "pauses partitions a-0, a-1, a-2, a-3, a-4 and 2 more, which run ahead"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := holderText("the job", w(tc.h)); !strings.Contains(got, tc.want) {
				t.Errorf("holderText = %q, want it to hold %q", got, tc.want)
			}
		})
	}
}

// The planner warns, computed, which subtasks a target leaves without a
// partition and what that does to the watermark.
func TestPlannerWarnsOfReadersWithoutPartitions(t *testing.T) {
	ts := runServer(t, Options{})
	doc := getDoc(t, ts.URL+"/plan?topic=clicks:12&parallelism=12&target=16", 200)
	why := doc.Find(`[data-testid="why"]`).Text()
	var want []int
	a, err := assign.FreshAssignment([]assign.Topic{{Name: "clicks", Partitions: 12}}, 16)
	if err != nil {
		t.Fatal(err)
	}
	for i, parts := range a.Subtasks {
		if len(parts) == 0 {
			want = append(want, i)
		}
	}
	if len(want) != 4 {
		t.Fatalf("12 partitions at 16 leave %v without a partition, want 4 subtasks", want)
	}
	for _, s := range []string{"4 of 16 source subtasks read nothing: there are only 12 partitions.",
		"At p = 16, 4 subtasks (" + subtaskList(want) + ") read nothing: they emit no watermark, so without idleness"} {
		if !strings.Contains(why, s) {
			t.Errorf("planner's why panel lacks %q:\n%s", s, why)
		}
	}
}

// The vertex pages show each subtask's watermark in a column, and a
// source's grid can be coloured by event-time lag, each cell then reading
// its watermark and state.
func TestVertexPagesShowWatermarks(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	ts := newLiveServer(t, eventTimeStore(t, at), nil)
	reader, _ := assign.KafkaSplitOwner(assign.TopicPartition{Topic: "clicks", Partition: 2}, 4)

	doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tKeyed, 200)
	var cells []string
	doc.Find(`[data-testid="row-watermark"]`).Each(func(_ int, s *goquery.Selection) { cells = append(cells, s.Text()) })
	want := []string{"2026-12-02 10:00:00 UTC, 1 m 20 s behind · lowest", "2026-12-02 10:00:00 UTC, 1 m 20 s behind · lowest"}
	if !slices.Equal(cells, want) {
		t.Errorf("keyed vertex's watermark column %q, want %q", cells, want)
	}
	var sparks []string
	doc.Find(`[data-testid="spark-watermark"]`).Each(func(_ int, s *goquery.Selection) { sparks = append(sparks, s.AttrOr("data-spark", "")) })
	if want := []string{"[80]", "[80]"}; !slices.Equal(sparks, want) {
		t.Errorf("keyed vertex's event-time lag sparklines %q, want %q (one poll, 80 s behind)", sparks, want)
	}
	// No keyed subtask is the cause: the first screen says the why panel
	// names what the vertex waits on, not that it names nothing.
	if got := doc.Find(`[data-testid="brief"]`).Text(); !strings.Contains(got, "the why panel below says what the vertex waits on") {
		t.Errorf("keyed vertex's first screen %q", got)
	}

	// The source, by lag: a watermark column, and the choice of colour.
	doc = getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource, 200)
	if got := doc.Find(fmt.Sprintf(`[data-subtask="%d"] [data-testid="row-watermark"]`, reader)).Text(); got != "2026-12-02 10:00:00 UTC, 1 m 20 s behind · lowest" {
		t.Errorf("the reader of clicks-2's watermark cell %q", got)
	}
	if got := doc.Find(fmt.Sprintf(`tr[data-subtask="%d"] [data-testid="row-concern"]`, reader)).Text(); got != "holds the watermark" {
		t.Errorf("the reader of clicks-2's concern %q, want holds the watermark", got)
	}
	link, ok := doc.Find(`[data-testid="colour-watermark"]`).Attr("href")
	if !ok || !strings.Contains(link, "color=watermark") {
		t.Fatalf("the source page offers no colouring by event-time lag: %q", link)
	}
	if got := doc.Find(`[data-testid="pcell"][data-partition="2"] i`).AttrOr("title", ""); !strings.Contains(got, "idle: no new record for at least") {
		t.Errorf("by lag, the idle cell's reading %q does not say it is idle", got)
	}

	// By event-time lag: the cells' numbers, colours and readings.
	doc = getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tSource+"?color=watermark", 200)
	for p, want := range map[string]struct{ text, level, reading string }{
		"2": {"1 m 20 s", "2", "watermark 2026-12-02 10:00:00 UTC, 1 m 20 s behind (observed) · idle: no new record for at least"},
		"0": {"10 s", "1", "watermark 2026-12-02 10:01:10 UTC, 10 s behind (observed) · active"},
	} {
		c := doc.Find(`[data-testid="pcell"][data-partition="` + p + `"]`)
		if got := c.Find("i").Text(); got != want.text {
			t.Errorf("clicks-%s by event-time lag reads %q, want %q", p, got, want.text)
		}
		if got := c.AttrOr("data-l", ""); got != want.level {
			t.Errorf("clicks-%s's colour step %q, want %q", p, got, want.level)
		}
		if got := c.Find("i").AttrOr("title", ""); !strings.HasPrefix(got, want.reading) {
			t.Errorf("clicks-%s's reading %q, want it to start %q", p, got, want.reading)
		}
	}
	if got := doc.Find(`[data-testid="legend-note"]`).Text(); !strings.Contains(got, "split's watermark (observed)") {
		t.Errorf("legend note %q", got)
	}

	// A job without event time: no watermark column, no such colour.
	plain := newLiveServer(t, liveStore(t, at), nil)
	doc = getDoc(t, plain.URL+"/jobs/"+tJob+"/vertices/"+tSource, 200)
	if n := doc.Find(`[data-testid="row-watermark"], [data-testid="colour-watermark"]`).Length(); n != 0 {
		t.Errorf("a job without event time shows %d watermark elements", n)
	}
	doc = getDoc(t, plain.URL+"/jobs/"+tJob+"/vertices/"+tSource+"?color=watermark", 200)
	if got := doc.Find(`[data-testid="legend-note"]`).Text(); !strings.Contains(got, "reports no watermarks") {
		t.Errorf("coloured by event-time lag without event time, the legend says %q", got)
	}
}

// The why panel of the keyed vertex says, in one sentence marked with its
// provenance, which partition holds its watermark and why.
func TestWhyPanelNamesTheWatermarkHolder(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	ts := newLiveServer(t, eventTimeStore(t, at), nil)
	doc := getDoc(t, ts.URL+"/jobs/"+tJob+"/vertices/"+tKeyed, 200)
	line := doc.Find(`[data-testid="why-line"][data-kind="watermark"]`)
	if line.Length() != 1 {
		t.Fatalf("the keyed vertex's why panel has %d watermark lines:\n%s", line.Length(), doc.Find(`[data-testid="why"]`).Text())
	}
	if got := line.Text(); !strings.Contains(got, "The watermark of Sessionize is 2026-12-02 10:00:00 UTC, 1 m 20 s behind because partition clicks-2") ||
		!strings.Contains(got, "observed") {
		t.Errorf("watermark line %q", got)
	}
	if line.Find(`[data-testid="why-planner"]`).Length() != 0 {
		t.Error("the watermark line links to the planner: a parallelism does not move an idle partition's watermark")
	}
}
