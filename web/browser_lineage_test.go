//go:build browser

package web

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/internal/browsertest"
	"github.com/skewscope/skewscope/live"
)

// rescaledStore is liveStore after an in-place rescale 4→6 under the same
// job id (the adaptive scheduler): Flink's REST still lists one moved
// partition under its old subtask with no current value to decide it.
func rescaledStore(t *testing.T, at time.Time) *flinkRescale {
	t.Helper()
	st := liveStore(t, at)
	res, err := assign.Restore(assign.RestoreInput{Topics: liveTopics, History: []int{4, 6}})
	if err != nil {
		t.Fatal(err)
	}
	owner := func(tp assign.TopicPartition) int { o, _ := res.Assignment.OwnerOf(tp); return o }
	obs := sourceObs(owner)
	var undecided assign.TopicPartition
	for i := range obs.States {
		obs.States[i].Evidence = flink.EvidenceCurrent
	}
	for _, tp := range assign.Partitions(liveTopics) {
		if old, _ := assign.KafkaSplitOwner(tp, 4); old != owner(tp) {
			undecided = tp
			kp := flink.KafkaPartition{Topic: flink.SanitizeMetricName(tp.Topic), Partition: tp.Partition}
			for i := range obs.States {
				if obs.States[i].KafkaPartition == kp {
					obs.States[i].Evidence = flink.EvidenceUnconfirmed
				}
			}
			obs.States = append(obs.States, flink.KafkaPartitionState{KafkaPartition: kp, Subtask: old, Operator: "Source__Kafka_Source",
				CurrentOffset: 2100, CommittedOffset: 1500, Evidence: flink.EvidenceUnconfirmed})
			break
		}
	}
	j := flink.JobSnapshot{ID: tJob, Name: "orders <enrichment>", State: "RUNNING", StartTime: at,
		Restored: &flink.RestoreInfo{CheckpointID: 12, At: at.Add(25 * time.Second)},
		Vertices: []flink.VertexSnapshot{
			{ID: tSource, Name: "Source: Kafka Source", Parallelism: 6, MaxParallelism: 128, Source: true, Kafka: obs, Subtasks: subtasks(6)},
			{ID: tKeyed, Name: "Enrich <b>Orders</b>", Parallelism: 3, MaxParallelism: 128, Keyed: true, Subtasks: subtasks(3)},
		}}
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: at.Add(30 * time.Second), FlinkVersion: "2.2.1", Jobs: []flink.JobSnapshot{j}})
	return &flinkRescale{st: st, undecided: undecided}
}

// TestBrowserLineage shows a source after an in-place rescale: the
// uncertain headline, the outlined undetermined cell and the lineage table.
func TestBrowserLineage(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	fr := rescaledStore(t, at)
	s, err := NewServer(Options{Live: fr.st, Now: func() time.Time { return at.Add(80 * time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	s.SetReady(true)
	base := browsertest.StartServer(t, http.HandlerFunc(s.ServeHTTP))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })

	b := browsertest.New(t)
	if code := b.Navigate(t, base+"/jobs/"+tJob+"/vertices/"+tSource); code != 200 {
		t.Fatalf("vertex page = %d", code)
	}
	b.Do(t, chromedp.WaitVisible(`[data-testid="lineage"]`))
	if got := b.Text(t, `[data-testid="headline-kind"]`); got != "uncertain" {
		t.Errorf("headline kind %q, want uncertain (one reader not determined)", got)
	}
	// The counts are the rows' verdicts, in the rows' words.
	if got := b.Text(t, `[data-testid="headline-counts"]`); got != "Cells: 17 as predicted · 1 reader not determined" {
		t.Errorf("headline counts %q", got)
	}
	if got := b.Text(t, `[data-testid="prediction-summary"]`); !strings.HasPrefix(got, "17 of 18 partitions are where the restore model for 4→6 puts them; 1 whose reader") {
		t.Errorf("summary %q", got)
	}
	marks := browsertest.Eval[[]string](t, b, `[...document.querySelectorAll('[data-testid="row-vs"]')].map(e => e.textContent.trim())`)
	if undetermined := slices.Index(marks, "~ 1 reader not determined"); undetermined < 0 || slices.ContainsFunc(marks, func(m string) bool { return m != "✓ as predicted" && m != marks[undetermined] }) {
		t.Errorf("rows' marks %q, want one \"~ 1 reader not determined\" and the others \"✓ as predicted\"", marks)
	}
	kinds := browsertest.Eval[[]string](t, b, `[...document.querySelectorAll('[data-testid="lineage-event"]')].map(e => e.dataset.kind)`)
	if strings.Join(kinds, ",") != "start,rescale" {
		t.Errorf("lineage events %v, want start, rescale", kinds)
	}
	if got := b.Text(t, `[data-testid="lineage-event"][data-kind="rescale"]`); !strings.Contains(got, "rescaled in place, p 4→6") || !strings.Contains(got, "checkpoint 12") {
		t.Errorf("rescale row %q", got)
	}
	sel := `[data-testid="pcell"][data-topic="` + fr.undecided.Topic + `"][data-partition="` + strconv.Itoa(int(fr.undecided.Partition)) + `"]`
	if title := browsertest.Eval[string](t, b, `document.querySelector('`+sel+`').title`); !strings.Contains(title, "reader not determined") {
		t.Errorf("undetermined cell's title %q", title)
	}
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll('[data-testid="pcell"].unc').length`); n != 1 {
		t.Errorf("%d outlined cells, want the one undetermined", n)
	}
	screenshots(t, b, "rescaled-source", `[data-testid="lineage"]`)
}

type flinkRescale struct {
	st        *live.Store
	undecided assign.TopicPartition
}
