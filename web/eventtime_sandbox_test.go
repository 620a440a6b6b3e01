package web

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/sandbox"
)

// jobEventTime GETs a job's JSON twin and returns its event time (nil when
// it has none).
func jobEventTime(t *testing.T, base, jobID string) *live.JobEventTime {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/jobs/" + jobID)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/jobs/%s = %d %.300s", jobID, resp.StatusCode, body)
	}
	var jv struct {
		EventTime *live.JobEventTime `json:"eventTime"`
	}
	if err := json.Unmarshal(body, &jv); err != nil {
		t.Fatalf("GET /api/v1/jobs/%s: %v", jobID, err)
	}
	return jv.EventTime
}

func holderString(h *live.WatermarkHolder) string {
	if h == nil {
		return "none"
	}
	return fmt.Sprintf("%s-%d on subtask %d, %s", h.Topic, h.Partition, h.Subtask, h.Cause)
}

// TestSandboxWatermarkHolders polls the sandbox, wired as the dashboard
// wires it, poll by poll: once orders-7 has gone silent, the
// orders-enrichment job, which has no idle timeout, is held by it, and the
// job's JSON and page name the partition, its subtask and the cause, idle
// with no idle timeout; clickstream-sessions, with its 5 s idle timeout,
// advances and on every poll its holder is a partition of a reader, never
// missing nor undetermined (a poll reads one instant of the JobManager's
// metric store). The waits count polls.
func TestSandboxWatermarkHolders(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the sandbox for a while")
	}
	feed := startSandboxFeed(t, sandbox.Options{Seed: 24, SilentAfter: 3 * time.Second}, nil)
	ts := newLiveServer(t, feed.st, feed.sb)
	orders, clicks := feed.job(t, "orders-enrichment"), feed.job(t, "clickstream-sessions")
	owner, err := assign.KafkaSplitOwner(assign.TopicPartition{Topic: "orders", Partition: sandbox.SilentPartition}, orders.Parallelism)
	if err != nil {
		t.Fatal(err)
	}

	const checked = 60 // clickstream polls with a watermark, each with a holder
	var held *live.WatermarkHolder
	var first, last int64
	clicksPolls, advanced := 0, 0
	for poll := 1; held == nil || clicksPolls < checked; poll++ {
		if poll > 400 {
			t.Fatalf("after %d polls: orders-enrichment held by %v, clickstream-sessions checked on %d polls", poll, held, clicksPolls)
		}
		feed.poll(t.Context())
		if et := jobEventTime(t, ts.URL, clicks.ID); et != nil && !et.None {
			clicksPolls++
			if h := et.Holder; h == nil || h.Cause == live.HoldUndetermined || h.Topic == "" || h.Partition < 0 {
				t.Errorf("poll %d: clickstream-sessions watermark %v held by %s, want a partition of a reader", poll, time.UnixMilli(et.WatermarkMs).UTC(), holderString(h))
			}
			switch {
			case clicksPolls == 1:
				first = et.WatermarkMs
			case et.WatermarkMs < last:
				t.Errorf("poll %d: clickstream-sessions watermark went back from %d to %d", poll, last, et.WatermarkMs)
			case et.WatermarkMs > last:
				advanced++
			}
			last = et.WatermarkMs
		}
		if held == nil {
			if et := jobEventTime(t, ts.URL, orders.ID); et != nil && et.Holder != nil &&
				et.Holder.Topic == "orders" && et.Holder.Partition == sandbox.SilentPartition && et.Holder.Cause == live.HoldIdle {
				held = et.Holder
				t.Logf("poll %d: orders-enrichment held by %s (quiet %.0f s) at %v", poll, holderString(held), held.QuietSeconds, time.UnixMilli(et.WatermarkMs).UTC())
			}
		}
		time.Sleep(300 * time.Millisecond) // paces the polls; nothing waits on it
	}
	if advanced < checked/4 || last <= first {
		t.Errorf("clickstream-sessions watermark advanced on %d of %d polls, from %d to %d", advanced, checked, first, last)
	}
	if held.Subtask != owner || held.SkipsIdle || held.Kind != live.Observed || held.QuietSeconds < 10 {
		t.Errorf("orders-enrichment holder = %+v, want orders-7 on its reader %d, observed, quiet ≥ 10 s, no idle input skipped", *held, owner)
	}

	doc := getDoc(t, ts.URL+"/jobs/"+orders.ID, 200)
	note := doc.Find(`[data-testid="watermark-note"]`).Text()
	for _, want := range []string{
		fmt.Sprintf("partition orders-7 (subtask %d of Source: Kafka Source) has had no new record for at least", owner),
		"no idle timeout shorter than that lets the job skip it", "withIdleness",
		"observed: Flink's split watermark",
	} {
		if !strings.Contains(note, want) {
			t.Errorf("orders-enrichment page's event-time note %q lacks %q", note, want)
		}
	}
}
