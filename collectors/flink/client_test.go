package flink

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func serve(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func newTestClient(t *testing.T, url string, opts ...Option) *Client {
	t.Helper()
	c, err := NewClient(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewClientRejectsBadURLs(t *testing.T) {
	for _, u := range []string{"", "localhost:8081", "ftp://x/", "http://", "://x"} {
		if _, err := NewClient(u); err == nil {
			t.Errorf("NewClient(%q) succeeded", u)
		}
	}
}

func TestServerErrorCarriesFlinkMessage(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"errors":["Internal server error.","<Exception on server side:\norg.apache.flink.runtime.rest.NotFoundException: Job 00 not found>"]}`))
	})
	_, err := newTestClient(t, srv.URL).Job(context.Background(), "00")
	var ae *APIError
	if !errors.As(err, &ae) || ae.StatusCode != 500 || len(ae.Messages) != 2 {
		t.Fatalf("err = %#v", err)
	}
	if !strings.Contains(err.Error(), "Job 00 not found") || !strings.Contains(err.Error(), "500") {
		t.Errorf("error %q lacks the Flink message", err)
	}

	// A non-JSON error body is quoted as is.
	srv = serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad gateway from the ingress", http.StatusBadGateway)
	})
	_, err = newTestClient(t, srv.URL).Overview(context.Background())
	if err == nil || !strings.Contains(err.Error(), "bad gateway from the ingress") {
		t.Errorf("err = %v", err)
	}
}

// TestTimeout: the http.Client timeout and the caller's context each end
// a request the JobManager never answers, with a deadline error. In a
// synctest bubble each ends exactly at its deadline.
func TestTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := handlerTransport{http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })}
		const timeout = 50 * time.Millisecond

		// The http.Client timeout.
		c := newTestClient(t, "http://flink.test", WithHTTPClient(&http.Client{Transport: hang, Timeout: timeout}))
		start := time.Now()
		_, err := c.Overview(context.Background())
		if err == nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("client timeout: err = %v", err)
		}
		if d := time.Since(start); d != timeout {
			t.Errorf("client timeout: the request ended after %v, want %v", d, timeout)
		}

		// The caller's context.
		c = newTestClient(t, "http://flink.test", WithHTTPClient(&http.Client{Transport: hang}))
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		start = time.Now()
		_, err = c.TaskManagers(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("context deadline: err = %v", err)
		}
		if d := time.Since(start); d != timeout {
			t.Errorf("context deadline: the request ended after %v, want %v", d, timeout)
		}
		ctx, cancel2 := context.WithCancel(context.Background())
		cancel2()
		if _, err := c.JobsOverview(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled context: err = %v", err)
		}
	})
}

func TestTruncatedJSON(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "flink", "2.2.1", "job.json"))
	if err != nil {
		t.Fatal(err)
	}
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { w.Write(b[:len(b)/2]) })
	c := newTestClient(t, srv.URL)
	if _, err := c.Job(context.Background(), "97b6107c9344f10adec9f7e761fd488b"); err == nil || !strings.Contains(err.Error(), "unexpected end of JSON") {
		t.Errorf("Job(truncated) err = %v", err)
	}
	if _, err := c.VertexMetrics(context.Background(), "j", "v", []string{"0.a"}); err == nil {
		t.Error("VertexMetrics(truncated) succeeded")
	}
}

func TestWrongTypesNameTheField(t *testing.T) {
	cases := []struct {
		name, body, want string
		call             func(*Client) error
	}{
		{"plan nodes number", `{"plan":{"jid":"j","nodes":5}}`, "nodes",
			func(c *Client) error { _, err := c.JobPlan(context.Background(), "j"); return err }},
		{"plan inputs number", `{"plan":{"nodes":[{"id":"a","inputs":7}]}}`, "inputs",
			func(c *Client) error { _, err := c.JobPlan(context.Background(), "j"); return err }},
		{"job vertex id number", `{"jid":"j","vertices":[{"id":12}]}`, "vertices.id",
			func(c *Client) error { _, err := c.Job(context.Background(), "j"); return err }},
		{"jobs not an array", `{"jobs":5}`, "jobs",
			func(c *Client) error { _, err := c.JobsOverview(context.Background()); return err }},
		{"metrics wrapped like the spec", `{"metrics":[]}`, "want an array of metrics",
			func(c *Client) error {
				_, err := c.VertexMetrics(context.Background(), "j", "v", []string{"0.a"})
				return err
			}},
		{"metric value bool", `[{"id":"0.busyTimeMsPerSecond","value":true}]`, "0.busyTimeMsPerSecond",
			func(c *Client) error {
				_, err := c.VertexMetrics(context.Background(), "j", "v", []string{"0.a"})
				return err
			}},
		{"metric id list number", `[{"id":5}]`, "id",
			func(c *Client) error { _, err := c.VertexMetricIDs(context.Background(), "j", "v"); return err }},
		{"agg max bool", `[{"id":"busy","max":true}]`, "max",
			func(c *Client) error {
				_, err := c.SubtaskMetricsAgg(context.Background(), "j", "v", []string{"busy"}, []string{"max"})
				return err
			}},
		{"checkpoint state_size string", `{"id":1,"subtasks":[{"className":"completed","index":0,"state_size":"big"}]}`, "state_size",
			func(c *Client) error { _, err := c.CheckpointSubtasks(context.Background(), "j", 1, "v"); return err }},
		{"backpressure ratio bool", `{"status":"ok","subtasks":[{"subtask":0,"ratio":false}]}`, "ratio",
			func(c *Client) error { _, err := c.Backpressure(context.Background(), "j", "v"); return err }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(tc.body)) })
			err := tc.call(newTestClient(t, srv.URL))
			t.Log(err)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to name %q", err, tc.want)
			}
		})
	}
}

func TestHugeBody(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"taskmanagers":[`))
		chunk := []byte(strings.Repeat(`{"id":"x"},`, 1000))
		for range 300 { // ~3 MB
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		w.Write([]byte(`{"id":"y"}]}`))
	})
	c := newTestClient(t, srv.URL)
	c.maxBody = 1 << 20
	_, err := c.TaskManagers(context.Background())
	var se *SizeLimitError
	if !errors.As(err, &se) || se.Limit != 1<<20 || !strings.Contains(err.Error(), "1048576") {
		t.Fatalf("err = %v", err)
	}
	// The default limit is 32 MiB and the same body fits under it.
	if _, err := newTestClient(t, srv.URL).TaskManagers(context.Background()); err != nil {
		t.Errorf("default limit: %v", err)
	}
}

func TestMetricRequestsAreSplit(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	requests, maxLine := 0, 0
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		line := len(r.Method) + 1 + len(r.RequestURI) + 1 + len(r.Proto)
		mu.Lock()
		defer mu.Unlock()
		requests++
		maxLine = max(maxLine, line)
		if line > 4096 {
			t.Errorf("request line %d bytes > 4096", line)
			w.WriteHeader(http.StatusRequestURITooLong)
			return
		}
		var out []string
		for _, id := range strings.Split(r.URL.Query().Get("get"), ",") {
			seen[id]++
			if strings.HasSuffix(r.URL.Path, "/subtasks/metrics") {
				out = append(out, fmt.Sprintf(`{"id":%q,"max":1.0}`, id))
			} else {
				out = append(out, fmt.Sprintf(`{"id":%q,"value":"NaN"}`, id))
			}
		}
		w.Write([]byte("[" + strings.Join(out, ",") + "]"))
	})
	var ids []string
	for i := range 400 {
		ids = append(ids, fmt.Sprintf("%d.Source__Kafka_Source.KafkaSourceReader.topic.a_rather_long_topic_name_for_testing.partition.%d.currentOffset", i%7, i))
	}
	c := newTestClient(t, srv.URL+"/some/prefix/that/is/long/")
	ms, err := c.VertexMetrics(context.Background(), "3f34d7245ef2c24b2205bd55be41574e", "61252f73469d3ffba207c548d29a0267", ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 400 || !math.IsNaN(ms[0].Value) || ms[0].Raw != "NaN" {
		t.Fatalf("%d metrics, first %+v", len(ms), ms[0])
	}
	if requests < 10 {
		t.Errorf("only %d requests for 400 long ids", requests)
	}
	for _, id := range ids {
		if seen[id] != 1 {
			t.Errorf("%s requested %d times", id, seen[id])
		}
	}
	t.Logf("400 ids: %d requests, longest request line %d bytes", requests, maxLine)

	clear(seen)
	requests = 0
	ag, err := c.SubtaskMetricsAgg(context.Background(), "j", "v", ids, []string{"max", "skew"})
	if err != nil || len(ag) != 400 || ag[0].Max != 1 || !math.IsNaN(ag[0].Skew) {
		t.Fatalf("agg: %d, %v", len(ag), err)
	}
	if requests < 10 {
		t.Errorf("agg: only %d requests", requests)
	}

	// One id that alone cannot fit is an error, not a rejected request.
	if _, err := c.VertexMetrics(context.Background(), "j", "v", []string{strings.Repeat("x", 5000)}); err == nil {
		t.Error("oversized id accepted")
	}
}

func TestMetricValues(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`[{"id":"a","value":"NaN"},{"id":"b","value":"-9223372036854775808"},{"id":"c","value":"412.5"},
			{"id":"d","value":"1775"},{"id":"e","value":"RUNNING"},{"id":"f","value":12},{"id":"g","value":"Infinity"}]`))
	})
	ms, err := newTestClient(t, srv.URL).VertexMetrics(context.Background(), "j", "v", []string{"a", "b", "c", "d", "e", "f", "g"})
	if err != nil {
		t.Fatal(err)
	}
	m := MetricMap(ms)
	if !math.IsNaN(m["a"].Value) {
		t.Errorf("a = %v", m["a"])
	}
	if v, ok := m["b"].Int64(); !ok || v != math.MinInt64 {
		t.Errorf("b = %v %v", v, ok)
	}
	if m["c"].Value != 412.5 {
		t.Errorf("c = %v", m["c"])
	}
	if _, ok := m["c"].Int64(); ok {
		t.Error("c is not an integer")
	}
	if v, ok := m["d"].Int64(); !ok || v != 1775 {
		t.Errorf("d = %v", v)
	}
	if m["e"].Raw != "RUNNING" || !math.IsNaN(m["e"].Value) {
		t.Errorf("e = %+v", m["e"])
	}
	if v, ok := m["f"].Int64(); !ok || v != 12 {
		t.Errorf("f = %+v", m["f"])
	}
	if !math.IsInf(m["g"].Value, 1) {
		t.Errorf("g = %+v", m["g"])
	}
}

func TestAuthAndPrefix(t *testing.T) {
	var got []string
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		got = append(got, fmt.Sprintf("%s %s:%s:%v", r.URL.Path, u, p, ok))
		w.Write([]byte(`{"flink-version":"2.2.1"}`))
	})
	c := newTestClient(t, srv.URL+"/flink/ns/job-a", WithBasicAuth("alice", "pw"))
	if _, err := c.Overview(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := "/flink/ns/job-a/overview alice:pw:true"; got[0] != want {
		t.Errorf("got %q, want %q", got[0], want)
	}
	if _, err := c.Job(context.Background(), "../../admin"); err == nil {
		t.Error("path traversal in a job id accepted")
	}
}

func TestUnknownAggregation(t *testing.T) {
	c := newTestClient(t, "http://localhost:1")
	if _, err := c.SubtaskMetricsAgg(context.Background(), "j", "v", []string{"a"}, []string{"median"}); err == nil {
		t.Error("median accepted")
	}
}
