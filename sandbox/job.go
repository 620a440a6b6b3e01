package sandbox

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// jobSpec is one simulated Flink job: Kafka source → keyBy → keyed vertex.
type jobSpec struct {
	name   string
	topics []string
	p      int // initial parallelism of both vertices
	maxP   int
	// srcCap and keyedCap are what one subtask processes per second.
	srcCap, keyedCap float64
	keyedName        string  // operator name of the keyed vertex
	outPerIn         float64 // keyed records out per record in
	stateBytesPerRec int64   // keyed state growth per record, per key group up to stateCapRecs
	watermarks       watermarkStrategy
	// sql, when set, makes the job a Flink SQL job: its vertices are
	// named and described as the planner names them, and its keyed
	// exchange routes the key row of a column of the record value.
	sql *sqlJob
}

const (
	sourceName   = "Source: Kafka Source"
	stateCapRecs = 40000 // a key group's state stops growing after this many records
)

// sourceVertexName is the source vertex's name, srcOperator the name of
// the operator the Kafka source reader's metrics are scoped by.
func (s *jobSpec) sourceVertexName() string {
	if s.sql != nil {
		return s.sql.sourceVertex
	}
	return sourceName
}

func (s *jobSpec) srcOperator() string {
	if s.sql != nil {
		return s.sql.sourceOperator
	}
	return sourceName
}

// keyedVertexName is the keyed vertex's name, keyedOperator the name of
// its first (keyed) operator.
func (s *jobSpec) keyedVertexName() string {
	if s.sql != nil {
		return s.sql.keyedVertex
	}
	return s.keyedName
}

func (s *jobSpec) keyedOperator() string {
	if s.sql != nil {
		return s.sql.keyedOperator
	}
	return s.keyedName
}

// description is a plan node's description: a DataStream job's is its
// vertex name, a SQL job's the planner's operator tree.
func (s *jobSpec) description(keyed bool) string {
	switch {
	case s.sql != nil && keyed:
		return s.sql.keyedDescription
	case s.sql != nil:
		return s.sql.sourceDescription
	case keyed:
		return s.keyedName + "<br/>"
	}
	return sourceName + "<br/>"
}

var jobSpecs = []jobSpec{
	{
		name: "orders-enrichment", topics: []string{topicOrders, topicInventory},
		p: 4, maxP: 128, srcCap: 120, keyedCap: 140, keyedName: "Enrich Orders",
		outPerIn: 1, stateBytesPerRec: 24,
		// No idle timeout: when orders-7 goes silent (Options.SilentAfter)
		// the job's watermark stops there.
		watermarks: watermarkStrategy{bound: eventTimeBound},
	},
	{
		name: "clickstream-sessions", topics: []string{topicClicks, topicPageviews},
		p: 4, maxP: 128, srcCap: 120, keyedCap: 200, keyedName: "Sessionize",
		outPerIn: 0.2, stateBytesPerRec: 40,
		// The two readers without a partition go idle, so the watermark
		// advances.
		watermarks: watermarkStrategy{bound: eventTimeBound, idleTimeout: 5 * time.Second},
	},
	{
		name: paymentsJob, topics: []string{topicPayments},
		// The hottest keyed subtask (3 at p = 4) gets about a third of
		// the payments, close to its capacity; the others run at 55
		// to 75 %.
		p: 4, maxP: 128, srcCap: 120, keyedCap: 64,
		// The aggregate's updates go to the chained sink: nothing
		// leaves the keyed vertex.
		outPerIn: 0, stateBytesPerRec: 16,
		// WATERMARK FOR rowtime AS rowtime - INTERVAL '1' SECOND, no
		// idle timeout (table.exec.source.idle-timeout is 0 by default).
		watermarks: watermarkStrategy{bound: eventTimeBound},
		sql:        &paymentsSQL,
	},
}

// split is one Kafka partition split of a source.
type split struct {
	tp    assign.TopicPartition
	owner int
	// current is the offset of the last record emitted (−1 before the
	// first), committed the last offset committed on a checkpoint (−1
	// before the first commit), next the next offset to read (−1 while it
	// still starts from earliest).
	current, committed, next int64
	// hw is the high watermark seen in the last fetch (−1 before one).
	hw int64
	et splitEventTime
}

// srcTask is one source subtask: a kgo client reading its splits directly.
type srcTask struct {
	idx       int
	splits    []*split // in assignment order
	cl        *kgo.Client
	bucket    *bucket
	records   int64 // records read and emitted
	bytes     int64
	bpNanos   int64 // time blocked on a full keyed subtask
	commitsOK int64
	win       window
	et        sourceEventTime
}

// keyedTask is one subtask of the keyed vertex.
type keyedTask struct {
	bucket *bucket
	in     int64
	bytes  int64
	win    window
	// watermark is the subtask's input watermark (eventtime.go).
	watermark int64
}

// checkpoint is one completed (or failed) checkpoint or savepoint.
type checkpoint struct {
	id          int64
	savepoint   bool
	failed      bool
	failure     string
	trigger     int64
	ack         int64
	srcState    []int64 // per source subtask
	keyedState  []int64 // per keyed subtask
	srcAckDelay []int64 // ms after trigger
	keyAckDelay []int64
	path        string
}

func (c *checkpoint) size() int64 {
	var n int64
	for _, v := range c.srcState {
		n += v
	}
	for _, v := range c.keyedState {
		n += v
	}
	return n
}

// restoreInfo is what a restored job reports in latest.restored.
type restoreInfo struct {
	id   int64
	at   int64
	path string
}

// savepoint is what stop-with-savepoint hands to the restored job.
type savepoint struct {
	cp        *checkpoint
	lists     [][]savedSplit // per old subtask, in snapshot order
	kgRecords []int64
	topics    []assign.Topic // partition counts at the savepoint
}

type savedSplit struct {
	tp   assign.TopicPartition
	next int64 // −1: nothing read yet, start from earliest
}

// job is one simulated job (one job id).
type job struct {
	s    *Sandbox
	spec jobSpec
	id   string
	// Vertex ids and the slot sharing group are stable across restores,
	// like Flink's hashes of the stream graph.
	srcVID, keyedVID, ssgID string
	p                       int
	history                 []int
	baseTopics              []assign.Topic // partition counts the job started from
	restored                *restoreInfo
	created                 int64 // ms

	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	haltOnce sync.Once

	mu        sync.Mutex
	state     string
	end       int64
	src       []*srcTask
	keyed     []*keyedTask
	splits    map[assign.TopicPartition]*split
	kgRecords []int64
	cps       []*checkpoint // newest last, at most cpHistory
	cpTotal   int
	cpFailed  int
	nextCP    int64
	latestSP  *checkpoint
	// store is the JobManager's metric store of the job (fetcher.go),
	// nil before the first metric request; sampled when the last
	// sample ran.
	store   *metricStore
	sampled time.Time
}

const cpHistory = 10

func (s *Sandbox) newJob(spec jobSpec, p int) *job {
	now := time.Now()
	j := &job{
		s: s, spec: spec, id: s.hex(16), p: p,
		created: now.UnixMilli(), state: "RUNNING",
		splits: map[assign.TopicPartition]*split{}, kgRecords: make([]int64, spec.maxP),
		nextCP: 1, sampled: now,
	}
	j.ctx, j.cancel = context.WithCancel(s.ctx)
	for i := range p {
		j.src = append(j.src, &srcTask{idx: i, bucket: newBucket(spec.srcCap, spec.srcCap*0.2), et: newSourceEventTime(now)})
		j.keyed = append(j.keyed, &keyedTask{bucket: newBucket(spec.keyedCap, spec.keyedCap*0.2), watermark: watermarkNone})
	}
	return j
}

// newFreshJob starts a job without state: partitions from a first discovery,
// owners from assign.KafkaSplitOwner, offsets from earliest.
func (s *Sandbox) newFreshJob(spec jobSpec) (*job, error) {
	j := s.newJob(spec, spec.p)
	j.srcVID, j.keyedVID, j.ssgID = s.hex(16), s.hex(16), s.hex(16)
	j.history = []int{spec.p}
	topics, err := j.listTopics()
	if err != nil {
		return nil, err
	}
	j.baseTopics = topics
	j.mu.Lock()
	err = j.addPartitions(topics)
	j.mu.Unlock()
	if err != nil {
		j.halt()
		return nil, err
	}
	j.run()
	return j, nil
}

// newRestoredJob starts a new job id from old's savepoint at parallelism p.
func (s *Sandbox) newRestoredJob(old *job, sp *savepoint, p int) (*job, error) {
	j := s.newJob(old.spec, p)
	j.srcVID, j.keyedVID, j.ssgID = old.srcVID, old.keyedVID, old.ssgID
	j.history = append(slices.Clone(old.history), p)
	j.baseTopics = sp.topics
	j.restored = &restoreInfo{id: sp.cp.id, at: j.created, path: sp.cp.path}
	j.nextCP = sp.cp.id + 1
	copy(j.kgRecords, sp.kgRecords)

	// RoundRobinOperatorStateRepartitioner.repartitionSplitState: the old
	// lists concatenated in old-subtask order, cut into contiguous chunks.
	var all []savedSplit
	for _, l := range sp.lists {
		all = append(all, l...)
	}
	b, r := len(all)/p, len(all)%p
	parts := make([]map[string]map[int32]kgo.Offset, p)
	now := time.Now()
	j.mu.Lock()
	for sub := range p {
		start := sub*b + min(sub, r)
		n := b
		if sub < r {
			n++
		}
		for _, ss := range all[start : start+n] {
			sp := &split{tp: ss.tp, owner: sub, current: -1, committed: -1, next: ss.next, hw: -1, et: newSplitEventTime(now)}
			j.splits[ss.tp] = sp
			j.src[sub].splits = append(j.src[sub].splits, sp)
			off := kgo.NewOffset().AtStart()
			if ss.next >= 0 {
				off = kgo.NewOffset().At(ss.next)
			}
			parts[sub] = consumeAt(parts[sub], ss.tp, off)
		}
	}
	var err error
	for sub, m := range parts {
		if m != nil {
			if err = j.startSource(j.src[sub], m); err != nil {
				break
			}
		}
	}
	j.mu.Unlock()
	if err != nil {
		j.halt()
		return nil, err
	}
	j.run()
	return j, nil
}

// run starts the job's background loops.
func (j *job) run() {
	j.wg.Add(3)
	go j.every(time.Second, j.sample)
	go j.every(j.s.opts.checkpointEvery, func() { j.checkpoint(j.ctx, false) })
	go j.every(j.s.opts.discoverEvery, j.discover)
}

func (j *job) every(d time.Duration, f func()) {
	defer j.wg.Done()
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-j.ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

func (j *job) listTopics() ([]assign.Topic, error) {
	ctx, cancel := context.WithTimeout(j.s.ctx, 5*time.Second)
	defer cancel()
	td, err := j.s.adm.ListTopics(ctx, j.spec.topics...)
	if err != nil {
		return nil, fmt.Errorf("sandbox: list topics: %w", err)
	}
	var out []assign.Topic
	for _, name := range j.spec.topics {
		d, ok := td[name]
		if !ok || d.Err != nil {
			return nil, fmt.Errorf("sandbox: topic %s: %v", name, d.Err)
		}
		out = append(out, assign.Topic{Name: name, Partitions: len(d.Partitions)})
	}
	return out, nil
}

// discover is Flink's periodic partition discovery: partitions not yet
// assigned go to assign.KafkaSplitOwner at the current parallelism and start
// from earliest (FLIP-288).
func (j *job) discover() {
	topics, err := j.listTopics()
	if err != nil {
		j.s.log.Debug("sandbox: discovery failed", "job_id", j.id, "error", err)
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.state != "RUNNING" || j.ctx.Err() != nil {
		return
	}
	if err := j.addPartitions(topics); err != nil {
		j.s.log.Warn("sandbox: discovery failed", "job_id", j.id, "error", err)
	}
}

// addPartitions assigns every partition of topics not assigned yet. j.mu
// must be held.
func (j *job) addPartitions(topics []assign.Topic) error {
	add := map[int]map[string]map[int32]kgo.Offset{}
	now := time.Now()
	for _, tp := range assign.Partitions(topics) {
		if _, ok := j.splits[tp]; ok {
			continue
		}
		owner, err := assign.KafkaSplitOwner(tp, j.p)
		if err != nil {
			return err
		}
		sp := &split{tp: tp, owner: owner, current: -1, committed: -1, next: -1, hw: -1, et: newSplitEventTime(now)}
		j.splits[tp] = sp
		j.src[owner].splits = append(j.src[owner].splits, sp)
		add[owner] = consumeAt(add[owner], tp, kgo.NewOffset().AtStart())
		if now.UnixMilli()-j.created > 1000 {
			j.s.log.Info("sandbox: partition discovered", "job_id", j.id, "topic", tp.Topic, "partition", tp.Partition, "subtask", owner)
		}
	}
	for owner, m := range add {
		st := j.src[owner]
		if st.cl != nil {
			st.cl.AddConsumePartitions(m)
			continue
		}
		if err := j.startSource(st, m); err != nil {
			return err
		}
	}
	return nil
}

// consumeAt adds tp, to be read from off, to a kgo.ConsumePartitions map
// (nil starts a new one) and returns the map.
func consumeAt(m map[string]map[int32]kgo.Offset, tp assign.TopicPartition, off kgo.Offset) map[string]map[int32]kgo.Offset {
	if m == nil {
		m = map[string]map[int32]kgo.Offset{}
	}
	if m[tp.Topic] == nil {
		m[tp.Topic] = map[int32]kgo.Offset{}
	}
	m[tp.Topic][tp.Partition] = off
	return m
}

// startSource creates the subtask's client and its read loop. j.mu must be
// held.
func (j *job) startSource(st *srcTask, parts map[string]map[int32]kgo.Offset) error {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(j.s.brokers...),
		kgo.ClientID(fmt.Sprintf("%s-%d", j.spec.name, st.idx)),
		kgo.ConsumePartitions(parts),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		// A subtask reads at most a few hundred records a second; small
		// fetches keep what a lagging subtask's client buffers (raw,
		// decompressed and decoded per broker) to a few MiB. A poll
		// drains one partition's fetched records before the next's, so
		// the partition limit is also how long a reader behind on two
		// partitions reads only one: 16 KiB is about 100 records, under
		// a second at a subtask's capacity, well within an idle timeout
		// (a split without records for that long would go idle).
		kgo.FetchMaxBytes(256<<10),
		kgo.FetchMaxPartitionBytes(16<<10),
		kgo.FetchMaxWait(500*time.Millisecond),
		// Without a fetch session a client's Close reads no session state
		// that its last fetch may still be writing (franz-go v1.22.3
		// races there when a job stops mid-fetch); a subtask's fetches
		// are small either way.
		kgo.DisableFetchSessions(),
	)
	if err != nil {
		return fmt.Errorf("sandbox: source client: %w", err)
	}
	st.cl = cl
	j.wg.Add(1)
	go j.read(st, cl)
	return nil
}

// read is one source subtask: poll at most what the capacity allows, route
// each record's key to its keyed subtask, wait when that subtask is full
// (backpressure).
func (j *job) read(st *srcTask, cl *kgo.Client) {
	defer j.wg.Done()
	// A SQL job's key rows, written by this subtask's own encoder.
	var keyRow *assign.KeyRowEncoder
	if j.spec.sql != nil {
		keyRow = j.spec.sql.newKeyRowEncoder()
	}
	for {
		n, wait := st.bucket.take(200)
		if n == 0 {
			if !sleepCtx(j.ctx, wait) {
				return
			}
			continue
		}
		fs := cl.PollRecords(j.ctx, n)
		if j.ctx.Err() != nil {
			return
		}
		fs.EachError(func(t string, p int32, err error) {
			j.s.log.Debug("sandbox: fetch error", "job_id", j.id, "topic", t, "partition", p, "error", err)
		})
		j.mu.Lock()
		fs.EachPartition(func(p kgo.FetchTopicPartition) {
			if sp := j.splits[assign.TopicPartition{Topic: p.Topic, Partition: p.Partition}]; sp != nil && sp.owner == st.idx && p.Err == nil {
				sp.hw = p.HighWatermark
			}
		})
		j.mu.Unlock()
		recs := fs.Records()
		st.bucket.refund(n - len(recs))
		for _, r := range recs {
			kg := j.keyGroup(r, keyRow)
			k := assign.OperatorIndex(j.spec.maxP, len(j.keyed), kg)
			if d := j.keyed[k].bucket.reserve(); d > 0 {
				t0 := time.Now()
				if !sleepCtx(j.ctx, d) {
					return
				}
				j.mu.Lock()
				st.bpNanos += int64(time.Since(t0))
				j.mu.Unlock()
			}
			size := int64(len(r.Key) + len(r.Value))
			now := time.Now()
			j.mu.Lock()
			if sp := j.splits[assign.TopicPartition{Topic: r.Topic, Partition: r.Partition}]; sp != nil && sp.owner == st.idx {
				sp.current, sp.next = r.Offset, r.Offset+1
				recordRead(st, sp, r.Timestamp.UnixMilli(), now)
			}
			st.records++
			st.bytes += size
			j.keyed[k].in++
			j.keyed[k].bytes += size
			j.kgRecords[kg]++
			j.mu.Unlock()
			j.s.consumed.Add(1)
		}
	}
}

// keyGroup is the key group a record is routed to: that of its Kafka key
// as a Java String (the DataStream jobs key by it), or, for a SQL job, that
// of the key row of its value's key column, written by keyRow.
func (j *job) keyGroup(r *kgo.Record, keyRow *assign.KeyRowEncoder) int {
	if keyRow == nil {
		return assign.KeyGroupForHash(assign.StringHashCode(string(r.Key)), j.spec.maxP)
	}
	kg, err := j.spec.sql.keyGroup(keyRow, r.Value, j.spec.maxP)
	if err != nil {
		j.s.log.Debug("sandbox: key row", "job_id", j.id, "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "error", err)
	}
	return kg
}

// sample records the counters for rate metrics and emits the job's
// watermarks.
func (j *job) sample() {
	now := time.Now()
	j.mu.Lock()
	defer j.mu.Unlock()
	j.emitWatermarks(now, now.Sub(j.sampled))
	j.sampled = now
	for _, st := range j.src {
		st.win.add(now, st.records, st.records, st.bytes, st.bpNanos)
		busy, bp, idle := j.srcLoad(st)
		st.win.accumulate(busy, bp, idle, 1)
	}
	for _, kt := range j.keyed {
		kt.win.add(now, kt.in, int64(float64(kt.in)*j.spec.outPerIn), kt.bytes, 0)
		busy, bp, idle := j.keyedLoad(kt)
		kt.win.accumulate(busy, bp, idle, 1)
	}
}

// keyedStateBytes is the checkpointed state of keyed subtask i.
func (j *job) keyedStateBytes(i int) int64 {
	r, _ := assign.KeyGroupRangeFor(j.spec.maxP, len(j.keyed), i)
	var n int64 = 1024
	for kg := r.Start; kg <= r.End; kg++ {
		if c := j.kgRecords[kg]; c > 0 {
			n += 96 + min(c, stateCapRecs)*j.spec.stateBytesPerRec
		}
	}
	return n
}

// checkpoint takes a checkpoint (or savepoint) and, when it completes,
// commits the source offsets to the job's group like KafkaSource does in
// notifyCheckpointComplete.
func (j *job) checkpoint(ctx context.Context, savepoint bool) *checkpoint {
	j.mu.Lock()
	cp := &checkpoint{id: j.nextCP, savepoint: savepoint, trigger: time.Now().UnixMilli()}
	j.nextCP++
	j.cpTotal++
	offs := kadm.Offsets{}
	for _, st := range j.src {
		// A split's state: topic, partition, starting offset, stopping offset.
		size := int64(150)
		for _, sp := range st.splits {
			size += int64(len(sp.tp.Topic)) + 26
			if sp.next >= 0 {
				offs.AddOffset(sp.tp.Topic, sp.tp.Partition, sp.next, -1)
			}
		}
		cp.srcState = append(cp.srcState, size)
		cp.srcAckDelay = append(cp.srcAckDelay, int64(3+st.idx))
	}
	for i := range j.keyed {
		cp.keyedState = append(cp.keyedState, j.keyedStateBytes(i))
		cp.keyAckDelay = append(cp.keyAckDelay, int64(8+2*i))
	}
	group := j.groupID()
	j.mu.Unlock()
	path := "<checkpoint-not-externally-addressable>"
	if savepoint {
		path = fmt.Sprintf("file:/tmp/skewscope-sandbox/savepoints/savepoint-%s-%s", j.id[:6], j.s.hex(6))
	}

	var err error
	if len(offs) > 0 {
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		var resp kadm.OffsetResponses
		resp, err = j.s.adm.CommitOffsets(cctx, group, offs)
		if err == nil {
			err = resp.Error()
		}
		cancel()
	}

	j.mu.Lock()
	defer j.mu.Unlock()
	cp.ack = time.Now().UnixMilli()
	if cp.ack < cp.trigger+12 {
		cp.ack = cp.trigger + 12
	}
	cp.path = path
	if err != nil {
		cp.failed = true
		cp.failure = "Failed to commit offsets: " + err.Error()
		j.cpFailed++
		j.s.log.Debug("sandbox: checkpoint failed", "job_id", j.id, "error", err)
	} else {
		committed := map[int]bool{}
		offs.Each(func(o kadm.Offset) {
			if sp := j.splits[assign.TopicPartition{Topic: o.Topic, Partition: o.Partition}]; sp != nil {
				sp.committed = o.At
				committed[sp.owner] = true
			}
		})
		for i := range committed {
			j.src[i].commitsOK++
		}
	}
	j.cps = append(j.cps, cp)
	if len(j.cps) > cpHistory {
		j.cps = slices.Delete(j.cps, 0, len(j.cps)-cpHistory)
	}
	if savepoint && !cp.failed {
		j.latestSP = cp
	}
	return cp
}

func (j *job) groupID() string { return j.spec.name }

// halt stops the job's goroutines and closes its clients.
func (j *job) halt() {
	j.haltOnce.Do(func() {
		j.cancel()
		j.wg.Wait()
		j.mu.Lock()
		var cls []*kgo.Client
		for _, st := range j.src {
			if st.cl != nil {
				cls = append(cls, st.cl)
			}
		}
		j.mu.Unlock()
		for _, cl := range cls {
			cl.Close()
		}
	})
}

// stop is Close's path: the job ends CANCELED if it was still running.
func (j *job) stop() {
	j.halt()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.state == "RUNNING" {
		j.state = "CANCELED"
		j.end = time.Now().UnixMilli()
	}
}

// restoreInput is what the job's split model needs, with topics its
// topics' partition counts now. Called with j.mu held or before the job
// stops (history and baseTopics do not change).
func (j *job) restoreInput(topics []assign.Topic) assign.RestoreInput {
	in := assign.RestoreInput{Topics: j.baseTopics, History: j.history}
	for i, t := range topics {
		if i < len(j.baseTopics) && t.Partitions > j.baseTopics[i].Partitions {
			in.NewTopics = append(in.NewTopics, t)
		}
	}
	return in
}

// checkRestorable refuses, before anything stops, the restore that
// stopWithSavepoint would fail on after stopping the job: the split model
// of a job whose history (the parallelisms it started and was restored
// at) is longer than assign.MaxRestoreHistory, or any other input the
// model refuses (it is computed once here, on the topics as they are now).
func (j *job) checkRestorable() error {
	if n := len(j.history); n > assign.MaxRestoreHistory {
		return fmt.Errorf("sandbox: job %s has been restored %d times; its parallelism history of %d entries is longer than the %d the restore model follows, so it is not restored again", j.id, n-1, n, assign.MaxRestoreHistory)
	}
	topics, err := j.listTopics()
	if err != nil {
		return err
	}
	if _, err := assign.Restore(j.restoreInput(topics)); err != nil {
		return fmt.Errorf("sandbox: job %s cannot be restored: restore model: %w", j.id, err)
	}
	return nil
}

// stopWithSavepoint stops the sources, takes a savepoint of their splits
// (committing its offsets) and finishes the job.
func (j *job) stopWithSavepoint() (*savepoint, error) {
	j.mu.Lock()
	if j.state != "RUNNING" {
		j.mu.Unlock()
		return nil, fmt.Errorf("sandbox: job %s is %s", j.id, j.state)
	}
	j.mu.Unlock()
	j.halt()
	ctx, cancel := context.WithTimeout(j.s.ctx, 5*time.Second)
	cp := j.checkpoint(ctx, true)
	cancel()
	if cp.failed {
		return nil, fmt.Errorf("sandbox: savepoint of %s failed: %s", j.id, cp.failure)
	}
	topics, err := j.listTopics()
	if err != nil {
		return nil, err
	}

	j.mu.Lock()
	defer j.mu.Unlock()
	j.state = "FINISHED"
	j.end = time.Now().UnixMilli()

	// Each reader writes its splits in SourceReaderBase.snapshotState's
	// HashMap order; assign.Restore models that order as Snapshot.
	model, err := assign.Restore(j.restoreInput(topics))
	if err != nil {
		return nil, fmt.Errorf("sandbox: restore model: %w", err)
	}
	sp := &savepoint{cp: cp, kgRecords: slices.Clone(j.kgRecords)}
	for _, st := range j.src {
		have := map[assign.TopicPartition]*split{}
		for _, s := range st.splits {
			have[s.tp] = s
		}
		var list []savedSplit
		if st.idx < len(model.Snapshot) {
			for _, tp := range model.Snapshot[st.idx] {
				if s, ok := have[tp]; ok {
					list = append(list, savedSplit{tp: tp, next: s.next})
					delete(have, tp)
				}
			}
		}
		for _, s := range st.splits { // any the model did not list, in assignment order
			if _, ok := have[s.tp]; ok {
				list = append(list, savedSplit{tp: s.tp, next: s.next})
			}
		}
		sp.lists = append(sp.lists, list)
	}
	// The restored job starts from every partition the savepoint holds.
	for _, t := range topics {
		n := 0
		for tp := range j.splits {
			if tp.Topic == t.Name {
				n = max(n, int(tp.Partition)+1)
			}
		}
		sp.topics = append(sp.topics, assign.Topic{Name: t.Name, Partitions: n})
	}
	return sp, nil
}

func (j *job) isRunning() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.state == "RUNNING"
}

func (j *job) info() JobInfo {
	j.mu.Lock()
	defer j.mu.Unlock()
	return JobInfo{
		Name: j.spec.name, ID: j.id, State: j.state,
		SourceVertexID: j.srcVID, KeyedVertexID: j.keyedVID,
		Parallelism: j.p, KeyedParallelism: len(j.keyed), MaxParallelism: j.spec.maxP,
		ParallelismHistory: slices.Clone(j.history),
		GroupID:            j.groupID(), Topics: slices.Clone(j.spec.topics),
	}
}

// sleepCtx sleeps d or until ctx is done; it reports whether ctx is alive.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// bucket is a token bucket: rate tokens per second, at most burst saved.
type bucket struct {
	mu     sync.Mutex
	rate   float64
	burst  float64
	tokens float64
	last   time.Time
}

func newBucket(rate, burst float64) *bucket {
	return &bucket{rate: rate, burst: max(burst, 1), tokens: max(burst, 1), last: time.Now()}
}

func (b *bucket) refill() {
	now := time.Now()
	b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	b.last = now
}

// take removes up to limit whole tokens; with none available it returns 0
// and how long until one is.
func (b *bucket) take(limit int) (int, time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	if b.tokens < 1 {
		return 0, time.Duration((1 - b.tokens) / b.rate * float64(time.Second))
	}
	n := min(int(b.tokens), limit)
	b.tokens -= float64(n)
	return n, 0
}

func (b *bucket) refund(n int) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.tokens = min(b.burst, b.tokens+float64(n))
}

// reserve takes one token, going into debt if needed, and returns how long
// the caller must wait for it.
func (b *bucket) reserve() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill()
	b.tokens--
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.rate * float64(time.Second))
}

// window keeps the last samples of a subtask's counters for rates.
type window struct {
	s []sampleAt
	// accBusy, accIdle and accBP accumulate busy, idle and backpressured
	// time in ms (accumulateBusyTimeMs and friends).
	accBusy, accIdle, accBP int64
}

func (w *window) accumulate(busy, bp, idle, seconds float64) {
	w.accBusy += int64(busy * seconds)
	w.accBP += int64(bp * seconds)
	w.accIdle += int64(idle * seconds)
}

type sampleAt struct {
	t                      time.Time
	in, out, bytes, bpNano int64
}

const windowSamples = 16

func (w *window) add(t time.Time, in, out, bytes, bp int64) {
	w.s = append(w.s, sampleAt{t, in, out, bytes, bp})
	if len(w.s) > windowSamples {
		w.s = slices.Delete(w.s, 0, len(w.s)-windowSamples)
	}
}

// rates returns per-second rates over the window and the fraction of time
// blocked; zeros until two samples exist.
func (w *window) rates() (in, out, bytes, bpFrac float64) {
	if len(w.s) < 2 {
		return 0, 0, 0, 0
	}
	a, b := w.s[0], w.s[len(w.s)-1]
	dt := b.t.Sub(a.t).Seconds()
	if dt <= 0 {
		return 0, 0, 0, 0
	}
	return float64(b.in-a.in) / dt, float64(b.out-a.out) / dt, float64(b.bytes-a.bytes) / dt,
		min(1, float64(b.bpNano-a.bpNano)/1e9/dt)
}
