package web

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

func TestParseThemeAndTarget(t *testing.T) {
	for _, tc := range []struct {
		query, theme, target, err string
	}{
		{query: "", theme: "", target: ""},
		{query: "theme=light", theme: "light"},
		{query: "theme=+dark+", theme: "dark"},
		{query: "theme=", theme: ""},
		{query: "theme=Dark", err: `theme: "Dark" is not a theme; use light or dark (or leave it out for the viewer's preference)`},
		{query: "theme=auto", err: `theme: "auto" is not a theme; use light or dark (or leave it out for the viewer's preference)`},
		{query: "theme=light&theme=dark", err: "theme: given 2 times; give it once"},
		// The link target is an embedded page's.
		{query: "embed=1", target: "_top"},
		{query: "embed=1&target=_blank", target: "_blank"},
		{query: "embed=1&target=_parent&theme=light", theme: "light", target: "_parent"},
		{query: "embed=1&target=_self", err: `target: "_self" is not where an embedded page's links open; use _top, _blank, _parent`},
		{query: "embed=1&target=frame1", err: `target: "frame1" is not where an embedded page's links open; use _top, _blank, _parent`},
		{query: "target=nonsense", target: ""},
	} {
		v, err := url.ParseQuery(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		r := httptestRequest("/jobs/j/vertices/v?" + v.Encode())
		theme, target, err := pageOptions(r)
		switch {
		case tc.err != "":
			if err == nil || err.Error() != tc.err {
				t.Errorf("pageOptions(%q) = %q, %q, %v; want error %q", tc.query, theme, target, err, tc.err)
			} else if status, public := statusOf(err); status != 400 || !public {
				t.Errorf("pageOptions(%q): status %d public %t, want a 400 the page shows", tc.query, status, public)
			}
		case err != nil || theme != tc.theme || target != tc.target:
			t.Errorf("pageOptions(%q) = %q, %q, %v; want %q, %q", tc.query, theme, target, err, tc.theme, tc.target)
		}
	}
	// The planner's target is its target parallelism: an embedded
	// planner takes no link target.
	for _, path := range []string{"/plan?embed=1&target=6", "/jobs/j/vertices/v/plan?embed=1&target=8"} {
		if _, target, err := pageOptions(httptestRequest(path)); err != nil || target != "" {
			t.Errorf("pageOptions(%s) = %q, %v; want no link target", path, target, err)
		}
	}
}

// TestPageTheme: every page takes ?theme=, marks <html> with it and asks
// the browser for that scheme; without it the page follows the viewer's
// preference; a bad one is a 400 naming the parameter and its values.
func TestPageTheme(t *testing.T) {
	s := newTestServer(t)
	for _, path := range []string{"/", "/plan?topic=orders:12&parallelism=4", "/keys", "/no-such-page"} {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		_, doc := get(t, s, path)
		if th, ok := doc.Find("html").Attr("data-theme"); ok {
			t.Errorf("%s: data-theme %q without ?theme=", path, th)
		}
		if cs := doc.Find(`meta[name="color-scheme"]`).AttrOr("content", ""); cs != "light dark" {
			t.Errorf("%s: color-scheme %q without ?theme=, want light dark", path, cs)
		}
		for _, theme := range themes {
			_, doc := get(t, s, path+sep+"theme="+theme)
			if th := doc.Find("html").AttrOr("data-theme", ""); th != theme {
				t.Errorf("%s theme=%s: data-theme %q", path, theme, th)
			}
			if cs := doc.Find(`meta[name="color-scheme"]`).AttrOr("content", ""); cs != theme {
				t.Errorf("%s theme=%s: color-scheme %q", path, theme, cs)
			}
		}
		rec, doc := get(t, s, path+sep+"theme=sepia")
		if rec.Code != 400 {
			t.Errorf("%s theme=sepia: %d, want 400", path, rec.Code)
		}
		if msg := doc.Find(testid("error")).Text(); !strings.Contains(msg, `theme: "sepia" is not a theme; use light or dark`) {
			t.Errorf("%s theme=sepia: the error page reads %q", path, msg)
		}
		if _, ok := doc.Find("html").Attr("data-theme"); ok {
			t.Errorf("%s theme=sepia: the error page has a theme", path)
		}
	}
	rec, doc := get(t, s, "/keys?embed=1&target=_self")
	if msg := doc.Find(testid("error")).Text(); rec.Code != 400 || !strings.Contains(msg, `target: "_self" is not where an embedded page's links open; use _top, _blank, _parent`) {
		t.Errorf("embedded target=_self: %d, %q", rec.Code, msg)
	}
}

// TestThemeCSS: the dark palettes apply for the viewer's preference only
// without an explicit theme, and for data-theme="dark" the same.
func TestThemeCSS(t *testing.T) {
	css, err := os.ReadFile("../static/css/app.css")
	if err != nil {
		t.Fatal(err)
	}
	pref := regexp.MustCompile(`(?s)@media \(prefers-color-scheme: dark\) \{\n  (\S[^{]*) \{\n(.*?)\n  \}\n\}\n:root\[data-theme="dark"\] \{\n(.*?)\n\}`)
	blocks := pref.FindAllSubmatch(css, -1)
	if n := bytes.Count(css, []byte("prefers-color-scheme")); len(blocks) == 0 || n != len(blocks) {
		t.Fatalf("%d prefers-color-scheme rules, %d of them followed by their data-theme=dark copy", n, len(blocks))
	}
	for i, b := range blocks {
		if sel := string(b[1]); sel != ":root:not([data-theme])" {
			t.Errorf("dark block %d applies to %s, want :root:not([data-theme]) (the preference only without ?theme=)", i, sel)
		}
		var pref []string
		for l := range strings.Lines(string(b[2])) {
			pref = append(pref, strings.TrimSpace(l))
		}
		var explicit []string
		for l := range strings.Lines(string(b[3])) {
			explicit = append(explicit, strings.TrimSpace(l))
		}
		if !slices.Equal(pref, explicit) {
			t.Errorf("dark block %d: the preference's\n%s\nthe data-theme copy's\n%s", i, b[2], b[3])
		}
	}
	for _, want := range []string{`:root[data-theme="light"] { color-scheme: light; }`, `:root[data-theme="dark"] { color-scheme: dark; }`} {
		if !bytes.Contains(css, []byte(want)) {
			t.Errorf("app.css lacks %s", want)
		}
	}
}

// openTarget is where a link or form opens, as the browser decides: its
// own target, else the document's <base target>; "" for the frame itself.
func openTarget(doc *goquery.Document, el *goquery.Selection) string {
	if t, ok := el.Attr("target"); ok {
		return t
	}
	return doc.Find("head base[target]").First().AttrOr("target", "")
}

// TestInPageLinksStayInTheirFrame: under a <base target>, a link to a
// place on the page itself names its own frame.
func TestInPageLinksStayInTheirFrame(t *testing.T) {
	st, _ := sandboxStore(t, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	ts := newLiveServer(t, st, nil)
	for _, path := range []string{"/jobs/" + sbOrdersJob + "/vertices/" + sbOrdersSrc + "?highlight=subtask:3", "/plan?topic=orders:12&parallelism=4&target=6"} {
		doc := getDoc(t, ts.URL+path, 200)
		n := 0
		doc.Find(`a[href^="#"]`).Each(func(_ int, a *goquery.Selection) {
			n++
			if a.AttrOr("target", "") != "_self" {
				t.Errorf("%s: in-page link %q has target %q, want _self", path, a.AttrOr("href", ""), a.AttrOr("target", ""))
			}
		})
		if n == 0 {
			t.Errorf("%s: no in-page link to check", path)
		}
	}
}

func TestHeightOrigins(t *testing.T) {
	for _, tc := range []struct {
		ancestors []string
		want      string
	}{
		{[]string{"'self'"}, "self"},
		{[]string{"https://portal.example.com", "http://localhost:8080"}, "https://portal.example.com http://localhost:8080"},
		{[]string{"'self'", "https://portal.example.com"}, "self https://portal.example.com"},
		// A wildcard names no window to post to; 'none' frames nothing.
		{[]string{"https://*.example.com", "https://ops.example.org"}, "https://ops.example.org"},
		{[]string{"'none'"}, ""},
	} {
		if got := heightOrigins(tc.ancestors); got != tc.want {
			t.Errorf("heightOrigins(%q) = %q, want %q", tc.ancestors, got, tc.want)
		}
	}
	s, err := NewServer(Options{FrameAncestors: []string{"https://portal.example.com/", "https://*.example.org"}})
	if err != nil {
		t.Fatal(err)
	}
	if s.heightOrigins != "https://portal.example.com" {
		t.Errorf("the server posts heights to %q", s.heightOrigins)
	}
}

// TestEmbedPageRendered renders embedded vertex pages through the server:
// one head line, the parts in the order asked and nothing else, every link
// and form opening outside the frame, and the height script with its
// origins; a page of its own has none of it.
func TestEmbedPageRendered(t *testing.T) {
	st, _ := sandboxStore(t, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	ts := newLiveServer(t, st, nil)
	src := ts.URL + "/jobs/" + sbOrdersJob + "/vertices/" + sbOrdersSrc
	partsOf := func(doc *goquery.Document) []string {
		var out []string
		doc.Find(`[data-live-topic] > [data-part]`).Each(func(_ int, s *goquery.Selection) { out = append(out, s.AttrOr("data-part", "")) })
		return out
	}
	for _, tc := range []struct {
		query string
		parts []string
	}{
		{"", []string{"grid"}},
		{"&parts=why,grid", []string{"why", "grid"}},
		{"&parts=grid,why", []string{"grid", "why"}},
		{"&parts=figures,why,grid", []string{"figures", "why", "grid"}},
	} {
		doc := getDoc(t, src+"?embed=1"+tc.query, 200)
		if got := partsOf(doc); !slices.Equal(got, tc.parts) {
			t.Errorf("%s: parts %v, want %v", tc.query, got, tc.parts)
		}
		// Nothing but the head and the parts: no notes on this page.
		root := doc.Find(`[data-live-topic]`).Children()
		if root.Length() != 1+len(tc.parts) || !root.First().Is(testid("embed-head")) {
			var kids []string
			root.Each(func(_ int, s *goquery.Selection) { kids = append(kids, goquery.NodeName(s)+"."+s.AttrOr("class", "")) })
			t.Errorf("%s: the page holds %v, want the head and %d parts", tc.query, kids, len(tc.parts))
		}
		head := doc.Find(testid("embed-head"))
		if text := strings.Join(strings.Fields(head.Text()), " "); !strings.HasPrefix(text, "orders-enrichment · Source: Kafka Source · live ") || !strings.HasSuffix(text, "open in skewscope") {
			t.Errorf("%s: the head reads %q", tc.query, text)
		}
		if body := doc.Find("body"); body.AttrOr("data-part", "?") != strings.Join(tc.parts, ",") || body.AttrOr("data-height-origins", "") != "self" {
			t.Errorf("%s: body part %q, origins %q", tc.query, body.AttrOr("data-part", "?"), body.AttrOr("data-height-origins", ""))
		}
		if base := doc.Find("head base[target]"); base.Length() != 1 || base.AttrOr("target", "") != "_top" {
			t.Errorf("%s: %d <base target> (%q), want one, _top", tc.query, base.Length(), base.AttrOr("target", ""))
		}
		if doc.Find(`script[src*="/static/js/embed."]`).Length() != 1 {
			t.Errorf("%s: the embedded page does not load the height script", tc.query)
		}
		links := doc.Find("a, form")
		if links.Length() < 2 {
			t.Errorf("%s: %d links", tc.query, links.Length())
		}
		links.Each(func(_ int, a *goquery.Selection) {
			if got := openTarget(doc, a); got != "_top" {
				t.Errorf("%s: %s %q opens in %q, want _top", tc.query, goquery.NodeName(a), a.AttrOr("href", ""), got)
			}
			if strings.Contains(a.AttrOr("href", ""), "embed=1") {
				t.Errorf("%s: link %q opens another embedded page outside the frame", tc.query, a.AttrOr("href", ""))
			}
		})
	}
	// Another target. A new window has no opener: HTML implies noopener
	// for _blank, so no link may ask for one (rel="opener").
	doc := getDoc(t, src+"?embed=1&parts=why,grid&target=_blank", 200)
	doc.Find("a, form").Each(func(_ int, a *goquery.Selection) {
		if got := openTarget(doc, a); got != "_blank" || slices.Contains(strings.Fields(a.AttrOr("rel", "")), "opener") {
			t.Errorf("target=_blank: link %q opens in %q, rel %q", a.AttrOr("href", ""), got, a.AttrOr("rel", ""))
		}
	})
	if href := doc.Find(testid("full-link")).AttrOr("href", ""); strings.Contains(href, "target=") || strings.Contains(href, "embed=") || strings.Contains(href, "parts=") {
		t.Errorf("the full-page link %q keeps the embedding's parameters", href)
	}
	bad := getDoc(t, src+"?embed=1&target=top", 400)
	if msg := bad.Find(testid("error")).Text(); !strings.Contains(msg, `target: "top" is not where an embedded page's links open; use _top, _blank, _parent`) {
		t.Errorf("target=top: the error page reads %q", msg)
	}
	// A page of its own: no head, script or link target.
	own := getDoc(t, src+"?parts=why,grid", 200)
	if own.Find(testid("embed-head")).Length() != 0 || own.Find(`script[src*="/static/js/embed."]`).Length() != 0 || own.Find("base[target]").Length() != 0 {
		t.Error("a page of its own has the embedded head, the height script or a link target")
	}
	if own.Find(testid("context")).Length() != 1 || own.Find(testid("prediction")).Length() != 1 {
		t.Error("a page of its own lost its context or prediction")
	}
}

// TestEmbedHeadStale: an embedded page never hides that its data is stale
// or failing: the head says stale, and each error has its line.
func TestEmbedHeadStale(t *testing.T) {
	vv := live.VertexView{
		JobID: "j1", JobName: "orders", ID: "v1", Name: "Source", Parallelism: 1, Source: true, Kafka: true,
		Topics: []string{"orders"}, Color: "lag", Cluster: "prod",
		Flink:    live.Age{At: pagesAt, Seconds: 95, Stale: true, Err: "connection refused", State: live.StateFailing},
		KafkaAge: &live.Age{At: pagesAt, Seconds: 5, State: live.StateOK},
		Error:    "vertex metrics: 500",
		Subtasks: []live.SubtaskRow{{Subtask: 0, Lag: 10, Busy: 0.5, Partitions: []live.PartitionCell{{Topic: "orders", Partition: 0, Label: "o0", Lag: 10}}}},
	}
	p := newVertexPage(vertexPageInput{links: pageLinks{embed: true}, topic: "vertex:j1/v1:parts=grid:embed", parts: vertexParts{partGrid}}, vv)
	var buf bytes.Buffer
	if err := views.Vertex(views.Layout{Embed: true, Target: "_top"}, p).Render(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	head := doc.Find(testid("embed-head"))
	if !head.Find(testid("live-dot")).HasClass("stale") || head.Find("[data-live-state]").Text() != "stale" {
		t.Errorf("the head of a stale page reads %q", strings.Join(strings.Fields(head.Text()), " "))
	}
	if got := doc.Find(testid("backend-error")).Text(); got != "connection refused" {
		t.Errorf("backend error line %q", got)
	}
	if got := doc.Find(testid("vertex-error")).Text(); got != "Latest poll: vertex metrics: 500" {
		t.Errorf("poll error line %q", got)
	}
}

// httptestRequest is a GET of target.
func httptestRequest(target string) *http.Request { return httptest.NewRequest("GET", target, nil) }
