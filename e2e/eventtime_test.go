//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/live"
)

// Event time against real Flink: four jobs of SkewJob with
// WatermarkStrategy.forBoundedOutOfOrderness(1 s) on the Kafka record
// timestamp, whose records the harness writes with timestamps it chooses
// (record n of partition p at firstTs(p) + n·100 ms, one record per
// partition every 100 ms, firstTs 10 min behind the wall clock), so the
// watermark each source subtask must report is known: the last timestamp
// it read − boundMs − 1.
//
//   - idle: 4 partitions, 4 readers, no idleness; partition 2 goes silent
//     after the warm-up. Its reader's watermark freezes and, downstream,
//     holds the job's. The dashboard must name partition 2, on the source
//     subtask the data path says reads it, with cause idle.
//   - idleness: the same with withIdleness(2 s): Flink skips the silent
//     reader, the job's watermark goes past it, and the dashboard must not
//     name an idle holder.
//   - starved: 2 partitions, 4 readers: two readers have no split and
//     emit no watermark, so nothing downstream has one; the dashboard must
//     say starved and name those subtasks.
//   - aligned: 4 partitions, 2 readers, withWatermarkAlignment(group,
//     2 s, 1 s), partition 1's timestamps 5 min behind the others': the
//     other partitions are paused by alignment. With all traffic stopped,
//     the dashboard must name partition 1 as the holder and report the
//     paused partitions (split-level pause on Flink ≥ 2.1, where
//     pausedTimeMsPerSecond is reported; the whole reader's positive
//     drift everywhere).
//
// The oracle is Flink itself and the timestamps written: each dashboard
// poll goes through a recording proxy, and the watermarks, drifts and
// paused times in the dashboard's JSON must equal those in the very
// responses Flink gave that poll; the keyed vertex's GET …/watermarks (the
// Web UI's source) must give the job's watermark where it is frozen; the
// frozen watermarks must equal the last timestamp read − boundMs − 1. The
// waits count polls of conditions on Flink's answers (at most
// etMaxRounds), never a time; the scenarios run two at a time (t.Parallel).

// etScenario is one event-time job.
type etScenario struct {
	Name       string
	What       string
	Partitions int
	SourceP    int
	IdleMs     int64
	Align      bool
	// Held is the partition that holds the watermark back: it goes silent
	// after the warm-up (idle, idleness) or its timestamps run BehindMs
	// behind the others' (aligned); -1 for none.
	Held     int
	BehindMs int64
}

var etScenarios = []etScenario{
	{Name: "idle", Partitions: 4, SourceP: 4, Held: 2,
		What: "4 partitions, 4 readers, bounded out-of-orderness 1 s, no idleness; partition 2 silent after a warm-up while the others keep receiving"},
	{Name: "idleness", Partitions: 4, SourceP: 4, IdleMs: 2000, Held: 2,
		What: "as idle, with withIdleness(2 s): the silent partition's reader goes idle and downstream skips it"},
	{Name: "starved", Partitions: 2, SourceP: 4, Held: -1,
		What: "2 partitions, 4 readers, no idleness: two readers without a split"},
	{Name: "aligned", Partitions: 4, SourceP: 2, Align: true, Held: 1, BehindMs: 300_000,
		What: "4 partitions, 2 readers (2 splits each), withWatermarkAlignment(group, 2 s, 1 s); partition 1's timestamps 5 min behind the others'; recorded after all traffic stopped"},
}

const (
	etBoundMs       = 1000
	etKeyedP        = 2
	etTickMs        = 100 // one record per partition per tick, timestamps etTickMs apart
	etAlignDriftMs  = 2000
	etAlignUpdateMs = 1000
	etStartBehind   = 10 * time.Minute
	// etIdleAfter is live's idleAfter in seconds: how long a partition
	// must have had no new record, observed from its end offsets, before
	// the dashboard calls it idle.
	etIdleAfter = 10
	// etMaxRounds bounds every wait, in dashboard polls (each a Flink and
	// a Kafka poll, then etPollGap).
	etMaxRounds = 120
	etPollGap   = 500 * time.Millisecond
	// etPausedPerS is live's pausedPerS: the split's paused ms per second
	// from which the dashboard calls it paused.
	etPausedPerS = 100
)

// etOp is the source operator in metric ids ("Source: Kafka Source").
const etOp = recSourceOp

func (e *lineEnv) testEventTime(t *testing.T) {
	start := time.Now()
	t.Cleanup(func() {
		t.Logf("Flink %s: the four event-time scenarios took %s", e.flink.Version, time.Since(start).Round(time.Second))
	})
	for _, sc := range etScenarios {
		t.Run(sc.Name, func(t *testing.T) {
			t.Parallel()
			e.runEventTime(t, sc)
		})
	}
}

// etRun is one scenario's job, traffic and dashboard.
type etRun struct {
	e      *lineEnv
	sc     etScenario
	spec   jobSpec
	topic  assign.Topic
	jobID  string
	srcID  string
	keyID  string
	prod   *etProducer
	owners []int // data path: the source subtask reading partition i
	// starved are the source subtasks the data path shows reading nothing.
	starved []int
	rec     *restRecorder
	dash    *dashboard
	split   bool // the line reports split watermarks (Flink ≥ 2.1)
	rounds  int
}

func (e *lineEnv) runEventTime(t *testing.T, sc etScenario) {
	start := time.Now()
	r := &etRun{e: e, sc: sc, topic: assign.Topic{Name: "et-" + sc.Name, Partitions: sc.Partitions}, split: splitWatermarks(e.flink.Version)}
	r.spec = jobSpec{Name: "eventtime-" + sc.Name, Topics: []string{r.topic.Name}, Out: r.topic.Name + "-out", Group: "eventtime-" + sc.Name,
		SourceP: sc.SourceP, KeyedP: etKeyedP, Watermarks: "bounded", BoundMs: etBoundMs, IdleMs: sc.IdleMs}
	if sc.Align {
		r.spec.AlignGroup, r.spec.AlignDriftMs, r.spec.AlignUpdateMs = r.topic.Name, etAlignDriftMs, etAlignUpdateMs
	}
	e.kc.createTopics(t, r.topic, assign.Topic{Name: r.spec.Out, Partitions: 1})
	r.rec = newRESTRecorder(t, e.flink.REST.base)
	r.dash = newDashboardAt(t, e, r.rec.URL())

	r.jobID = e.flink.submit(t, r.spec)
	defer func() {
		if err := e.flink.REST.cancel(r.jobID); err != nil {
			t.Errorf("cancel %s: %v", r.jobID, err)
		}
	}()
	j, err := e.flink.REST.job(r.jobID)
	if err != nil {
		t.Fatal(err)
	}
	src, err := vertexNamed(j, "Source: Kafka Source")
	if err != nil {
		t.Fatal(err)
	}
	keyed, err := vertexNamed(j, "Key Router")
	if err != nil {
		t.Fatal(err)
	}
	r.srcID, r.keyID = src.ID, keyed.ID

	first := time.Now().Add(-etStartBehind).UnixMilli()
	firstTs := make([]int64, sc.Partitions)
	for p := range firstTs {
		firstTs[p] = first
		if p == sc.Held && sc.BehindMs > 0 {
			firstTs[p] -= sc.BehindMs
		}
	}
	r.prod = startETProducer(e.kc, r.topic.Name, sc.Name, firstTs)
	defer r.prod.stopAll(t)

	r.dataPath(t)
	t.Logf("Flink %s, event time %q (job %s, %s): data path owners %v, readers without a partition %v",
		e.flink.Version, sc.Name, r.jobID, r.spec, r.owners, r.starved)

	switch sc.Name {
	case "idle":
		r.checkIdle(t)
	case "idleness":
		r.checkIdleness(t)
	case "starved":
		r.checkStarved(t)
	case "aligned":
		r.checkAligned(t)
	}
	// Flink's answers are what the scenario says (the checks above
	// waited for them) whatever the dashboard made of them.
	r.record(t)
	t.Logf("Flink %s, event time %q: %d dashboard polls, %s from topic creation", e.flink.Version, sc.Name, r.rounds, time.Since(start).Round(100*time.Millisecond))
}

// splitWatermarks reports whether the Flink version registers per-split
// watermark gauges (FLIP-513, 2.1+).
func splitWatermarks(version string) bool {
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, _ := strconv.Atoi(parts[0])
	minor, _ := strconv.Atoi(parts[1])
	return major > 2 || (major == 2 && minor >= 1)
}

// ---------------------------------------------------------------------------
// Traffic with chosen timestamps.

// etProduced is what was written to one partition (the manifest's form).
type etProduced struct {
	Partition int   `json:"partition"`
	Records   int   `json:"records"`
	FirstTs   int64 `json:"firstTs"`
	LastTs    int64 `json:"lastTs"`
	Writing   bool  `json:"writing"`
}

// etProducer writes, every etTickMs, one record to every partition still
// writing: record n of partition p has timestamp firstTs(p) + n·etTickMs
// (CreateTime, the timestamp the job's watermarks follow), key
// "et-<scenario>-<p>-<n>".
type etProducer struct {
	kc       *kafkaClient
	topic    string
	scenario string
	mu       sync.Mutex // held while a tick produces
	parts    []etProduced
	cancel   context.CancelFunc
	done     chan error
	stopped  bool
}

func startETProducer(kc *kafkaClient, topic, scenario string, firstTs []int64) *etProducer {
	ctx, cancel := context.WithCancel(context.Background())
	p := &etProducer{kc: kc, topic: topic, scenario: scenario, cancel: cancel, done: make(chan error, 1)}
	for i, ts := range firstTs {
		p.parts = append(p.parts, etProduced{Partition: i, FirstTs: ts, LastTs: ts, Writing: true})
	}
	go func() {
		tick := time.NewTicker(etTickMs * time.Millisecond)
		defer tick.Stop()
		for {
			if err := p.tick(ctx); err != nil {
				p.done <- err
				return
			}
			select {
			case <-ctx.Done():
				p.done <- nil
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

func (p *etProducer) tick(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var recs []*kgo.Record
	for i := range p.parts {
		pp := &p.parts[i]
		if !pp.Writing {
			continue
		}
		ts := pp.FirstTs + int64(pp.Records)*etTickMs
		recs = append(recs, &kgo.Record{Topic: p.topic, Partition: int32(i), Timestamp: time.UnixMilli(ts),
			Key: []byte(fmt.Sprintf("et-%s-%d-%d", p.scenario, i, pp.Records)), Value: []byte("et")})
	}
	if len(recs) == 0 {
		return nil
	}
	if err := p.kc.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("produce to %s: %v", p.topic, err)
	}
	for i := range p.parts {
		if pp := &p.parts[i]; pp.Writing {
			pp.LastTs = pp.FirstTs + int64(pp.Records)*etTickMs
			pp.Records++
		}
	}
	return nil
}

// stop ends the writing to partitions (all with none); when it returns,
// no record of theirs is in flight and their counts are final.
func (p *etProducer) stop(partitions ...int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range p.parts {
		if len(partitions) == 0 || slices.Contains(partitions, i) {
			p.parts[i].Writing = false
		}
	}
}

// stopAll stops the traffic and fails t if a produce failed.
func (p *etProducer) stopAll(t *testing.T) {
	t.Helper()
	p.stop()
	if p.stopped {
		return
	}
	p.stopped = true
	p.cancel()
	if err := <-p.done; err != nil {
		t.Errorf("event-time traffic: %v", err)
	}
}

// produced is a copy of what was written so far.
func (p *etProducer) produced() []etProduced {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.parts)
}

// ---------------------------------------------------------------------------
// Data path.

// dataPath reads the job's output until every partition came back and
// keeps which source subtask read each (the Source Tagger's stamp),
// compared with assign's fresh-start layout.
func (r *etRun) dataPath(t *testing.T) {
	t.Helper()
	owners := map[int32]int{}
	var bad []string
	err := r.e.kc.readRoutes(t, r.spec.Out, 120*time.Second, func(rt route) bool {
		switch o, seen := owners[rt.Partition]; {
		case rt.Topic != r.topic.Name || rt.Partition < 0 || int(rt.Partition) >= r.topic.Partitions:
			bad = append(bad, fmt.Sprintf("a record of %s-%d", rt.Topic, rt.Partition))
		case rt.SourceParallelism != r.sc.SourceP:
			bad = append(bad, fmt.Sprintf("source parallelism %d", rt.SourceParallelism))
		case seen && o != rt.SourceSubtask:
			bad = append(bad, fmt.Sprintf("partition %d read by source subtasks %d and %d", rt.Partition, o, rt.SourceSubtask))
		default:
			owners[rt.Partition] = rt.SourceSubtask
		}
		return len(owners) == r.topic.Partitions
	})
	if err != nil {
		t.Fatalf("data path: %v (%d of %d partitions came back)", err, len(owners), r.topic.Partitions)
	}
	if len(bad) > 0 {
		t.Fatalf("data path: %s", strings.Join(bad, "; "))
	}
	r.owners = make([]int, r.topic.Partitions)
	reads := make([]bool, r.sc.SourceP)
	for p, o := range owners {
		r.owners[p] = o
		reads[o] = true
	}
	r.starved = nil
	for i, ok := range reads {
		if !ok {
			r.starved = append(r.starved, i)
		}
	}
	fresh, err := assign.FreshAssignment([]assign.Topic{r.topic}, r.sc.SourceP)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range fresh.Subtasks {
		for _, tp := range l {
			if r.owners[tp.Partition] != i {
				t.Errorf("data path: %s read by subtask %d, assign.FreshAssignment says %d", tp.SplitID(), r.owners[tp.Partition], i)
			}
		}
	}
}

// ---------------------------------------------------------------------------
// Dashboard polls and what Flink answered them.

// etRound is one dashboard poll: Flink's answers to its metric requests,
// the keyed vertex's GET …/watermarks right after, and the dashboard's
// JSON of the job and both vertices.
type etRound struct {
	n   int
	raw map[string]map[string]string // vertex id → metric id → value
	// rest is the keyed vertex's /watermarks, by subtask.
	rest  map[int]int64
	job   live.JobView
	src   live.VertexView
	keyed live.VertexView
}

func (r *etRun) poll(t *testing.T) etRound {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r.rounds++
	rd := etRound{n: r.rounds, raw: map[string]map[string]string{}, rest: map[int]int64{}}
	r.rec.take()
	fs := r.dash.fcol.PollOnce(ctx)
	calls := r.rec.take()
	r.dash.kcol.PollOnce(ctx)
	if fs.Err != nil {
		t.Logf("poll %d: Flink snapshot error: %v", rd.n, fs.Err)
	}
	prefix := "/jobs/" + r.jobID + "/vertices/"
	for _, c := range calls {
		rest, ok := strings.CutPrefix(c.path, prefix)
		vid, tail, _ := strings.Cut(rest, "/")
		if !ok || tail != "metrics" || !strings.HasPrefix(c.query, "get=") || c.status != http.StatusOK {
			continue
		}
		var ms []struct{ ID, Value string }
		if err := json.Unmarshal(c.body, &ms); err != nil {
			t.Fatalf("poll %d: GET %s?%s: %v", rd.n, c.path, c.query, err)
		}
		if rd.raw[vid] == nil {
			rd.raw[vid] = map[string]string{}
		}
		for _, m := range ms {
			rd.raw[vid][m.ID] = m.Value
		}
	}
	var wms []struct{ ID, Value string }
	if err := r.e.flink.REST.get(prefix+r.keyID+"/watermarks", &wms); err != nil {
		t.Fatal(err)
	}
	for _, m := range wms {
		i, name, _ := strings.Cut(m.ID, ".")
		sub, err1 := strconv.Atoi(i)
		w, err2 := strconv.ParseInt(m.Value, 10, 64)
		if name != "currentInputWatermark" || err1 != nil || err2 != nil {
			t.Fatalf("GET …/vertices/%s/watermarks: entry %+v", r.keyID, m)
		}
		rd.rest[sub] = w
	}
	r.dash.getJSON(t, "/api/v1/jobs/"+r.jobID, &rd.job)
	r.dash.getJSON(t, "/api/v1/jobs/"+r.jobID+"/vertices/"+r.srcID, &rd.src)
	r.dash.getJSON(t, "/api/v1/jobs/"+r.jobID+"/vertices/"+r.keyID, &rd.keyed)
	return rd
}

// until polls until ready says "" (what is missing otherwise), at most
// etMaxRounds polls.
func (r *etRun) until(t *testing.T, what string, ready func(rd etRound) string) etRound {
	t.Helper()
	var rd etRound
	for n := 1; ; n++ {
		rd = r.poll(t)
		why := ready(rd)
		if why == "" {
			t.Logf("%s: after %d polls", what, n)
			return rd
		}
		if n >= etMaxRounds {
			ids := slices.Sorted(maps.Keys(rd.raw[r.srcID]))
			t.Fatalf("%s: not after %d polls: %s\n  job eventTime: %s\n  the source metrics the dashboard's last poll read: %s", what, n, why, jsonText(rd.job.EventTime), clip(strings.Join(ids, " "), 4000))
		}
		time.Sleep(etPollGap)
	}
}

// wm is a watermark Flink answered the poll, ok false when absent.
func (rd etRound) wm(vertex, id string) (int64, bool) {
	v, ok := rd.raw[vertex][id]
	if !ok {
		return 0, false
	}
	w, err := strconv.ParseInt(v, 10, 64)
	return w, err == nil
}

// num is a number Flink answered the poll, NaN when absent.
func (rd etRound) num(vertex, id string) float64 {
	v, ok := rd.raw[vertex][id]
	if !ok {
		return math.NaN()
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

func (r *etRun) srcOut(rd etRound, sub int) (int64, bool) {
	return rd.wm(r.srcID, fmt.Sprintf("%d.%s.currentOutputWatermark", sub, etOp))
}

func (r *etRun) drift(rd etRound, sub int) float64 {
	return rd.num(r.srcID, fmt.Sprintf("%d.%s.watermarkAlignmentDrift", sub, etOp))
}

func (r *etRun) splitID(p int, gauge string) string {
	return fmt.Sprintf("%d.%s.split.%s-%d.watermark.%s", r.owners[p], etOp, r.topic.Name, p, gauge)
}

// keyedMin is the lowest keyed input watermark Flink answered the poll;
// ok is false unless every keyed subtask's was there.
func (r *etRun) keyedMin(rd etRound) (int64, bool) {
	low := int64(math.MaxInt64)
	for i := 0; i < etKeyedP; i++ {
		w, ok := rd.wm(r.keyID, fmt.Sprintf("%d.currentInputWatermark", i))
		if !ok {
			return 0, false
		}
		low = min(low, w)
	}
	return low, true
}

// restMin is the lowest of the keyed vertex's GET …/watermarks; ok is
// false unless every subtask is listed.
func (rd etRound) restMin() (int64, bool) {
	if len(rd.rest) != etKeyedP {
		return 0, false
	}
	low := int64(math.MaxInt64)
	for _, w := range rd.rest {
		low = min(low, w)
	}
	return low, true
}

// cell is the dashboard's cell of partition p of the topic, nil if absent.
func (rd etRound) cell(topic string, p int) (*live.PartitionCell, int) {
	for _, row := range rd.src.Subtasks {
		for k := range row.Partitions {
			if c := &row.Partitions[k]; c.Topic == topic && int(c.Partition) == p {
				return c, row.Subtask
			}
		}
	}
	return nil, -1
}

// wmString prints a watermark as Flink writes it, "none" for Long.MIN_VALUE.
func wmString(w int64) string {
	if w == math.MinInt64 {
		return "none"
	}
	return strconv.FormatInt(w, 10)
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return clip(string(b), 3000)
}

// sameWatermark compares a dashboard watermark (ms, none) with Flink's
// gauge value.
func sameWatermark(ms int64, none bool, flinkValue int64) bool {
	if flinkValue == math.MinInt64 {
		return none
	}
	return !none && ms == flinkValue
}

// checkFigures asserts that every watermark, drift and paused time in the
// dashboard's JSON of this poll equals Flink's answer to it.
func (r *etRun) checkFigures(t *testing.T, rd etRound) {
	t.Helper()
	for _, v := range []struct {
		name string
		vv   live.VertexView
		id   func(i int) string
	}{
		{"keyed", rd.keyed, func(i int) string { return fmt.Sprintf("%d.currentInputWatermark", i) }},
		{"source", rd.src, func(i int) string { return fmt.Sprintf("%d.%s.currentOutputWatermark", i, etOp) }},
	} {
		for _, row := range v.vv.Subtasks {
			id := v.id(row.Subtask)
			w, ok := rd.wm(v.vv.ID, id)
			switch {
			case !ok:
				t.Errorf("poll %d: Flink's answer has no %s of the %s vertex", rd.n, id, v.name)
			case row.Watermark == nil:
				t.Errorf("poll %d: %s subtask %d has no watermark in the JSON; Flink answered %s = %s", rd.n, v.name, row.Subtask, id, wmString(w))
			case !sameWatermark(row.Watermark.WatermarkMs, row.Watermark.None, w):
				t.Errorf("poll %d: %s subtask %d watermark %d (none %v) in the JSON, Flink answered %s = %s", rd.n, v.name, row.Subtask, row.Watermark.WatermarkMs, row.Watermark.None, id, wmString(w))
			}
			if v.name != "source" || row.Watermark == nil || !r.sc.Align {
				continue
			}
			if d := r.drift(rd, row.Subtask); math.IsNaN(d) {
				t.Errorf("poll %d: Flink's answer has no watermarkAlignmentDrift of source subtask %d", rd.n, row.Subtask)
			} else if row.Watermark.DriftMs != d || row.Watermark.Paused != (d > 0) {
				t.Errorf("poll %d: source subtask %d alignment drift %v paused %v in the JSON, Flink answered %v", rd.n, row.Subtask, row.Watermark.DriftMs, row.Watermark.Paused, d)
			}
		}
	}
	for _, row := range rd.src.Subtasks {
		for _, c := range row.Partitions {
			et := c.EventTime
			if et == nil {
				t.Errorf("poll %d: %s-%d has no event time in the JSON", rd.n, c.Topic, c.Partition)
				continue
			}
			if !r.split {
				if et.Kind != live.Estimated {
					t.Errorf("poll %d: %s-%d event time %s on Flink %s, which reports no split watermark: want estimated", rd.n, c.Topic, c.Partition, et.Kind, r.e.flink.Version)
				}
				continue
			}
			id := r.splitID(int(c.Partition), "currentWatermark")
			w, ok := rd.wm(r.srcID, id)
			switch {
			case !ok:
				t.Errorf("poll %d: Flink's answer has no %s", rd.n, id)
			case et.Kind != live.Observed || !sameWatermark(et.WatermarkMs, et.None, w):
				t.Errorf("poll %d: %s-%d watermark %d (none %v, %s) in the JSON, Flink answered %s = %s", rd.n, c.Topic, c.Partition, et.WatermarkMs, et.None, et.Kind, id, wmString(w))
			}
			if !r.sc.Align {
				continue
			}
			pid := r.splitID(int(c.Partition), "pausedTimeMsPerSecond")
			if p := rd.num(r.srcID, pid); math.IsNaN(p) {
				t.Errorf("poll %d: Flink's answer has no %s", rd.n, pid)
			} else if et.PausedPerS != min(p, 1000) {
				t.Errorf("poll %d: %s-%d paused %v ms/s in the JSON, Flink answered %s = %v", rd.n, c.Topic, c.Partition, et.PausedPerS, pid, p)
			}
		}
	}
	low, ok := r.keyedMin(rd)
	et := rd.job.EventTime
	switch {
	case !ok:
		t.Errorf("poll %d: Flink's answer lacks a keyed input watermark", rd.n)
	case et == nil:
		t.Errorf("poll %d: job JSON has no eventTime; Flink's lowest keyed input watermark is %s", rd.n, wmString(low))
	default:
		if et.VertexID != r.keyID || !sameWatermark(et.WatermarkMs, et.None, low) {
			t.Errorf("poll %d: job watermark %d (none %v) from vertex %s in the JSON; Flink's lowest keyed input watermark is %s (vertex %s)", rd.n, et.WatermarkMs, et.None, et.VertexID, wmString(low), r.keyID)
		}
		for _, vw := range et.Vertices {
			if vw.ID == r.keyID && !sameWatermark(vw.WatermarkMs, vw.None, low) {
				t.Errorf("poll %d: keyed vertex watermark %d (none %v) in the JSON, Flink's lowest keyed input watermark %s", rd.n, vw.WatermarkMs, vw.None, wmString(low))
			}
		}
	}
}

// holder is the job's holder in the poll, failing t when there is none.
func (r *etRun) holder(t *testing.T, rd etRound) *live.WatermarkHolder {
	t.Helper()
	if rd.job.EventTime == nil || rd.job.EventTime.Holder == nil {
		t.Fatalf("poll %d: the job JSON names no watermark holder: eventTime %s", rd.n, jsonText(rd.job.EventTime))
	}
	return rd.job.EventTime.Holder
}

// wantKind is how the dashboard knows a holder's partition on this line.
func (r *etRun) wantKind() live.Provenance {
	if r.split {
		return live.Observed
	}
	return live.Estimated
}

// checkNote fetches the job page and checks its watermark note holds
// every part.
func (r *etRun) checkNote(t *testing.T, parts ...string) string {
	t.Helper()
	resp, err := r.dash.hc.Get(r.dash.srv.URL + "/jobs/" + r.jobID)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("job page: %s", resp.Status)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	note := strings.Join(strings.Fields(doc.Find(`[data-testid="watermark-note"]`).Text()), " ")
	for _, p := range parts {
		if !strings.Contains(note, p) {
			t.Errorf("job page watermark note %q lacks %q", note, p)
		}
	}
	return note
}

func (r *etRun) partitionPhrase(h *live.WatermarkHolder) string {
	return fmt.Sprintf("partition %s-%d (subtask %d of %s)", h.Topic, h.Partition, h.Subtask, h.VertexName)
}

// ---------------------------------------------------------------------------
// The scenarios.

// heldWatermark is the watermark of partition p's reader once it has
// read everything written: its last timestamp − boundMs − 1.
func (r *etRun) heldWatermark(p int) int64 {
	return r.prod.produced()[p].LastTs - etBoundMs - 1
}

func (r *etRun) checkIdle(t *testing.T) {
	held := r.sc.Held
	sub := r.owners[held]
	r.prod.stop(held)
	want := r.heldWatermark(held)
	rd := r.until(t, fmt.Sprintf("partition %d silent, its watermark %d frozen everywhere, quiet for %d s on the dashboard", held, want, etIdleAfter), func(rd etRound) string {
		w, ok := r.srcOut(rd, sub)
		low, okK := r.keyedMin(rd)
		rest, okR := rd.restMin()
		c, _ := rd.cell(r.topic.Name, held)
		switch {
		case !ok || w != want:
			return fmt.Sprintf("source subtask %d output watermark %s (ok %v), want %d", sub, wmString(w), ok, want)
		case !okK || low != want:
			return fmt.Sprintf("lowest keyed input watermark %s (ok %v), want %d", wmString(low), okK, want)
		case !okR || rest != want:
			return fmt.Sprintf("lowest of GET …/watermarks %s (ok %v), want %d", wmString(rest), okR, want)
		case c == nil || c.EventTime == nil:
			return "no dashboard cell with event time for the held partition"
		case c.Lag != 0 || c.EventTime.QuietSeconds < etIdleAfter:
			return fmt.Sprintf("held partition: lag %d, quiet %.1f s on the dashboard", c.Lag, c.EventTime.QuietSeconds)
		}
		return ""
	})
	r.checkFigures(t, rd)
	h := r.holder(t, rd)
	if h.VertexID != r.srcID || h.Subtask != sub || h.Topic != r.topic.Name || int(h.Partition) != held || h.Cause != live.HoldIdle || h.Kind != r.wantKind() {
		t.Errorf("holder %s; want partition %s-%d on source subtask %d (data path), cause idle, %s", jsonText(h), r.topic.Name, held, sub, r.wantKind())
	}
	if h.QuietSeconds < etIdleAfter || h.SkipsIdle {
		t.Errorf("holder quiet %.1f s, skipsIdle %v; want at least %d s and no idle timeout seen", h.QuietSeconds, h.SkipsIdle, etIdleAfter)
	}
	if c, _ := rd.cell(r.topic.Name, held); c.EventTime.State != live.PartitionIdle {
		t.Errorf("held partition state %s, want idle", c.EventTime.State)
	}
	for p := range r.sc.Partitions {
		if c, _ := rd.cell(r.topic.Name, p); p != held && c != nil && c.EventTime != nil && c.EventTime.State != live.PartitionActive {
			t.Errorf("%s-%d (still written) state %s, want active", r.topic.Name, p, c.EventTime.State)
		}
	}
	note := r.checkNote(t, r.partitionPhrase(h), "has had no new record")
	t.Logf("idle: job watermark %d = last timestamp of partition %d − %d − 1 = Flink's keyed input and GET …/watermarks; holder %s\n  note: %s", want, held, etBoundMs, jsonText(h), note)
}

func (r *etRun) checkIdleness(t *testing.T) {
	held := r.sc.Held
	sub := r.owners[held]
	r.prod.stop(held)
	want := r.heldWatermark(held)
	rd := r.until(t, fmt.Sprintf("partition %d silent at watermark %d and skipped: the keyed input past it by the idle timeout", held, want), func(rd etRound) string {
		w, ok := r.srcOut(rd, sub)
		low, okK := r.keyedMin(rd)
		rest, okR := rd.restMin()
		switch {
		case !ok || w != want:
			return fmt.Sprintf("source subtask %d output watermark %s (ok %v), want %d", sub, wmString(w), ok, want)
		case !okK || low <= want+r.sc.IdleMs:
			return fmt.Sprintf("lowest keyed input watermark %s (ok %v), want above %d", wmString(low), okK, want+r.sc.IdleMs)
		case !okR || rest <= want+r.sc.IdleMs:
			return fmt.Sprintf("lowest of GET …/watermarks %s (ok %v), want above %d", wmString(rest), okR, want+r.sc.IdleMs)
		case rd.job.EventTime == nil || rd.job.EventTime.Holder == nil:
			// The keyed input can trail the sources' outputs by a buffer
			// flush while they move; a poll where it equals one is needed
			// to trace it.
			return "the dashboard traces no holder"
		}
		return ""
	})
	r.checkFigures(t, rd)
	h := r.holder(t, rd)
	low, _ := r.keyedMin(rd)
	if h.Cause == live.HoldIdle || (h.Topic == r.topic.Name && int(h.Partition) == held) || h.Subtask == sub {
		t.Errorf("holder %s: the skipped partition %d (subtask %d) or an idle holder, while Flink's keyed input watermark %d is past its %d", jsonText(h), held, sub, low, want)
	}
	if w, ok := r.srcOut(rd, h.Subtask); !ok || w != low {
		t.Errorf("holder subtask %d: Flink's output watermark %s, the job's %d", h.Subtask, wmString(w), low)
	}
	if r.split {
		if w, ok := rd.wm(r.srcID, r.splitID(int(h.Partition), "currentWatermark")); !ok || w != low || h.Kind != live.Observed {
			t.Errorf("holder %s: Flink's split watermark %s, the job's %d", jsonText(h), wmString(w), low)
		}
	}
	if !h.SkipsIdle {
		t.Errorf("holder %s: skipsIdle unset while Flink skips source subtask %d", jsonText(h), sub)
	}
	for _, row := range rd.src.Subtasks {
		if sk := row.Watermark != nil && row.Watermark.Skipped; sk != (row.Subtask == sub) {
			t.Errorf("source subtask %d skipped %v in the JSON; Flink skips subtask %d only", row.Subtask, sk, sub)
		}
	}
	note := r.checkNote(t, r.partitionPhrase(h), "The job skips an idle input")
	t.Logf("idleness: partition %d frozen at %d, skipped; job watermark %d (GET …/watermarks %v); holder %s\n  note: %s", held, want, low, rd.rest, jsonText(h), note)
}

func (r *etRun) checkStarved(t *testing.T) {
	if len(r.starved) == 0 {
		t.Fatalf("the data path shows every source subtask reading a partition: owners %v", r.owners)
	}
	rd := r.until(t, fmt.Sprintf("readers %v without a split, no watermark downstream", r.starved), func(rd etRound) string {
		for i := 0; i < r.sc.SourceP; i++ {
			w, ok := r.srcOut(rd, i)
			switch {
			case !ok:
				return fmt.Sprintf("no output watermark of source subtask %d", i)
			case slices.Contains(r.starved, i) != (w == math.MinInt64):
				return fmt.Sprintf("source subtask %d output watermark %s", i, wmString(w))
			}
		}
		low, okK := r.keyedMin(rd)
		rest, okR := rd.restMin()
		switch {
		case !okK || low != math.MinInt64:
			return fmt.Sprintf("lowest keyed input watermark %s (ok %v), want none", wmString(low), okK)
		case !okR || rest != math.MinInt64:
			return fmt.Sprintf("lowest of GET …/watermarks %s (ok %v), want none", wmString(rest), okR)
		}
		n := 0
		for _, row := range rd.src.Subtasks {
			n += len(row.Partitions)
		}
		if n != r.topic.Partitions {
			return fmt.Sprintf("%d cells on the dashboard", n)
		}
		return ""
	})
	r.checkFigures(t, rd)
	h := r.holder(t, rd)
	if h.Cause != live.HoldStarved || !slices.Equal(h.Starved, r.starved) || !slices.Contains(r.starved, h.Subtask) || h.Partitions != r.topic.Partitions || h.VertexID != r.srcID {
		t.Errorf("holder %s; want cause starved naming subtasks %v (data path) of %d partitions", jsonText(h), r.starved, r.topic.Partitions)
	}
	for _, row := range rd.src.Subtasks {
		if st := row.Watermark != nil && row.Watermark.Starved; st != slices.Contains(r.starved, row.Subtask) {
			t.Errorf("source subtask %d starved %v in the JSON, data path: readers without a partition %v", row.Subtask, st, r.starved)
		}
	}
	note := r.checkNote(t, "read no partition", fmt.Sprintf("(%d partitions)", r.topic.Partitions))
	t.Logf("starved: no watermark downstream (GET …/watermarks %v); holder %s\n  note: %s", rd.rest, jsonText(h), note)
}

func (r *etRun) checkAligned(t *testing.T) {
	slow := r.sc.Held
	slowSub := r.owners[slow]
	var ahead []int // the partitions ahead of the slow one, all paused
	pausedSub := -1
	for p, o := range r.owners {
		if p == slow {
			continue
		}
		ahead = append(ahead, p)
		if o != slowSub {
			pausedSub = o
		}
	}
	if pausedSub < 0 {
		t.Fatalf("every partition is on the slow partition's subtask %d: owners %v", slowSub, r.owners)
	}
	// Flink's own answer, read by the harness: the ids its vertex lists
	// and their values, fetched right after each dashboard poll.
	flinkPaused := func(rd etRound) string {
		ids, err := r.e.flink.REST.fc.VertexMetricIDs(context.Background(), r.jobID, r.srcID)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{fmt.Sprintf("%d.%s.watermarkAlignmentDrift", pausedSub, etOp)}
		if r.split {
			for _, p := range ahead {
				want = append(want, r.splitID(p, "pausedTimeMsPerSecond"))
			}
		}
		got := present(ids, want...)
		if rd.n == 1 {
			t.Logf("aligned: right after the dashboard's first poll of the job, Flink lists %d of %v", len(got), want)
		}
		if len(got) != len(want) {
			return fmt.Sprintf("Flink lists %d of %v", len(got), want)
		}
		vals, err := r.e.flink.REST.metricValues(r.jobID, r.srcID, want)
		if err != nil {
			t.Fatal(err)
		}
		if d, err := strconv.ParseFloat(vals[want[0]], 64); err != nil || !(d > 0) {
			return fmt.Sprintf("Flink: %s = %q, want > 0", want[0], vals[want[0]])
		}
		for _, id := range want[1:] {
			if v, err := strconv.ParseFloat(vals[id], 64); err != nil || !(v >= etPausedPerS) {
				return fmt.Sprintf("Flink: %s = %q, want ≥ %d", id, vals[id], etPausedPerS)
			}
		}
		return ""
	}
	// What the dashboard's own poll read of it.
	paused := func(rd etRound) string {
		if d := r.drift(rd, pausedSub); !(d > 0) {
			return fmt.Sprintf("the dashboard's poll read source subtask %d's alignment drift as %v, want > 0", pausedSub, d)
		}
		if !r.split {
			return ""
		}
		for _, p := range ahead {
			if v := rd.num(r.srcID, r.splitID(p, "pausedTimeMsPerSecond")); !(v >= etPausedPerS) {
				return fmt.Sprintf("the dashboard's poll read split %d's paused time as %v ms/s", p, v)
			}
		}
		return ""
	}
	rd := r.until(t, "Flink pauses the partitions ahead while traffic flows", flinkPaused)
	// The dashboard has polled the job since it started: it must read the
	// gauges Flink lists now, although some (the alignment drift, the
	// watermark lag) register only after the reader's first watermark or
	// alignment round (the collector reads a source's list again while it
	// reports event time without an alignment gauge: idcache.go).
	for i := 0; i < 3 && paused(rd) != ""; i++ {
		time.Sleep(etPollGap)
		rd = r.poll(t)
	}
	if why := paused(rd); why != "" {
		ids := slices.Sorted(maps.Keys(rd.raw[r.srcID]))
		t.Fatalf("dashboard polling since the job started, %d polls: %s, while Flink lists and reports them; the source ids its last poll read: %s",
			rd.n, why, clip(strings.Join(ids, " "), 3000))
	}
	r.prod.stopAll(t)
	want := r.heldWatermark(slow)
	rd = r.until(t, fmt.Sprintf("traffic stopped: the slow partition read to its end, watermark %d", want), func(rd etRound) string {
		w, ok := r.srcOut(rd, slowSub)
		low, okK := r.keyedMin(rd)
		rest, okR := rd.restMin()
		switch {
		case !ok || w != want:
			return fmt.Sprintf("source subtask %d output watermark %s (ok %v), want %d", slowSub, wmString(w), ok, want)
		case !okK || low != want:
			return fmt.Sprintf("lowest keyed input watermark %s (ok %v), want %d", wmString(low), okK, want)
		case !okR || rest != want:
			return fmt.Sprintf("lowest of GET …/watermarks %s (ok %v), want %d", wmString(rest), okR, want)
		}
		return paused(rd)
	})
	r.checkFigures(t, rd)
	h := r.holder(t, rd)
	// Without split watermarks (1.20) the slow partition's old timestamps
	// are not seen: its last records were produced when the others' were,
	// so the dashboard names the subtask and its partitions as candidates,
	// estimated, not a partition.
	var candidates []string
	for p, o := range r.owners {
		if o == slowSub {
			candidates = append(candidates, fmt.Sprintf("%s-%d", r.topic.Name, p))
		}
	}
	switch {
	case h.VertexID != r.srcID || h.Subtask != slowSub || h.Kind != r.wantKind():
		t.Errorf("holder %s; want source subtask %d (data path), %s", jsonText(h), slowSub, r.wantKind())
	case r.split && (h.Topic != r.topic.Name || int(h.Partition) != slow):
		t.Errorf("holder %s; want the slow partition %s-%d, observed from its split watermark", jsonText(h), r.topic.Name, slow)
	case !r.split && (h.Cause != live.HoldUndetermined || h.Partition != -1 || !slices.Equal(h.Candidates, candidates)):
		t.Errorf("holder %s; want subtask %d undetermined among %v: without split watermarks the produce times do not tell the slow partition", jsonText(h), slowSub, candidates)
	}
	// The partitions paused by alignment: the reader's positive drift on
	// every line, the split's paused time where Flink reports it.
	var wantPaused []string
	for _, p := range ahead {
		if r.split || r.owners[p] == pausedSub {
			wantPaused = append(wantPaused, fmt.Sprintf("%s-%d", r.topic.Name, p))
		}
	}
	var gotPaused []string
	for p := range r.sc.Partitions {
		c, _ := rd.cell(r.topic.Name, p)
		if c == nil || c.EventTime == nil {
			t.Errorf("%s-%d: no cell with event time", r.topic.Name, p)
			continue
		}
		if c.EventTime.State == live.PartitionPaused {
			gotPaused = append(gotPaused, fmt.Sprintf("%s-%d", r.topic.Name, p))
		}
	}
	if !slices.Equal(gotPaused, wantPaused) {
		t.Errorf("partitions in state paused %v, want %v (Flink: subtask %d drift %v; split paused times where reported)", gotPaused, wantPaused, pausedSub, r.drift(rd, pausedSub))
	}
	if (r.split && h.Cause != live.HoldAligning) || !slices.Equal(slices.Sorted(slices.Values(h.Paused)), wantPaused) {
		t.Errorf("holder cause %s paused %v; want %s naming the partitions alignment pauses for it, %v: %s", h.Cause, h.Paused, live.HoldAligning, wantPaused, jsonText(h))
	}
	phrase := r.partitionPhrase(h)
	if !r.split {
		phrase = fmt.Sprintf("subtask %d of %s (observed), which reads %s", h.Subtask, h.VertexName, strings.Join(candidates, ", "))
	}
	note := r.checkNote(t, phrase, "lignment pauses")
	t.Logf("aligned: job watermark %d = last timestamp of partition %d − %d − 1 = Flink's keyed input and GET …/watermarks; paused %v; holder %s\n  note: %s", want, slow, etBoundMs, gotPaused, jsonText(h), note)
}
