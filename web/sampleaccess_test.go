package web

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/kafka"
)

// auditLog is a dashboard's log, JSON lines, safe to write from any
// goroutine.
type auditLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *auditLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// lines are the records whose message is msg.
func (l *auditLog) lines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(l.b.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

func (l *auditLog) logger() *slog.Logger { return slog.New(slog.NewJSONHandler(l, nil)) }

type apiAnswer struct {
	status int
	body   string
}

// apiCall sends method to u with a form body and headers, and returns the
// status and body.
func apiCall(t *testing.T, method, u string, form url.Values, hdr map[string]string) (int, string) {
	t.Helper()
	a := apiCallA(t, method, u, form, hdr)
	return a.status, a.body
}

func apiCallA(t *testing.T, method, u string, form url.Values, hdr map[string]string) apiAnswer {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return apiAnswer{resp.StatusCode, string(b)}
}

// liveForm is a sample that runs until it is cancelled (or the test ends).
var liveForm = url.Values{"parallelism": {"4"}, "mode": {"live"}, "window": {"600"}, "maxSeconds": {"600"}}

// startedID is the id of a sample that startedID's argument, an answer
// of apiCall, started.
func startedID(t *testing.T, a apiAnswer) string {
	t.Helper()
	status, body := a.status, a.body
	var r struct{ ID string }
	if status != http.StatusAccepted || json.Unmarshal([]byte(body), &r) != nil || r.ID == "" {
		t.Fatalf("start = %d %s, want 202 with an id", status, body)
	}
	return r.ID
}

// TestSamplesOff: with samples turned off, the form and the list say so
// naming the setting, and every API call answers 403 naming it.
func TestSamplesOff(t *testing.T) {
	fx := newSampleFixture(t, 100)
	srv := fx.serve(t, func(o *Options) { o.Samples.Off, o.Samples.OffBy = true, "--samples.enabled=false" })
	const want = "key samples are turned off (--samples.enabled=false)"
	if got := getDoc(t, srv.URL+"/kafka/prod/topics/orders/sample?parallelism=4", 403).Find("[data-testid=error]").Text(); !strings.Contains(got, want) {
		t.Errorf("the form says %q, want %q", got, want)
	}
	if got := getDoc(t, srv.URL+"/samples", 200).Find("[data-testid=samples-off]").Text(); !strings.Contains(strings.ToLower(got), want) {
		t.Errorf("the list says %q, want %q", got, want)
	}
	for _, c := range []struct{ method, path string }{
		{"POST", "/api/v1/kafka/prod/topics/orders/samples"},
		{"GET", "/api/v1/samples"},
		{"GET", "/api/v1/samples/0123456789abcdef"},
		{"POST", "/api/v1/samples/0123456789abcdef/cancel"},
	} {
		status, body := apiCall(t, c.method, srv.URL+c.path, url.Values{"parallelism": {"4"}}, nil)
		if status != 403 || !strings.Contains(body, want) {
			t.Errorf("%s %s = %d %s, want 403 naming the setting", c.method, c.path, status, body)
		}
	}
	// The form post starts nothing either.
	resp, err := http.PostForm(srv.URL+"/kafka/prod/topics/orders/sample", url.Values{"parallelism": {"4"}})
	if err != nil {
		t.Fatal(err)
	}
	if doc := docOf(t, resp); resp.StatusCode != 403 || !strings.Contains(doc.Text(), want) {
		t.Errorf("POST form = %d, want 403 naming the setting", resp.StatusCode)
	}
}

// TestSampleTopicRules: a cluster's own rule replaces the global one;
// patterns match whole topic names; a refused topic gets 403 naming the
// rule and its patterns.
func TestSampleTopicRules(t *testing.T) {
	fx := newSampleFixture(t, 100)
	for _, tc := range []struct {
		name  string
		rules []TopicRule
		want  string // "" allowed
	}{
		{"global allows", []TopicRule{{Patterns: []string{"ord.*"}, Setting: "web.samples.topics"}}, ""},
		{"whole names only", []TopicRule{{Patterns: []string{"ord", "rders"}, Setting: "web.samples.topics"}},
			`topic "orders" of cluster "prod" may not be sampled: web.samples.topics allows the patterns "ord", "rders"`},
		{"cluster rule replaces the global one", []TopicRule{
			{Patterns: []string{"orders"}, Setting: "web.samples.topics"},
			{Cluster: "prod", Patterns: []string{"payments"}, Setting: "web.samples.clusters.prod.topics"}},
			`web.samples.clusters.prod.topics allows the patterns "payments"`},
		{"another cluster's rule does not apply", []TopicRule{{Cluster: "staging", Patterns: []string{"x"}, Setting: "s"}}, ""},
	} {
		srv := fx.serve(t, func(o *Options) { o.Samples.Topics = tc.rules })
		status, body := apiCall(t, "POST", srv.URL+"/api/v1/kafka/prod/topics/orders/samples", url.Values{"parallelism": {"4"}, "n": {"10"}}, nil)
		var e apiErrorBody
		json.Unmarshal([]byte(body), &e)
		form := getDocStatus(t, srv.URL+"/kafka/prod/topics/orders/sample?parallelism=4")
		switch {
		case tc.want == "" && (status != 202 || form != 200):
			t.Errorf("%s: start = %d %s, form %d; want 202 and 200", tc.name, status, body, form)
		case tc.want != "" && (status != 403 || !strings.Contains(e.Error, tc.want) || form != 403):
			t.Errorf("%s: start = %d %s, form %d; want 403 with %q", tc.name, status, body, form, tc.want)
		}
	}
	if _, err := NewServer(Options{KafkaClusters: []kafka.Config{{Name: "prod", Brokers: []string{"127.0.0.1:1"}}}, Samples: SampleOptions{Topics: []TopicRule{{Patterns: []string{"(orders"}, Setting: "web.samples.topics"}}}}); err == nil || !strings.Contains(err.Error(), "web.samples.topics") {
		t.Errorf("a bad pattern: NewServer error %v, want one naming web.samples.topics", err)
	}
}

func getDocStatus(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestSampleHashedKeys: with keys hashed, the page, CSV and JSON show each
// key as 12 hex digits and never its text or Java hash; the key groups and
// counts are those of the real keys.
func TestSampleHashedKeys(t *testing.T) {
	fx := newSampleFixture(t, 5000)
	srv := fx.serve(t, func(o *Options) { o.Samples.HashKeys = true })
	sfx := &sampleFixture{srv: srv}
	id := startedID(t, apiCallA(t, "POST", srv.URL+"/api/v1/kafka/prod/topics/orders/samples", url.Values{"parallelism": {"4"}, "maxParallelism": {"128"}, "n": {"1000000"}}, nil))
	sr := sfx.wait(t, id)
	if sr.Keys != "hashed" || sr.Records != 5000 {
		t.Fatalf("keys %q, %d records; want hashed, 5000", sr.Keys, sr.Records)
	}
	best, bestN := "", 0
	for k, n := range fx.counts {
		if n > bestN || n == bestN && k < best {
			best, bestN = k, n
		}
	}
	h, _ := assign.HashKey(assign.KeyType{Kind: assign.KindString}, best)
	hexRE := regexp.MustCompile(`^[0-9a-f]{12}$`)
	top := sr.TopKeys[0]
	if !hexRE.MatchString(top.Key) || top.JavaHash != nil || top.KeyGroup != assign.KeyGroupForHash(h, 128) || top.Count != int64(bestN) {
		t.Errorf("top key %+v; want a 12-hex-digit hash, no java hash, key group %d and count %d of %q", top, assign.KeyGroupForHash(h, 128), bestN, best)
	}
	for _, k := range sr.TopKeys {
		if !hexRE.MatchString(k.Key) {
			t.Fatalf("key %q is not a hash", k.Key)
		}
	}
	get := func(path string) string {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	csv := get("/samples/" + id + "/keys.csv")
	if !strings.HasPrefix(csv, "key_hash,key_group,count,") || !strings.Contains(csv, "\n"+top.Key+",") {
		t.Errorf("CSV starts %.80q, want key_hash first and the top hash", csv)
	}
	page := get("/samples/" + id)
	for name, body := range map[string]string{"page": page, "CSV": csv, "JSON": get("/api/v1/samples/" + id)} {
		if strings.Contains(body, "customer-") || strings.Contains(body, "Kunde") {
			t.Errorf("the %s shows a key in clear", name)
		}
	}
	if !strings.Contains(page, "key hash") || !strings.Contains(page, "HMAC-SHA256") {
		t.Errorf("the page does not say the keys are hashed")
	}
}

// TestSampleUserHeaderTrust: the user header is believed from a trusted
// proxy only; each sample records who started it, on its page and JSON,
// and the audit log has a line for it.
func TestSampleUserHeaderTrust(t *testing.T) {
	fx := newSampleFixture(t, 100)
	for _, tc := range []struct {
		name    string
		proxies []netip.Prefix
		want    string // startedBy
		user    string // the log's user
	}{
		{"trusted proxy", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, "alice@example.com", "alice@example.com"},
		{"untrusted peer", []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, "anonymous (127.0.0.1)", "anonymous"},
		{"no proxies", nil, "anonymous (127.0.0.1)", "anonymous"},
	} {
		var log auditLog
		srv := fx.serve(t, func(o *Options) {
			o.Logger, o.UserHeader, o.WebSocket.TrustedProxies = log.logger(), "X-Forwarded-User", tc.proxies
		})
		id := startedID(t, apiCallA(t, "POST", srv.URL+"/api/v1/kafka/prod/topics/orders/samples", url.Values{"parallelism": {"4"}, "n": {"50"}, "partitions": {"1,2"}},
			map[string]string{"X-Forwarded-User": "alice@example.com", "X-Forwarded-For": "192.0.2.7"}))
		sr := (&sampleFixture{srv: srv}).wait(t, id)
		if sr.StartedBy != tc.want {
			t.Errorf("%s: startedBy %q, want %q", tc.name, sr.StartedBy, tc.want)
		}
		if got := getDoc(t, srv.URL+"/samples/"+id, 200).Find("[data-testid=sample-started-by]").Text(); !strings.Contains(got, "Started by "+tc.want) {
			t.Errorf("%s: the page says %q, want %q", tc.name, got, tc.want)
		}
		lines := log.lines(t, "key sample started")
		if len(lines) != 1 {
			t.Fatalf("%s: %d audit lines, want 1", tc.name, len(lines))
		}
		l := lines[0]
		wantAddr := "127.0.0.1"
		if tc.name == "trusted proxy" {
			wantAddr = "192.0.2.7" // X-Forwarded-For from the trusted proxy
		}
		for k, v := range map[string]any{"level": "INFO", "user": tc.user, "client_address": wantAddr, "cluster": "prod", "topic": "orders",
			"partitions": "1,2", "mode": "last", "last_n": 50.0, "sample_id": id, "audit": true, "max_records": 1e6} {
			if l[k] != v {
				t.Errorf("%s: audit line %s = %v, want %v", tc.name, k, l[k], v)
			}
		}
		if l["time"] == nil || l["max_seconds"] == nil {
			t.Errorf("%s: audit line without time or limits: %v", tc.name, l)
		}
	}
}

// TestSamplePerUserBound: one user cannot hold both slots; a second user
// can start one; a third gets 503; anyone may cancel a running sample from
// the list, which is logged with who cancelled, and frees the slot.
func TestSamplePerUserBound(t *testing.T) {
	fx := newSampleFixture(t, 100)
	var log auditLog
	srv := fx.serve(t, func(o *Options) {
		o.Logger, o.UserHeader, o.WebSocket.TrustedProxies = log.logger(), "X-Forwarded-User", []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	})
	start := func(user string) apiAnswer {
		return apiCallA(t, "POST", srv.URL+"/api/v1/kafka/prod/topics/orders/samples", liveForm, map[string]string{"X-Forwarded-User": user})
	}
	alice := startedID(t, start("alice"))
	if a := start("alice"); a.status != 429 || !strings.Contains(a.body, "user alice already runs 1 key sample") || !strings.Contains(a.body, "samples.maxPerUser = 1") {
		t.Errorf("alice's second sample = %d %s, want 429 naming the bound", a.status, a.body)
	}
	startedID(t, start("bob"))
	if a := start("carol"); a.status != 503 || !strings.Contains(a.body, "too many samples running") || !strings.Contains(a.body, "/samples") {
		t.Errorf("a third sample = %d %s, want 503 pointing to the list", a.status, a.body)
	}
	// The list shows both, running, with who started them and a cancel
	// button each.
	doc := getDoc(t, srv.URL+"/samples", 200)
	if n := doc.Find("[data-testid=samples-cancel]").Length(); n != 2 || !strings.Contains(doc.Find("[data-testid=samples-by]").Text(), "alice") {
		t.Errorf("the list has %d cancel buttons and users %q; want 2 with alice", n, doc.Find("[data-testid=samples-by]").Text())
	}
	var list sampleListResponse
	getJSONInto(t, srv.URL+"/api/v1/samples", &list)
	if list.Running != 2 || len(list.Samples) != 2 || list.Samples[1].StartedBy != "alice" || list.Samples[1].State != "running" || list.MaxPerUser != 1 {
		t.Errorf("list %+v, want alice's and bob's running, alice's last", list)
	}
	// carol cancels alice's sample from the list's form.
	form := doc.Find("[data-testid=samples-row]").Last().Find("form").AttrOr("action", "")
	req, _ := http.NewRequest("POST", srv.URL+form, nil)
	req.Header.Set("X-Forwarded-User", "carol")
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/samples" {
		t.Fatalf("cancel from the list (%s) = %d %q, want 303 to /samples", form, resp.StatusCode, resp.Header.Get("Location"))
	}
	sr := (&sampleFixture{srv: srv}).wait(t, alice)
	if sr.Progress.StoppedBy != "cancelled" || sr.CancelledBy == nil || *sr.CancelledBy != "carol" {
		t.Errorf("alice's sample: stopped by %q, cancelled by %v; want cancelled by carol", sr.Progress.StoppedBy, sr.CancelledBy)
	}
	cl := log.lines(t, "key sample cancelled")
	if len(cl) != 1 || cl[0]["user"] != "carol" || cl[0]["started_by"] != "alice" || cl[0]["sample_id"] != alice || cl[0]["topic"] != "orders" {
		t.Errorf("cancel audit lines %v, want one by carol of alice's sample", cl)
	}
	if got := getDoc(t, srv.URL+"/samples/"+alice, 200).Find("[data-testid=sample-cancelled-by]").Text(); got != "carol" {
		t.Errorf("the sample's page says cancelled by %q", got)
	}
	// Cancelling an ended sample changes nothing and logs nothing.
	if status, body := apiCall(t, "POST", srv.URL+"/api/v1/samples/"+alice+"/cancel", nil, map[string]string{"X-Forwarded-User": "dave"}); status != 200 || !strings.Contains(body, `"cancelled":false`) {
		t.Errorf("second cancel = %d %s", status, body)
	}
	if n := len(log.lines(t, "key sample cancelled")); n != 1 {
		t.Errorf("%d cancel audit lines after a cancel of an ended sample, want 1", n)
	}
	// alice's slot is free again.
	startedID(t, start("alice"))
}

// TestSampleListLinks: the navigation and the sample form link to the
// list; without samples the list is empty and says so.
func TestSampleListLinks(t *testing.T) {
	fx := newSampleFixture(t, 10)
	doc := getDoc(t, fx.srv.URL+"/samples", 200)
	if doc.Find("[data-testid=samples-none]").Length() != 1 || doc.Find(`nav a[href="/samples"]`).Length() != 1 {
		t.Errorf("the empty list lacks its note or the navigation link")
	}
	if doc := getDoc(t, fx.srv.URL+"/kafka/prod/topics/orders/sample?parallelism=4", 200); doc.Find(`[data-testid=samples-list-link]`).AttrOr("href", "") != "/samples" {
		t.Errorf("the form does not link to the list")
	}
	// Without Kafka the navigation has no samples link.
	s := newTestServer(t)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/keys", nil))
	if strings.Contains(rec.Body.String(), `href="/samples"`) {
		t.Errorf("the navigation links to samples without a Kafka cluster")
	}
}

// TestRedactQuoted: key extraction errors lose their quoted texts when
// keys are hashed.
func TestRedactQuoted(t *testing.T) {
	for in, want := range map[string]string{
		`field id: long key "abc": not an integer`:  `field id: long key "…": not an integer`,
		`tuple key "[\"a\\\"b\"]"…: want`:           `tuple key "…": want`,
		`record key is 3 bytes, an int key needs 4`: `record key is 3 bytes, an int key needs 4`,
	} {
		if got := redactQuoted(in); got != want {
			t.Errorf("redactQuoted(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkKeyHasher is the per-record cost hashed keys add to a sample's
// sink: one HMAC-SHA256 of a customer id.
func BenchmarkKeyHasher(b *testing.B) {
	h := newKeyHasher(make([]byte, 32))
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = "customer-" + strings.Repeat("7", i%12)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = h.text(keys[i%len(keys)])
	}
}
