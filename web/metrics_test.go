package web

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
)

// deletedBeforeReadStore returns a store whose job reads "orders" (4
// partitions) at p=2 as a fresh start places them, every reader at offset
// 1999 (next to read: 2000), and whose Kafka poll gives partition 1 a log
// start of 2600 and the others 0. staleKafka marks partition 3's poll
// failed; staleFlink marks the source vertex's poll failed.
func deletedBeforeReadStore(t *testing.T, at time.Time, staleKafka, staleFlink bool) *live.Store {
	t.Helper()
	st := live.New(live.Options{Now: func() time.Time { return at.Add(15 * time.Second) }})
	topics := []assign.Topic{{Name: "orders", Partitions: 4}}
	for i := range 2 {
		ks := &kafka.Snapshot{Cluster: "prod", CollectedAt: at.Add(time.Duration(i) * 10 * time.Second)}
		topic := kafka.Topic{Name: "orders"}
		for p := range int32(4) {
			kp := kafka.Partition{Partition: p, Start: 0, End: 3000 + int64(i)*1000, Rate: 100, RateOK: i > 0,
				Freshness: kafka.Freshness{UpdatedAt: ks.CollectedAt}}
			if p == 1 {
				kp.Start = 2600
			}
			if i == 1 && p == 3 && staleKafka {
				kp.End, kp.Freshness = 3000, kafka.Freshness{UpdatedAt: at, Stale: true, Age: 10 * time.Second}
			}
			topic.Partitions = append(topic.Partitions, kp)
		}
		ks.Topics = []kafka.Topic{topic}
		st.UpdateKafka(ks)
	}
	var ids []string
	var vals []flink.Metric
	for _, tp := range assign.Partitions(topics) {
		o, _ := assign.KafkaSplitOwner(tp, 2)
		base := fmt.Sprintf("%d.Source__Kafka_Source.KafkaSourceReader.topic.orders.partition.%d.", o, tp.Partition)
		ids = append(ids, base+"currentOffset", base+"committedOffset")
		vals = append(vals, flink.Metric{ID: base + "currentOffset", Raw: "1999"}, flink.Metric{ID: base + "committedOffset", Raw: "1500"})
	}
	obs := flink.ParseKafkaSourceMetricIDs(ids)
	obs.ApplyValues(vals)
	subtasks := make([]flink.SubtaskSnapshot, 2)
	for i := range subtasks {
		subtasks[i] = flink.SubtaskSnapshot{Index: i, Status: "RUNNING", BusyRatio: 0.5, IdleRatio: 0.5, RecordsInPerSecond: 100, RecordsOutPerSecond: 100, StateSize: -1}
	}
	fresh := flink.Freshness{UpdatedAt: at.Add(10 * time.Second)}
	if staleFlink {
		fresh = flink.Freshness{UpdatedAt: at, Stale: true, Age: 10 * time.Second}
	}
	st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: at.Add(10 * time.Second), FlinkVersion: "2.2.1", Jobs: []flink.JobSnapshot{{
		ID: tJob, Name: "orders/v2", State: "RUNNING", StartTime: at,
		Vertices: []flink.VertexSnapshot{{ID: tSource, Name: "Source: Kafka Source", Parallelism: 2, MaxParallelism: 128, Source: true,
			Kafka: obs, Subtasks: subtasks, BackpressureLevel: "ok", Freshness: fresh}},
	}}})
	return st
}

// scrapeSeries returns the lines of a scrape of /metrics that hold a series
// of the metric, sorted.
func scrapeSeries(t *testing.T, st *live.Store, metric string) []string {
	t.Helper()
	ts := newLiveServer(t, st, nil)
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, metric+"{") {
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return out
}

func TestMetricsCountRecordsDeletedBeforeRead(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	const metric = "skewscope_source_partition_behind_log_start_records"
	got := scrapeSeries(t, deletedBeforeReadStore(t, at, false, false), metric)
	var want []string
	for p := range int32(4) {
		o, _ := assign.KafkaSplitOwner(assign.TopicPartition{Topic: "orders", Partition: p}, 2)
		n := 0 // the reader is past the log start
		if p == 1 {
			n = 2600 - 2000 // offsets 2000..2599 were deleted before it read them
		}
		want = append(want, fmt.Sprintf(`skewscope_source_partition_behind_log_start_records{cluster="prod",endpoint="jm",job_id="%s",job_name="orders/v2",partition="%d",subtask="%d",topic="orders",vertex_id="%s",vertex_name="Source: Kafka Source"} %d`,
			tJob, p, o, tSource, n))
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("/metrics lacks %s\nhas:\n%s", w, strings.Join(got, "\n"))
		}
	}
	if lag := scrapeSeries(t, deletedBeforeReadStore(t, at, false, false), "skewscope_source_partition_lag_records"); len(lag) != 4 {
		t.Errorf("/metrics has %d lag series with both backends fresh, want 4:\n%s", len(lag), strings.Join(lag, "\n"))
	}
	if len(got) != len(want) {
		t.Errorf("/metrics has %d behind-log-start series, want %d (one per partition):\n%s", len(got), len(want), strings.Join(got, "\n"))
	}

	// A frozen figure on either side would count records that were read.
	for _, c := range []struct {
		name                   string
		staleKafka, staleFlink bool
	}{{"kafka poll failed", true, false}, {"flink poll failed", false, true}} {
		st := deletedBeforeReadStore(t, at, c.staleKafka, c.staleFlink)
		if got := scrapeSeries(t, st, metric); len(got) != 0 {
			t.Errorf("%s: /metrics has behind-log-start series, want none while a figure is stale:\n%s", c.name, strings.Join(got, "\n"))
		}
		// Nor a lag where a side is frozen, which would move as if the job
		// did: none while Flink is stale, none for the stale partition.
		for _, m := range []string{"skewscope_source_partition_lag_records", "skewscope_source_partition_lag_seconds"} {
			got := scrapeSeries(t, st, m)
			want := 0
			if c.staleKafka {
				want = 3
			}
			if len(got) != want || (c.staleKafka && strings.Contains(strings.Join(got, "\n"), `partition="3"`)) {
				t.Errorf("%s: /metrics has %d %s series, want %d (none of the stale partition):\n%s", c.name, len(got), m, want, strings.Join(got, "\n"))
			}
		}
		if got := scrapeSeries(t, st, "skewscope_backend_up"); len(got) == 0 {
			t.Errorf("%s: /metrics has no skewscope_backend_up", c.name)
		}
	}
}

// TestMetricsCountRecordsLost exports the records deleted unread as
// counters, per source by name and per group, every partition read
// listed (0 when nothing was lost); none while the source's figures are
// stale, since nothing was counted from them.
func TestMetricsCountRecordsLost(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	const metric = "skewscope_source_partition_records_lost_total"
	st := deletedBeforeReadStore(t, at, false, false)
	ks := &kafka.Snapshot{Cluster: "prod", CollectedAt: at.Add(20 * time.Second), Topics: []kafka.Topic{{Name: "orders", Partitions: []kafka.Partition{
		{Partition: 0, Start: 0, End: 5000, Freshness: kafka.Freshness{UpdatedAt: at.Add(20 * time.Second)}},
		{Partition: 1, Start: 2600, End: 5000, Freshness: kafka.Freshness{UpdatedAt: at.Add(20 * time.Second)}},
	}}}, Groups: []kafka.Group{{Name: "orders-app", State: "Empty", Freshness: kafka.Freshness{UpdatedAt: at.Add(20 * time.Second)},
		Partitions: []kafka.GroupPartition{{Topic: "orders", Partition: 1, Committed: 2500, Lag: 2500}}}}}
	st.UpdateKafka(ks)
	got := strings.Join(scrapeSeries(t, st, metric), "\n")
	var want []string
	for p := range 4 {
		n := 0
		if p == 1 {
			n = 2600 - 2000
		}
		want = append(want, fmt.Sprintf(`%s{cluster="prod",endpoint="jm",job_name="orders/v2",partition="%d",topic="orders",vertex_name="Source: Kafka Source"} %d`, metric, p, n))
	}
	if got != strings.Join(want, "\n") {
		t.Errorf("/metrics %s:\n%s\nwant\n%s", metric, got, strings.Join(want, "\n"))
	}
	const gm = "skewscope_group_partition_records_lost_total"
	if got, want := strings.Join(scrapeSeries(t, st, gm), "\n"), gm+`{cluster="prod",group="orders-app",partition="1",topic="orders"} 100`; got != want {
		t.Errorf("/metrics %s:\n%s\nwant\n%s", gm, got, want)
	}
	if got := scrapeSeries(t, deletedBeforeReadStore(t, at, false, true), metric); len(got) != 0 {
		t.Errorf("stale Flink figures: /metrics has %s series, want none (nothing counted from them):\n%s", metric, strings.Join(got, "\n"))
	}
}

// The websocket bounds' refusals are counted on /metrics by reason, so an
// operator sees a proxy whose browsers share one address's bounds.
func TestMetricsCountWebsocketRefusals(t *testing.T) {
	s := newTestServer(t)
	for range 2 {
		req := httptest.NewRequest("GET", "/ws", nil)
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		req.Header.Set("Origin", "https://evil.example")
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		if w.Code != http.StatusForbidden {
			t.Fatalf("cross-origin websocket handshake = %d, want 403", w.Code)
		}
	}
	code, body := do(t, s, "GET", "/metrics", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics = %d", code)
	}
	for _, want := range []string{
		`skewscope_websocket_refused_total{reason="handshake"} 2`,
		`skewscope_websocket_refused_total{reason="subscribe"} 0`,
		`skewscope_websocket_refused_total{reason="topics"} 0`,
		`skewscope_websocket_refused_total{reason="idle"} 0`,
		`skewscope_websocket_inbound_bytes_total 0`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

// retentionStore returns a store whose job reads "orders" (4 partitions)
// at p=2, written at 100 records/s each; partition 1's reader reads 50
// records/s from 0 (its lag time grows by half a second a second), the
// others keep up. The topic's retention.ms is retentionMs (-1 no limit).
func retentionStore(t *testing.T, at time.Time, retentionMs int64) *live.Store {
	t.Helper()
	now := at
	st := live.New(live.Options{Now: func() time.Time { return now }})
	topics := []assign.Topic{{Name: "orders", Partitions: 4}}
	ret := kafka.Retention{Time: kafka.RetentionLimit{Value: retentionMs, Known: true, Infinite: retentionMs < 0},
		Bytes: kafka.RetentionLimit{Value: -1, Known: true, Infinite: true}, CleanupPolicy: "delete", Freshness: kafka.Freshness{UpdatedAt: at}}
	subtasks := make([]flink.SubtaskSnapshot, 2)
	for i := range subtasks {
		subtasks[i] = flink.SubtaskSnapshot{Index: i, Status: "RUNNING", BusyRatio: 0.5, IdleRatio: 0.5, RecordsInPerSecond: 100, RecordsOutPerSecond: 100, StateSize: -1}
	}
	for i := range 10 {
		now = at.Add(time.Duration(i) * 10 * time.Second)
		end := int64(1000 * i)
		ks := &kafka.Snapshot{Cluster: "prod", CollectedAt: now}
		topic := kafka.Topic{Name: "orders", Retention: ret}
		for p := range int32(4) {
			topic.Partitions = append(topic.Partitions, kafka.Partition{Partition: p, End: end, Rate: 100, RateOK: i > 0, Freshness: kafka.Freshness{UpdatedAt: now}})
		}
		ks.Topics = []kafka.Topic{topic}
		st.UpdateKafka(ks)
		var ids []string
		var vals []flink.Metric
		for _, tp := range assign.Partitions(topics) {
			o, _ := assign.KafkaSplitOwner(tp, 2)
			base := fmt.Sprintf("%d.Source__Kafka_Source.KafkaSourceReader.topic.orders.partition.%d.", o, tp.Partition)
			cur := end - 1
			if tp.Partition == 1 {
				cur = end/2 - 1
			}
			ids = append(ids, base+"currentOffset", base+"committedOffset")
			vals = append(vals, flink.Metric{ID: base + "currentOffset", Raw: fmt.Sprint(cur)}, flink.Metric{ID: base + "committedOffset", Raw: fmt.Sprint(max(cur, 0))})
		}
		obs := flink.ParseKafkaSourceMetricIDs(ids)
		obs.ApplyValues(vals)
		st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: now, FlinkVersion: "2.2.1", Jobs: []flink.JobSnapshot{{
			ID: tJob, Name: "orders/v2", State: "RUNNING", StartTime: at,
			Vertices: []flink.VertexSnapshot{{ID: tSource, Name: "Source: Kafka Source", Parallelism: 2, MaxParallelism: 128, Source: true,
				Kafka: obs, Subtasks: slices.Clone(subtasks), BackpressureLevel: "ok", Freshness: flink.Freshness{UpdatedAt: now}}},
		}}})
	}
	return st
}

// The time to retention is exported for the partition whose lag time
// grows toward a finite retention, with the partition lag's labels; not
// for the partitions that keep up, nor without a retention limit.
func TestMetricsTimeToRetention(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	const metric = "skewscope_source_partition_time_to_retention_seconds"
	got := scrapeSeries(t, retentionStore(t, at, 120000), metric)
	o, _ := assign.KafkaSplitOwner(assign.TopicPartition{Topic: "orders", Partition: 1}, 2)
	// At 90 s the lag time is 45 s and grows by 0.5 s/s: (120 − 45) / 0.5.
	want := fmt.Sprintf(`%s{cluster="prod",endpoint="jm",job_id="%s",job_name="orders/v2",partition="1",subtask="%d",topic="orders",vertex_id="%s",vertex_name="Source: Kafka Source"} 150`, metric, tJob, o, tSource)
	if len(got) != 1 || got[0] != want {
		t.Errorf("/metrics %s:\n%s\nwant\n%s", metric, strings.Join(got, "\n"), want)
	}
	if got := scrapeSeries(t, retentionStore(t, at, -1), metric); len(got) != 0 {
		t.Errorf("no retention limit: /metrics has %s series, want none:\n%s", metric, strings.Join(got, "\n"))
	}
}
