//go:build browser

package web

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/browsertest"
)

// TestBrowserHeldBackWatermark opens a job whose watermark an idle
// partition holds back, as an on-call engineer following the alert would:
// the job page's event-time note, the source coloured by event-time lag
// with the holder highlighted, and the keyed vertex's watermark column and
// why line; each in light, dark and at 390 px.
func TestBrowserHeldBackWatermark(t *testing.T) {
	at := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	now := at.Add(80 * time.Second)
	base := serveLive(t, Options{Live: eventTimeStore(t, at), LiveInterval: 50 * time.Millisecond, Now: func() time.Time { return now }})
	reader, _ := assign.KafkaSplitOwner(assign.TopicPartition{Topic: "clicks", Partition: 2}, 4)
	b := browsertest.New(t)
	open := func(path, wait string) {
		t.Helper()
		if code := b.Navigate(t, base+path); code != 200 {
			t.Fatalf("%s = %d", path, code)
		}
		b.Do(t, chromedp.WaitVisible(wait))
	}

	open("/jobs/"+tJob, `[data-testid="watermark-note"]`)
	note := b.Text(t, `[data-testid="watermark-note"]`)
	if want := fmt.Sprintf("partition clicks-2 (subtask %d of Source: Kafka Source) has had no new record", reader); !strings.Contains(note, want) {
		t.Errorf("job page's note %q lacks %q", note, want)
	}
	screenshots(t, b, "job", `[data-testid="watermark-note"]`)

	// The alert's link: the source, the holder highlighted; coloured by
	// event-time lag from the page's own control.
	open("/jobs/"+tJob+"/vertices/"+tSource+"?highlight=partition:clicks:2", `[data-testid="colour-watermark"]`)
	b.Do(t, chromedp.Click(`[data-testid="colour-watermark"]`))
	waitFor(t, "the page coloured by event-time lag", 10*time.Second, func() bool {
		return strings.Contains(browsertest.Eval[string](t, b, `(document.querySelector('[data-testid="legend-note"]') || {}).textContent || ""`), "split's watermark")
	})
	if got := browsertest.Eval[string](t, b, `location.search`); !strings.Contains(got, "color=watermark") || !strings.Contains(got, "highlight=partition") {
		t.Errorf("the colour control leads to %q, want color=watermark with the highlight kept", got)
	}
	hl := browsertest.Eval[[]string](t, b, `[...document.querySelectorAll('[data-testid="pcell"].hl')].map(c => c.dataset.topic + "-" + c.dataset.partition + " " + c.dataset.l + " " + c.querySelector("i").textContent)`)
	if len(hl) != 1 || hl[0] != "clicks-2 2 1 m 20 s" {
		t.Errorf("highlighted cells %q, want clicks-2 at colour step 2 reading 1 m 20 s", hl)
	}
	row := browsertest.Eval[string](t, b, fmt.Sprintf(`document.querySelector('[data-subtask="%d"] [data-testid="row-watermark"]').textContent`, reader))
	if !strings.HasSuffix(row, "· lowest") {
		t.Errorf("the holder's row watermark %q", row)
	}
	screenshots(t, b, "source-by-watermark", `[data-testid="grid"]`)

	open("/jobs/"+tJob+"/vertices/"+tKeyed, `[data-testid="why-line"][data-kind="watermark"]`)
	if got := b.Text(t, `[data-testid="why-line"][data-kind="watermark"]`); !strings.Contains(got, "clicks-2") {
		t.Errorf("keyed why line %q", got)
	}
	screenshots(t, b, "keyed", `[data-testid="grid"]`)
}
