//go:build browser

package web

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/skewscope/skewscope/internal/browsertest"
)

// embedTiles are the tiles of the portal page TestBrowserEmbed serves: the
// iframe's id and the parts it asks for, in order.
var embedTiles = []struct {
	id    string
	parts []string
}{
	{"t-why-grid", []string{"why", "grid"}},
	{"t-figures", []string{"figures"}},
	{"t-figures-why", []string{"figures", "why"}},
}

// embedPortal is a portal page from another origin with the example's
// host script (examples/embed/host.js) and stylesheet: three tiles of the
// orders source, by its job's name.
func embedPortal() string {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>portal</title>` +
		`<link rel="stylesheet" href="host.css"><script type="module" src="host.js"></script></head><body><main>`)
	for i, tile := range embedTiles {
		class := "tile"
		if i == 0 {
			class += " wide"
		}
		fmt.Fprintf(&b, `<section class="%s"><iframe id="%s" title="tile %d" data-skewscope="/jobs/by-name/orders-enrichment/vertices/Source:%%20Kafka%%20Source?parts=%s"></iframe></section>`,
			class, tile.id, i, strings.Join(tile.parts, ","))
	}
	b.WriteString(`</main></body></html>`)
	return b.String()
}

// TestBrowserEmbed embeds three tiles of a vertex page in a portal served
// from another origin (allowed by frame-ancestors), with the example's
// host script, and checks that each iframe is sized from the height its
// page posts (that of its content), that ?theme=light holds inside while
// the viewer prefers the other scheme, that the head is one line, the
// parts come in the order asked, and every link and form opens outside the
// frame, as a click on one shows.
func TestBrowserEmbed(t *testing.T) {
	at := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	st, _ := sandboxStore(t, at)
	portal := embedPortal()
	examples := http.FileServer(http.Dir(filepath.Join("..", "examples", "embed")))
	host := browsertest.StartServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/portal.html" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte(portal))
			return
		}
		examples.ServeHTTP(w, r)
	}))
	base := serveLive(t, Options{Live: st, LiveInterval: 50 * time.Millisecond, Now: func() time.Time { return at.Add(20 * time.Second) },
		FrameAncestors: []string{host}, WebSocket: HubOptions{AllowedOrigins: []string{host}}})
	if host == base {
		t.Fatal("the portal and the dashboard share an origin")
	}
	b := browsertest.New(t, browsertest.WithTimeout(2*time.Minute))

	for _, theme := range []string{"light", "dark"} {
		// The viewer prefers the other scheme: the page follows ?theme=.
		other := map[string]string{"light": "dark", "dark": "light"}[theme]
		b.Do(t, colorScheme(other))
		if code := b.Navigate(t, host+"/portal.html?dashboard="+base+"&theme="+theme); code != 200 {
			t.Fatalf("portal = %d", code)
		}
		waitFor(t, "every tile to be sized from its posted height", 30*time.Second, func() bool {
			return browsertest.Eval[bool](t, b, `[...document.querySelectorAll("iframe")].every(f => f.dataset.postedHeight)`)
		})
		// A height is posted again when the content changes; let the
		// last ones arrive (the sparklines draw after the first).
		waitFor(t, "the tiles' heights to settle", 30*time.Second, func() bool {
			ok := true
			for _, tile := range embedTiles {
				h := browsertest.Eval[float64](t, b, `document.getElementById("`+tile.id+`").getBoundingClientRect().height`)
				content := evalInFrame[float64](t, b, tile.id, `doc => doc.body.getBoundingClientRect().height`)
				ok = ok && math.Abs(h-content) <= 2
			}
			return ok
		})
		for _, tile := range embedTiles {
			sel := `document.getElementById("` + tile.id + `")`
			frameH := browsertest.Eval[float64](t, b, sel+`.getBoundingClientRect().height`)
			posted := browsertest.Eval[string](t, b, sel+`.dataset.postedHeight`)
			part := browsertest.Eval[string](t, b, sel+`.dataset.postedPart`)
			if fmt.Sprint(math.Round(frameH)) != posted || frameH <= 150 || part != strings.Join(tile.parts, ",") {
				t.Errorf("%s %s: iframe %.1f px high, posted height %s for part %q; want the posted height (not the default 150 px) for %q",
					theme, tile.id, frameH, posted, part, strings.Join(tile.parts, ","))
			}
			in := evalInFrame[struct {
				Scroll, Body   float64
				Theme, Bg      string
				HeadH, LineH   float64
				Parts, Targets []string
				Links          int
			}](t, b, tile.id, `doc => {
				const head = doc.querySelector('[data-testid="embed-head"]');
				const win = doc.defaultView;
				const links = [...doc.querySelectorAll("a, form")];
				return {
					scroll: doc.documentElement.scrollHeight,
					body: doc.body.getBoundingClientRect().height,
					theme: doc.documentElement.dataset.theme || "",
					bg: win.getComputedStyle(doc.body).backgroundColor,
					headH: head ? head.getBoundingClientRect().height : 0,
					lineH: head ? parseFloat(win.getComputedStyle(head).lineHeight) : 0,
					parts: [...doc.querySelectorAll('[data-live-topic] > [data-part]')].map(e => e.dataset.part),
					// Where each opens, as the browser decides: its own target,
					// else the document's <base target>.
					targets: [...new Set(links.map(e => e.getAttribute("target") || doc.querySelector("head base[target]")?.getAttribute("target") || "(none)"))],
					links: links.length,
				};
			}`)
			if math.Abs(in.Scroll-frameH) > 2 || math.Abs(in.Body-frameH) > 2 {
				t.Errorf("%s %s: the iframe is %.1f px high, its content's scrollHeight %.1f, its body %.1f", theme, tile.id, frameH, in.Scroll, in.Body)
			}
			wantBg := map[string]string{"light": "rgb(246, 246, 243)", "dark": "rgb(21, 23, 26)"}[theme]
			if in.Theme != theme || in.Bg != wantBg {
				t.Errorf("%s %s (viewer prefers %s): data-theme %q, background %s; want %s", theme, tile.id, other, in.Theme, in.Bg, wantBg)
			}
			if in.HeadH <= 0 || in.HeadH > 1.5*in.LineH {
				t.Errorf("%s %s: the head is %.1f px high, its line %.1f px: not one line", theme, tile.id, in.HeadH, in.LineH)
			}
			if !slices.Equal(in.Parts, tile.parts) {
				t.Errorf("%s %s: parts %v, want %v", theme, tile.id, in.Parts, tile.parts)
			}
			if in.Links == 0 || !slices.Equal(in.Targets, []string{"_top"}) {
				t.Errorf("%s %s: %d links and forms with targets %v, want all _top", theme, tile.id, in.Links, in.Targets)
			}
		}
		b.Screenshot(t, "embed-portal-"+theme)
	}
	// At a phone's width the head stays one line, its state whole.
	b.Do(t, chromedp.EmulateViewport(390, 844))
	waitFor(t, "the narrow tiles' heights to settle", 30*time.Second, func() bool {
		h := browsertest.Eval[float64](t, b, `document.getElementById("`+embedTiles[1].id+`").getBoundingClientRect().height`)
		return math.Abs(h-evalInFrame[float64](t, b, embedTiles[1].id, `doc => doc.body.getBoundingClientRect().height`)) <= 2
	})
	for _, tile := range embedTiles {
		head := evalInFrame[struct{ HeadH, LineH, StateW, StateFull float64 }](t, b, tile.id, `doc => {
			const head = doc.querySelector('[data-testid="embed-head"]'), state = head.querySelector(".state");
			return {headH: head.getBoundingClientRect().height, lineH: parseFloat(doc.defaultView.getComputedStyle(head).lineHeight),
				stateW: state.getBoundingClientRect().width, stateFull: state.scrollWidth};
		}`)
		if head.HeadH > 1.5*head.LineH || head.StateW+1 < head.StateFull {
			t.Errorf("390 px, %s: the head is %.1f px high (line %.1f), its state %.1f of %.1f px wide", tile.id, head.HeadH, head.LineH, head.StateW, head.StateFull)
		}
	}
	b.Screenshot(t, "embed-portal-390px")
	b.Do(t, chromedp.EmulateViewport(browsertest.WindowWidth, browsertest.WindowHeight))
	// A click on a tile's link opens its page in the portal's window, not
	// in the tile: the page of its own, with the portal's theme.
	b.NoConsoleErrors(t)
	type point struct{ X, Y float64 }
	frame := browsertest.Eval[point](t, b, `(() => { const r = document.getElementById("`+embedTiles[0].id+`").getBoundingClientRect(); return {x: r.left, y: r.top}; })()`)
	link := evalInFrame[point](t, b, embedTiles[0].id, `doc => { const r = doc.querySelector('[data-testid="full-link"]').getBoundingClientRect(); return {x: r.left + r.width / 2, y: r.top + r.height / 2}; }`)
	b.Do(t, chromedp.MouseClickXY(frame.X+link.X, frame.Y+link.Y))
	waitFor(t, "the portal's window to open the vertex page", 20*time.Second, func() bool {
		return strings.HasPrefix(browsertest.Eval[string](t, b, `location.href`), base+"/jobs/"+sbOrdersJob+"/vertices/"+sbOrdersSrc)
	})
	if href := browsertest.Eval[string](t, b, `location.href`); strings.Contains(href, "embed=") || strings.Contains(href, "parts=") {
		t.Errorf("the tile's link opened %s, want the page of its own", href)
	}
	if !browsertest.Eval[bool](t, b, `!!document.querySelector('[data-testid="nav"]') && !document.querySelector('[data-testid="embed-head"]')`) {
		t.Error("the page the tile's link opened is not the page of its own")
	}
	if th := browsertest.Eval[string](t, b, `document.documentElement.dataset.theme || ""`); th != "dark" {
		t.Errorf("the page the tile's link opened has theme %q, want the portal's dark", th)
	}
	b.Do(t, colorScheme("light"))
	b.NoDialogs(t)
}

// evalInFrame calls fn with the document of the iframe whose id is given,
// in that document's own context (the portal's script cannot reach into a
// frame of another origin; the browser's protocol can, for one of the same
// site), and decodes its JSON value into a T.
func evalInFrame[T any](t *testing.T, b *browsertest.Browser, id, fn string) T {
	t.Helper()
	var out T
	b.Do(t, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		frame, err := chromedp.Evaluate[*runtime.RemoteObject](`document.getElementById("`+id+`")`)(ctx, tg)
		if err != nil {
			return err
		}
		pierce := true
		desc, err := cdp.Call(ctx, tg, dom.DescribeNode, dom.DescribeNodeParams{ObjectID: frame.ObjectID, Pierce: &pierce})
		if err != nil {
			return err
		}
		if desc.Node == nil || desc.Node.ContentDocument == nil {
			return fmt.Errorf("iframe %s has no document the browser shows", id)
		}
		doc, err := cdp.Call(ctx, tg, dom.ResolveNode, dom.ResolveNodeParams{BackendNodeID: desc.Node.ContentDocument.BackendNodeID})
		if err != nil {
			return err
		}
		byValue := true
		res, err := cdp.Call(ctx, tg, runtime.CallFunctionOn, runtime.CallFunctionOnParams{
			FunctionDeclaration: "function() { return (" + fn + ")(this); }", ObjectID: doc.Object.ObjectID, ReturnByValue: &byValue})
		if err != nil {
			return err
		}
		if res.ExceptionDetails != nil {
			return fmt.Errorf("in iframe %s: %s", id, res.ExceptionDetails.Text)
		}
		return json.Unmarshal([]byte(res.Result.Value), &out)
	}))
	return out
}
