package web

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

// pushStores are two states of a source vertex of 10,000 partitions (20
// topics × 500) at parallelism 64, one Flink poll apart: 15 minutes of
// 2.5 s polls fill the sparklines (360 samples), and the later state has
// one more, the oldest gone. They are built once for the benchmarks.
func pushStores() (before, after *live.Store) {
	pushOnce.Do(func() { pushBefore, pushAfter = buildPushStores() })
	return pushBefore, pushAfter
}

var (
	pushOnce              sync.Once
	pushBefore, pushAfter *live.Store
)

func buildPushStores() (before, after *live.Store) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	var topics []assign.Topic
	for i := range 20 {
		topics = append(topics, assign.Topic{Name: fmt.Sprintf("topic-%02d", i), Partitions: 500})
	}
	busy := func(int) float64 { return 0.5 }
	return kafkaSourceStore(topics, 64, 128, busy, 360, at), kafkaSourceStore(topics, 64, 128, busy, 361, at)
}

func pushUpdate(b *testing.B, st *live.Store) views.Update {
	vv, err := st.State().Vertex(tJob, tSource, live.VertexQuery{Color: "lag", Highlight: -1})
	if err != nil || vv.Prediction.Total != 10_000 {
		b.Fatal(err)
	}
	return vertexUpdate(b, vv)
}

// reportSize reports an encoded update's size, and what permessage-deflate
// sends (the hub compresses each update once).
func reportSize(b *testing.B, data []byte) {
	var z bytes.Buffer
	fw, _ := flate.NewWriter(&z, flate.DefaultCompression)
	fw.Write(data)
	fw.Close()
	b.ReportMetric(float64(len(data))/1024, "KiB/update")
	b.ReportMetric(float64(z.Len())/1024, "KiB/deflated")
}

// BenchmarkVertexPush10k is the server's work for one push of a source
// vertex of 10,000 partitions after the first, as publish does once per
// update whatever the number of subscribers: build the view, make the
// compact update, take the sparklines' new samples after the last
// update's (views.SparkAppends) and encode that change. It reports the
// encoded size.
func BenchmarkVertexPush10k(b *testing.B) {
	st0, st := pushStores()
	prev := pushUpdate(b, st0)
	var last []byte
	b.ResetTimer()
	for b.Loop() {
		u := pushUpdate(b, st)
		change, ok := views.SparkAppends(prev, u, sparkAxisKey)
		if !ok {
			b.Fatal("the update does not continue the last")
		}
		data, err := json.Marshal(change)
		if err != nil {
			b.Fatal(err)
		}
		last = data
	}
	b.StopTimer()
	reportSize(b, last)
}

// BenchmarkVertexPush10kFirst is the first push of that vertex to a
// socket: the whole update, every sparkline's samples with it (encoded
// once, for the sockets that need it).
func BenchmarkVertexPush10kFirst(b *testing.B) {
	_, st := pushStores()
	var last []byte
	b.ResetTimer()
	for b.Loop() {
		data, err := json.Marshal(pushUpdate(b, st))
		if err != nil {
			b.Fatal(err)
		}
		last = data
	}
	b.StopTimer()
	reportSize(b, last)
}
