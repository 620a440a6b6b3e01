package live

import (
	"fmt"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/quote"
)

// findJob finds a job by id, in the named endpoint or any.
func (s *picture) findJob(endpoint, jobID string) (*flink.Snapshot, *flink.JobSnapshot) {
	for _, name := range sortedKeys(s.flink) {
		if endpoint != "" && name != endpoint {
			continue
		}
		fs := s.flink[name]
		for i := range fs.Jobs {
			if fs.Jobs[i].ID == jobID {
				return fs, &fs.Jobs[i]
			}
		}
	}
	return nil, nil
}

// Job returns a job's page view.
func (s *State) Job(endpoint, jobID string) (JobView, error) {
	jv, _, err := s.JobDetail(endpoint, jobID)
	return jv, err
}

// JobDetail returns a job's page view and the views of its vertices (in the
// same order, with the default query), built once for both.
func (s *State) JobDetail(endpoint, jobID string) (JobView, []VertexView, error) {
	fs, j := s.findJob(endpoint, jobID)
	if j == nil {
		return JobView{}, nil, fmt.Errorf("job %s: %w", quote.Clip(jobID), ErrNotFound)
	}
	jv, vvs := s.job(fs, j, s.opts.Now())
	return jv, vvs, nil
}

func (s *picture) job(fs *flink.Snapshot, j *flink.JobSnapshot, now time.Time) (JobView, []VertexView) {
	s.countView()
	vvs := make([]VertexView, len(j.Vertices))
	jv := JobView{Endpoint: fs.Endpoint, ID: j.ID, Name: j.Name, State: j.State, StartTime: j.StartTime,
		Restored: restoredOf(j), Restarts: j.NumRestarts, Unlisted: j.Unlisted, Age: within(itemAge(j.Freshness, fs.CollectedAt, now, j.Err), s.endpointAge(fs, now))}
	jv.ReplacedBy = s.replacedBy(fs.Endpoint, j.ID)
	if at, ok := s.endedAt(fs.Endpoint, j.ID); ok {
		jv.LastReported = &at
	}
	if e := s.eventTime(fs, j, now); e != nil {
		c := *e.view
		jv.EventTime = &c
	}
	for k := range j.Vertices {
		v := &j.Vertices[k]
		vs := VertexSummary{ID: v.ID, Name: v.Name, Parallelism: v.Parallelism, MaxParallelism: v.MaxParallelism,
			Source: v.Source, Keyed: v.Keyed, Kafka: v.Kafka != nil, Skew: -1, Busiest: -1, MaxBusy: -1,
			Backpressure: v.BackpressureLevel, Lag: -1, Worst: -1, LagSeconds: -1, LagKind: kafka.TimeLagUnknown, Trend: TrendUnknown}
		if v.Err != nil {
			vs.Error = v.Err.Error()
		}
		vs.Skew, vs.MaxBusy, vs.Busiest = skewAndBusiest(v)
		vv := s.vertex(fs, j, v, VertexQuery{Color: "lag", Highlight: -1}, now)
		vvs[k] = vv
		vs.Concern, vs.Worst = vv.Concern, vv.Worst
		for _, r := range vv.Subtasks {
			if r.LagKind.Known() && r.LagSeconds > vs.LagSeconds {
				vs.LagSeconds, vs.LagKind, vs.Trend = r.LagSeconds, r.LagKind, r.Trend
			}
		}
		if v.Kafka != nil {
			vs.Lag, vs.Drift, vs.PredictionMode = vertexLag(vv), vv.Prediction.Drift, vv.Prediction.Mode
			vs.MissingPartitions = vv.Prediction.Missing
			vs.WithheldPartitions = vv.Prediction.Withheld
			vs.RecordsLost = vv.RecordsLost
			for _, r := range vv.Subtasks {
				vs.Partitions += len(r.Partitions)
			}
		}
		jv.Vertices = append(jv.Vertices, vs)
	}
	return jv, vvs
}

// skewAndBusiest is a vertex's data skew (Flink's formula over records/s
// per subtask: out for sources, in otherwise), its highest busy ratio and
// the subtask with it; -1 each when unknown.
func skewAndBusiest(v *flink.VertexSnapshot) (skew, maxBusy float64, busiest int) {
	skew, maxBusy, busiest = -1, -1, -1
	rates := make([]float64, 0, len(v.Subtasks))
	for _, st := range v.Subtasks {
		if r := subtaskRate(v, &st); !isNaN(r) {
			rates = append(rates, r)
		}
		if !isNaN(st.BusyRatio) && st.BusyRatio > maxBusy {
			maxBusy, busiest = st.BusyRatio, st.Index
		}
	}
	if len(rates) == len(v.Subtasks) && len(rates) > 0 {
		skew = assign.MeasureSkew(rates).FlinkPercent
	}
	return skew, maxBusy, busiest
}

// subtaskRate is the records/s a subtask's figures are judged by: those it
// emits for a source (its task's records in are 0 before Flink 2.0),
// those it receives otherwise; NaN unknown.
func subtaskRate(v *flink.VertexSnapshot, st *flink.SubtaskSnapshot) float64 {
	if v.Source {
		return st.RecordsOutPerSecond
	}
	return st.RecordsInPerSecond
}

func vertexLag(v VertexView) int64 {
	total, known := int64(0), false
	for _, r := range v.Subtasks {
		if r.Lag >= 0 {
			total += r.Lag
			known = true
		}
	}
	if !known {
		return -1
	}
	return total
}

func restoredOf(j *flink.JobSnapshot) *Restored {
	if j.Restored == nil {
		return nil
	}
	return &Restored{CheckpointID: j.Restored.CheckpointID, Savepoint: j.Restored.IsSavepoint, Path: j.Restored.ExternalPath, At: j.Restored.At}
}
