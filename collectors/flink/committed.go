package flink

import (
	"maps"
	"time"
)

// Reading a Kafka source's committedOffset only in the polls where it can
// have changed.
//
// KafkaSourceReaderMetrics (flink-connector-kafka, source/metrics) writes
// a partition's committedOffset gauge in two places only:
// registerTopicPartition sets it to INITIAL_OFFSET (−1) when a split is
// added to a reader, and recordCommittedOffset sets it in the callback of
// the offset commit that KafkaSourceReader.notifyCheckpointComplete starts,
// i.e. after a checkpoint completes (nothing at all with
// commit.offsets.on.checkpoint off). The Kafka consumer's own commits
// (enable.auto.commit, which KafkaSourceBuilder turns off unless asked)
// never reach the gauge. So while a subtask keeps its attempt and no
// checkpoint completes, its committedOffset values stand, and the collector
// reads the committedOffset ids of a source vertex only when:
//   - it holds no values of the vertex yet, or not one of each listed id;
//   - the parallelism or a subtask's attempt differs from the poll that
//     read them (a new reader registers its splits at −1), the vertex
//     details failed, the vertex's last poll failed or was stale, or the
//     tracker still waits on restarted subtasks (AwaitingRefresh,
//     Registering) or saw some go unreported (restarts.go);
//   - the job's checkpoints could not be read, or it has no completed
//     checkpoint (then on every poll: nothing is lost by reading, and the
//     rules above already catch the only change, a registration);
//   - a completed checkpoint newer than at the last read shows, and for
//     committedSettle after the poll that first showed it: the commit runs
//     after the completion, asynchronously, and the JobManager answers from
//     a metric dump up to a fetch interval (metrics.fetcher.update-interval,
//     MetricFreshness) old, fetched in the background when a request asks.
//
// Otherwise the last values read are used again, and each entry's
// KafkaPartitionState.CommittedAt says when they were read.

// committedSettle is how long after a poll first shows a newer completed
// checkpoint the committedOffset ids are still read: the commit's round
// trip to Kafka plus up to two metric fetches (the dump a poll triggers is
// served to the next one).
const committedSettle = 3 * MetricFreshness

// committedEntry is one source vertex's committedOffset values as last
// read; it is not changed once stored.
type committedEntry struct {
	values   map[string]Metric // by id, the ids the answer held
	readAt   time.Time
	par      int
	attempts map[int]attemptID
	// cpID is the newest completed checkpoint at the read, first shown by
	// the poll at cpSeenAt.
	cpID     int64
	cpSeenAt time.Time
}

// commitContext is what a vertex poll knows for the decision: the vertex
// details' attempts (detailsOK when they were read without error), the
// job's latest completed checkpoint (cpKnown when the checkpoints answered
// in this poll) and the vertex's previous snapshot.
type commitContext struct {
	attempts  map[int]subtaskPoll
	detailsOK bool
	cpID      int64
	cpKnown   bool
	prev      *VertexSnapshot
	at        time.Time
}

// keptCommitted returns the kept committedOffset values to use for the
// vertex in this poll instead of reading ids, or nil when they must be
// read.
func (c *Collector) keptCommitted(key stateKey, ids []string, par int, cc commitContext) *committedEntry {
	if len(ids) == 0 {
		return nil
	}
	c.stateMu.Lock()
	e := c.committed[key]
	c.stateMu.Unlock()
	prev := cc.prev
	switch {
	case e == nil, !cc.detailsOK, !cc.cpKnown, cc.cpID <= 0, prev == nil, prev.Err != nil, prev.Stale,
		e.par != par, !sameAttempts(e.attempts, cc.attempts),
		cc.cpID != e.cpID, cc.at.Sub(e.cpSeenAt) < committedSettle:
		return nil
	}
	if k := prev.Kafka; k != nil && len(k.AwaitingRefresh)+len(k.Registering)+len(k.Unreported) > 0 {
		return nil
	}
	for _, id := range ids {
		if _, ok := e.values[id]; !ok {
			return nil
		}
	}
	return e
}

// storeCommitted keeps the values of the committedOffset ids read in this
// poll (those of vals that the answer held).
func (c *Collector) storeCommitted(key stateKey, ids []string, vals map[string]Metric, par int, cc commitContext) {
	n := &committedEntry{values: make(map[string]Metric, len(ids)), readAt: cc.at, par: par,
		attempts: make(map[int]attemptID, len(cc.attempts)), cpID: cc.cpID, cpSeenAt: cc.at}
	for _, id := range ids {
		if v, ok := vals[id]; ok {
			n.values[id] = v
		}
	}
	for i, s := range cc.attempts {
		n.attempts[i] = s.id
	}
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	if e := c.committed[key]; e != nil && e.cpID == cc.cpID {
		n.cpSeenAt = e.cpSeenAt
	}
	c.committed[key] = n
}

// pruneCommitted drops the kept values of vertices no longer sources.
func pruneCommitted(m map[stateKey]*committedEntry, sources map[stateKey]bool) {
	maps.DeleteFunc(m, func(k stateKey, _ *committedEntry) bool { return !sources[k] })
}
