package fakejm

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/skewscope/skewscope/assign"
)

// startMs is when every fake job started (epoch ms): a fixed instant, so
// answers do not depend on when the fake runs.
const startMs int64 = 1_796_000_000_000

// slotsPerTM is the number of slots of each fake TaskManager.
const slotsPerTM = 16

// role is a vertex's place in the job.
type role uint8

const (
	roleSource role = iota
	roleKeyed
	roleSink
	numRoles
)

// operator is one operator of a vertex's chain.
type operator struct {
	name    string   // as the job names it
	metrics []string // its metric names (operator scope)
}

// vertexKind is what every job's vertex of one role shares: names, metric
// ids and the answers that contain no job or vertex id.
type vertexKind struct {
	role      role
	name      string // vertex name: the operator names joined by " -> "
	operators []operator
	task      []string // task-scope metric names

	// fixed are the subtask-relative ids ("<name>", "<operator>.<name>")
	// every subtask lists; names resolves them and, for a source, every
	// partition's ids (listed only by the partition's owner).
	fixed []string
	names map[string]metricInfo

	allIDs       []string   // the vertex store's ids, in its order
	idList       []byte     // …and encoded
	subIDs       [][]string // per-subtask ids
	subtaskLists [][]byte   // …and encoded
	backpressure *Backpressure
	load         []subtaskLoad
}

// subtaskLoad is one subtask's steady load.
type subtaskLoad struct {
	busy, backPressured, idle int64   // ms per second, adding up to 1000
	in, out                   float64 // records per second
	state                     int64   // checkpointed state, bytes
}

// partition is one partition a source reads.
type partition struct {
	topic string // as in Kafka
	num   int32
	owner int     // the source subtask reading it
	rate  float64 // records per second
	base  int64   // offset before the first value request
	lagMs int64   // how far behind a job's clock its last record read is (eventtime.go)
}

type layout struct {
	cfg        Config
	partitions []partition
	owned      [][]int32 // partition indexes per source subtask
	kinds      [numRoles]*vertexKind
	tms        int
	// subtaskLagMs is each source subtask's largest partition lag, −1
	// without a partition; jobLagMs the largest of them, −1 when a
	// subtask has none (eventtime.go).
	subtaskLagMs []int64
	jobLagMs     int64

	jobMetricList []byte
}

func newLayout(cfg Config) (*layout, error) {
	p := cfg.Parallelism
	l := &layout{cfg: cfg, owned: make([][]int32, p)}
	l.tms = (cfg.Jobs*p + slotsPerTM - 1) / slotsPerTM
	for ti, t := range cfg.Topics {
		for n := range t.Partitions {
			tp := assign.TopicPartition{Topic: t.Name, Partition: int32(n)}
			owner, err := assign.KafkaSplitOwner(tp, p)
			if err != nil {
				return nil, fmt.Errorf("fakejm: %w", err)
			}
			k := int32(len(l.partitions))
			l.partitions = append(l.partitions, partition{
				topic: t.Name, num: int32(n), owner: owner,
				// Uneven but steady: 5 to 64 records/s per partition.
				rate:  float64(5 + (n*37+ti*11)%60),
				base:  int64(1000 + 17*n),
				lagMs: partitionLagMs(n, ti),
			})
			l.owned[owner] = append(l.owned[owner], k)
		}
	}
	l.eventTimeLags()
	l.kinds[roleSource] = l.newKind(roleSource, []operator{
		{"Source: Kafka Source", kafkaSourceMetrics},
		{"Source Tagger", operatorMetrics},
	}, taskMetrics)
	withInputs := slices.Concat(taskMetrics, inputTaskMetrics)
	l.kinds[roleKeyed] = l.newKind(roleKeyed, []operator{
		{"Key Router", operatorMetrics},
	}, withInputs)
	l.kinds[roleSink] = l.newKind(roleSink, []operator{
		{"Route Sink: Writer", slices.Concat(operatorMetrics, kafkaWriterMetrics)},
		{"Route Sink: Committer", slices.Concat(operatorMetrics, committerMetrics)},
	}, withInputs)

	var list []string
	for _, m := range jobMetrics {
		list = append(list, m.name)
	}
	l.jobMetricList = idListBody(list)
	return l, nil
}

// newKind builds one role's names, id lists, load and backpressure answer.
func (l *layout) newKind(r role, ops []operator, task []string) *vertexKind {
	p := l.cfg.Parallelism
	k := &vertexKind{role: r, operators: ops, task: task, names: map[string]metricInfo{}}
	var names []string
	for _, op := range ops {
		names = append(names, op.name)
	}
	k.name = strings.Join(names, " -> ")
	// add lists name (id relative to the subtask) with the value of
	// metric; event-time gauges only with Config.EventTime.
	add := func(task bool, prefix, name string) {
		m := classify(task, name)
		if et, ok := eventTimeClass(r, name); ok {
			if !l.cfg.EventTime {
				return
			}
			m = et
		}
		k.fixed = append(k.fixed, prefix+name)
		k.names[prefix+name] = metricInfo{m: m, part: -1}
	}
	for _, n := range task {
		add(true, "", n)
	}
	for _, op := range ops {
		for _, n := range op.metrics {
			add(false, OperatorScope(op.name)+".", n)
		}
	}
	if r == roleSource {
		prefix := OperatorScope(ops[0].name) + "."
		for i := range l.partitions {
			for _, id := range l.partitionMetricIDs(l.partitions[i]) {
				k.names[prefix+id.name] = metricInfo{m: id.m, part: int32(i)}
			}
		}
		if l.cfg.EventTime {
			// Listed by the readers that have emitted a watermark: those
			// with a partition (subtaskIDs).
			k.names[prefix+"watermarkLag"] = metricInfo{m: mWatermarkLag, part: -1}
		}
	}

	// Per-subtask lists, and the vertex list in an order of its own: Flink
	// lists a HashMap's keys.
	var all []string
	k.subtaskLists = make([][]byte, p)
	k.subIDs = make([][]string, p)
	for i := range p {
		ids := k.subtaskIDs(l, i)
		k.subIDs[i] = ids
		k.subtaskLists[i] = idListBody(ids)
		pre := strconv.Itoa(i) + "."
		for _, id := range ids {
			all = append(all, pre+id)
		}
	}
	rng := rand.New(rand.NewPCG(uint64(r)+1, uint64(p)))
	rng.Shuffle(len(all), func(a, b int) { all[a], all[b] = all[b], all[a] })
	k.allIDs, k.idList = all, idListBody(all)

	k.load = make([]subtaskLoad, p)
	var total float64
	for _, pt := range l.partitions {
		total += pt.rate
	}
	for i := range p {
		h := mix(uint64(r)<<32 | uint64(i))
		ld := subtaskLoad{busy: 80 + int64(h%600)}
		if (h>>20)%4 == 0 {
			ld.backPressured = 50 + int64((h>>24)%250)
		}
		ld.idle = 1000 - ld.busy - ld.backPressured
		switch r {
		case roleSource:
			for _, pi := range l.owned[i] {
				ld.in += l.partitions[pi].rate
			}
			ld.out = ld.in
			ld.state = 300 + 60*int64(len(l.owned[i]))
		case roleKeyed:
			// Key skew: some subtasks get up to twice the average.
			ld.in = total / float64(p) * (0.5 + float64((h>>32)%100)/66)
			ld.out = ld.in
			ld.state = 1<<20 + int64((h>>40)%(4<<20))
		default:
			ld.in = total / float64(p)
			ld.out = ld.in
			ld.state = 200
		}
		k.load[i] = ld
	}
	k.backpressure = backpressure(k.load)
	return k
}

// subtaskIDs returns the subtask-relative metric ids subtask i lists.
func (k *vertexKind) subtaskIDs(l *layout, i int) []string {
	ids := slices.Clone(k.fixed)
	if k.role == roleSource {
		prefix := OperatorScope(k.operators[0].name) + "."
		for _, pi := range l.owned[i] {
			for _, id := range l.partitionMetricIDs(l.partitions[pi]) {
				ids = append(ids, prefix+id.name)
			}
		}
		if l.cfg.EventTime && len(l.owned[i]) > 0 {
			ids = append(ids, prefix+"watermarkLag")
		}
	}
	return ids
}

type partitionID struct {
	name string
	m    metric
}

// partitionMetricIDs are the operator-relative ids a Kafka source reader
// registers for one partition (KafkaSourceReaderMetrics and, with
// Config.EventTime, the split's watermark group).
func (l *layout) partitionMetricIDs(p partition) []partitionID {
	ids := []partitionID{
		{kafkaOffsetRel(p.topic, p.num, CommittedOffset), mCommittedOffset},
		{kafkaOffsetRel(p.topic, p.num, CurrentOffset), mCurrentOffset},
	}
	if !l.cfg.EventTime {
		return ids
	}
	for _, n := range splitWatermarkMetrics {
		m := mZero
		if n == "currentWatermark" {
			m = mSplitWatermark
		}
		ids = append(ids, partitionID{splitWatermarkRel(p.topic, p.num, n), m})
	}
	return ids
}

// job is one fake job; its answers with ids are encoded by newJob.
type job struct {
	l        *layout
	index    int
	id, name string
	vertices [numRoles]*vertex
	details  *JobDetails
	plan     *JobPlan

	cpCalls atomic.Int64
	cpBody  atomic.Pointer[cachedBody]
	// polls counts the requests for the job's details: its event-time
	// clock (eventtime.go).
	polls atomic.Int64
}

type cachedBody struct {
	id   int64
	body *Checkpoints
}

// vertex is one job vertex.
type vertex struct {
	job     *job
	kind    *vertexKind
	id      string
	details *VertexDetails
	// calls counts value requests: offsets and counters grow with it.
	calls atomic.Int64
}

// Vertex implements Job.
func (j *job) Vertex(id string) Vertex {
	for _, v := range j.vertices {
		if v.id == id {
			return v
		}
	}
	return nil
}

// Details implements Job. A poll of the job starts with its details: its
// event-time clock moves on.
func (j *job) Details() *JobDetails {
	j.polls.Add(1)
	return j.details
}

// Plan implements Job.
func (j *job) Plan() *JobPlan { return j.plan }

// Config implements Job: the collector does not read it.
func (j *job) Config() *JobConfig { return nil }

// CheckpointConfig implements Job: the collector does not read it.
func (j *job) CheckpointConfig() *CheckpointConfig { return nil }

// Metrics implements Job.
func (j *job) Metrics() Metrics { return &jobStore{j: j, latest: j.latestCheckpoint(j.cpCalls.Load())} }

// Parallelism implements Vertex.
func (v *vertex) Parallelism() int { return v.job.l.cfg.Parallelism }

// Details implements Vertex.
func (v *vertex) Details() *VertexDetails { return v.details }

// Backpressure implements Vertex.
func (v *vertex) Backpressure() *Backpressure { return v.kind.backpressure }

// Metrics implements Vertex.
func (v *vertex) Metrics(subtask int) Metrics { return &vertexStore{v: v, subtask: subtask} }

// hexID is a 32-hex-digit id derived from s, like Flink's JobID and
// JobVertexID.
func hexID(s string) string {
	sum := sha256.Sum256([]byte("skewscope fakejm " + s))
	return hex.EncodeToString(sum[:16])
}

func (l *layout) newJob(i int) *job {
	j := &job{l: l, index: i, id: hexID("job " + strconv.Itoa(i)), name: fmt.Sprintf("load-job-%04d", i)}
	for r := range numRoles {
		v := &vertex{job: j, kind: l.kinds[r], id: hexID(fmt.Sprintf("job %d vertex %d", i, r))}
		d := l.vertexDetails(j, v)
		v.details = freeze(&d)
		j.vertices[r] = v
	}
	j.plan = freeze(&JobPlan{Plan: l.plan(j)})
	d := l.jobDetails(j)
	j.details = freeze(&d)
	return j
}

// must panics on an encoding error of the fake's own wire types, which
// cannot fail.
func must(b []byte, err error) []byte {
	if err != nil {
		panic("fakejm: " + err.Error())
	}
	return b
}

// marshal is json.Marshal without HTML escaping (Jackson writes "<br/>"
// as is) and without the encoder's newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// idListBody is a metric id list answer: [{"id":"..."},...].
func idListBody(ids []string) []byte {
	n := 2
	for _, id := range ids {
		n += len(id) + 10
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":`...)
		b = appendJSONString(b, id)
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// mix is SplitMix64's finaliser: a cheap, well-spread hash of x.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// tm is the TaskManager whose slot runs subtask i of every vertex of job j
// (one slot sharing group); tmEndpoint and tmID name it.
func (l *layout) tm(j *job, i int) int { return (j.index*l.cfg.Parallelism + i) / slotsPerTM }

func tmEndpoint(tm int) string { return fmt.Sprintf("10.1.%d.%d:6121", tm/250, tm%250+1) }

func tmID(tm int) string {
	return fmt.Sprintf("10.1.%d.%d:6122-%06x", tm/250, tm%250+1, mix(uint64(tm))&0xffffff)
}
