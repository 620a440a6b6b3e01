//go:build browser

package web

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skewscope/skewscope/internal/browsertest"
	"github.com/skewscope/skewscope/live"
)

// firstScreenParts are what an engineer woken by an alert must see
// without scrolling: which job, which subtask, how far behind, what was
// lost, why, and what to do.
var firstScreenParts = []struct{ what, selector string }{
	{"the job's name", `[data-testid="context"] a strong`},
	{"the subtask", `[data-testid="brief-subtask"]`},
	{"its lag", `[data-testid="brief-lag"]`},
	{"its lag time", `[data-testid="brief-lagtime"]`},
	{"its loss", `[data-testid="brief-lost"]`},
	{"its cause", `[data-testid="brief-why"]`},
	{"the action", `[data-testid="brief-plan"]`},
}

// TestBrowserAlertFirstScreen opens the shipped alert rules' links (records
// lost, lag skew, lag time: by name, as examples/prometheus/alerts.yml
// writes them) on a source that loses records, at a phone's and a
// desktop's size, light and dark, and measures, by element positions, that
// the first viewport holds the job, the subtask, its lag, its loss, its
// cause and the action, with the grid next and the figures below it.
func TestBrowserAlertFirstScreen(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 40, 0, 0, time.UTC)
	now := at.Add(36 * time.Second)
	st := live.New(live.Options{Now: func() time.Time { return now }})
	for i := range 8 {
		lossPolls(st, at, i)
	}
	base := serveLive(t, Options{Live: st, Now: func() time.Time { return now }})
	byName := base + "/jobs/by-name/" + url.PathEscape("orders <enrichment>") + "/vertices/" + url.PathEscape("Source: Kafka Source") + "?endpoint=jm&highlight="
	links := []struct{ alert, url string }{
		{"FlinkSourceRecordsLost", byName + "partition:orders:0"},
		{"FlinkSourceSubtaskLagSkew", byName + "subtask:3"},
		{"FlinkSourceSubtaskLagging", byName + "subtask:3"},
	}
	b := browsertest.New(t)
	for _, size := range []struct{ w, h int64 }{{390, 844}, {1400, 900}} {
		for _, scheme := range []string{"light", "dark"} {
			b.Do(t, chromedp.EmulateViewport(size.w, size.h), colorScheme(scheme))
			for i, l := range links {
				if i > 0 && size.w == 1400 {
					continue // the same page as the phone's; once at desktop size is enough
				}
				if code := b.Navigate(t, l.url); code != 200 {
					t.Fatalf("%s link %s = %d", l.alert, l.url, code)
				}
				b.Do(t, chromedp.WaitVisible(`[data-testid="brief"]`))
				where := fmt.Sprintf("%s at %d×%d %s", l.alert, size.w, size.h, scheme)
				if y := browsertest.Eval[float64](t, b, `scrollY`); y != 0 {
					t.Errorf("%s: the page scrolled to %v px; the brief is the first screen", where, y)
				}
				var at []string
				for _, p := range firstScreenParts {
					r := inView(t, b, p.selector)
					at = append(at, fmt.Sprintf("%s y %.0f–%.0f", p.what, r.Top, r.Bottom))
					if r.Top < 0 || r.Bottom > r.Height+0.5 || r.Left < 0 || r.Right > r.Width+0.5 || r.Bottom-r.Top < 1 {
						t.Errorf("%s: %s (%s) is at x %.0f–%.0f, y %.0f–%.0f, want it inside the first %v×%v screen",
							where, p.what, p.selector, r.Left, r.Right, r.Top, r.Bottom, r.Width, r.Height)
					}
				}
				t.Logf("%s: %s; the grid y %.0f", where, strings.Join(at, ", "), inView(t, b, `[data-testid="grid"]`).Top)
				brief := b.Text(t, `[data-testid="brief"]`)
				for _, want := range []string{"Subtask 3", "losing records", "≈ 2,400 deleted unread", "at 10:40:30 UTC", "Why:"} {
					if !strings.Contains(brief, want) {
						t.Errorf("%s: the brief lacks %q:\n%s", where, want, brief)
					}
				}
				if lvl := browsertest.Eval[string](t, b, `document.querySelector('[data-testid="brief"]').dataset.level`); lvl != "3" {
					t.Errorf("%s: the brief's colour step is %q, want 3 (losing records)", where, lvl)
				}
				// The grid follows the brief; the figures, the why panel and
				// the lineage come after the grid.
				grid := inView(t, b, `[data-testid="grid"]`)
				for _, below := range []string{`[data-testid="figures"]`, `[data-testid="why"]`, `[data-testid="lineage"]`} {
					if r := inView(t, b, below); r.Top < grid.Top {
						t.Errorf("%s: %s starts at y %.0f, above the grid (y %.0f)", where, below, r.Top, grid.Top)
					}
				}
				// The records-lost figure is coloured as the cells are.
				if lvl := browsertest.Eval[string](t, b, `[...document.querySelectorAll('[data-testid="figure"]')].find(f => f.textContent.includes("deleted unread")).dataset.level`); lvl != "3" {
					t.Errorf("%s: the records-lost figure's colour step is %q, want 3", where, lvl)
				}
				if i == 0 {
					b.ViewportScreenshot(t, fmt.Sprintf("first-screen-%dpx-%s", size.w, scheme))
				}
			}
		}
	}
	b.NoConsoleErrors(t)
}

// TestBrowserOverviewTriage: the overview's first job row is the job in
// the worst state the JSON API reports, its concern in words and colour,
// linking to the subtask it is about; the replaced run is folded under
// the run that replaced it.
func TestBrowserOverviewTriage(t *testing.T) {
	base, _ := glanceServer(t)
	var ov struct {
		Jobs []struct {
			ID         string `json:"id"`
			Concern    string `json:"concern"`
			ReplacedBy *struct {
				ID string `json:"id"`
			} `json:"replacedBy"`
			Focus *struct {
				VertexID string `json:"vertexId"`
				Subtask  int    `json:"subtask"`
			} `json:"focus"`
		} `json:"jobs"`
	}
	getJSONURL(t, base+"/api/v1/overview", &ov)
	rank := map[string]int{"ok": 0, "skewed": 1, "lagging": 2, "growing": 3, "retention": 4, "losing": 5}
	worst := ov.Jobs[0]
	for _, j := range ov.Jobs {
		if j.ReplacedBy == nil && rank[j.Concern] > rank[worst.Concern] {
			t.Errorf("the API lists %s (%s) after %s (%s)", j.ID, j.Concern, worst.ID, worst.Concern)
		}
	}
	b := browsertest.New(t)
	for _, size := range []struct{ w, h int64 }{{390, 844}, {1400, 900}} {
		for _, scheme := range []string{"light", "dark"} {
			b.Do(t, chromedp.EmulateViewport(size.w, size.h), colorScheme(scheme))
			b.Navigate(t, base+"/")
			b.Do(t, chromedp.WaitVisible(`[data-testid="job-row"]`))
			first := browsertest.Eval[string](t, b, `document.querySelector('[data-testid="job-row"]').dataset.job`)
			if first != worst.ID {
				t.Errorf("%d px %s: the first job row is %s, want %s (%s)", size.w, scheme, first, worst.ID, worst.Concern)
			}
			r := inView(t, b, `[data-testid="job-row"] [data-testid="job-concern"]`)
			if r.Top < 0 || r.Bottom > r.Height {
				t.Errorf("%d px %s: the worst job's concern is at y %.0f–%.0f, off the first screen", size.w, scheme, r.Top, r.Bottom)
			}
			if worst.Focus != nil {
				href := browsertest.Eval[string](t, b, `document.querySelector('[data-testid="job-row"] [data-testid="job-focus"]').getAttribute("href")`)
				if !strings.Contains(href, "/vertices/"+worst.Focus.VertexID) || !strings.Contains(href, fmt.Sprintf("highlight=subtask:%d", worst.Focus.Subtask)) {
					t.Errorf("the worst job's focus link %q, want its vertex %s and subtask %d", href, worst.Focus.VertexID, worst.Focus.Subtask)
				}
			}
			if n := browsertest.Eval[float64](t, b, `document.querySelectorAll('[data-testid="earlier-run"]').length`); n < 1 {
				t.Errorf("%d px %s: no earlier run is folded under its current run", size.w, scheme)
			}
			b.ViewportScreenshot(t, fmt.Sprintf("overview-%dpx-%s", size.w, scheme))
		}
	}
	b.NoConsoleErrors(t)
}
