package flink

import (
	"maps"
	"slices"
)

// Judging Kafka offset entries across restarts under one job id.
//
// Flink's JobManager serves vertex metrics from its MetricStore
// (flink-runtime rest/handler/legacy/metrics/MetricStore.java, 1.16+):
//
//   - TaskMetricStore.metrics holds "<subtaskIndex>.<name>" for every index
//     ever seen; updateCurrentExecutionAttempts → retainSubtasks drops
//     only the indexes no longer active (a scale-down), never the ids of
//     an earlier attempt of a still-active index;
//   - add() writes a dump's value there only when isRepresentativeAttempt
//     holds, i.e. from the subtask's current attempt;
//   - MetricFetcherImpl.update fetches the TaskManagers' dumps at most once
//     per metrics.fetcher.update-interval (default 10 s), asynchronously,
//     when a REST request asks: the first poll after a restart can still
//     see the dump from before it.
//
// And the Kafka source (KafkaSourceReaderMetrics.registerTopicPartition)
// registers each split's partition with currentOffset and committedOffset
// at INITIAL_OFFSET (−1) when the split is added; within one attempt both
// only grow (the last emitted record, the last commit).
//
// So after a restart an entry of a restarted subtask is the current
// attempt's when its id was not listed before, or its value differs from
// the value seen before (below it: only a re-registration goes back; above
// or different on a later poll: the old attempt no longer writes). Equal
// means unconfirmed. An id the last poll did not list (the id list read
// before may predate it) that the attempt's first poll shows at a value
// other than −1 may be an earlier attempt's too, so it is unconfirmed
// until it changes; at an index new to the vertex it is not. A value that
// moves between two polls of one attempt is the current attempt's too,
// and one that moved since the attempt's first poll (Advanced) tells the
// reader apart from ids left behind by splits that moved away.
//
// The task-scope gauges accumulateBusyTimeMs + accumulateIdleTimeMs +
// accumulateBackPressuredTimeMs (TaskIOMetricGroup) add up to the time since
// the attempt started running, so a lower (or, on a later poll, any other)
// sum than before the restart shows that the JobManager holds the new
// attempt's dump of that subtask, even when all its offsets are idle at −1.
//
// Which splits a restarted reader holds: at an unchanged parallelism its
// own (RoundRobinOperatorStateRepartitioner.repartitionState returns every
// subtask's previous state), after a rescale a redistribution. A dump taken
// right after a rescale can show a new reader with only some of its splits
// registered (recorded with Flink 2.2.1), so the subtasks of a rescale are
// Registering until the poll after the one that first shows them.

// offsets is one entry's pair of values.
type offsets struct{ current, committed int64 }

// below reports whether either value is lower than in b.
func (v offsets) below(b offsets) bool { return v.current < b.current || v.committed < b.committed }

// attemptID identifies one execution attempt of a subtask as the vertex
// details show it: the attempt number and its start-time. A restart changes
// the start-time (and usually the attempt number).
type attemptID struct {
	attempt int
	start   int64
}

// subtaskPoll is what one poll saw of a subtask's attempt.
type subtaskPoll struct {
	id attemptID
	// runMs is accumulateBusy+Idle+BackPressuredTimeMs, runNotListed
	// when the JobManager lists none of them for the subtask.
	runMs int64
}

// Running times that are not values: the ids were not listed, or the
// tracker does not know (the index was outside the vertex details).
const (
	runNotListed int64 = -1
	runUnknown   int64 = -2
)

// subtaskTrack is what the tracker remembers of one subtask index.
type subtaskTrack struct {
	id    attemptID
	hasID bool // id is set: the index is within the parallelism
	// restarted: the tracker saw this attempt replace an earlier one (or
	// the index appear, after a scale-up), so baseline holds the entries
	// as listed before it.
	restarted bool
	// rescaled: the restart came with a change of parallelism, so the
	// splits were redistributed; par is the parallelism the attempt was
	// first seen at (0: not seen in range).
	rescaled bool
	par      int
	// fresh: this poll is the first of the attempt; its values may still
	// be the pre-restart dump, so values above the baseline join it.
	fresh bool
	// prior: the index had an attempt or entries before this attempt, so
	// an entry the baseline lacks can be an earlier attempt's that the
	// last poll did not list (the Collector reads id lists only when they
	// can have changed: idcache.go).
	prior    bool
	baseline map[KafkaPartition]offsets
	baseRun  int64
	current  map[KafkaPartition]bool // entries shown to be this attempt's
	// firstSeen holds each entry's value at the first poll of this
	// attempt that listed it, and advanced the entries whose value changed
	// on a later poll: only the current attempt writes after that poll
	// (isRepresentativeAttempt), so its reader reads the partition now.
	firstSeen   map[KafkaPartition]offsets
	advanced    map[KafkaPartition]bool
	refreshed   bool // a value of this attempt was seen
	refreshedAt int  // the poll that first saw one
	last        map[KafkaPartition]offsets
	lastRun     int64
}

// kafkaTracker follows one source vertex's Kafka offset entries across
// polls. Its memory is bounded by the entries the JobManager lists.
type kafkaTracker struct {
	polls    int
	subtasks map[int]*subtaskTrack
}

// observe judges o's entries against the earlier polls, sets their
// Evidence, o.Parallelism, o.AwaitingRefresh and o.Registering, and
// remembers this poll. subs holds the subtasks of the vertex details by
// index.
func (t *kafkaTracker) observe(parallelism int, subs map[int]subtaskPoll, o *KafkaSourceObservation) {
	first := t.polls == 0
	t.polls++
	if t.subtasks == nil {
		t.subtasks = map[int]*subtaskTrack{}
	}
	inRange := func(i int) bool { return parallelism <= 0 || i < parallelism }

	for _, tr := range t.subtasks {
		tr.fresh = false
	}
	for i, s := range subs {
		if !inRange(i) {
			continue
		}
		tr := t.subtasks[i]
		switch {
		case tr == nil && first:
			t.subtasks[i] = &subtaskTrack{id: s.id, hasID: true, par: parallelism, current: map[KafkaPartition]bool{}}
		case tr == nil:
			tr = &subtaskTrack{lastRun: runUnknown}
			t.subtasks[i] = tr
			tr.restart(s.id, parallelism)
		case !tr.hasID || tr.id != s.id:
			tr.restart(s.id, parallelism)
		}
	}

	entries := map[int]map[KafkaPartition]offsets{}
	for k := range o.States {
		s := &o.States[k]
		v := offsets{s.CurrentOffset, s.CommittedOffset}
		if entries[s.Subtask] == nil {
			entries[s.Subtask] = map[KafkaPartition]offsets{}
		}
		entries[s.Subtask][s.KafkaPartition] = v
		if !inRange(s.Subtask) {
			s.Evidence = EvidenceStale
			continue
		}
		s.Evidence = t.judge(first, s.Subtask, s.KafkaPartition, v)
		s.Advanced = t.subtasks[s.Subtask].advance(s.KafkaPartition, v)
	}

	o.Parallelism = max(parallelism, 0)
	o.AwaitingRefresh, o.Registering = nil, nil
	for i, tr := range t.subtasks {
		if !tr.hasID || !tr.restarted {
			continue
		}
		if !tr.refreshed && (len(tr.current) > 0 || tr.runShowsAttempt(subs, i)) {
			tr.refreshed, tr.refreshedAt = true, t.polls
		}
		if !tr.refreshed {
			o.AwaitingRefresh = append(o.AwaitingRefresh, i)
		}
		if tr.rescaled && (!tr.refreshed || tr.refreshedAt == t.polls) {
			o.Registering = append(o.Registering, i)
		}
	}
	slices.Sort(o.AwaitingRefresh)
	slices.Sort(o.Registering)

	// Remember this poll: the entries of every listed index, in range or
	// not, so that a restart or a scale-up can compare against them.
	for i := range entries {
		if t.subtasks[i] == nil {
			t.subtasks[i] = &subtaskTrack{lastRun: runUnknown}
		}
	}
	for i, tr := range t.subtasks {
		tr.last = entries[i]
		if tr.last == nil {
			tr.last = map[KafkaPartition]offsets{}
		}
		if s, ok := subs[i]; ok {
			tr.lastRun = s.runMs
		} else if tr.lastRun < 0 {
			tr.lastRun = runUnknown
		}
		if !inRange(i) {
			if len(tr.last) == 0 {
				delete(t.subtasks, i)
				continue
			}
			// Out of range: only its listing is kept; coming back in
			// range (a scale-up) is a restart against that listing.
			*tr = subtaskTrack{last: tr.last, lastRun: tr.lastRun}
		}
	}
}

// restart starts tracking a new attempt, at the given parallelism, against
// the entries of the last poll. An attempt replacing one that never showed
// continues its restart: a rescale stays a rescale.
func (tr *subtaskTrack) restart(id attemptID, parallelism int) {
	rescaled := tr.par != parallelism || (tr.restarted && !tr.refreshed && tr.rescaled)
	tr.prior = tr.hasID || len(tr.last) > 0
	tr.id, tr.hasID, tr.par = id, true, parallelism
	tr.restarted, tr.rescaled, tr.fresh, tr.refreshed = true, rescaled, true, false
	tr.baseline = maps.Clone(tr.last)
	if tr.baseline == nil {
		tr.baseline = map[KafkaPartition]offsets{}
	}
	tr.baseRun = tr.lastRun
	tr.current = map[KafkaPartition]bool{}
	tr.firstSeen, tr.advanced = nil, nil
}

// advance records an in-range entry's value v and reports whether it
// changed since the first poll of the current attempt that listed it. A
// track without an attempt (not in the vertex details) knows of none.
func (tr *subtaskTrack) advance(p KafkaPartition, v offsets) bool {
	if tr == nil || !tr.hasID {
		return false
	}
	if tr.advanced[p] {
		return true
	}
	f, ok := tr.firstSeen[p]
	if !ok || tr.fresh {
		// The first poll of an attempt can still show the dump from
		// before it (see judge): its values are where moving starts.
		if tr.firstSeen == nil {
			tr.firstSeen = map[KafkaPartition]offsets{}
		}
		tr.firstSeen[p] = v
		return false
	}
	if f == v {
		return false
	}
	if tr.advanced == nil {
		tr.advanced = map[KafkaPartition]bool{}
	}
	tr.advanced[p] = true
	return true
}

// judge returns the evidence of one in-range entry and records it.
func (t *kafkaTracker) judge(first bool, subtask int, p KafkaPartition, v offsets) Evidence {
	tr := t.subtasks[subtask]
	if tr == nil || !tr.hasID {
		return EvidenceUnknown // not in the vertex details
	}
	if tr.current[p] {
		return EvidenceCurrent
	}
	if tr.restarted {
		b, listed := tr.baseline[p]
		switch {
		case listed && tr.fresh && !v.below(b):
			// Possibly a later dump of the old attempt: it becomes the
			// value to differ from.
			tr.baseline[p] = v
			return EvidenceUnconfirmed
		case listed && v == b:
			return EvidenceUnconfirmed
		case !listed && tr.fresh && tr.prior && (v.current >= 0 || v.committed >= 0):
			// Not in the last poll's list, and not at the −1 a new
			// registration starts at: possibly an earlier attempt's id
			// listed for the first time. It joins the baseline; a change
			// on a later poll shows the current attempt.
			tr.baseline[p] = v
			return EvidenceUnconfirmed
		}
		// Not listed before, gone back (a re-registration), or changed
		// since the old attempt stopped writing.
	} else {
		if first {
			return EvidenceUnknown
		}
		if prev, listed := tr.last[p]; listed && prev == v {
			return EvidenceUnknown
		}
		// Listed since the last poll of this attempt, or moved.
	}
	tr.current[p] = true
	return EvidenceCurrent
}

// runShowsAttempt reports whether the subtask's accumulated running time
// shows the new attempt's dump: lower than before the restart (the attempt
// clock started again), listed only since, or, after the first poll of the
// attempt, different. With no value from before, the first one seen is the
// one to differ from.
func (tr *subtaskTrack) runShowsAttempt(subs map[int]subtaskPoll, i int) bool {
	s, ok := subs[i]
	if !ok || s.runMs < 0 {
		return false
	}
	switch {
	case tr.baseRun == runUnknown:
		tr.baseRun = s.runMs
		return false
	case tr.baseRun == runNotListed || s.runMs < tr.baseRun:
		return true
	case tr.fresh:
		tr.baseRun = s.runMs
		return false
	default:
		return s.runMs != tr.baseRun
	}
}
