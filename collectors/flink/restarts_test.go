package flink

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// sourceModel models, for one Kafka source vertex, what Flink serves
// through REST around restarts under one job id, after Flink's own code:
//
//   - each running attempt's KafkaSourceReaderMetrics: a split's partition
//     is registered with currentOffset and committedOffset −1
//     (registerTopicPartition, INITIAL_OFFSET), currentOffset is the last
//     emitted record, committedOffset the position committed on a
//     completed checkpoint;
//   - the accumulated busy+idle+backpressured time, the attempt's running
//     time (TaskIOMetricGroup);
//   - the JobManager's MetricStore: fetch() is one MetricFetcherImpl
//     update: updateCurrentExecutionAttempts → TaskMetricStore.retainSubtasks
//     drops indexes ≥ the parallelism, then every running attempt's dump
//     overwrites its own entries (isRepresentativeAttempt) and nothing
//     removes the others. Between fetches REST serves the old values.
//
// Which subtask holds a split after a rescale is the operator state
// redistribution's choice; the model gives partition p to subtask
// p mod parallelism. The rules under test do not depend on it.
type sourceModel struct {
	t          *testing.T
	op, topic  string
	partitions int32
	noRunTime  bool // a JobManager that lists no accumulate*TimeMs ids
	// lateMoves: after a rescale, a reader registers the splits it got
	// from another subtask only after the JobManager's next fetch, as seen
	// in a recording of Flink 2.2.1 scaling down in place.
	lateMoves bool

	now      int64
	attempts []attemptID
	started  []int64 // TM-side running start per subtask
	readers  []map[int32]*readerOffsets
	position map[int32]int64 // checkpointed position per partition (next to read)
	store    map[string]string
}

type readerOffsets struct {
	current, committed, next int64
	registered               bool
}

func newSourceModel(t *testing.T, topic string, partitions int32) *sourceModel {
	return &sourceModel{t: t, op: "Source__Kafka_Source", topic: topic, partitions: partitions,
		now: 1_796_000_000_000, position: map[int32]int64{}, store: map[string]string{}}
}

// start (re)deploys every subtask at parallelism n: new attempts whose
// readers register the splits they hold, restored from the last checkpoint.
// The JobManager's store is not touched until the next fetch.
func (m *sourceModel) start(n int) {
	m.now += 5_000
	prev := m.attempts
	m.attempts = make([]attemptID, n)
	m.started = make([]int64, n)
	m.readers = make([]map[int32]*readerOffsets, n)
	for i := range n {
		a := 0
		if i < len(prev) {
			a = prev[i].attempt + 1
		}
		m.attempts[i] = attemptID{attempt: a, start: m.now + int64(i)}
		m.started[i] = m.now + 200
		m.readers[i] = map[int32]*readerOffsets{}
	}
	for p := range m.partitions {
		moved := len(prev) > 0 && int(p)%len(prev) != int(p)%n
		m.readers[int(p)%n][p] = &readerOffsets{current: -1, committed: -1, next: m.position[p], registered: !(m.lateMoves && moved)}
	}
}

// consume lets partition p's reader emit records up to offset last.
func (m *sourceModel) consume(p int32, last int64) {
	for _, r := range m.readers {
		if o, ok := r[p]; ok {
			o.current, o.next = last, last+1
			return
		}
	}
	m.t.Fatalf("partition %d has no reader", p)
}

// checkpoint completes a checkpoint: each reader commits its position.
func (m *sourceModel) checkpoint() {
	for _, r := range m.readers {
		for p, o := range r {
			m.position[p] = o.next
			o.committed = o.next
		}
	}
}

func (m *sourceModel) tick(ms int64) { m.now += ms }

func (m *sourceModel) id(subtask int, p int32, kind string) string {
	return fmt.Sprintf("%d.%s.KafkaSourceReader.topic.%s.partition.%d.%s", subtask, m.op, m.topic, p, kind)
}

// fetch is one MetricFetcher update.
func (m *sourceModel) fetch() {
	n := len(m.attempts)
	for id := range m.store {
		if i, err := strconv.Atoi(id[:strings.IndexByte(id, '.')]); err == nil && i >= n {
			delete(m.store, id) // retainSubtasks
		}
	}
	for i, r := range m.readers {
		for p, o := range r {
			if !o.registered {
				o.registered = true // by the next fetch
				continue
			}
			m.store[m.id(i, p, KafkaCurrentOffset)] = strconv.FormatInt(o.current, 10)
			m.store[m.id(i, p, KafkaCommittedOffset)] = strconv.FormatInt(o.committed, 10)
		}
		if !m.noRunTime {
			run := max(m.now-m.started[i], 0)
			m.store[fmt.Sprintf("%d.%s", i, metricAccIdle)] = strconv.FormatInt(run*9/10, 10)
			m.store[fmt.Sprintf("%d.%s", i, metricAccBackPressured)] = "0"
			m.store[fmt.Sprintf("%d.%s", i, metricAccBusy)] = strconv.FormatInt(run-run*9/10, 10) + ".0"
		}
	}
}

// ids is the vertex metric id list, as GET …/metrics lists it.
func (m *sourceModel) ids() []string {
	ids := slices.Collect(maps.Keys(m.store))
	sort.Strings(ids)
	return ids
}

// poll reads what the Collector reads: the vertex details' attempts, the
// id list and the values.
func (m *sourceModel) poll() (int, map[int]subtaskPoll, *KafkaSourceObservation) {
	o := ParseKafkaSourceMetricIDs(m.ids())
	var ms []Metric
	for _, id := range o.OffsetIDs() {
		ms = append(ms, Metric{ID: id, Raw: m.store[id]})
	}
	o.ApplyValues(ms)
	subs := map[int]subtaskPoll{}
	for i, a := range m.attempts {
		run := int64(-1)
		for _, name := range []string{metricAccBusy, metricAccIdle, metricAccBackPressured} {
			if v, ok := m.store[fmt.Sprintf("%d.%s", i, name)]; ok {
				f, _ := strconv.ParseFloat(v, 64)
				run = max(run, 0) + int64(f)
			}
		}
		subs[i] = subtaskPoll{id: a, runMs: run}
	}
	return len(m.attempts), subs, o
}

// owners renders Owners as "p=owner" or "p=?[candidates]" per partition.
func owners(o *KafkaSourceObservation) string {
	var b []string
	for _, p := range o.Owners() {
		if p.Certain() {
			b = append(b, fmt.Sprintf("%d=%d", p.Partition, p.Owner))
		} else {
			b = append(b, fmt.Sprintf("%d=?%v", p.Partition, p.Candidates))
		}
	}
	return strings.Join(b, " ")
}

// expected renders the model's real owners in the form owners uses.
func (m *sourceModel) expected() string {
	var b []string
	for p := range m.partitions {
		for i, r := range m.readers {
			if _, ok := r[p]; ok {
				b = append(b, fmt.Sprintf("%d=%d", p, i))
			}
		}
	}
	return strings.Join(b, " ")
}

// highestOffsetOwners is the rule skewscope used before: the listing with
// the highest currentOffset wins. It shows that a scenario has entries that
// rule gets wrong.
func highestOffsetOwners(o *KafkaSourceObservation) map[int32]int {
	best := map[int32]KafkaPartitionState{}
	for _, s := range o.States {
		if b, ok := best[s.Partition]; !ok || s.CurrentOffset > b.CurrentOffset {
			best[s.Partition] = s
		}
	}
	out := map[int32]int{}
	for p, s := range best {
		out[p] = s.Subtask
	}
	return out
}

func (m *sourceModel) wrongByHighestOffset(o *KafkaSourceObservation) int {
	n := 0
	for p, st := range highestOffsetOwners(o) {
		if _, ok := m.readers[st][p]; !ok {
			n++
		}
	}
	return n
}

// step is one poll of a scenario: what happens in Flink before it, and what
// skewscope must conclude.
type step struct {
	name   string
	before func(m *sourceModel)
	// want is owners(); "" means the model's real owners, all certain.
	want string
	// awaiting is AwaitingRefresh, registering Registering.
	awaiting, registering []int
	check                 func(t *testing.T, m *sourceModel, o *KafkaSourceObservation)
}

func runSteps(t *testing.T, m *sourceModel, steps []step) {
	t.Helper()
	var tr kafkaTracker
	for _, s := range steps {
		if s.before != nil {
			s.before(m)
		}
		n, subs, o := m.poll()
		tr.observe(n, subs, o)
		want := s.want
		if want == "" {
			want = m.expected()
		}
		if got := owners(o); got != want {
			t.Errorf("%s: owners = %s\nwant %s\nstates %s", s.name, got, want, evidenceList(o))
		}
		if !slices.Equal(o.AwaitingRefresh, s.awaiting) || !slices.Equal(o.Registering, s.registering) {
			t.Errorf("%s: AwaitingRefresh = %v, Registering = %v; want %v, %v", s.name, o.AwaitingRefresh, o.Registering, s.awaiting, s.registering)
		}
		if o.Parallelism != n {
			t.Errorf("%s: Parallelism = %d, want %d", s.name, o.Parallelism, n)
		}
		if s.check != nil {
			s.check(t, m, o)
		}
	}
}

func evidenceList(o *KafkaSourceObservation) string {
	var b []string
	for _, s := range o.States {
		b = append(b, fmt.Sprintf("%d/p%d=%d,%d:%v", s.Subtask, s.Partition, s.CurrentOffset, s.CommittedOffset, s.Evidence))
	}
	return strings.Join(b, " ")
}

// running starts the job at parallelism n, lets every partition p reach
// offset base+p, completes a checkpoint and refreshes the JobManager.
func running(n int, base int64) func(*sourceModel) {
	return func(m *sourceModel) {
		m.start(n)
		for p := range m.partitions {
			m.consume(p, base+int64(p))
		}
		m.checkpoint()
		m.tick(60_000)
		m.fetch()
	}
}

func refreshed(m *sourceModel) { m.tick(10_000); m.fetch() }

func restartAt(n int) func(*sourceModel) { return func(m *sourceModel) { m.start(n) } }

func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

func evidenceOf(o *KafkaSourceObservation, subtask int, p int32) Evidence {
	for _, s := range o.States {
		if s.Subtask == subtask && s.Partition == p {
			return s.Evidence
		}
	}
	return 255
}

// TestRescaleInPlaceNoTraffic: the adaptive scheduler rescales 4→6 under
// the same job id and no record arrives afterwards. The first poll after
// the restart still gets the pre-restart dump: no owner is certain. Once
// the JobManager has refreshed, every owner is right and certain, where the
// highest currentOffset names the frozen old owner for 8 of 12 partitions.
func TestRescaleInPlaceNoTraffic(t *testing.T) {
	m := newSourceModel(t, "orders", 12)
	runSteps(t, m, []step{
		{name: "running at 4", before: running(4, 800)},
		{name: "steady", before: refreshed},
		{name: "rescaled, old dump", before: restartAt(6),
			want:     "0=?[0] 1=?[1] 2=?[2] 3=?[3] 4=?[0] 5=?[1] 6=?[2] 7=?[3] 8=?[0] 9=?[1] 10=?[2] 11=?[3]",
			awaiting: seq(0, 6), registering: seq(0, 6)},
		{name: "refreshed", before: refreshed, registering: seq(0, 6),
			check: func(t *testing.T, m *sourceModel, o *KafkaSourceObservation) {
				if n := m.wrongByHighestOffset(o); n != 8 {
					t.Errorf("highest currentOffset names %d wrong owners, want 8", n)
				}
				// 3 held p3 and p7 before; p7 went to subtask 1.
				for _, c := range []struct {
					subtask int
					p       int32
					want    Evidence
				}{{3, 7, EvidenceUnconfirmed}, {1, 7, EvidenceCurrent}, {3, 3, EvidenceCurrent}, {5, 11, EvidenceCurrent}} {
					if got := evidenceOf(o, c.subtask, c.p); got != c.want {
						t.Errorf("subtask %d partition %d: evidence %v, want %v", c.subtask, c.p, got, c.want)
					}
				}
			}},
		{name: "still idle", before: refreshed},
		{name: "checkpoint commits the same positions", before: func(m *sourceModel) { m.checkpoint(); refreshed(m) }},
	})
}

// TestRescaleInPlaceRefreshedBeforePoll: the JobManager already fetched the
// new attempts' dumps when the restart is first seen.
func TestRescaleInPlaceRefreshedBeforePoll(t *testing.T) {
	m := newSourceModel(t, "orders", 12)
	runSteps(t, m, []step{
		{name: "running at 4", before: running(4, 800)},
		{name: "steady", before: refreshed},
		{name: "rescaled and refreshed", before: func(m *sourceModel) { m.start(6); refreshed(m) }, registering: seq(0, 6)},
		{name: "still idle", before: refreshed},
	})
}

// TestFailoverSameParallelism: every subtask restarts at parallelism 3 and
// re-registers its own partitions at −1; the frozen values go back, which
// only a new attempt does.
func TestFailoverSameParallelism(t *testing.T) {
	m := newSourceModel(t, "orders", 6)
	runSteps(t, m, []step{
		{name: "running", before: running(3, 500)},
		{name: "steady", before: refreshed},
		{name: "failover, old dump", before: restartAt(3),
			want: "0=?[0] 1=?[1] 2=?[2] 3=?[0] 4=?[1] 5=?[2]", awaiting: seq(0, 3)},
		{name: "refreshed", before: refreshed,
			check: func(t *testing.T, m *sourceModel, o *KafkaSourceObservation) {
				for _, s := range o.States {
					if s.Evidence != EvidenceCurrent || s.CurrentOffset != -1 {
						t.Errorf("%+v: want current, re-registered at -1", s)
					}
				}
			}},
		// The first checkpoint commits the restored positions: the same
		// values as before the failover; the entries stay current.
		{name: "first checkpoint", before: func(m *sourceModel) { m.checkpoint(); refreshed(m) }},
	})
}

// TestFailoverIdlePartitions: partitions never read show −1 before and
// after, so the offsets cannot tell the new attempt from the old; the
// subtask's accumulated running time, which starts again from 0, can.
// Without those metrics the owners stay uncertain until a record arrives.
func TestFailoverIdlePartitions(t *testing.T) {
	idle := func(n int) func(*sourceModel) {
		return func(m *sourceModel) { m.start(n); m.tick(60_000); m.fetch() }
	}
	t.Run("running time", func(t *testing.T) {
		m := newSourceModel(t, "orders", 4)
		runSteps(t, m, []step{
			{name: "running", before: idle(2)},
			{name: "failover, old dump", before: restartAt(2), want: "0=?[0] 1=?[1] 2=?[0] 3=?[1]", awaiting: []int{0, 1}},
			{name: "refreshed", before: refreshed,
				check: func(t *testing.T, m *sourceModel, o *KafkaSourceObservation) {
					for _, s := range o.States {
						if s.Evidence != EvidenceUnconfirmed {
							t.Errorf("%+v: want unconfirmed", s)
						}
					}
				}},
		})
	})
	t.Run("no running time", func(t *testing.T) {
		m := newSourceModel(t, "orders", 4)
		m.noRunTime = true
		runSteps(t, m, []step{
			{name: "running", before: idle(2)},
			{name: "failover, old dump", before: restartAt(2), want: "0=?[0] 1=?[1] 2=?[0] 3=?[1]", awaiting: []int{0, 1}},
			{name: "refreshed", before: refreshed, want: "0=?[0] 1=?[1] 2=?[0] 3=?[1]", awaiting: []int{0, 1}},
			{name: "a record for partition 3", before: func(m *sourceModel) { m.consume(3, 0); refreshed(m) },
				want: "0=?[0] 1=1 2=?[0] 3=1", awaiting: []int{0}},
		})
	})
}

// TestRescaleDown: 6→3. Until the JobManager's next fetch the old dump
// still lists indexes 3–5 (stale, never owners); then retainSubtasks drops
// them and the three new attempts own everything.
func TestRescaleDown(t *testing.T) {
	m := newSourceModel(t, "orders", 8)
	runSteps(t, m, []step{
		{name: "running at 6", before: running(6, 300)},
		{name: "steady", before: refreshed},
		{name: "rescaled, old dump", before: restartAt(3),
			want: "0=?[0] 1=?[1] 2=?[2] 3=?[] 4=?[] 5=?[] 6=?[0] 7=?[1]", awaiting: []int{0, 1, 2}, registering: []int{0, 1, 2},
			check: func(t *testing.T, m *sourceModel, o *KafkaSourceObservation) {
				for _, s := range o.States {
					if (s.Subtask >= 3) != (s.Evidence == EvidenceStale) {
						t.Errorf("%+v: stale must be exactly the entries of subtasks ≥ 3", s)
					}
				}
				for _, p := range o.Owners() {
					if p.Partition == 4 && p.Reason != ReasonOutOfRange {
						t.Errorf("partition 4 reason %q, want %q", p.Reason, ReasonOutOfRange)
					}
				}
			}},
		{name: "refreshed", before: refreshed, registering: []int{0, 1, 2},
			check: func(t *testing.T, m *sourceModel, o *KafkaSourceObservation) {
				for _, s := range o.States {
					if s.Subtask >= 3 {
						t.Errorf("%+v listed after retainSubtasks", s)
					}
				}
			}},
	})
}

// TestLateStart: skewscope starts after an in-place rescale 4→6, with the
// frozen entries in the JobManager. It cannot tell them apart: partitions
// listed twice are undetermined, single listings certain. A record on a
// partition resolves it.
func TestLateStart(t *testing.T) {
	m := newSourceModel(t, "orders", 8)
	running(4, 800)(m)
	m.start(6)
	refreshed(m)
	// p%4 → p%6: p0..3 stay, p4→4 (was 0), p5→5 (was 1), p6→0 (was 2), p7→1 (was 3).
	runSteps(t, m, []step{
		{name: "first poll", want: "0=0 1=1 2=2 3=3 4=?[0 4] 5=?[1 5] 6=?[0 2] 7=?[1 3]"},
		{name: "still idle", before: refreshed, want: "0=0 1=1 2=2 3=3 4=?[0 4] 5=?[1 5] 6=?[0 2] 7=?[1 3]"},
		{name: "records on 4 and 7", before: func(m *sourceModel) { m.consume(4, 804); m.consume(7, 900); refreshed(m) },
			want: "0=0 1=1 2=2 3=3 4=4 5=?[1 5] 6=?[0 2] 7=1"},
	})
}

// TestLateDumpAtRestart: the poll that first sees the restart gets a dump
// the old attempt wrote after the previous poll (higher offsets). That is
// not the new attempt's evidence: the frozen entry stays unconfirmed.
func TestLateDumpAtRestart(t *testing.T) {
	m := newSourceModel(t, "orders", 4)
	runSteps(t, m, []step{
		{name: "running at 2", before: running(2, 100)},
		{name: "rescaled 2→3 after a last dump", before: func(m *sourceModel) {
			for p := range m.partitions {
				m.consume(p, 150+int64(p))
			}
			m.fetch() // the old attempts' last dump
			m.start(3)
		}, want: "0=?[0] 1=?[1] 2=?[0] 3=?[1]", awaiting: []int{0, 1, 2}, registering: []int{0, 1, 2}},
		// p2 moved from 0 to 2, p3 from 1 to 0.
		{name: "refreshed", before: refreshed, registering: []int{0, 1, 2},
			check: func(t *testing.T, m *sourceModel, o *KafkaSourceObservation) {
				if e := evidenceOf(o, 0, 2); e != EvidenceUnconfirmed {
					t.Errorf("frozen 0/p2: %v, want unconfirmed", e)
				}
			}},
	})
}

// TestScaleUpAfterScaleDownBeforeRefresh: 3→2→3 before the JobManager
// fetched: index 2 comes back while its old entries are still listed; they
// are the baseline of the new attempt, not its evidence.
func TestScaleUpAfterScaleDownBeforeRefresh(t *testing.T) {
	m := newSourceModel(t, "orders", 3)
	runSteps(t, m, []step{
		{name: "running at 3", before: running(3, 10)},
		{name: "down to 2, old dump", before: restartAt(2), want: "0=?[0] 1=?[1] 2=?[]", awaiting: []int{0, 1}, registering: []int{0, 1}},
		{name: "up to 3, old dump", before: restartAt(3), want: "0=?[0] 1=?[1] 2=?[2]", awaiting: []int{0, 1, 2}, registering: []int{0, 1, 2}},
		{name: "refreshed", before: refreshed, registering: []int{0, 1, 2}},
		{name: "steady", before: refreshed},
	})
}

// TestCollectorRescaleInPlace drives the Collector through an in-place
// rescale of the recorded 2.2.1 job's source from 3 to 5 subtasks (same job
// id), its Kafka entries served from the model: the restart shows in the
// subtasks' attempts, numRestarts and latest.restored; owners are
// undetermined while the JobManager serves the old dump, then all right and
// certain; the tracker goes when the job does.
func TestCollectorRescaleInPlace(t *testing.T) {
	f := newFakeFlink(t, "2.2.1")
	srv := f.start()
	var mu sync.Mutex // guards m, restarts, restored against the handlers
	m := newSourceModel(t, "orders", 5)
	m.op = "Source__Kafka_Source"
	restarts, restored := "0", any(nil)

	decode := func(name string) any {
		var v any
		if err := json.Unmarshal(f.recordedBody(name), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	write := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}
	isModelID := func(id string) bool {
		_, kafka := ParseKafkaOffsetID(id)
		return kafka || strings.Contains(id, ".accumulate")
	}
	f.setFault(f.jobPath(), func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		job := decode("job").(map[string]any)
		for _, v := range job["vertices"].([]any) {
			if v := v.(map[string]any); v["id"] == f.sourceID {
				v["parallelism"] = len(m.attempts)
			}
		}
		write(w, job)
	})
	f.setFault(f.jobPath("vertices", f.sourceID), func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		var subs []any
		for i, a := range m.attempts {
			subs = append(subs, map[string]any{"subtask": i, "status": "RUNNING", "attempt": a.attempt, "endpoint": "localhost:-1",
				"start-time": a.start, "start_time": a.start, "end-time": -1, "taskmanager-id": "3158c2d1-b88b-40de-9843-dc69233f6c80"})
		}
		write(w, map[string]any{"id": f.sourceID, "name": "Source: Kafka Source", "parallelism": len(m.attempts), "maxParallelism": 128,
			"now": m.now, "subtasks": subs})
	})
	f.setFault(f.jobPath("vertices", f.sourceID, "metrics"), func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		get := r.URL.Query().Get("get")
		if get == "" {
			var list []any
			for _, it := range decode("vertex-source-metrics-list").([]any) {
				if !isModelID(it.(map[string]any)["id"].(string)) {
					list = append(list, it)
				}
			}
			for _, id := range m.ids() {
				list = append(list, map[string]string{"id": id})
			}
			write(w, list)
			return
		}
		rec := httptest.NewRecorder()
		f.rs.ServeHTTP(rec, r)
		var out []map[string]string
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Errorf("recorded metric values: %v", err)
		}
		out = slices.DeleteFunc(out, func(it map[string]string) bool { return isModelID(it["id"]) })
		for _, id := range strings.Split(get, ",") {
			if v, ok := m.store[id]; ok {
				out = append(out, map[string]string{"id": id, "value": v})
			}
		}
		write(w, out)
	})
	f.setFault(f.jobPath("metrics"), func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Query().Get("get") != metricNumRestarts {
			t.Errorf("job metrics asked for %q, want %q", r.URL.Query().Get("get"), metricNumRestarts)
		}
		write(w, []map[string]string{{"id": metricNumRestarts, "value": restarts}})
	})
	f.setFault(f.jobPath("checkpoints"), func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		cps := decode("job-checkpoints").(map[string]any)
		cps["latest"].(map[string]any)["restored"] = restored
		write(w, cps)
	})

	c := newTestCollector(t, Config{URL: srv.URL})
	poll := func(name string, change func()) (JobSnapshot, VertexSnapshot) {
		t.Helper()
		mu.Lock()
		change()
		mu.Unlock()
		s := c.PollOnce(context.Background())
		if len(s.Jobs) != 1 {
			t.Fatalf("%s: %d jobs", name, len(s.Jobs))
		}
		j := s.Jobs[0]
		v := findVertex(t, j, f.sourceID)
		if v.Err != nil || v.Stale || v.Kafka == nil {
			t.Fatalf("%s: source vertex err %v, stale %v, kafka %v", name, v.Err, v.Stale, v.Kafka != nil)
		}
		return j, v
	}
	attempts := func(v VertexSnapshot) string {
		var b []string
		for _, s := range v.Subtasks {
			b = append(b, fmt.Sprintf("%d@%d", s.Attempt, s.StartTime.UnixMilli()))
		}
		return strings.Join(b, " ")
	}

	j, v := poll("running at 3", func() { running(3, 1900)(m) })
	before := attempts(v)
	if j.NumRestarts != 0 || j.Restored != nil {
		t.Errorf("running: NumRestarts %d, Restored %+v; want 0, nil", j.NumRestarts, j.Restored)
	}
	if got, want := owners(v.Kafka), m.expected(); got != want {
		t.Errorf("running: owners %s, want %s", got, want)
	}

	j, v = poll("rescaled, old dump", func() {
		m.start(5)
		restarts = "1"
		restored = map[string]any{"id": 11, "restore_timestamp": m.now, "is_savepoint": false, "external_path": "file:/tmp/<scrubbed>/chk-11"}
	})
	if j.NumRestarts != 1 || j.Restored == nil || j.Restored.CheckpointID != 11 || j.Restored.At.UnixMilli() != m.now {
		t.Errorf("rescaled: NumRestarts %d, Restored %+v; want 1, checkpoint 11 at %d", j.NumRestarts, j.Restored, m.now)
	}
	if got := attempts(v); v.Parallelism != 5 || got == before || !strings.HasPrefix(got, "1@") || !strings.Contains(got, " 0@") {
		t.Errorf("rescaled: parallelism %d, attempts %s (before %s)", v.Parallelism, got, before)
	}
	if owner, amb := v.Kafka.Assignment(); len(owner) != 0 || len(amb) != 5 || !slices.Equal(v.Kafka.AwaitingRefresh, seq(0, 5)) {
		t.Errorf("rescaled, old dump: owners %v, ambiguous %v, awaiting %v; want none certain", owner, amb, v.Kafka.AwaitingRefresh)
	}

	_, v = poll("refreshed", func() { refreshed(m) })
	if got, want := owners(v.Kafka), m.expected(); got != want || len(v.Kafka.AwaitingRefresh) != 0 {
		t.Errorf("refreshed: owners %s, awaiting %v; want %s", got, v.Kafka.AwaitingRefresh, want)
	}
	if n := m.wrongByHighestOffset(v.Kafka); n == 0 {
		t.Error("the highest currentOffset names every owner right: the scenario does not exercise the frozen entries")
	}

	// A failover a minute later, nothing read since the rescale: every
	// entry shows -1/-1 before and after. The attempts' running time shows
	// the refreshed dump, so the partitions listed once are certain; the two
	// that moved in the rescale are listed under their old subtask too, and
	// nothing tells the frozen entry from the idle re-registration.
	_, v = poll("a minute later", func() { m.tick(60_000); m.fetch() })
	_, v = poll("failover, old dump", func() { m.start(5); restarts = "2" })
	if owner, _ := v.Kafka.Assignment(); len(owner) != 0 {
		t.Errorf("failover, old dump: certain owners %v, want none", owner)
	}
	_, v = poll("failover, refreshed", func() { refreshed(m) })
	if got, want := owners(v.Kafka), "0=0 1=1 2=2 3=?[0 3] 4=?[1 4]"; got != want {
		t.Errorf("failover, refreshed: owners %s, want %s", got, want)
	}

	// The job goes away: its tracker with it, once the job lists have left
	// it out for longer than MaxUnlistedPolls.
	f.setFault("/jobs/overview", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"jobs":[]}`)) })
	for range MaxUnlistedPolls + 1 {
		c.PollOnce(context.Background())
	}
	c.stateMu.Lock()
	n := len(c.kafka)
	c.stateMu.Unlock()
	if n != 0 {
		t.Errorf("%d Kafka trackers after the job went away, want 0", n)
	}
}

// TestRescaleDownPartialRegistration: the JobManager's first dump after an
// in-place scale-down holds the new readers with only the splits they kept;
// the ones they took over show at the next fetch (as a recording of Flink
// 2.2.1 showed). Meanwhile a moved partition is listed once, under its old
// owner with its frozen value, or not at all (retainSubtasks dropped its
// old owner): no owner for it; the others are certain, and all are on the
// next poll.
func TestRescaleDownPartialRegistration(t *testing.T) {
	m := newSourceModel(t, "life12", 12)
	m.lateMoves = true
	// p%6 → p%3: p0..2 and p6..8 stay with 0..2; the rest move.
	runSteps(t, m, []step{
		{name: "running at 6", before: running(6, 1)},
		{name: "rescaled, refreshed in part", before: func(m *sourceModel) { m.start(3); m.tick(5_000); m.fetch() },
			want:        "0=0 1=1 2=2 6=0 7=1 8=2",
			registering: []int{0, 1, 2}},
		{name: "registered", before: refreshed},
	})
	// The case as recorded: moved partitions whose old owner is still in
	// range.
	m = newSourceModel(t, "life12", 12)
	m.lateMoves = true
	runSteps(t, m, []step{
		{name: "running at 6", before: running(6, 1)},
		{name: "rescaled to 4, refreshed in part", before: func(m *sourceModel) { m.start(4); m.tick(5_000); m.fetch() },
			// p6 (0→2), p7 (1→3), p8 (2→0), p9 (3→1) are listed once, under
			// their old owners, frozen; p4, p5, p10, p11 not at all.
			want:        "0=0 1=1 2=2 3=3 6=?[0] 7=?[1] 8=?[2] 9=?[3]",
			registering: []int{0, 1, 2, 3},
			check: func(t *testing.T, m *sourceModel, o *KafkaSourceObservation) {
				for _, p := range o.Owners() {
					if p.Partition == 6 && p.Reason != ReasonRegistering {
						t.Errorf("partition 6 reason %q, want %q", p.Reason, ReasonRegistering)
					}
				}
			}},
		{name: "registered", before: refreshed},
	})
}

// TestRescaleSeenInSteps: the parts of a rescale can show on different
// polls (the job's parallelism before the vertex's new attempts; an attempt
// first without a start-time, then deployed). The subtasks still count as
// rescaled: while the new readers register, a moved partition's frozen
// single listing names no owner.
func TestRescaleSeenInSteps(t *testing.T) {
	for _, tc := range []struct {
		name string
		// lag returns what the poll between the old and the new
		// attempts sees: parallelism and attempts.
		lag func(m *sourceModel, oldSubs map[int]subtaskPoll) (int, map[int]subtaskPoll)
	}{
		{"parallelism before attempts", func(m *sourceModel, oldSubs map[int]subtaskPoll) (int, map[int]subtaskPoll) {
			return len(m.attempts), oldSubs
		}},
		{"attempts before deployment", func(m *sourceModel, _ map[int]subtaskPoll) (int, map[int]subtaskPoll) {
			subs := map[int]subtaskPoll{}
			for i, a := range m.attempts {
				subs[i] = subtaskPoll{id: attemptID{a.attempt, -1}, runMs: runNotListed}
			}
			return len(m.attempts), subs
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newSourceModel(t, "life12", 12)
			m.lateMoves = true
			var tr kafkaTracker
			running(6, 1)(m)
			n, oldSubs, o := m.poll()
			tr.observe(n, oldSubs, o)
			m.start(4)
			lagN, lagSubs := tc.lag(m, oldSubs)
			_, _, o = m.poll()
			tr.observe(lagN, lagSubs, o)
			m.tick(5_000)
			m.fetch() // the readers with the splits they kept
			n, subs, o := m.poll()
			tr.observe(n, subs, o)
			if got, want := owners(o), "0=0 1=1 2=2 3=3 6=?[0] 7=?[1] 8=?[2] 9=?[3]"; got != want || !slices.Equal(o.Registering, seq(0, 4)) {
				t.Errorf("first refreshed poll: owners %s, Registering %v; want %s, [0 1 2 3]\nstates %s", got, o.Registering, want, evidenceList(o))
			}
			refreshed(m)
			n, subs, o = m.poll()
			tr.observe(n, subs, o)
			if got, want := owners(o), m.expected(); got != want || o.Registering != nil {
				t.Errorf("next poll: owners %s, Registering %v; want %s, none", got, o.Registering, want)
			}
		})
	}
}
