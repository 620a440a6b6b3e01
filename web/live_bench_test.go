package web

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
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
	// 15 minutes of 2.5 s polls fill the sparklines.
	st := kafkaSourceStore(topics, 64, 128, func(int) float64 { return 0.5 }, 360, at)
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
