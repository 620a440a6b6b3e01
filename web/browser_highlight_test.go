//go:build browser

package web

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skewscope/skewscope/internal/browsertest"
)

// TestBrowserStaleHighlight shows a source's page opened from a link made
// before a rescale: its highlighted subtask is gone, and the note under the
// status bar says so.
func TestBrowserStaleHighlight(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	s, err := NewServer(Options{Live: liveStore(t, at), Now: func() time.Time { return at.Add(80 * time.Second) }})
	if err != nil {
		t.Fatal(err)
	}
	s.SetReady(true)
	base := browsertest.StartServer(t, http.HandlerFunc(s.ServeHTTP))
	b := browsertest.New(t)
	if code := b.Navigate(t, base+"/jobs/"+tJob+"/vertices/"+tSource+"?highlight=subtask:7"); code != 200 {
		t.Fatalf("vertex page = %d", code)
	}
	b.Do(t, chromedp.WaitVisible(`[data-testid="highlight-note"]`))
	if got := b.Text(t, `[data-testid="highlight-note"]`); !strings.HasPrefix(got, "Subtask 7 is not one of this vertex's 4 subtasks (0–3)") {
		t.Errorf("highlight note %q", got)
	}
	screenshots(t, b, "stale-highlight", `[data-testid="highlight-note"]`)
}
