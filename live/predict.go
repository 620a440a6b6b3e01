package live

import (
	"errors"
	"slices"
	"strings"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
)

// Mode is how a source's layout is predicted (Prediction.Mode).
type Mode string

// Prediction modes.
const (
	ModeFresh    Mode = "fresh"    // KafkaSourceEnumerator.getSplitOwner at the current parallelism
	ModeRestore  Mode = "restore"  // the restore model over a history skewscope saw or the URL gave
	ModeInferred Mode = "inferred" // the restore model over a history inferred from the observed layout
	ModeNone     Mode = "none"     // not modelled
)

// Basis is how surely a cell's prediction holds (PartitionCell.Basis),
// and a headline's kind (Headline.Kind): the weakest of its cells'.
type Basis string

// Cell bases (PartitionCell.Basis) and headline kinds (Headline.Kind).
const (
	BasisExact       Basis = "exact"        // the model places it exactly and the observed owner is determined
	BasisInferred    Basis = "inferred"     // as exact, over an inferred history
	BasisUncertain   Basis = "uncertain"    // the model or the observation cannot determine the owner
	BasisNotModelled Basis = "not modelled" // no prediction
)

// Headline is a source's one verdict: how much of its layout skewscope can
// vouch for, with the count of each kind of cell (by basis) and of each
// verdict (Verdicts: what the page's rows show). Package web says it in
// words.
type Headline struct {
	Kind        Basis `json:"kind"` // a Basis* value: the weakest that applies
	Exact       int   `json:"exact"`
	Inferred    int   `json:"inferred"`
	Uncertain   int   `json:"uncertain"`
	NotModelled int   `json:"notModelled"`
	Verdicts    Tally `json:"verdicts"`
}

// HistoryOrigin is where a prediction's history came from
// (Prediction.HistoryFrom).
type HistoryOrigin string

// Where a prediction's history came from (Prediction.HistoryFrom).
const (
	HistoryFromURL  HistoryOrigin = "url"      // ?history=
	HistoryObserved HistoryOrigin = "observed" // the lineage skewscope followed: its start, restore and rescale events
	HistoryInferred HistoryOrigin = "inferred" // inferred from the observed layout
)

// NotModelledReason is why a source is not modelled (NotModelled.Reason).
type NotModelledReason string

// Why a source is not modelled (NotModelled.Reason).
const (
	// ReasonNotRunning: the job is not running (JobState).
	ReasonNotRunning NotModelledReason = "job not running"
	// ReasonRescaling: an in-place rescale from From to To is deploying
	// its subtasks.
	ReasonRescaling NotModelledReason = "rescaling"
	// ReasonRestoredUnseen: restored (from a savepoint when Savepoint)
	// before skewscope first saw it, and no history was inferred
	// (Inference says why, when the search ran).
	ReasonRestoredUnseen NotModelledReason = "restored unseen"
	// ReasonUnnamedTopics: after a restore every owner depends on the
	// real name of Topics, which Kafka's metadata would give.
	ReasonUnnamedTopics NotModelledReason = "unnamed topics"
	// ReasonModelError: the fresh-start (Restore false) or restore model
	// failed with Error.
	ReasonModelError NotModelledReason = "model error"
)

// NotModelled is why a prediction's mode is ModeNone, with what its words
// need.
type NotModelled struct {
	Reason    NotModelledReason `json:"reason"`
	JobState  flink.JobState    `json:"jobState,omitempty"`
	From      int               `json:"from,omitempty"`
	To        int               `json:"to,omitempty"`
	Savepoint bool              `json:"savepoint,omitempty"`
	Inference *Inference        `json:"inference,omitempty"`
	// Topics are the metric-id names of the topics whose real name is
	// not known, sorted.
	Topics  []string `json:"topics,omitempty"`
	Restore bool     `json:"restore,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// NoteKind is what a prediction's note says (Note.Kind).
type NoteKind string

// What a prediction's note says (Note.Kind).
const (
	// NoteModel: Text is a note of the model, as it words it.
	NoteModel NoteKind = "model"
	// NoteInferred: the history modelled was inferred from the observed
	// layout, not witnessed; Inference is what the search found.
	NoteInferred NoteKind = "inferred"
	// NoteFreshOffsets: the history skewscope followed assumes that the
	// fresh start at parallelism P read its partitions from the
	// earliest offsets.
	NoteFreshOffsets NoteKind = "fresh offsets"
	// NoteUnsureDiscovery: Partitions appeared after the latest restore
	// or rescale, from parallelism From to To, and no metadata read says
	// on which side of it the source discovered them.
	NoteUnsureDiscovery NoteKind = "unsure discovery"
	// NoteDiscoveredBeforeRestore: partitions were discovered before the
	// latest restore or rescale: every owner is a best guess.
	NoteDiscoveredBeforeRestore NoteKind = "discovered before restore"
	// NoteUnnamedTopics: the partitions of Topics (whose real name is
	// not known) are not modelled.
	NoteUnnamedTopics NoteKind = "unnamed topics"
	// NoteUndetermined: the readers of Partitions are not determined;
	// Withheld when Flink withheld reader metrics of the source, Listed
	// when some such cell's metric ids list candidate subtasks.
	NoteUndetermined NoteKind = "undetermined"
	// NoteDiscoverySettled: the observed readers show when the source
	// discovered the Partitions new partitions of the Step from p = From
	// to p = To: Before it (so the restore dealt them out with the saved
	// splits) or after it (by the hash rule at To); the model places them
	// so.
	NoteDiscoverySettled NoteKind = "discovery settled"
)

// Note is a caveat of a prediction, with what its words need.
type Note struct {
	Kind       NoteKind `json:"kind"`
	Text       string   `json:"text,omitempty"`
	P          int      `json:"p,omitempty"`
	Partitions int      `json:"partitions,omitempty"`
	From       int      `json:"from,omitempty"`
	To         int      `json:"to,omitempty"`
	// Before and Step are NoteDiscoverySettled's side and step
	// (EventRescale or EventRestore; "" when the lineage shows none).
	Before   bool      `json:"before,omitempty"`
	Step     EventKind `json:"step,omitempty"`
	Topics   []string  `json:"topics,omitempty"`
	Withheld bool      `json:"withheld,omitempty"`
	Listed   bool      `json:"listed,omitempty"`
	// Inference is set for NoteInferred.
	Inference *Inference `json:"inference,omitempty"`
}

// modelNotes are the model's own notes.
func modelNotes(texts []string) []Note {
	out := make([]Note, len(texts))
	for i, t := range texts {
		out[i] = Note{Kind: NoteModel, Text: t}
	}
	return out
}

// Verdict is how a partition's observed reader compares with the model
// (Judge).
type Verdict string

// Verdicts of one partition: how its observed reader compares with the
// model (Judge).
const (
	VerdictMatch        Verdict = "match"        // where the model puts it, exactly
	VerdictGuessed      Verdict = "guessed"      // where the model's best guess puts it; the model cannot place it exactly
	VerdictNotGuessed   Verdict = "not guessed"  // elsewhere than the model's best guess: not drift
	VerdictUndetermined Verdict = "undetermined" // Flink's metric ids do not tell which subtask reads it
	VerdictWithheld     Verdict = "withheld"     // Flink withheld its reader's metrics: the prediction only, no observed reader
	VerdictDrift        Verdict = "drift"        // elsewhere than the model puts it exactly
	VerdictNotModelled  Verdict = "not modelled" // no prediction
)

// Judge is the one judgement of a partition shown under subtask: the
// headline counts its verdicts over the vertex (Headline.Verdicts), the
// figures and each row of the page show them over their cells (TallyOf),
// so that no row says "as predicted" of a partition the headline calls
// not determined.
func Judge(c PartitionCell, subtask int) Verdict {
	switch {
	case c.Predicted < 0 || c.Basis == BasisNotModelled:
		return VerdictNotModelled
	case c.Withheld:
		return VerdictWithheld
	case c.OwnerUndetermined:
		return VerdictUndetermined
	case c.Uncertain && c.Predicted == subtask:
		return VerdictGuessed
	case c.Uncertain:
		return VerdictNotGuessed
	case c.Predicted == subtask:
		return VerdictMatch
	}
	return VerdictDrift
}

// Tally counts partitions by verdict (Judge).
type Tally struct {
	Match        int `json:"match"`
	Guessed      int `json:"guessed"`
	NotGuessed   int `json:"notGuessed"`
	Undetermined int `json:"undetermined"`
	Withheld     int `json:"withheld"`
	Drift        int `json:"drift"`
	NotModelled  int `json:"notModelled"`
}

// TallyOf judges the cells shown under subtask.
func TallyOf(cells []PartitionCell, subtask int) Tally {
	var t Tally
	for _, c := range cells {
		switch Judge(c, subtask) {
		case VerdictMatch:
			t.Match++
		case VerdictGuessed:
			t.Guessed++
		case VerdictNotGuessed:
			t.NotGuessed++
		case VerdictUndetermined:
			t.Undetermined++
		case VerdictWithheld:
			t.Withheld++
		case VerdictDrift:
			t.Drift++
		default:
			t.NotModelled++
		}
	}
	return t
}

// Total is the number of partitions judged.
func (t Tally) Total() int {
	return t.Match + t.Guessed + t.NotGuessed + t.Undetermined + t.Withheld + t.Drift + t.NotModelled
}

// Placed counts the partitions where the model puts them, exactly or as
// its best guess.
func (t Tally) Placed() int { return t.Match + t.Guessed }

func (t *Tally) add(o Tally) {
	t.Match += o.Match
	t.Guessed += o.Guessed
	t.NotGuessed += o.NotGuessed
	t.Undetermined += o.Undetermined
	t.Withheld += o.Withheld
	t.Drift += o.Drift
	t.NotModelled += o.NotModelled
}

// currentLineage is the lineage of the vertex's source when it follows
// this job id.
func (s *picture) currentLineage(endpoint string, j *flink.JobSnapshot, v *flink.VertexSnapshot) *lineage {
	l := s.lineage[vertexKey{endpoint, j.Name, v.Name}]
	if l == nil || l.jobID != j.ID {
		return nil
	}
	return l
}

// modelled is what the prediction of a source says of its partitions.
type modelled struct {
	// owners is the subtask the model puts each partition on, nil when
	// not modelled; uncertain holds those it cannot place exactly.
	owners    *ownerIndex
	uncertain map[assign.TopicPartition]bool
	// unnamed are the topics whose real name is not known: not modelled.
	unnamed map[string]bool
	basis   Basis // of the cells it places exactly
}

// mark sets a cell's prediction, uncertainty and basis; it reports
// whether the cell's reader is undetermined (and not withheld), which the
// prediction's notes count.
func (m modelled) mark(c *PartitionCell) (undetermined bool) {
	if c.OwnerUndetermined && !c.Withheld {
		// Outlined whatever the model says, also when it says
		// nothing.
		undetermined = true
		c.Uncertain = true
	}
	o, ok := m.owners.get(c.Topic, c.Partition)
	if !ok || m.unnamed[c.Topic] {
		c.Basis = BasisNotModelled
		return undetermined
	}
	c.Predicted = o
	c.Uncertain = c.OwnerUndetermined || (len(m.uncertain) > 0 && m.uncertain[assign.TopicPartition{Topic: c.Topic, Partition: c.Partition}])
	c.Basis = m.basis
	if c.Uncertain {
		c.Basis = BasisUncertain
	}
	return undetermined
}

// model runs Flink's formulas for a source reading cluster: it sets pr's
// mode, history, summary, source and notes, and returns where the model
// puts each partition. The page and /metrics judge the cells by it.
func (s *picture) model(pr *Prediction, cluster, endpoint string, j *flink.JobSnapshot, v *flink.VertexSnapshot, q VertexQuery, oo observedOwners) modelled {
	topics := s.sourceTopics(endpoint, j.ID, cluster, v)
	lin := s.currentLineage(endpoint, j, v)
	line := connectorLine(s.flink[endpoint].FlinkVersion)
	var mi *modelInput
	switch {
	case !j.State.Running():
		pr.Mode = ModeNone
		pr.NotModelled = &NotModelled{Reason: ReasonNotRunning, JobState: j.State}
	case len(q.History) > 0:
		h := append(append([]int(nil), q.History...), v.Parallelism)
		if q.History[len(q.History)-1] == v.Parallelism && len(q.History) > 1 {
			h = q.History
		}
		mi = &modelInput{mode: ModeRestore, in: assign.RestoreInput{Topics: topics, History: h}, source: HistoryFromURL}
		if len(h) == 1 {
			mi.mode = ModeFresh
		} else if lin != nil && len(lin.prevTopics) > 0 {
			// The URL gives the parallelisms, skewscope saw the growth:
			// partitions first seen after the latest restore were
			// discovered after it (or maybe before: unsure), not present
			// from the fresh start.
			mi.in.Topics = lin.prevTopics
			mi.in.NewTopics, _ = newTopics(lin.prevTopics, topics)
			mi.unsure = lin.unsure
		}
	case lin != nil && lin.p() != v.Parallelism:
		// An in-place rescale is deploying its subtasks: the vertex shows
		// the new parallelism and the new readers' metric ids, the lineage
		// records the step once every subtask runs (followLineage). Judged
		// against the old parallelism's layout, every moved partition
		// would be drift.
		pr.Mode = ModeNone
		pr.NotModelled = &NotModelled{Reason: ReasonRescaling, From: lin.p(), To: v.Parallelism}
	case lin != nil && (lin.known || lin.inferred != nil):
		mi = &modelInput{mode: ModeRestore, in: assign.RestoreInput{Topics: topics, History: lin.history}, source: HistoryObserved}
		if lin.inferred != nil {
			mi.source = HistoryInferred
		}
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
		mi.unsure = lin.unsure
	case j.Restored != nil || lin != nil:
		pr.Mode = ModeNone
		pr.NotModelled = &NotModelled{Reason: ReasonRestoredUnseen, Savepoint: j.Restored != nil && j.Restored.IsSavepoint}
		if lin != nil {
			pr.NotModelled.Inference = lin.inference
		}
		pr.Source = "flink-connector-kafka KafkaSourceEnumerator + RoundRobinOperatorStateRepartitioner"
	default:
		mi = &modelInput{mode: ModeFresh, in: assign.RestoreInput{Topics: topics, History: []int{v.Parallelism}}, source: ""}
	}
	var (
		owners    *ownerIndex
		uncertain = map[assign.TopicPartition]bool{}
		unnamed   = s.unnamedTopics(cluster, topics)
	)
	if mi != nil && len(unnamed) > 0 && len(mi.in.History) > 1 {
		// A restored layout depends on every split id's hash, and so on
		// every topic's real name.
		pr.Mode = ModeNone
		pr.NotModelled = &NotModelled{Reason: ReasonUnnamedTopics, Topics: sortedKeys(unnamed)}
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
				pr.Mode, pr.NotModelled = ModeNone, &NotModelled{Reason: ReasonModelError, Error: err.Error()}
			} else {
				owners = ownerIndexOf(fa)
			}
		} else {
			pr.History = mi.in.History
			pr.HistoryFrom = mi.source
			settled := s.settleUnsure(mi, lin, cluster, v, oo)
			res, err := assign.Restore(mi.in)
			if err != nil {
				pr.Mode, pr.NotModelled = ModeNone, &NotModelled{Reason: ReasonModelError, Restore: true, Error: err.Error()}
			} else {
				pr.Source = res.Source
				pr.Notes = append(pr.Notes, jobNotes(res.Notes, lin, len(q.History) > 0)...)
				for _, u := range res.Uncertain {
					uncertain[u] = true
				}
				owners = ownerIndexOf(res.Assignment)
				if mi.unsure && len(mi.in.NewTopics) > 0 {
					pr.Notes = unsureDiscovery(pr.Notes, mi, owners, uncertain)
				}
				if settled != nil {
					pr.Notes = append(pr.Notes, *settled)
				}
				if mi.allGuess {
					// Splits discovered before the latest restore joined the
					// readers' lists in an order the checkpoint keeps but
					// skewscope cannot see; every chunk boundary can move.
					pr.Notes = append(pr.Notes, Note{Kind: NoteDiscoveredBeforeRestore})
					for tp := range owners.all() {
						uncertain[tp] = true
					}
				}
			}
		}
		if mi.mode == ModeInferred && lin != nil {
			pr.Notes = append(pr.Notes, Note{Kind: NoteInferred, Inference: lin.inference})
		}
	}
	if len(unnamed) > 0 && pr.Mode == ModeFresh {
		pr.Notes = append(pr.Notes, Note{Kind: NoteUnnamedTopics, Topics: sortedKeys(unnamed)})
	}
	basis := BasisExact
	if pr.Mode == ModeInferred {
		basis = BasisInferred
	}
	return modelled{owners: owners, uncertain: uncertain, unnamed: unnamed, basis: basis}
}

// modelInput is what one prediction runs on.
type modelInput struct {
	mode     Mode
	in       assign.RestoreInput // History of one entry: a fresh start
	source   HistoryOrigin       // where History came from
	allGuess bool                // every owner is the model's best guess (see grewBefore)
	// unsure is set when NewTopics appeared after the latest restore or
	// rescale at a time that does not say on which side of it the source
	// discovered them (lineage.unsure).
	unsure bool
}

// predict compares the observed owners with Flink's formulas.
func (s *picture) predict(vv *VertexView, endpoint string, j *flink.JobSnapshot, v *flink.VertexSnapshot, q VertexQuery, oo observedOwners) *Prediction {
	pr := &Prediction{Ambiguous: oo.ambiguous}
	m := s.model(pr, vv.Cluster, endpoint, j, v, q, oo)
	owners := m.owners
	if owners != nil {
		placeUndetermined(vv, owners, q)
	}
	undetermined := 0
	for i := range vv.Subtasks {
		r := &vv.Subtasks[i]
		for k := range r.Partitions {
			pr.Total++
			if m.mark(&r.Partitions[k]) {
				undetermined++
			}
		}
	}
	var verdicts Tally
	for i := range vv.Subtasks {
		r := &vv.Subtasks[i]
		t := TallyOf(r.Partitions, r.Subtask)
		r.Drift = t.Drift
		verdicts.add(t)
	}
	pr.Matched, pr.Drift = verdicts.Placed(), verdicts.Drift
	pr.Uncertain = verdicts.Guessed + verdicts.NotGuessed + verdicts.Undetermined
	pr.UncertainDiffer = verdicts.NotGuessed
	pr.Withheld = verdicts.Withheld
	if pr.Mode != ModeNone {
		pr.Missing, pr.UnknownToKafka = s.partitionGaps(vv, v)
	}
	pr.Headline = headline(vv, pr, verdicts)
	if undetermined > 0 {
		_, withheld := s.withheld[vertexKey{endpoint, j.ID, v.ID}]
		pr.Notes = append(pr.Notes, Note{Kind: NoteUndetermined, Partitions: undetermined, Withheld: withheld, Listed: undeterminedListed(vv)})
	}
	return pr
}

// undeterminedListed reports whether the metric ids of some cell whose
// reader is not determined list subtasks that may read it (its title then
// names them).
func undeterminedListed(vv *VertexView) bool {
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			if c.OwnerUndetermined && len(c.Candidates) > 0 {
				return true
			}
		}
	}
	return false
}

// headline counts the cells by basis and finds the verdict's kind, the
// weakest basis that applies; the verdicts are the cells' (Judge) that the
// rows show.
func headline(vv *VertexView, pr *Prediction, verdicts Tally) (h Headline) {
	h.Verdicts = verdicts
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
	switch {
	case pr.Mode == ModeNone || h.NotModelled == total:
		h.Kind = BasisNotModelled
		return h
	case h.Uncertain > 0 || h.NotModelled > 0:
		h.Kind = BasisUncertain
	case h.Inferred > 0:
		h.Kind = BasisInferred
	default:
		h.Kind = BasisExact
	}
	if pr.Missing > 0 || pr.UnknownToKafka > 0 {
		// A partition set Kafka and Flink do not agree on is not exact,
		// whatever the cells shown say.
		h.Kind = BasisUncertain
	}
	return h
}

// unsureDiscovery marks what depends on when the partitions that appeared
// after the latest restore were discovered: the model places them after
// it (at the last parallelism); had the source found them before it, they
// were in the saved split lists and the restore dealt them out with the
// rest. Each new partition is uncertain, and so is every partition whose
// owner differs between the two; with more than one restore the earlier
// steps' lists are not modelled with the partitions found in between, so
// every cell is. It returns notes with the model's "discovered after the
// last restore" replaced by what is known.
func unsureDiscovery(notes []Note, mi *modelInput, owners *ownerIndex, uncertain map[assign.TopicPartition]bool) []Note {
	grown := maxTopics(mi.in.Topics, mi.in.NewTopics)
	old := map[string]int{}
	for _, t := range mi.in.Topics {
		old[t.Name] = t.Partitions
	}
	n := 0
	for _, tp := range assign.Partitions(grown) {
		if int(tp.Partition) >= old[tp.Topic] {
			uncertain[tp] = true
			n++
		}
	}
	h := mi.in.History
	var before assign.RestoreResult
	err := errors.New("the steps before the latest are not modelled with partitions found between them")
	if len(h) == 2 {
		before, err = assign.Restore(assign.RestoreInput{Topics: grown, History: h, ConnectorLine: mi.in.ConnectorLine, StartingOffsets: mi.in.StartingOffsets})
	}
	if err != nil {
		for tp := range owners.all() {
			uncertain[tp] = true
		}
	} else {
		for tp, o := range ownerMap(before.Assignment) {
			if now, ok := owners.get(tp.Topic, tp.Partition); !ok || now != o {
				uncertain[tp] = true
			}
		}
		for _, tp := range before.Uncertain {
			uncertain[tp] = true
		}
	}
	out := make([]Note, 0, len(notes)+1)
	for _, note := range notes {
		if note.Kind != NoteModel || !strings.Contains(note.Text, "discovered after the last restore") {
			out = append(out, note)
		}
	}
	return append(out, Note{Kind: NoteUnsureDiscovery, Partitions: n, From: h[len(h)-2], To: h[len(h)-1]})
}

// partitionGaps counts the partitions Kafka's metadata lists for the
// source's topics that no cell shows (missing), and those the metric ids
// name that the metadata does not list (unknown). Both are 0 without
// metadata.
func (s *picture) partitionGaps(vv *VertexView, v *flink.VertexSnapshot) (missing, unknown int) {
	ks := s.kafka[vv.Cluster]
	if ks == nil || v.Kafka == nil {
		return 0, 0
	}
	shown := map[string]*partSet{}
	setOf := ""
	var set *partSet
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			if set == nil || c.Topic != setOf {
				if set = shown[c.Topic]; set == nil {
					set = &partSet{}
					shown[c.Topic] = set
				}
				setOf = c.Topic
			}
			set.add(c.Partition)
		}
	}
	topics := map[string]bool{}
	idTopic, started := "", false
	for _, st := range v.Kafka.States {
		if st.Cluster == "" && (!started || st.Topic != idTopic) {
			idTopic, started = st.Topic, true
			topics[s.resolve(vv.Cluster, st.Topic)] = true
		}
	}
	for _, t := range ks.Topics {
		if !topics[t.Name] {
			continue
		}
		set := shown[t.Name]
		for _, p := range t.Partitions {
			if !set.has(p.Partition) {
				missing++
			}
		}
	}
	return missing, len(s.unknownOf(vv.Cluster, v))
}

// unnamedTopics lists the topics of a source whose real name is not known:
// the cluster's metadata does not have them and the metric-id form has an
// '_', which may stand for a '.' (flink.SanitizeMetricName). A name without
// '_' is its own real name.
func (s *picture) unnamedTopics(cluster string, topics []assign.Topic) map[string]bool {
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

func ownerMap(a assign.Assignment) map[assign.TopicPartition]int {
	n := 0
	for _, tps := range a.Subtasks {
		n += len(tps)
	}
	out := make(map[assign.TopicPartition]int, n)
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
func jobNotes(notes []string, l *lineage, fromURL bool) []Note {
	out := modelNotes(notes)
	if l == nil || fromURL {
		return out
	}
	for i, n := range out {
		if strings.HasPrefix(n.Text, "Assumes the job started fresh at parallelism") {
			out[i] = Note{Kind: NoteFreshOffsets, P: l.history[0]}
		}
	}
	return out
}

// movedTo is the row of n an undetermined cell shown in row moves to: the
// model's subtask when that may read it.
func movedTo(c *PartitionCell, row int, owners *ownerIndex, n int) (int, bool) {
	if !c.OwnerUndetermined {
		return 0, false
	}
	o, ok := owners.get(c.Topic, c.Partition)
	if ok && o != row && (c.Candidates == nil || slices.Contains(c.Candidates, o)) && o >= 0 && o < n {
		return o, true
	}
	return 0, false
}

// placeUndetermined shows each partition whose reader is not determined
// under the model's subtask when that is one of its candidates.
func placeUndetermined(vv *VertexView, owners *ownerIndex, q VertexQuery) {
	type move struct {
		c  PartitionCell
		to int
	}
	var moves []move
	from := map[int]bool{}
	for i := range vv.Subtasks {
		r := &vv.Subtasks[i]
		// The kept cells close up in place; a row that loses none is not
		// written at all.
		n := 0
		for k := range r.Partitions {
			c := &r.Partitions[k]
			if o, ok := movedTo(c, r.Subtask, owners, len(vv.Subtasks)); ok {
				moves = append(moves, move{*c, o})
				from[i] = true
				continue
			}
			if n != k {
				r.Partitions[n] = *c
			}
			n++
		}
		r.Partitions = r.Partitions[:n]
	}
	for _, m := range moves {
		vv.Subtasks[m.to].Partitions = append(vv.Subtasks[m.to].Partitions, m.c)
		from[m.to] = true
	}
	for i := range from {
		sumRow(&vv.Subtasks[i], q)
	}
}
