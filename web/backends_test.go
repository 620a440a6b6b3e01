package web

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
)

// backendCells returns the text of each backend row of the overview: name
// → its cells, squeezed.
func backendCells(doc *goquery.Document) map[string][]string {
	out := map[string][]string{}
	doc.Find("[data-testid=endpoint-row], [data-testid=cluster-row]").Each(func(_ int, row *goquery.Selection) {
		var cells []string
		row.Find("td").Each(func(_ int, td *goquery.Selection) {
			cells = append(cells, strings.Join(strings.Fields(td.Text()), " "))
		})
		out[row.AttrOr("data-testid", "")+" "+row.Find("bdi").First().Text()] = cells
	})
	return out
}

// TestOverviewBackendsNotYetPolled: configured backends are rows of the
// overview before their first poll ends (not yet polled, no figures) and
// after a failed one (never reached, the error); the page, its live update
// and /metrics agree.
func TestOverviewBackendsNotYetPolled(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := live.New(live.Options{Now: func() time.Time { return at.Add(4 * time.Second) },
		Kafka: []string{"prod", "lost"}, Flink: []live.Endpoint{{Name: "jm", URL: "http://jm.example:8081"}}})
	ts := newLiveServer(t, st, nil)

	doc := getDoc(t, ts.URL+"/", 200)
	checkUpdateMatchesPage(t, doc, overviewUpdate(t, st.Overview()))
	got := backendCells(doc)
	for row, want := range map[string][]string{
		"endpoint-row jm":  {"jm http://jm.example:8081", "", "–", "–", "–", "–", "not yet polled"},
		"cluster-row prod": {"prod", "–", "–", "–", "–", "–", "not yet polled"},
		"cluster-row lost": {"lost", "–", "–", "–", "–", "–", "not yet polled"},
	} {
		if strings.Join(got[row], " | ") != strings.Join(want, " | ") {
			t.Errorf("before the first polls, %s = %q, want %q", row, got[row], want)
		}
	}
	if n := doc.Find("tr.stale").Length(); n != 3 {
		t.Errorf("%d rows marked stale before the first polls, want 3", n)
	}

	down := errors.New("dial tcp 10.0.0.9:9092: connection refused")
	st.UpdateKafka(&kafka.Snapshot{Cluster: "lost", CollectedAt: at, PollDuration: 1500 * time.Millisecond, Err: down})
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", URL: "http://jm.example:8081", CollectedAt: at, PollDuration: 20 * time.Millisecond, Err: down})
	doc = getDoc(t, ts.URL+"/", 200)
	checkUpdateMatchesPage(t, doc, overviewUpdate(t, st.Overview()))
	got = backendCells(doc)
	for row, want := range map[string][]string{
		"endpoint-row jm":  {"jm http://jm.example:8081", "", "–", "20 ms", "–", "–", "never reached · last try 4 s ago · " + down.Error()},
		"cluster-row prod": {"prod", "–", "–", "–", "–", "–", "not yet polled"},
		"cluster-row lost": {"lost", "–", "–", "–", "–", "1500 ms", "never reached · last try 4 s ago · " + down.Error()},
	} {
		if strings.Join(got[row], " | ") != strings.Join(want, " | ") {
			t.Errorf("after the failed polls, %s = %q, want %q", row, got[row], want)
		}
	}

	body := getMetrics(t, ts.URL)
	for _, want := range []string{
		`skewscope_backend_up{kind="kafka",name="prod"} 0`,
		`skewscope_backend_state{kind="kafka",name="prod",state="not yet polled"} 1`,
		`skewscope_backend_state{kind="kafka",name="prod",state="ok"} 0`,
		`skewscope_backend_up{kind="kafka",name="lost"} 0`,
		`skewscope_backend_state{kind="kafka",name="lost",state="never reached"} 1`,
		`skewscope_backend_poll_duration_seconds{kind="kafka",name="lost"} 1.5`,
		`skewscope_backend_up{kind="flink",name="jm"} 0`,
		`skewscope_backend_state{kind="flink",name="jm",state="never reached"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// A backend not yet polled has no poll to report.
	for _, absent := range []string{
		`skewscope_backend_last_poll_timestamp_seconds{kind="kafka",name="prod"}`,
		`skewscope_backend_poll_duration_seconds{kind="kafka",name="prod"}`,
	} {
		if strings.Contains(body, absent) {
			t.Errorf("/metrics has %s before the first poll", absent)
		}
	}
}
