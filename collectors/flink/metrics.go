package flink

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Metric is one {id, value} of a metric endpoint. Flink sends values as
// strings; Value is the parsed number (NaN for "NaN" and for non-numeric
// gauges), Raw the string as sent.
type Metric struct {
	ID    string
	Raw   string
	Value float64
}

// Int64 returns the value as an int64 (offsets, counters, watermarks),
// parsed from Raw so that large longs keep their precision.
func (m Metric) Int64() (int64, bool) {
	if v, err := strconv.ParseInt(strings.TrimSpace(m.Raw), 10, 64); err == nil {
		return v, true
	}
	if math.IsNaN(m.Value) || math.IsInf(m.Value, 0) || m.Value != math.Trunc(m.Value) {
		return 0, false
	}
	return int64(m.Value), true
}

// UnmarshalJSON implements json.Unmarshaler; a value may be a string (the
// wire form) or a number (metricdecode.go).
func (m *Metric) UnmarshalJSON(b []byte) error {
	one, err := decodeMetric(b)
	if err != nil {
		return err
	}
	*m = one
	return nil
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// MetricMap indexes metrics by id.
func MetricMap(ms []Metric) map[string]Metric {
	out := make(map[string]Metric, len(ms))
	for _, m := range ms {
		out[m.ID] = m
	}
	return out
}

// VertexMetricIDs lists the metric ids available for a vertex
// ("<subtask>.<name>", "<subtask>.<operator>.<scope>.<name>").
func (c *Client) VertexMetricIDs(ctx context.Context, jobID, vertexID string) ([]string, error) {
	u, err := c.buildURL("", "jobs", jobID, "vertices", vertexID, "metrics")
	if err != nil {
		return nil, err
	}
	var list []struct {
		ID string `json:"id"`
	}
	if err := c.get(ctx, u, &list); err != nil {
		return nil, err
	}
	ids := make([]string, len(list))
	for i, m := range list {
		ids[i] = m.ID
	}
	return ids, nil
}

// VertexMetrics fetches metric values of a vertex. The ids are split over
// as many requests as needed to keep each request line within budget.
// Unknown ids are omitted from the answer (Flink drops them silently).
// Values are up to metrics.fetcher.update-interval (default 10 s) old.
func (c *Client) VertexMetrics(ctx context.Context, jobID, vertexID string, ids []string) ([]Metric, error) {
	return c.metricValues(ctx, ids, "jobs", jobID, "vertices", vertexID, "metrics")
}

// SubtaskMetrics fetches metric values of one subtask (ids without the
// subtask prefix).
func (c *Client) SubtaskMetrics(ctx context.Context, jobID, vertexID string, subtask int, ids []string) ([]Metric, error) {
	return c.metricValues(ctx, ids, "jobs", jobID, "vertices", vertexID, "subtasks", strconv.Itoa(subtask), "metrics")
}

// JobMetrics fetches job-scope metrics (numRestarts, lastCheckpointSize, …).
func (c *Client) JobMetrics(ctx context.Context, jobID string, ids []string) ([]Metric, error) {
	return c.metricValues(ctx, ids, "jobs", jobID, "metrics")
}

func (c *Client) metricValues(ctx context.Context, ids []string, segments ...string) ([]Metric, error) {
	return c.cachedMetricValues(ctx, "", ids, segments...)
}

// cachedMetricValues is metricValues with the URLs cached under the
// request's path after set, which tells apart the id sets one path is
// asked for in turn.
func (c *Client) cachedMetricValues(ctx context.Context, set string, ids []string, segments ...string) ([]Metric, error) {
	reqs, err := c.metricURLs.requests(c, set, ids, segments)
	if err != nil {
		return nil, err
	}
	var out []Metric
	buf := getBody()
	defer putBody(buf)
	for _, r := range reqs {
		body, err := c.fetchURL(ctx, r.url, r.path, buf)
		if err != nil {
			return nil, err
		}
		ms, err := decodeMetrics(body)
		if err != nil {
			return nil, fmt.Errorf("flink: GET %s: decoding the response: %w", r.path, err)
		}
		if len(reqs) == 1 {
			return ms, nil
		}
		out = append(out, ms...)
	}
	return out, nil
}

// metricURLCache holds the request URLs of the metric values requests
// (one job's or vertex's get= list each), built once per id set: escaping
// and splitting a source's thousand-odd ids cost about a tenth of decoding
// their values, on every poll. An entry is built again when the ids asked
// for differ from the ids it was built for (in content or order); sweep
// drops the entries not used since the last sweep (the Collector sweeps
// after each poll), and more than maxCachedURLSets paths start it afresh.
type metricURLCache struct {
	mu   sync.Mutex
	sets map[string]*metricURLs // by set and request path
	used map[string]bool        // the paths asked for since the last sweep
}

// maxCachedURLSets bounds the cache of a client that is never swept.
const maxCachedURLSets = 1 << 14

// metricURLs is one cached entry; it is not changed once built.
type metricURLs struct {
	ids  []string // as asked for, before dedup
	reqs []metricRequest
}

// metricRequest is one prepared GET.
type metricRequest struct{ url, path string }

// requests returns the requests that ask for ids at the path of segments.
func (uc *metricURLCache) requests(c *Client, set string, ids, segments []string) ([]metricRequest, error) {
	path := set + strings.Join(segments, "/")
	uc.mu.Lock()
	e := uc.sets[path]
	if uc.used == nil {
		uc.used = map[string]bool{}
	}
	uc.used[path] = true
	uc.mu.Unlock()
	if e != nil && slices.Equal(e.ids, ids) {
		return e.reqs, nil
	}
	reqs, err := c.metricRequests(ids, segments)
	if err != nil {
		return nil, err
	}
	uc.mu.Lock()
	if uc.sets == nil || len(uc.sets) >= maxCachedURLSets {
		uc.sets = map[string]*metricURLs{}
	}
	uc.sets[path] = &metricURLs{ids: slices.Clone(ids), reqs: reqs}
	uc.mu.Unlock()
	return reqs, nil
}

// sweep drops the entries not asked for since the last sweep.
func (uc *metricURLCache) sweep() {
	uc.mu.Lock()
	defer uc.mu.Unlock()
	for p := range uc.sets {
		if !uc.used[p] {
			delete(uc.sets, p)
		}
	}
	clear(uc.used)
}

// metricRequests splits ids (deduplicated) over as many get= requests as
// the request line budget needs.
func (c *Client) metricRequests(ids, segments []string) ([]metricRequest, error) {
	ids = dedup(ids)
	if len(ids) == 0 {
		return []metricRequest{}, nil
	}
	mk := func(part []string) (*url.URL, error) { return c.buildURL(listQuery("get", part), segments...) }
	groups, err := c.splitIDs(ids, mk)
	if err != nil {
		return nil, err
	}
	reqs := make([]metricRequest, 0, len(groups))
	for _, g := range groups {
		u, err := mk(g)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, metricRequest{url: u.String(), path: u.Path})
	}
	return reqs, nil
}

// Aggregated is one entry of the aggregating subtasks endpoint. Only the
// requested aggregations are set; the others are NaN.
type Aggregated struct {
	ID                       string
	Min, Max, Avg, Sum, Skew float64
}

// UnmarshalJSON implements json.Unmarshaler.
func (a *Aggregated) UnmarshalJSON(b []byte) error {
	var w struct {
		ID   *string `json:"id"`
		Min  *Float  `json:"min"`
		Max  *Float  `json:"max"`
		Avg  *Float  `json:"avg"`
		Sum  *Float  `json:"sum"`
		Skew *Float  `json:"skew"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.ID == nil {
		return fmt.Errorf("aggregated metric without id: %s", truncate(b, 120))
	}
	f := func(p *Float) float64 {
		if p == nil {
			return math.NaN()
		}
		return float64(*p)
	}
	*a = Aggregated{ID: *w.ID, Min: f(w.Min), Max: f(w.Max), Avg: f(w.Avg), Sum: f(w.Sum), Skew: f(w.Skew)}
	return nil
}

var validAggs = map[string]bool{"min": true, "max": true, "avg": true, "sum": true, "skew": true}

// SubtaskMetricsAgg aggregates metrics over a vertex's subtasks
// (min, max, avg, sum, skew; nil aggs = all five; skew needs ≥1.20).
//
// Flink answers [] for the whole request when any one id has no value; when
// a multi-id request comes back empty, the ids are retried one by one so
// that the ids that do exist are still returned.
func (c *Client) SubtaskMetricsAgg(ctx context.Context, jobID, vertexID string, ids, aggs []string) ([]Aggregated, error) {
	ids = dedup(ids)
	if len(ids) == 0 {
		return nil, nil
	}
	for i, a := range aggs {
		a = strings.ToLower(strings.TrimSpace(a))
		if !validAggs[a] {
			return nil, fmt.Errorf("flink: unknown aggregation %q (want min, max, avg, sum, skew)", aggs[i])
		}
	}
	segs := []string{"jobs", jobID, "vertices", vertexID, "subtasks", "metrics"}
	mk := func(part []string) (*url.URL, error) {
		q := listQuery("get", part)
		if len(aggs) > 0 {
			q += "&" + listQuery("agg", aggs)
		}
		return c.buildURL(q, segs...)
	}
	groups, err := c.splitIDs(ids, mk)
	if err != nil {
		return nil, err
	}
	var out []Aggregated
	fetch := func(g []string) ([]Aggregated, error) {
		u, err := mk(g)
		if err != nil {
			return nil, err
		}
		var as []Aggregated
		return as, c.get(ctx, u, &as)
	}
	for _, g := range groups {
		as, err := fetch(g)
		if err != nil {
			return nil, err
		}
		if len(as) == 0 && len(g) > 1 {
			for _, id := range g {
				one, err := fetch([]string{id})
				if err != nil {
					return nil, err
				}
				out = append(out, one...)
			}
			continue
		}
		out = append(out, as...)
	}
	return out, nil
}

func dedup(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	return out
}
