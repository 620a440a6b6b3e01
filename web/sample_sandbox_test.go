package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/sandbox"
)

// TestSandboxKeyedPageSamplesItsKeys follows "sample keys of orders" from
// the sandbox's keyed vertex page: the form comes with the vertex's
// parallelism and max parallelism, the sample reads the orders topic, and
// its result names the keys that make the keyed subtasks hot, with the
// busiest subtask at the vertex's own parallelism; "plan a rescale with
// these key groups" opens the planner with the sample as the keyed load.
func TestSandboxKeyedPageSamplesItsKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the sandbox for a while")
	}
	feed := startSandboxFeed(t, sandbox.Options{Seed: 33}, nil)
	feed.pollInBackground(t)
	st := feed.st
	ts := sandboxSampleServer(t, feed)
	job := feed.job(t, "orders-enrichment")
	u := sandboxSampleLink(t, ts, job, "orders")
	if q := u.Query(); q.Get("parallelism") != "4" || q.Get("maxParallelism") != "128" || q.Get("job") != job.ID || q.Get("vertex") != job.KeyedVertexID {
		t.Fatalf("sample link %q, want the keyed vertex's p = 4, max 128, job and vertex", u)
	}
	form := u.Query()
	form.Set("n", "3000")
	fx := &sampleFixture{srv: ts}
	id := postSampleForm(t, ts.URL+u.Path, form)
	sr := fx.wait(t, id)
	if sr.Records == 0 || sr.Now == nil || len(sr.Now.PerSubtask) != 4 || sr.Verdict == nil || len(sr.Verdict.Sentences) == 0 {
		t.Fatalf("sample of orders: %d records, layout %+v, verdict %+v", sr.Records, sr.Now, sr.Verdict)
	}
	top := sr.TopKeys[0]
	t.Logf("sample of orders: %d records; busiest keyed subtask at p = 4: %d with %.0f%%; heaviest key %q (%.1f%%) on subtask %d; verdict: %s",
		sr.Records, sr.Now.Busiest, 100*sr.Now.Share, top.Key, 100*top.Share, top.Subtask, strings.Join(sr.Verdict.Sentences, " | "))
	if !strings.HasPrefix(top.Key, "customer-") && !strings.Contains(top.Key, "@") {
		t.Errorf("heaviest key %q, want a customer id or e-mail (the sandbox's orders keys)", top.Key)
	}
	// The planner needs the keyed vertex's records in per subtask, known
	// after a few polls; the deadline is a hang guard.
	for guard := time.Now().Add(2 * time.Minute); ; {
		kv, err := st.State().Vertex(job.ID, job.KeyedVertexID, live.VertexQuery{Highlight: -1})
		known := err == nil && len(kv.Subtasks) == 4
		for _, r := range kv.Subtasks {
			known = known && r.RecordsIn > 0
		}
		if known {
			break
		}
		if time.Now().After(guard) {
			t.Fatalf("the keyed vertex's records in are not known after 2 minutes")
		}
		time.Sleep(200 * time.Millisecond)
	}
	doc := getDoc(t, ts.URL+"/samples/"+id, 200)
	if back := doc.Find("[data-testid=sample-vertex]").AttrOr("href", ""); back != "/jobs/"+job.ID+"/vertices/"+job.KeyedVertexID {
		t.Errorf("the sample page links back to %q, want the keyed vertex", back)
	}
	planner, ok := doc.Find("[data-testid=sample-planner]").Attr("href")
	if !ok {
		t.Fatalf("the sample page has no planner link")
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(ts.URL + planner)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || loc.Query().Get("sample") != id {
		t.Fatalf("planner link %s = %d → %q, want the planner with sample=%s", planner, resp.StatusCode, resp.Header.Get("Location"), id)
	}
	var pr planResponse
	getJSONInto(t, ts.URL+"/api/v1/plan?"+loc.RawQuery, &pr)
	if pr.Capacity.KeyGroupLoadKind != "sampled" {
		t.Errorf("the plan's keyed load is %q, want sampled", pr.Capacity.KeyGroupLoadKind)
	}
}

// sandboxSampleServer serves the sandbox feed's store with the sandbox's
// Kafka cluster, so that samples read its topics, until the test ends.
func sandboxSampleServer(t *testing.T, feed *sandboxFeed) *httptest.Server {
	t.Helper()
	return runServer(t, Options{Live: feed.st, Sandbox: feed.sb, KafkaClusters: []kafka.Config{feed.kafka}, LiveInterval: 50 * time.Millisecond})
}

// sandboxSampleLink waits until the keyed page of job links to a sample
// of topic, which it does once the job's source is known, and returns the
// link; the deadline is a hang guard.
func sandboxSampleLink(t *testing.T, ts *httptest.Server, job sandbox.JobInfo, topic string) *url.URL {
	t.Helper()
	for guard := time.Now().Add(2 * time.Minute); ; {
		resp, err := http.Get(ts.URL + "/jobs/" + job.ID + "/vertices/" + job.KeyedVertexID)
		if err != nil {
			t.Fatal(err)
		}
		var link string
		docOf(t, resp).Find("[data-testid=sample-link]").Each(func(_ int, a *goquery.Selection) { // 404 until the first poll has seen the job
			if strings.HasSuffix(a.Text(), " "+topic) {
				link = a.AttrOr("href", "")
			}
		})
		if link != "" {
			u, err := url.Parse(link)
			if err != nil {
				t.Fatalf("sample link %q: %v", link, err)
			}
			return u
		}
		if time.Now().After(guard) {
			t.Fatalf("the keyed page of %s has no sample link for %s", job.Name, topic)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
