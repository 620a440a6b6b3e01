//go:build browser

package web

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/browsertest"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/sandbox"
)

// Phone is the viewport of the phone tests: an iPhone 12-15's CSS pixels.
const (
	phoneWidth  = 390
	phoneHeight = 844
)

// phoneOverflowJS measures the page at the current viewport. It returns
// the document's scroll width, the viewport's width, and the element whose
// right edge lies furthest past the viewport's (inside a scroll box too: a
// table that scrolls sideways inside its card hides its columns just as
// well), described with its path, or "" when every element fits.
const phoneOverflowJS = `(() => {
	const W = window.innerWidth;
	const describe = el => {
		const parts = [];
		for (let e = el; e && e !== document.body && parts.length < 5; e = e.parentElement) {
			let s = e.tagName.toLowerCase();
			if (e.id) s += "#" + e.id;
			const tid = e.getAttribute("data-testid");
			if (tid) s += "[data-testid=" + tid + "]";
			if (e.classList.length) s += "." + [...e.classList].join(".");
			parts.unshift(s);
		}
		return parts.join(" > ") + " " + JSON.stringify((el.textContent || "").trim().slice(0, 60));
	};
	// An element clipped away on purpose (a stacked table's column
	// names, kept for screen readers) is not shown, so it cannot overflow.
	const clipped = el => {
		for (let e = el; e && e !== document.body; e = e.parentElement) {
			const cs = getComputedStyle(e);
			if (cs.clip !== "auto" && cs.position === "absolute") return true;
		}
		return false;
	};
	let worst = null, right = W + 1;
	const consider = (el, r) => {
		if (r.width === 0 || r.height === 0 || r.right <= right) return;
		if (getComputedStyle(el).visibility === "hidden" || clipped(el)) return;
		right = r.right; worst = el;
	};
	for (const el of document.body.querySelectorAll("*")) consider(el, el.getBoundingClientRect());
	// Text that overflows its box: the box fits, its words do not.
	const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	const range = document.createRange();
	for (let n = walk.nextNode(); n; n = walk.nextNode()) {
		if (!n.textContent.trim() || !n.parentElement) continue;
		range.selectNodeContents(n);
		consider(n.parentElement, range.getBoundingClientRect());
	}
	// An element that pokes out of its card (a badge past a figure's
	// edge, over the next one) fits the screen and is still cut or
	// overlaps: the first one per card, from the innermost cards out.
	const outOfCard = [];
	for (const card of document.body.querySelectorAll(".card")) {
		const c = card.getBoundingClientRect();
		if (c.width === 0 || c.height === 0) continue;
		for (const el of card.querySelectorAll("*")) {
			const r = el.getBoundingClientRect();
			if (r.width === 0 || r.height === 0 || getComputedStyle(el).visibility === "hidden" || clipped(el)) continue;
			if (r.right > c.right + 1 || r.left < c.left - 1) {
				outOfCard.push(describe(el) + " reaches " + Math.round(r.left) + ".." + Math.round(r.right) + " in a card of " + Math.round(c.left) + ".." + Math.round(c.right));
				break;
			}
		}
	}
	return {scrollWidth: document.documentElement.scrollWidth, innerWidth: W,
		widest: worst ? describe(worst) : "", right: Math.round(right), outOfCard};
})()`

type phoneFit struct {
	ScrollWidth int      `json:"scrollWidth"`
	InnerWidth  int      `json:"innerWidth"`
	Widest      string   `json:"widest"`
	Right       float64  `json:"right"`
	OutOfCard   []string `json:"outOfCard"`
}

// checkPhoneFit fails the test when the page, at the phone's width, is
// wider than the screen or holds an element that reaches past it, and
// takes its screenshot in the light and the dark scheme.
func checkPhoneFit(t *testing.T, b *browsertest.Browser, name string) {
	t.Helper()
	for _, scheme := range []string{"light", "dark"} {
		b.Do(t, colorScheme(scheme))
		fit := browsertest.Eval[phoneFit](t, b, phoneOverflowJS)
		if fit.ScrollWidth > fit.InnerWidth {
			t.Errorf("%s (%s): the page is %d px wide in a %d px screen; widest: %s reaching %.0f px",
				name, scheme, fit.ScrollWidth, fit.InnerWidth, fit.Widest, fit.Right)
		} else if fit.Widest != "" {
			t.Errorf("%s (%s): %s reaches %.0f px in a %d px screen (off screen or in a sideways scroll)",
				name, scheme, fit.Widest, fit.Right, fit.InnerWidth)
		}
		for _, o := range fit.OutOfCard {
			t.Errorf("%s (%s): out of its card at %d px: %s", name, scheme, fit.InnerWidth, o)
		}
		b.Screenshot(t, name+"-390px-"+scheme)
	}
	b.Do(t, colorScheme("light"))
}

// phoneSandbox is the sandbox with its collectors polling and a dashboard
// serving it, with its websocket open to the browser and key samples
// allowed on its cluster.
type phoneSandbox struct {
	base string
	feed *sandboxFeed
	job  sandbox.JobInfo
}

func startPhoneSandbox(t *testing.T, b *browsertest.Browser) *phoneSandbox {
	t.Helper()
	feed := startSandboxFeed(t, sandbox.Options{Seed: 44}, nil)
	feed.pollInBackground(t)
	base := serveLive(t, Options{Live: feed.st, Sandbox: feed.sb, KafkaClusters: []kafka.Config{feed.kafka}})
	ps := &phoneSandbox{base: base, feed: feed, job: feed.job(t, "orders-enrichment")}
	// The keyed page links to a sample once a poll has seen the job and
	// its source; the deadline is a hang guard.
	for guard := time.Now().Add(2 * time.Minute); ; {
		b.Navigate(t, base+"/jobs/"+ps.job.ID+"/vertices/"+ps.job.KeyedVertexID)
		if browsertest.Eval[bool](t, b, `!!document.querySelector('[data-testid="sample-link"]')`) {
			break
		}
		if time.Now().After(guard) {
			t.Fatalf("the keyed page never linked to a sample")
		}
		time.Sleep(300 * time.Millisecond) // the next poll; nothing waits on it
	}
	b.ResetConsole() // the 404s while the first poll had not seen the job
	return ps
}

// TestBrowserPhonePages opens every page at a phone's 390 × 844, in the
// light and the dark scheme: none is wider than the screen, and nothing on
// it reaches past the screen's edge.
func TestBrowserPhonePages(t *testing.T) {
	b := browsertest.New(t, browsertest.WithTimeout(5*time.Minute))
	b.Do(t, chromedp.EmulateViewport(phoneWidth, phoneHeight))
	ps := startPhoneSandbox(t, b)
	base, job := ps.base, ps.job
	vertex := func(id string) string { return base + "/jobs/" + job.ID + "/vertices/" + id }

	// A finished sample of orders, from its form as the keyed page links it.
	b.Navigate(t, vertex(job.KeyedVertexID))
	sampleURL := browsertest.Eval[string](t, b, `document.querySelector('[data-testid="sample-link"]').href`)
	b.Navigate(t, sampleURL)
	browsertest.Eval[bool](t, b, `(document.querySelector('[data-testid="in-n"]').value = '2000', document.querySelector('input[name=target]').value = '6', true)`)
	b.Do(t, chromedp.Click(`[data-testid="sample-start"]`), chromedp.WaitVisible(`[data-testid="sample-bar"]`))
	for guard := time.Now().Add(2 * time.Minute); !browsertest.Eval[bool](t, b, `!!document.querySelector('[data-testid="sample-verdict"]')`); {
		if time.Now().After(guard) {
			t.Fatalf("the sample did not finish; its page shows %q", browsertest.Eval[string](t, b, `document.body.innerText.slice(0, 300)`))
		}
		time.Sleep(50 * time.Millisecond) // polls the page; nothing waits on it
	}
	samplePage := browsertest.Eval[string](t, b, `location.href`)

	b.Navigate(t, vertex(job.SourceVertexID))
	plannerURL := browsertest.Eval[string](t, b, `document.querySelector('[data-testid="open-planner"]').href`)

	keys := url.Values{"keys": {strings.Join([]string{
		"customer-42",
		"a6f3c9e1b2d4f7a8c0e5b3d1f9a7c5e3b1d9f7a5c3e1b9d7f5a3c1e9b7d5f3a1", // a hash as a key: one long word
		"Kunde-Müller-7", "order-2026-12-02T14:53:05.123456789Z-eu-west-1-00000042",
	}, "\n")}, "type": {"string"}, "parallelism": {"4"}, "target": {"6"}}
	single := url.Values{"keys": {"order-2026-12-02T14:53:05.123456789Z-eu-west-1-00000042-a6f3c9e1b2d4f7a8c0e5b3d1f9a7c5e3"}, "type": {"string"}, "parallelism": {"4"}, "target": {"6"}}
	sqlKey := url.Values{"keys": {`[42, "eu-west-1-a-rather-long-region-name"]`}, "type": {"sql"}, "columns": {"account_id BIGINT, region STRING"}, "parallelism": {"4"}, "target": {"6"}}
	sqlJob := ps.feed.job(t, "payments-by-user")

	pages := []struct{ name, url, wait string }{
		{"overview", base + "/", `[data-testid="jobs"]`},
		{"job", base + "/jobs/" + job.ID, `[data-testid="vertices"]`},
		{"source-vertex", vertex(job.SourceVertexID), `[data-testid="grid"]`},
		{"keyed-vertex", vertex(job.KeyedVertexID), `[data-testid="sample-link"]`},
		{"topic", base + "/kafka/sandbox/topics/orders", `[data-testid="group-head"]`},
		{"planner", plannerURL, `[data-testid="candidates"]`},
		{"keys-bulk", base + "/keys?" + keys.Encode(), `[data-testid="histogram"]`},
		{"keys-steps", base + "/keys?" + single.Encode(), `[data-testid="key-result"]`},
		{"keys-sql", base + "/keys?" + sqlKey.Encode(), `[data-testid="key-row"]`},
		{"sql-keyed-vertex", base + "/jobs/" + sqlJob.ID + "/vertices/" + sqlJob.KeyedVertexID, `[data-testid="sql-key"]`},
		{"samples", base + "/samples", `[data-testid="samples-row"]`},
		{"sample-form", sampleURL, `[data-testid="sample-form"]`},
		{"sample-result", samplePage, `[data-testid="sample-verdict"]`},
	}
	for _, pg := range pages {
		// The page is loaded again until it shows what it is checked for
		// (the topic page lists a group once the job has committed); the
		// deadline is a hang guard.
		sel, _ := json.Marshal(pg.wait)
		for guard := time.Now().Add(time.Minute); ; {
			if code := b.Navigate(t, pg.url); code != http.StatusOK {
				t.Fatalf("%s: GET %s = %d, want 200", pg.name, pg.url, code)
			}
			if browsertest.Eval[bool](t, b, `!!document.querySelector(`+string(sel)+`)`) {
				break
			}
			if time.Now().After(guard) {
				t.Fatalf("%s: %s never showed %s", pg.name, pg.url, pg.wait)
			}
			time.Sleep(300 * time.Millisecond) // the next poll; nothing waits on it
		}
		checkPhoneFit(t, b, pg.name)
	}
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
}

// TestBrowserPhoneReplacedJob opens a replaced job's pages at 390 px: the
// vertex page under its banner while Flink lists the job, and the page
// that names its successor once Flink has forgotten it.
func TestBrowserPhoneReplacedJob(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st, later := restoredStoreListing(t, at, false)
	base := serveLive(t, Options{Live: st, Now: func() time.Time { return at.Add(80 * time.Second) }})
	b := browsertest.New(t)
	b.Do(t, chromedp.EmulateViewport(phoneWidth, phoneHeight))
	b.Navigate(t, base+"/jobs/"+tJob+"/vertices/"+tSource)
	b.Do(t, chromedp.WaitVisible(`[data-testid="replaced-banner"]`))
	checkPhoneFit(t, b, "replaced-banner")
	st.UpdateFlink(later) // Flink's job store expired the old job
	b.Navigate(t, base+"/jobs/"+tJob+"/vertices/"+tKeyed)
	b.Do(t, chromedp.WaitVisible(`[data-testid="replaced-page"]`))
	checkPhoneFit(t, b, "replaced-page")
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
}

// unlabelledJS lists the form controls of the page that have no label:
// neither a <label> (by for or around it) nor aria-label(ledby).
const unlabelledJS = `[...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
	.filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby'))
	.map(el => el.outerHTML.slice(0, 120))`

// shownErrorsJS lists the field errors the page shows.
const shownErrorsJS = `[...document.querySelectorAll('[data-error-for], .field-error')]
	.filter(el => el.getClientRects().length > 0 && el.textContent.trim() !== '')
	.map(el => el.textContent.trim())`

// submitForError clicks the submit button and waits for the page that
// answers to show the error at errSel, whose text it returns. The old page
// is marked, so that its own elements are never taken for the answer's.
func submitForError(t *testing.T, b *browsertest.Browser, button, errSel string) string {
	t.Helper()
	btn, _ := json.Marshal(button)
	sel, _ := json.Marshal(errSel)
	browsertest.Eval[bool](t, b, `(document.body.dataset.submitted = "1", document.querySelector(`+string(btn)+`).click(), true)`)
	// The deadline is a hang guard; an evaluation may fail while the
	// next page replaces this one.
	for guard := time.Now().Add(30 * time.Second); ; {
		got, err := chromedp.Run(b.Ctx(), chromedp.Evaluate[string](`(() => {
			const el = document.readyState === "complete" && !document.body.dataset.submitted && document.querySelector(`+string(sel)+`);
			return el ? el.textContent : "";
		})()`))
		if err == nil && got != "" {
			return got
		}
		if time.Now().After(guard) {
			t.Fatalf("no %s after submitting the form (last error %v)", errSel, err)
		}
		time.Sleep(50 * time.Millisecond) // polls the page; nothing waits on it
	}
}

// TestBrowserPhoneSampleForm opens the sample form from a topic page at
// 390 px: it shows no error before it is submitted, and says what is wrong
// once it is submitted empty or with a bad limit. Every control of the
// form pages has a label.
func TestBrowserPhoneSampleForm(t *testing.T) {
	b := browsertest.New(t, browsertest.WithTimeout(4*time.Minute))
	b.Do(t, chromedp.EmulateViewport(phoneWidth, phoneHeight))
	ps := startPhoneSandbox(t, b)

	b.Navigate(t, ps.base+"/kafka/sandbox/topics/orders")
	b.Do(t, chromedp.Click(`[data-testid="sample-link"]`), chromedp.WaitVisible(`[data-testid="sample-form"]`))
	if errs := browsertest.Eval[[]string](t, b, shownErrorsJS); len(errs) > 0 {
		t.Errorf("the sample form opened from the topic page shows errors before anything is typed: %q", errs)
	}
	// Nor is any box marked invalid.
	if n := browsertest.Eval[[]string](t, b, `[...document.querySelectorAll('[aria-invalid="true"]')].map(el => el.name)`); len(n) > 0 {
		t.Errorf("controls marked invalid before submit: %v", n)
	}
	checkPhoneFit(t, b, "sample-form-fresh")

	// Submitted as opened (no parallelism): the parallelism is asked for.
	if got := submitForError(t, b, `[data-testid="sample-start"]`, `[data-testid="err-parallelism"]`); !strings.Contains(got, "required") {
		t.Errorf("submitted without a parallelism, the form says %q, want it required", got)
	}
	b.ResetConsole() // the 400 that answered the bad form
	checkPhoneFit(t, b, "sample-form-empty")

	// A bad limit is named under its box.
	browsertest.Eval[bool](t, b, `(document.querySelector('[data-testid="in-parallelism"]').value = '4',
		document.querySelector('input[name=maxRecords]').value = '0', true)`)
	if got := submitForError(t, b, `[data-testid="sample-start"]`, `[data-testid="err-maxRecords"]`); !strings.Contains(got, "whole number") {
		t.Errorf("submitted with maxRecords 0, the form says %q", got)
	}
	if errs := browsertest.Eval[[]string](t, b, shownErrorsJS); len(errs) != 1 {
		t.Errorf("after a bad limit the form shows errors %q, want the one", errs)
	}
	b.ResetConsole()
	checkPhoneFit(t, b, "sample-form-invalid")

	// Every control of every form page is labelled, and none opens on
	// an error.
	forms := map[string]string{
		"sample form": ps.base + "/kafka/sandbox/topics/orders/sample",
		"planner":     ps.base + "/plan",
		"keys":        ps.base + "/keys",
	}
	for name, u := range forms {
		b.Navigate(t, u)
		var missing []string
		raw := browsertest.Eval[json.RawMessage](t, b, unlabelledJS)
		if err := json.Unmarshal(raw, &missing); err != nil {
			t.Fatal(err)
		}
		if len(missing) > 0 {
			t.Errorf("%s: %d controls without a label: %q", name, len(missing), missing)
		}
		if errs := browsertest.Eval[[]string](t, b, shownErrorsJS); len(errs) > 0 {
			t.Errorf("%s opened without input shows errors %q", name, errs)
		}
	}
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
}

// TestBrowserPhoneLoss opens the pages of a group that lost records at
// 390 px: the topic page's group head says what it lost in full, and the
// source's cells keep their "lost" badge whole.
func TestBrowserPhoneLoss(t *testing.T) {
	at := time.Date(2026, 11, 30, 10, 40, 0, 0, time.UTC)
	now := func() time.Time { return at.Add(36 * time.Second) }
	st := live.New(live.Options{Now: now})
	for i := range 8 {
		lossPolls(st, at, i)
	}
	base := serveLive(t, Options{Live: st, Now: now})
	b := browsertest.New(t)
	b.Do(t, chromedp.EmulateViewport(phoneWidth, phoneHeight))
	b.Navigate(t, base+"/kafka/prod/topics/orders")
	b.Do(t, chromedp.WaitVisible(`[data-testid="group-lost"]`))
	if got := b.Text(t, `[data-testid="group-lost"]`); !strings.HasSuffix(got, "deleted unread") {
		t.Errorf("the group's loss reads %q at 390 px", got)
	}
	// The lost partition's reader says "lost" in full, inside the screen.
	r := inView(t, b, `[data-testid="group-reader"].lost`)
	if r.Left < 0 || r.Right > r.Width {
		t.Errorf("the lost reader's text spans x %.0f–%.0f in a %.0f px screen", r.Left, r.Right, r.Width)
	}
	checkPhoneFit(t, b, "loss-topic")
	b.Navigate(t, base+"/jobs/"+tJob+"/vertices/"+tSource)
	b.Do(t, chromedp.WaitVisible(`[data-testid="grid"]`))
	checkPhoneFit(t, b, "loss-source")
	b.NoConsoleErrors(t)
	b.NoDialogs(t)
}
