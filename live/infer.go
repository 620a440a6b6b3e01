package live

import (
	"fmt"
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
				l.inferNote = fmt.Sprintf("No history is inferred for %d partitions: the search is bounded to %d so that it stays within a poll.", len(observed), maxInferPartitions)
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
		l.inferNote, l.inferred = inferAnswer(a.res, a.err, a.job.tail)
		if l.inferred != nil {
			l.history = slices.Clone(l.inferred.history)
		}
	}
	s.publish()
	s.mu.Unlock()
	s.notify()
}

// inferAnswer says what a search found and picks the history to model
// with: the fits that end with the parallelisms skewscope saw, the only
// one, or the first of several (all reproduce every observed owner, so
// they agree on the page; they can differ on partitions discovered later).
func inferAnswer(res assign.InferResult, err error, tail []int) (string, *inferredHistory) {
	if err != nil {
		return "No history could be inferred: " + err.Error() + ".", nil
	}
	var fits []assign.HistoryFit
	for _, f := range res.Fits {
		if len(f.History) >= len(tail) && slices.Equal(f.History[len(f.History)-len(tail):], tail) {
			fits = append(fits, f)
		}
	}
	scope := fmt.Sprintf("of ≤ %d restores with earlier parallelisms up to %d", res.Steps, res.Bound)
	if res.Steps == 1 {
		scope = fmt.Sprintf("of one restore from a parallelism up to %d", res.Bound)
	}
	if len(tail) > 1 {
		scope += " ending with the parallelisms skewscope saw, " + joinInts(tail, "→") + ","
	}
	if len(fits) == 0 {
		return fmt.Sprintf("No history %s reproduces the observed layout (%d partitions compared), so skewscope does not guess one.", scope, res.Observed), nil
	}
	ih := &inferredHistory{res: res, history: slices.Clone(fits[0].History)}
	if len(fits) == 1 && !res.More {
		return fmt.Sprintf("Inferred, not witnessed: the observed layout is consistent with %s, the only history %s that reproduces it.", historyWords(fits[0].History), scope), ih
	}
	var alts []string
	for _, f := range fits {
		alts = append(alts, joinInts(f.History, "→"))
	}
	more := ""
	if res.More {
		more = " and more"
	}
	return fmt.Sprintf("Inferred, not witnessed: several histories %s reproduce the observed layout: %s%s. The page models %s; they all place every observed partition alike, and may differ on partitions discovered later.", scope, strings.Join(alts, ", "), more, joinInts(fits[0].History, "→")), ih
}

func historyWords(h []int) string {
	switch len(h) {
	case 1:
		return fmt.Sprintf("a fresh start at p=%d (or restores that kept the parallelism)", h[0])
	case 2:
		return fmt.Sprintf("a restore from p=%d", h[0])
	}
	return "restores through p=" + joinInts(h[:len(h)-1], ", p=")
}
