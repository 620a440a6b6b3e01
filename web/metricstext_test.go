package web

import (
	"compress/gzip"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The writer's label values are escaped as the format asks and read back
// unchanged by Prometheus's own parser; bytes that are not UTF-8 become
// U+FFFD rather than a scrape Prometheus refuses.
func TestExpositionEscapesAndParses(t *testing.T) {
	rec := httptest.NewRecorder()
	rec.Header().Set("Content-Type", "text/plain; version=0.0.4")
	x := newExposition(rec)
	weird := "a\\b \"quoted\"\nline \u202ertl"
	x.add(descGroupLag, 7, "prod", weird, "orders", "3")
	x.add(descGroupLag, math.Inf(1), "prod", "g\xffh", "orders", "4")
	x.add(descWSConnections, 0.5)
	x.add(descPartitionLost, 12, "jm", "prod", "orders", "1", "job", "Source: Kafka")
	if err := x.flush(); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(rec.Body.String()))
	if err != nil {
		t.Fatalf("Prometheus's parser refuses the exposition: %v\n%s", err, rec.Body.String())
	}
	g := fams["skewscope_group_partition_lag_records"]
	if g == nil || len(g.Metric) != 2 {
		t.Fatalf("group lag family = %v, want 2 series", g)
	}
	got := map[string]float64{}
	for _, m := range g.Metric {
		for _, l := range m.Label {
			if l.GetName() == "group" {
				got[l.GetValue()] = m.GetGauge().GetValue()
			}
		}
	}
	if v, ok := got[weird]; !ok || v != 7 {
		t.Errorf("group %q read back as %v (all: %v)", weird, v, got)
	}
	if v, ok := got["g\uFFFDh"]; !ok || !math.IsInf(v, 1) {
		t.Errorf("invalid UTF-8 group read back as %v (all: %v)", v, got)
	}
	if c := fams["skewscope_source_partition_records_lost_total"]; c == nil || c.GetType().String() != "COUNTER" {
		t.Errorf("records lost family = %v, want a counter", c)
	}
	if w := fams["skewscope_websocket_connections"]; w == nil || w.Metric[0].GetGauge().GetValue() != 0.5 {
		t.Errorf("websocket connections = %v, want 0.5", w)
	}
}

// A family given the wrong count of label values is a programming error,
// caught at once.
func TestExpositionRefusesWrongLabelCount(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("add with 1 label value of 4 did not panic")
		}
	}()
	newExposition(io.Discard).add(descGroupLag, 1, "prod")
}

// A scraper that offers gzip gets the exposition gzipped; one that offers
// none gets it plain.
func TestMetricsGzip(t *testing.T) {
	s, err := NewServer(Options{Live: liveStore(t, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		accept string
		gz     bool
	}{{"gzip", true}, {"deflate, gzip;q=0.5", true}, {"identity", false}, {"", false}} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		if c.accept != "" {
			req.Header.Set("Accept-Encoding", c.accept)
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("Accept-Encoding %q: GET /metrics = %d", c.accept, rec.Code)
		}
		var body io.Reader = rec.Body
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
			t.Errorf("Content-Type = %q, want the text format 0.0.4", ct)
		}
		if got := rec.Header().Get("Content-Encoding") == "gzip"; got != c.gz {
			t.Errorf("Accept-Encoding %q: gzipped = %v, want %v", c.accept, got, c.gz)
		}
		if c.gz {
			zr, err := gzip.NewReader(rec.Body)
			if err != nil {
				t.Fatal(err)
			}
			body = zr
		}
		b, _ := io.ReadAll(body)
		if !strings.Contains(string(b), "\nskewscope_backend_up{kind=\"kafka\",name=\"prod\"} 1\n") {
			t.Errorf("Accept-Encoding %q: the exposition lacks the Kafka backend's up series:\n%.2000s", c.accept, b)
		}
	}
}
