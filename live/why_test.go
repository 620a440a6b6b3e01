package live

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/plan"
)

const (
	wSrc   = "src"
	wKeyed = "keyed"
)

// whyRows is p subtask rows with every figure unknown.
func whyRows(p int) []SubtaskRow {
	rows := make([]SubtaskRow, p)
	for i := range rows {
		rows[i] = SubtaskRow{Subtask: i, Rate: -1, Lag: -1, Busy: -1, BackPressured: -1, Idle: -1, RecordsIn: -1, RecordsOut: -1, StateSize: -1}
	}
	return rows
}

// freshView is a running Kafka source at p whose partitions sit where a
// fresh start puts them (the prediction exact), produced at rate(tp)
// records/s (-1 unknown).
func freshView(p int, topics []assign.Topic, rate func(assign.TopicPartition) float64) VertexView {
	vv := VertexView{ID: wSrc, Name: "Source: Kafka Source", JobState: "RUNNING", Parallelism: p, MaxParallelism: 128, Source: true, Kafka: true,
		Subtasks: whyRows(p), Prediction: &Prediction{Mode: ModeFresh, Headline: Headline{Kind: BasisExact}}}
	for _, t := range topics {
		vv.Topics = append(vv.Topics, t.Name)
	}
	for _, tp := range assign.Partitions(topics) {
		o, _ := assign.KafkaSplitOwner(tp, p)
		vv.Subtasks[o].Partitions = append(vv.Subtasks[o].Partitions, PartitionCell{Topic: tp.Topic, Partition: tp.Partition,
			Current: 10, Committed: 5, End: 11, Lag: 0, Rate: rate(tp), Predicted: o, Basis: BasisExact})
	}
	for i := range vv.Subtasks {
		sumRow(&vv.Subtasks[i], VertexQuery{Highlight: -1})
	}
	return vv
}

// keyedView is a running keyed vertex at p with records in per subtask.
func keyedView(p, maxP int, in []float64) VertexView {
	vv := VertexView{ID: wKeyed, Name: "Window", JobState: "RUNNING", Parallelism: p, MaxParallelism: maxP, Keyed: true, Subtasks: whyRows(p)}
	for i := range vv.Subtasks {
		kg, _ := assign.KeyGroupRangeFor(maxP, p, i)
		vv.Subtasks[i].KeyGroups = &KeyGroupSpan{Start: kg.Start, End: kg.End, Size: kg.Size()}
		if in != nil {
			vv.Subtasks[i].RecordsIn = in[i]
		}
	}
	return vv
}

// setAll sets a figure of every subtask.
func setAll(vv *VertexView, f func(*SubtaskRow)) {
	for i := range vv.Subtasks {
		f(&vv.Subtasks[i])
	}
}

// jobOf is the job's vertices as why sees them, taken from the views.
func jobOf(vvs ...VertexView) []whyVertex {
	var out []whyVertex
	for _, vv := range vvs {
		w := whyVertex{ID: vv.ID, Name: vv.Name}
		for _, r := range vv.Subtasks {
			w.Busy = append(w.Busy, r.Busy)
			w.BackPressured = append(w.BackPressured, r.BackPressured)
		}
		out = append(out, w)
	}
	return out
}

func withInputs(job []whyVertex, id string, inputs ...string) []whyVertex {
	for i := range job {
		if job[i].ID == id {
			job[i].Inputs = inputs
		}
	}
	return job
}

var (
	whyOrders = []assign.Topic{{Name: "orders", Partitions: 8}}
	whyClicks = []assign.Topic{{Name: "clicks", Partitions: 2}, {Name: "pageviews", Partitions: 2}}
)

func TestExplain(t *testing.T) {
	// orders at p = 4 starts at subtask 3: partitions 0 and 4 are both on
	// subtask 3, and carry most of the traffic.
	hotRate := func(tp assign.TopicPartition) float64 {
		switch tp.Partition {
		case 0:
			return 100
		case 4:
			return 60
		}
		return 10
	}
	hot := freshView(4, whyOrders, hotRate)
	setAll(&hot, func(r *SubtaskRow) { r.Busy, r.BackPressured, r.RecordsIn = 0.3, 0, r.Rate })
	hot.Subtasks[3].Busy, hot.Subtasks[3].RecordsIn = 0.99, 120
	hotLine := WhyLine{Kind: WhyHot, Subtasks: []int{3},
		Partitions: []WhyPartition{{"orders", 0, 100}, {"orders", 4, 60}},
		Facts: []WhyFact{observed(FactShare, 160.0/220), observed(FactProduced, 160), observed(FactTotal, 220), observed(FactUnknownRates, 0),
			observed(FactBusy, 0.99), observed(FactRead, 120), {FactLagGrowth, 40, Estimated}},
		Placement: &WhyPlacement{Model: ModeFresh, Parallelism: 4, Topics: []WhyTopic{{"orders", 8, 3}}},
		// A restore 4 → 5 parts them, but orders-0 alone needs 150 % of a
		// subtask (100/s of the 66.7/s that 20/s at 30 % busy gives): no
		// parallelism carries it.
		Rescale: &WhyRescale{History: []int{4}, Limit: 8, Capacity: 20 / 0.3, Utilization: 1.5, Busiest: 3, None: NoTargetPartition, Apart: 5,
			Partition: &WhyPartition{Topic: "orders", Partition: 0, Rate: 100}},
	}

	// A hot subtask reading more partitions than the ones that make it
	// hot; busy and records in unknown.
	mixed := freshView(4, []assign.Topic{{Name: "orders", Partitions: 12}}, func(tp assign.TopicPartition) float64 {
		if tp.Partition == 0 {
			return 90
		}
		return 10
	})
	setAll(&mixed, func(r *SubtaskRow) { r.BackPressured = 0 })

	// clicks and pageviews both start at subtask 1 at p = 4: subtasks 0
	// and 3 read nothing. Rates unknown: no share lines.
	idle := freshView(4, whyClicks, func(assign.TopicPartition) float64 { return -1 })
	idleLine := WhyLine{Kind: WhyIdle, Subtasks: []int{0, 3}, Facts: []WhyFact{observed(FactPartitions, 4)},
		Placement: &WhyPlacement{Model: ModeFresh, Parallelism: 4, Topics: []WhyTopic{{"clicks", 2, 1}, {"pageviews", 2, 1}}, Reached: []int{1, 2}},
		// A fresh start at p = 3 would idle subtask 2; a restore 4 → 3
		// deals the four splits out in contiguous chunks, one or two each.
		Target: 3,
	}

	// Fewer partitions than subtasks, after a restore.
	few := freshView(4, []assign.Topic{{Name: "orders", Partitions: 3}}, func(assign.TopicPartition) float64 { return -1 })
	few.Restored, few.Prediction.Mode, few.Prediction.History = &Restored{CheckpointID: 3}, ModeRestore, []int{3, 4}

	// Keyed: subtask 3 receives 70% with a quarter of the key groups.
	keys := keyedView(4, 128, []float64{10, 10, 10, 70})
	setAll(&keys, func(r *SubtaskRow) { r.Busy, r.BackPressured = 0.2, 0 })
	keys.Subtasks[3].Busy = 0.95

	// Keyed at p = 100 over 128 key groups: 28 subtasks own 2, 72 own 1,
	// and every key group receives the same.
	rangesIn := make([]float64, 100)
	for i := range rangesIn {
		kg, _ := assign.KeyGroupRangeFor(128, 100, i)
		rangesIn[i] = float64(kg.Size())
	}
	ranges := keyedView(100, 128, rangesIn)
	var doubles []int
	for i, x := range rangesIn {
		if x == 2 {
			doubles = append(doubles, i)
		}
	}
	rangesLine := func(s int) WhyLine {
		kg := *ranges.Subtasks[s].KeyGroups
		return WhyLine{Kind: WhyRanges, Subtasks: []int{s}, KeyGroups: &kg, Target: 128, Facts: []WhyFact{
			observed(FactShare, 2.0/128), observed(FactRecordsIn, 2), observed(FactTotal, 128),
			computed(FactKeyGroupShare, 2.0/128), computed(FactRangeMin, 1), computed(FactRangeMax, 2)}}
	}
	lastRanges := rangesLine(doubles[2])
	lastRanges.More = len(doubles) - 3

	// Keyed subtasks that receive nothing.
	keyedIdle := keyedView(4, 128, []float64{40, 0, 40, 40})

	// Backpressure: the source waits; downstream, Window's subtask 1 is
	// busy and not backpressured.
	bpSrc := freshView(2, []assign.Topic{{Name: "orders", Partitions: 4}}, func(assign.TopicPartition) float64 { return 50 })
	setAll(&bpSrc, func(r *SubtaskRow) { r.Busy, r.BackPressured, r.RecordsIn = 0.1, 0.8, 100 })
	bpSrc.Subtasks[1].BackPressured = 0.6
	window := keyedView(2, 128, []float64{50, 50})
	setAll(&window, func(r *SubtaskRow) { r.Busy, r.BackPressured = 0.4, 0 })
	window.Subtasks[1].Busy = 0.99
	// A second vertex the source sends to, busy too, after Window in the
	// plan: the trace finds Window first.
	sink := keyedView(2, 128, []float64{50, 50})
	sink.ID, sink.Name = "sink", "Sink"
	setAll(&sink, func(r *SubtaskRow) { r.Busy, r.BackPressured = 0.85, 0 })
	mapV := VertexView{ID: "map", Name: "Map", Subtasks: whyRows(2)}
	setAll(&mapV, func(r *SubtaskRow) { r.Busy, r.BackPressured = 0.3, 0.5 })
	bpFacts := func(peer ...WhyFact) []WhyFact { return append([]WhyFact{observed(FactBackPressured, 0.8)}, peer...) }

	// Nothing skewed.
	even := freshView(4, whyOrders, func(assign.TopicPartition) float64 { return 25 })
	setAll(&even, func(r *SubtaskRow) { r.Busy, r.BackPressured, r.RecordsIn = 0.5, 0, 50 })

	// Even, but subtask 2 reads less than its partitions produce.
	behind := even
	behind.Subtasks = slices.Clone(even.Subtasks)
	behind.Subtasks[2].Busy, behind.Subtasks[2].RecordsIn = 1, 30

	for _, tc := range []struct {
		name string
		vv   VertexView
		job  []whyVertex
		want *WhyView
	}{
		{"hot partitions sharing a subtask", hot, jobOf(hot), &WhyView{Lines: []WhyLine{hotLine}}},
		{"a hot subtask's other partitions; busy and records in unknown", mixed, jobOf(mixed), &WhyView{Lines: []WhyLine{{
			Kind: WhyHot, Subtasks: []int{3}, Partitions: []WhyPartition{{"orders", 0, 90}},
			Facts: []WhyFact{observed(FactShare, 110.0/200), observed(FactPartitionsShare, 90.0/200), observed(FactProduced, 110), observed(FactTotal, 200),
				observed(FactUnknownRates, 0), computed(FactOnePartition, 90)},
		}}}},
		{"idle subtasks by start index", idle, jobOf(idle), &WhyView{Lines: []WhyLine{idleLine}}},
		{"idle subtasks: fewer partitions than subtasks, restored", few, jobOf(few), &WhyView{Lines: []WhyLine{{
			Kind: WhyIdle, Subtasks: []int{2}, Facts: []WhyFact{observed(FactPartitions, 3)},
			// The restore model at p = 3 gives each of 3 subtasks a split.
			Target: 3,
		}}}},
		{"keyed: imbalance in the keys", keys, jobOf(keys), &WhyView{Lines: []WhyLine{{
			Kind: WhyKeys, Subtasks: []int{3}, KeyGroups: &KeyGroupSpan{96, 127, 32}, Facts: []WhyFact{
				observed(FactShare, 0.7), observed(FactRecordsIn, 70), observed(FactTotal, 100),
				computed(FactKeyGroupShare, 0.25), computed(FactRangeMin, 32), computed(FactRangeMax, 32), observed(FactBusy, 0.95)},
		}}}},
		{"keyed: imbalance in the range sizes, bounded", ranges, jobOf(ranges), &WhyView{Lines: []WhyLine{
			rangesLine(doubles[0]), rangesLine(doubles[1]), lastRanges}}},
		{"keyed: subtasks that receive nothing", keyedIdle, jobOf(keyedIdle), &WhyView{Lines: []WhyLine{
			{Kind: WhyKeyedIdle, Subtasks: []int{1}, Facts: []WhyFact{computed(FactRangeMin, 32), computed(FactRangeMax, 32)}}}}},
		{"backpressure traced along the plan's edges", bpSrc, withInputs(jobOf(bpSrc, window), wKeyed, wSrc), &WhyView{Lines: []WhyLine{{
			Kind: WhyBackpressured, Subtasks: []int{0, 1}, Facts: bpFacts(observed(FactPeerBusy, 0.99), observed(FactPeerBackPressured, 0)),
			Peer: &WhyPeer{ID: wKeyed, Name: "Window", Relation: RelDownstream, Subtask: 1, Culprit: true}}}}},
		{"backpressure through a backpressured vertex", bpSrc, withInputs(withInputs(jobOf(bpSrc, mapV, window), "map", wSrc), wKeyed, "map"), &WhyView{Lines: []WhyLine{{
			Kind: WhyBackpressured, Subtasks: []int{0, 1}, Facts: bpFacts(observed(FactPeerBusy, 0.99), observed(FactPeerBackPressured, 0)),
			Peer: &WhyPeer{ID: wKeyed, Name: "Window", Relation: RelDownstream, Via: []string{"Map"}, Subtask: 1, Culprit: true}}}}},
		{"backpressure without edges: a busy vertex later, no link claimed", bpSrc, jobOf(bpSrc, window), &WhyView{Lines: []WhyLine{{
			Kind: WhyBackpressured, Subtasks: []int{0, 1}, Facts: bpFacts(observed(FactPeerBusy, 0.99), observed(FactPeerBackPressured, 0)),
			Peer: &WhyPeer{ID: wKeyed, Name: "Window", Relation: RelLater, Subtask: 1, Culprit: true}}}}},
		{"backpressure with nothing busy downstream", bpSrc, withInputs(jobOf(bpSrc, mapV), "map", wSrc), &WhyView{Lines: []WhyLine{{
			Kind: WhyBackpressured, Subtasks: []int{0, 1}, Facts: bpFacts(observed(FactPeerBusy, 0.3), observed(FactPeerBackPressured, 0.5)),
			Peer: &WhyPeer{ID: "map", Name: "Map", Relation: RelDownstream, Subtask: 0}}}}},
		{"the keyed vertex holds up its input", window, withInputs(jobOf(bpSrc, window), wKeyed, wSrc), &WhyView{Lines: []WhyLine{{
			Kind: WhyBackpressuring, Subtasks: []int{1}, Facts: []WhyFact{observed(FactBusy, 0.99), observed(FactPeerBackPressured, 0.8)},
			Peer: &WhyPeer{ID: wSrc, Name: "Source: Kafka Source", Relation: RelUpstream, Subtask: -1}}}}},
		{"a busy vertex where the backpressure does not start", sink, withInputs(withInputs(jobOf(bpSrc, window, sink), wKeyed, wSrc), "sink", wSrc), &WhyView{Lines: []WhyLine{{
			Kind: WhyBalanced, Subtasks: []int{}, Facts: []WhyFact{observed(FactTotal, 100), observed(FactMinShare, 0.5), observed(FactMaxShare, 0.5), observed(FactBackPressured, 0)}}}}},
		{"the keyed vertex busy, a backpressured vertex earlier, no edges", window, jobOf(bpSrc, window), &WhyView{Lines: []WhyLine{{
			Kind: WhyBackpressuring, Subtasks: []int{1}, Facts: []WhyFact{observed(FactBusy, 0.99), observed(FactPeerBackPressured, 0.8)},
			Peer: &WhyPeer{ID: wSrc, Name: "Source: Kafka Source", Relation: RelEarlier, Subtask: -1}}}}},
		{"a subtask falling behind", behind, jobOf(behind), &WhyView{Lines: []WhyLine{{Kind: WhyBehind, Subtasks: []int{2},
			Facts: []WhyFact{observed(FactProduced, 50), observed(FactUnknownRates, 0), observed(FactBusy, 1), observed(FactRead, 30), {FactLagGrowth, 20, Estimated}}}}}},
		{"nothing skewed", even, jobOf(even), &WhyView{Lines: []WhyLine{{Kind: WhyBalanced, Subtasks: []int{},
			Facts: []WhyFact{observed(FactTotal, 200), observed(FactMinShare, 0.25), observed(FactMaxShare, 0.25), observed(FactUnknownRates, 0), observed(FactBackPressured, 0)}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, explain(&tc.vv, tc.job)); diff != "" {
				t.Errorf("explain (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExplainUnknownFigures: a line whose figure is unknown (-1) is left
// out, and a panel with nothing to say names what it lacks.
func TestExplainUnknownFigures(t *testing.T) {
	rates := freshView(4, whyOrders, func(assign.TopicPartition) float64 { return -1 })
	noIn := keyedView(4, 128, nil)
	noMaxP := keyedView(4, 128, []float64{1, 1, 1, 1})
	noMaxP.MaxParallelism = 0
	setAll(&noMaxP, func(r *SubtaskRow) { r.KeyGroups = nil })
	noIDs := freshView(4, nil, nil)
	// One partition's rate not known yet: left out of the shares, said so.
	oneUnknown := freshView(4, whyOrders, func(tp assign.TopicPartition) float64 {
		if tp.Partition == 7 {
			return -1
		}
		return 25
	})
	// Backpressure unknown: no backpressure line, no "none is
	// backpressured".
	noBP := freshView(4, whyOrders, func(assign.TopicPartition) float64 { return 25 })
	stopped := noBP
	stopped.JobState = "FINISHED"
	for _, tc := range []struct {
		name string
		vv   VertexView
		want *WhyView
	}{
		{"no produce rates", rates, &WhyView{Lines: []WhyLine{{Kind: WhyUnknown, Subtasks: []int{}, Missing: []string{MissingRates}}}}},
		{"no records in", noIn, &WhyView{Lines: []WhyLine{{Kind: WhyUnknown, Subtasks: []int{}, Missing: []string{MissingRecordsIn}}}}},
		{"no key groups", noMaxP, &WhyView{Lines: []WhyLine{{Kind: WhyUnknown, Subtasks: []int{}, Missing: []string{MissingKeyGroups}}}}},
		{"no partitions listed", noIDs, &WhyView{Lines: []WhyLine{{Kind: WhyUnknown, Subtasks: []int{}, Missing: []string{MissingPartitions}}}}},
		{"one rate unknown", oneUnknown, &WhyView{Lines: []WhyLine{{Kind: WhyBalanced, Subtasks: []int{},
			Facts: []WhyFact{observed(FactTotal, 175), observed(FactMinShare, 25.0/175), observed(FactMaxShare, 50.0/175), observed(FactUnknownRates, 1)}}}}},
		{"backpressure unknown", noBP, &WhyView{Lines: []WhyLine{{Kind: WhyBalanced, Subtasks: []int{},
			Facts: []WhyFact{observed(FactTotal, 200), observed(FactMinShare, 0.25), observed(FactMaxShare, 0.25), observed(FactUnknownRates, 0)}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, explain(&tc.vv, jobOf(tc.vv))); diff != "" {
				t.Errorf("explain (-want +got):\n%s", diff)
			}
		})
	}
	if w := (&Store{}).why(&stopped, &flink.JobSnapshot{State: "FINISHED"}); w != nil {
		t.Errorf("why of a finished job = %+v, want none: its figures are the last it reported", w)
	}
}

// TestWhyClaimsMatchAssign: what the lines say about Flink's rules is what
// assign computes, for many topic sets and parallelisms.
func TestWhyClaimsMatchAssign(t *testing.T) {
	names := []string{"orders", "clicks", "pageviews", "inventory.events", "topic-a", "topic-b", "payments", "user-events"}
	checked := map[string]int{}
	for p := 2; p <= 9; p++ {
		for a := range names {
			for b := a + 1; b < len(names); b++ {
				for _, n := range []int{2, 3, 5} {
					topics := []assign.Topic{{Name: names[a], Partitions: n}, {Name: names[b], Partitions: n + 1}}
					// Partition 0 of both topics is hot.
					vv := freshView(p, topics, func(tp assign.TopicPartition) float64 {
						if tp.Partition == 0 {
							return 100
						}
						return 1
					})
					fresh, err := assign.FreshAssignment(topics, p)
					if err != nil {
						t.Fatal(err)
					}
					w := explain(&vv, jobOf(vv))
					if w == nil {
						t.Fatalf("p=%d %v: no lines", p, topics)
					}
					for _, l := range w.Lines {
						checked[l.Kind]++
						switch l.Kind {
						case WhyHot:
							checkHot(t, p, topics, l)
						case WhyIdle:
							checkIdle(t, p, topics, fresh, l)
						}
					}
				}
			}
		}
	}
	if checked[WhyHot] == 0 || checked[WhyIdle] == 0 {
		t.Errorf("lines checked: %v, want hot and idle lines among them", checked)
	}
}

func checkHot(t *testing.T, p int, topics []assign.Topic, l WhyLine) {
	t.Helper()
	s := l.Subtasks[0]
	var tps []assign.TopicPartition
	for _, np := range l.Partitions {
		tp := assign.TopicPartition{Topic: np.Topic, Partition: np.Partition}
		tps = append(tps, tp)
		if o, _ := assign.KafkaSplitOwner(tp, p); o != s {
			t.Errorf("p=%d %v: the line names %v on subtask %d, assign puts it on %d", p, topics, tp, s, o)
		}
	}
	if pl := l.Placement; pl != nil {
		for _, wt := range pl.Topics {
			if si, _ := assign.KafkaStartIndex(wt.Name, p); si != wt.Start {
				t.Errorf("p=%d: the line says %q starts at %d, assign.KafkaStartIndex says %d", p, wt.Name, wt.Start, si)
			}
		}
	}
	if len(tps) < 2 {
		return
	}
	// A running job is rescaled by a restore from a savepoint taken now.
	apartAt := func(q int) bool {
		rr, err := assign.Restore(assign.RestoreInput{Topics: topics, History: []int{p, q}})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int]bool{}
		for _, tp := range tps {
			o, _ := rr.Assignment.OwnerOf(tp)
			if seen[o] || slices.Contains(rr.Uncertain, tp) {
				return false
			}
			seen[o] = true
		}
		return true
	}
	total := 0
	for _, tt := range topics {
		total += tt.Partitions
	}
	first := 0
	for q := p + 1; q <= total; q++ {
		if apartAt(q) {
			first = q
			break
		}
	}
	if l.Target != first {
		t.Errorf("p=%d %v: target %d for %v, want %d (the smallest p above at which assign's restore from p puts them apart)", p, topics, l.Target, tps, first)
	}
}

func checkIdle(t *testing.T, p int, topics []assign.Topic, fresh assign.Assignment, l WhyLine) {
	t.Helper()
	var idle []int
	for i, ps := range fresh.Subtasks {
		if len(ps) == 0 {
			idle = append(idle, i)
		}
	}
	if !slices.Equal(l.Subtasks, idle) {
		t.Errorf("p=%d %v: idle line names %v, assign leaves %v without a partition", p, topics, l.Subtasks, idle)
	}
	if pl := l.Placement; pl != nil {
		for _, wt := range pl.Topics {
			if si, _ := assign.KafkaStartIndex(wt.Name, p); si != wt.Start {
				t.Errorf("p=%d: the line says %q starts at %d, assign.KafkaStartIndex says %d", p, wt.Name, wt.Start, si)
			}
		}
		for _, s := range pl.Reached {
			if len(fresh.Subtasks[s]) == 0 {
				t.Errorf("p=%d %v: the line says the topics reach subtask %d, assign gives it nothing", p, topics, s)
			}
		}
	}
	want := 0
	for q := p - 1; q >= 1; q-- {
		rr, err := assign.Restore(assign.RestoreInput{Topics: topics, History: []int{p, q}})
		if err != nil {
			t.Fatal(err)
		}
		if !hasIdle(rr.Assignment) && len(rr.Uncertain) == 0 {
			want = q
			break
		}
	}
	if l.Target != want {
		t.Errorf("p=%d %v: idle target %d, want %d (the largest p below at which assign's restore from p gives every subtask a partition)", p, topics, l.Target, want)
	}
}

// TestWhyRestoreClaimsMatchAssign: after a restore the placement names the
// restore model, and the target is where assign's restore model puts the
// hot partitions apart.
func TestWhyRestoreClaimsMatchAssign(t *testing.T) {
	topics := []assign.Topic{{Name: "orders", Partitions: 12}}
	history := []int{4, 6}
	rr, err := assign.Restore(assign.RestoreInput{Topics: topics, History: history})
	if err != nil {
		t.Fatal(err)
	}
	vv := VertexView{ID: wSrc, Name: "Source: Kafka Source", Parallelism: 6, Kafka: true, Source: true, Topics: []string{"orders"},
		Restored: &Restored{CheckpointID: 4}, Subtasks: whyRows(6),
		Prediction: &Prediction{Mode: ModeRestore, History: history, Headline: Headline{Kind: BasisExact}}}
	hot := rr.Assignment.Subtasks[0]
	for tp, o := range rr.Assignment.All() {
		rate := 1.0
		if o == 0 {
			rate = 100
		}
		vv.Subtasks[o].Partitions = append(vv.Subtasks[o].Partitions, PartitionCell{Topic: tp.Topic, Partition: tp.Partition, Rate: rate, Predicted: o, Basis: BasisExact})
	}
	w := explain(&vv, jobOf(vv))
	if w == nil || w.Lines[0].Kind != WhyHot || w.Lines[0].Subtasks[0] != 0 {
		t.Fatalf("lines %+v, want subtask 0 hot first", w)
	}
	l := w.Lines[0]
	if diff := cmp.Diff(&WhyPlacement{Model: ModeRestore, Parallelism: 6, History: history}, l.Placement); diff != "" {
		t.Errorf("placement (-want +got):\n%s", diff)
	}
	var named []assign.TopicPartition
	for _, p := range l.Partitions {
		named = append(named, assign.TopicPartition{Topic: p.Topic, Partition: p.Partition})
	}
	if len(named) < 2 || len(named) > len(hot) {
		t.Fatalf("named %v of subtask 0's %v", named, hot)
	}
	want := 0
	for q := 7; q <= 12 && want == 0; q++ {
		r, err := assign.Restore(assign.RestoreInput{Topics: topics, History: []int{4, 6, q}})
		if err != nil {
			t.Fatal(err)
		}
		if apart(named, r.Uncertain, r.Assignment.OwnerOf) {
			want = q
		}
	}
	if l.Target != want || want == 0 {
		t.Errorf("target %d, want %d: the smallest p above 6 at which the restore model puts %v apart", l.Target, want, named)
	}
}

// sandboxOrders is the sandbox's orders source at p = 4 from a fresh
// start: orders-0 and orders-4 hot, both on subtask 3; subtask 3 saturated,
// the others busy in proportion to what they read (capacity cap records/s).
func sandboxOrders(t *testing.T, hot0, hot4, capacity float64) VertexView {
	t.Helper()
	topics := []assign.Topic{{Name: "inventory.events", Partitions: 3}, {Name: "orders", Partitions: 12}}
	vv := freshView(4, topics, func(tp assign.TopicPartition) float64 {
		switch {
		case tp.Topic == "orders" && tp.Partition == 0:
			return hot0
		case tp.Topic == "orders" && tp.Partition == 4:
			return hot4
		}
		return 10
	})
	for i := range vv.Subtasks {
		r := &vv.Subtasks[i]
		r.BackPressured, r.RecordsOut = 0, min(r.Rate, capacity)
		r.Busy = min(1, r.Rate/capacity)
	}
	if o0, _ := assign.KafkaSplitOwner(assign.TopicPartition{Topic: "orders", Partition: 0}, 4); o0 != 3 {
		t.Fatalf("orders-0 starts on subtask %d at p = 4, want 3", o0)
	}
	return vv
}

// TestWhyTargetIsARestore: the hot line's target on the sandbox's orders
// source is judged as the restore from a savepoint a running job gets, not
// as a fresh start. A fresh start at p = 5 parts orders-0 and orders-4,
// but the restore 4 → 5 keeps them together; the target is the smallest p
// at which assign.Restore parts them, with its busiest subtask within the
// capacity, and its planner history continues the job's.
func TestWhyTargetIsARestore(t *testing.T) {
	vv := sandboxOrders(t, 85, 40, 150)
	w := explain(&vv, jobOf(vv))
	if w == nil || w.Lines[0].Kind != WhyHot || w.Lines[0].Subtasks[0] != 3 {
		t.Fatalf("lines %+v, want subtask 3 hot first", w)
	}
	l := w.Lines[0]
	named := []assign.TopicPartition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 4}}
	if got := []assign.TopicPartition{{Topic: l.Partitions[0].Topic, Partition: l.Partitions[0].Partition}, {Topic: l.Partitions[1].Topic, Partition: l.Partitions[1].Partition}}; len(l.Partitions) != 2 || !slices.Equal(got, named) {
		t.Fatalf("the hot line names %+v, want orders-0 and orders-4", l.Partitions)
	}
	topics := []assign.Topic{{Name: "inventory.events", Partitions: 3}, {Name: "orders", Partitions: 12}}
	restoreAt := func(q int) assign.RestoreResult {
		rr, err := assign.Restore(assign.RestoreInput{Topics: topics, History: []int{4, q}})
		if err != nil {
			t.Fatal(err)
		}
		return rr
	}
	if r5 := restoreAt(5); apart(named, r5.Uncertain, r5.Assignment.OwnerOf) {
		t.Fatal("the restore model parts orders-0 and orders-4 at 4 → 5; this test wants the case where only a fresh start does")
	}
	if l.Target == 5 {
		t.Fatal("target p = 5: that is where a fresh start parts them, a restore 4 → 5 keeps them on one subtask")
	}
	want := 0
	for q := 5; q <= 15 && want == 0; q++ {
		if rr := restoreAt(q); apart(named, rr.Uncertain, rr.Assignment.OwnerOf) {
			want = q
		}
	}
	if want == 0 || l.Target != want {
		t.Fatalf("target %d, want %d: the smallest p at which assign.Restore from p = 4 parts them", l.Target, want)
	}
	rs := l.Rescale
	if rs == nil || rs.None != "" || !slices.Equal(rs.History, []int{4}) || rs.Capacity < 149 || rs.Capacity > 151 || rs.Utilization < 0 || rs.Utilization > 1 {
		t.Fatalf("rescale %+v, want history [4], capacity 150 and the busiest within it", rs)
	}
	// The busiest subtask at the target, by assign's own layout.
	rr := restoreAt(want)
	busiest := 0.0
	for _, ps := range rr.Assignment.Subtasks {
		sum := 0.0
		for _, tp := range ps {
			switch tp {
			case named[0]:
				sum += 85
			case named[1]:
				sum += 40
			default:
				sum += 10
			}
		}
		busiest = max(busiest, sum)
	}
	if got := rs.Utilization * rs.Capacity; got < busiest-0.01 || got > busiest+0.01 {
		t.Errorf("busiest at the target %.2f records/s, assign.Restore's layout gives %.2f", got, busiest)
	}
	if m := PlannerModelOf(&vv); !m.Restore || !slices.Equal(m.History, []int{4}) {
		t.Errorf("planner model %+v, want a restore continuing history [4]", m)
	}
}

// TestWhyNoRestoreTarget: when the hottest partition alone needs more than
// a subtask's capacity no parallelism carries it, and the line says so
// instead of offering one; when the history of a restored source is not
// known, no restore is modelled.
func TestWhyNoRestoreTarget(t *testing.T) {
	vv := sandboxOrders(t, 128, 60, 120)
	w := explain(&vv, jobOf(vv))
	l := w.Lines[0]
	if l.Kind != WhyHot || l.Target != 0 || l.Rescale == nil || l.Rescale.None != NoTargetPartition || l.Rescale.Partition == nil || l.Rescale.Partition.Partition != 0 {
		t.Fatalf("line %+v rescale %+v, want no target: orders-0 alone needs more than 120/s", l, l.Rescale)
	}
	if l.Rescale.Apart == 0 {
		t.Errorf("rescale %+v: it should still say where a restore parts them", l.Rescale)
	}

	lost := sandboxOrders(t, 85, 40, 150)
	lost.Restored = &Restored{CheckpointID: 7}
	lost.Prediction = &Prediction{Mode: ModeNone}
	for i := range lost.Subtasks {
		for k := range lost.Subtasks[i].Partitions {
			lost.Subtasks[i].Partitions[k].Basis, lost.Subtasks[i].Partitions[k].Predicted = BasisNotModelled, -1
		}
	}
	l = explain(&lost, jobOf(lost)).Lines[0]
	if l.Target != 0 || l.Rescale == nil || l.Rescale.None != NoTargetHistory {
		t.Errorf("restored before skewscope saw it: line %+v rescale %+v, want no target for lack of history", l, l.Rescale)
	}
}

// A target is judged only where the planner it links to can draw it:
// parallelism and target together at most plan.MaxSubtasks. Above half of
// that no target fits, and the line says the planner is what bounds it,
// not that no restore parts the partitions.
func TestWhyTargetWithinThePlannersBound(t *testing.T) {
	topics := []assign.Topic{{Name: "events", Partitions: 9000}}
	hot := []assign.TopicPartition{{Topic: "events", Partition: 0}, {Topic: "events", Partition: 1}}
	for _, tc := range []struct {
		p         int
		wantNone  string
		wantLimit int
	}{
		{4100, NoTargetPlanner, 4100},
		{4000, "", 4002}, // bounded by the restore model's work, within the planner's 4192
	} {
		e := &sourceExplainer{vv: &VertexView{Parallelism: tc.p}, p: tc.p, lag: -1,
			model: PlannerModel{Topics: topics, Restore: true, History: []int{tc.p}, layouts: map[int]modelLayout{}}}
		rs := e.rescale(hot, nil)
		if tc.wantNone == NoTargetPlanner && (rs.None != NoTargetPlanner || rs.Target != 0 || rs.Fresh != 0) {
			t.Errorf("p = %d: %+v, want no target, the planner's bound named", tc.p, rs)
		}
		if tc.wantNone == "" && rs.None == NoTargetPlanner {
			t.Errorf("p = %d: %+v blames the planner's bound, which allows %d more", tc.p, rs, plan.MaxSubtasks-2*tc.p)
		}
		if rs.Limit != tc.wantLimit || rs.Target+tc.p > plan.MaxSubtasks || rs.Fresh+tc.p > plan.MaxSubtasks {
			t.Errorf("p = %d: limit %d target %d fresh %d, want limit %d and every target within %d subtasks", tc.p, rs.Limit, rs.Target, rs.Fresh, tc.wantLimit, plan.MaxSubtasks)
		}
	}
}
