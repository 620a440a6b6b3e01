package live

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/skewscope/skewscope/internal/format"

	"github.com/skewscope/skewscope/collectors/kafka"
)

// TopicRetention is a topic's retention settings as its brokers reported
// them, observed once a minute (the Kafka collector's DescribeConfigs).
type TopicRetention struct {
	Topic string `json:"topic"`
	// RetentionMs and RetentionBytes are retention.ms and retention.bytes:
	// -1 no limit, null unknown (Errors says why).
	RetentionMs    *int64 `json:"retentionMs"`
	RetentionBytes *int64 `json:"retentionBytes"`
	// CleanupPolicy is cleanup.policy ("delete", "compact" or both), ""
	// unknown.
	CleanupPolicy string `json:"cleanupPolicy"`
	// Deletes reports that the policy deletes old records and the time
	// limit is finite: RetentionMs is then when a record is deleted,
	// read or not.
	Deletes bool     `json:"deletes"`
	Errors  []string `json:"errors,omitempty"`
	// Basis is "observed"; Age is when the settings were read.
	Basis string `json:"basis"`
	Age   Age    `json:"freshness"`
}

// retentionView is a topic's retention settings for a page; ok is false
// when they were never read.
func retentionView(topic string, r kafka.Retention, now time.Time) (TopicRetention, bool) {
	if r.UpdatedAt.IsZero() && r.Err == nil {
		return TopicRetention{}, false
	}
	tr := TopicRetention{Topic: topic, CleanupPolicy: r.CleanupPolicy, Basis: "observed", Age: ageOf(r.UpdatedAt, now, r.Stale, r.Err)}
	limit := func(l kafka.RetentionLimit) *int64 {
		if !l.Known {
			if l.Err != nil {
				tr.Errors = append(tr.Errors, l.Err.Error())
			}
			return nil
		}
		v := l.Value
		return &v
	}
	tr.RetentionMs, tr.RetentionBytes = limit(r.Time), limit(r.Bytes)
	if r.PolicyErr != nil {
		tr.Errors = append(tr.Errors, r.PolicyErr.Error())
	}
	if r.Err != nil && !r.UpdatedAt.IsZero() {
		tr.Errors = append(tr.Errors, "the latest read failed, these are older values: "+r.Err.Error())
	}
	_, tr.Deletes = r.Duration()
	return tr, true
}

// timeToRetention is, estimated, how long until a reader's lag in time
// reaches the retention (retention seconds > 0), from the lag time's trend
// that the catch-up estimate also rests on: a reader at position rate
// pos records/s on a partition written at produced records/s moves through
// records written pos/produced seconds per second, so its lag in time
// grows by 1 − pos/produced each second. -1 when the lag is not growing
// (Trend), its time or the retention is unknown; 0 when it is already
// there (records are being deleted unread).
func timeToRetention(lagSeconds float64, lagKind string, rd Reading, retention float64) float64 {
	if retention <= 0 || rd.Trend != TrendGrowing || rd.ProducedRate <= 0 || rd.PositionRate < 0 ||
		lagKind == kafka.TimeLagUnknown.String() || lagKind == kafka.TimeLagCaughtUp.String() {
		return -1
	}
	growth := 1 - rd.PositionRate/rd.ProducedRate
	if !(growth > 0) {
		return -1
	}
	if lagSeconds >= retention {
		return 0
	}
	return (retention - lagSeconds) / growth
}

// retentionWords is a retention time in words: "2-minute", "7-day",
// "90-second", or the seconds as format.Seconds writes them.
func retentionWords(sec float64) string {
	s := int64(math.Round(sec))
	for _, u := range []struct {
		n    int64
		unit string
	}{{86400, "day"}, {3600, "hour"}, {60, "minute"}, {1, "second"}} {
		if s >= u.n && s%u.n == 0 {
			return strconv.FormatInt(s/u.n, 10) + "-" + u.unit
		}
	}
	return format.Seconds(sec)
}

// limitText is a retention limit in words for a page.
func limitText(v *int64, bytes bool) string {
	switch {
	case v == nil:
		return "unknown"
	case *v < 0:
		return "no limit"
	case bytes:
		return format.Bytes(*v)
	}
	return format.Seconds(float64(*v) / 1000)
}

// RetentionText is a topic's retention settings in words: "2 m 0 s,
// delete (no byte limit)".
func RetentionText(tr TopicRetention) string {
	s := limitText(tr.RetentionMs, false)
	if tr.RetentionBytes != nil && *tr.RetentionBytes >= 0 {
		s += " or " + limitText(tr.RetentionBytes, true) + " per partition"
	}
	return s + ", cleanup " + cmp.Or(tr.CleanupPolicy, "unknown")
}

// retentionFigure is the source's topics' retention, observed.
func retentionFigure(vv *VertexView) Figure {
	f := Figure{Label: "Retention", Value: -1, Text: "–", Kind: Observed, Note: "not read yet (DescribeConfigs, once a minute)"}
	if len(vv.Retention) == 0 {
		return f
	}
	var parts []string
	shortest := int64(-1)
	oldest := vv.Retention[0].Age
	for _, tr := range vv.Retention {
		parts = append(parts, tr.Topic+": "+RetentionText(tr))
		if tr.Deletes && (shortest < 0 || *tr.RetentionMs < shortest) {
			shortest = *tr.RetentionMs
		}
		if tr.Age.Seconds > oldest.Seconds {
			oldest = tr.Age
		}
	}
	f.Note = strings.Join(parts, "; ") + " · read from the brokers " + format.Seconds(float64(oldest.Seconds)) + " ago"
	if oldest.Stale || oldest.Err != "" {
		f.Note += " (the latest read failed)"
	}
	if shortest >= 0 {
		f.Value, f.Text = float64(shortest)/1000, format.Seconds(float64(shortest)/1000)
	} else {
		f.Text = "no deletion by time"
	}
	return f
}

// timeToRetentionFigure is the soonest a subtask's lag time reaches its
// partition's retention, estimated: records are deleted unread from then
// on.
func timeToRetentionFigure(vv *VertexView) Figure {
	f := Figure{Label: "Time to retention", Value: -1, Text: "–", Kind: Estimated}
	var worst *SubtaskRow
	for i := range vv.Subtasks {
		r := &vv.Subtasks[i]
		if r.TimeToRetentionSeconds >= 0 && (worst == nil || r.TimeToRetentionSeconds < worst.TimeToRetentionSeconds) {
			worst = r
		}
	}
	switch {
	case worst == nil && len(vv.Retention) == 0:
		f.Note = "needs the topics' retention"
		return f
	case worst == nil:
		f.Note = "no partition's lag time is growing toward a retention limit"
		return f
	}
	f.Value = worst.TimeToRetentionSeconds
	ret := retentionWords(worst.RetentionSeconds)
	if worst.TimeToRetentionSeconds == 0 {
		f.Text = "0 s"
		f.Note = fmt.Sprintf("subtask %d is past the %s retention of %s: records are deleted unread", worst.Subtask, ret, worst.RetentionPartition)
		return f
	}
	f.Text = "≈ " + format.Seconds(worst.TimeToRetentionSeconds)
	f.Note = fmt.Sprintf("at this rate subtask %d falls past the %s retention of %s in about %s; from then on Kafka deletes records before the job reads them (from the lag time's trend)",
		worst.Subtask, ret, worst.RetentionPartition, aboutWords(worst.TimeToRetentionSeconds))
	return f
}

// aboutWords is an estimate's duration in whole units: "45 s", "4 min",
// "2 h".
func aboutWords(sec float64) string {
	switch {
	case sec < 90:
		return strconv.FormatFloat(math.Ceil(sec), 'f', 0, 64) + " s"
	case sec < 90*60:
		return strconv.FormatFloat(math.Round(sec/60), 'f', 0, 64) + " min"
	case sec < 36*3600:
		return strconv.FormatFloat(math.Round(sec/3600), 'f', 0, 64) + " h"
	}
	return strconv.FormatFloat(math.Round(sec/86400), 'f', 0, 64) + " days"
}
