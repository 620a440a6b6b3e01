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
