package flink

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/skewscope/skewscope/internal/flinkreplay"
)

func TestSplitTaskName(t *testing.T) {
	cases := []struct {
		in               string
		task             string
		subtask, attempt int
	}{
		{"Source: Kafka Source -> Source Tagger (2/4)#1", "Source: Kafka Source -> Source Tagger", 1, 1},
		{"Key Router (4/4)", "Key Router", 3, -1},
		{"Key Router (1/1)#0", "Key Router", 0, 0},
		{"Key Router", "Key Router", -1, -1},
		{"", "", -1, -1},
		{"Key Router (0/4)#1", "Key Router (0/4)#1", -1, -1},     // 1-based: 0 is not an index
		{"Key Router (5/4)#1", "Key Router (5/4)#1", -1, -1},     // past the parallelism
		{"Key Router (2/40000)", "Key Router (2/40000)", -1, -1}, // past Flink's bound
		{"Key Router (a/4)", "Key Router (a/4)", -1, -1},
		{"Key Router (2/4)#x", "Key Router (2/4)#x", -1, -1},
		{"(2/4)", "(2/4)", -1, -1},
	}
	for _, tc := range cases {
		task, sub, att := splitTaskName(tc.in)
		if task != tc.task || sub != tc.subtask || att != tc.attempt {
			t.Errorf("splitTaskName(%q) = %q, %d, %d; want %q, %d, %d", tc.in, task, sub, att, tc.task, tc.subtask, tc.attempt)
		}
	}
}

func TestFailureOf(t *testing.T) {
	huge := strings.Repeat("é", 10_000)
	cases := []struct {
		name string
		in   RootException
		want Failure
	}{
		{
			name: "task failure",
			in: RootException{ExceptionInfo: ExceptionInfo{
				ExceptionName: "java.lang.RuntimeException",
				Stacktrace:    "java.lang.RuntimeException: fail-once marker seen\n\tat Tagger.map(Tagger.java:12)\n",
				Timestamp:     1796118533672, TaskName: "Source: Kafka Source -> Source Tagger (1/3)#0",
				Endpoint: "localhost:0", TaskManagerID: "localhost:0-6a1b",
				FailureLabels: map[string]string{"type": "user", "cause": "marker"}},
				ConcurrentExceptions: []ExceptionInfo{{ExceptionName: "x"}}},
			want: Failure{At: time.UnixMilli(1796118533672), Class: "java.lang.RuntimeException", Message: "fail-once marker seen",
				Task: "Source: Kafka Source -> Source Tagger", Subtask: 0, Attempt: 0, Endpoint: "localhost:0", TaskManagerID: "localhost:0-6a1b",
				Labels: []FailureLabel{{"cause", "marker"}, {"type", "user"}}, Concurrent: 1},
		},
		{
			name: "global failure, 1.x location, no message",
			in: RootException{ExceptionInfo: ExceptionInfo{ExceptionName: "org.apache.flink.util.FlinkException",
				Stacktrace: "org.apache.flink.util.FlinkException\r\n\tat x", Timestamp: 5, Location: "tm:1"}},
			want: Failure{At: time.UnixMilli(5), Class: "org.apache.flink.util.FlinkException", Subtask: -1, Attempt: -1, Endpoint: "tm:1"},
		},
		{
			name: "fields missing",
			in:   RootException{},
			want: Failure{Subtask: -1, Attempt: -1},
		},
		{
			name: "class only in the trace",
			in:   RootException{ExceptionInfo: ExceptionInfo{Stacktrace: "java.io.IOException: disk full\nat y", TaskName: "Sink (9/4)"}},
			want: Failure{Class: "java.io.IOException", Message: "disk full", Task: "Sink (9/4)", Subtask: -1, Attempt: -1},
		},
		{
			name: "control characters and bad UTF-8",
			in:   RootException{ExceptionInfo: ExceptionInfo{ExceptionName: "E", Stacktrace: "E: a\x00b\x1b[31m\xffc", Timestamp: -4}},
			want: Failure{Class: "E", Message: "a b [31m c", Subtask: -1, Attempt: -1},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := failureOf(tc.in)
			if !got.At.Equal(tc.want.At) {
				t.Errorf("At = %v, want %v", got.At, tc.want.At)
			}
			got.At, tc.want.At = time.Time{}, time.Time{}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("failureOf = %+v\nwant        %+v", got, tc.want)
			}
		})
	}

	t.Run("huge message", func(t *testing.T) {
		labels := map[string]string{}
		for i := range 50 {
			labels[fmt.Sprintf("k%02d", i)] = huge
		}
		got := failureOf(RootException{ExceptionInfo: ExceptionInfo{ExceptionName: "E", Stacktrace: "E: " + huge + "\nat", TaskName: huge + " (1/2)", FailureLabels: labels}})
		if len(got.Message) > maxFailureMessage+len("…") || !strings.HasSuffix(got.Message, "…") || !utf8.ValidString(got.Message) {
			t.Errorf("Message is %d bytes (valid UTF-8 %v), want at most %d + …", len(got.Message), utf8.ValidString(got.Message), maxFailureMessage)
		}
		if len(got.Task) > maxFailureName+len("…") || got.Subtask != 0 {
			t.Errorf("Task is %d bytes, subtask %d; want ≤ %d and 0", len(got.Task), got.Subtask, maxFailureName)
		}
		if len(got.Labels) != maxFailureLabels || got.Labels[0].Key != "k00" || len(got.Labels[0].Value) > maxLabelText+len("…") {
			t.Errorf("Labels = %d, first %q (%d bytes)", len(got.Labels), got.Labels[0].Key, len(got.Labels[0].Value))
		}
	})
}

// TestFailuresReadOnRestarts: the exception history is asked for when a
// job is first seen restarted and when its numRestarts changes, never on
// a poll where it does not; a failure is retried, a 404 is not.
func TestFailuresReadOnRestarts(t *testing.T) {
	f := newFakeFlink(t, "2.2.1")
	srv := f.start()
	var restarts atomic.Int64
	restarts.Store(2)
	f.setFault(f.jobPath("metrics"), func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `[{"id":"numRestarts","value":"%d"}]`, restarts.Load())
	})
	var status atomic.Int64
	status.Store(200)
	var maxAsked atomic.Value
	f.setFault(f.jobPath("exceptions"), func(w http.ResponseWriter, r *http.Request) {
		maxAsked.Store(r.URL.Query().Get("maxExceptions"))
		if s := status.Load(); s != 200 {
			w.WriteHeader(int(s))
			w.Write([]byte(`{"errors":["no"]}`))
			return
		}
		fmt.Fprintf(w, `{"exceptionHistory":{"entries":[
			{"exceptionName":"java.lang.IllegalStateException","stacktrace":"java.lang.IllegalStateException: restart %d\n\tat x","timestamp":1796118533000,"taskName":"Key Router (3/4)#%d","endpoint":"localhost:0","taskManagerId":"tm-1","failureLabels":{},"concurrentExceptions":[]},
			{"exceptionName":"java.lang.RuntimeException","stacktrace":"java.lang.RuntimeException: older","timestamp":1796118000000,"taskName":"Key Router (1/4)#0"}],"truncated":false}}`,
			restarts.Load(), restarts.Load())
	})
	c := newTestCollector(t, Config{URL: srv.URL})
	asked := func() int { return f.requests(f.jobPath("exceptions")) }
	poll := func() JobSnapshot { return c.PollOnce(context.Background()).Jobs[0] }

	j := poll()
	if asked() != 1 {
		t.Fatalf("first poll of a job with 2 restarts: %d exception requests, want 1", asked())
	}
	if got, _ := maxAsked.Load().(string); got != "10" {
		t.Errorf("maxExceptions = %q, want 10", got)
	}
	if len(j.Failures) != 2 || j.Failures[0].Message != "restart 2" || j.Failures[0].Subtask != 2 || j.Failures[1].Message != "older" {
		t.Fatalf("Failures = %+v", j.Failures)
	}
	poll()
	if asked() != 1 {
		t.Errorf("numRestarts unchanged: %d exception requests, want still 1", asked())
	}
	restarts.Store(3)
	status.Store(500)
	j = poll()
	if asked() != 2 || j.Err == nil || len(j.Failures) != 2 || j.Failures[0].Message != "restart 2" {
		t.Errorf("a failed read: %d requests, Err %v, Failures %+v; want 2, an error, the last ones kept", asked(), j.Err, j.Failures)
	}
	status.Store(200)
	j = poll()
	if asked() != 3 || j.Failures[0].Message != "restart 3" {
		t.Errorf("retried after the failure: %d requests, Failures %+v", asked(), j.Failures)
	}
	restarts.Store(4)
	status.Store(404)
	poll()
	poll()
	if asked() != 4 {
		t.Errorf("a 404: %d requests, want 4 (asked once, not again)", asked())
	}
}

func TestFailuresNotReadWithoutRestarts(t *testing.T) {
	for _, body := range []string{`[{"id":"numRestarts","value":"0"}]`, `[]`} {
		f := newFakeFlink(t, "1.20.5")
		srv := f.start()
		f.setFault(f.jobPath("metrics"), func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(body)) })
		c := newTestCollector(t, Config{URL: srv.URL})
		c.PollOnce(context.Background())
		c.PollOnce(context.Background())
		if n := f.requests(f.jobPath("exceptions")); n != 0 {
			t.Errorf("numRestarts %s: %d exception requests, want 0", body, n)
		}
	}
}

// recordedExceptionsCommand records the exception history of a real
// failover (e2e/lifecycle_test.go's failover steps).
const recordedExceptionsCommand = "SKEWSCOPE_RECORD=1 SKEWSCOPE_E2E_LINES=<line> go test -tags e2e -count=1 -run 'TestFlinkGroundTruth/flink-<line>/lifecycle' ./e2e/ (line 1.20, 2.2 or 2.3)"

// TestRecordedExceptions parses the exception histories a real Flink
// answered after the lifecycle's failover, and replays the failover to
// the collector, which must read the history once, at the poll that sees
// numRestarts change. Versions without a recording are skipped, naming the
// command that records them.
func TestRecordedExceptions(t *testing.T) {
	root := filepath.Join("..", "testdata", "flink", "lifecycle")
	found := 0
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			m, err := flinkreplay.Load(filepath.Join(root, version))
			if err != nil {
				t.Fatal(err)
			}
			var failover *flinkreplay.Step
			for i := range m.Steps {
				st := &m.Steps[i]
				fi, ok := st.ByName["job-exceptions"]
				if !ok {
					continue
				}
				found++
				after := strings.HasPrefix(st.Name, "failover-") && st.Name != "failover-before"
				if failover == nil && after {
					failover = st
				}
				body := st.Bodies[fi.File]
				var x JobExceptions
				if err := json.Unmarshal(body, &x); err != nil {
					t.Fatalf("%s: %v", fi.File, err)
				}
				var raw struct {
					ExceptionHistory struct {
						Entries []map[string]any `json:"entries"`
					} `json:"exceptionHistory"`
				}
				if err := json.Unmarshal(body, &raw); err != nil {
					t.Fatal(err)
				}
				fs := failuresOf(&x)
				switch {
				case after && len(fs) == 0:
					t.Errorf("%s: no failure after the failover", fi.File)
				case !after && len(fs) > 0:
					// An in-place rescale counts in numRestarts, so the
					// collector asks then too: Flink records no failure.
					t.Errorf("%s: %d failures before any failover: %+v", fi.File, len(fs), fs)
				}
				for i, f := range fs {
					r := raw.ExceptionHistory.Entries[i]
					name, _ := r["exceptionName"].(string)
					trace, _ := r["stacktrace"].(string)
					task, _ := r["taskName"].(string)
					first, _, _ := strings.Cut(trace, "\n")
					if f.Class != name || !strings.HasPrefix(first, name) {
						t.Errorf("%s entry %d: Class %q, exceptionName %q, trace %q", fi.File, i, f.Class, name, clipText(first, 80))
					}
					if len(f.Message) > maxFailureMessage+len("…") || !strings.Contains(first, strings.TrimSuffix(f.Message, "…")) {
						t.Errorf("%s entry %d: Message %q is not of the trace's first line %q", fi.File, i, f.Message, clipText(first, 80))
					}
					if ts, _ := r["timestamp"].(float64); f.At.UnixMilli() != int64(ts) {
						t.Errorf("%s entry %d: At %v, timestamp %v", fi.File, i, f.At, ts)
					}
					if task != "" && (f.Subtask < 0 || !strings.HasPrefix(task, f.Task)) {
						t.Errorf("%s entry %d: task %q parsed as %q subtask %d", fi.File, i, task, f.Task, f.Subtask)
					}
				}
			}
			if failover == nil {
				t.Fatalf("no exception history recorded for Flink %s: %s", version, recordedExceptionsCommand)
			}
			ss := &flinkreplay.Server{Errorf: t.Errorf}
			srv := httptest.NewServer(ss)
			t.Cleanup(srv.Close)
			c := newTestCollector(t, Config{URL: srv.URL})
			var j JobSnapshot
			for i := range m.Steps {
				ss.Set(&m.Steps[i])
				s := c.PollOnce(context.Background())
				if len(s.Jobs) == 1 {
					j = s.Jobs[0]
				}
				if &m.Steps[i] == failover {
					break
				}
			}
			if len(j.Failures) == 0 || j.Failures[0].Class == "" || !slices.IsSortedFunc(j.Failures, func(a, b Failure) int { return b.At.Compare(a.At) }) {
				t.Fatalf("after %s: Failures %+v, want the failover's root cause first", failover.Name, j.Failures)
			}
			// The job's fail-once exception (e2e/flinkjob) is below Flink's
			// root cause in the trace: its innermost cause names it.
			if c := j.Failures[0].Cause; !strings.Contains(c, "read by source subtask") {
				t.Errorf("after %s: the innermost cause %q is not the job's fail-once exception", failover.Name, c)
			}
		})
	}

}

func TestInnermostCause(t *testing.T) {
	for trace, want := range map[string]string{
		"": "",
		"java.io.IOException: x\n\tat a.b(C.java:1)":                                                     "",
		"java.io.IOException: x\n\tat a\nCaused by: java.lang.RuntimeException: y\n\tat b":               "java.lang.RuntimeException: y",
		"E: x\r\nCaused by: F: y\r\n\tat a\r\nCaused by: G: the innermost\r\n\tat b\r\n\t... 3 more\r\n": "G: the innermost",
		"E: x\nCaused by: G: at the very end":                                                            "G: at the very end",
		// "Caused by:" inside a message is not a cause line.
		"E: says Caused by: nothing\n\tat a": "",
	} {
		if got := innermostCause(trace); got != want {
			t.Errorf("innermostCause(%q) = %q, want %q", trace, got, want)
		}
	}
	// A huge trace is read only so far: its cause beyond is not searched.
	huge := "E: x\n" + strings.Repeat("\tat a.b(C.java:1)\n", 10000) + "Caused by: G: far"
	if got := innermostCause(huge); got != "" {
		t.Errorf("innermostCause read past its bound: %q", got)
	}
	// The failure carries it clipped, as its message is.
	f := failureOf(RootException{ExceptionInfo: ExceptionInfo{ExceptionName: "E", Stacktrace: "E: x\nCaused by: G: " + strings.Repeat("é", 400)}})
	if len(f.Cause) > maxFailureMessage+len("…") || !strings.HasPrefix(f.Cause, "G: é") {
		t.Errorf("failure's cause %q (%d bytes)", f.Cause, len(f.Cause))
	}
}
