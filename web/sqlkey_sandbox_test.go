package web

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/sandbox"
)

// The sandbox's SQL job, read by the real collectors: its keyed page names
// user_id as the key, hashed as a key row, and opens the key lookup in SQL
// mode on it, as it would for a real Flink 2.x GROUP BY.
func TestSandboxSQLJobKeyedPageNamesItsKey(t *testing.T) {
	feed := startSandboxFeed(t, sandbox.Options{}, nil)
	job := feed.job(t, "payments-by-user")
	ts := newLiveServer(t, feed.st, feed.sb)
	// One poll sees the job and its plan; the deadline is a hang guard.
	var note, href string
	for guard := time.Now().Add(time.Minute); ; {
		feed.poll(t.Context())
		if getDocStatus(t, ts.URL+"/jobs/"+job.ID+"/vertices/"+job.KeyedVertexID) == 200 {
			doc := getDoc(t, ts.URL+"/jobs/"+job.ID+"/vertices/"+job.KeyedVertexID, 200)
			note = strings.Join(strings.Fields(doc.Find(`[data-testid="sql-key"]`).Text()), " ")
			href = doc.Find(`[data-testid="sql-key-lookup"]`).AttrOr("href", "")
			break
		}
		if time.Now().After(guard) {
			t.Fatalf("the payments-by-user keyed page never answered")
		}
	}
	for _, w := range []string{"GroupAggregate", "user_id", "BinaryRowData.hashCode()"} {
		if !strings.Contains(note, w) {
			t.Errorf("SQL key note %q lacks %q", note, w)
		}
	}
	u, err := url.Parse(href)
	if err != nil || u.Path != "/keys" {
		t.Fatalf("lookup link %q", href)
	}
	if q := u.Query(); q.Get("type") != "sql" || q.Get("columns") != "user_id" || q.Get("parallelism") != "4" || q.Get("maxParallelism") != "128" {
		t.Errorf("lookup link %q: want type sql, columns user_id, parallelism 4, maxParallelism 128", href)
	}
}

// TestSandboxSQLJobSamplesItsKeyRows follows "sample keys of payments"
// from the sandbox's SQL job: the form opens in SQL mode with the plan's
// key column, and with the table's columns given the sample routes each
// record's key row, names user ids as its heaviest keys, and its verdict
// says what a local-global aggregation would change for the hot one.
func TestSandboxSQLJobSamplesItsKeyRows(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the sandbox for a while")
	}
	feed := startSandboxFeed(t, sandbox.Options{Seed: 33}, nil)
	feed.pollInBackground(t)
	ts := sandboxSampleServer(t, feed)
	job := feed.job(t, "payments-by-user")
	u := sandboxSampleLink(t, ts, job, "payments")
	form := u.Query()
	if form.Get("type") != "sql" || form.Get("keyColumns") != "user_id" {
		t.Fatalf("sample link %q, want type sql with key column user_id", u)
	}
	form.Set("n", "2000")
	form.Set("table", "user_id STRING, region STRING, amount DOUBLE, ts BIGINT")
	id := postSampleForm(t, ts.URL+u.Path, form)
	fx := &sampleFixture{srv: ts}
	sr := fx.wait(t, id)
	if sr.Records == 0 || len(sr.Errors) > 0 || sr.Now == nil {
		t.Fatalf("sample of payments: %d records, errors %+v", sr.Records, sr.Errors)
	}
	if top := sr.TopKeys[0].Key; !strings.HasPrefix(top, "u-") {
		t.Errorf("heaviest key %q, want a user id", top)
	}
	doc := getDoc(t, ts.URL+"/samples/"+id, 200)
	verdict := strings.Join(strings.Fields(doc.Find("[data-testid=sample-verdict]").Text()), " ")
	for _, w := range []string{"a single-phase GroupAggregate", "table.optimizer.agg-phase-strategy = TWO_PHASE", "BinaryRowData.hashCode"} {
		if !strings.Contains(verdict, w) {
			t.Errorf("the sample's verdict %q lacks %q", verdict, w)
		}
	}
}
