package flink

import (
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestMetricURLCache: a vertex's request URLs are built once per id set,
// again when the ids change, and swept when a poll no longer asks for them;
// the cached requests are the ones built afresh.
func TestMetricURLCache(t *testing.T) {
	c, err := NewClient("http://jm:8081/flink/")
	if err != nil {
		t.Fatal(err)
	}
	c.maxRequestLine = 200
	var ids []string
	for i := range 40 {
		ids = append(ids, "0.Source: Kafka/"+strings.Repeat("x", i%3)+".busy,"+string(rune('a'+i%26)))
	}
	segs := []string{"jobs", "j1", "vertices", "v1", "metrics"}
	first, err := c.metricURLs.requests(c, "", ids, segs)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := c.metricRequests(ids, segs)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) < 2 || len(first) != len(fresh) {
		t.Fatalf("%d requests, built afresh %d; want the same, several", len(first), len(fresh))
	}
	var got []string
	for i, r := range first {
		if r != fresh[i] {
			t.Fatalf("request %d = %+v, built afresh %+v", i, r, fresh[i])
		}
		u, err := url.Parse(r.url)
		if err != nil || u.Path != "/flink/jobs/j1/vertices/v1/metrics" || r.path != u.Path || requestLineLen(u) > c.maxRequestLine {
			t.Fatalf("request %d: %+v (%v)", i, r, err)
		}
		for _, e := range strings.Split(strings.TrimPrefix(u.RawQuery, "get="), ",") {
			id, err := url.QueryUnescape(e)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, id)
		}
	}
	// Each id once, in order (commas in ids are escaped).
	if want := dedup(ids); !slices.Equal(got, want) {
		t.Fatalf("asked for %q, want %q", got, want)
	}
	again, _ := c.metricURLs.requests(c, "", ids, segs)
	if &again[0] != &first[0] {
		t.Error("the same ids built their URLs again")
	}
	changed := append([]string(nil), ids...)
	changed[3] = "0.numRecordsInPerSecond"
	other, _ := c.metricURLs.requests(c, "", changed, segs)
	if &other[0] == &first[0] || !strings.Contains(other[0].url, "0.numRecordsInPerSecond") {
		t.Errorf("changed ids kept the old URLs: %s", other[0].url)
	}
	// Mutating the caller's slice afterwards must not change what the
	// cache compares against.
	changed[3] = ids[3]
	if back, _ := c.metricURLs.requests(c, "", ids, segs); &back[0] == &other[0] {
		t.Error("the cache compared against the caller's slice")
	}
	c.metricURLs.sweep() // the last poll asked for this path: kept
	if len(c.metricURLs.sets) != 1 {
		t.Fatalf("%d cached sets after a sweep, want 1", len(c.metricURLs.sets))
	}
	c.metricURLs.sweep() // not asked for since: dropped
	if len(c.metricURLs.sets) != 0 {
		t.Fatalf("%d cached sets after a sweep without use, want 0", len(c.metricURLs.sets))
	}
	if reqs, err := c.metricURLs.requests(c, "", []string{"", ""}, segs); err != nil || len(reqs) != 0 {
		t.Errorf("no ids: %d requests, %v", len(reqs), err)
	}
}
