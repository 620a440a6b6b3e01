//go:build browser

package web

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/browsertest"
	"github.com/skewscope/skewscope/live"
)

// TestBrowserOverviewBackendStates: configured backends are on the
// overview before their first poll ends, and the page follows them live
// (the script's age ticks leave "not yet polled" alone) into never reached
// and ok.
func TestBrowserOverviewBackendStates(t *testing.T) {
	st := live.New(live.Options{Kafka: []string{"prod", "lost"}, Flink: []live.Endpoint{{Name: "jm", URL: "http://jm.example:8081"}}})
	base := serveLive(t, Options{Live: st, LiveInterval: 50 * time.Millisecond})

	b := browsertest.New(t)
	if code := b.Navigate(t, base+"/"); code != 200 {
		t.Fatalf("overview = %d", code)
	}
	states := func() string {
		return browsertest.Eval[string](t, b, `[...document.querySelectorAll('[data-testid="backend-state"]')].map(e => e.textContent.replace(/\s+/g, " ").trim()).join(" | ")`)
	}
	// The script has ticked the ages once on load; wait for a second tick.
	b.Do(t, chromedp.Sleep(1100*time.Millisecond))
	if got, want := states(), "not yet polled | not yet polled | not yet polled"; got != want {
		t.Errorf("before the first polls the states read %q, want %q", got, want)
	}
	screenshots(t, b, "overview-not-yet-polled", `[data-testid="clusters"]`)

	now := time.Now()
	st.UpdateKafka(&kafka.Snapshot{Cluster: "lost", CollectedAt: now, PollDuration: 1500 * time.Millisecond,
		Err: errors.New("list topics: unable to dial: dial tcp 10.0.0.9:9092: connect: connection refused")})
	st.UpdateKafka(&kafka.Snapshot{Cluster: "prod", CollectedAt: now, PollDuration: 12 * time.Millisecond,
		Topics: []kafka.Topic{{Name: "orders", Partitions: []kafka.Partition{{Partition: 0, End: 10, Freshness: kafka.Freshness{UpdatedAt: now}}}}}})
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", URL: "http://jm.example:8081", CollectedAt: now, PollDuration: 20 * time.Millisecond, FlinkVersion: "2.2.1"})
	var got string
	for range 100 {
		if got = states(); strings.HasPrefix(got, "0 s ago | ") || strings.HasPrefix(got, "1 s ago | ") {
			break
		}
		b.Do(t, chromedp.Sleep(50*time.Millisecond))
	}
	parts := strings.Split(got, " | ")
	if len(parts) != 3 || !strings.HasSuffix(parts[0], "s ago") || !strings.HasPrefix(parts[1], "never reached · no data") ||
		!strings.Contains(parts[1], "connection refused") || !strings.HasSuffix(parts[2], "s ago") {
		t.Errorf("after the first polls the states read %q, want jm ok, lost never reached with its error, prod ok", got)
	}
	screenshots(t, b, "overview-never-reached", `[data-testid="clusters"]`)
	b.NoConsoleErrors(t)
}
