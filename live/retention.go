package live

import (
	"time"

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
func timeToRetention(lagSeconds float64, lagKind kafka.TimeLagKind, rd Reading, retention float64) float64 {
	if retention <= 0 || rd.Trend != TrendGrowing || rd.ProducedRate <= 0 || rd.PositionRate < 0 ||
		lagKind == kafka.TimeLagUnknown || lagKind == kafka.TimeLagCaughtUp {
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

// retentionFigure is the shortest retention by time of the source's
// topics that delete, observed (vv.Retention has each topic's).
func retentionFigure(vv *VertexView) Figure {
	f := Figure{Name: FigureRetention, Value: -1, Kind: Observed, Subtask: -1}
	for _, tr := range vv.Retention {
		if tr.Deletes && (f.Value < 0 || float64(*tr.RetentionMs)/1000 < f.Value) {
			f.Value = float64(*tr.RetentionMs) / 1000
		}
	}
	return f
}

// timeToRetentionFigure is the soonest a subtask's lag time reaches its
// partition's retention, estimated: records are deleted unread from then
// on.
func timeToRetentionFigure(vv *VertexView) Figure {
	f := Figure{Name: FigureTimeToRetention, Value: -1, Kind: Estimated, Subtask: -1}
	for i := range vv.Subtasks {
		r := &vv.Subtasks[i]
		if t := r.TimeToRetentionSeconds; t >= 0 && (f.Value < 0 || t < f.Value) {
			f.Value, f.Subtask, f.Partition, f.Seconds = t, r.Subtask, r.RetentionPartition, r.RetentionSeconds
		}
	}
	return f
}
