package web

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
)

var updateMetrics = flag.Bool("update-metrics", false, "rewrite web/testdata/metrics/*.txt from the current /metrics")

// metricsStores are the stores whose /metrics exposition is recorded in
// testdata/metrics: jobs fresh, restored, drifting, with an undetermined
// reader, withheld metrics, lag in time, records lost and a retention.
func metricsStores(t *testing.T) map[string]*live.Store {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	restored, _ := restoredStore(t, at)

	// A fresh start at p = 4 whose readers sit one subtask off for the
	// partitions of orders below 4: drift.
	drift := liveStore(t, at)
	off := func(tp assign.TopicPartition) int {
		o, _ := assign.KafkaSplitOwner(tp, 4)
		if tp.Topic == "orders" && tp.Partition < 4 {
			o = (o + 1) % 4
		}
		return o
	}
	drift.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: at.Add(20 * time.Second), FlinkVersion: "2.2.1", Jobs: []flink.JobSnapshot{{
		ID: tJob, Name: "orders <enrichment>", State: "RUNNING", StartTime: at,
		Vertices: []flink.VertexSnapshot{{ID: tSource, Name: "Source: Kafka Source", Parallelism: 4, MaxParallelism: 128, Source: true,
			Kafka: sourceObs(off), Subtasks: subtasks(4)}}}}})

	// An in-place rescale 4 → 6, every subtask running, whose moved
	// partitions are listed under the old and the new subtask with no value
	// deciding: undetermined, placed where the restore model puts them.
	undetermined := liveStore(t, at)
	fresh4 := func(tp assign.TopicPartition) int { o, _ := assign.KafkaSplitOwner(tp, 4); return o }
	res, err := assign.Restore(assign.RestoreInput{Topics: liveTopics, History: []int{4, 6}, ConnectorLine: assign.ConnectorLine5})
	if err != nil {
		t.Fatal(err)
	}
	o46 := func(tp assign.TopicPartition) int { o, _ := res.Assignment.OwnerOf(tp); return o }
	snap := withheldJob(at.Add(20 * time.Second))
	v := &snap.Jobs[0].Vertices[0]
	v.Parallelism, v.Subtasks = 6, subtasks(6)
	v.Kafka = sourceObs(o46)
	for i := range v.Kafka.States {
		s := &v.Kafka.States[i]
		s.Evidence = flink.EvidenceCurrent
		tp := assign.TopicPartition{Topic: strings.ReplaceAll(s.Topic, "_", "."), Partition: s.Partition}
		if fresh4(tp) != o46(tp) {
			s.Evidence = flink.EvidenceUnconfirmed
			old := *s
			old.Subtask = fresh4(tp)
			v.Kafka.States = append(v.Kafka.States, old)
		}
	}
	undetermined.UpdateFlink(snap)

	withheld := liveStore(t, at)
	withheld.UpdateFlink(withheldJob(at.Add(20 * time.Second)))

	// Records deleted before the source and a group read them.
	lost := deletedBeforeReadStore(t, at, false, false)
	lost.UpdateKafka(&kafka.Snapshot{Cluster: "prod", CollectedAt: at.Add(20 * time.Second), Topics: []kafka.Topic{{Name: "orders", Partitions: []kafka.Partition{
		{Partition: 0, Start: 0, End: 5000, Freshness: kafka.Freshness{UpdatedAt: at.Add(20 * time.Second)}},
		{Partition: 1, Start: 2600, End: 5000, Freshness: kafka.Freshness{UpdatedAt: at.Add(20 * time.Second)}},
	}}}, Groups: []kafka.Group{{Name: "orders-app", State: "Empty", Freshness: kafka.Freshness{UpdatedAt: at.Add(20 * time.Second)},
		Partitions: []kafka.GroupPartition{{Topic: "orders", Partition: 1, Committed: 2500, Lag: 2500}}}}})

	// A group's commits on a stale partition, a failed one and a topic
	// the poll does not list: only the fresh partitions' lag is exported.
	staleGroup := deletedBeforeReadStore(t, at, false, false)
	var parts []kafka.Partition
	var commits []kafka.GroupPartition
	for p := range int32(4) {
		kp := kafka.Partition{Partition: p, End: 6000, Freshness: kafka.Freshness{UpdatedAt: at.Add(20 * time.Second)}}
		switch p {
		case 2:
			kp.Err = errors.New("NOT_LEADER_OR_FOLLOWER")
		case 3:
			kp.Freshness = kafka.Freshness{UpdatedAt: at, Stale: true, Age: 20 * time.Second}
		}
		parts = append(parts, kp)
		commits = append(commits, kafka.GroupPartition{Topic: "orders", Partition: p, Committed: 5000, Lag: 1000})
	}
	commits = append(commits, kafka.GroupPartition{Topic: "unlisted", Partition: 0, Committed: 10, Lag: 5})
	staleGroup.UpdateKafka(&kafka.Snapshot{Cluster: "prod", CollectedAt: at.Add(20 * time.Second), Topics: []kafka.Topic{{Name: "orders", Partitions: parts}},
		Groups: []kafka.Group{{Name: "orders-app", State: "Empty", Freshness: kafka.Freshness{UpdatedAt: at.Add(20 * time.Second)}, Partitions: commits}}})

	return map[string]*live.Store{
		"stale-group":  staleGroup,
		"live":         liveStore(t, at),
		"restored":     restored,
		"guessed":      guessedStore(t, at, nil),
		"drift":        drift,
		"undetermined": undetermined,
		"withheld":     withheld,
		"lost":         lost,
		"stale-kafka":  deletedBeforeReadStore(t, at, true, false),
		"stale-flink":  deletedBeforeReadStore(t, at, false, true),
		"retention":    retentionStore(t, at, 120000),
		"eventtime":    eventTimeStore(t, at),
		"starved":      eventTimeStoreAt(t, at, 6),
	}
}

// skewscopeExposition scrapes /metrics of a server on st and keeps
// skewscope's own series with their HELP and TYPE lines (the Go and
// process collectors' vary from run to run), each family's series sorted:
// the writer keeps a family's lines together, as the format requires
// (checked here), in the order the figures come.
func skewscopeExposition(t *testing.T, st *live.Store) string {
	t.Helper()
	s, err := NewServer(Options{Live: st})
	if err != nil {
		t.Fatal(err)
	}
	code, body := do(t, s, "GET", "/metrics", nil)
	if code != 200 {
		t.Fatalf("GET /metrics = %d", code)
	}
	return sortedFamilies(t, string(body), "skewscope_")
}

// sortedFamilies returns the families of an exposition whose names start
// with prefix, sorted by name, each as its HELP and TYPE lines and its
// series sorted. A family whose lines are not together fails t.
func sortedFamilies(t testing.TB, body, prefix string) string {
	t.Helper()
	type fam struct {
		head   []string
		series []string
	}
	fams := map[string]*fam{}
	var cur string
	done := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" {
			continue
		}
		name := line
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, _, _ = strings.Cut(rest, " ")
		} else if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, _, _ = strings.Cut(rest, " ")
		} else if i := strings.IndexAny(line, "{ "); i >= 0 {
			name = line[:i]
		}
		if name != cur {
			if done[name] {
				t.Errorf("/metrics: the lines of %s are not together", name)
			}
			done[cur], cur = true, name
		}
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		f := fams[name]
		if f == nil {
			f = &fam{}
			fams[name] = f
		}
		if strings.HasPrefix(line, "# ") {
			f.head = append(f.head, line)
		} else {
			f.series = append(f.series, line)
		}
	}
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(fams)) {
		f := fams[name]
		slices.Sort(f.series)
		for _, l := range append(f.head, f.series...) {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestMetricsExpositionUnchanged compares the whole /metrics exposition
// of skewscope's series (names, HELP, TYPE, labels and their order,
// values) of several stores with the one recorded in testdata/metrics.
func TestMetricsExpositionUnchanged(t *testing.T) {
	for name, st := range metricsStores(t) {
		t.Run(name, func(t *testing.T) {
			got := skewscopeExposition(t, st)
			path := filepath.Join("testdata", "metrics", name+".txt")
			if *updateMetrics {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update-metrics to record it)", err)
			}
			if want := sortedFamilies(t, string(want), "skewscope_"); got != want {
				t.Errorf("/metrics of %s differs from %s:\n%s", name, path, lineDiff(string(want), got))
			}
		})
	}
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	w, g := in(want), in(got)
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if !g[l] {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if !w[l] {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	if b.Len() == 0 {
		return "(same lines, another order)"
	}
	return b.String()
}

// TestMetricsScrapeBuildsNoView checks that a scrape reads the store's
// figures without building a page view: a scrape of many jobs would
// otherwise cost what every page of them costs.
func TestMetricsScrapeBuildsNoView(t *testing.T) {
	for name, st := range metricsStores(t) {
		s, err := NewServer(Options{Live: st})
		if err != nil {
			t.Fatal(err)
		}
		before := st.ViewsBuilt()
		if code, _ := do(t, s, "GET", "/metrics", nil); code != 200 {
			t.Fatalf("%s: GET /metrics = %d", name, code)
		}
		if n := st.ViewsBuilt() - before; n != 0 {
			t.Errorf("%s: a scrape of /metrics built %d page views, want none", name, n)
		}
	}
}

// scrapeStore holds 50 running jobs of 3 vertices at p = 64 (a Kafka
// source reading a topic of 256 partitions with a consumer group, a keyed
// vertex and a sink), after two Kafka polls and one Flink poll.
func scrapeStore(b *testing.B) (*live.Store, *flink.Snapshot) {
	const jobs, p, parts = 50, 64, 256
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := live.New(live.Options{Now: func() time.Time { return at.Add(20 * time.Second) }})
	for i, end := range []int64{1_000_000, 1_050_000} {
		ks := &kafka.Snapshot{Cluster: "prod", CollectedAt: at.Add(time.Duration(i) * 10 * time.Second)}
		ks.MetadataAt = ks.CollectedAt
		for j := range jobs {
			kt := kafka.Topic{Name: fmt.Sprintf("topic-%02d", j)}
			g := kafka.Group{Name: fmt.Sprintf("group-%02d", j), State: "Empty", Freshness: kafka.Freshness{UpdatedAt: ks.CollectedAt}}
			for q := range int32(parts) {
				kt.Partitions = append(kt.Partitions, kafka.Partition{Partition: q, End: end + int64(q), Rate: float64(q % 97), RateOK: i > 0,
					Freshness: kafka.Freshness{UpdatedAt: ks.CollectedAt}})
				g.Partitions = append(g.Partitions, kafka.GroupPartition{Topic: kt.Name, Partition: q, Committed: 990_000, Lag: end + int64(q) - 990_000})
			}
			ks.Topics = append(ks.Topics, kt)
			ks.Groups = append(ks.Groups, g)
		}
		st.UpdateKafka(ks)
	}
	var js []flink.JobSnapshot
	for j := range jobs {
		topics := []assign.Topic{{Name: fmt.Sprintf("topic-%02d", j), Partitions: parts}}
		sub := make([]flink.SubtaskSnapshot, p)
		for i := range sub {
			sub[i] = flink.SubtaskSnapshot{Index: i, Status: "RUNNING", BusyRatio: 0.01 * float64(i%50), RecordsInPerSecond: float64(10 + i), RecordsOutPerSecond: float64(10 + i), StateSize: 1000}
		}
		owner := func(tp assign.TopicPartition) int { o, _ := assign.KafkaSplitOwner(tp, p); return o }
		js = append(js, flink.JobSnapshot{ID: fmt.Sprintf("%032x", j), Name: fmt.Sprintf("job-%02d", j), State: "RUNNING", StartTime: at,
			Vertices: []flink.VertexSnapshot{
				{ID: fmt.Sprintf("%031xa", j), Name: "Source: Kafka Source", Parallelism: p, MaxParallelism: 128, Source: true,
					Kafka: sourceObsOf(topics, owner), Subtasks: sub, Freshness: flink.Freshness{UpdatedAt: at.Add(15 * time.Second)}},
				{ID: fmt.Sprintf("%031xb", j), Name: "Enrich", Parallelism: p, MaxParallelism: 128, Keyed: true, Subtasks: sub},
				{ID: fmt.Sprintf("%031xc", j), Name: "Sink: Kafka Sink", Parallelism: p, MaxParallelism: 128, Subtasks: sub},
			}})
	}
	fs := &flink.Snapshot{Endpoint: "jm", CollectedAt: at.Add(15 * time.Second), FlinkVersion: "2.2.1", Jobs: js}
	st.UpdateFlink(fs)
	return st, fs
}

// BenchmarkMetricsScrape is one scrape of /metrics (encoding included) of
// 50 jobs × 3 vertices at p = 64, between two updates: the State's facts
// are computed by the first scrape and read by the others.
func BenchmarkMetricsScrape(b *testing.B) {
	st, _ := scrapeStore(b)
	s, err := NewServer(Options{Live: st})
	if err != nil {
		b.Fatal(err)
	}
	if _, body := do(b, s, "GET", "/metrics", nil); !strings.Contains(string(body), `skewscope_source_partition_lag_records{cluster="prod",endpoint="jm",job_id="00000000000000000000000000000031"`) {
		b.Fatal("/metrics lacks the last job's partition lag")
	}
	for _, enc := range []string{"", "gzip"} {
		b.Run("encoding="+cmp.Or(enc, "identity"), func(b *testing.B) {
			var w countingWriter
			b.ReportAllocs()
			for b.Loop() {
				w = countingWriter{header: http.Header{}}
				req := httptest.NewRequest("GET", "/metrics", nil)
				if enc != "" {
					req.Header.Set("Accept-Encoding", enc)
				}
				s.ServeHTTP(&w, req)
				if w.code != 0 && w.code != 200 {
					b.Fatalf("GET /metrics = %d", w.code)
				}
			}
			b.ReportMetric(float64(w.n)/(1<<20), "MiB/scrape")
		})
	}
}

// BenchmarkMetricsScrapeAfterUpdate is a Flink poll of the same 50 jobs
// and then one scrape: the update's new State computes its facts for the
// scrape.
func BenchmarkMetricsScrapeAfterUpdate(b *testing.B) {
	st, snap := scrapeStore(b)
	s, err := NewServer(Options{Live: st})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		st.UpdateFlink(snap)
		w := countingWriter{header: http.Header{}}
		s.ServeHTTP(&w, httptest.NewRequest("GET", "/metrics", nil))
		if w.code != 0 && w.code != 200 {
			b.Fatalf("GET /metrics = %d", w.code)
		}
	}
}

// countingWriter is a ResponseWriter that counts the body's bytes and
// keeps none, as a scraper's socket does.
type countingWriter struct {
	header http.Header
	code   int
	n      int
}

func (w *countingWriter) Header() http.Header  { return w.header }
func (w *countingWriter) WriteHeader(code int) { w.code = code }
func (w *countingWriter) Write(b []byte) (int, error) {
	w.n += len(b)
	return len(b), nil
}
