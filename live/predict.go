package live

import (
	"fmt"
	"slices"
	"strings"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/internal/quote"
)

// Prediction modes.
const (
	ModeFresh    = "fresh"    // KafkaSourceEnumerator.getSplitOwner at the current parallelism
	ModeRestore  = "restore"  // the restore model over a history skewscope saw or the URL gave
	ModeInferred = "inferred" // the restore model over a history inferred from the observed layout
	ModeNone     = "none"     // not modelled
)

// Cell bases (PartitionCell.Basis) and headline kinds (Headline.Kind).
const (
	BasisExact       = "exact"        // the model places it exactly and the observed owner is determined
	BasisInferred    = "inferred"     // as exact, over an inferred history
	BasisUncertain   = "uncertain"    // the model or the observation cannot determine the owner
	BasisNotModelled = "not modelled" // no prediction
)

// Headline is a source's one verdict: how much of its layout skewscope can
// vouch for, with the count of each kind of cell.
type Headline struct {
	Kind        string `json:"kind"` // a Basis* value: the weakest that applies
	Text        string `json:"text"`
	Exact       int    `json:"exact"`
	Inferred    int    `json:"inferred"`
	Uncertain   int    `json:"uncertain"`
	NotModelled int    `json:"notModelled"`
}

// currentLineage is the lineage of the vertex's source when it follows
// this job id. Called with s.mu held or on a snapshot.
func (s *Store) currentLineage(endpoint string, j *flink.JobSnapshot, v *flink.VertexSnapshot) *lineage {
	l := s.lineage[vertexKey{endpoint, j.Name, v.Name}]
	if l == nil || l.jobID != j.ID {
		return nil
	}
	return l
}

// modelInput is what one prediction runs on.
type modelInput struct {
	mode     string
	in       assign.RestoreInput // History of one entry: a fresh start
	source   string              // where History came from
	allGuess bool                // every owner is the model's best guess (see grewBefore)
}

// predict compares the observed owners with Flink's formulas.
func (s *Store) predict(vv *VertexView, endpoint string, j *flink.JobSnapshot, v *flink.VertexSnapshot, q VertexQuery, oo observedOwners) *Prediction {
	pr := &Prediction{Ambiguous: oo.ambiguous}
	topics := s.sourceTopics(endpoint, j.ID, vv.Cluster, v)
	lin := s.currentLineage(endpoint, j, v)
	line := connectorLine(s.flink[endpoint].FlinkVersion)
	var mi *modelInput
	switch {
	case j.State != "RUNNING":
		pr.Mode = ModeNone
		pr.Summary = fmt.Sprintf("The job is %s: skewscope compares the layouts of running jobs only; the partitions shown are the last its metrics listed.", strings.ToLower(j.State))
	case len(q.History) > 0:
		h := append(append([]int(nil), q.History...), v.Parallelism)
		if q.History[len(q.History)-1] == v.Parallelism && len(q.History) > 1 {
			h = q.History
		}
		mi = &modelInput{mode: ModeRestore, in: assign.RestoreInput{Topics: topics, History: h}, source: "from the URL (?history=)"}
		if len(h) == 1 {
			mi.mode = ModeFresh
		}
	case lin != nil && (lin.known || lin.inferred != nil):
		mi = &modelInput{mode: ModeRestore, in: assign.RestoreInput{Topics: topics, History: lin.history}, source: historySource(lin)}
		if len(lin.prevTopics) > 0 {
			mi.in.Topics = lin.prevTopics
			mi.in.NewTopics, _ = newTopics(lin.prevTopics, topics)
		}
		if lin.inferred != nil {
			mi.mode = ModeInferred
		} else if len(lin.history) == 1 {
			mi.mode = ModeFresh
		}
		mi.allGuess = lin.grewBefore
	case j.Restored != nil || lin != nil:
		pr.Mode = ModeNone
		what := "a checkpoint"
		if j.Restored != nil && j.Restored.IsSavepoint {
			what = "a savepoint"
		}
		pr.Summary = "Restored from " + what + " before skewscope first saw it: the layout depends on the parallelisms the job ran at before."
		if lin != nil && lin.inferNote != "" {
			pr.Summary += " " + lin.inferNote
		}
		pr.Summary += " The observed layout is shown; add ?history=P0,P1,… (parallelisms from the fresh start on) to model it."
		pr.Source = "flink-connector-kafka KafkaSourceEnumerator + RoundRobinOperatorStateRepartitioner"
	default:
		mi = &modelInput{mode: ModeFresh, in: assign.RestoreInput{Topics: topics, History: []int{v.Parallelism}}, source: ""}
	}
	var (
		owners    map[assign.TopicPartition]int
		uncertain = map[assign.TopicPartition]bool{}
		unnamed   = s.unnamedTopics(vv.Cluster, topics)
	)
	if mi != nil && len(unnamed) > 0 && len(mi.in.History) > 1 {
		// A restored layout depends on every split id's hash, and so on
		// every topic's real name.
		pr.Mode = ModeNone
		pr.Summary = fmt.Sprintf("Not modelled: without Kafka metadata the real name of %s is not known (Flink's metric ids write '.' as '_'), and after a restore every owner depends on it. Configure the Kafka cluster of this Flink endpoint.", quoteList(unnamed))
		mi = nil
	}
	if mi != nil {
		pr.Mode = mi.mode
		mi.in.ConnectorLine = line
		if len(mi.in.History) == 1 {
			pr.Source = "flink-connector-kafka KafkaSourceEnumerator.getSplitOwner"
			fa, err := assign.FreshAssignment(mi.in.Topics, mi.in.History[0])
			if len(mi.in.NewTopics) > 0 {
				fa, err = assign.FreshAssignment(maxTopics(mi.in.Topics, mi.in.NewTopics), mi.in.History[0])
			}
			if err != nil {
				pr.Mode, pr.Summary = ModeNone, "no prediction: "+err.Error()
			} else {
				owners = ownerMap(fa)
			}
		} else {
			pr.History = mi.in.History
			pr.HistorySource = mi.source
			res, err := assign.Restore(mi.in)
			if err != nil {
				pr.Mode, pr.Summary = ModeNone, "the restore model could not run: "+err.Error()
			} else {
				pr.Source = res.Source
				pr.Notes = append(pr.Notes, jobNotes(res.Notes, lin, len(q.History) > 0)...)
				for _, u := range res.Uncertain {
					uncertain[u] = true
				}
				owners = ownerMap(res.Assignment)
				if mi.allGuess {
					// Splits discovered before the latest restore joined the
					// readers' lists in an order the checkpoint keeps but
					// skewscope cannot see; every chunk boundary can move.
					pr.Notes = append(pr.Notes, "Partitions were discovered before the latest restore or rescale, so the saved split lists, and with them every chunk, are not known exactly: all owners are the model's best guess and differences are not counted as drift.")
					for tp := range owners {
						uncertain[tp] = true
					}
				}
			}
		}
		if mi.mode == ModeInferred && lin != nil {
			pr.Notes = append(pr.Notes, lin.inferNote)
		}
	}
	if len(unnamed) > 0 && pr.Mode == ModeFresh {
		pr.Notes = append(pr.Notes, fmt.Sprintf("Without Kafka metadata the real name of %s is not known (Flink's metric ids write '.' as '_'; the start subtask of a topic depends on its name), so its partitions are not modelled. Configure the Kafka cluster of this Flink endpoint.", quoteList(unnamed)))
	}
	if owners != nil {
		placeUndetermined(vv, owners, q)
	}
	basis := BasisExact
	if pr.Mode == ModeInferred {
		basis = BasisInferred
	}
	undetermined := 0
	for i := range vv.Subtasks {
		r := &vv.Subtasks[i]
		for k := range r.Partitions {
			c := &r.Partitions[k]
			pr.Total++
			tp := assign.TopicPartition{Topic: c.Topic, Partition: c.Partition}
			if c.OwnerUndetermined {
				undetermined++
			}
			o, ok := owners[tp]
			if owners == nil || !ok || unnamed[c.Topic] {
				c.Basis = BasisNotModelled
				continue
			}
			c.Predicted = o
			c.Uncertain = uncertain[tp] || c.OwnerUndetermined
			switch {
			case c.Uncertain:
				c.Basis = BasisUncertain
				pr.Uncertain++
				if c.Predicted == r.Subtask {
					pr.Matched++
				} else {
					pr.UncertainDiffer++
				}
			case c.Predicted == r.Subtask:
				c.Basis = basis
				pr.Matched++
			default:
				c.Basis = basis
				pr.Drift++
				r.Drift++
			}
		}
	}
	pr.Headline = headline(vv, pr)
	if pr.Summary == "" {
		pr.Summary = pr.Headline.Text
	}
	if undetermined > 0 {
		what := fmt.Sprintf("The readers of %d partitions are", undetermined)
		if undetermined == 1 {
			what = "The reader of 1 partition is"
		}
		pr.Notes = append(pr.Notes, what+" not determined: Flink's metric ids still carry values from before the latest restart (Flink keeps a metric id after its split moves, and refreshes values at most every 10 s), and none written by the current attempts decides yet. Outlined, with the subtasks it may be on; the next metric refresh or a record on the partition settles it.")
	}
	return pr
}

// headline counts the cells by basis and says the verdict.
func headline(vv *VertexView, pr *Prediction) Headline {
	var h Headline
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			switch c.Basis {
			case BasisExact:
				h.Exact++
			case BasisInferred:
				h.Inferred++
			case BasisUncertain:
				h.Uncertain++
			default:
				h.NotModelled++
			}
		}
	}
	total := h.Exact + h.Inferred + h.Uncertain + h.NotModelled
	hist := ""
	if len(pr.History) > 1 {
		hist = " for " + joinInts(pr.History, "→")
	}
	switch {
	case pr.Mode == ModeNone || h.NotModelled == total:
		h.Kind, h.Text = BasisNotModelled, "not modelled"
		if total > 0 && pr.Mode != ModeNone {
			h.Text = fmt.Sprintf("not modelled: %d partitions", total)
		}
		return h
	case h.Uncertain > 0 || h.NotModelled > 0:
		h.Kind = BasisUncertain
	case h.Inferred > 0:
		h.Kind = BasisInferred
	default:
		h.Kind = BasisExact
	}
	model := "a fresh start"
	switch pr.Mode {
	case ModeRestore:
		model = "the restore model" + hist
	case ModeInferred:
		model = "the restore model" + hist + " (inferred history)"
	}
	sure := h.Exact + h.Inferred
	switch {
	case pr.Drift > 0 && pr.Mode == ModeFresh:
		h.Text = fmt.Sprintf("%d of %d partitions are not where a fresh start puts them. Usual causes: the job was restored from a checkpoint or savepoint taken at another parallelism (Flink keeps restored splits where they are), or the source is not a KafkaSource.", pr.Drift, total)
	case pr.Drift > 0:
		h.Text = fmt.Sprintf("%d of %d partitions differ from %s.", pr.Drift, total, model)
	case h.Kind == BasisUncertain:
		h.Text = fmt.Sprintf("%d of %d partitions are where %s puts them; %d not determined", sure, total, model, h.Uncertain+h.NotModelled)
	default:
		h.Text = fmt.Sprintf("all %d partitions are where %s puts them", total, model)
	}
	return h
}

// historySource says where a lineage's history came from.
func historySource(l *lineage) string {
	if l.inferred != nil {
		return "inferred from the observed layout"
	}
	var steps []string
	for _, e := range l.events {
		if e.Kind == EventRestore || e.Kind == EventRescale || e.Kind == EventStart {
			steps = append(steps, EventText(e))
		}
	}
	if len(steps) == 0 {
		return "observed by skewscope"
	}
	return "observed by skewscope: " + strings.Join(steps, "; ")
}

// unnamedTopics lists the topics of a source whose real name is not known:
// the cluster's metadata does not have them and the metric-id form has an
// '_', which may stand for a '.' (flink.SanitizeMetricName). A name without
// '_' is its own real name. Called with s.mu held or on a snapshot.
func (s *Store) unnamedTopics(cluster string, topics []assign.Topic) map[string]bool {
	var out map[string]bool
	known := s.topics[cluster]
	for _, t := range topics {
		if _, ok := known[t.Name]; ok || !strings.Contains(t.Name, "_") {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		out[t.Name] = true
	}
	return out
}

func quoteList(m map[string]bool) string {
	names := sortedKeys(m)
	for i, n := range names {
		names[i] = quote.Clip(n)
	}
	if len(names) == 1 {
		return "topic " + names[0]
	}
	return "topics " + strings.Join(names, ", ")
}

func ownerMap(a assign.Assignment) map[assign.TopicPartition]int {
	out := map[assign.TopicPartition]int{}
	for st, tps := range a.Subtasks {
		for _, tp := range tps {
			out[tp] = st
		}
	}
	return out
}

// newTopics lists the topics of now that are new or larger than in old,
// and counts the partitions old does not have.
func newTopics(old, now []assign.Topic) (grown []assign.Topic, partitions int) {
	m := map[string]int{}
	for _, t := range old {
		m[t.Name] = t.Partitions
	}
	for _, t := range now {
		if n, ok := m[t.Name]; !ok || t.Partitions > n {
			grown = append(grown, t)
			partitions += t.Partitions - n
		}
	}
	return grown, partitions
}

// jobNotes keeps the restore model's notes that are true for this job. The
// model's general assumption of a history without failovers or discovery
// is replaced, for a history skewscope followed, by what it saw: failovers
// at an unchanged parallelism hand every split back to the subtask that
// saved it, and discovery before a restore is flagged on its own.
func jobNotes(notes []string, l *lineage, fromURL bool) []string {
	if l == nil || fromURL {
		return notes
	}
	out := make([]string, 0, len(notes))
	for _, n := range notes {
		if strings.HasPrefix(n, "Assumes the job started fresh at parallelism") {
			n = fmt.Sprintf("Assumes the fresh start at parallelism %d read the partitions it had then from the earliest offsets (the KafkaSourceBuilder default; skewscope cannot see a source's OffsetsInitializer).", l.history[0])
		}
		out = append(out, n)
	}
	return out
}

// placeUndetermined shows each partition whose reader is not determined
// under the model's subtask when that is one of its candidates.
func placeUndetermined(vv *VertexView, owners map[assign.TopicPartition]int, q VertexQuery) {
	type move struct {
		c  PartitionCell
		to int
	}
	var moves []move
	from := map[int]bool{}
	for i := range vv.Subtasks {
		r := &vv.Subtasks[i]
		keep := r.Partitions[:0]
		for _, c := range r.Partitions {
			o, ok := owners[assign.TopicPartition{Topic: c.Topic, Partition: c.Partition}]
			if c.OwnerUndetermined && ok && o != r.Subtask && (c.Candidates == nil || slices.Contains(c.Candidates, o)) && o >= 0 && o < len(vv.Subtasks) {
				moves = append(moves, move{c, o})
				from[i] = true
				continue
			}
			keep = append(keep, c)
		}
		r.Partitions = keep
	}
	for _, m := range moves {
		vv.Subtasks[m.to].Partitions = append(vv.Subtasks[m.to].Partitions, m.c)
		from[m.to] = true
	}
	for i := range from {
		sumRow(&vv.Subtasks[i], q)
	}
}
