package sandbox

import "time"

// The JobManager answers metric requests from its MetricStore, which its
// MetricFetcher refreshes from the TaskManagers on the first request after
// metrics.fetcher.update-interval (MetricFetcherImpl.update, called by the
// metric handlers and by the job and vertex details handlers). Between two
// refreshes every request reads the same values, so the requests of one
// poll (a job's details, then each vertex's metrics, split over several
// requests when the ids do not fit in one request line) read one instant:
// the keyed vertex's input watermark is the minimum of the source outputs
// read beside it, and a source subtask's output watermark is the watermark
// of one of its splits.
//
// The sandbox keeps one store per job and refreshes it at once (Flink's
// fetch is asynchronous and lands a moment after the request that
// triggered it):
//   - on the job's details request (/jobs/:id), once the store is
//     storeRefresh old: skewscope's collector asks for a job's details
//     before any of its metrics, so each poll of the job starts with a
//     fresh store and reads it to the end of the poll;
//   - on any other request that reads metrics, once the store is
//     storeMaxAge old (Flink's default update interval), for readers that
//     never ask for the job's details.
//
// A store that changed under a poll, between the reads of two vertices or
// of two parts of one vertex, gave the dashboard a keyed watermark that no
// source subtask had, or a subtask watermark that none of its splits had
// (the holder not found, or "undetermined").
const (
	storeRefresh = time.Second
	storeMaxAge  = 10 * time.Second
)

// metricStore is the job's metrics as one refresh left them: every
// subtask's, computed at one instant.
type metricStore struct {
	at time.Time
	// subtasks are the subtask stores (ids relative to the subtask),
	// vertex the vertex stores (ids prefixed "<subtask>."); index 0 is the
	// source vertex, 1 the keyed one.
	subtasks [2][]*metricSet
	vertex   [2]*metricSet
}

func vertexIndex(keyed bool) int {
	if keyed {
		return 1
	}
	return 0
}

// metrics returns the job's metric store, refreshed first when it is at
// least maxAge old: a running job emits its watermarks then, so that the
// store holds those of that instant. j.mu must be held.
func (j *job) metrics(now time.Time, maxAge time.Duration) *metricStore {
	if j.store != nil && now.Sub(j.store.at) < maxAge {
		return j.store
	}
	if j.state == "RUNNING" {
		j.emitWatermarks(now, 0)
	}
	st := &metricStore{at: now}
	for _, keyed := range []bool{false, true} {
		k := vertexIndex(keyed)
		st.subtasks[k] = j.subtaskMetrics(keyed, now)
		st.vertex[k] = vertexStore(st.subtasks[k])
	}
	j.store = st
	return st
}
