package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/skewscope/skewscope/assign"
)

// get fetches target from s and parses the HTML.
func get(t *testing.T, s http.Handler, target string) (*httptest.ResponseRecorder, *goquery.Document) {
	t.Helper()
	req := httptest.NewRequest("GET", target, nil)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatalf("GET %s: not HTML: %v", target, err)
	}
	return rec, doc
}

func testid(id string) string { return `[data-testid="` + id + `"]` }

func TestPlannerGridMatchesFlink(t *testing.T) {
	s := newTestServer(t)
	topics := []assign.Topic{{Name: "orders", Partitions: 12}, {Name: "payments", Partitions: 6}}
	rec, doc := get(t, s, "/plan?topic=orders:12&topic=payments:6&parallelism=4&target=6")
	if rec.Code != 200 {
		t.Fatalf("GET /plan = %d", rec.Code)
	}
	for _, side := range []struct {
		id string
		p  int
	}{{"grid-now", 4}, {"grid-target", 6}} {
		rows := doc.Find(testid(side.id) + " tbody tr")
		if rows.Length() != side.p {
			t.Fatalf("%s has %d rows, want %d", side.id, rows.Length(), side.p)
		}
		want, _ := assign.FreshAssignment(topics, side.p)
		rows.Each(func(i int, row *goquery.Selection) {
			var got []string
			row.Find("td.parts i").Each(func(_ int, c *goquery.Selection) {
				title, _ := c.Attr("title")
				got = append(got, strings.SplitN(title, " ·", 2)[0])
			})
			var exp []string
			for _, tp := range want.Subtasks[i] {
				exp = append(exp, tp.Topic+"-"+strconv.Itoa(int(tp.Partition)))
			}
			if strings.Join(got, " ") != strings.Join(exp, " ") {
				t.Errorf("%s subtask %d shows %v, want %v (KafkaSourceEnumerator.getSplitOwner)", side.id, i, got, exp)
			}
		})
	}
	// The headline figures say where they come from.
	doc.Find(testid("figures") + " .figure").Each(func(_ int, f *goquery.Selection) {
		if f.Find(".kind").Length() != 1 {
			t.Errorf("figure %q has no computed/given/estimated label", f.Find(".fig-label").Text())
		}
	})
	if n := doc.Find(testid("candidates") + " tbody tr").Length(); n == 0 {
		t.Error("no candidate parallelisms listed")
	}
	// Every candidate links to the planner with that target.
	doc.Find(testid("candidates") + " tbody a").Each(func(_ int, a *goquery.Selection) {
		href, _ := a.Attr("href")
		u, err := url.Parse(href)
		if err != nil || u.Query().Get("target") != strings.TrimSpace(a.Text()) {
			t.Errorf("candidate %s links to %s, want target=%s", a.Text(), href, a.Text())
		}
	})
}

func TestPlannerWorkedExample(t *testing.T) {
	// Four topics of 3 partitions at n = 8, each from its own start index →
	// 0,0,0,2,2,4,2,2: skew 75 %, max/mean 2.67, 3 idle.
	s := newTestServer(t)
	_, doc := get(t, s, "/plan?topic=orders:3&topic=payments:3&topic=clicks:3&topic=user-events:3&parallelism=8&target=8")
	if got := strings.Join(strings.Fields(doc.Find(testid("fig-skew")+" .then").Text()), " "); got != "75%" {
		t.Errorf("target skew = %q, want 75%%", got)
	}
	if got := doc.Find(testid("fig-maxmean") + " .then").Text(); got != "2.67" {
		t.Errorf("target max/mean = %q, want 2.67", got)
	}
	if got := doc.Find(testid("fig-idle") + " .then").Text(); got != "3" {
		t.Errorf("target idle = %q, want 3", got)
	}
	why := doc.Find(testid("why")).Text()
	if !strings.Contains(why, "start at subtask") {
		t.Errorf("why-section does not explain the shared start index:\n%s", why)
	}
}

// TestPlannerRestoreComparisonSize: a fresh-start plan of up to
// compareRestoreMax partitions also says what a restore would move; a larger
// one asks for the restore mode instead, and the restore mode shows it.
func TestPlannerRestoreComparisonSize(t *testing.T) {
	s := newTestServer(t)
	for _, tc := range []struct {
		query   string
		compare bool
	}{
		{"topic=orders:1000&topic=payments:1000&parallelism=4&target=6", true},
		{"topic=orders:1000&topic=payments:1001&parallelism=4&target=6", false},
		{"topic=orders:1000&topic=payments:1001&parallelism=4&target=6&mode=restore", true},
	} {
		_, doc := get(t, s, "/plan?"+tc.query)
		restore := doc.Find(testid("moves-restore")).Text()
		ask := doc.Find(testid("moves-restore-on-request")).Text()
		if tc.compare {
			if !strings.Contains(restore, "when restored from a savepoint") || ask != "" {
				t.Errorf("GET /plan?%s: restore moves %q, request %q; want the restore moves counted", tc.query, restore, ask)
			}
			continue
		}
		if restore != "" || ask != "What a restore from a savepoint would move: choose Restore from savepoint" {
			t.Errorf("GET /plan?%s: restore moves %q, request %q; want the line asking for the restore mode", tc.query, restore, ask)
		}
	}
}

func TestPlannerBadInputInline(t *testing.T) {
	s := newTestServer(t)
	for _, tc := range []struct{ query, field, mention string }{
		{"topic=orders:12&parallelism=0&target=6", "parallelism", "1..32768"},
		{"topic=orders:12&parallelism=-4&target=6", "parallelism", "1..32768"},
		{"topic=orders:12&parallelism=4&target=6&maxParallelism=40000", "maxParallelism", "1..32768"},
		{"topic=orders:12&parallelism=200&target=6&maxParallelism=128", "maxParallelism", "below the current parallelism"},
		{"topic=orders:12&parallelism=4&target=6&rates=orders,x,1", "rates", "line 1"},
		{"topic=orders:12&parallelism=4&target=6&rates=" + url.QueryEscape("orders,99,1"), "rates", "partitions (0..11)"},
		{"topics=orders&parallelism=4&target=6", "topics", "NAME:PARTITIONS"},
		{"topic=orders:12&parallelism=4&target=6&state=lots", "state", "unknown unit"},
		{"topic=orders:12&parallelism=4&target=6&state=-3GB", "state", "not a size"},
		{"topic=orders:12&parallelism=4&target=6&state=1GB,2GB", "state", "2 sizes for 4"},
		{"topic=orders:12&parallelism=4&target=6&strategy=kafka-range&mode=restore", "mode", "KafkaSource only"},
	} {
		rec, doc := get(t, s, "/plan?"+tc.query)
		if rec.Code != 400 {
			t.Errorf("GET /plan?%s = %d, want 400", tc.query, rec.Code)
		}
		msg := doc.Find(testid("err-" + tc.field)).Text()
		if !strings.Contains(msg, tc.mention) {
			t.Errorf("GET /plan?%s: message on %s = %q, want it to mention %q", tc.query, tc.field, msg, tc.mention)
		}
	}
}

func TestPlannerHugePasteIsInline(t *testing.T) {
	s := newTestServer(t)
	form := url.Values{"topics": {"orders:12"}, "parallelism": {"4"}, "target": {"6"}, "rates": {strings.Repeat("orders,0,1\n", 1_000_000)}}
	req := httptest.NewRequest("POST", "/plan", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != 400 {
		t.Fatalf("POST 10 MB of rates = %d, want 400 with an inline message", rec.Code)
	}
	doc, _ := goquery.NewDocumentFromReader(rec.Body)
	if msg := doc.Find(testid("err-rates")).Text(); !strings.Contains(msg, "MB pasted") {
		t.Errorf("message on rates = %q, want the size named", msg)
	}
}

func TestPlannerPostRedirectsToCanonicalURL(t *testing.T) {
	s := newTestServer(t)
	form := url.Values{"topics": {"orders:12\r\npayments:6"}, "parallelism": {"4"}, "target": {"6"}, "mode": {"fresh"}, "strategy": {"flink"}, "color": {"topic"}}
	req := httptest.NewRequest("POST", "/plan", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("POST /plan = %d, want 303", rec.Code)
	}
	if loc, want := rec.Header().Get("Location"), "/plan?parallelism=4&target=6&topic=orders%3A12&topic=payments%3A6"; loc != want {
		t.Errorf("Location = %s, want %s", loc, want)
	}
}

func TestHostileNamesAreText(t *testing.T) {
	s := newTestServer(t)
	hostile := []string{`<script>alert(1)</script>`, `"><img src=x onerror=alert(2)>`, "\u202eevil.txt"}
	q := url.Values{"parallelism": {"2"}, "target": {"3"}}
	for _, h := range hostile {
		q.Add("topic", h+":2")
	}
	rec, doc := get(t, s, "/plan?"+q.Encode())
	if rec.Code != 200 {
		t.Fatalf("GET /plan with hostile names = %d", rec.Code)
	}
	if n := doc.Find("#plan-results script, #plan-results img").Length(); n != 0 {
		t.Errorf("%d script/img elements in the results: markup from a topic name was not escaped", n)
	}
	body := rec.Body.String()
	if strings.Contains(body, "<script>alert") || strings.Contains(body, "<img src=x") {
		t.Error("raw hostile markup appears in the page")
	}
	legend := doc.Find(".legend").Text()
	for _, h := range hostile {
		if !strings.Contains(legend, h) {
			t.Errorf("legend does not show %q as text: %q", h, legend)
		}
	}
}

func TestEmbedAndCSP(t *testing.T) {
	s, err := NewServer(Options{FrameAncestors: []string{"https://portal.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	rec, doc := get(t, s, "/plan?topic=orders:12&parallelism=4&target=6&embed=1")
	if doc.Find(testid("nav")).Length() != 0 || doc.Find("footer").Length() != 0 {
		t.Error("embed mode still shows navigation or footer")
	}
	csp := rec.Header().Get("Content-Security-Policy")
	if !regexp.MustCompile(`script-src 'self' 'nonce-[A-Za-z0-9+/]{16,}'`).MatchString(csp) {
		t.Errorf("CSP %q has no nonce in script-src", csp)
	}
	if !strings.Contains(csp, "frame-ancestors https://portal.example.com") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP %q: want frame-ancestors from the configuration and no unsafe-inline", csp)
	}
	_, doc = get(t, s, "/plan?topic=orders:12&parallelism=4&target=6")
	if doc.Find(testid("nav")).Length() != 1 {
		t.Error("normal mode has no navigation")
	}
	if _, err := NewServer(Options{FrameAncestors: []string{"javascript:alert(1)"}}); err == nil {
		t.Error("NewServer accepted a frame ancestor that is not an origin")
	}
}

func TestRoutePrefix(t *testing.T) {
	s, err := NewServer(Options{RoutePrefix: "/tools/skewscope"})
	if err != nil {
		t.Fatal(err)
	}
	rec, doc := get(t, s, "/tools/skewscope/plan?topic=orders:12&parallelism=4&target=6")
	if rec.Code != 200 {
		t.Fatalf("GET prefixed /plan = %d", rec.Code)
	}
	css, _ := doc.Find(`link[rel="stylesheet"]`).Attr("href")
	if !strings.HasPrefix(css, "/tools/skewscope/static/css/app.") {
		t.Errorf("stylesheet %q is not under the prefix", css)
	}
	if rec, _ := get(t, s, css); rec.Code != 200 || !strings.Contains(rec.Header().Get("Cache-Control"), "immutable") {
		t.Errorf("GET %s = %d %q, want 200 and immutable caching", css, rec.Code, rec.Header().Get("Cache-Control"))
	}
	doc.Find("a[href]").Each(func(_ int, a *goquery.Selection) {
		href, _ := a.Attr("href")
		if strings.HasPrefix(href, "/") && !strings.HasPrefix(href, "/tools/skewscope/") {
			t.Errorf("link %q escapes the route prefix", href)
		}
	})
	if rec, _ := get(t, s, "/plan"); rec.Code != 404 {
		t.Errorf("GET /plan without the prefix = %d, want 404", rec.Code)
	}
	if _, err := NewServer(Options{RoutePrefix: "/a b"}); err == nil {
		t.Error("NewServer accepted a prefix with a space")
	}
}

func TestKeysPage(t *testing.T) {
	s := newTestServer(t)
	// key_to_operator.csv: "" at maxP 128 is key group 94, subtask 2 at p=4.
	_, doc := get(t, s, "/keys?keys=&maxParallelism=128&parallelism=4&target=10")
	if got := doc.Find(testid("key-group")).Text(); got != "94" {
		t.Errorf("key group of the empty string = %q, want 94", got)
	}
	if got := doc.Find(testid("subtask")).Text(); got != "2" {
		t.Errorf("subtask = %q, want 2", got)
	}
	if got := doc.Find(testid("target-subtask")).Text(); got != "7" {
		t.Errorf("target subtask = %q, want 7", got)
	}
	rec, doc := get(t, s, "/keys?keys="+url.QueryEscape("a\nb\n\nc")+"&parallelism=3")
	if rec.Code != 200 || doc.Find(testid("bulk-rows")+" tbody tr").Length() != 3 {
		t.Errorf("bulk lookup = %d with %d rows, want 200 and 3 rows", rec.Code, doc.Find(testid("bulk-rows")+" tbody tr").Length())
	}
	rec, doc = get(t, s, "/keys?keys=abc&type=int")
	if rec.Code != 400 || !strings.Contains(doc.Find(testid("err-keys")).Text(), "not an integer") {
		t.Errorf("bad int key = %d %q, want 400 and an inline message", rec.Code, doc.Find(testid("err-keys")).Text())
	}
}

func TestKeysCSV(t *testing.T) {
	s := newTestServer(t)
	code, body := do(t, s, "GET", "/keys.csv?keys="+url.QueryEscape("=cmd|x\nb")+"&parallelism=2", nil)
	if code != 200 {
		t.Fatalf("GET /keys.csv = %d %s", code, body)
	}
	lines := strings.Split(strings.TrimSpace(string(body)), "\n")
	if len(lines) != 3 || lines[0] != "key,type,java_hash,max_parallelism,key_group,parallelism,subtask" {
		t.Fatalf("CSV = %q", body)
	}
	if !strings.HasPrefix(lines[1], "'=cmd|x,") {
		t.Errorf("formula-like key not defused: %q", lines[1])
	}
}

// TestFaviconAndIconLink: /favicon.ico answers the icon (browsers ask for
// it on their own; a 404 is a console error on the first visit), and pages
// link the hashed icon, which is served.
func TestFaviconAndIconLink(t *testing.T) {
	s := newTestServer(t)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/favicon.ico", nil))
	if rec.Code != 200 || rec.Header().Get("Content-Type") != "image/svg+xml" || !strings.HasPrefix(rec.Body.String(), "<svg") {
		t.Errorf("GET /favicon.ico = %d %q %.40q, want 200, image/svg+xml, an SVG", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/plan", nil))
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	href := doc.Find(`link[rel="icon"]`).AttrOr("href", "")
	if !strings.HasPrefix(href, "/static/img/icon.") || !strings.HasSuffix(href, ".svg") {
		t.Fatalf("icon link %q, want the hashed /static/img/icon.*.svg", href)
	}
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", href, nil))
	if rec.Code != 200 {
		t.Errorf("GET %s = %d", href, rec.Code)
	}
}
