package web

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/skewscope/skewscope/internal/format"
	"github.com/skewscope/skewscope/live"
)

// watermarkText is a watermark as a UTC time with how far behind now it
// is: "12:04:05 UTC, 41 min behind"; "none yet" for Flink's
// Long.MIN_VALUE.
func watermarkText(ms int64, none bool, lagSeconds float64) string {
	if none {
		return "none yet"
	}
	t := time.UnixMilli(ms).UTC().Format("2006-01-02 15:04:05 UTC")
	if lagSeconds < 0 {
		return t + ", " + format.Seconds(-lagSeconds) + " ahead of now"
	}
	return t + ", " + format.Seconds(lagSeconds) + " behind"
}

// holderText says in one sentence what holds the watermark of vertex
// (its name) back, and how that is known, with one more naming the
// partitions watermark alignment pauses meanwhile, if any; "" when
// nothing is known.
func holderText(vertex string, w *live.VertexWatermark) string {
	if w == nil {
		return ""
	}
	h := w.Holder
	behind := "The watermark of " + vertex + " is " + watermarkText(w.WatermarkMs, w.None, w.LagSeconds)
	if w.None {
		behind = vertex + " has no watermark yet"
	}
	if h == nil {
		return behind + " (observed); the input it comes from is not found: an operator may hold it back itself."
	}
	part := fmt.Sprintf("partition %s-%d (subtask %d of %s)", h.Topic, h.Partition, h.Subtask, h.VertexName)
	kind := "observed: Flink's split watermark"
	if h.Kind == live.Estimated {
		kind = "estimated: its last record read is the oldest, before Flink 2.1 reports split watermarks"
	}
	s := holderSentence(behind, part, kind, h)
	if len(h.Paused) > 0 && h.Cause != live.HoldAligning && h.Cause != live.HoldStarved {
		s += " Watermark alignment pauses " + pausedList(h.Paused) + " meanwhile: they wait for it."
	}
	return s
}

// pausedList names partitions, the first five and how many more.
func pausedList(ps []string) string {
	const show = 5
	n := "partition "
	if len(ps) > 1 {
		n = "partitions "
	}
	if len(ps) <= show {
		return n + strings.Join(ps, ", ")
	}
	return fmt.Sprintf("%s%s and %d more", n, strings.Join(ps[:show], ", "), len(ps)-show)
}

// holderSentence is holderText's sentence for h's cause.
func holderSentence(behind, part, kind string, h *live.WatermarkHolder) string {
	switch h.Cause {
	case live.HoldStarved:
		return fmt.Sprintf("%s because %s of %s read no partition (%d partitions): a reader without a split emits no watermark, so the job waits forever unless the source declares idleness (WatermarkStrategy.withIdleness, or scan.watermark.idle-timeout in SQL). Observed: Flink's metric ids list no partition on them.",
			behind, subtaskList(h.Starved), h.VertexName, h.Partitions)
	case live.HoldIdle:
		skip := "no idle timeout shorter than that lets the job skip it; with WatermarkStrategy.withIdleness (or scan.watermark.idle-timeout in SQL) it would advance"
		return fmt.Sprintf("%s because %s has had no new record for at least %s and %s (%s; the quiet time observed from its end offsets).",
			behind, part, format.Seconds(h.QuietSeconds), skip, kind)
	case live.HoldPaused:
		return fmt.Sprintf("%s because watermark alignment pauses %s (%s).", behind, part, kind)
	case live.HoldBehind:
		return fmt.Sprintf("%s because %s is %s behind its partition's end: its records' event time is old until the reader catches up (%s).", behind, part, format.Seconds(h.LagSeconds), kind)
	case live.HoldBackpressured:
		return fmt.Sprintf("%s because %s reads slowly under backpressure (%s).", behind, part, kind)
	case live.HoldOldest:
		return fmt.Sprintf("%s: it follows %s, whose records are the oldest read (%s).", behind, part, kind)
	case live.HoldAligning:
		return fmt.Sprintf("%s: it follows %s, whose records are the oldest read, and watermark alignment pauses %s, which run ahead of it by more than the group's maximum drift, until it catches up (%s; the pauses observed from Flink's paused times and alignment drift).",
			behind, part, pausedList(h.Paused), kind)
	case live.HoldUndetermined:
		if len(h.Candidates) > 0 {
			return fmt.Sprintf("%s: it comes from subtask %d of %s (observed), which reads %s; which of them holds it is not determined: this Flink reports no split watermarks, and no one of them is idle while the others are not, nor had its last record read produced 10 s before theirs (estimated from their end offsets; records may carry older timestamps than their produce times).",
				behind, h.Subtask, h.VertexName, strings.Join(h.Candidates, ", "))
		}
	}
	return fmt.Sprintf("%s: it comes from subtask %d of %s; which of its partitions is not determined by Flink's metric ids (observed).", behind, h.Subtask, h.VertexName)
}

// jobWatermarkText is the job page's event-time sentence, "" when the job
// reports no event time.
func jobWatermarkText(jv live.JobView) string {
	et := jv.EventTime
	if et == nil {
		return ""
	}
	for i := range et.Vertices {
		if et.Vertices[i].ID == et.VertexID {
			s := holderText("the job", &et.Vertices[i])
			if et.Holder != nil && et.Holder.SkipsIdle {
				s += " The job skips an idle input: its watermark strategy has an idle timeout."
			}
			return s
		}
	}
	return ""
}

// vertexWatermarks is each vertex's watermark text on the job page, by id.
func vertexWatermarks(jv live.JobView) map[string]string {
	out := map[string]string{}
	if jv.EventTime == nil {
		return out
	}
	for _, w := range jv.EventTime.Vertices {
		out[w.ID] = watermarkText(w.WatermarkMs, w.None, w.LagSeconds) + " (subtask " + strconv.Itoa(w.Subtask) + ")"
	}
	return out
}

// partitionEventTimeText is a partition's event time as its cell's reading
// says it: "watermark 2026-12-02 10:00:00 UTC, 1 m 20 s behind (observed)
// · idle: no new record for at least 1 m 10 s".
func partitionEventTimeText(e *live.PartitionEventTime) string {
	var b strings.Builder
	switch {
	case e.Kind == live.Estimated && e.None:
		b.WriteString("no watermark yet: no record read (estimated)")
	case e.Kind == live.Estimated:
		b.WriteString("watermark ≈ " + watermarkText(e.WatermarkMs, false, e.LagSeconds) + " (estimated from the last record read)")
	default:
		b.WriteString("watermark " + watermarkText(e.WatermarkMs, e.None, e.LagSeconds) + " (observed)")
	}
	switch e.State {
	case live.PartitionIdle:
		b.WriteString(" · idle: no new record for at least " + format.Seconds(e.QuietSeconds))
	case live.PartitionPaused:
		b.WriteString(" · paused by watermark alignment")
		if e.PausedPerS >= 0 {
			b.WriteString(" (" + strconv.FormatFloat(e.PausedPerS, 'f', 0, 64) + " ms of each second, observed)")
		}
	case live.PartitionBackpressured:
		b.WriteString(" · backpressured")
	default:
		b.WriteString(" · active")
	}
	return b.String()
}

// hasWatermarks reports whether any subtask of vv reports a watermark.
func hasWatermarks(vv live.VertexView) bool {
	for i := range vv.Subtasks {
		if vv.Subtasks[i].Watermark != nil {
			return true
		}
	}
	return vv.EventTime != nil
}

// subtaskWatermarkText is a subtask's watermark in its table's column:
// the time and how far behind, then what the dashboard knows of it
// ("lowest", "no partition", "skipped as idle", "paused by alignment");
// "–" when Flink reports none for it.
func subtaskWatermarkText(w *live.SubtaskWatermark) string {
	if w == nil {
		return format.Unknown
	}
	t := watermarkText(w.WatermarkMs, w.None, w.LagSeconds)
	if w.Holds {
		t += " · lowest"
	}
	if w.Starved {
		t += " · reads no partition"
	}
	if w.Skipped {
		t += " · skipped as idle"
	}
	if w.Paused {
		t += " · paused by alignment"
	}
	return t
}
