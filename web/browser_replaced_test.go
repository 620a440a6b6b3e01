//go:build browser

package web

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/skewscope/skewscope/internal/browsertest"
)

// colorScheme emulates prefers-color-scheme.
func colorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return err
	})
}

// screenshots takes the page as it is, in the dark scheme, and at a phone's
// 390 px width, then restores the light desktop view.
func screenshots(t *testing.T, b *browsertest.Browser, name, selector string) {
	t.Helper()
	b.Screenshot(t, name+"-light")
	b.Do(t, colorScheme("dark"))
	b.Screenshot(t, name+"-dark")
	b.Do(t, colorScheme("light"), chromedp.EmulateViewport(390, 844))
	// The text wraps inside its box at phone width, ids included.
	sel, _ := json.Marshal(selector)
	if over := browsertest.Eval[bool](t, b, `(() => {
		const el = document.querySelector(`+string(sel)+`);
		return !el || el.scrollWidth > el.clientWidth + 1;
	})()`); over {
		t.Errorf("%s: %s overflows at 390 px", name, selector)
	}
	b.Screenshot(t, name+"-390px")
	b.Do(t, chromedp.EmulateViewport(browsertest.WindowWidth, browsertest.WindowHeight))
}

// serveLive serves a ready Server built from opts on loopback for the
// browser, its websocket open to the served origin and its live pushes
// running until the test ends, and returns its URL.
func serveLive(t *testing.T, opts Options) string {
	t.Helper()
	_, base := serveLiveServer(t, opts)
	return base
}

// TestBrowserReplacedJob shows a replaced job's banner while Flink lists it
// (without vertices, as the collector reports an ended job: the page shows
// what Flink last reported while it ran), and the page that names its
// successor once Flink has forgotten it.
func TestBrowserReplacedJob(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st, later := restoredStoreListing(t, at, false)
	base := serveLive(t, Options{Live: st, Now: func() time.Time { return at.Add(80 * time.Second) }})

	b := browsertest.New(t)
	// The overview folds the replaced job under its successor's row.
	if code := b.Navigate(t, base+"/"); code != 200 {
		t.Fatalf("overview = %d", code)
	}
	b.Do(t, chromedp.WaitVisible(`[data-testid="earlier-runs"] summary`))
	b.Do(t, chromedp.Click(`[data-testid="earlier-runs"] summary`))
	b.Do(t, chromedp.WaitVisible(`[data-testid="earlier-run"]`))
	if txt := b.Text(t, `[data-testid="earlier-run"]`); !strings.Contains(txt, tJob) || !strings.Contains(txt, "replaced by "+shortID(tNewJob)) {
		t.Errorf("overview's replaced job reads %q", txt)
	}
	screenshots(t, b, "overview", `[data-testid="earlier-runs"]`)
	if code := b.Navigate(t, base+"/jobs/"+tJob+"/vertices/"+tSource); code != 200 {
		t.Fatalf("replaced vertex page = %d", code)
	}
	b.Do(t, chromedp.WaitVisible(`[data-testid="replaced-banner"]`))
	if txt := b.Text(t, `[data-testid="replaced-banner"]`); !strings.Contains(txt, "Replaced by "+tNewJob+" (orders <enrichment>) at 2026-11-30 12:00:20 UTC") {
		t.Errorf("banner reads %q", txt)
	}
	if txt := b.Text(t, `[data-testid="ended-note"]`); !strings.Contains(txt, "Job FINISHED") || !strings.Contains(txt, "last reported") {
		t.Errorf("ended note reads %q", txt)
	}
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll('[data-testid="pcell"]').length`); n != 18 {
		t.Errorf("the replaced source shows %d partition cells, want the 18 Flink last reported", n)
	}
	screenshots(t, b, "banner", `[data-testid="replaced-banner"]`)
	// The banner's link opens the successor's vertex of the same name.
	// (The old page is a vertex page too, with a planner link: wait for
	// the page without the banner.)
	b.Do(t, chromedp.Click(`[data-testid="replaced-link"]`), chromedp.WaitVisible(`body:not(:has([data-testid="replaced-banner"])) [data-testid="vertex"]`))
	if loc := browsertest.Eval[string](t, b, `location.pathname`); loc != "/jobs/"+tNewJob+"/vertices/"+tNewSource {
		t.Errorf("the banner's link led to %s", loc)
	}
	// Its planner link models the same restore: "now" is the layout 4 → 6.
	b.Do(t, chromedp.Click(`[data-testid="open-planner"]`), chromedp.WaitVisible(`[data-testid="grid-now"]`))
	if txt := b.Text(t, `[data-testid="grid-now"] h2`); !strings.Contains(txt, "restored: 4 → 6") {
		t.Errorf("planner's now grid is titled %q, want the restore 4 → 6", txt)
	}
	if v := browsertest.Eval[string](t, b, `document.querySelector('[data-testid="in-history"]').value`); v != "4,6" {
		t.Errorf("planner's history field holds %q, want 4,6", v)
	}
	screenshots(t, b, "planner-history", `[data-testid="grid-now"] h2`)

	st.UpdateFlink(later) // Flink's job store expired the old job
	if code := b.Navigate(t, base+"/jobs/"+tJob+"/vertices/"+tKeyed); code != 200 {
		t.Fatalf("forgotten vertex page = %d, want 200", code)
	}
	b.Do(t, chromedp.WaitVisible(`[data-testid="replaced-page"]`))
	if txt := b.Text(t, `[data-testid="replaced-page"]`); !strings.Contains(txt, "Enrich <b>Orders</b>") {
		t.Errorf("forgotten page reads %q, want the vertex name as text", txt)
	}
	screenshots(t, b, "forgotten", `[data-testid="replaced-page"]`)
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
}

// TestBrowserWithheldSource shows a source whose reader metrics Flink
// withheld: the note with its cause and setting, over the prediction.
func TestBrowserWithheldSource(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := liveStore(t, at)
	st.UpdateFlink(withheldJob(at.Add(20 * time.Second)))
	base := serveLive(t, Options{Live: st, Now: func() time.Time { return at.Add(30 * time.Second) }})
	b := browsertest.New(t)
	if code := b.Navigate(t, base+"/jobs/"+tJob+"/vertices/"+tSource); code != 200 {
		t.Fatalf("withheld source page = %d", code)
	}
	b.Do(t, chromedp.WaitVisible(`[data-testid="withheld-note"]`))
	if txt := b.Text(t, `[data-testid="withheld-note"]`); !strings.Contains(txt, "pekko.framesize") {
		t.Errorf("withheld note reads %q", txt)
	}
	if n := browsertest.Eval[int](t, b, `document.querySelectorAll('[data-testid="pcell"]').length`); n != 18 {
		t.Errorf("%d partition cells, want the prediction's 18", n)
	}
	screenshots(t, b, "withheld", `[data-testid="withheld-note"]`)
	// A link from before a rescale highlights a subtask the page lacks.
	if code := b.Navigate(t, base+"/jobs/"+tJob+"/vertices/"+tSource+"?highlight=subtask:9"); code != 200 {
		t.Fatalf("stale highlight page = %d", code)
	}
	b.Do(t, chromedp.WaitVisible(`[data-testid="highlight-note"]`))
	if txt := b.Text(t, `[data-testid="highlight-note"]`); !strings.Contains(txt, "Subtask 9") {
		t.Errorf("highlight note reads %q", txt)
	}
	screenshots(t, b, "highlight-note", `[data-testid="highlight-note"]`)
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
}
