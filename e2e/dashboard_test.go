//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/assign"
	fcollect "github.com/skewscope/skewscope/collectors/flink"
	kcollect "github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/app"
	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/web"
)

// The dashboard's own pages against the real job: the dashboard as
// cmd/dashboard builds it (internal/app: the real collectors, the live
// store with the hints each side gives the other, web's server) polls the
// line's broker and MiniCluster into one live.Store (kept for the whole
// line, so it follows a job across stop-with-savepoint and restore), and
// the checks read the vertex JSON and HTML over HTTP. The checks poll the
// collectors themselves (PollOnce publishes to the store, as Run does), so
// that every round is one Flink and one Kafka poll.

const (
	dashEndpoint = "e2e-flink"
	dashCluster  = "e2e-kafka"
)

// dashboard is one line's skewscope dashboard.
type dashboard struct {
	env   *lineEnv
	store *live.Store
	fcol  *fcollect.Collector
	kcol  *kcollect.Collector
	srv   *httptest.Server
	hc    *http.Client
	log   *slog.Logger
	// rest reads the MiniCluster the dashboard's collector polls, directly
	// (not through a recorder): its line's, or the lifecycle's own.
	rest *restClient
}

// newDashboard builds the dashboard for the line's MiniCluster and broker.
func newDashboard(t *testing.T, env *lineEnv) *dashboard {
	t.Helper()
	return newDashboardAt(t, env, env.flink.REST.base)
}

// newDashboardAt is newDashboard with the Flink collector polling restURL
// (another MiniCluster, or a recording proxy in front of one). The Kafka
// collector watches every topic of the line's broker.
func newDashboardAt(t *testing.T, env *lineEnv, restURL string) *dashboard {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := app.New(app.Config{
		Flink: []fcollect.Config{{Name: dashEndpoint, URL: restURL, Kafka: dashCluster,
			PollInterval: fcollect.MinPollInterval, RequestTimeout: 30 * time.Second}},
		Kafka: []kcollect.Config{{Name: dashCluster, Brokers: []string{env.kafka.Bootstrap}, RequestTimeout: 30 * time.Second}},
		Web:   web.Options{Logger: logger, Version: "e2e"},
	}, logger)
	if err != nil {
		t.Fatalf("app.New: %v", err)
	}
	t.Cleanup(a.Close)
	a.Server.SetReady(true)
	hs := httptest.NewServer(a.Server)
	t.Cleanup(hs.Close)
	return &dashboard{env: env, store: a.Store, fcol: a.Flink[0], kcol: a.Kafka[0], srv: hs, hc: &http.Client{Timeout: 30 * time.Second}, log: logger,
		rest: env.flink.REST}
}

// dashWant is what one check expects of a running job's source vertex.
type dashWant struct {
	jobID  string
	vertex string // source vertex id, from the harness's observation
	group  string
	topics []assign.Topic
	p      int
	// observed is the harness's own REST observation (sorted per subtask);
	// predicted is assign's layout (sorted per subtask).
	observed, predicted [][]assign.TopicPartition
	mode                live.Mode          // "fresh" or "restore"
	history             []int              // restore: the expected Prediction.History
	historyFrom         live.HistoryOrigin // restore: the expected Prediction.HistoryFrom
	query               string             // appended to both URLs, e.g. "?history=4"
}

// dashRound is one poll of both collectors and the views it produced.
type dashRound struct {
	fs       *fcollect.Snapshot
	ks       *kcollect.Snapshot
	vv       live.VertexView
	endsLow  map[assign.TopicPartition]int64 // independent end offsets before the polls
	endsHigh map[assign.TopicPartition]int64 // and after
}

// check polls until the vertex view has settled (every partition read and
// committed, the group found, the job caught up), then asserts the JSON
// and the HTML page against assign's prediction, the harness's
// observation, the collectors' snapshots and independent end offsets.
func (d *dashboard) check(t *testing.T, w dashWant) {
	t.Helper()
	start := time.Now()
	srcID := w.vertex
	names := topicNames(w.topics)
	stop := d.trickle(t, w.topics)
	defer stop()

	const minRounds = 3
	deadline := time.Now().Add(60 * time.Second)
	var r dashRound
	var why string
	rounds := 0
	for n := 1; ; n++ {
		rounds = n
		r = d.poll(t, names, w.jobID, srcID, w.query)
		why = settled(r, w)
		if n >= minRounds && why == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("dashboard view of job %s vertex %s not settled after 60 s (%d polls): %s\n  last JSON layout:%s",
				w.jobID, srcID, n, why, layoutString(jsonLayout(r.vv, w.p)))
		}
		time.Sleep(400 * time.Millisecond)
	}
	if r.fs.Err != nil {
		t.Errorf("Flink snapshot error: %v", r.fs.Err)
	}
	if r.ks.Err != nil {
		t.Errorf("Kafka snapshot error: %v", r.ks.Err)
	}
	vv := r.vv

	// (a) observed layout = the harness's observation = assign's prediction.
	got := jsonLayout(vv, w.p)
	if !sameLayout(got, w.observed) {
		t.Errorf("dashboard JSON layout differs from the harness's REST observation:\n  JSON:%s\n  harness:%s", layoutString(got), layoutString(w.observed))
	}
	if !sameLayout(got, w.predicted) {
		t.Errorf("dashboard JSON layout differs from assign's prediction:\n  JSON:%s\n  predicted:%s", layoutString(got), layoutString(w.predicted))
	}
	total := len(assign.Partitions(w.topics))
	pr := vv.Prediction
	if pr == nil {
		t.Fatalf("vertex JSON has no prediction")
	}
	if pr.Mode != w.mode || pr.Matched != total || pr.Total != total || pr.Drift != 0 || pr.Uncertain != 0 || pr.Ambiguous != 0 {
		t.Errorf("prediction mode %q matched %d total %d drift %d uncertain %d ambiguous %d (%+v %+v); want mode %q, %d of %d matched, no drift",
			pr.Mode, pr.Matched, pr.Total, pr.Drift, pr.Uncertain, pr.Ambiguous, pr.Headline.Verdicts, pr.NotModelled, w.mode, total, total)
	}
	if pr.Missing != 0 || pr.UnknownToKafka != 0 || pr.Headline.Kind != live.BasisExact && pr.Headline.Kind != live.BasisInferred {
		t.Errorf("settled view: missing %d, unknown to Kafka %d, headline %s %+v; want the partition set settled and the headline exact",
			pr.Missing, pr.UnknownToKafka, pr.Headline.Kind, pr.Headline.Verdicts)
	}
	if w.mode == "restore" {
		if !slices.Equal(pr.History, w.history) || pr.HistoryFrom != w.historyFrom {
			t.Errorf("prediction history %v from %q, want %v from %q", pr.History, pr.HistoryFrom, w.history, w.historyFrom)
		}
	} else if len(pr.History) != 0 {
		t.Errorf("fresh prediction carries history %v", pr.History)
	}
	if vv.Parallelism != w.p || vv.JobID != w.jobID || vv.ID != srcID || !vv.Source || !vv.Kafka || vv.Cluster != dashCluster || vv.Endpoint != dashEndpoint {
		t.Errorf("vertex JSON header: job %s vertex %s parallelism %d source %v kafka %v cluster %q endpoint %q", vv.JobID, vv.ID, vv.Parallelism, vv.Source, vv.Kafka, vv.Cluster, vv.Endpoint)
	}
	if !slices.Equal(vv.Topics, sortedStrings(names)) {
		t.Errorf("vertex JSON topics %v, want %v", vv.Topics, sortedStrings(names))
	}
	for _, row := range vv.Subtasks {
		for _, c := range row.Partitions {
			if c.Predicted != row.Subtask || c.Uncertain {
				t.Errorf("subtask %d, %s-%d: predicted %d uncertain %v", row.Subtask, c.Topic, c.Partition, c.Predicted, c.Uncertain)
			}
		}
	}

	// (b) lag = end − (currentOffset+1), from the very snapshots the store
	// holds (Flink read before Kafka, so never negative), and the end
	// offsets between two independent reads.
	cur := flinkCurrent(r.fs, w.jobID, srcID)
	ends := kafkaEnds(r.ks)
	var sumLag int64
	for _, row := range vv.Subtasks {
		var rowLag int64
		for _, c := range row.Partitions {
			tp := assign.TopicPartition{Topic: c.Topic, Partition: c.Partition}
			id := tp.SplitID()
			end, okE := ends[tp]
			cu, okC := cur[tp]
			switch {
			case !okE || !okC:
				t.Errorf("%s: not in the snapshots (end %v, current %v)", id, okE, okC)
			case c.End != end || c.Current != cu:
				t.Errorf("%s: JSON endOffset %d currentOffset %d, snapshots %d and %d", id, c.End, c.Current, end, cu)
			case c.Lag < 0 || end-(cu+1) < 0 || c.Lag != end-(cu+1):
				t.Errorf("%s: lag %d, want end %d − (currentOffset %d + 1) = %d, ≥ 0", id, c.Lag, end, cu, end-(cu+1))
			}
			if lo, hi := r.endsLow[tp], r.endsHigh[tp]; c.End < lo || c.End > hi {
				t.Errorf("%s: endOffset %d outside the independent reads [%d, %d]", id, c.End, lo, hi)
			}
			if c.Rate <= 0 {
				t.Errorf("%s: rate %v while records are produced to it", id, c.Rate)
			}
			rowLag += c.Lag
		}
		// An idle subtask (no partitions) has nothing to catch up on: 0.
		if row.Lag != rowLag {
			t.Errorf("subtask %d: row lag %d, partitions sum to %d", row.Subtask, row.Lag, rowLag)
		}
		sumLag += rowLag
	}

	// (d) the group, found from its commits.
	if vv.Group == nil || vv.Group.Name != w.group || vv.Group.Found != live.GroupCommitsEqual {
		t.Errorf("group %+v, want %q discovered from commits equal to committedOffset", vv.Group, w.group)
	}

	// (c) the HTML page renders the same rows and cells.
	d.checkHTML(t, w, srcID, vv)

	t.Logf("dashboard (%s, %d polls of the real collectors, %s): job %s vertex %s\n  prediction: mode %s history %v (%s), %d/%d matched, drift %d: %+v\n  group %s (%s); total lag %d, e.g. %s\n  JSON layout = harness observation = assign:%s",
		d.env.flink.Version, rounds, time.Since(start).Round(100*time.Millisecond), w.jobID, srcID,
		pr.Mode, pr.History, pr.HistoryFrom, pr.Matched, pr.Total, pr.Drift, pr.Headline.Verdicts,
		groupName(vv.Group), groupHow(vv.Group), sumLag, cellSample(vv), layoutString(got))
}

// trickle writes one record to every partition of topics every 200 ms
// until stopped, keyed "dash-<topic>-<partition>-<n>" (no routing check
// uses such keys) with the tag "-" (ignored by every output reader). The
// traffic gives rates and lag something to measure, and keeps the
// source's KafkaConsumer returning from poll, which runs the commit
// callbacks that set Flink's committedOffset metric (an idle source runs
// them only when its 10 s poll times out).
func (d *dashboard) trickle(t *testing.T, topics []assign.Topic) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			var recs []*kgo.Record
			for _, tp := range assign.Partitions(topics) {
				recs = append(recs, &kgo.Record{Topic: tp.Topic, Partition: tp.Partition,
					Key: []byte(fmt.Sprintf("dash-%s-%d-%d", tp.Topic, tp.Partition, n)), Value: []byte("-")})
			}
			if err := d.env.kc.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil && ctx.Err() == nil {
				done <- err
				return
			}
			select {
			case <-ctx.Done():
				done <- nil
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("producing the dashboard's traffic: %v", err)
		}
	}
}

// poll reads Flink, then Kafka (so the end offsets are not older than the
// current offsets), each publishing to the store, and fetches the vertex
// JSON.
func (d *dashboard) poll(t *testing.T, topics []string, jobID, vertexID, query string) dashRound {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r := dashRound{endsLow: d.endOffsets(t, ctx, topics)}
	r.fs = d.fcol.PollOnce(ctx)
	r.ks = d.kcol.PollOnce(ctx)
	r.endsHigh = d.endOffsets(t, ctx, topics)
	d.getJSON(t, "/api/v1/jobs/"+jobID+"/vertices/"+vertexID+query, &r.vv)
	return r
}

// settled says what the view still lacks, "" when complete.
func settled(r dashRound, w dashWant) string {
	want := map[assign.TopicPartition]bool{}
	for _, tp := range assign.Partitions(w.topics) {
		want[tp] = true
	}
	n := 0
	var unread, uncommitted, noRate []string
	for _, row := range r.vv.Subtasks {
		for _, c := range row.Partitions {
			tp := assign.TopicPartition{Topic: c.Topic, Partition: c.Partition}
			if want[tp] {
				n++
			}
			switch {
			case c.Current < 0 || c.End < 0:
				unread = append(unread, tp.SplitID())
			case c.Committed < 0:
				uncommitted = append(uncommitted, tp.SplitID())
			case c.Rate <= 0:
				noRate = append(noRate, tp.SplitID())
			}
		}
	}
	var why []string
	if n != len(want) || len(r.vv.Subtasks) != w.p {
		why = append(why, fmt.Sprintf("%d subtasks listing %d of %d partitions", len(r.vv.Subtasks), n, len(want)))
	}
	for _, x := range []struct {
		what string
		l    []string
	}{{"without currentOffset or end offset", unread}, {"without committedOffset", uncommitted}, {"without a produce rate", noRate}} {
		if len(x.l) > 0 {
			why = append(why, fmt.Sprintf("%d partitions %s (%s)", len(x.l), x.what, clip(strings.Join(x.l, " "), 200)))
		}
	}
	// Commits and the committedOffset metric move every checkpoint; the
	// two reads agree on some partitions most of the time.
	if g := r.vv.Group; g == nil || g.Name != w.group || g.Found != live.GroupCommitsEqual {
		why = append(why, fmt.Sprintf("group %q not found from equal commits (have %s %s)", w.group, groupName(g), groupHow(g)))
	}
	return strings.Join(why, "; ")
}

func (d *dashboard) checkHTML(t *testing.T, w dashWant, srcID string, vv live.VertexView) {
	t.Helper()
	resp, err := d.hc.Get(d.srv.URL + "/jobs/" + w.jobID + "/vertices/" + srcID + w.query)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("vertex page: %s: %s", resp.Status, clip(string(b), 600))
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	rows := doc.Find(`[data-testid="subtask-row"]`)
	if rows.Length() != w.p {
		t.Errorf("vertex page has %d subtask rows, want %d", rows.Length(), w.p)
	}
	rows.Each(func(i int, row *goquery.Selection) {
		if s := row.AttrOr("data-subtask", ""); s != strconv.Itoa(i) {
			t.Errorf("row %d: data-subtask %q", i, s)
		}
		if i >= len(vv.Subtasks) {
			return
		}
		var page, js []string
		row.Find(`[data-testid="pcell"]`).Each(func(_ int, c *goquery.Selection) {
			page = append(page, c.AttrOr("data-topic", "?")+"/"+c.AttrOr("data-partition", "?"))
		})
		for _, c := range vv.Subtasks[i].Partitions {
			js = append(js, fmt.Sprintf("%s/%d", c.Topic, c.Partition))
		}
		if !slices.Equal(page, js) {
			t.Errorf("row %d: page cells %v, JSON %v", i, page, js)
		}
		if lag := strings.TrimSpace(row.Find(`[data-testid="row-lag"]`).Text()); lag != format.Int(vv.Subtasks[i].Lag) {
			t.Errorf("row %d: page lag %q, JSON %d", i, lag, vv.Subtasks[i].Lag)
		}
	})
	if n := doc.Find(`[data-testid="pcell"].miss`).Length(); n != 0 {
		t.Errorf("vertex page marks %d cells as off-prediction", n)
	}
	if g := strings.TrimSpace(doc.Find(`[data-testid="group"]`).Text()); g != w.group {
		t.Errorf("vertex page group %q, want %q", g, w.group)
	}
	// The page writes the verdict from the JSON's counts.
	if s := strings.TrimSpace(doc.Find(`[data-testid="prediction-summary"]`).Text()); vv.Prediction == nil || !strings.Contains(s, strconv.Itoa(vv.Prediction.Total)+" partitions") {
		t.Errorf("vertex page prediction summary %q, JSON %+v", s, vv.Prediction)
	}
}

func (d *dashboard) getJSON(t *testing.T, path string, v any) {
	t.Helper()
	resp, err := d.hc.Get(d.srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", path, resp.Status, clip(string(b), 600))
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// endOffsets reads the topics' end offsets with the harness's own client.
func (d *dashboard) endOffsets(t *testing.T, ctx context.Context, topics []string) map[assign.TopicPartition]int64 {
	t.Helper()
	lo, err := d.env.kc.adm.ListEndOffsets(ctx, topics...)
	if err == nil {
		err = lo.Error()
	}
	if err != nil {
		t.Fatalf("list end offsets of %v: %v", topics, err)
	}
	out := map[assign.TopicPartition]int64{}
	for _, ps := range lo {
		for _, o := range ps {
			out[assign.TopicPartition{Topic: o.Topic, Partition: o.Partition}] = o.Offset
		}
	}
	return out
}

// jsonLayout is the vertex JSON's partition → subtask layout.
func jsonLayout(vv live.VertexView, p int) [][]assign.TopicPartition {
	out := make([][]assign.TopicPartition, len(vv.Subtasks))
	for i, row := range vv.Subtasks {
		for _, c := range row.Partitions {
			out[i] = append(out[i], assign.TopicPartition{Topic: c.Topic, Partition: c.Partition})
		}
	}
	return sortedLayout(out, max(p, len(out)))
}

// flinkCurrent is the owner's currentOffset per partition in a snapshot.
func flinkCurrent(fs *fcollect.Snapshot, jobID, vertexID string) map[assign.TopicPartition]int64 {
	out := map[assign.TopicPartition]int64{}
	for _, j := range fs.Jobs {
		if j.ID != jobID {
			continue
		}
		for _, v := range j.Vertices {
			if v.ID != vertexID || v.Kafka == nil {
				continue
			}
			owner, _ := v.Kafka.Assignment()
			for _, st := range v.Kafka.States {
				if o, ok := owner[st.KafkaPartition]; ok && o == st.Subtask {
					out[assign.TopicPartition{Topic: st.Topic, Partition: st.Partition}] = st.CurrentOffset
				}
			}
		}
	}
	return out
}

func kafkaEnds(ks *kcollect.Snapshot) map[assign.TopicPartition]int64 {
	out := map[assign.TopicPartition]int64{}
	for _, t := range ks.Topics {
		for _, p := range t.Partitions {
			out[assign.TopicPartition{Topic: t.Name, Partition: p.Partition}] = p.End
		}
	}
	return out
}

func sortedStrings(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func groupName(g *live.GroupLink) string {
	if g == nil {
		return "none"
	}
	return strconv.Quote(g.Name)
}

func groupHow(g *live.GroupLink) string {
	if g == nil {
		return ""
	}
	return fmt.Sprintf("%s %d/%d", g.Found, g.Matched, g.Partitions)
}

// cellSample describes the first partition cell, for the log.
func cellSample(vv live.VertexView) string {
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			return fmt.Sprintf("%s-%d on subtask %d: end %d, currentOffset %d, committed %d, lag %d, rate %.1f/s, lag time %s (%s)",
				c.Topic, c.Partition, r.Subtask, c.End, c.Current, c.Committed, c.Lag, c.Rate, format.Seconds(c.LagSeconds), c.LagKind)
		}
	}
	return "no cells"
}
