package fakejm_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/skewscope/skewscope/internal/fakejm"
)

// store is a metric store of fixed ids and values.
type store struct {
	ids  []string
	vals map[string]string
}

func (s store) IDs() []string { return s.ids }

func (s store) AppendValue(b []byte, id string) ([]byte, bool) {
	v, ok := s.vals[id]
	return append(b, v...), ok
}

func newStore(kv ...string) store {
	s := store{vals: map[string]string{}}
	for i := 0; i < len(kv); i += 2 {
		s.ids = append(s.ids, kv[i])
		s.vals[kv[i]] = kv[i+1]
	}
	return s
}

// tiny is a Cluster of one job "j" with one vertex "v" of three subtasks,
// written against the package's exported API only.
type tiny struct{}

func (tiny) DashboardConfig() *fakejm.DashboardConfig { return nil }
func (tiny) Overview() *fakejm.Overview               { return &fakejm.Overview{TaskManagers: 1} }
func (tiny) TaskManagers() *fakejm.TaskManagers       { return nil }
func (tiny) JobsOverview() *fakejm.JobsOverview       { return &fakejm.JobsOverview{} }
func (tiny) Job(id string) fakejm.Job {
	if id == "j" {
		return tinyJob{}
	}
	return nil
}

type tinyJob struct{}

func (tinyJob) Details() *fakejm.JobDetails                      { return &fakejm.JobDetails{JID: "j"} }
func (tinyJob) Plan() *fakejm.JobPlan                            { return &fakejm.JobPlan{} }
func (tinyJob) Config() *fakejm.JobConfig                        { return nil }
func (tinyJob) Metrics() fakejm.Metrics                          { return newStore("uptime", "5") }
func (tinyJob) Checkpoints() *fakejm.Checkpoints                 { return &fakejm.Checkpoints{} }
func (tinyJob) CheckpointConfig() *fakejm.CheckpointConfig       { return nil }
func (tinyJob) Checkpoint(id int64) *fakejm.CheckpointStatistics { return nil }

// Exceptions is one failure of subtask 2, and as many entries as asked
// when more are asked than there are.
func (tinyJob) Exceptions(n int) *fakejm.JobExceptions {
	task := "v (3/3)#1"
	e := fakejm.RootException{ExceptionInfo: fakejm.ExceptionInfo{ExceptionName: "java.lang.RuntimeException",
		Stacktrace: "java.lang.RuntimeException: boom\n\tat x", Timestamp: 7, TaskName: &task, FailureLabels: map[string]string{}},
		ConcurrentExceptions: []fakejm.ExceptionInfo{}}
	x := &fakejm.JobExceptions{ExceptionHistory: fakejm.ExceptionHistory{Entries: []fakejm.RootException{}}}
	if n > 0 {
		x.ExceptionHistory.Entries = append(x.ExceptionHistory.Entries, e)
	}
	return x
}
func (tinyJob) Vertex(id string) fakejm.Vertex {
	if id == "v" {
		return tinyVertex{}
	}
	return nil
}

type tinyVertex struct{}

func (tinyVertex) Parallelism() int                                    { return 3 }
func (tinyVertex) Details() *fakejm.VertexDetails                      { return &fakejm.VertexDetails{ID: "v"} }
func (tinyVertex) Backpressure() *fakejm.Backpressure                  { return nil }
func (tinyVertex) CheckpointSubtasks(int64) *fakejm.CheckpointSubtasks { return nil }

// Metrics: subtask i has busyTimeMsPerSecond 100·(i+1); only subtasks 1
// and 2 have an input watermark.
func (tinyVertex) Metrics(subtask int) fakejm.Metrics {
	if subtask < 0 {
		return newStore("0.busyTimeMsPerSecond", "100.0", "1.busyTimeMsPerSecond", "200.0")
	}
	busy := strconv.Itoa(100*(subtask+1)) + ".0"
	if subtask == 0 {
		return newStore("busyTimeMsPerSecond", busy)
	}
	return newStore("busyTimeMsPerSecond", busy, "currentInputWatermark", strconv.Itoa(1000+subtask))
}

func serveTiny(t *testing.T, method, uri string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	fakejm.NewHandler(tiny{}).ServeHTTP(rec, httptest.NewRequest(method, uri, nil))
	if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=UTF-8" {
		t.Errorf("%s %s: Content-Type %q", method, uri, ct)
	}
	return rec.Code, rec.Body.String()
}

// TestHandlerOverAnyCluster: the REST semantics Handler adds to a Cluster
// that only says what is there.
func TestHandlerOverAnyCluster(t *testing.T) {
	for _, tc := range []struct {
		method, uri string
		status      int
		body        string // "" for any
	}{
		{"GET", "/jobs/j/metrics", 200, `[{"id":"uptime"}]`},
		{"GET", "/jobs/j/metrics?get=", 200, `[{"id":"uptime"}]`},
		{"GET", "/jobs/j/metrics?get=nope,uptime", 200, `[{"id":"uptime","value":"5"}]`},
		{"GET", "/v1/jobs/j/metrics/?get=uptime", 200, `[{"id":"uptime","value":"5"}]`},
		{"GET", "/jobs/j/vertices/v/metrics?get=1.busyTimeMsPerSecond,0.busyTimeMsPerSecond", 200,
			`[{"id":"1.busyTimeMsPerSecond","value":"200.0"},{"id":"0.busyTimeMsPerSecond","value":"100.0"}]`},
		{"GET", "/jobs/j/vertices/v/subtasks/2/metrics?get=busyTimeMsPerSecond", 200, `[{"id":"busyTimeMsPerSecond","value":"300.0"}]`},
		{"GET", "/jobs/j/vertices/v/subtasks/3/metrics", 404, ""},
		{"GET", "/jobs/j/vertices/v/subtasks/01/metrics", 404, ""},
		{"GET", "/jobs/j/vertices/v/watermarks", 200,
			`[{"id":"1.currentInputWatermark","value":"1001"},{"id":"2.currentInputWatermark","value":"1002"}]`},
		{"GET", "/jobs/j/vertices/v/subtasks/metrics", 200, `[{"id":"busyTimeMsPerSecond"},{"id":"currentInputWatermark"}]`},
		{"GET", "/jobs/j/vertices/v/subtasks/metrics?get=busyTimeMsPerSecond&agg=max,sum", 200, `[{"id":"busyTimeMsPerSecond","max":300,"sum":600}]`},
		{"GET", "/jobs/j/vertices/v/subtasks/metrics?get=busyTimeMsPerSecond&subtasks=1-2,9&agg=min", 200, `[{"id":"busyTimeMsPerSecond","min":200}]`},
		// An id no selected subtask has empties the answer, as in Flink.
		{"GET", "/jobs/j/vertices/v/subtasks/metrics?get=busyTimeMsPerSecond,currentInputWatermark&subtasks=0", 200, `[]`},
		{"GET", "/jobs/j/vertices/v/backpressure", 404, ""},
		{"GET", "/jobs/j/vertices/w", 404, `{"errors":["JobVertex w not found"]}`},
		{"GET", "/jobs/k", 404, `{"errors":["Job k not found"]}`},
		{"GET", "/jobs/j/config", 404, ""},
		{"GET", "/jobs/j/checkpoints/details/7", 404, `{"errors":["Could not find checkpointing statistics for checkpoint 7."]}`},
		{"GET", "/jobs/j/checkpoints/details/x", 400, ""},
		{"POST", "/jobs/j", 405, `{"errors":["Method not allowed: POST"]}`},
		{"GET", "/config", 404, ""},
		{"GET", "/jobs/j/exceptions?maxExceptions=10", 200, `{"exceptionHistory":{"entries":[{"exceptionName":"java.lang.RuntimeException","stacktrace":"java.lang.RuntimeException: boom\n\tat x","timestamp":7,"taskName":"v (3/3)#1","endpoint":null,"taskManagerId":null,"failureLabels":{},"concurrentExceptions":[]}],"truncated":false}}`},
		{"GET", "/jobs/j/exceptions?maxExceptions=0", 200, `{"exceptionHistory":{"entries":[],"truncated":false}}`},
		{"GET", "/jobs/j/exceptions?maxExceptions=ten", 400, `{"errors":["Bad request, could not parse parameters: maxExceptions"]}`},
	} {
		status, body := serveTiny(t, tc.method, tc.uri)
		if status != tc.status || (tc.body != "" && body != tc.body) {
			t.Errorf("%s %s = %d %s, want %d %s", tc.method, tc.uri, status, body, tc.status, tc.body)
		}
		if !json.Valid([]byte(body)) {
			t.Errorf("%s %s: not JSON: %s", tc.method, tc.uri, body)
		}
	}
	if _, body := serveTiny(t, http.MethodGet, "/jobs/j"); body != `{"jid":"j","name":"","isStoppable":false,"state":"","job-type":"","start-time":0,"end-time":0,"duration":0,"maxParallelism":0,"now":0,"timestamps":null,"vertices":null,"status-counts":null,"plan":{"jid":"","name":"","type":"","nodes":null},"pending-operators":0}` {
		t.Errorf("GET /jobs/j = %s: a 2.2 job's details have no application-id or schedulerType", body)
	}
}
