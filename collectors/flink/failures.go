package flink

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Failover root causes: GET /jobs/:id/exceptions holds the job's exception
// history, newest first, each entry the failure that made the scheduler
// restart the job (its root cause) with the failures that happened with
// it. A job's numRestarts only grows with such a restart, so the history
// is read when it changes (or when a job is first seen restarted), never
// on every poll.

// Bounds of what a failure carries: an answer is the JobManager's
// (a user's exception message can be megabytes), the page shows a line.
const (
	// maxExceptions is asked of the JobManager (maxExceptions): the
	// lineage matches each failover with the newest failure before it.
	maxExceptions     = 10
	maxFailureMessage = 300
	maxFailureName    = 200
	maxFailureLabels  = 8
	maxLabelText      = 100
)

// Failure is one root cause of a restart from the exception history,
// validated: texts are clipped, the message is the stack trace's first
// line without the class.
type Failure struct {
	At time.Time
	// Class is the exception's class, e.g. java.lang.RuntimeException.
	Class string
	// Message is the exception's message, at most maxFailureMessage bytes
	// (cut on a rune boundary, "…" appended), "" when it has none.
	Message string
	// Task is the failed task's name without its subtask suffix, "" for a
	// global failure; Subtask is the 0-based index the name carries and
	// Attempt its attempt number, -1 when the name carries none.
	Task    string
	Subtask int
	Attempt int
	// Endpoint is the task manager's host:port, TaskManagerID its id.
	Endpoint      string
	TaskManagerID string
	// Labels are the failure enrichers' labels (Flink 1.15+), by key.
	Labels []FailureLabel
	// Concurrent counts the failures that happened with it.
	Concurrent int
	// Cause is the innermost exception the stack trace names (its last
	// "Caused by:" line: class and message, clipped as Message is), ""
	// when the trace names none. Flink's root cause is the exception that
	// failed the task; what made it fail is often a cause or two deeper (a
	// deserializer's IOException wrapping the user's exception).
	Cause string
}

// FailureLabel is one label a failure enricher put on a failure.
type FailureLabel struct {
	Key, Value string
}

// taskNamePattern is Flink's task name with subtask: "name (i/n)" and,
// since 1.x, "#attempt" (TaskInfo.getTaskNameWithSubtasks).
var taskNamePattern = regexp.MustCompile(`^(.*) \((\d{1,5})/(\d{1,5})\)(?:#(\d{1,9}))?$`)

// splitTaskName splits "Source: orders (2/4)#1" into the name, the
// 0-based subtask and the attempt; subtask and attempt are -1 when the
// name carries no valid suffix (e.g. "3/2" or "0/4").
func splitTaskName(name string) (task string, subtask, attempt int) {
	m := taskNamePattern.FindStringSubmatch(name)
	if m == nil {
		return name, -1, -1
	}
	i, _ := strconv.Atoi(m[2])
	n, _ := strconv.Atoi(m[3])
	if i < 1 || n < 1 || i > n || n > MaxParallelism {
		return name, -1, -1
	}
	attempt = -1
	if m[4] != "" {
		attempt, _ = strconv.Atoi(m[4])
	}
	return m[1], i - 1, attempt
}

// clipText makes s one printable line of at most n bytes: invalid UTF-8
// and control characters become spaces, and a longer text is cut on a
// rune boundary with "…".
func clipText(s string, n int) string {
	s = strings.ToValidUTF8(s, " ")
	if len(s) > 4*n {
		s = s[:4*n] // bound the work on a huge text before mapping it
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// failureOf validates one entry of the exception history.
func failureOf(e RootException) Failure {
	first, _, _ := strings.Cut(e.Stacktrace, "\n")
	first = strings.TrimRight(first, "\r")
	class := e.ExceptionName
	if class == "" {
		class, _, _ = strings.Cut(first, ":")
	}
	msg := first
	if rest, ok := strings.CutPrefix(first, class); ok {
		msg = strings.TrimPrefix(rest, ":")
	}
	f := Failure{Class: clipText(class, maxFailureName), Message: clipText(msg, maxFailureMessage),
		Endpoint: clipText(firstNonEmpty(e.Endpoint, e.Location), maxFailureName), TaskManagerID: clipText(e.TaskManagerID, maxFailureName),
		Concurrent: len(e.ConcurrentExceptions)}
	if e.Timestamp > 0 {
		f.At = msTime(e.Timestamp)
	}
	f.Cause = clipText(innermostCause(e.Stacktrace), maxFailureMessage)
	task, sub, att := splitTaskName(e.TaskName)
	f.Task, f.Subtask, f.Attempt = clipText(task, maxFailureName), sub, att
	for k, v := range e.FailureLabels {
		f.Labels = append(f.Labels, FailureLabel{Key: clipText(k, maxLabelText), Value: clipText(v, maxLabelText)})
	}
	slices.SortFunc(f.Labels, func(a, b FailureLabel) int { return strings.Compare(a.Key, b.Key) })
	f.Labels = f.Labels[:min(len(f.Labels), maxFailureLabels)]
	return f
}

// innermostCause is the last "Caused by: " line of a Java stack trace
// without that prefix, "" when there is none. Only the trace's first
// 64 KiB are read: an answer is the JobManager's.
func innermostCause(trace string) string {
	trace = trace[:min(len(trace), 64<<10)]
	const prefix = "Caused by: "
	i := strings.LastIndex(trace, "\n"+prefix)
	if i < 0 {
		return ""
	}
	line, _, _ := strings.Cut(trace[i+1+len(prefix):], "\n")
	return strings.TrimRight(line, "\r")
}

// failuresOf validates the exception history, newest first.
func failuresOf(x *JobExceptions) []Failure {
	out := make([]Failure, 0, min(len(x.History.Entries), maxExceptions))
	for _, e := range x.History.Entries {
		if len(out) == maxExceptions {
			break
		}
		out = append(out, failureOf(e))
	}
	slices.SortStableFunc(out, func(a, b Failure) int { return b.At.Compare(a.At) })
	return out
}

// failures reads the job's exception history when its numRestarts
// changed since the history was last read, or when a job first seen
// (or first seen with a known numRestarts) has restarted; otherwise it
// carries the last one over. A JobManager without the endpoint (404)
// counts as read: it is not asked again until the next restart.
func (c *Collector) failures(ctx context.Context, js *JobSnapshot, prev *JobSnapshot) error {
	if prev != nil {
		js.Failures, js.failuresRead = prev.Failures, prev.failuresRead
	}
	if js.NumRestarts <= 0 || js.NumRestarts == js.failuresRead {
		return nil
	}
	x, err := call(ctx, c, func(ctx context.Context) (*JobExceptions, error) {
		return c.client.Exceptions(ctx, js.ID, maxExceptions)
	})
	if err != nil {
		var ae *APIError
		if errors.As(err, &ae) && ae.StatusCode == http.StatusNotFound {
			js.failuresRead = js.NumRestarts
			return nil
		}
		return err
	}
	js.Failures, js.failuresRead = failuresOf(x), js.NumRestarts
	return nil
}
