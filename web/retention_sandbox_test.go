package web

import (
	"context"
	"testing"
	"time"

	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/sandbox"
)

// TestSandboxWarnsBeforeRecordsAreDeleted runs the sandbox with a retention
// of seconds, polled by the real collectors: its hot orders subtask falls
// behind until Kafka deletes records before the source reads them. The
// source's "Time to retention" figure (estimated) must say so at an
// earlier poll than the first poll that sees a record lost, with the
// topic's retention read from Kafka as the topic reports it. The only wait
// is on those conditions; the deadline is a hang guard.
func TestSandboxWarnsBeforeRecordsAreDeleted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the sandbox for a while")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The readers' trend needs 20 s of samples in their 32-sample rings:
	// polls a second apart, as the sandbox's own are at most, and a
	// retention the hot subtask's lag time reaches well after that.
	const retention = 30 * time.Second
	feed := startSandboxFeed(t, sandbox.Options{Seed: 13, Retention: retention, TrimEvery: time.Second},
		func(c *kafka.Config) { c.LogStartRefresh = time.Nanosecond })
	job := feed.job(t, "orders-enrichment")
	warnedAt, lostAt := -1, -1
	var warning live.Figure
	hangGuard := time.Now().Add(5 * time.Minute)
	for polls := 1; lostAt < 0; polls++ {
		feed.poll(ctx)
		vv, err := feed.st.State().Vertex(job.ID, job.SourceVertexID, live.VertexQuery{Highlight: -1})
		if err == nil {
			for _, f := range vv.Figures {
				if f.Name == live.FigureTimeToRetention && f.Value > 0 && warnedAt < 0 {
					warnedAt, warning = polls, f
				}
			}
			for _, r := range vv.Subtasks {
				for _, c := range r.Partitions {
					if c.Reading.Lost != nil && c.Reading.Lost.Records > 0 && lostAt < 0 {
						lostAt = polls
					}
				}
			}
		}
		if time.Now().After(hangGuard) {
			t.Fatalf("after %d polls (5 minutes) no record was lost (warned at poll %d); sandbox stats %+v", polls, warnedAt, feed.sb.Stats())
		}
		time.Sleep(time.Second) // paces the polls; nothing waits on it
	}
	t.Logf("warned at poll %d (%+v), first record lost at poll %d", warnedAt, warning, lostAt)
	if warnedAt < 0 || warnedAt >= lostAt {
		t.Fatalf("the time-to-retention warning came at poll %d, the first loss at poll %d: want the warning first", warnedAt, lostAt)
	}
	if warning.Kind != live.Estimated {
		t.Errorf("the warning is %s, want estimated", warning.Kind)
	}
	if warning.Subtask != 3 || warning.Seconds != 30 || warning.Partition == "" {
		t.Errorf("the warning %+v, want it to name subtask 3 and the partition whose 30-second retention it passes", warning)
	}
}
