package live

import (
	"math"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
)

// TestLossRule walks one reader through the cases of the loss rule: below
// the log start, the log start moving further, the reader skipping to it
// and catching up past it, a rewind, and a topic created again.
func TestLossRule(t *testing.T) {
	var tr readTrack
	for i, step := range []struct {
		what            string
		pos, start      int64
		lost, behind    int64
		counted         int64
		lostFirstAtStep int // the step that first added, -1 none yet
	}{
		{"ahead of the log start", 100, 0, 0, 0, 0, -1},
		{"log start passes the position", 100, 300, 200, 200, 300, 1},
		{"the same poll again adds nothing", 100, 300, 200, 200, 300, 1},
		{"the log start moves further while behind: the difference", 150, 500, 400, 350, 500, 1},
		{"the client skips to the log start", 500, 500, 400, 0, 500, 1},
		{"catching up past it keeps the count", 800, 700, 400, 0, 700, 1},
		{"the log start passes the position again", 800, 900, 500, 100, 900, 1},
		{"the reader moved past a log start that moved further: from the position", 950, 1200, 750, 250, 1200, 1},
		{"a rewind below what is counted adds nothing", 100, 1200, 750, 1100, 1200, 1},
		{"the topic is created again: counted restarts lower", 5, 0, 750, 0, 0, 1},
		{"and counts from there", 5, 20, 765, 15, 20, 1},
		{"unknown figures change nothing", -1, 40, 765, 15, 20, 1},
	} {
		tr.observeStart(t0.Add(time.Duration(i)*time.Second), step.pos, step.start)
		if tr.lost != step.lost || tr.behind != step.behind || tr.counted != step.counted {
			t.Fatalf("step %d (%s): pos %d, log start %d: lost %d, behind %d, counted %d; want %d, %d, %d",
				i, step.what, step.pos, step.start, tr.lost, tr.behind, tr.counted, step.lost, step.behind, step.counted)
		}
		if step.lostFirstAtStep >= 0 && !tr.lostFirst.Equal(t0.Add(time.Duration(step.lostFirstAtStep)*time.Second)) {
			t.Errorf("step %d: first seen %v, want step %d", i, tr.lostFirst, step.lostFirstAtStep)
		}
	}
	if !tr.lostLast.Equal(t0.Add(10 * time.Second)) {
		t.Errorf("last seen %v, want the last step that added (10)", tr.lostLast)
	}
}

// lossPoll is a Kafka poll of testTopics with end offsets end and the
// log start of orders-0 at start (0 elsewhere).
func lossPoll(at time.Time, end, start int64) *kafka.Snapshot {
	ks := kafkaSnap(at, ends(end))
	for i := range ks.Topics {
		ps := append([]kafka.Partition(nil), ks.Topics[i].Partitions...)
		if ks.Topics[i].Name == "orders" {
			ps[0].Start = start
		}
		ks.Topics[i].Partitions = ps
	}
	return ks
}

// lossJob is the job of testTopics at p=4 with orders-0 at position pos
// (currentOffset pos-1) and every other partition caught up at end.
func lossJob(pos, end int64) flink.JobSnapshot {
	cur := func(tp assign.TopicPartition) int64 {
		if tp.Topic == "orders" && tp.Partition == 0 {
			return pos - 1
		}
		return end - 1
	}
	return flink.JobSnapshot{ID: "aa", Name: "enrich", State: "RUNNING", Vertices: []flink.VertexSnapshot{sourceVertex("src", 4, testTopics, freshOwner(4), cur)}}
}

func orders0(t *testing.T, vv VertexView) (PartitionCell, SubtaskRow) {
	t.Helper()
	for _, r := range vv.Subtasks {
		for _, c := range r.Partitions {
			if c.Topic == "orders" && c.Partition == 0 {
				return c, r
			}
		}
	}
	t.Fatal("no cell for orders-0")
	return PartitionCell{}, SubtaskRow{}
}

// TestStoreCountsRecordsDeletedUnread follows a source whose orders-0
// falls behind the log start, skips to it and catches up: the cell, the
// row, the vertex, the job, the overview and SourceLosses show the count,
// and a store started afresh counts from 0.
func TestStoreCountsRecordsDeletedUnread(t *testing.T) {
	now := t0
	s := New(Options{Now: func() time.Time { return now }})
	poll := func(at time.Time, end, start, pos int64) {
		now = at
		s.UpdateKafka(lossPoll(at, end, start))
		s.UpdateFlink(flinkSnap(at, lossJob(pos, end)))
	}
	poll(t0, 1000, 0, 900)
	poll(t0.Add(10*time.Second), 2000, 1200, 1000) // 200 deleted unread
	vv, _ := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	c, row := orders0(t, vv)
	if l := c.Reading.Lost; l == nil || l.Records != 200 || l.Behind != 200 || !l.FirstSeen.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("orders-0 lost %+v, want 200 records, 200 behind, first seen at the second poll", l)
	}
	if c.Reading.State != ReaderLost {
		t.Errorf("orders-0 state %q, want lost", c.Reading.State)
	}
	if row.RecordsLost != 200 || vv.RecordsLost != 200 {
		t.Errorf("row lost %d, vertex lost %d, want 200", row.RecordsLost, vv.RecordsLost)
	}
	f := figure(t, vv, FigureRecordsLost)
	if at := t0.Add(10 * time.Second); f.Kind != Observed || f.Value != 200 || f.Partition != "orders-0" || f.Records != 200 || f.Partitions != 1 ||
		!f.From.Equal(at) || !f.To.Equal(at) || f.Since.IsZero() {
		t.Errorf("loss figure %+v", f)
	}
	// The reader got past the log start skewscope saw (1200), but the log
	// start has moved on to 1500 meanwhile: 250 more.
	poll(t0.Add(20*time.Second), 3000, 1500, 1250)
	// Caught up past the log start: nothing more, nothing less.
	poll(t0.Add(30*time.Second), 4000, 1500, 3990)
	vv, _ = s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	c, _ = orders0(t, vv)
	if l := c.Reading.Lost; l == nil || l.Records != 450 || l.Behind != 0 || !l.LastSeen.Equal(t0.Add(20*time.Second)) {
		t.Fatalf("orders-0 lost %+v after skipping and catching up, want 450 records (200 + 1500 − 1250), none behind", l)
	}
	if f := figure(t, vv, FigureRecordsLost); !f.From.Equal(t0.Add(10*time.Second)) || !f.To.Equal(t0.Add(20*time.Second)) {
		t.Errorf("loss figure %+v, want the window of the two polls that counted", f)
	}
	jv, _ := s.State().Job("", "aa")
	ov := s.State().Overview()
	if jv.Vertices[0].RecordsLost != 450 || ov.Jobs[0].RecordsLost != 450 {
		t.Errorf("job page vertex lost %d, overview job lost %d, want 450", jv.Vertices[0].RecordsLost, ov.Jobs[0].RecordsLost)
	}
	var got int64
	for _, pl := range s.State().SourceLosses() {
		if pl.Endpoint != "jm" || pl.Job != "enrich" || pl.Vertex != "Source: Kafka Source" || pl.Cluster != "prod" {
			t.Errorf("source loss %+v: wrong source", pl)
		}
		got += pl.Records
		if pl.Records > 0 && (pl.Topic != "orders" || pl.Partition != 0) {
			t.Errorf("source loss %+v: only orders-0 lost records", pl)
		}
	}
	if n := len(s.State().SourceLosses()); got != 450 || n != 18 {
		t.Errorf("SourceLosses: %d entries summing to %d, want 18 partitions, 450", n, got)
	}
	// A minute later the state is no longer lost; the count stays.
	poll(t0.Add(95*time.Second), 5000, 1500, 4990)
	vv, _ = s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	if c, _ = orders0(t, vv); c.Reading.State == ReaderLost || c.Reading.Lost == nil || c.Reading.Lost.Records != 450 {
		t.Errorf("orders-0 a minute on: state %q, lost %+v, want another state and 450 kept", c.Reading.State, c.Reading.Lost)
	}

	// skewscope restarted: it counts what it sees from then on.
	s2 := New(Options{Now: func() time.Time { return now }})
	s2.UpdateKafka(lossPoll(now, 5000, 1500))
	s2.UpdateFlink(flinkSnap(now, lossJob(4990, 5000)))
	vv, _ = s2.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	if c, _ := orders0(t, vv); c.Reading.Lost != nil || vv.RecordsLost != 0 {
		t.Errorf("a fresh store shows lost %+v, vertex %d; want nothing (it starts at 0)", c.Reading.Lost, vv.RecordsLost)
	}
	if f := figure(t, vv, FigureRecordsLost); f.Value != 0 || f.Partitions != 0 || f.Behind != 0 {
		t.Errorf("a fresh store's loss figure %+v", f)
	}
}

// TestLossFollowsTheSourceAcrossARestore: the count belongs to the source
// by name, so the restored job's page keeps it, and a Kafka poll that
// moves the log start past a position is counted without a Flink poll.
func TestLossFollowsTheSourceAcrossARestore(t *testing.T) {
	now := t0
	s := New(Options{Now: func() time.Time { return now }})
	s.UpdateKafka(lossPoll(t0, 1000, 0))
	s.UpdateFlink(flinkSnap(t0, lossJob(400, 1000)))
	now = t0.Add(5 * time.Second)
	s.UpdateKafka(lossPoll(now, 1100, 600)) // Kafka first: 200 behind
	old := lossJob(400, 1100)
	old.State = "FINISHED"
	restored := lossJob(700, 1100)
	restored.ID = "bb"
	now = t0.Add(10 * time.Second)
	s.UpdateFlink(flinkSnap(now, restored, old))
	s.UpdateKafka(lossPoll(now, 1200, 900)) // the restored reader: 200 more,
	now = t0.Add(15 * time.Second)          // counted once Flink shows it still behind
	s.UpdateFlink(flinkSnap(now, restored, old))
	vv, err := s.State().Vertex("bb", "src", VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := orders0(t, vv); c.Reading.Lost == nil || c.Reading.Lost.Records != 400 {
		t.Errorf("restored job's orders-0 lost %+v, want 400 (200 before the restore, 200 after)", c.Reading.Lost)
	}
	ov, _ := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	if c, _ := orders0(t, ov); c.Reading.State != ReaderLost && c.Reading.State != ReaderStopped {
		t.Errorf("finished job's orders-0 state %q, want stopped or lost", c.Reading.State)
	}
}

// samples feeds a track n samples every step from at, the position and
// end offset given by pos(i) and end(i).
func samples(n int, step time.Duration, pos, end func(i int) int64) *readTrack {
	tr := &readTrack{}
	for i := range n {
		at := t0.Add(time.Duration(i) * step)
		tr.add(readSample{at: nanos(at), pos: pos(i), end: end(i), endAt: nanos(at.Add(-time.Second))})
	}
	return tr
}

func linear(a, b int64) func(int) int64 { return func(i int) int64 { return a + b*int64(i) } }

// TestReaderStates names each state's rule with a sequence of samples.
func TestReaderStates(t *testing.T) {
	last := func(n int, step time.Duration) time.Time { return t0.Add(time.Duration(n-1) * step) }
	for _, tc := range []struct {
		name       string
		tr         *readTrack
		now        time.Time
		running    bool
		fresh      bool
		wantState  ReaderState
		wantTrend  Trend
		wantCatch  CatchUp
		wantETA    float64 // seconds, for CatchUpETA
		wantPosRat float64 // -1 unknown, NaN: not checked
	}{
		{name: "ok: behind, keeping pace", tr: samples(12, 5*time.Second, linear(1000, 500), linear(1500, 500)), now: last(12, 5*time.Second),
			running: true, fresh: true, wantState: ReaderOK, wantTrend: TrendSteady, wantCatch: CatchUpSteady, wantPosRat: 100},
		{name: "catching up: ETA is lag over processing − produced", tr: samples(12, 5*time.Second, linear(0, 1000), linear(6000, 500)), now: last(12, 5*time.Second),
			running: true, fresh: true, wantState: ReaderOK, wantTrend: TrendShrinking, wantCatch: CatchUpETA, wantETA: float64(6000+500*11-1000*11) / 100, wantPosRat: 200},
		{name: "warning: lag growing at every sample", tr: samples(12, 5*time.Second, linear(0, 250), linear(100, 500)), now: last(12, 5*time.Second),
			running: true, fresh: true, wantState: ReaderWarning, wantTrend: TrendGrowing, wantCatch: CatchUpNever, wantPosRat: 50},
		{name: "stalled: the position stands while behind", tr: samples(12, 5*time.Second, linear(700, 0), linear(1000, 50)), now: last(12, 5*time.Second),
			running: true, fresh: true, wantState: ReaderStalled, wantTrend: TrendGrowing, wantCatch: CatchUpNever, wantPosRat: 0},
		{name: "caught up: no lag", tr: samples(12, 5*time.Second, linear(1000, 0), linear(1000, 0)), now: last(12, 5*time.Second),
			running: true, fresh: true, wantState: ReaderCaughtUp, wantTrend: TrendSteady, wantCatch: CatchUpCaughtUp, wantPosRat: 0},
		{name: "rewind: back below an earlier position", tr: samples(12, 5*time.Second, func(i int) int64 {
			if i < 8 {
				return 1000 + 100*int64(i)
			}
			return 200 + 100*int64(i)
		}, linear(5000, 100)), now: last(12, 5*time.Second), running: true, fresh: true, wantState: ReaderRewind, wantTrend: TrendUnknown, wantCatch: CatchUpUnknown, wantPosRat: -1},
		{name: "a rewind made up for is none", tr: samples(12, 5*time.Second, func(i int) int64 {
			if i == 5 {
				return 100
			}
			return 1000 + 100*int64(i)
		}, linear(5000, 100)), now: last(12, 5*time.Second), running: true, fresh: true, wantState: ReaderOK, wantPosRat: math.NaN()},
		{name: "stopped: the subtask does not run", tr: samples(12, 5*time.Second, linear(700, 0), linear(1000, 50)), now: last(12, 5*time.Second),
			running: false, fresh: true, wantState: ReaderStopped, wantPosRat: 0},
		{name: "unknown: too few samples", tr: samples(2, 5*time.Second, linear(700, 0), linear(1000, 50)), now: last(2, 5*time.Second),
			running: true, fresh: true, wantState: ReaderUnknown, wantTrend: TrendUnknown, wantPosRat: 0},
		{name: "unknown: a window shorter than Flink's metric refresh", tr: samples(8, time.Second, linear(700, 0), linear(1000, 50)), now: last(8, time.Second),
			running: true, fresh: true, wantState: ReaderUnknown, wantTrend: TrendUnknown, wantPosRat: 0},
		{name: "unknown: stale figures", tr: samples(12, 5*time.Second, linear(700, 0), linear(1000, 50)), now: last(12, 5*time.Second),
			running: true, fresh: false, wantState: ReaderUnknown, wantCatch: CatchUpUnknown, wantPosRat: 0},
		{name: "only the last minute counts", tr: samples(30, 5*time.Second, func(i int) int64 {
			if i < 15 {
				return 100
			}
			return 100 + 500*int64(i-15)
		}, linear(20000, 500)), now: last(30, 5*time.Second), running: true, fresh: true, wantState: ReaderOK, wantTrend: TrendSteady, wantPosRat: 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.tr.status()
			s := tc.tr.ring[len(tc.tr.ring)-1]
			r := reading(&st, max(0, s.end-s.pos), tc.running, tc.fresh, tc.now)
			if r.State != tc.wantState {
				t.Errorf("state %q, want %q (%+v)", r.State, tc.wantState, r)
			}
			if tc.wantTrend != "" && r.Trend != tc.wantTrend {
				t.Errorf("trend %q, want %q", r.Trend, tc.wantTrend)
			}
			if tc.wantCatch != "" && r.CatchUp != tc.wantCatch {
				t.Errorf("catch up %q, want %q", r.CatchUp, tc.wantCatch)
			}
			if tc.wantCatch == CatchUpETA && math.Abs(r.CatchUpSeconds-tc.wantETA) > 0.01 {
				t.Errorf("catch up in %v s, want %v", r.CatchUpSeconds, tc.wantETA)
			}
			if !math.IsNaN(tc.wantPosRat) && math.Abs(r.PositionRate-tc.wantPosRat) > 1e-6 {
				t.Errorf("position rate %v, want %v", r.PositionRate, tc.wantPosRat)
			}
		})
	}
	// Lost wins over every other state, for a minute after the last count.
	tr := samples(12, 5*time.Second, linear(700, 0), linear(1000, 50))
	tr.observeStart(t0.Add(55*time.Second), 700, 800)
	tr.observeStart(t0.Add(56*time.Second), 800, 800)
	st := tr.status()
	for _, tc := range []struct {
		now  time.Time
		want ReaderState
	}{{t0.Add(60 * time.Second), ReaderLost}, {t0.Add(115 * time.Second), ReaderLost}, {t0.Add(117 * time.Second), ReaderStalled}} {
		if r := reading(&st, 300, true, true, tc.now); r.State != tc.want || r.Lost == nil || r.Lost.Records != 100 {
			t.Errorf("at %v: state %q, lost %+v; want %q, 100 records", tc.now.Sub(t0), r.State, r.Lost, tc.want)
		}
	}
	if r := reading(&st, 300, true, true, t0.Add(60*time.Second)); r.CatchUp != CatchUpUnknown {
		t.Errorf("catch up %q while records are deleted unread, want unknown", r.CatchUp)
	}
	if r := reading(nil, 10, false, true, t0); r.State != ReaderStopped {
		t.Errorf("no samples, not running: %q, want stopped", r.State)
	}
}

// TestSubtaskCatchUp: a subtask's time to catch up uses Flink's records
// out/s against its partitions' produced records/s; its trend the sum of
// its partitions'.
func TestSubtaskCatchUp(t *testing.T) {
	cell := func(lag int64, pos, produced float64, state ReaderState) PartitionCell {
		return PartitionCell{Lag: lag, Reading: Reading{State: state, PositionRate: pos, ProducedRate: produced, Trend: trendOf(pos, produced)}}
	}
	for _, tc := range []struct {
		name    string
		row     SubtaskRow
		catch   CatchUp
		seconds float64
		trend   Trend
	}{
		{"faster than produced", SubtaskRow{RecordsOut: 300, Partitions: []PartitionCell{cell(6000, 150, 100, ReaderOK), cell(0, 100, 100, ReaderCaughtUp)}},
			CatchUpETA, 6000.0 / 100, TrendShrinking},
		{"slower than produced", SubtaskRow{RecordsOut: 120, Partitions: []PartitionCell{cell(6000, 60, 100, ReaderWarning), cell(10, 60, 60, ReaderOK)}},
			CatchUpNever, 0, TrendGrowing},
		{"records out unknown: the positions' rates", SubtaskRow{RecordsOut: -1, Partitions: []PartitionCell{cell(500, 150, 150, ReaderOK)}},
			CatchUpSteady, 0, TrendSteady},
		{"losing records", SubtaskRow{RecordsOut: 300, Partitions: []PartitionCell{cell(6000, 150, 100, ReaderLost)}},
			CatchUpUnknown, 0, TrendShrinking},
		{"caught up", SubtaskRow{RecordsOut: 300, Partitions: []PartitionCell{cell(0, 100, 100, ReaderCaughtUp)}},
			CatchUpCaughtUp, 0, TrendSteady},
		{"idle", SubtaskRow{RecordsOut: 0}, CatchUpUnknown, 0, TrendUnknown},
	} {
		r := tc.row
		sumRow(&r, VertexQuery{Highlight: -1})
		if r.CatchUp != tc.catch || math.Abs(r.CatchUpSeconds-tc.seconds) > 1e-9 || r.Trend != tc.trend {
			t.Errorf("%s: catch up %q in %v s, trend %q; want %q in %v s, %q", tc.name, r.CatchUp, r.CatchUpSeconds, r.Trend, tc.catch, tc.seconds, tc.trend)
		}
	}
}

// TestLagTimeHeldWhileThePositionStands: a reader stuck at one position
// whose samples the offset→time table evicts (an idle stretch, then
// traffic) keeps the lag in time it had, rather than the table's lower
// bound falling with the eviction.
func TestLagTimeHeldWhileThePositionStands(t *testing.T) {
	now := t0
	s := New(Options{Now: func() time.Time { return now }, TimeTableSize: 4})
	poll := func(at time.Time, end int64) {
		now = at
		s.UpdateKafka(kafkaSnap(at, ends(end)))
		s.UpdateFlink(flinkSnap(at, lossJob(1500, end)))
	}
	// 1000 → 2000 in the first minute, then idle for ten, then traffic.
	poll(t0, 1000)
	poll(t0.Add(time.Minute), 2000)
	poll(t0.Add(11*time.Minute), 2000)
	var prev float64
	for i, end := range []int64{2100, 2200, 2300, 2400, 2500} {
		poll(t0.Add(11*time.Minute+time.Duration(i+1)*10*time.Second), end)
		vv, _ := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
		c, _ := orders0(t, vv)
		if c.LagSeconds < prev {
			t.Fatalf("poll %d: lag in time fell from %v to %v s (%s) while the position stood at 1500 and lag grew to %d", i, prev, c.LagSeconds, c.LagKind, c.Lag)
		}
		prev = c.LagSeconds
	}
	// 1500 was the end 30 s into the first minute: 11 m 20 s before now.
	if want := (11*time.Minute + 50*time.Second - 30*time.Second).Seconds(); math.Abs(prev-want) > 0.5 {
		t.Errorf("lag in time %v s, want %v s from the samples that placed the position", prev, want)
	}
}

// TestCommitAndPositionReadTheSameLagTime: a group commit at the source's
// position shows the same lag in time on the topic page as the position on
// the vertex page, from the store's table at the view's instant.
func TestCommitAndPositionReadTheSameLagTime(t *testing.T) {
	now := t0
	s := New(Options{Now: func() time.Time { return now }})
	// Eight polls 10 s apart: the window (a minute) holds the last seven,
	// all behind; the table still places 3500 between the first two.
	for i := range 8 {
		at := t0.Add(time.Duration(i) * 10 * time.Second)
		end := int64(3000 + 1000*i)
		group := kafka.Group{Name: "enrich", State: "Empty", Freshness: kafka.Freshness{UpdatedAt: at},
			Partitions: []kafka.GroupPartition{{Topic: "orders", Partition: 0, Committed: 3500, Lag: end - 3500,
				// What the collector computed at its poll, from its own table.
				LagSeconds: 1, LagKind: kafka.TimeLagAtLeast}}}
		s.UpdateKafka(kafkaSnap(at, ends(end), group))
		s.UpdateFlink(flinkSnap(at, lossJob(3500, end)))
	}
	now = t0.Add(77 * time.Second)
	vv, _ := s.State().Vertex("aa", "src", VertexQuery{Highlight: -1})
	c, _ := orders0(t, vv)
	tv, err := s.State().Topic("prod", "orders")
	if err != nil {
		t.Fatal(err)
	}
	g := tv.Partitions[0].Groups[0]
	if g.LagSeconds != c.LagSeconds || g.LagKind != c.LagKind || c.LagKind != kafka.TimeLagInterpolated {
		t.Errorf("commit 3500: %v s (%s) on the topic page, position 3500: %v s (%s) on the vertex page; want the same, interpolated",
			g.LagSeconds, g.LagKind, c.LagSeconds, c.LagKind)
	}
	if g.Reading.State != ReaderStalled || tv.Groups[0].States[0] != (StateCount{ReaderStalled, 1}) {
		t.Errorf("group reading %+v, states %+v: a commit standing at 3500 while behind is stalled", g.Reading, tv.Groups[0].States)
	}
}

// TestGroupLoss: a group whose commit is below the log start loses records
// on the topic page and in GroupLosses.
func TestGroupLoss(t *testing.T) {
	s := New(Options{Now: func() time.Time { return t0.Add(10 * time.Second) }})
	for i, start := range []int64{0, 700} {
		at := t0.Add(time.Duration(i) * 10 * time.Second)
		group := kafka.Group{Name: "audit", State: "Empty", Freshness: kafka.Freshness{UpdatedAt: at},
			Partitions: []kafka.GroupPartition{{Topic: "orders", Partition: 0, Committed: 500, Lag: 500}}}
		ks := lossPoll(at, 1000, start)
		ks.Groups = []kafka.Group{group}
		s.UpdateKafka(ks)
	}
	tv, _ := s.State().Topic("prod", "orders")
	if g := tv.Partitions[0].Groups[0]; g.Reading.State != ReaderLost || g.Reading.Lost == nil || g.Reading.Lost.Records != 200 || tv.Groups[0].RecordsLost != 200 {
		t.Errorf("group reading %+v, group lost %d; want lost, 200", g.Reading, tv.Groups[0].RecordsLost)
	}
	gl := s.State().GroupLosses()
	if len(gl) != 1 || gl[0] != (PartitionLoss{Group: "audit", Cluster: "prod", Topic: "orders", Partition: 0, Records: 200}) {
		t.Errorf("GroupLosses = %+v", gl)
	}
}

func figure(t *testing.T, vv VertexView, name string) Figure {
	t.Helper()
	for _, f := range vv.Figures {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no figure %q in %+v", name, vv.Figures)
	return Figure{}
}

// TestCatchUpWaitsForEnoughSamples: two samples give rates, but no time to
// catch up is claimed on them, as no trend is; a lag of 0 is caught up at
// once.
func TestCatchUpWaitsForEnoughSamples(t *testing.T) {
	tr := samples(2, 5*time.Second, linear(0, 100), linear(1000, 500))
	st := tr.status()
	if r := reading(&st, 1900, true, true, t0.Add(5*time.Second)); r.CatchUp != CatchUpUnknown || r.Trend != TrendUnknown || r.PositionRate != 20 {
		t.Errorf("two samples: catch up %q, trend %q, position rate %v; want unknown, unknown, 20", r.CatchUp, r.Trend, r.PositionRate)
	}
	if r := reading(&st, 0, true, true, t0.Add(5*time.Second)); r.CatchUp != CatchUpCaughtUp {
		t.Errorf("two samples at lag 0: catch up %q, want caught-up", r.CatchUp)
	}
}
