//go:build browser

package web

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skewscope/skewscope/internal/browsertest"
	"github.com/skewscope/skewscope/internal/format"
)

// TestBrowserOverviewShowsJobManagerCost: the overview's endpoint row says
// what the latest poll asked of the JobManager, the budget, and that
// skewscope is backing off.
func TestBrowserOverviewShowsJobManagerCost(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := liveStore(t, at)
	base := serveLive(t, Options{Live: st, Now: func() time.Time { return at.Add(20 * time.Second) }})

	b := browsertest.New(t)
	if code := b.Navigate(t, base+"/"); code != 200 {
		t.Fatalf("overview = %d", code)
	}
	b.Do(t, chromedp.WaitVisible(`[data-testid="endpoints"] tbody tr`))
	row := b.Text(t, `[data-testid="endpoints"] tbody tr`)
	for _, want := range []string{"412 requests, " + format.Bytes(8_100_000) + ", 3 failed", "4 in flight, 50/s", "backing off after 2 slow polls"} {
		if !strings.Contains(row, want) {
			t.Errorf("the endpoint row reads %q, want it to contain %q", row, want)
		}
	}
	screenshots(t, b, "overview-endpoints", `main`)
	b.NoConsoleErrors(t)
}
