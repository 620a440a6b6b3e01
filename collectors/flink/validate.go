package flink

import (
	"fmt"
	"log/slog"
	"math"
	"runtime/debug"
	"strconv"
)

// MaxParallelism is Flink's upper bound for a parallelism and a max
// parallelism (KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM, 2^15).
const MaxParallelism = 1 << 15

// RangeError is a number from Flink outside what Flink can mean; the vertex
// it belongs to is not published with it.
type RangeError struct {
	Field string // as Flink names it, e.g. "parallelism"
	Value int64
	Want  string // the accepted range, e.g. "1..32768"
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("flink answered %s %d, want %s", e.Field, e.Value, e.Want)
}

// validateVertex checks the parallelism and max parallelism of a job
// vertex: both within 1..MaxParallelism, the max not below the parallelism.
func validateVertex(v Vertex) error {
	want := fmt.Sprintf("1..%d", MaxParallelism)
	if v.Parallelism < 1 || v.Parallelism > MaxParallelism {
		return &RangeError{Field: "parallelism", Value: int64(v.Parallelism), Want: want}
	}
	if v.MaxParallelism < 1 || v.MaxParallelism > MaxParallelism {
		return &RangeError{Field: "maxParallelism", Value: int64(v.MaxParallelism), Want: want}
	}
	if v.MaxParallelism < v.Parallelism {
		return &RangeError{Field: "maxParallelism", Value: int64(v.MaxParallelism), Want: fmt.Sprintf("≥ parallelism %d", v.Parallelism)}
	}
	return nil
}

// checkSubtask checks a subtask index of an answer about a vertex of
// parallelism n.
func checkSubtask(field string, i, n int) error {
	if i < 0 || i >= n {
		return &RangeError{Field: field + " subtask index", Value: int64(i), Want: fmt.Sprintf("0..%d (parallelism %d)", n-1, n)}
	}
	return nil
}

// checkOffsets replaces every Kafka offset below −1 (Flink's "none") with
// −1 and returns an error naming the first one.
func checkOffsets(o *KafkaSourceObservation) error {
	var first error
	bad := 0
	fix := func(off *int64, id string) {
		if *off >= -1 {
			return
		}
		if first == nil {
			first = &RangeError{Field: id, Value: *off, Want: "≥ -1"}
		}
		bad++
		*off = -1
	}
	for i := range o.States {
		st := &o.States[i]
		fix(&st.CurrentOffset, st.CurrentID)
		fix(&st.CommittedOffset, st.CommittedID)
	}
	if bad > 1 {
		return fmt.Errorf("%w (and %d more offsets below -1)", first, bad-1)
	}
	return first
}

// PanicError is a panic recovered while handling one answer: the item
// being read is marked broken and polling goes on.
type PanicError struct {
	Value any
}

func (e *PanicError) Error() string { return fmt.Sprintf("internal error: panic: %v", e.Value) }

// recovered turns a recovered panic value into a PanicError and logs it
// once, with the stack, at Error.
func recovered(log *slog.Logger, what string, r any) error {
	log.Error("flink collector panicked; recovered", "in", what, "error", r, "stack", string(debug.Stack()))
	return &PanicError{Value: r}
}

// Bounds of a subtask's checkpoint figures: past them a value is not a
// measurement (Flink's checkpoint timeout defaults to 10 minutes; no
// subtask holds a pebibyte of state).
const (
	maxCheckpointMs    = 30 * 24 * 3600 * 1000 // 30 days
	maxCheckpointBytes = 1 << 50
)

// checkSubtaskCheckpoint replaces every figure of a subtask's checkpoint
// that is negative or past its bound with -1 (unknown) and returns an
// error naming the first one, with Flink's field name.
func checkSubtaskCheckpoint(s *SubtaskCheckpoint) error {
	var first error
	bad := 0
	fix := func(v *int64, field string, limit int64) {
		// -1 is the parser's own "not in the answer".
		if *v == -1 || (*v >= 0 && *v <= limit) {
			return
		}
		if first == nil {
			first = &RangeError{Field: "subtask " + strconv.Itoa(s.Index) + " " + field, Value: *v, Want: "0.." + strconv.FormatInt(limit, 10)}
		}
		bad++
		*v = -1
	}
	fix(&s.CheckpointedSize, "checkpointed_size", maxCheckpointBytes)
	fix(&s.StateSize, "state_size", maxCheckpointBytes)
	fix(&s.EndToEndDuration, "end_to_end_duration", maxCheckpointMs)
	fix(&s.SyncMs, "checkpoint.sync", maxCheckpointMs)
	fix(&s.AsyncMs, "checkpoint.async", maxCheckpointMs)
	fix(&s.AlignmentMs, "alignment.duration", maxCheckpointMs)
	fix(&s.AlignmentBuffered, "alignment.buffered", maxCheckpointBytes)
	fix(&s.AlignmentProcessed, "alignment.processed", maxCheckpointBytes)
	fix(&s.AlignmentPersisted, "alignment.persisted", maxCheckpointBytes)
	fix(&s.StartDelayMs, "start_delay", maxCheckpointMs)
	if s.AckTimestamp < -1 {
		fix(&s.AckTimestamp, "ack_timestamp", math.MaxInt64)
	}
	if bad > 1 {
		return fmt.Errorf("%w (and %d more checkpoint figures out of range)", first, bad-1)
	}
	return first
}
