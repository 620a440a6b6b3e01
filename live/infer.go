package live

import (
	"hash/fnv"
	"slices"
	"strconv"
	"strings"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
)

// A source first seen already restored has a history skewscope did not
// witness. Its observed layout can say which histories produced it: the
// store asks assign.InferHistory once per observed layout of such a run
// (when every owner is determined and every topic name known) and keeps
// the answer in the lineage. The search runs outside the store's lock.

// maxInferPartitions bounds the sources searched. A two-step search over
// 10,000 partitions takes about 55 ms on a 2-core machine
// (BenchmarkInferHistory10k) and over 1,000,000 about 13 s; the bound keeps
// a search near a second, so it never holds up the Flink collector long.
const maxInferPartitions = 100_000

// InferOutcome is what the search for the history of a source first seen
// already restored came to (Inference.Outcome).
type InferOutcome string

// What the history search came to (Inference.Outcome).
const (
	// InferTooLarge: the source's Observed partitions are over Limit, the
	// bound that keeps a search within a poll; it did not run.
	InferTooLarge InferOutcome = "too large"
	// InferFailed: the search failed with Error.
	InferFailed InferOutcome = "failed"
	// InferNoFit: no history in the search's scope reproduces the
	// observed layout; skewscope does not guess one.
	InferNoFit InferOutcome = "no fit"
	// InferOne: Fits holds the only history in scope that reproduces the
	// observed layout.
	InferOne InferOutcome = "one fit"
	// InferSeveral: Fits holds the several histories that do (More when
	// the search found more than it lists); the model follows the first.
	InferSeveral InferOutcome = "several fits"
)

// Inference is what the search for the history of a source first seen
// already restored found, with what its words need.
type Inference struct {
	Outcome InferOutcome `json:"outcome"`
	// Steps and Bound are the search's scope: histories of up to Steps
	// restores from earlier parallelisms up to Bound, ending with Tail,
	// the parallelisms skewscope saw (oldest first).
	Steps int   `json:"steps,omitempty"`
	Bound int   `json:"bound,omitempty"`
	Tail  []int `json:"tail,omitempty"`
	// Observed counts the partitions whose owners the search compared
	// (for InferTooLarge, those it would have); Limit is the bound of
	// InferTooLarge.
	Observed int `json:"observed,omitempty"`
	Limit    int `json:"limit,omitempty"`
	// Fits are the histories (parallelisms, oldest first) that reproduce
	// the observed layout; the first is the one modelled.
	Fits  [][]int `json:"fits,omitempty"`
	More  bool    `json:"more,omitempty"`
	Error string  `json:"error,omitempty"`
}

// inferredHistory is what the search found for a lineage.
type inferredHistory struct {
	res assign.InferResult
	// history is the fit the prediction uses: the only one, or the first
	// of several that all place every observed partition alike.
	history []int
}

// inferJob is one search to run for a lineage.
type inferJob struct {
	key   vertexKey // the lineage
	jobID string
	hash  uint64 // the observed layout searched
	tail  []int  // the parallelisms skewscope saw, oldest first
	in    assign.InferInput
}

// inferJobs lists the searches the latest Flink snapshot needs.
func (s *Store) inferJobs(snap *flink.Snapshot) []inferJob {
	var out []inferJob
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		if !j.State.Running() {
			continue
		}
		for k := range j.Vertices {
			v := &j.Vertices[k]
			key := vertexKey{snap.Endpoint, j.Name, v.Name}
			l := s.lineage[key]
			if l == nil || l.known || l.inferred != nil || l.jobID != j.ID || v.Kafka == nil || v.Stale || !allRunning(v) {
				continue
			}
			oo := s.owners[vertexKey{snap.Endpoint, j.ID, v.ID}]
			if len(oo.candidates) > 0 {
				continue // wait until every owner is determined
			}
			cluster := s.clusterFor(snap.Endpoint, v)
			topics := s.observedTopics(cluster, v)
			if len(s.unnamedTopics(cluster, topics)) > 0 {
				continue
			}
			observed := make(map[assign.TopicPartition]int, len(oo.owner))
			for kp, st := range oo.owner {
				observed[assign.TopicPartition{Topic: s.resolve(cluster, kp.Topic), Partition: kp.Partition}] = st
			}
			h := layoutHash(observed)
			if l.inferFor == h {
				continue
			}
			if len(observed) > maxInferPartitions {
				l.inferFor = h
				l.inference = &Inference{Outcome: InferTooLarge, Observed: len(observed), Limit: maxInferPartitions}
				continue
			}
			out = append(out, inferJob{key: key, jobID: j.ID, hash: h, tail: slices.Clone(l.history), in: assign.InferInput{
				Topics: topics, Parallelism: v.Parallelism, Observed: observed,
				ConnectorLine: connectorLine(snap.FlinkVersion), MaxParallelism: v.MaxParallelism,
			}})
		}
	}
	return out
}

// layoutHash identifies an observed layout.
func layoutHash(observed map[assign.TopicPartition]int) uint64 {
	keys := make([]assign.TopicPartition, 0, len(observed))
	for tp := range observed {
		keys = append(keys, tp)
	}
	slices.SortFunc(keys, func(a, b assign.TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	h := fnv.New64a()
	buf := make([]byte, 0, 64)
	for _, tp := range keys {
		buf = append(buf[:0], tp.Topic...)
		buf = append(buf, 0)
		buf = strconv.AppendInt(buf, int64(tp.Partition), 10)
		buf = append(buf, '=')
		buf = strconv.AppendInt(buf, int64(observed[tp]), 10)
		buf = append(buf, ';')
		h.Write(buf)
	}
	return h.Sum64() | 1 // never 0, which means "not searched"
}

// runInfer runs the searches (outside the lock) and keeps their answers
// for the lineages that still follow the same run.
func (s *Store) runInfer(jobs []inferJob) {
	type answer struct {
		job inferJob
		res assign.InferResult
		err error
	}
	answers := make([]answer, 0, len(jobs))
	for _, ij := range jobs {
		res, err := assign.InferHistory(ij.in)
		answers = append(answers, answer{ij, res, err})
	}
	s.mu.Lock()
	s.seq++
	for _, a := range answers {
		l := s.lineage[a.job.key]
		if l == nil || l.jobID != a.job.jobID || l.known || l.inferred != nil || !slices.Equal(l.history, a.job.tail) {
			continue
		}
		s.jobSeq[a.job.jobID] = s.seq
		l.inferFor = a.job.hash
		l.inference, l.inferred = inferAnswer(a.res, a.err, a.job.tail)
		if l.inferred != nil {
			l.history = slices.Clone(l.inferred.history)
		}
	}
	s.publish()
	s.mu.Unlock()
	s.notify()
}

// inferAnswer is what a search found, and picks the history to model
// with: the fits that end with the parallelisms skewscope saw, the only
// one, or the first of several (all reproduce every observed owner, so
// they agree on the page; they can differ on partitions discovered later).
func inferAnswer(res assign.InferResult, err error, tail []int) (*Inference, *inferredHistory) {
	if err != nil {
		return &Inference{Outcome: InferFailed, Error: err.Error()}, nil
	}
	in := &Inference{Outcome: InferNoFit, Steps: res.Steps, Bound: res.Bound, Tail: slices.Clone(tail), Observed: res.Observed, More: res.More}
	for _, f := range res.Fits {
		if len(f.History) >= len(tail) && slices.Equal(f.History[len(f.History)-len(tail):], tail) {
			in.Fits = append(in.Fits, slices.Clone(f.History))
		}
	}
	switch {
	case len(in.Fits) == 0:
		return in, nil
	case len(in.Fits) == 1 && !res.More:
		in.Outcome = InferOne
	default:
		in.Outcome = InferSeveral
	}
	return in, &inferredHistory{res: res, history: slices.Clone(in.Fits[0])}
}
