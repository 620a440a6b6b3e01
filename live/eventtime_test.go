package live

import (
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
)

// etJob is a running job "clicks-by-user": a Kafka source at srcP over
// topic clicks (parts partitions), keyed into "Window" at 2. Partition
// quiet receives no record after the first Kafka poll; the others grow
// 100 records a poll. Each partition's split reports splitWM(partition)
// (Flink ≥ 2.1) when split is set; each source subtask's output watermark
// is the lowest of its splits', Long.MIN_VALUE with none; the window's
// input watermark is keyedWM.
type etJob struct {
	srcP, parts int
	quiet       int32
	split       bool
	splitWM     func(p int32) int64
	keyedWM     int64
	polls       int
	// paused, when set, is a job with watermark alignment: each split
	// reports its paused time, 1000 ms/s for the partitions in paused, 0
	// for the others.
	paused map[int32]bool
}

const etPoll = 10 * time.Second

func (e etJob) store(t *testing.T) (*Store, time.Time) {
	t.Helper()
	topics := []assign.Topic{{Name: "clicks", Partitions: e.parts}}
	polls := max(e.polls, 8)
	now := t0.Add(time.Duration(polls) * etPoll)
	s := New(Options{Now: func() time.Time { return now }})
	endAt := func(p int32, poll int) int64 {
		if p == e.quiet || poll == 0 {
			return 1000
		}
		return 1000 + int64(100*poll)
	}
	for k := range polls + 1 {
		m := map[string][]int64{}
		for p := range int32(e.parts) {
			m["clicks"] = append(m["clicks"], endAt(p, k))
		}
		s.UpdateKafka(kafkaSnap(t0.Add(time.Duration(k)*etPoll), m))
	}
	owner := freshOwner(e.srcP)
	// Every reader caught up to the latest end but for a little.
	cur := func(tp assign.TopicPartition) int64 { return endAt(tp.Partition, polls) - 1 }
	src := sourceVertex("src", e.srcP, topics, owner, cur)
	for i := range src.Subtasks {
		src.Subtasks[i].EventTime = etUnread()
		src.Subtasks[i].EventTime.OutputWatermark = flink.WatermarkNone
	}
	for i := range src.Kafka.States {
		st := &src.Kafka.States[i]
		w := e.splitWM(st.Partition)
		if e.split {
			st.Split = &flink.SplitWatermark{Watermark: w, PausedPerS: math.NaN()}
			if e.paused != nil {
				st.Split.PausedPerS = 0
				if e.paused[st.Partition] {
					st.Split.PausedPerS = 1000
				}
			}
		}
		sub := &src.Subtasks[st.Subtask].EventTime
		if sub.OutputWatermark == flink.WatermarkNone || w < sub.OutputWatermark {
			sub.OutputWatermark = w
		}
	}
	keyed := flink.VertexSnapshot{ID: "win", Name: "Window", Parallelism: 2, MaxParallelism: 128, Keyed: true, Inputs: []string{"src"}}
	for i := range 2 {
		keyed.Subtasks = append(keyed.Subtasks, flink.SubtaskSnapshot{Index: i, Status: "RUNNING", BusyRatio: 0.2, BackPressuredRatio: 0,
			IdleRatio: 0.8, RecordsInPerSecond: 10, RecordsOutPerSecond: 1, StateSize: -1, EventTime: etUnread()})
		keyed.Subtasks[i].EventTime.InputWatermark = e.keyedWM
	}
	s.UpdateFlink(flinkSnap(now, flink.JobSnapshot{ID: "aa", Name: "clicks-by-user", State: "RUNNING", Vertices: []flink.VertexSnapshot{src, keyed}}))
	return s, now
}

// etUnread is a subtask whose event-time gauges were read, none with a
// value yet.
func etUnread() flink.SubtaskEventTime {
	et := flink.NoEventTime()
	et.Read = true
	return et
}

// base is the event time the test's watermarks start from.
var base = t0.UnixMilli()

func TestWatermarkHeldByAnIdlePartition(t *testing.T) {
	e := etJob{srcP: 4, parts: 4, quiet: 2, split: true, polls: 8,
		splitWM: func(p int32) int64 {
			if p == 2 {
				return base // its last record, then nothing
			}
			return base + 80_000
		}}
	e.keyedWM = base
	s, now := e.store(t)
	jv, err := s.State().Job("jm", "aa")
	if err != nil {
		t.Fatal(err)
	}
	et := jv.EventTime
	if et == nil {
		t.Fatal("no event time for a job whose watermarks are times")
	}
	if et.VertexID != "win" || et.WatermarkMs != base || et.None {
		t.Errorf("job watermark %d on %s (none %v), want %d on the window", et.WatermarkMs, et.VertexID, et.None, base)
	}
	if want := float64(now.UnixMilli()-base) / 1000; et.LagSeconds != want {
		t.Errorf("lag %v s, want %v", et.LagSeconds, want)
	}
	reader := freshOwner(4)(assign.TopicPartition{Topic: "clicks", Partition: 2})
	h := et.Holder
	if h == nil {
		t.Fatal("no holder")
	}
	if h.VertexID != "src" || h.Subtask != reader || h.Topic != "clicks" || h.Partition != 2 || h.Cause != HoldIdle || h.Kind != Observed {
		t.Errorf("holder %+v, want clicks-2 on subtask %d, idle, observed", h, reader)
	}
	// Quiet since the first poll's sample: 8 polls of 10 s.
	if h.QuietSeconds < 70 || h.QuietSeconds > 80 {
		t.Errorf("quiet %v s, want 70–80 (no record after the first poll)", h.QuietSeconds)
	}
	if h.SkipsIdle {
		t.Error("a job held back by an idle partition is said to skip idle inputs")
	}

	vv, err := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range vv.Subtasks {
		if r.Watermark == nil {
			t.Fatalf("subtask %d has no watermark", r.Subtask)
		}
		if r.Watermark.Holds != (r.Subtask == reader) {
			t.Errorf("subtask %d holds %v, want %v", r.Subtask, r.Watermark.Holds, r.Subtask == reader)
		}
		for _, c := range r.Partitions {
			if c.EventTime == nil || c.EventTime.Kind != Observed {
				t.Fatalf("clicks-%d event time %+v, want observed", c.Partition, c.EventTime)
			}
			want := PartitionActive
			if c.Partition == 2 {
				want = PartitionIdle
			}
			if c.EventTime.State != want || c.EventTime.WatermarkMs != e.splitWM(c.Partition) {
				t.Errorf("clicks-%d state %s watermark %d, want %s %d", c.Partition, c.EventTime.State, c.EventTime.WatermarkMs, want, e.splitWM(c.Partition))
			}
		}
	}
	if vv.JobEventTime == nil || vv.JobEventTime.Holder == nil || vv.JobEventTime.Holder.Partition != 2 {
		t.Errorf("the source page's job event time %+v, want the same holder", vv.JobEventTime)
	}
	kv, _ := s.State().Vertex("aa", "win", VertexQuery{Highlight: -1})
	if kv.EventTime == nil || kv.EventTime.Holder == nil || kv.EventTime.Holder.Partition != 2 || kv.Subtasks[0].Watermark.WatermarkMs != base {
		t.Errorf("the window's event time %+v, want held by clicks-2", kv.EventTime)
	}
}

// With an idle timeout Flink skips the silent subtask: the window's input
// watermark is above its output watermark, and the holder is another.
func TestWatermarkWithIdlenessSkipsTheIdleSubtask(t *testing.T) {
	e := etJob{srcP: 4, parts: 4, quiet: 2, split: true,
		splitWM: func(p int32) int64 {
			if p == 2 {
				return base
			}
			return base + 80_000 + int64(p)*1000
		}}
	e.keyedWM = base + 80_000 // partition 0's
	s, _ := e.store(t)
	jv, _ := s.State().Job("jm", "aa")
	h := jv.EventTime.Holder
	reader0 := freshOwner(4)(assign.TopicPartition{Topic: "clicks", Partition: 0})
	if h == nil || h.Partition != 0 || h.Subtask != reader0 || h.Cause != HoldOldest || !h.SkipsIdle {
		t.Fatalf("holder %+v, want clicks-0 on %d, oldest, the job skipping idle inputs", h, reader0)
	}
	vv, _ := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	idle := freshOwner(4)(assign.TopicPartition{Topic: "clicks", Partition: 2})
	for _, r := range vv.Subtasks {
		if r.Watermark.Skipped != (r.Subtask == idle) {
			t.Errorf("subtask %d skipped %v, want %v", r.Subtask, r.Watermark.Skipped, r.Subtask == idle)
		}
	}
}

// More source subtasks than partitions: the readers without a split
// report no watermark, and so does everything downstream.
func TestWatermarkHeldByStarvedSubtasks(t *testing.T) {
	e := etJob{srcP: 4, parts: 2, quiet: -1, split: true,
		splitWM: func(p int32) int64 { return base + 50_000 }}
	e.keyedWM = flink.WatermarkNone
	s, _ := e.store(t)
	jv, _ := s.State().Job("jm", "aa")
	et := jv.EventTime
	if et == nil || !et.None || et.WatermarkMs != 0 || et.LagSeconds != -1 {
		t.Fatalf("job event time %+v, want none", et)
	}
	var want []int
	owners := map[int]bool{}
	for p := range int32(2) {
		owners[freshOwner(4)(assign.TopicPartition{Topic: "clicks", Partition: p})] = true
	}
	for i := range 4 {
		if !owners[i] {
			want = append(want, i)
		}
	}
	h := et.Holder
	if h == nil || h.Cause != HoldStarved || h.Partition != -1 || !slices.Equal(h.Starved, want) || h.Partitions != 2 || h.Subtask != want[0] {
		t.Fatalf("holder %+v, want starved %v of 2 partitions", h, want)
	}
}

// Before Flink 2.1 there are no split gauges: the partition is the one
// whose last record read is the oldest, estimated.
func TestWatermarkHolderEstimatedWithoutSplitGauges(t *testing.T) {
	e := etJob{srcP: 2, parts: 4, quiet: 3, split: false,
		splitWM: func(p int32) int64 { return base + int64(3-p)*1000 }}
	e.keyedWM = base
	s, _ := e.store(t)
	jv, _ := s.State().Job("jm", "aa")
	h := jv.EventTime.Holder
	reader := freshOwner(2)(assign.TopicPartition{Topic: "clicks", Partition: 3})
	if h == nil || h.Partition != 3 || h.Subtask != reader || h.Kind != Estimated || h.Cause != HoldIdle {
		t.Fatalf("holder %+v, want clicks-3 on %d, idle, estimated", h, reader)
	}
	vv, _ := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			if c.EventTime == nil || c.EventTime.Kind != Estimated || c.EventTime.None {
				t.Errorf("clicks-%d %+v, want an estimated watermark", c.Partition, c.EventTime)
			}
		}
	}
}

// With watermark alignment the slowest partition holds the job's
// watermark while alignment pauses the partitions ahead of it, here
// every other one, as on a real 2.3.0 MiniCluster (e2e's aligned
// scenario): the holder is the slowest, with the cause aligning and the
// paused partitions named.
func TestWatermarkHeldByTheSlowestOfAnAlignmentGroup(t *testing.T) {
	const slow = 1
	e := etJob{srcP: 2, parts: 4, quiet: -1, split: true, paused: map[int32]bool{0: true, 2: true, 3: true},
		splitWM: func(p int32) int64 {
			if p == slow {
				return base - 300_000 // its records are 5 min older
			}
			return base + 2000
		}}
	e.keyedWM = base - 300_000
	s, _ := e.store(t)
	jv, _ := s.State().Job("jm", "aa")
	h := jv.EventTime.Holder
	reader := freshOwner(2)(assign.TopicPartition{Topic: "clicks", Partition: slow})
	if h == nil || h.Partition != slow || h.Subtask != reader || h.Kind != Observed || h.Cause != HoldAligning {
		t.Fatalf("holder %+v, want clicks-%d on subtask %d, aligning, observed", h, slow, reader)
	}
	got := slices.Sorted(slices.Values(h.Paused))
	if want := []string{"clicks-0", "clicks-2", "clicks-3"}; !slices.Equal(got, want) {
		t.Errorf("holder's paused partitions %v, want %v", h.Paused, want)
	}
	vv, _ := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			want := PartitionPaused
			if c.Partition == slow {
				want = PartitionActive
			}
			if c.EventTime == nil || c.EventTime.State != want {
				t.Errorf("clicks-%d event time %+v, want state %s", c.Partition, c.EventTime, want)
			}
		}
	}

	// Without a paused partition the same holder is simply the oldest.
	e.paused = map[int32]bool{}
	s, _ = e.store(t)
	jv, _ = s.State().Job("jm", "aa")
	if h := jv.EventTime.Holder; h == nil || h.Partition != slow || h.Cause != HoldOldest || len(h.Paused) != 0 {
		t.Errorf("holder %+v without paused partitions, want clicks-%d, oldest, none paused", h, slow)
	}
}

// A job without a watermark strategy reports Long.MIN_VALUE everywhere:
// no event-time figures at all.
func TestNoEventTimeWithoutWatermarks(t *testing.T) {
	e := etJob{srcP: 2, parts: 4, quiet: -1, split: true,
		splitWM: func(int32) int64 { return flink.WatermarkNone }}
	e.keyedWM = flink.WatermarkNone
	s, _ := e.store(t)
	jv, _ := s.State().Job("jm", "aa")
	if jv.EventTime != nil {
		t.Errorf("event time %+v for a job without watermarks", jv.EventTime)
	}
	vv, _ := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	if vv.EventTime != nil || vv.Subtasks[0].Watermark != nil || vv.Subtasks[0].Partitions[0].EventTime != nil {
		t.Error("event-time figures on a vertex of a job without watermarks")
	}
}

// The why panel's watermark line: the holder when its cause is one to act
// on, and a source's partitions that alignment pauses, with how far ahead
// of the source's lowest watermark they run (computed).
func TestWhyWatermarkLine(t *testing.T) {
	base := int64(1_800_000_000_000)
	cell := func(p int32, state PartitionState, wm int64) PartitionCell {
		return PartitionCell{Topic: "orders", Partition: p, Rate: 10,
			EventTime: &PartitionEventTime{WatermarkMs: wm, Kind: Observed, State: state, PausedPerS: -1, QuietSeconds: -1}}
	}
	vertex := func(cause HoldCause, lag float64, cells ...PartitionCell) *VertexView {
		vv := &VertexView{ID: "src", Name: "Source", Parallelism: 2, Kafka: true,
			Subtasks: []SubtaskRow{{Subtask: 0, Partitions: cells}, {Subtask: 1}},
			EventTime: &VertexWatermark{ID: "src", Source: true, WatermarkMs: base, LagSeconds: lag, Subtask: 0,
				Holder: &WatermarkHolder{VertexID: "src", Subtask: 0, Topic: "orders", Partition: 3, Cause: cause, Kind: Observed}}}
		return vv
	}
	for _, tc := range []struct {
		name      string
		vv        *VertexView
		holder    bool
		subtasks  []int
		paused    []int32
		aheadMs   float64
		noLine    bool
		lagSecond float64
	}{
		{name: "idle partition", vv: vertex(HoldIdle, 600, cell(3, PartitionIdle, base)), holder: true, subtasks: []int{0}},
		{name: "the oldest, a second behind: nothing to say", vv: vertex(HoldOldest, 1, cell(3, PartitionActive, base)), noLine: true},
		{name: "the oldest, ten minutes behind", vv: vertex(HoldOldest, 600, cell(3, PartitionActive, base)), holder: true, subtasks: []int{0}},
		{name: "alignment pauses two splits ahead of the slow one", vv: vertex(HoldOldest, 5,
			cell(3, PartitionActive, base), cell(1, PartitionPaused, base+120_000), cell(5, PartitionPaused, base+90_000)),
			subtasks: []int{}, paused: []int32{1, 5}, aheadMs: 120_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := watermarkLine(tc.vv)
			if tc.noLine {
				if l != nil {
					t.Fatalf("watermarkLine = %+v, want none", l)
				}
				return
			}
			if l == nil {
				t.Fatal("no watermark line")
			}
			if (l.Holder != nil) != tc.holder || !slices.Equal(l.Subtasks, tc.subtasks) {
				t.Errorf("holder %v subtasks %v, want holder %v subtasks %v", l.Holder, l.Subtasks, tc.holder, tc.subtasks)
			}
			var paused []int32
			for _, p := range l.Partitions {
				paused = append(paused, p.Partition)
			}
			if !slices.Equal(paused, tc.paused) {
				t.Errorf("paused partitions %v, want %v", paused, tc.paused)
			}
			ahead, hasAhead := 0.0, false
			for _, f := range l.Facts {
				if f.Name == FactAheadMs {
					ahead, hasAhead = f.Value, true
					if f.Kind != Computed {
						t.Errorf("aheadMs is %s, want computed", f.Kind)
					}
				}
			}
			if hasAhead != (len(tc.paused) > 0) || ahead != tc.aheadMs {
				t.Errorf("aheadMs %v (present %v), want %v", ahead, hasAhead, tc.aheadMs)
			}
		})
	}
	if l := watermarkLine(&VertexView{}); l != nil {
		t.Errorf("a vertex without event time has a watermark line: %+v", l)
	}
}

// Each vertex of a job with watermarks keeps its subtasks' recent
// event-time lag, one sample a Flink poll: a stalled watermark's lag grows
// by the poll interval, an advancing one's stays; a subtask with none yet
// is unknown (-1). A job without watermarks keeps none.
func TestEventTimeSparklines(t *testing.T) {
	topics := []assign.Topic{{Name: "clicks", Partitions: 2}}
	now := t0
	s := New(Options{Now: func() time.Time { return now }})
	s.UpdateKafka(kafkaSnap(t0, map[string][]int64{"clicks": {100, 100}}))
	poll := func(k int, withEventTime bool) {
		now = t0.Add(time.Duration(k) * etPoll)
		src := sourceVertex("src", 2, topics, freshOwner(2), func(assign.TopicPartition) int64 { return 99 })
		keyed := flink.VertexSnapshot{ID: "win", Name: "Window", Parallelism: 2, MaxParallelism: 128, Keyed: true, Inputs: []string{"src"}}
		for i := range 2 {
			keyed.Subtasks = append(keyed.Subtasks, flink.SubtaskSnapshot{Index: i, Status: "RUNNING", RecordsInPerSecond: 10, StateSize: -1, EventTime: etUnread()})
			if withEventTime {
				src.Subtasks[i].EventTime = etUnread()
				src.Subtasks[i].EventTime.OutputWatermark = now.UnixMilli() - 5000 // 5 s behind, advancing
			}
		}
		if withEventTime {
			// Subtask 0's input watermark is stuck at t0; subtask 1 has none.
			keyed.Subtasks[0].EventTime.InputWatermark = t0.UnixMilli()
			keyed.Subtasks[1].EventTime.InputWatermark = flink.WatermarkNone
		}
		s.UpdateFlink(flinkSnap(now, flink.JobSnapshot{ID: "aa", Name: "clicks-by-user", State: "RUNNING", Vertices: []flink.VertexSnapshot{src, keyed}}))
	}
	for k := 1; k <= 3; k++ {
		poll(k, true)
	}
	kv, err := s.State().Vertex("aa", "win", VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := kv.Subtasks[0].SparkWatermark, []float64{10, 20, 30}; !slices.Equal(got, want) {
		t.Errorf("stalled subtask's event-time lag samples %v, want %v", got, want)
	}
	if got, want := kv.Subtasks[1].SparkWatermark, []float64{-1, -1, -1}; !slices.Equal(got, want) {
		t.Errorf("a subtask without a watermark samples %v, want %v", got, want)
	}
	if len(kv.SparkTimes) != 3 || kv.Subtasks[0].SparkLag != nil {
		t.Errorf("keyed vertex: times %v, lag samples %v; want 3 times and no lag samples", kv.SparkTimes, kv.Subtasks[0].SparkLag)
	}
	sv, _ := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	if got, want := sv.Subtasks[1].SparkWatermark, []float64{5, 5, 5}; !slices.Equal(got, want) {
		t.Errorf("advancing source subtask's samples %v, want %v", got, want)
	}
	if len(sv.Subtasks[1].SparkLag) != 3 {
		t.Errorf("the source keeps %d lag samples beside its event time, want 3", len(sv.Subtasks[1].SparkLag))
	}

	// The job drops its watermarks (restarted without a strategy): the
	// rings start over without event time.
	poll(4, false)
	sv, _ = s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	kv, _ = s.State().Vertex("aa", "win", VertexQuery{Highlight: -1})
	if sv.Subtasks[0].SparkWatermark != nil || kv.Subtasks[0].SparkWatermark != nil || len(sv.Subtasks[0].SparkLag) != 1 {
		t.Errorf("without event time: source %v, keyed %v event-time samples, source lag %v; want none and one lag sample",
			sv.Subtasks[0].SparkWatermark, kv.Subtasks[0].SparkWatermark, sv.Subtasks[0].SparkLag)
	}
}

// Before Flink 2.1, partitions of the holding subtask whose last records
// were produced as recently as each other are not told apart: the holder
// names the subtask and its partitions as candidates, estimated, and no
// partition (records may carry older timestamps than their produce times).
func TestWatermarkHolderEstimatedTieIsUndetermined(t *testing.T) {
	e := etJob{srcP: 2, parts: 4, quiet: -1, split: false,
		splitWM: func(p int32) int64 { return base + int64(3-p)*1000 }}
	e.keyedWM = base
	s, _ := e.store(t)
	jv, _ := s.State().Job("jm", "aa")
	h := jv.EventTime.Holder
	reader := freshOwner(2)(assign.TopicPartition{Topic: "clicks", Partition: 3})
	var want []string
	for p := range int32(4) {
		if freshOwner(2)(assign.TopicPartition{Topic: "clicks", Partition: p}) == reader {
			want = append(want, "clicks-"+strconv.Itoa(int(p)))
		}
	}
	if h == nil || h.Subtask != reader || h.Cause != HoldUndetermined || h.Kind != Estimated || h.Topic != "" || h.Partition != -1 || !slices.Equal(h.Candidates, want) {
		t.Fatalf("holder %+v, want subtask %d undetermined among %v, estimated", h, reader, want)
	}
}

// More source subtasks than partitions with an idle timeout: the readers
// without a split have no watermark while the window's input advances, so
// Flink skips them as idle; they are marked skipped and the job seen to
// skip idle inputs, and the holder is a reader with partitions.
func TestStarvedSubtasksSkippedWithIdleness(t *testing.T) {
	e := etJob{srcP: 4, parts: 2, quiet: -1, split: true,
		splitWM: func(p int32) int64 { return base + 50_000 + int64(p)*1000 }}
	e.keyedWM = base + 50_000
	s, _ := e.store(t)
	jv, _ := s.State().Job("jm", "aa")
	h := jv.EventTime.Holder
	holder := freshOwner(4)(assign.TopicPartition{Topic: "clicks", Partition: 0})
	if h == nil || h.Cause == HoldStarved || h.Subtask != holder || h.Partition != 0 || !h.SkipsIdle {
		t.Fatalf("holder %+v, want clicks-0 on subtask %d, the job seen to skip idle inputs", h, holder)
	}
	vv, _ := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	for _, r := range vv.Subtasks {
		if starved := len(r.Partitions) == 0; r.Watermark.Skipped != starved || r.Watermark.Starved != starved {
			t.Errorf("subtask %d skipped %v starved %v, want both %v", r.Subtask, r.Watermark.Skipped, r.Watermark.Starved, starved)
		}
	}
}
