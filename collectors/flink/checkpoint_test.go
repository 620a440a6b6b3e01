package flink

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rawFigure reads one figure of a recorded subtask the plain way (a path
// of object keys), -1 when absent: the parser is checked against what the
// file says, not against itself.
func rawFigure(m map[string]any, path ...string) int64 {
	var v any = m
	for _, k := range path {
		o, ok := v.(map[string]any)
		if !ok {
			return -1
		}
		v = o[k]
	}
	f, ok := v.(float64)
	if !ok {
		return -1
	}
	return int64(f)
}

// TestRecordedCheckpointSubtasks parses the per-subtask checkpoint details
// that 1.20.5, 2.2.1 and 2.3.0 answered, for a source and a keyed vertex.
func TestRecordedCheckpointSubtasks(t *testing.T) {
	for _, version := range versions {
		for _, role := range []string{"keyed", "source"} {
			t.Run(version+"/"+role, func(t *testing.T) {
				body, err := os.ReadFile(filepath.Join("..", "testdata", "flink", version, "checkpoint-subtasks-"+role+".json"))
				if err != nil {
					t.Fatal(err)
				}
				var task CheckpointTask
				if err := json.Unmarshal(body, &task); err != nil {
					t.Fatal(err)
				}
				var raw struct {
					LatestAck int64            `json:"latest_ack_timestamp"`
					Subtasks  []map[string]any `json:"subtasks"`
				}
				if err := json.Unmarshal(body, &raw); err != nil {
					t.Fatal(err)
				}
				if len(task.Subtasks) != len(raw.Subtasks) || len(task.Subtasks) == 0 {
					t.Fatalf("%d subtasks, the file has %d", len(task.Subtasks), len(raw.Subtasks))
				}
				figs, err := checkpointFiguresOf(&task)
				if err != nil {
					t.Errorf("checkpointFiguresOf = %v, want no error: the recorded figures are real", err)
				}
				if figs.ackAt.IsZero() || figs.ackAt.UnixMilli() != raw.LatestAck {
					t.Errorf("ackAt = %v, want %d", figs.ackAt, raw.LatestAck)
				}
				for i, r := range raw.Subtasks {
					got := task.Subtasks[i]
					want := []struct {
						name      string
						got, want int64
					}{
						{"state_size", got.StateSize, rawFigure(r, "state_size")},
						{"checkpointed_size", got.CheckpointedSize, rawFigure(r, "checkpointed_size")},
						{"end_to_end_duration", got.EndToEndDuration, rawFigure(r, "end_to_end_duration")},
						{"checkpoint.sync", got.SyncMs, rawFigure(r, "checkpoint", "sync")},
						{"checkpoint.async", got.AsyncMs, rawFigure(r, "checkpoint", "async")},
						{"alignment.duration", got.AlignmentMs, rawFigure(r, "alignment", "duration")},
						{"alignment.processed", got.AlignmentProcessed, rawFigure(r, "alignment", "processed")},
						{"alignment.persisted", got.AlignmentPersisted, rawFigure(r, "alignment", "persisted")},
						{"alignment.buffered", got.AlignmentBuffered, rawFigure(r, "alignment", "buffered")},
						{"start_delay", got.StartDelayMs, rawFigure(r, "start_delay")},
					}
					for _, w := range want {
						if w.want < 0 {
							t.Errorf("subtask %d: the recording has no %s", i, w.name)
						}
						if w.got != w.want {
							t.Errorf("subtask %d %s = %d, want %d", i, w.name, w.got, w.want)
						}
					}
					if got.DurationMs() != got.SyncMs+got.AsyncMs {
						t.Errorf("subtask %d DurationMs() = %d, want sync + async %d", i, got.DurationMs(), got.SyncMs+got.AsyncMs)
					}
					if u, _ := r["unaligned_checkpoint"].(bool); u != got.Unaligned {
						t.Errorf("subtask %d Unaligned = %v, want %v", i, got.Unaligned, u)
					}
					if figs.subtasks[got.Index] == nil || *figs.subtasks[got.Index] != got {
						t.Errorf("subtask %d figures = %+v, want %+v", i, figs.subtasks[got.Index], got)
					}
				}
			})
		}
	}
}

// TestCollectorCheckpointFigures: a poll carries every subtask's figures
// of the latest completed checkpoint into the snapshot, with the
// checkpoint's id and completion time.
func TestCollectorCheckpointFigures(t *testing.T) {
	for _, version := range versions {
		t.Run(version, func(t *testing.T) {
			f := newFakeFlink(t, version)
			srv := f.start()
			c := newTestCollector(t, Config{URL: srv.URL})
			s := c.PollOnce(context.Background())
			var task CheckpointTask
			if err := json.Unmarshal(f.recordedBody("checkpoint-subtasks-keyed"), &task); err != nil {
				t.Fatal(err)
			}
			v := findVertex(t, s.Jobs[0], f.keyedID)
			if v.Err != nil {
				t.Fatalf("keyed vertex: %v", v.Err)
			}
			if v.StateCheckpointID != task.ID || v.StateCheckpointAt.UnixMilli() != task.LatestAckTimestamp {
				t.Errorf("StateCheckpointID, At = %d, %v; want %d, %d", v.StateCheckpointID, v.StateCheckpointAt, task.ID, task.LatestAckTimestamp)
			}
			for _, st := range task.Subtasks {
				got := v.Subtasks[st.Index].Checkpoint
				if got == nil || *got != st {
					t.Errorf("subtask %d Checkpoint = %+v, want %+v", st.Index, got, st)
				}
			}
		})
	}
}

func TestSubtaskCheckpointFaults(t *testing.T) {
	full := `"className":"completed","index":%s,"status":"completed","ack_timestamp":1796006847633,"end_to_end_duration":57,"checkpointed_size":6962,"state_size":6962,"checkpoint":{"sync":3,"async":1},"alignment":{"buffered":0,"processed":411,"persisted":0,"duration":5},"start_delay":15,"unaligned_checkpoint":true,"aborted":false`
	cases := []struct {
		name    string
		body    string
		want    SubtaskCheckpoint
		wantErr string // "" none; else a part of the message
	}{
		{
			name: "complete",
			body: "{" + strings.Replace(full, "%s", "1", 1) + "}",
			want: SubtaskCheckpoint{Index: 1, Status: "completed", Completed: true, CheckpointedSize: 6962, StateSize: 6962, AckTimestamp: 1796006847633,
				EndToEndDuration: 57, SyncMs: 3, AsyncMs: 1, AlignmentMs: 5, AlignmentBuffered: 0, AlignmentProcessed: 411, AlignmentPersisted: 0, StartDelayMs: 15, Unaligned: true},
		},
		{
			name: "fields missing",
			body: `{"className":"completed","index":0,"status":"completed","state_size":10}`,
			want: SubtaskCheckpoint{Index: 0, Status: "completed", Completed: true, CheckpointedSize: 10, StateSize: 10, AckTimestamp: -1,
				EndToEndDuration: -1, SyncMs: -1, AsyncMs: -1, AlignmentMs: -1, AlignmentBuffered: -1, AlignmentProcessed: -1, AlignmentPersisted: -1, StartDelayMs: -1},
		},
		{
			name: "negatives dropped",
			body: `{"className":"completed","index":0,"status":"completed","state_size":-5,"checkpointed_size":3,"checkpoint":{"sync":-2,"async":1},"alignment":{"duration":-7},"start_delay":-1}`,
			want: SubtaskCheckpoint{Index: 0, Status: "completed", Completed: true, CheckpointedSize: 3, StateSize: -1, AckTimestamp: -1,
				EndToEndDuration: -1, SyncMs: -1, AsyncMs: 1, AlignmentMs: -1, AlignmentBuffered: -1, AlignmentProcessed: -1, AlignmentPersisted: -1, StartDelayMs: -1},
			wantErr: "flink answered subtask 0 state_size -5, want 0..1125899906842624 (and 2 more checkpoint figures out of range)",
		},
		{
			name: "absurd dropped",
			body: `{"className":"completed","index":2,"status":"completed","state_size":1,"checkpoint":{"sync":1,"async":9000000000000},"start_delay":4}`,
			want: SubtaskCheckpoint{Index: 2, Status: "completed", Completed: true, CheckpointedSize: 1, StateSize: 1, AckTimestamp: -1,
				EndToEndDuration: -1, SyncMs: 1, AsyncMs: -1, AlignmentMs: -1, AlignmentBuffered: -1, AlignmentProcessed: -1, AlignmentPersisted: -1, StartDelayMs: 4},
			wantErr: "subtask 2 checkpoint.async 9000000000000",
		},
		{
			name: "pending",
			body: `{"className":"pending","index":3,"status":"pending_or_failed"}`,
			want: SubtaskCheckpoint{Index: 3, Status: "pending_or_failed", CheckpointedSize: -1, StateSize: -1, AckTimestamp: -1,
				EndToEndDuration: -1, SyncMs: -1, AsyncMs: -1, AlignmentMs: -1, AlignmentBuffered: -1, AlignmentProcessed: -1, AlignmentPersisted: -1, StartDelayMs: -1},
		},
		{
			name: "wrong types",
			body: `{"className":"completed","index":0,"checkpoint":"fast","alignment":[1]}`,
			// A body Flink never sends: decoding fails, the answer is an error.
			wantErr: "cannot unmarshal",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var s SubtaskCheckpoint
			err := json.Unmarshal([]byte(tc.body), &s)
			if err == nil {
				err = checkSubtaskCheckpoint(&s)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("error = %v, want none", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
			if tc.name == "wrong types" {
				return
			}
			var re *RangeError
			if tc.wantErr != "" && !errors.As(err, &re) {
				t.Errorf("error %v is not a RangeError", err)
			}
			if s != tc.want {
				t.Errorf("got  %+v\nwant %+v", s, tc.want)
			}
			if s.Completed && tc.want.SyncMs >= 0 && tc.want.AsyncMs >= 0 && s.DurationMs() != tc.want.SyncMs+tc.want.AsyncMs {
				t.Errorf("DurationMs() = %d", s.DurationMs())
			}
			if (tc.want.SyncMs < 0 || tc.want.AsyncMs < 0) && s.DurationMs() != -1 {
				t.Errorf("DurationMs() = %d, want -1 with a part unknown", s.DurationMs())
			}
		})
	}
}

// TestCheckpointFiguresOfBadIndexes: subtasks outside the answer's own
// range or not acknowledged carry no figures; out-of-range figures of one
// subtask leave the others'.
func TestCheckpointFiguresOfBadIndexes(t *testing.T) {
	body := `{"id":7,"latest_ack_timestamp":-3,"subtasks":[
		{"className":"completed","index":-1,"status":"completed","state_size":1},
		{"className":"completed","index":0,"status":"completed","state_size":5,"start_delay":2},
		{"className":"pending","index":1,"status":"pending_or_failed"},
		{"className":"completed","index":2,"status":"completed","state_size":-9,"start_delay":3}]}`
	var task CheckpointTask
	if err := json.Unmarshal([]byte(body), &task); err != nil {
		t.Fatal(err)
	}
	figs, err := checkpointFiguresOf(&task)
	if err == nil || !strings.Contains(err.Error(), "subtask 2 checkpointed_size -9") {
		t.Errorf("error = %v, want one naming subtask 2 checkpointed_size (set from state_size)", err)
	}
	if !figs.ackAt.IsZero() {
		t.Errorf("ackAt = %v, want zero for a negative timestamp", figs.ackAt)
	}
	if len(figs.subtasks) != 3 {
		t.Fatalf("%d subtasks, want 3", len(figs.subtasks))
	}
	if s := figs.subtasks[0]; s == nil || s.StateSize != 5 || s.StartDelayMs != 2 {
		t.Errorf("subtask 0 = %+v", s)
	}
	if figs.subtasks[1] != nil {
		t.Errorf("pending subtask 1 = %+v, want nil", figs.subtasks[1])
	}
	if s := figs.subtasks[2]; s == nil || s.StateSize != -1 || s.StartDelayMs != 3 {
		t.Errorf("subtask 2 = %+v, want the state size dropped and the start delay kept", s)
	}
}
