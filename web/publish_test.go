package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/live"
)

// TestPublishBuildsOneViewPerQuery: vertex topics that differ only in
// their page's parts or grid share one live view per publish cycle, and
// each topic is encoded once however many sockets watch it: the cost of a
// cycle follows the distinct views, not the sockets or the topics.
func TestPublishBuildsOneViewPerQuery(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	st := liveStore(t, at)
	s, ts := publishServer(t, Options{Live: st})

	topics := []string{
		vertexTopic(tJob, tSource, "lag", nil, nil, gridQuery{}),
		vertexTopic(tJob, tSource, "lag", nil, vertexParts{partGrid}, gridQuery{}),
		vertexTopic(tJob, tSource, "lag", nil, nil, gridQuery{Sort: "lag"}),
		vertexTopic(tJob, tSource, "lag", nil, nil, gridQuery{Topic: "orders"}),
		vertexTopic(tJob, tSource, "lag", []int{2, 4}, nil, gridQuery{}),                   // another query
		vertexTopic(tJob, tSource, "lag", []int{2, 4}, vertexParts{partGrid}, gridQuery{}), // and its parts
		vertexTopic(tJob, tKeyed, "lag", nil, nil, gridQuery{Sort: "busy"}),                // another vertex
		vertexTopic(tJob, tKeyed, "lag", nil, vertexParts{partFigures}, gridQuery{}),       // and its parts
	}
	for _, topic := range topics {
		if _, _, _, _, _, ok := parseVertexTopic(topic); !ok {
			t.Fatalf("parseVertexTopic(%q) refused it", topic)
		}
	}
	for range 5 {
		c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		subscribe(t, c, topics...)
	}
	s.publishAll()
	if got := s.vertexViews.Load(); got != 3 {
		t.Errorf("%d vertex views built for %d topics of 3 (job, vertex, query), want 3", got, len(topics))
	}
	if got := s.hub.Stats().Encoded; got != uint64(len(topics)) {
		t.Errorf("Encoded = %d for %d topics watched by 5 sockets each, want %d", got, len(topics), len(topics))
	}
}

// TestPublishSendsSparklinesOnceThenAppends: a socket's first update of a
// vertex carries its sparklines whole; the next ones only the samples
// after the last it was sent, with that sample's time and the window to
// keep. A socket that subscribes later gets the whole series first, from
// the same publish.
func TestPublishSendsSparklinesOnceThenAppends(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	topics := []assign.Topic{{Name: "a", Partitions: 3}, {Name: "b", Partitions: 2}}
	st := kafkaSourceStore(topics, 2, 128, func(int) float64 { return 0.5 }, 3, at)
	// flinkPoll feeds Flink poll i (2.5 s apart, as kafkaSourceStore's).
	flinkPoll := func(i int) {
		var ids []string
		for _, tp := range assign.Partitions(topics) {
			o, _ := assign.KafkaSplitOwner(tp, 2)
			ids = append(ids, fmt.Sprintf("%d.Source__Kafka_Source.KafkaSourceReader.topic.%s.partition.%d.currentOffset", o, tp.Topic, tp.Partition))
		}
		obs := flink.ParseKafkaSourceMetricIDs(ids)
		var vals []flink.Metric
		for _, id := range ids {
			vals = append(vals, flink.Metric{ID: id, Raw: fmt.Sprint(1_020_000 + 100*i)})
		}
		obs.ApplyValues(vals)
		subs := []flink.SubtaskSnapshot{{Index: 0, BusyRatio: 0.5, RecordsOutPerSecond: 100, StateSize: -1}, {Index: 1, BusyRatio: 0.5, RecordsOutPerSecond: 100, StateSize: -1}}
		st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: at.Add(10*time.Second + time.Duration(i)*2500*time.Millisecond), Jobs: []flink.JobSnapshot{{ID: tJob, Name: "big", State: "RUNNING",
			Vertices: []flink.VertexSnapshot{{ID: tSource, Name: "Source", Parallelism: 2, MaxParallelism: 128, Source: true, Kafka: obs, Subtasks: subs}}}}})
	}
	s, ts := publishServer(t, Options{Live: st})
	dial := func() *websocket.Conn {
		c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		subscribe(t, c, vertexTopic(tJob, tSource, "lag", nil, nil, gridQuery{}))
		return c
	}
	type update struct {
		After *float64
		Keep  int
		Spark map[string][]json.RawMessage
	}
	read := func(c *websocket.Conn) (u update, samples map[string][]float64) {
		t.Helper()
		var msg struct{ Data update }
		if err := json.Unmarshal(readRaw(t, c), &msg); err != nil {
			t.Fatal(err)
		}
		samples = map[string][]float64{}
		for k, v := range msg.Data.Spark {
			var xs []float64
			if err := json.Unmarshal(v[0], &xs); err != nil {
				t.Fatal(err)
			}
			samples[k] = xs
		}
		return msg.Data, samples
	}
	pollTime := func(i int) float64 {
		return float64(at.Add(10*time.Second+time.Duration(i)*2500*time.Millisecond).UnixMilli()) / 1000
	}

	first := dial()
	s.publishAll()
	u, sp := read(first)
	if u.After != nil || len(sp[sparkAxisKey]) != 3 || len(sp["s/0/spark/lag"]) != 3 || len(sp) != 5 {
		t.Fatalf("first update: after %v, sparklines %v; want the axis and 4 sparklines of 3 samples", u.After, sp)
	}
	flinkPoll(3)
	s.publishAll()
	u, sp = read(first)
	if u.After == nil || *u.After != pollTime(2) || u.Keep != 4 {
		t.Fatalf("second update: after %v keep %d, want after %v keep 4", u.After, u.Keep, pollTime(2))
	}
	for k, xs := range sp {
		if len(xs) != 1 {
			t.Errorf("second update: %s carries %v, want the one new sample", k, xs)
		}
	}
	if got := sp[sparkAxisKey]; len(got) != 1 || got[0] != pollTime(3) {
		t.Errorf("second update: new times %v, want [%v]", got, pollTime(3))
	}
	late := dial()
	flinkPoll(4)
	s.publishAll()
	if u, sp = read(first); u.After == nil || *u.After != pollTime(3) || len(sp[sparkAxisKey]) != 1 {
		t.Errorf("third update to the first socket: after %v, times %v", u.After, sp[sparkAxisKey])
	}
	if u, sp = read(late); u.After != nil || len(sp[sparkAxisKey]) != 5 || len(sp["s/1/spark/rate"]) != 5 {
		t.Errorf("first update to a later socket: after %v, sparklines %v; want 5 samples each", u.After, sp)
	}
}

// TestPublishRebuildsOnlyWhatChanged: a poll of one Flink endpoint
// rebuilds the pages of that endpoint's job, not those of a job another
// endpoint runs; a round with no update rebuilds nothing, and a page whose
// figures did not change is rebuilt after republishAfter all the same, so
// its ages move on.
func TestPublishRebuildsOnlyWhatChanged(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	now := at.Add(time.Minute)
	st := live.New(live.Options{Now: func() time.Time { return now }})
	poll := func(endpoint, job string, i int) {
		st.UpdateFlink(&flink.Snapshot{Endpoint: endpoint, CollectedAt: at.Add(time.Duration(i) * time.Second), FlinkVersion: "2.2.1",
			Jobs: []flink.JobSnapshot{{ID: job, Name: "job-" + endpoint, State: "RUNNING", StartTime: at,
				Vertices: []flink.VertexSnapshot{{ID: tKeyed, Name: "Enrich", Parallelism: 4, MaxParallelism: 128, Keyed: true, Subtasks: subtasks(4)}}}}})
	}
	const jobA, jobB = "aaaa0000aaaa0000aaaa0000aaaa0000", "bbbb0000bbbb0000bbbb0000bbbb0000"
	poll("a", jobA, 0)
	poll("b", jobB, 0)
	s, ts := publishServer(t, Options{Live: st, Now: func() time.Time { return now }})
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(ts.URL, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	subscribe(t, c, vertexTopic(jobA, tKeyed, "lag", nil, nil, gridQuery{}), vertexTopic(jobB, tKeyed, "lag", nil, nil, gridQuery{}))

	views := func(step string, want uint64) {
		t.Helper()
		if got := s.vertexViews.Load(); got != want {
			t.Errorf("%s: %d vertex views built in all, want %d", step, got, want)
		}
	}
	s.publishAll()
	views("first round", 2)
	poll("a", jobA, 1)
	s.publishAll()
	views("after a poll of endpoint a", 3)
	s.publishAll()
	views("a round with no update", 3)
	now = now.Add(republishAfter)
	s.publishAll()
	views("a round republishAfter later", 5)
}

// publishServer serves opts (its websocket accepting clients without an
// Origin) with the hub running and no publish loop: the test publishes.
func publishServer(t *testing.T, opts Options) (*Server, *httptest.Server) {
	t.Helper()
	opts.WebSocket.AllowNoOrigin = true
	s, err := NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.hub.Run(ctx); close(done) }()
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); cancel(); <-done })
	return s, ts
}
