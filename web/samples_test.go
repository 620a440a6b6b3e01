package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/gorilla/websocket"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/kafka"
)

// sampleFixture is a kfake cluster "prod" whose topic "orders" (4
// partitions) holds records keyed by Zipf-distributed customer ids, and a
// dashboard that may sample it. counts are the records per key.
type sampleFixture struct {
	srv     *httptest.Server
	brokers []string
	counts  map[string]int
	total   int
}

func newSampleFixture(t *testing.T, n int) *sampleFixture {
	t.Helper()
	r := rand.New(rand.NewPCG(5, 6))
	z := rand.NewZipf(r, 1.2, 1, 5000)
	fx := &sampleFixture{counts: map[string]int{}, total: n}
	var rs []*kgo.Record
	for i := range n {
		k := fmt.Sprintf("customer-%d", z.Uint64())
		if i%7 == 0 {
			k = fmt.Sprintf("Kunde-Müller-%d", z.Uint64()%50) // non-ASCII keys too
		}
		fx.counts[k]++
		rs = append(rs, &kgo.Record{Topic: "orders", Partition: int32(i % 4), Key: []byte(k), Value: []byte(`{"id":` + fmt.Sprint(i) + `}`)})
	}
	fx.brokers = ordersCluster(t, 4, rs)
	fx.srv = fx.serve(t, nil)
	return fx
}

// ordersCluster starts a one-broker kfake cluster whose topic "orders" has
// partitions partitions and holds rs, each in the partition it names, and
// returns the brokers' addresses.
func ordersCluster(t *testing.T, partitions int, rs []*kgo.Record) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(int32(partitions), "orders"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return c.ListenAddrs()
}

// serve starts a dashboard that may sample the fixture's cluster, with
// its options changed by opts (nil: as they are).
func (fx *sampleFixture) serve(t *testing.T, opts func(*Options)) *httptest.Server {
	t.Helper()
	var h atomic.Pointer[Server]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Load().ServeHTTP(w, r) }))
	o := Options{KafkaClusters: []kafka.Config{{Name: "prod", Brokers: fx.brokers}},
		WebSocket: HubOptions{AllowedOrigins: []string{srv.URL}}}
	if opts != nil {
		opts(&o)
	}
	s, err := NewServer(o)
	if err != nil {
		t.Fatal(err)
	}
	h.Store(s)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	t.Cleanup(func() { srv.Close(); cancel(); <-done })
	return srv
}

// start posts the sample form and returns the sample's id.
func (fx *sampleFixture) start(t *testing.T, form url.Values) string {
	t.Helper()
	return postSampleForm(t, fx.srv.URL+"/kafka/prod/topics/orders/sample", form)
}

// postSampleForm posts a sample form to u as a browser does and returns
// the id of the sample it redirects to.
func postSampleForm(t *testing.T, u string, form url.Values) string {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	id, ok := strings.CutPrefix(loc, "/samples/")
	if resp.StatusCode != http.StatusSeeOther || !ok || id == "" {
		t.Fatalf("POST %s = %d, Location %q", u, resp.StatusCode, loc)
	}
	return id
}

// wait polls the sample's JSON until it is done; the deadline is a hang
// guard.
func (fx *sampleFixture) wait(t *testing.T, id string) sampleResponse {
	t.Helper()
	guard := time.Now().Add(2 * time.Minute)
	for {
		var sr sampleResponse
		getJSONInto(t, fx.srv.URL+"/api/v1/samples/"+id, &sr)
		if sr.Done {
			return sr
		}
		if time.Now().After(guard) {
			t.Fatalf("sample %s not done after 2 minutes: %+v", id, sr.Progress)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSampleWholeTopicIsExact samples every record of the topic: the
// records per key group and per subtask equal a count of the produced keys
// routed with assign's own functions, and the heaviest key is the true one.
func TestSampleWholeTopicIsExact(t *testing.T) {
	fx := newSampleFixture(t, 20000)
	id := fx.start(t, url.Values{"n": {"1000000"}, "parallelism": {"4"}, "target": {"6"}, "maxParallelism": {"128"}})
	sr := fx.wait(t, id)
	if sr.Records != int64(fx.total) || sr.Progress.StoppedBy != "complete" {
		t.Fatalf("sample read %d records (%s), want all %d", sr.Records, sr.Progress.StoppedBy, fx.total)
	}
	wantKG := make([]int64, 128)
	wantSub := make([]int64, 4)
	best, bestN := "", 0
	for k, n := range fx.counts {
		h, err := assign.HashKey(assign.KeyType{Kind: assign.KindString}, k)
		if err != nil {
			t.Fatal(err)
		}
		kg := assign.KeyGroupForHash(h, 128)
		wantKG[kg] += int64(n)
		wantSub[assign.OperatorIndex(128, 4, kg)] += int64(n)
		if n > bestN || n == bestN && k < best {
			best, bestN = k, n
		}
	}
	for i := range wantKG {
		if sr.KeyGroups[i] != wantKG[i] {
			t.Fatalf("key group %d: sampled %d records, the produced keys route %d there", i, sr.KeyGroups[i], wantKG[i])
		}
	}
	for i := range wantSub {
		if sr.Now.PerSubtask[i] != wantSub[i] {
			t.Errorf("subtask %d at p = 4: sampled %d, want %d", i, sr.Now.PerSubtask[i], wantSub[i])
		}
	}
	if top := sr.TopKeys[0]; top.Key != best || top.Count < int64(bestN) || top.Count-top.ErrorBound > int64(bestN) {
		t.Errorf("top key %+v, want %s with %d records within its error bound", top, best, bestN)
	}
	if sr.Verdict == nil || len(sr.Verdict.Sentences) == 0 {
		t.Errorf("no verdict: %+v", sr.Verdict)
	}
	// The page shows the same, and the CSV lists the top key first.
	doc := getDoc(t, fx.srv.URL+"/samples/"+id, 200)
	if got := doc.Find("[data-testid=sample-key] td").First().Text(); got != best {
		t.Errorf("page's first key %q, want %q", got, best)
	}
	if doc.Find("[data-testid=sample-verdict] p").Length() == 0 || doc.Find("[data-testid=sample-now] tr").Length() != 4 || doc.Find("[data-testid=sample-target] tr").Length() != 6 {
		t.Errorf("page lacks the verdict or the per-subtask tables")
	}
	resp, err := http.Get(fx.srv.URL + "/samples/" + id + "/keys.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var head, first string
	fmt.Fscanln(resp.Body, &head)
	fmt.Fscanln(resp.Body, &first)
	if !strings.HasPrefix(first, best+",") {
		t.Errorf("CSV first row %q, want %s first", first, best)
	}
}

// TestSampleBadInput: every bad field of the form is named; a JSON path
// that the values lack counts the records as unreadable, with the message.
func TestSampleBadInput(t *testing.T) {
	fx := newSampleFixture(t, 200)
	for _, tc := range []struct{ form, want string }{
		{"parallelism=0", "is not a parallelism"},
		{"parallelism=4&format=yaml", "yaml"},
		{"parallelism=4&mode=sometimes", "read the last N records"},
		{"parallelism=4&maxRecords=0", "want a whole number"},
		{"parallelism=4&maxParallelism=2", "below the parallelism 4"},
		{"", "required: the keyed vertex's parallelism"},
	} {
		v, _ := url.ParseQuery(tc.form)
		resp, err := http.PostForm(fx.srv.URL+"/kafka/prod/topics/orders/sample", v)
		if err != nil {
			t.Fatal(err)
		}
		doc := docOf(t, resp)
		if resp.StatusCode != 400 || !strings.Contains(doc.Find("[data-error-for]").Text(), tc.want) {
			t.Errorf("POST %q = %d, errors %q; want 400 with %q", tc.form, resp.StatusCode, doc.Find("[data-error-for]").Text(), tc.want)
		}
	}
	id := fx.start(t, url.Values{"parallelism": {"4"}, "from": {"value"}, "format": {"json"}, "path": {"customer.id"}})
	sr := fx.wait(t, id)
	if sr.Records != 0 || len(sr.Errors) != 1 || sr.Errors[0].Count != 200 || !strings.Contains(sr.Errors[0].Message, "customer") {
		t.Errorf("JSON path missing from every value: records %d, errors %+v", sr.Records, sr.Errors)
	}
	getDoc(t, fx.srv.URL+"/samples/0123456789abcdef", 404)
	// A cluster that is not configured: the form is not offered, and a post
	// starts nothing; both say why.
	if got := getDoc(t, fx.srv.URL+"/kafka/other/topics/orders/sample?parallelism=4", 404).Find("[data-testid=error]").Text(); !strings.Contains(got, `no Kafka cluster "other" is configured`) {
		t.Errorf("form of an unknown cluster says %q", got)
	}
	resp, err := http.PostForm(fx.srv.URL+"/kafka/other/topics/orders/sample", url.Values{"parallelism": {"4"}})
	if err != nil {
		t.Fatal(err)
	}
	if doc := docOf(t, resp); resp.StatusCode != 404 || !strings.Contains(doc.Find("[data-testid=error]").Text(), `no Kafka cluster "other" is configured`) {
		t.Errorf("sample of an unknown cluster: %d %q", resp.StatusCode, doc.Find("[data-testid=error]").Text())
	}
}

// TestSampleFormOpensClean: opening the form (a GET, as the topic page's
// link does, without a parallelism, or with a bad value in the link) shows
// no error and marks no box invalid; the form is checked when it is posted
// (TestSampleBadInput). Every box has a visible label tied to it.
func TestSampleFormOpensClean(t *testing.T) {
	fx := newSampleFixture(t, 10)
	for _, q := range []string{"", "?parallelism=abc&maxRecords=0"} {
		doc := getDoc(t, fx.srv.URL+"/kafka/prod/topics/orders/sample"+q, 200)
		if errs := doc.Find("[data-error-for]").Text(); errs != "" {
			t.Errorf("GET sample form%s shows errors %q, want none before it is submitted", q, errs)
		}
		if n := doc.Find(`[aria-invalid="true"]`).Length(); n != 0 {
			t.Errorf("GET sample form%s marks %d boxes invalid, want none", q, n)
		}
		doc.Find(`[data-testid=sample-form] input:not([type=hidden]), [data-testid=sample-form] select`).Each(func(_ int, in *goquery.Selection) {
			id, _ := in.Attr("id")
			name, _ := in.Attr("name")
			if id == "" || doc.Find(`label[for="`+id+`"]`).Length() != 1 {
				t.Errorf("sample form box %s (id %q) has no label of its own", name, id)
			} else if doc.Find(`label[for="`+id+`"]`).Text() == "" {
				t.Errorf("sample form box %s: its label says nothing", name)
			}
		})
	}
}

// TestPlanWithSample: a finished sample's key groups become the planner's
// keyed load, marked sampled.
func TestPlanWithSample(t *testing.T) {
	fx := newSampleFixture(t, 5000)
	id := fx.start(t, url.Values{"parallelism": {"4"}, "maxParallelism": {"128"}})
	fx.wait(t, id)
	q := url.Values{"topic": {"orders:4"}, "parallelism": {"4"}, "maxParallelism": {"128"}, "keyedIn": {"100,100,100,100"}, "keyedBusy": {"0.5,0.5,0.5,0.5"}, "sample": {id}}
	var pr planResponse
	getJSONInto(t, fx.srv.URL+"/api/v1/plan?"+q.Encode(), &pr)
	if pr.Capacity.KeyGroupLoadKind != "sampled" || pr.Sizing.Basis != "capacity" {
		t.Fatalf("plan with sample: load kind %q, basis %q", pr.Capacity.KeyGroupLoadKind, pr.Sizing.Basis)
	}
	q.Set("sample", "ffffffffffffffff")
	var e apiErrorBody
	resp, err := http.Get(fx.srv.URL + "/api/v1/plan?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	decodeInto(t, resp, &e)
	if resp.StatusCode != 400 || !strings.Contains(e.Error, "sample: no sample") {
		t.Errorf("plan with an unknown sample = %d %q", resp.StatusCode, e.Error)
	}
}

func docOf(t *testing.T, resp *http.Response) *goquery.Document {
	t.Helper()
	defer resp.Body.Close()
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func decodeInto(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// TestOpenAPISampleSchema checks a finished sample's answer against
// openapi.json's SampleResponse, key by key.
func TestOpenAPISampleSchema(t *testing.T) {
	fx := newSampleFixture(t, 500)
	id := fx.start(t, url.Values{"parallelism": {"4"}, "target": {"6"}})
	fx.wait(t, id)
	resp, err := http.Get(fx.srv.URL + "/api/v1/samples/" + id)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	decodeInto(t, resp, &v)
	doc := oaLiveLoad(t)
	c := &oaLiveChecker{t: t, doc: doc, partial: true, seen: map[string]bool{}}
	c.check("/api/v1/samples/"+id, oaLiveResponseSchema(t, doc, "/api/v1/samples/{id}"), v)
	if !c.seen["SampleResponse"] || !c.seen["SampleLayout"] {
		t.Errorf("schemas reached: %v", c.seen)
	}
}

// TestSampleCancel: cancelling a live window ends the sample as cancelled,
// keeping what it read.
func TestSampleCancel(t *testing.T) {
	fx := newSampleFixture(t, 100)
	id := fx.start(t, url.Values{"parallelism": {"4"}, "mode": {"live"}, "window": {"600"}, "maxSeconds": {"600"}})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(fx.srv.URL+"/samples/"+id+"/cancel", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/samples/"+id {
		t.Fatalf("POST cancel = %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if sr := fx.wait(t, id); sr.Progress.StoppedBy != "cancelled" {
		t.Errorf("cancelled sample stopped by %q", sr.Progress.StoppedBy)
	}
	doc := getDoc(t, fx.srv.URL+"/samples/"+id, 200)
	if got := doc.Find("[data-testid=sample-ended]").Text(); !strings.Contains(got, "Cancelled") {
		t.Errorf("page says %q, want Cancelled", got)
	}
}

// TestSampleResultReachesALateSubscriber: a page rendered while its sample
// read may subscribe after the last progress; the finished result is still
// pushed to it, so the page turns into the result.
func TestSampleResultReachesALateSubscriber(t *testing.T) {
	fx := newSampleFixture(t, 100)
	id := fx.start(t, url.Values{"parallelism": {"4"}})
	fx.wait(t, id)
	hdr := http.Header{}
	hdr.Set("Origin", fx.srv.URL)
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(fx.srv.URL, "http")+"/ws", hdr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	subscribe(t, c, sampleTopic(id))
	var m struct {
		Topic string `json:"topic"`
		Data  struct {
			Shape string `json:"shape"`
		} `json:"data"`
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second)) // a hang guard
	if err := c.ReadJSON(&m); err != nil {
		t.Fatalf("no update for the finished sample: %v", err)
	}
	if m.Topic != sampleTopic(id) || m.Data.Shape != "done" {
		t.Errorf("update %+v, want the sample's topic with shape done", m)
	}
}

// A record key carrying bidi controls cannot reorder the sample page
// around it: the page writes them out visibly, and the CSV, which is data,
// keeps the key as it is.
func TestSampleKeysHoldNoBidiControls(t *testing.T) {
	fx := newSampleFixture(t, 200)
	cl, err := kgo.NewClient(kgo.SeedBrokers(fx.brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	const evil = "cust\u202eomer\u2066-1"
	var rs []*kgo.Record
	for range 500 {
		rs = append(rs, &kgo.Record{Topic: "orders", Partition: 1, Key: []byte(evil), Value: []byte(`{}`)})
	}
	err = cl.ProduceSync(context.Background(), rs...).FirstErr()
	cl.Close()
	if err != nil {
		t.Fatal(err)
	}
	id := fx.start(t, url.Values{"n": {"1000000"}, "parallelism": {"4"}, "maxParallelism": {"128"}})
	fx.wait(t, id)
	resp, page := getNoFollow(t, fx.srv.URL+"/samples/"+id)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /samples/%s = %d", id, resp.StatusCode)
	}
	if strings.ContainsAny(page, "\u202e\u2066") {
		t.Errorf("the sample page carries the key's bidi controls")
	}
	if !strings.Contains(page, "cust[U+202E]omer[U+2066]-1") {
		t.Errorf("the sample page does not show the key with its controls written out")
	}
	if resp, csv := getNoFollow(t, fx.srv.URL+"/samples/"+id+"/keys.csv"); resp.StatusCode != http.StatusOK || !strings.Contains(csv, evil) {
		t.Errorf("the CSV lost the key as it is")
	}
}

// Limits that contradict each other (a live window longer than the time
// limit) are the request's fault: 400 naming them, not a 503 that says
// the server is busy.
func TestSampleContradictoryLimitsAreBadInput(t *testing.T) {
	fx := newSampleFixture(t, 10)
	resp, err := http.PostForm(fx.srv.URL+"/api/v1/kafka/prod/topics/orders/samples",
		url.Values{"mode": {"live"}, "window": {"120"}, "parallelism": {"4"}, "maxParallelism": {"128"}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "window") {
		t.Errorf("a 120 s window over the 60 s time limit = %d %s, want 400 naming the window", resp.StatusCode, b)
	}
}

// readSampleShape reads the next update of a sample's topic from c and
// returns its shape; the deadline is a hang guard.
func readSampleShape(t *testing.T, c *websocket.Conn, id string) string {
	t.Helper()
	var m struct {
		Topic string `json:"topic"`
		Data  struct {
			Shape string `json:"shape"`
		} `json:"data"`
	}
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if err := c.ReadJSON(&m); err != nil {
		t.Fatalf("no update for sample %s: %v", id, err)
	}
	if m.Topic != sampleTopic(id) {
		t.Fatalf("update of %q, want the sample's topic", m.Topic)
	}
	return m.Data.Shape
}

// TestSampleProgressIsPushed: a page watching a running sample gets its
// progress as the sampler reports it, and its result when it ends; here
// the end is a cancel, which no subscription brings.
func TestSampleProgressIsPushed(t *testing.T) {
	fx := newSampleFixture(t, 100)
	id := fx.start(t, url.Values{"parallelism": {"4"}, "mode": {"live"}, "window": {"600"}, "maxSeconds": {"600"}})
	hdr := http.Header{}
	hdr.Set("Origin", fx.srv.URL)
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(fx.srv.URL, "http")+"/ws", hdr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	subscribe(t, c, sampleTopic(id))
	// The update the subscription brings, then the sampler's: each a
	// running page until the cancel.
	for range 3 {
		if shape := readSampleShape(t, c, id); shape != "running" {
			t.Fatalf("update of the running sample has shape %q", shape)
		}
	}
	if status, body := apiCall(t, "POST", fx.srv.URL+"/api/v1/samples/"+id+"/cancel", nil, nil); status != 200 || !strings.Contains(body, `"cancelled":true`) {
		t.Fatalf("cancel = %d %s", status, body)
	}
	for {
		if readSampleShape(t, c, id) == "done" {
			break
		}
	}
}

// TestSampleRunStopsItsSamples: when the server's Run ends, so do the
// samples it started, before Run returns; a sample asked for afterwards
// is refused, not started.
func TestSampleRunStopsItsSamples(t *testing.T) {
	fx := newSampleFixture(t, 10)
	s, err := NewServer(Options{KafkaClusters: []kafka.Config{{Name: "prod", Brokers: fx.brokers}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	srv := httptest.NewServer(s)
	defer srv.Close()
	id := startedID(t, apiCallA(t, "POST", srv.URL+"/api/v1/kafka/prod/topics/orders/samples", liveForm, nil))
	if n := s.samples.mgr.Running(); n != 1 {
		t.Fatalf("%d samples running, want 1", n)
	}
	cancel()
	<-done
	if n := s.samples.mgr.Running(); n != 0 {
		t.Errorf("%d samples still running after Run returned", n)
	}
	var sr sampleResponse
	getJSONInto(t, srv.URL+"/api/v1/samples/"+id, &sr)
	if !sr.Done || sr.Progress.StoppedBy != "cancelled" {
		t.Errorf("the sample after Run: done %v, stopped by %q; want cancelled", sr.Done, sr.Progress.StoppedBy)
	}
	if a := apiCallA(t, "POST", srv.URL+"/api/v1/kafka/prod/topics/orders/samples", liveForm, nil); a.status != http.StatusServiceUnavailable || !strings.Contains(a.body, "shutting down") {
		t.Errorf("a sample after Run = %d %s, want 503", a.status, a.body)
	}
}
