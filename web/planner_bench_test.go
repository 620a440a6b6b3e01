package web

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// bigPlanQuery is the scale target of the planner: 10,000 partitions over
// 20 topics, p = 1024 → 1280, maxParallelism 32768, with a rate for every
// partition.
func bigPlanQuery() string {
	q := url.Values{"parallelism": {"1024"}, "target": {"1280"}, "maxParallelism": {"32768"}}
	var rates strings.Builder
	for i := range 20 {
		name := fmt.Sprintf("events-%02d", i)
		n := 500
		q.Add("topic", name+":"+strconv.Itoa(n))
		for p := range n {
			fmt.Fprintf(&rates, "%s,%d,%d\n", name, p, 100+(p*37+i*11)%900)
		}
	}
	q.Set("rates", rates.String())
	return q.Encode()
}

// BenchmarkPlannerPage10k renders the planner for bigPlanQuery and reports
// server time per page (ms/page) and the gzip-compressed size (gzip-KB).
func BenchmarkPlannerPage10k(b *testing.B) {
	s := newTestServer(b)
	target := "/plan?" + bigPlanQuery()
	var gz, raw int
	for b.Loop() {
		req := httptest.NewRequest("GET", target, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		b.StopTimer()
		if rec.Code != 200 {
			b.Fatalf("GET /plan = %d: %.300s", rec.Code, rec.Body)
		}
		gz = rec.Body.Len()
		zr, err := gzip.NewReader(bytes.NewReader(rec.Body.Bytes()))
		if err != nil {
			b.Fatalf("response is not gzip: %v", err)
		}
		n, _ := io.Copy(io.Discard, zr)
		raw = int(n)
		b.StartTimer()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/page") // server time only
	b.ReportMetric(float64(gz)/1024, "gzip-KB")
	b.ReportMetric(float64(raw)/1024, "raw-KB")
}
