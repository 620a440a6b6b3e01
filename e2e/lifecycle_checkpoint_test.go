//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The dashboard's checkpoint figures and failover causes against what the
// MiniCluster's own REST reports, at every lifecycle step.

// lifeCheckpointJSON is the part of the vertex JSON the checks read.
type lifeCheckpointJSON struct {
	Flink struct {
		At time.Time `json:"at"`
	} `json:"flinkFreshness"`
	Checkpoint *struct {
		ID int64 `json:"id"`
	} `json:"checkpoint"`
	Subtasks []struct {
		Subtask    int   `json:"subtask"`
		StateSize  int64 `json:"stateSize"`
		Checkpoint *struct {
			DurationMs   int64 `json:"durationMs"`
			AlignmentMs  int64 `json:"alignmentMs"`
			StartDelayMs int64 `json:"startDelayMs"`
			EndToEndMs   int64 `json:"endToEndMs"`
			Unaligned    bool  `json:"unaligned"`
		} `json:"checkpoint"`
	} `json:"subtasks"`
	Lineage *struct {
		Events []struct {
			Kind  string `json:"kind"`
			Cause *struct {
				At      time.Time `json:"at"`
				Class   string    `json:"class"`
				Message string    `json:"message"`
				Task    string    `json:"task"`
				Subtask int       `json:"subtask"`
				Cause   string    `json:"cause"`
			} `json:"cause"`
		} `json:"events"`
	} `json:"lineage"`
}

// restSubtaskCheckpoint is one subtask of Flink's checkpoint details, as
// the MiniCluster sends it.
type restSubtaskCheckpoint struct {
	Index      int    `json:"index"`
	Status     string `json:"status"`
	StateSize  int64  `json:"state_size"`
	EndToEnd   int64  `json:"end_to_end_duration"`
	Checkpoint struct {
		Sync  int64 `json:"sync"`
		Async int64 `json:"async"`
	} `json:"checkpoint"`
	Alignment struct {
		Duration int64 `json:"duration"`
	} `json:"alignment"`
	StartDelay int64 `json:"start_delay"`
	Unaligned  bool  `json:"unaligned_checkpoint"`
}

// failMarkerSubtask is the source subtask the job's fail-once exception
// names in its message (SkewJob.SourceTagger).
var failMarkerSubtask = regexp.MustCompile(`read by source subtask (\d+) from `)

// checkCheckpointsAndCause: the vertex's subtask checkpoint figures are
// those of the checkpoint it names, as GET …/checkpoints/details/:id/
// subtasks/:vid answers now (a completed checkpoint's figures do not
// change); after the failover the lineage's failover carries the newest
// entry of GET /jobs/:id/exceptions, and its subtask is the one the
// exception's message names.
func (d *dashboard) checkCheckpointsAndCause(t *testing.T, w lifeWant) {
	t.Helper()
	var vv lifeCheckpointJSON
	d.getJSON(t, "/api/v1/jobs/"+w.jobID+"/vertices/"+w.vertexID, &vv)
	rest := d.rest
	if c := vv.Checkpoint; c != nil {
		var det struct {
			ID       int64                   `json:"id"`
			Subtasks []restSubtaskCheckpoint `json:"subtasks"`
		}
		path := fmt.Sprintf("/jobs/%s/checkpoints/details/%d/subtasks/%s", w.jobID, c.ID, w.vertexID)
		if err := rest.get(path, &det); err != nil {
			// Flink keeps the details of its latest few checkpoints only.
			t.Logf("%s: checkpoint %d: %v (no longer in Flink's history?)", w.step, c.ID, err)
		} else {
			for _, st := range det.Subtasks {
				if st.Status != "completed" || st.Index < 0 || st.Index >= len(vv.Subtasks) {
					continue
				}
				got := vv.Subtasks[st.Index]
				if got.Checkpoint == nil {
					t.Errorf("%s: subtask %d has no checkpoint figures; Flink's checkpoint %d has %+v", w.step, st.Index, c.ID, st)
					continue
				}
				want := fmt.Sprintf("state %d, duration %d, alignment %d, start delay %d, end to end %d, unaligned %v",
					st.StateSize, st.Checkpoint.Sync+st.Checkpoint.Async, st.Alignment.Duration, st.StartDelay, st.EndToEnd, st.Unaligned)
				have := fmt.Sprintf("state %d, duration %d, alignment %d, start delay %d, end to end %d, unaligned %v",
					got.StateSize, got.Checkpoint.DurationMs, got.Checkpoint.AlignmentMs, got.Checkpoint.StartDelayMs, got.Checkpoint.EndToEndMs, got.Checkpoint.Unaligned)
				if have != want {
					t.Errorf("%s: subtask %d of checkpoint %d: dashboard %s; Flink's REST %s", w.step, st.Index, c.ID, have, want)
				}
			}
		}
	} else if cps, err := rest.fc.Checkpoints(context.Background(), w.jobID); err == nil && cps.Latest.Completed != nil &&
		cps.Latest.Completed.LatestAckTimestamp < vv.Flink.At.UnixMilli() {
		t.Errorf("%s: the source vertex names no checkpoint; Flink's checkpoint %d completed before the dashboard's poll", w.step, cps.Latest.Completed.ID)
	}
	if !w.failover {
		return
	}
	var x struct {
		ExceptionHistory struct {
			Entries []struct {
				ExceptionName string `json:"exceptionName"`
				Stacktrace    string `json:"stacktrace"`
				Timestamp     int64  `json:"timestamp"`
				TaskName      string `json:"taskName"`
			} `json:"entries"`
		} `json:"exceptionHistory"`
	}
	if err := rest.get("/jobs/"+w.jobID+"/exceptions?maxExceptions=10", &x); err != nil {
		t.Fatalf("%s: %v", w.step, err)
	}
	if len(x.ExceptionHistory.Entries) == 0 {
		t.Fatalf("%s: Flink's exception history is empty after the failover", w.step)
	}
	root := x.ExceptionHistory.Entries[0]
	first, _, _ := strings.Cut(root.Stacktrace, "\n")
	first = strings.TrimRight(first, "\r")
	var cause *struct {
		At      time.Time `json:"at"`
		Class   string    `json:"class"`
		Message string    `json:"message"`
		Task    string    `json:"task"`
		Subtask int       `json:"subtask"`
		Cause   string    `json:"cause"`
	}
	if vv.Lineage != nil {
		for _, e := range vv.Lineage.Events {
			if e.Kind == "failover" && e.Cause != nil {
				cause = e.Cause
			}
		}
	}
	if cause == nil {
		t.Errorf("%s: no failover event carries a root cause; Flink's history starts with %s at %d", w.step, clip(first, 200), root.Timestamp)
		return
	}
	if cause.Class != root.ExceptionName || cause.At.UnixMilli() != root.Timestamp || first != strings.TrimSpace(cause.Class+": "+cause.Message) {
		t.Errorf("%s: failover cause %s: %q at %v; Flink's REST: %q at %d", w.step, cause.Class, cause.Message, cause.At, clip(first, 300), root.Timestamp)
	}
	// The adaptive scheduler's history names no task (1.20.5, 2.2.1 and
	// 2.3.0 alike): the dashboard then names none either.
	if root.TaskName == "" && cause.Task != "" || root.TaskName != "" && !strings.HasPrefix(root.TaskName, cause.Task+" (") {
		t.Errorf("%s: failover cause task %q; Flink's REST %q", w.step, cause.Task, root.TaskName)
	}
	// The job's fail-once exception is below Flink's root cause (a
	// deserializer's IOException wraps it): the innermost "Caused by:".
	deepest := ""
	if i := strings.LastIndex(root.Stacktrace, "\nCaused by: "); i >= 0 {
		deepest, _, _ = strings.Cut(root.Stacktrace[i+len("\nCaused by: "):], "\n")
		deepest = strings.TrimRight(deepest, "\r")
	}
	m := failMarkerSubtask.FindStringSubmatch(deepest)
	if m == nil {
		t.Errorf("%s: Flink's innermost cause %q is not the job's fail-once exception", w.step, clip(deepest, 300))
		return
	}
	if cause.Cause == "" || cause.Cause != clip(deepest, 300) && !strings.HasPrefix(deepest, strings.TrimSuffix(cause.Cause, "…")) {
		t.Errorf("%s: failover cause's innermost cause %q; Flink's REST %q", w.step, cause.Cause, clip(deepest, 300))
	}
	if want, _ := strconv.Atoi(m[1]); cause.Subtask >= 0 && cause.Subtask != want {
		t.Errorf("%s: failover cause subtask %d; the exception was thrown by source subtask %d (%s)", w.step, cause.Subtask, want, root.TaskName)
	}
}
