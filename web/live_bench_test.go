package web

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
)

// BenchmarkVertexPush10k is the server's work for one push of a source
// vertex of 10,000 partitions (20 topics × 500) at parallelism 64: build the
// view, make the compact update and encode it, as publishAll does once per
// update whatever the number of subscribers. It reports the encoded size.
func BenchmarkVertexPush10k(b *testing.B) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var topics []assign.Topic
	for i := range 20 {
		topics = append(topics, assign.Topic{Name: fmt.Sprintf("topic-%02d", i), Partitions: 500})
	}
	st := live.New(live.Options{Now: func() time.Time { return at.Add(20 * time.Second) }})
	for i, end := range []int64{1_000_000, 1_050_000} {
		ks := &kafka.Snapshot{Cluster: "prod", CollectedAt: at.Add(time.Duration(i) * 10 * time.Second)}
		for _, t := range topics {
			kt := kafka.Topic{Name: t.Name}
			for p := range t.Partitions {
				kt.Partitions = append(kt.Partitions, kafka.Partition{Partition: int32(p), End: end + int64(p*37), Rate: float64(p % 97), RateOK: i > 0,
					Freshness: kafka.Freshness{UpdatedAt: ks.CollectedAt}})
			}
			ks.Topics = append(ks.Topics, kt)
		}
		st.UpdateKafka(ks)
	}
	var ids []string
	var vals []flink.Metric
	for _, tp := range assign.Partitions(topics) {
		o, _ := assign.KafkaSplitOwner(tp, 64)
		base := fmt.Sprintf("%d.Source__Kafka_Source.KafkaSourceReader.topic.%s.partition.%d.", o, tp.Topic, tp.Partition)
		ids = append(ids, base+"currentOffset", base+"committedOffset")
		vals = append(vals, flink.Metric{ID: base + "currentOffset", Raw: fmt.Sprint(1_020_000 + int64(tp.Partition)*13)}, flink.Metric{ID: base + "committedOffset", Raw: "1000000"})
	}
	obs := flink.ParseKafkaSourceMetricIDs(ids)
	obs.ApplyValues(vals)
	subs := make([]flink.SubtaskSnapshot, 64)
	for i := range subs {
		subs[i] = flink.SubtaskSnapshot{Index: i, BusyRatio: 0.5, RecordsOutPerSecond: 100, RecordsInPerSecond: 100, StateSize: -1}
	}
	for i := range 360 { // fill the sparklines: 15 minutes of 2.5 s polls
		st.UpdateFlink(&flink.Snapshot{Endpoint: "jm", CollectedAt: at.Add(10*time.Second + time.Duration(i)*2500*time.Millisecond), Jobs: []flink.JobSnapshot{{ID: tJob, Name: "big", State: "RUNNING",
			Vertices: []flink.VertexSnapshot{{ID: tSource, Name: "Source", Parallelism: 64, MaxParallelism: 128, Source: true, Kafka: obs, Subtasks: subs}}}}})
	}
	var size int
	var last []byte
	b.ResetTimer()
	for b.Loop() {
		vv, err := st.Vertex(tJob, tSource, live.VertexQuery{Color: "lag", Highlight: -1})
		if err != nil || vv.Prediction.Total != 10_000 {
			b.Fatal(err)
		}
		data, err := json.Marshal(vertexUpdate(b, vv))
		if err != nil {
			b.Fatal(err)
		}
		size = len(data)
		last = data
	}
	b.StopTimer()
	// What permessage-deflate sends (the hub compresses each update once).
	var z bytes.Buffer
	fw, _ := flate.NewWriter(&z, flate.DefaultCompression)
	fw.Write(last)
	fw.Close()
	b.ReportMetric(float64(size)/1024, "KiB/update")
	b.ReportMetric(float64(z.Len())/1024, "KiB/deflated")
}
