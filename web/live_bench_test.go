package web

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/skewscope/skewscope/internal/livebench"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

// pushStates are two states of a source vertex of 10,000 partitions (20
// topics × 500) at parallelism 64, one poll apart, as internal/livebench
// feeds them to the store (and cmd/wsload serves them): 15 minutes of
// 2.5 s polls fill the sparklines (360 samples), and the later state has
// one more, the oldest gone, and moved figures. They are built once for
// the benchmarks.
func pushStates() (before, after *live.State) {
	pushOnce.Do(func() { pushBefore, pushAfter = buildPushStates() })
	return pushBefore, pushAfter
}

var (
	pushOnce              sync.Once
	pushBefore, pushAfter *live.State
)

func buildPushStates() (before, after *live.State) {
	const poll = 2500 * time.Millisecond
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	src := livebench.New(livebench.Config{Partitions: 10_000, Parallelism: 64, MaxParallelism: 128, Seed: 1},
		live.Options{Now: func() time.Time { return at.Add(poll + time.Second) }})
	src.Fill(360, poll, at)
	before = src.Store().State()
	src.Poll(at.Add(poll))
	return before, src.Store().State()
}

func pushUpdate(b *testing.B, st *live.State) views.Update {
	vv, err := st.Vertex(livebench.Job, livebench.Vertex, live.VertexQuery{Color: "lag", Highlight: -1})
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
// update's (views.ChangeSince) and encode that change. It reports the
// encoded size.
func BenchmarkVertexPush10k(b *testing.B) {
	st0, st := pushStates()
	prev := pushUpdate(b, st0)
	var last []byte
	b.ResetTimer()
	for b.Loop() {
		u := pushUpdate(b, st)
		change, ok := views.ChangeSince(prev, u, sparkAxisKey)
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
	_, st := pushStates()
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
