package live

import (
	"time"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
)

// MetricFacts are the figures /metrics exports, read from one read-only
// copy of the store without building a page view: a scrape of many jobs
// costs their figures, not their pages. Each figure comes from the
// computation its page uses (the partition cells, the restore model, the
// verdicts), so that a page and /metrics never disagree. Only what is
// exported is listed: a figure /metrics leaves out (stale, unknown) is
// absent or negative as its field says.
type MetricFacts struct {
	// Clusters and Endpoints are the backends, as the overview has them.
	Clusters  []ClusterSummary
	Endpoints []EndpointSummary
	// GroupLags are the consumer groups' commits on partitions whose
	// latest poll succeeded and whose lag is known.
	GroupLags []GroupLagFact
	// SourceLosses and GroupLosses are SourceLosses and GroupLosses.
	SourceLosses, GroupLosses []PartitionLoss
	// Vertices are the vertices of the running jobs.
	Vertices []VertexFact
	// Holders are the running jobs' watermark holders, where known: the
	// source subtask, and its partition, whose watermark is the job's.
	Holders []HolderFact
}

// HolderFact is the holder of a running job's watermark
// (JobEventTime.Holder), while Flink's figures are fresh.
type HolderFact struct {
	Endpoint, JobID, JobName string
	// VertexID and VertexName are the source vertex the holder is in.
	VertexID, VertexName string
	Subtask              int
	// Topic is "" and Partition -1 when the subtask reads no partition
	// (Cause HoldStarved) or its partition is not determined.
	Topic     string
	Partition int32
	Cause     HoldCause
	Kind      Provenance
}

// GroupLagFact is a group's commit on a partition.
type GroupLagFact struct {
	Cluster, Group, Topic string
	Partition             int32
	Lag                   int64
	// LagSeconds is the commit's lag in time, when LagSecondsKnown.
	LagSeconds      float64
	LagSecondsKnown bool
}

// VertexFact is one vertex of a running job.
type VertexFact struct {
	Endpoint, JobID, JobName, ID, Name string
	// Skew is VertexSummary.Skew, MaxBusy VertexSummary.MaxBusy: -1
	// unknown.
	Skew, MaxBusy float64
	// PredictionMode is the source's Prediction.Mode, "" for a vertex that
	// is not a Kafka source; Drift is its Prediction.Drift.
	PredictionMode Mode
	Drift          int
	// Busy is each subtask's busy ratio (SubtaskRow.Busy), -1 unknown.
	Busy []float64
	// RecordsPerSecond is the records the vertex's subtasks receive per
	// second (numRecordsInPerSecond summed; for a source, the records it
	// emits, as its skew counts them); -1 unknown or stale.
	RecordsPerSecond float64
	// WatermarkLagSeconds is now − the vertex's lowest watermark
	// (VertexWatermark.LagSeconds), computed from Flink's observed
	// watermarks; -1 when it has none, or Flink's figures are stale.
	WatermarkLagSeconds float64
	// Starved counts a Kafka source's subtasks that read no partition
	// (observed from their metric ids); -1 when not a Kafka source, some
	// owner is not determined, or Flink's figures are stale.
	Starved int
	// Cluster is the Kafka cluster a source reads; Partitions are its
	// partitions whose lag is exported: known, with Flink's and the
	// partition's Kafka figures fresh.
	Cluster    string
	Partitions []PartitionFact
}

// PartitionFact is one partition of a Kafka source, under the subtask its
// page shows it in.
type PartitionFact struct {
	Subtask   int
	Topic     string
	Partition int32
	Lag       int64
	// LagSeconds is PartitionCell.LagSeconds, when LagSecondsKnown.
	LagSeconds      float64
	LagSecondsKnown bool
	// TimeToRetentionSeconds is PartitionCell.TimeToRetentionSeconds, -1
	// none.
	TimeToRetentionSeconds float64
	// BehindLogStart is log start − (currentOffset + 1), at least 0, of a
	// determined reader while Flink's and Kafka's figures are both fresh;
	// -1 otherwise.
	BehindLogStart int64
	// WatermarkLagSeconds is PartitionEventTime.LagSeconds, -1 none (no
	// event time, or no watermark yet); WatermarkKind says how its
	// watermark is known (observed from Flink's split watermark, or
	// estimated from the produce time of the last record read).
	WatermarkLagSeconds float64
	WatermarkKind       Provenance
}

// MetricFacts returns the figures /metrics exports, computed once per
// State: the scrapes between two updates share them. The result is the
// State's own: callers do not change it.
func (s *State) MetricFacts() MetricFacts {
	s.facts.Do(func() { s.factsOnce = s.metricFacts() })
	return s.factsOnce
}

func (s *State) metricFacts() MetricFacts {
	now := s.opts.Now()
	ov := s.backends(now)
	mf := MetricFacts{Clusters: ov.Clusters, Endpoints: ov.Endpoints, SourceLosses: s.sourceLosses(), GroupLosses: s.groupLosses()}
	// The partitions whose latest poll succeeded, with their log start
	// (-1 unknown): a stale partition's end offset and log start are
	// frozen.
	n, commits := 0, 0
	for _, ks := range s.kafka {
		for _, t := range ks.Topics {
			n += len(t.Partitions)
		}
		for _, g := range ks.Groups {
			commits += len(g.Partitions)
		}
	}
	starts := make(map[tpKey]int64, n)
	mf.GroupLags = make([]GroupLagFact, 0, commits)
	for _, name := range sortedKeys(s.kafka) {
		ks := s.kafka[name]
		for i := range ks.Topics {
			t := &ks.Topics[i]
			for _, p := range t.Partitions {
				if !p.Stale && p.Err == nil {
					starts[tpKey{name, t.Name, p.Partition}] = max(p.Start, -1)
				}
			}
		}
		mf.GroupLags = s.groupLags(mf.GroupLags, ks, starts, now)
	}
	for _, name := range sortedKeys(s.flink) {
		fs := s.flink[name]
		for i := range fs.Jobs {
			j := &fs.Jobs[i]
			if !j.State.Running() {
				continue
			}
			et := s.eventTime(fs, j, now)
			for k := range j.Vertices {
				mf.Vertices = append(mf.Vertices, s.vertexFact(fs, j, &j.Vertices[k], et, starts, now))
			}
			if h := holderFact(fs, j, et, now); h != nil {
				mf.Holders = append(mf.Holders, *h)
			}
		}
	}
	return mf
}

// holderFact is j's watermark holder, nil when unknown, undetermined, or
// seen in a stale poll (a frozen watermark would hold it for ever).
func holderFact(fs *flink.Snapshot, j *flink.JobSnapshot, et *jobEventTime, now time.Time) *HolderFact {
	if et == nil || et.view.Holder == nil || et.view.Holder.Cause == HoldUndetermined {
		return nil
	}
	h := et.view.Holder
	for k := range j.Vertices {
		if v := &j.Vertices[k]; v.ID == h.VertexID && itemAge(v.Freshness, fs.CollectedAt, now, v.Err).Stale {
			return nil
		}
	}
	return &HolderFact{Endpoint: fs.Endpoint, JobID: j.ID, JobName: j.Name, VertexID: h.VertexID, VertexName: h.VertexName,
		Subtask: h.Subtask, Topic: h.Topic, Partition: h.Partition, Cause: h.Cause, Kind: h.Kind}
}

// groupLags appends the known lags of the groups' commits on the
// cluster's fresh partitions (those of starts), as its topic pages show
// them.
func (s *picture) groupLags(out []GroupLagFact, ks *kafka.Snapshot, starts map[tpKey]int64, now time.Time) []GroupLagFact {
	for _, g := range ks.Groups {
		status := s.grpStatus[groupKey{ks.Cluster, g.Name}]
		for _, gp := range g.Partitions {
			if _, fresh := starts[tpKey{ks.Cluster, gp.Topic, gp.Partition}]; gp.Lag < 0 || !fresh {
				continue
			}
			_, sec, kind := s.commitLagOf(status, ks.Cluster, gp, now)
			out = append(out, GroupLagFact{Cluster: ks.Cluster, Group: g.Name, Topic: gp.Topic, Partition: gp.Partition, Lag: gp.Lag,
				LagSeconds: sec, LagSecondsKnown: kind.Known()})
		}
	}
	return out
}

// vertexFact is a running job's vertex as /metrics exports it: the
// figures of its page's summary, rows and cells.
func (s *picture) vertexFact(fs *flink.Snapshot, j *flink.JobSnapshot, v *flink.VertexSnapshot, et *jobEventTime, starts map[tpKey]int64, now time.Time) VertexFact {
	vf := VertexFact{Endpoint: fs.Endpoint, JobID: j.ID, JobName: j.Name, ID: v.ID, Name: v.Name, Busy: make([]float64, v.Parallelism),
		RecordsPerSecond: -1, WatermarkLagSeconds: -1, Starved: -1}
	vf.Skew, vf.MaxBusy, _ = skewAndBusiest(v)
	for i := range vf.Busy {
		vf.Busy[i] = -1
		if i < len(v.Subtasks) {
			vf.Busy[i] = orMinus(v.Subtasks[i].BusyRatio)
		}
	}
	flinkStale := itemAge(v.Freshness, fs.CollectedAt, now, v.Err).Stale
	if !flinkStale {
		vf.RecordsPerSecond = recordsPerSecond(v)
		if et != nil {
			if vw := et.vertices[v.ID]; vw != nil && !vw.None {
				vf.WatermarkLagSeconds = vw.LagSeconds
			}
		}
	}
	if v.Kafka == nil {
		return vf
	}
	sc := s.sourceCells(fs, j, v, v.Parallelism, now)
	vf.Cluster = sc.cluster
	var pr Prediction
	m := s.model(&pr, sc.cluster, fs.Endpoint, j, v, VertexQuery{Color: "lag", Highlight: -1}, sc.oo)
	vf.PredictionMode = pr.Mode
	if !flinkStale && len(sc.oo.candidates) == 0 {
		vf.Starved = 0
		for _, cells := range sc.rows {
			if len(cells) == 0 {
				vf.Starved++
			}
		}
	}
	bothFresh := !flinkStale && sc.kafkaAge != nil && !sc.kafkaAge.Stale
	for i, cells := range sc.rows {
		for k := range cells {
			c := &cells[k]
			// An undetermined cell is shown under the model's subtask
			// when that may read it (placeUndetermined).
			sub := i
			if to, ok := movedTo(c, i, m.owners, len(sc.rows)); ok {
				sub = to
			}
			m.mark(c)
			if Judge(*c, sub) == VerdictDrift {
				vf.Drift++
			}
			// A lag from a frozen position or a frozen end offset would
			// move as if the job did.
			key := tpKey{sc.cluster, c.Topic, c.Partition}
			start, fresh := starts[key]
			if c.Lag < 0 || flinkStale || !fresh {
				continue
			}
			pf := PartitionFact{Subtask: sub, Topic: c.Topic, Partition: c.Partition, Lag: c.Lag, LagSeconds: c.LagSeconds,
				LagSecondsKnown: c.LagKind.Known(), TimeToRetentionSeconds: c.TimeToRetentionSeconds, BehindLogStart: -1, WatermarkLagSeconds: -1}
			if e := c.EventTime; e != nil && !e.None {
				pf.WatermarkLagSeconds, pf.WatermarkKind = e.LagSeconds, e.Kind
			}
			// A frozen currentOffset or log start would count records
			// that were read.
			if start >= 0 && bothFresh && c.Current >= 0 && !c.OwnerUndetermined {
				pf.BehindLogStart = max(0, start-(c.Current+1))
			}
			if vf.Partitions == nil {
				vf.Partitions = make([]PartitionFact, 0, len(v.Kafka.States))
			}
			vf.Partitions = append(vf.Partitions, pf)
		}
	}
	return vf
}

// recordsPerSecond is the sum over v's subtasks of subtaskRate (records
// received, or emitted for a source); -1 when no subtask reports one.
func recordsPerSecond(v *flink.VertexSnapshot) float64 {
	sum, known := 0.0, false
	for i := range v.Subtasks {
		if r := subtaskRate(v, &v.Subtasks[i]); r >= 0 && !isNaN(r) {
			sum, known = sum+r, true
		}
	}
	if !known {
		return -1
	}
	return sum
}
