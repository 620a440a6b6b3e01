package live

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/internal/quote"
)

// VertexQuery holds the URL's choices for a vertex view.
type VertexQuery struct {
	Endpoint string
	// History overrides the source's parallelism history for the restore
	// model (?history=4,6).
	History []int
	// Color is "lag" (default), "rate" or "watermark" (event-time lag).
	Color string
	// Highlight is the subtask to mark, -1 none.
	Highlight int
	// HighlightPartition marks a partition's subtask ("topic", partition).
	HighlightTopic     string
	HighlightPartition int32
}

// Vertex returns a vertex's page view.
func (s *State) Vertex(jobID, vertexID string, q VertexQuery) (VertexView, error) {
	fs, j := s.findJob(q.Endpoint, jobID)
	if j == nil {
		return VertexView{}, fmt.Errorf("job %s: %w", quote.Clip(jobID), ErrNotFound)
	}
	for k := range j.Vertices {
		if j.Vertices[k].ID == vertexID {
			return s.vertex(fs, j, &j.Vertices[k], q, s.opts.Now()), nil
		}
	}
	return VertexView{}, fmt.Errorf("vertex %s in job %s: %w", quote.Clip(vertexID), quote.Clip(jobID), ErrNotFound)
}

// Vertices lists (job id, vertex id) of every vertex, for publishing.
func (s *State) Vertices() [][2]string {
	var out [][2]string
	for _, name := range sortedKeys(s.flink) {
		for _, j := range s.flink[name].Jobs {
			for _, v := range j.Vertices {
				out = append(out, [2]string{j.ID, v.ID})
			}
		}
	}
	return out
}

func (s *picture) vertex(fs *flink.Snapshot, j *flink.JobSnapshot, v *flink.VertexSnapshot, q VertexQuery, now time.Time) VertexView {
	s.countView()
	vv := VertexView{Endpoint: fs.Endpoint, JobID: j.ID, JobName: j.Name, JobState: j.State, ID: v.ID, Name: v.Name,
		Parallelism: v.Parallelism, MaxParallelism: v.MaxParallelism, Source: v.Source, Keyed: v.Keyed, Kafka: v.Kafka != nil,
		Restored: restoredOf(j), Flink: itemAge(v.Freshness, fs.CollectedAt, now, v.Err), Color: "lag"}
	if q.Color == "rate" || q.Color == "watermark" {
		vv.Color = q.Color
	}
	if k := v.SQL; k != nil && v.Keyed {
		vv.SQL = &SQLKeyView{Operator: k.Operator, Columns: k.Columns, Named: k.Named, Phase: k.Phase,
			TwoPhase: k.Phase == "global" && k.LocalInput}
		vv.SQL.InputParallelism = k.InputParallelism
		if vv.SQL.TwoPhase {
			vv.SQL.MiniBatchMs = k.MiniBatchMs
		}
		if vv.SQL.Columns == nil {
			vv.SQL.Columns = [][]string{}
		}
		for _, side := range k.Sources {
			row := make([]SQLKeySource, len(side))
			for i, src := range side {
				row[i] = SQLKeySource{Vertex: src.Vertex, Table: src.Table, Column: src.Column, Expr: src.Expr}
			}
			vv.SQL.Sources = append(vv.SQL.Sources, row)
		}
	}
	if v.Err != nil {
		vv.Error = v.Err.Error()
	}
	vv.Subtasks = make([]SubtaskRow, v.Parallelism)
	for i := range vv.Subtasks {
		r := SubtaskRow{Subtask: i, Rate: -1, Lag: -1, Busy: -1, BackPressured: -1, Idle: -1, RecordsIn: -1, RecordsOut: -1, StateSize: -1,
			LagKind: kafka.TimeLagUnknown, CatchUp: CatchUpUnknown, Trend: TrendUnknown}
		if i < len(v.Subtasks) {
			st := v.Subtasks[i]
			r.Status = st.Status
			r.Busy, r.BackPressured, r.Idle = orMinus(st.BusyRatio), orMinus(st.BackPressuredRatio), orMinus(st.IdleRatio)
			r.RecordsIn, r.RecordsOut = orMinus(st.RecordsInPerSecond), orMinus(st.RecordsOutPerSecond)
			r.StateSize = st.StateSize
			r.Checkpoint = subtaskCheckpoint(st.Checkpoint)
		}
		if v.Keyed && v.MaxParallelism > 0 {
			if kg, err := assign.KeyGroupRangeFor(v.MaxParallelism, v.Parallelism, i); err == nil {
				r.KeyGroups = &KeyGroupSpan{Start: kg.Start, End: kg.End, Size: kg.End - kg.Start + 1}
			}
		}
		r.Highlight = q.Highlight == i
		vv.Subtasks[i] = r
	}
	vv.Checkpoint = vertexCheckpoint(v, vv.Subtasks, fs.CollectedAt, now)
	if sp := s.sparks[vertexKey{fs.Endpoint, j.ID, v.ID}]; sp != nil && sp.p == len(vv.Subtasks) {
		vv.SparkTimes = sp.at
		for i := range vv.Subtasks {
			if sp.lag != nil {
				vv.Subtasks[i].SparkLag = sp.lag[i]
				vv.Subtasks[i].SparkRate = sp.rate[i]
			}
			if sp.wm != nil {
				vv.Subtasks[i].SparkWatermark = sp.wm[i]
			}
		}
	}
	if v.Kafka != nil {
		s.sourceRows(&vv, fs, j, v, q, now)
	}
	if e := s.eventTime(fs, j, now); e != nil {
		for i, sw := range e.rows[v.ID] {
			if sw != nil && i < len(vv.Subtasks) {
				c := *sw
				vv.Subtasks[i].Watermark = &c
			}
		}
		if vw, ok := e.vertices[v.ID]; ok {
			c := *vw
			vv.EventTime = &c
		}
		jc := *e.view
		vv.JobEventTime = &jc
	}
	vv.Figures = figures(&vv, s.started)
	vv.Why = s.why(&vv, j)
	markConcerns(&vv)
	s.markReplaced(&vv)
	if at, ok := s.endedAt(fs.Endpoint, j.ID); ok {
		vv.LastReported = &at
	}
	if w, ok := s.withheld[vertexKey{fs.Endpoint, j.ID, v.ID}]; ok {
		wv := w.view
		vv.Withheld = &wv
	}
	return vv
}

// Bounds of a slowest subtask: its checkpoint duration is at least
// slowFactor times the mean of the others' and at least slowFloorMs
// (below it a few milliseconds' jitter makes any ratio).
const (
	slowFactor  = 2.0
	slowFloorMs = 100
)

func subtaskCheckpoint(c *flink.SubtaskCheckpoint) *SubtaskCheckpoint {
	if c == nil {
		return nil
	}
	return &SubtaskCheckpoint{DurationMs: c.DurationMs(), SyncMs: c.SyncMs, AsyncMs: c.AsyncMs,
		AlignmentMs: c.AlignmentMs, AlignmentProcessed: c.AlignmentProcessed, AlignmentPersisted: c.AlignmentPersisted,
		StartDelayMs: c.StartDelayMs, EndToEndMs: c.EndToEndDuration, CheckpointedSize: c.CheckpointedSize, Unaligned: c.Unaligned}
}

// vertexCheckpoint is the checkpoint of the vertex's figures, with its
// slowest subtask when one stands out; nil when no checkpoint was read.
func vertexCheckpoint(v *flink.VertexSnapshot, rows []SubtaskRow, collected, now time.Time) *VertexCheckpoint {
	if v.StateCheckpointID <= 0 {
		return nil
	}
	c := &VertexCheckpoint{ID: v.StateCheckpointID, CompletedAt: v.StateCheckpointAt, Age: itemAge(v.StateFreshness, collected, now, nil), Slowest: -1}
	c.Slowest, c.SlowFactor = slowest(rows)
	return c
}

// slowest is the subtask whose checkpoint duration stands out, and its
// duration over the mean of the others'; -1 when none does or fewer than
// two subtasks have a duration.
func slowest(rows []SubtaskRow) (int, float64) {
	at, top := -1, int64(-1)
	var sum int64
	n := 0
	for _, r := range rows {
		if r.Checkpoint == nil || r.Checkpoint.DurationMs < 0 {
			continue
		}
		d := r.Checkpoint.DurationMs
		sum += d
		n++
		if d > top {
			at, top = r.Subtask, d
		}
	}
	if n < 2 || top < slowFloorMs {
		return -1, 0
	}
	others := float64(sum-top) / float64(n-1)
	others = max(others, 1) // the others took under a millisecond
	if float64(top) < slowFactor*others {
		return -1, 0
	}
	return at, float64(top) / others
}

func orMinus(f float64) float64 {
	if isNaN(f) || math.IsInf(f, 0) {
		return -1
	}
	return f
}

// sourceCellSet is a Kafka source's partition cells, each in the row of
// the subtask that reads it (an undetermined one under a subtask that
// lists it), before the prediction: what its page and /metrics show of
// each partition.
type sourceCellSet struct {
	cluster  string
	kafkaAge *Age
	// rows holds one slice of cells per subtask row, in observed order.
	rows [][]PartitionCell
	// retention is the retention of the cluster's topics, by name.
	retention map[string]kafka.Retention
	oo        observedOwners
	topics    map[string]bool
}

// sourceCells builds a Kafka source's partition cells for n subtask rows:
// offsets, lag, lag in time, the reading and the time to retention.
func (s *picture) sourceCells(fs *flink.Snapshot, j *flink.JobSnapshot, v *flink.VertexSnapshot, n int, now time.Time) sourceCellSet {
	rows := make([][]PartitionCell, n)
	var kafkaAge *Age
	cluster := s.clusterFor(fs.Endpoint, v)
	ks := s.kafka[cluster]
	if ks != nil {
		// The offsets are as old as the oldest of the vertex's partitions.
		at, stale := ks.CollectedAt, false
		idTopics := map[string]bool{}
		for i, st := range v.Kafka.States {
			if i == 0 || st.Topic != v.Kafka.States[i-1].Topic {
				idTopics[st.Topic] = true
			}
		}
		for _, t := range ks.Topics {
			if !idTopics[t.Name] && !idTopics[flink.SanitizeMetricName(t.Name)] {
				continue
			}
			for _, p := range t.Partitions {
				if p.Stale {
					stale = true
					if !p.UpdatedAt.IsZero() && p.UpdatedAt.Before(at) {
						at = p.UpdatedAt
					}
				}
			}
		}
		a := ageOf(at, now, stale, ks.Err)
		kafkaAge = &a
	}
	// The retention settings of the cluster's topics, for the topics the
	// source reads and each partition's time to retention.
	retention := map[string]kafka.Retention{}
	if ks != nil {
		for _, t := range ks.Topics {
			retention[t.Name] = t.Retention
		}
	}
	parts := s.parts[cluster]
	idx := s.topicIdx[cluster]
	oo, ok := s.owners[vertexKey{fs.Endpoint, j.ID, v.ID}]
	if !ok {
		oo = ownersOf(v.Kafka, nil)
	}
	topicSet := map[string]bool{}
	// The readers' status is the source's, by name, while it reads this
	// cluster.
	var reads map[topicPart]readStatus
	var readsBy map[string]*topicReads
	if ss, ok := s.srcStatus[vertexKey{fs.Endpoint, j.Name, v.Name}]; ok && ss.cluster == cluster {
		reads, readsBy = ss.parts, ss.byTopic
	}
	// What is the same for every partition of a topic is found once per
	// topic named in the metric ids; the states list a topic's partitions
	// together, so the last one found is nearly always the one asked for.
	type topicOf struct {
		topic     string
		ti        *topicIndex
		reads     *topicReads
		retention float64
		retOK     bool
	}
	byID := map[string]*topicOf{}
	var last *topicOf
	lastID := ""
	topicFor := func(idTopic string) *topicOf {
		if last != nil && idTopic == lastID {
			return last
		}
		to, ok := byID[idTopic]
		if !ok {
			topic := s.resolve(cluster, idTopic)
			topicSet[topic] = true
			to = &topicOf{topic: topic, ti: idx[topic], reads: readsBy[topic]}
			if d, ok := retention[topic].Duration(); ok {
				to.retention, to.retOK = d.Seconds(), true
			}
			byID[idTopic] = to
		}
		last, lastID = to, idTopic
		return to
	}
	var rsBuf readStatus
	var partBuf kafka.Partition
	withET := hasEventTime(j)
	// fill writes the cell of st into c (in place: a cell is large, and a
	// source may read ten thousand partitions). determined is false for a
	// partition whose reader the metric ids do not tell: its offsets may
	// be another subtask's, frozen.
	fill := func(c *PartitionCell, st flink.KafkaPartitionState, determined bool) {
		to := topicFor(st.Topic)
		topic := to.topic
		*c = PartitionCell{Topic: topic, Partition: st.Partition, Current: st.CurrentOffset, Committed: st.CommittedOffset, CommittedAt: st.CommittedAt,
			End: -1, Lag: -1, Rate: -1, Predicted: -1, LagKind: kafka.TimeLagUnknown, TimeToRetentionSeconds: -1}
		var rs *readStatus
		if to.reads != nil {
			rs = to.reads.get(st.Partition)
		} else if r, ok := reads[topicPart{topic, st.Partition}]; ok {
			rsBuf = r
			rs = &rsBuf
		}
		var p *kafka.Partition
		if to.ti != nil {
			p = to.ti.part(st.Partition)
		} else if kp, ok := parts[topicPart{topic, st.Partition}]; ok {
			partBuf = kp
			p = &partBuf
		}
		ok := p != nil
		if ok && knownEnd(*p) {
			c.End = p.End
			if p.RateOK {
				c.Rate = p.Rate
			}
			if st.CurrentOffset >= 0 {
				c.Lag = max(0, p.End-(st.CurrentOffset+1))
				var sec float64
				var kind kafka.TimeLagKind
				if to.ti != nil {
					sec, kind = rs.lagFrom(to.ti, st.Partition, st.CurrentOffset+1, now)
				} else {
					sec, kind = rs.lagSeconds(s.tables[tpKey{cluster, topic, st.Partition}], st.CurrentOffset+1, now)
				}
				c.LagSeconds, c.LagKind = sec, kind
			}
		}
		if withET {
			var sub *flink.SubtaskSnapshot
			if st.Subtask >= 0 && st.Subtask < len(v.Subtasks) {
				sub = &v.Subtasks[st.Subtask]
			}
			table := to.ti.table(st.Partition)
			if to.ti == nil {
				table = s.tables[tpKey{cluster, topic, st.Partition}]
			}
			c.EventTime = partitionEventTime(c, st.Split, st.CurrentOffset, sub, table, now)
		}
		running := j.State.Running() && st.Subtask >= 0 && st.Subtask < len(v.Subtasks) &&
			(v.Subtasks[st.Subtask].Status.Running() || v.Subtasks[st.Subtask].Status == "")
		fresh := determined && !v.Stale && ok && !p.Stale
		c.Reading = reading(rs, c.Lag, running, fresh, now)
		if to.retOK {
			c.RetentionSeconds = to.retention
			if fresh && running {
				c.TimeToRetentionSeconds = timeToRetention(c.LagSeconds, c.LagKind, c.Reading, c.RetentionSeconds)
			}
		}
	}
	cell := func(st flink.KafkaPartitionState, determined bool) PartitionCell {
		var c PartitionCell
		fill(&c, st, determined)
		return c
	}
	// A partition whose reader the metric ids do not determine is shown
	// once, outlined, under a subtask that lists it (predict moves it to the
	// predicted subtask when that may be the reader), with the highest
	// offsets listed for it: a new reader shows -1 until its first record,
	// so the highest is the closest to the real position.
	undetermined := map[flink.KafkaPartition]flink.KafkaPartitionState{}
	// The determined cells are counted per subtask first, so that each
	// row's cells are cut from one array made once.
	owned := make([]int, 0, len(v.Kafka.States))
	perRow := make([]int, n)
	byState := oo.byState
	if len(byState) != len(v.Kafka.States) {
		byState = nil // decided from another listing: look each up
	}
	for i, st := range v.Kafka.States {
		if byState != nil && byState[i] == stateOther {
			continue
		}
		if byState != nil && byState[i] == stateOwner {
			if st.Subtask >= 0 && st.Subtask < n {
				owned = append(owned, i)
				perRow[st.Subtask]++
			}
			continue
		}
		if len(oo.candidates) > 0 {
			if cand, ok := oo.candidates[st.KafkaPartition]; ok {
				if cand != nil && !slices.Contains(cand, st.Subtask) {
					continue
				}
				if b, seen := undetermined[st.KafkaPartition]; !seen || st.CurrentOffset > b.CurrentOffset ||
					(st.CurrentOffset == b.CurrentOffset && st.CommittedOffset > b.CommittedOffset) {
					undetermined[st.KafkaPartition] = st
				}
				continue
			}
		}
		if o, ok := oo.owner[st.KafkaPartition]; !ok || o != st.Subtask {
			continue
		}
		if st.Subtask >= 0 && st.Subtask < n {
			owned = append(owned, i)
			perRow[st.Subtask]++
		}
	}
	cells := make([]PartitionCell, 0, len(owned))
	for r, n := range perRow {
		row := &rows[r]
		if n > 0 && len(*row) == 0 {
			*row = cells[len(cells) : len(cells) : len(cells)+n]
			cells = cells[:len(cells)+n]
		}
	}
	for _, i := range owned {
		st := v.Kafka.States[i]
		row := &rows[st.Subtask]
		*row = append(*row, PartitionCell{})
		fill(&(*row)[len(*row)-1], st, true)
	}
	// While Flink withholds reader metrics of the source, a partition no
	// listed id with a value names has no observed reader at all.
	_, withheld := s.withheld[vertexKey{fs.Endpoint, j.ID, v.ID}]
	named := map[flink.KafkaPartition]bool{}
	if withheld {
		for _, st := range v.Kafka.States {
			named[st.KafkaPartition] = true
		}
	}
	for kp, cand := range oo.candidates {
		st, ok := undetermined[kp]
		if !ok {
			// Listed by no id now: offsets unknown.
			st = flink.KafkaPartitionState{KafkaPartition: kp, CurrentOffset: -1, CommittedOffset: -1}
		}
		c := cell(st, false)
		c.OwnerUndetermined, c.Candidates = true, slices.Clone(cand)
		c.Withheld = withheld && !named[kp]
		row := st.Subtask
		if row < 0 || row >= n {
			row = 0 // predict moves it to the model's subtask
		}
		if n > 0 {
			rows[row] = append(rows[row], c)
		}
	}
	return sourceCellSet{cluster: cluster, kafkaAge: kafkaAge, rows: rows, retention: retention, oo: oo, topics: topicSet}
}

// sourceRows fills partitions, lag, rates, the group and the prediction.
func (s *picture) sourceRows(vv *VertexView, fs *flink.Snapshot, j *flink.JobSnapshot, v *flink.VertexSnapshot, q VertexQuery, now time.Time) {
	sc := s.sourceCells(fs, j, v, len(vv.Subtasks), now)
	vv.Cluster, vv.KafkaAge = sc.cluster, sc.kafkaAge
	for i, cells := range sc.rows {
		vv.Subtasks[i].Partitions = cells
	}
	retention, oo, topicSet := sc.retention, sc.oo, sc.topics
	ks := s.kafka[sc.cluster]
	vv.Topics = make([]string, 0, len(topicSet))
	for t := range topicSet {
		vv.Topics = append(vv.Topics, t)
	}
	sort.Strings(vv.Topics)
	for _, t := range vv.Topics {
		if tr, ok := retentionView(t, retention[t], now); ok {
			vv.Retention = append(vv.Retention, tr)
		}
	}
	labelCells(vv, topicLabels(vv.Topics))
	for i := range vv.Subtasks {
		sumRow(&vv.Subtasks[i], q)
	}
	counts := map[ReaderState]int{}
	for _, r := range vv.Subtasks {
		vv.RecordsLost += r.RecordsLost
		for _, c := range r.Partitions {
			counts[c.Reading.State]++
		}
	}
	vv.States = stateCounts(counts)
	vv.Group = s.group(ks, fs.Endpoint, j, v, vv)
	vv.Prediction = s.predict(vv, fs.Endpoint, j, v, q, oo)
	vv.Lineage = lineageView(s.currentLineage(fs.Endpoint, j, v))
	vv.Thresholds, vv.LagTimeSteps = thresholds(vv), lagTimeSteps
	for i := range vv.Subtasks {
		for k := range vv.Subtasks[i].Partitions {
			c := &vv.Subtasks[i].Partitions[k]
			c.Level = level(vv, c)
		}
	}
}

// labelCells names each cell by its topic's label and its partition
// number. The labels are cut from one string made once, not made one by
// one: a source may read ten thousand partitions.
func labelCells(vv *VertexView, labels map[string]string) {
	n := 0
	for _, r := range vv.Subtasks {
		n += len(r.Partitions)
	}
	var b strings.Builder
	b.Grow(8 * n)
	ends := make([]int, 0, n)
	lastTopic, label := "", ""
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			if c.Topic != lastTopic || label == "" {
				lastTopic, label = c.Topic, labels[c.Topic]
			}
			b.WriteString(label)
			var digits [11]byte
			b.Write(strconv.AppendInt(digits[:0], int64(c.Partition), 10))
			ends = append(ends, b.Len())
		}
	}
	// The string is the builder's bytes, not a copy.
	all, k, from := b.String(), 0, 0
	for i := range vv.Subtasks {
		for j := range vv.Subtasks[i].Partitions {
			vv.Subtasks[i].Partitions[j].Label = all[from:ends[k]]
			from = ends[k]
			k++
		}
	}
}

// topicLabels gives each topic a short distinct prefix for cell labels:
// its first letter, more letters when two topics share it.
func topicLabels(topics []string) map[string]string {
	out := map[string]string{}
	for n := 1; len(out) < len(topics); n++ {
		seen := map[string]int{}
		for _, t := range topics {
			if _, done := out[t]; !done {
				seen[prefix(t, n)]++
			}
		}
		for _, t := range topics {
			if _, done := out[t]; done {
				continue
			}
			if p := prefix(t, n); seen[p] == 1 || n >= len(t) {
				out[t] = p + "·"
				if seen[p] == 1 {
					out[t] = p
				}
			}
		}
		if n > 64 {
			break
		}
	}
	return out
}

func prefix(s string, n int) string {
	r := []rune(s)
	if n > len(r) {
		n = len(r)
	}
	return string(r[:n])
}

// Lag colour steps, as in the legend: in seconds behind (10 s, 1 min,
// 5 min), and in records for a cell whose time behind is unknown.
var (
	lagTimeSteps = [3]float64{10, 60, 300}
	lagSteps     = [3]float64{1000, 20000, 80000}
)

func thresholds(vv *VertexView) [3]float64 {
	if vv.Color != "rate" {
		return lagSteps
	}
	maxRate := 0.0
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			maxRate = max(maxRate, c.Rate)
		}
	}
	return [3]float64{maxRate / 4, maxRate / 2, maxRate * 3 / 4}
}

// level is a cell's colour step 0–3, -1 unknown. By lag, a cell is
// coloured by its time behind (a lower bound counts as at least that
// time), else, its time unknown, by its lag in records. By watermark, by
// its event-time lag on the lag's time steps; unknown without one.
func level(vv *VertexView, c *PartitionCell) int {
	x, steps := float64(c.Lag), vv.Thresholds
	switch {
	case vv.Color == "watermark":
		if c.EventTime == nil || c.EventTime.None {
			return -1
		}
		x, steps = max(c.EventTime.LagSeconds, 0), vv.LagTimeSteps
	case vv.Color == "rate":
		x = c.Rate
	case c.LagKind.Known():
		x, steps = c.LagSeconds, vv.LagTimeSteps
	}
	if x < 0 || isNaN(x) {
		return -1
	}
	for i, t := range steps {
		if x < t || (vv.Color == "rate" && x <= t) {
			return i
		}
	}
	return 3
}

// group finds the consumer group of a source vertex: from configuration,
// else the group whose commits equal the job's committedOffset metrics,
// else the group with commits on most of the vertex's partitions.
func (s *picture) group(ks *kafka.Snapshot, endpoint string, j *flink.JobSnapshot, v *flink.VertexSnapshot, vv *VertexView) *GroupLink {
	for _, l := range s.opts.Links {
		if (l.Endpoint == "" || l.Endpoint == endpoint) && l.Job == j.Name && (l.Vertex == "" || l.Vertex == v.Name) {
			return &GroupLink{Name: l.Group, Found: GroupConfigured}
		}
	}
	if ks == nil || len(ks.Groups) == 0 {
		return nil // no group to match the commits against
	}
	type key struct {
		topic     string
		partition int32
	}
	committed := make(map[key]int64, len(v.Kafka.States))
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			committed[key{c.Topic, c.Partition}] = c.Committed
		}
	}
	bestEq, bestEqName, bestCov, bestCovName := 0, "", 0, ""
	for _, g := range ks.Groups {
		eq, cov := 0, 0
		for _, gp := range g.Partitions {
			c, ok := committed[key{gp.Topic, gp.Partition}]
			if !ok {
				continue
			}
			cov++
			if c >= 0 && gp.Committed == c {
				eq++
			}
		}
		if eq > bestEq {
			bestEq, bestEqName = eq, g.Name
		}
		if cov > bestCov {
			bestCov, bestCovName = cov, g.Name
		}
	}
	switch {
	case bestEq > 0:
		return &GroupLink{Name: bestEqName, Found: GroupCommitsEqual, Matched: bestEq, Partitions: len(committed)}
	case bestCov > 0:
		return &GroupLink{Name: bestCovName, Found: GroupCommitsOn, Matched: bestCov, Partitions: len(committed)}
	}
	return nil
}

// connectorLine picks the flink-connector-kafka line a Flink version runs:
// 3.x on Flink 1.x, 4.0 on Flink 2.0, 5.x on 2.1 and later. An unknown
// version takes the newest line.
func connectorLine(flinkVersion string) string {
	if strings.HasPrefix(flinkVersion, "1.") || flinkVersion == "2.0" || strings.HasPrefix(flinkVersion, "2.0.") {
		return assign.ConnectorLine34
	}
	return assign.ConnectorLine5
}

// Headline figures (Figure.Name), in the order of a page, with the
// fields beside Value that each sets.
const (
	FigureTotalLag        = "total-lag"         // records, -1 unknown
	FigureMaxLagTime      = "max-lag-time"      // seconds, -1 unknown; Partition, AtLeast, Unknown of Of
	FigureProduced        = "produced"          // records/s into the partitions, -1 unknown
	FigureRecordsLost     = "records-lost"      // Records on Partition, Partitions, Behind, From, To, Since
	FigureRetention       = "retention"         // the shortest deleting retention in seconds, -1 none or not read
	FigureTimeToRetention = "time-to-retention" // seconds, -1 none; Subtask, Partition, Seconds (its retention)
	FigureStates          = "partition-states"  // partitions in a state that loses or stops (vv.States say all)
	FigureSkew            = "skew"              // Flink's percentage, -1 unknown; Ratio max/mean
	FigureAssignment      = "assignment"        // matched partitions, -1 when no reader is observed (vv.Prediction)
	FigureKeyGroups       = "key-groups"        // key groups per subtask: Min to Value
	FigureStateSize       = "state-size"        // bytes, -1 unknown
	FigureBusiest         = "busiest"           // busy ratio, -1 unknown; Subtask, Ratio backpressured
)

// figures computes the headline figures; since is when skewscope began
// counting records deleted unread.
func figures(vv *VertexView, since time.Time) []Figure {
	var fs []Figure
	if vv.Kafka {
		lag := vertexLag(*vv)
		fs = append(fs, Figure{Name: FigureTotalLag, Value: float64(max(lag, -1)), Kind: Observed, Subtask: -1})
		f := Figure{Name: FigureMaxLagTime, Kind: Estimated, Subtask: -1}
		for _, r := range vv.Subtasks {
			for _, c := range r.Partitions {
				f.Of++
				if c.LagKind == kafka.TimeLagUnknown {
					f.Unknown++
				}
				if c.LagSeconds > f.Value {
					f.Value, f.Partition = c.LagSeconds, c.Topic+"-"+strconv.Itoa(int(c.Partition))
					f.AtLeast = c.LagKind == kafka.TimeLagAtLeast
				}
			}
		}
		if f.Of > 0 && f.Unknown == f.Of {
			// Unknown is not caught up.
			f.Value = -1
		}
		fs = append(fs, f)
		in := -1.0
		for _, r := range vv.Subtasks {
			if r.Rate >= 0 {
				in = max(in, 0) + r.Rate
			}
		}
		fs = append(fs, Figure{Name: FigureProduced, Value: in, Kind: Observed, Subtask: -1},
			lossFigure(vv, since), retentionFigure(vv), timeToRetentionFigure(vv), statesFigure(vv))
	}
	rates := make([]float64, 0, len(vv.Subtasks))
	for _, r := range vv.Subtasks {
		x := r.RecordsIn
		if vv.Source {
			x = r.RecordsOut
		}
		if x >= 0 {
			rates = append(rates, x)
		}
	}
	skew := Figure{Name: FigureSkew, Value: -1, Kind: Computed, Subtask: -1}
	if len(rates) == len(vv.Subtasks) && len(rates) > 0 {
		sk := assign.MeasureSkew(rates)
		skew.Value, skew.Ratio = sk.FlinkPercent, sk.MaxOverMean
	}
	fs = append(fs, skew)
	if pr := vv.Prediction; pr != nil {
		f := Figure{Name: FigureAssignment, Value: float64(pr.Matched), Kind: Observed, Subtask: -1}
		if pr.Headline.Kind != BasisNotModelled && pr.Total > 0 && pr.Headline.Verdicts.Withheld == pr.Total {
			// No observed reader: nothing to count as matched or not.
			f.Value, f.Kind = -1, Computed
		}
		fs = append(fs, f)
	}
	if vv.Keyed && vv.MaxParallelism > 0 && vv.Parallelism > 0 {
		lo, hi := vv.MaxParallelism/vv.Parallelism, (vv.MaxParallelism+vv.Parallelism-1)/vv.Parallelism
		fs = append(fs, Figure{Name: FigureKeyGroups, Value: float64(hi), Min: float64(lo), Kind: Computed, Subtask: -1})
		var state int64 = -1
		for _, r := range vv.Subtasks {
			if r.StateSize >= 0 {
				state = max(state, 0) + r.StateSize
			}
		}
		fs = append(fs, Figure{Name: FigureStateSize, Value: float64(state), Kind: Observed, Subtask: -1})
	}
	f := Figure{Name: FigureBusiest, Value: -1, Kind: Observed, Subtask: -1}
	for _, r := range vv.Subtasks {
		if r.Busy > f.Value {
			f.Subtask, f.Value, f.Ratio = r.Subtask, r.Busy, r.BackPressured
		}
	}
	return append(fs, f)
}

// lossFigure is the records Kafka deleted before the source read them:
// the total, where most were lost and when.
func lossFigure(vv *VertexView, since time.Time) Figure {
	f := Figure{Name: FigureRecordsLost, Value: float64(vv.RecordsLost), Kind: Observed, Subtask: -1, Since: since}
	for i := range vv.Subtasks {
		for k := range vv.Subtasks[i].Partitions {
			c := &vv.Subtasks[i].Partitions[k]
			l := c.Reading.Lost
			if l == nil {
				continue
			}
			if l.Behind > 0 {
				f.Behind++
			}
			if l.Records == 0 {
				continue
			}
			f.Partitions++
			if l.Records > f.Records {
				f.Records, f.Partition = l.Records, c.Topic+"-"+strconv.Itoa(int(c.Partition))
			}
			if f.From.IsZero() || l.FirstSeen.Before(f.From) {
				f.From = l.FirstSeen
			}
			f.To = maxTime(f.To, l.LastSeen)
		}
	}
	return f
}

// statesFigure counts the source's partitions in a state that loses or
// stops; vv.States count them in each.
func statesFigure(vv *VertexView) Figure {
	f := Figure{Name: FigureStates, Kind: Estimated, Subtask: -1}
	if len(vv.States) == 0 {
		f.Value = -1
		return f
	}
	for _, sc := range vv.States {
		switch sc.State {
		case ReaderLost, ReaderStopped, ReaderRewind, ReaderStalled, ReaderWarning:
			f.Value += float64(sc.Count)
		}
	}
	return f
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// sumRow sorts a source row's cells and sums their lag, rate and loss,
// and says when the subtask catches up.
func sumRow(r *SubtaskRow, q VertexQuery) {
	r.Lag, r.Rate, r.LagSeconds, r.LagKind, r.Highlight = -1, -1, 0, kafka.TimeLagUnknown, q.Highlight == r.Subtask
	r.TimeToRetentionSeconds = -1
	if len(r.Partitions) == 0 {
		// An idle reader has nothing to catch up on.
		r.Lag, r.Rate = 0, 0
	}
	sort.Slice(r.Partitions, func(a, b int) bool {
		pa, pb := &r.Partitions[a], &r.Partitions[b]
		if pa.Topic != pb.Topic {
			return pa.Topic < pb.Topic
		}
		return pa.Partition < pb.Partition
	})
	for k := range r.Partitions {
		c := &r.Partitions[k]
		if c.Lag >= 0 {
			r.Lag = max(r.Lag, 0) + c.Lag
		}
		if c.Rate >= 0 {
			r.Rate = max(r.Rate, 0) + c.Rate
		}
		if c.LagKind.Known() && (c.LagSeconds > r.LagSeconds || !r.LagKind.Known()) {
			r.LagSeconds, r.LagKind = c.LagSeconds, c.LagKind
		}
		if c.Reading.Lost != nil {
			r.RecordsLost += c.Reading.Lost.Records
		}
		if t := c.TimeToRetentionSeconds; t >= 0 && (r.TimeToRetentionSeconds < 0 || t < r.TimeToRetentionSeconds) {
			r.TimeToRetentionSeconds, r.RetentionSeconds = t, c.RetentionSeconds
			r.RetentionPartition = c.Topic + "-" + strconv.Itoa(int(c.Partition))
		}
		if q.HighlightTopic != "" && c.Topic == q.HighlightTopic && c.Partition == q.HighlightPartition {
			r.Highlight = true
		}
	}
	rowCatchUp(r)
}

// rowCatchUp says when a subtask catches up: its lag over its records
// out/s (or, when Flink does not report them, its partitions' position
// rates) minus its partitions' produced records/s; its trend is the sum of
// its partitions' lag slopes. Unknown while any of its partitions loses
// records, or has too few samples for a trend.
func rowCatchUp(r *SubtaskRow) {
	r.CatchUp, r.CatchUpSeconds, r.Trend = CatchUpUnknown, 0, TrendUnknown
	if len(r.Partitions) == 0 {
		return
	}
	pos, produced, lost := 0.0, 0.0, false
	trendKnown := true
	for _, c := range r.Partitions {
		rd := c.Reading
		lost = lost || rd.State == ReaderLost
		if rd.PositionRate < 0 || rd.ProducedRate < 0 {
			pos, produced = math.NaN(), math.NaN()
		} else {
			pos += rd.PositionRate
			produced += rd.ProducedRate
		}
		trendKnown = trendKnown && rd.Trend != TrendUnknown
	}
	if trendKnown {
		r.Trend = trendOf(pos, produced)
	} else {
		// Too few samples of some partition: no rates are claimed yet.
		pos, produced = math.NaN(), math.NaN()
	}
	processing := pos
	if r.RecordsOut >= 0 && trendKnown {
		processing = r.RecordsOut
	}
	r.CatchUp, r.CatchUpSeconds = catchUp(r.Lag, processing, produced, lost)
}
