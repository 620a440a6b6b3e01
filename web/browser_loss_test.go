//go:build browser

package web

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/browsertest"
	"github.com/skewscope/skewscope/live"
)

// lossPolls feeds st poll i (5 s apart from at) of a source reading
// liveTopics at p=4: every partition gains 40 records/s; orders-0 reads 10/s
// and Kafka deletes up to 4700 at poll 6 while it is at 2300 (2,400 records
// deleted unread), after which it skips to the log start; orders-4 stands
// at 5000 until poll 8; orders-3 reads 60/s, catching up; payments.v1-2 is
// caught up; the others keep pace 50 records behind. The group enrich
// commits 30 records behind each position.
func lossPolls(st *live.Store, at time.Time, i int) {
	end := int64(10000 + 200*i)
	pos := func(tp assign.TopicPartition) (int64, float64) {
		switch {
		case tp.Topic == "orders" && tp.Partition == 0 && i < 6:
			return 2000 + 50*int64(i), 10
		case tp.Topic == "orders" && tp.Partition == 0 && i == 6:
			return 2300, 10
		case tp.Topic == "orders" && tp.Partition == 0:
			return 4750 + 50*int64(i-7), 10
		case tp.Topic == "orders" && tp.Partition == 4 && i < 8:
			return 5000, 0
		case tp.Topic == "orders" && tp.Partition == 3:
			return 8000 + 300*int64(i), 60
		case tp.Topic == "payments.v1" && tp.Partition == 2:
			return end, 40
		}
		return end - 50, 40
	}
	t := at.Add(time.Duration(i) * 5 * time.Second)
	ks := &kafka.Snapshot{Cluster: "prod", CollectedAt: t}
	group := kafka.Group{Name: "enrich", State: "Empty", Freshness: kafka.Freshness{UpdatedAt: t}}
	var ids []string
	var vals []flink.Metric
	out := make([]float64, 4)
	for _, topic := range liveTopics {
		kt := kafka.Topic{Name: topic.Name}
		for p := range int32(topic.Partitions) {
			tp := assign.TopicPartition{Topic: topic.Name, Partition: p}
			kp := kafka.Partition{Partition: p, End: end, Rate: 40, RateOK: i > 0, Freshness: kafka.Freshness{UpdatedAt: t}}
			if tp.Topic == "orders" && p == 0 && i >= 6 {
				kp.Start = 4700
			}
			kt.Partitions = append(kt.Partitions, kp)
			next, rate := pos(tp)
			group.Partitions = append(group.Partitions, kafka.GroupPartition{Topic: tp.Topic, Partition: p, Committed: next - 30, Lag: end - next + 30})
			o, _ := assign.KafkaSplitOwner(tp, 4)
			out[o] += rate
			base := fmt.Sprintf("%d.Source__Kafka_Source.KafkaSourceReader.topic.%s.partition.%d.", o, flink.SanitizeMetricName(tp.Topic), p)
			ids = append(ids, base+"currentOffset", base+"committedOffset")
			vals = append(vals, flink.Metric{ID: base + "currentOffset", Raw: fmt.Sprint(next - 1)}, flink.Metric{ID: base + "committedOffset", Raw: fmt.Sprint(next - 30)})
		}
		ks.Topics = append(ks.Topics, kt)
	}
	ks.Groups = []kafka.Group{group}
	st.UpdateKafka(ks)
	obs := flink.ParseKafkaSourceMetricIDs(ids)
	obs.ApplyValues(vals)
	subs := make([]flink.SubtaskSnapshot, 4)
	for k := range subs {
		subs[k] = flink.SubtaskSnapshot{Index: k, Status: "RUNNING", BusyRatio: 0.3 + 0.2*float64(k), IdleRatio: 0.1,
			RecordsInPerSecond: out[k], RecordsOutPerSecond: out[k], StateSize: -1}
	}
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: t, FlinkVersion: "2.2.1", Jobs: []flink.JobSnapshot{{
		ID: tJob, Name: "orders <enrichment>", State: "RUNNING", StartTime: at,
		Vertices: []flink.VertexSnapshot{
			{ID: tSource, Name: "Source: Kafka Source", Parallelism: 4, MaxParallelism: 128, Source: true, Kafka: obs, Subtasks: subs, BackpressureLevel: "ok"},
			{ID: tKeyed, Name: "Enrich <b>Orders</b>", Parallelism: 3, MaxParallelism: 128, Keyed: true, Subtasks: subtasks(3), BackpressureLevel: "ok"},
		}}}})
}

// TestBrowserRecordsLost shows a source that lost records: the cell's
// badge and title, the subtask's count, the headline figures and the
// catch-up column, in light, dark and at phone width; then a live update
// moves a stalled partition on, and its cell's state class and title
// follow without a reload. The topic page shows the group's loss.
func TestBrowserRecordsLost(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 40, 0, 0, time.UTC)
	var now atomic.Int64
	now.Store(at.Add(36 * time.Second).UnixNano())
	st := live.New(live.Options{Now: func() time.Time { return time.Unix(0, now.Load()).UTC() }})
	for i := range 8 {
		lossPolls(st, at, i)
	}
	base := serveLive(t, Options{Live: st, Now: func() time.Time { return time.Unix(0, now.Load()).UTC() }, LiveInterval: 50 * time.Millisecond})

	b := browsertest.New(t)
	if code := b.Navigate(t, base+"/jobs/"+tJob+"/vertices/"+tSource); code != 200 {
		t.Fatalf("vertex page = %d", code)
	}
	b.Do(t, chromedp.WaitVisible(`[data-testid="grid"]`))
	lost := `[data-testid="pcell"][data-topic="orders"][data-partition="0"]`
	if cls := browsertest.Eval[string](t, b, `document.querySelector('`+lost+`').className`); !strings.Contains(cls, "lost") || !strings.Contains(cls, "st-lost") {
		t.Errorf("orders-0 cell class %q, want lost and st-lost", cls)
	}
	if title := browsertest.Eval[string](t, b, `document.querySelector('`+lost+` i').title`); !strings.Contains(title, "≈ 2,400 records deleted unread at 10:40:30 UTC (observed)") {
		t.Errorf("orders-0 cell title %q", title)
	}
	figures := browsertest.Eval[string](t, b, `document.querySelector('[data-testid="figures"]').innerText`)
	for _, want := range []string{"≈ 2,400", "records deleted unread on orders-0 at 10:40:30 UTC", "1 lost · 1 stalled"} {
		if !strings.Contains(figures, want) {
			t.Errorf("figures lack %q:\n%s", want, figures)
		}
	}
	row := browsertest.Eval[string](t, b, `document.querySelector('`+lost+`').closest('tr').querySelector('[data-testid="row-lost"]').textContent`)
	if row != "≈ 2,400 deleted unread" {
		t.Errorf("orders-0's subtask row reads %q", row)
	}
	catchUps := browsertest.Eval[[]string](t, b, `[...document.querySelectorAll('[data-testid="row-catchup"]')].map(e => e.textContent)`)
	if strings.Join(catchUps, "|") != "keeps pace|keeps pace|≈ 1 m 10 s · shrinking|–" {
		t.Errorf("catch-up column %q, want two keeping pace, one catching up and the one losing records unknown", catchUps)
	}
	screenshots(t, b, "records-lost", `[data-testid="figures"]`)

	// orders-4 moves on: its cell is no longer stalled, by the live update.
	stalled := `[data-testid="pcell"][data-topic="orders"][data-partition="4"]`
	if cls := browsertest.Eval[string](t, b, `document.querySelector('`+stalled+`').className`); !strings.Contains(cls, "st-stalled") {
		t.Fatalf("orders-4 cell class %q, want st-stalled", cls)
	}
	browsertest.Eval[string](t, b, `document.querySelector('`+stalled+`').dataset.mark = "before"`)
	now.Store(at.Add(41 * time.Second).UnixNano())
	lossPolls(st, at, 8)
	hangGuard := time.Now().Add(30 * time.Second)
	for strings.Contains(browsertest.Eval[string](t, b, `document.querySelector('`+stalled+`').className`), "st-stalled") {
		if time.Now().After(hangGuard) {
			t.Fatal("orders-4's cell is still stalled 30 s after the update that moved it")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if mark := browsertest.Eval[string](t, b, `document.querySelector('`+stalled+`').dataset.mark || ""`); mark != "before" {
		t.Error("the page was fetched again; the update should have applied to the cell in place")
	}
	if title := browsertest.Eval[string](t, b, `document.querySelector('`+stalled+` i').title`); strings.Contains(title, "stalled") {
		t.Errorf("orders-4's title still says stalled: %q", title)
	}

	if code := b.Navigate(t, base+"/kafka/prod/topics/orders"); code != 200 {
		t.Fatalf("topic page = %d", code)
	}
	b.Do(t, chromedp.WaitVisible(`[data-testid="topic-table"]`))
	if got := b.Text(t, `[data-testid="group-lost"]`); got != "≈ 2,430 deleted unread" {
		t.Errorf("topic page group loss %q, want the records below 4700 from its commit 2270", got)
	}
	screenshots(t, b, "records-lost-topic", `[data-testid="commit-note"]`)
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
}
