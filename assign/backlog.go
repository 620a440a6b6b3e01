package assign

import (
	"fmt"
	"math"
	"time"
)

// SubtaskBacklog is one subtask's backlog under a candidate layout and when
// it clears.
type SubtaskBacklog struct {
	Subtask int `json:"subtask"`
	// Records is the backlog of the subtask's partitions (records not yet
	// read), InputRate their produced records/s.
	Records   float64 `json:"records"`
	InputRate float64 `json:"inputRate"`
	// ClearSeconds is Records / (capacity − InputRate): how long the
	// subtask takes to read its backlog at full capacity while the
	// partitions go on producing; 0 without a backlog, -1 never (capacity ≤
	// input rate).
	ClearSeconds float64 `json:"clearSeconds"`
	// Retention is the shortest retention of the subtask's topics, 0 when
	// none is known (or every one is infinite); LossStops reports that its
	// lag time stays under it: the subtask reads faster than its
	// partitions are written, so the lag time falls and records stop being
	// deleted unread. False without a known retention; true for a subtask
	// without partitions.
	RetentionSeconds float64 `json:"retentionSeconds"`
	LossStops        bool    `json:"lossStops"`
}

// backlogOf is each subtask's backlog and clearance time under layout a
// for a source subtask processing capacity records/s at full busy
// (estimated: the produced rates hold and the subtask runs at capacity
// until it catches up). Nil when the backlog or the capacity is unknown.
func backlogOf(a Assignment, rates, backlog map[TopicPartition]float64, retention map[string]time.Duration, capacity float64) []SubtaskBacklog {
	if backlog == nil || !(capacity > 0) {
		return nil
	}
	out := make([]SubtaskBacklog, a.Parallelism)
	for i, ps := range a.Subtasks {
		b := SubtaskBacklog{Subtask: i}
		shortest := time.Duration(0)
		for _, tp := range ps {
			b.Records += backlog[tp]
			b.InputRate += rates[tp]
			if d := retention[tp.Topic]; d > 0 && (shortest == 0 || d < shortest) {
				shortest = d
			}
		}
		b.ClearSeconds = ClearSeconds(b.Records, capacity, b.InputRate)
		b.RetentionSeconds = shortest.Seconds()
		// A subtask without partitions loses nothing.
		b.LossStops = len(ps) == 0 || shortest > 0 && capacity > b.InputRate
		out[i] = b
	}
	return out
}

// ClearSeconds is how long reading records of backlog takes at capacity
// records/s while inputRate records/s keep arriving: backlog / (capacity −
// inputRate); 0 without a backlog, -1 when it never clears (capacity ≤
// inputRate) or a figure is not a number.
func ClearSeconds(backlog, capacity, inputRate float64) float64 {
	switch {
	case math.IsNaN(backlog) || math.IsNaN(capacity) || math.IsNaN(inputRate):
		return -1
	case backlog <= 0:
		return 0
	case capacity <= inputRate:
		return -1
	}
	return backlog / (capacity - inputRate)
}

// slowestClear is the longest clearance over bs (-1 when one never
// clears) and whether every subtask's loss stops: false when no subtask's
// retention is known, since nothing can then be said of it.
func slowestClear(bs []SubtaskBacklog) (float64, bool) {
	worst, stops, known := 0.0, true, false
	for _, b := range bs {
		if b.ClearSeconds < 0 {
			worst = -1
		} else if worst >= 0 {
			worst = max(worst, b.ClearSeconds)
		}
		known = known || b.RetentionSeconds > 0
		stops = stops && b.LossStops
	}
	return worst, stops && known
}

// backlogVerdict is the clearance in words, appended to a candidate's
// verdict ("" without a backlog figure).
func backlogVerdict(c Candidate) string {
	if c.Backlog == nil {
		return ""
	}
	for _, b := range c.Backlog {
		if b.ClearSeconds < 0 {
			s := fmt.Sprintf("; backlog never clears: subtask %d reads no faster than its partitions are written", b.Subtask)
			if b.RetentionSeconds > 0 {
				s += ", so its lag time grows past the retention and records are deleted unread"
			}
			return s
		}
	}
	if c.ClearSeconds == 0 {
		return "; no backlog"
	}
	s := "; backlog clears in about " + FormatSeconds(c.ClearSeconds) + " (estimated)"
	if c.LossStops {
		s += ", lag time falls, so no record is deleted unread once it is under the retention"
	}
	return s
}

// FormatSeconds writes a duration in whole units for an estimate: "45 s",
// "4 min", "2 h 5 min".
func FormatSeconds(s float64) string {
	switch {
	case s < 90:
		return fmt.Sprintf("%.0f s", math.Ceil(s))
	case s < 90*60:
		return fmt.Sprintf("%.0f min", math.Round(s/60))
	}
	h := math.Floor(s / 3600)
	m := math.Round((s - h*3600) / 60)
	if m == 60 {
		h, m = h+1, 0
	}
	return fmt.Sprintf("%.0f h %.0f min", h, m)
}
