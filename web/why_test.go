package web

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/live"
	"github.com/skewscope/skewscope/views"
)

// The sandbox-like store: the sandbox's two jobs with figures as the
// sandbox shows them a few minutes in. orders-enrichment reads orders
// (Zipf-like rates, partitions 0 and 4 hot, both on subtask 3 at p = 4)
// and inventory.events; its keyed vertex Enrich Orders has a hot subtask
// that backpressures the source. clickstream-sessions reads clicks and
// pageviews, which both start at subtask 1 at p = 4.
const (
	sbOrdersJob = "1c6320eb170e374b00ffc2969c689bbe"
	sbOrdersSrc = "fc34031e82f86b3b66304640fd8dcbbc"
	sbEnrich    = "fdfd989cc6e2fe8bad9176d0bd3de8cb"
	sbClickJob  = "c9e9d8a49fe79025033cd83e7300042a"
	sbClickSrc  = "7fbccabdf9bb03f169f90ec3dbd34470"
	sbSession   = "acc3d7e96df1a6a3c86bd6e03d231ff3"
)

var sbRates = map[string][]float64{
	"orders":           {84.9, 12.0, 37.9, 17.0, 39.9, 9.5, 19.0, 6.5, 20.5, 25.0, 12.0, 7.5},
	"inventory.events": {15.5, 14.5, 16.5},
	"clicks":           {72.9, 71.9},
	"pageviews":        {84.4, 84.9},
}

// sbFigures are one vertex's subtask figures: busy, backpressured, records
// in and out per second.
type sbFigures struct{ busy, bp, in, out []float64 }

func (f sbFigures) subtasks() []flink.SubtaskSnapshot {
	out := make([]flink.SubtaskSnapshot, len(f.busy))
	for i := range out {
		out[i] = flink.SubtaskSnapshot{Index: i, Status: "RUNNING", BusyRatio: f.busy[i], BackPressuredRatio: f.bp[i], IdleRatio: 1 - f.busy[i] - f.bp[i],
			RecordsInPerSecond: f.in[i], RecordsOutPerSecond: f.out[i], StateSize: 1 << 20}
	}
	return out
}

// sbSource is a source reading topics at p as a fresh start places them,
// lag growing on subtask lagging.
func sbSource(id string, topics []assign.Topic, p int, f sbFigures) flink.VertexSnapshot {
	var ids []string
	var vals []flink.Metric
	for _, tp := range assign.Partitions(topics) {
		o, _ := assign.KafkaSplitOwner(tp, p)
		base := fmt.Sprintf("%d.Source__Kafka_Source.KafkaSourceReader.topic.%s.partition.%d.", o, flink.SanitizeMetricName(tp.Topic), tp.Partition)
		ids = append(ids, base+"currentOffset", base+"committedOffset")
		cur := 9_000
		if f.busy[o] >= 1 {
			cur = 6_000 // the busy subtask falls behind
		}
		vals = append(vals, flink.Metric{ID: base + "currentOffset", Raw: fmt.Sprint(cur)}, flink.Metric{ID: base + "committedOffset", Raw: fmt.Sprint(cur - 500)})
	}
	obs := flink.ParseKafkaSourceMetricIDs(ids)
	obs.ApplyValues(vals)
	return flink.VertexSnapshot{ID: id, Name: "Source: Kafka Source", Parallelism: p, MaxParallelism: 128, Source: true, Kafka: obs,
		Subtasks: f.subtasks(), BackpressureLevel: "ok"}
}

func sbKeyed(id, name, src string, f sbFigures) flink.VertexSnapshot {
	return flink.VertexSnapshot{ID: id, Name: name, Parallelism: len(f.busy), MaxParallelism: 128, Keyed: true, Inputs: []string{src},
		Subtasks: f.subtasks(), BackpressureLevel: "ok"}
}

var (
	sbOrdersTopics = []assign.Topic{{Name: "inventory.events", Partitions: 3}, {Name: "orders", Partitions: 12}}
	sbClickTopics  = []assign.Topic{{Name: "clicks", Partitions: 2}, {Name: "pageviews", Partitions: 2}}
	sbOrdersFig    = sbFigures{busy: []float64{0.41, 0.5, 0.3, 1}, bp: []float64{0.45, 0.6, 0.35, 0}, in: []float64{61.4, 84.4, 45.4, 120}, out: []float64{61.4, 84.4, 45.4, 120}}
	sbEnrichFig    = sbFigures{busy: []float64{0.5, 0.99, 0.45, 0.52}, bp: []float64{0, 0, 0, 0}, in: []float64{70.1, 141.3, 65.9, 72.4}, out: []float64{70.1, 141.3, 65.9, 72.4}}
	sbClickFig     = sbFigures{busy: []float64{0, 1, 1, 0}, bp: []float64{0, 0, 0, 0}, in: []float64{0, 120, 120, 0}, out: []float64{0, 120, 120, 0}}
	sbSessionFig   = sbFigures{busy: []float64{0.3, 0.34, 0.31, 0.26}, bp: []float64{0, 0, 0, 0}, in: []float64{59.6, 67.5, 61.6, 51.3}, out: []float64{11.9, 13.5, 12.3, 10.3}}
)

// sandboxStore returns the sandbox-like store as of at, and the Flink
// snapshot it was fed (to feed it changed figures).
func sandboxStore(t testing.TB, at time.Time) (*live.Store, *flink.Snapshot) {
	t.Helper()
	st := live.New(live.Options{Now: func() time.Time { return at.Add(15 * time.Second) }})
	for i, end := range []int64{9_000, 10_000} {
		ks := &kafka.Snapshot{Cluster: "sandbox", CollectedAt: at.Add(time.Duration(i) * 10 * time.Second)}
		for _, name := range []string{"clicks", "inventory.events", "orders", "pageviews"} {
			topic := kafka.Topic{Name: name}
			for p, r := range sbRates[name] {
				topic.Partitions = append(topic.Partitions, kafka.Partition{Partition: int32(p), End: end, Rate: r, RateOK: i > 0,
					Freshness: kafka.Freshness{UpdatedAt: ks.CollectedAt}})
			}
			ks.Topics = append(ks.Topics, topic)
		}
		st.UpdateKafka(ks)
	}
	fs := sbFlink(at.Add(10*time.Second), sbOrdersFig, sbEnrichFig)
	st.UpdateFlink(fs)
	return st, fs
}

func sbFlink(at time.Time, orders, enrich sbFigures) *flink.Snapshot {
	return &flink.Snapshot{Endpoint: "sandbox", CollectedAt: at, FlinkVersion: "2.2.1", Jobs: []flink.JobSnapshot{
		{ID: sbClickJob, Name: "clickstream-sessions", State: "RUNNING", StartTime: at.Add(-time.Minute), Vertices: []flink.VertexSnapshot{
			sbSource(sbClickSrc, sbClickTopics, 4, sbClickFig), sbKeyed(sbSession, "Sessionize", sbClickSrc, sbSessionFig)}},
		{ID: sbOrdersJob, Name: "orders-enrichment", State: "RUNNING", StartTime: at.Add(-time.Minute), Vertices: []flink.VertexSnapshot{
			sbSource(sbOrdersSrc, sbOrdersTopics, 4, orders), sbKeyed(sbEnrich, "Enrich Orders", sbOrdersSrc, enrich)}},
	}}
}

// panelText is a panel as a reader sees it: each line's sentences with
// their provenance in brackets, then its link.
func panelText(w *views.WhyPanel) []string {
	if w == nil {
		return nil
	}
	var out []string
	for _, c := range w.Causes {
		var b strings.Builder
		for _, cl := range c.Clauses {
			b.WriteString(cl.Text.Text)
			if cl.Kind != "" {
				b.WriteString(" [" + cl.Kind + "]")
			}
			b.WriteString(" ")
		}
		if c.Planner != nil {
			b.WriteString("«" + c.Planner.Text + "»")
			if c.PlannerKind != "" {
				b.WriteString(" [" + c.PlannerKind + "]")
			}
		}
		out = append(out, strings.TrimSpace(b.String()))
	}
	return out
}

func sbPanel(t *testing.T, st *live.Store, job, vertex string) (*views.WhyPanel, live.VertexView) {
	t.Helper()
	vv, err := st.State().Vertex(job, vertex, live.VertexQuery{Highlight: -1})
	if err != nil {
		t.Fatal(err)
	}
	return newVertexPage(vertexPageInput{links: pageLinks{base: "/sk"}}, vv).Why, vv
}

func TestWhyPanelOnTheSandboxLikeStore(t *testing.T) {
	at := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	st, _ := sandboxStore(t, at)
	for _, tc := range []struct {
		name, job, vertex string
		want              []string
	}{
		{"orders source", sbOrdersJob, sbOrdersSrc, []string{
			"Subtask 3 carries 48% of the produced records, most of it from orders-0 and orders-4 (37%). [observed] " +
				"At p = 4 Flink's owner rule, (start index + partition) mod p, puts both on subtask 3: “orders” starts at subtask 3. [computed] " +
				"It is 100% busy and reads 120/s of the 162/s produced on its partitions. [observed] " +
				"So its lag grows by about 42/s. [estimated] " +
				"Restored from a savepoint at p = 8 (p 4 → 8, the path a running job takes), they land on different subtasks and the busiest, subtask 6, needs about 70% of a subtask's capacity (151/s at 100% busy). [estimated] " +
				"«open in planner at p = 8, restored from a savepoint, where they land on different subtasks» [computed]",
			"Subtasks 0–2 are backpressured up to 60% of the time: waiting to send downstream. [observed] " +
				"It sends to Enrich Orders in the job plan, which has subtask 1 99% busy and no subtask backpressured: that is where the backpressure starts. [observed] " +
				"«open in planner with these rates»",
		}},
		{"Enrich Orders", sbOrdersJob, sbEnrich, []string{
			"Subtask 1 receives 40% of the records (141/s of 350/s) and is 99% busy. [observed] " +
				"It owns key groups 32–63, 32 of 128 (25%): the imbalance is in the keys, not in the range sizes, which differ by at most one key group (32 each). [computed]",
			"Subtask 1 is 99% busy and not backpressured. [observed] " +
				"Source: Kafka Source, which sends to it in the job plan, is backpressured up to 60% of the time: it waits on this vertex. [observed]",
		}},
		{"clickstream source", sbClickJob, sbClickSrc, []string{
			"Subtask 1 reads pageviews-0 and clicks-0, which carry 50% of the produced records. [observed] " +
				"At p = 4 Flink's owner rule, (start index + partition) mod p, puts both on subtask 1: “pageviews” and “clicks” both start at subtask 1. [computed] " +
				"It is 100% busy and reads 120/s of the 157/s produced on its partitions. [observed] So its lag grows by about 37/s. [estimated] " +
				"No rescale above p = 4 puts them on different subtasks: p = 4 is the source's limit (its partition count, beyond which subtasks only idle, or its max parallelism). Nor would a fresh start: more partitions would. [estimated] " +
				"«open in planner with these rates»",
			"Subtask 2 reads pageviews-1 and clicks-1, which carry 50% of the produced records. [observed] " +
				"At p = 4 Flink's owner rule, (start index + partition) mod p, puts both on subtask 2: “pageviews” and “clicks” both start at subtask 1. [computed] " +
				"It is 100% busy and reads 120/s of the 157/s produced on its partitions. [observed] So its lag grows by about 37/s. [estimated] " +
				"No rescale above p = 4 puts them on different subtasks: p = 4 is the source's limit (its partition count, beyond which subtasks only idle, or its max parallelism). Nor would a fresh start: more partitions would. [estimated] " +
				"«open in planner with these rates»",
			"Subtasks 0 and 3 read nothing. [observed] " +
				"At p = 4 “clicks” (2 partitions) and “pageviews” (2 partitions) both start at subtask 1, so together they reach subtasks 1 and 2 only. [computed] " +
				"«open in planner at p = 3, restored from a savepoint, where every subtask reads a partition» [computed]",
		}},
		{"Sessionize", sbClickJob, sbSession, []string{
			"No subtask stands out: each receives 21–28% of the records at p = 4, and none is backpressured. [observed]",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, vv := sbPanel(t, st, tc.job, tc.vertex)
			if diff := cmp.Diff(tc.want, panelText(w)); diff != "" {
				t.Errorf("panel (-want +got):\n%s", diff)
			}
			// Each cause's link opens the planner at its target with the
			// page's own link otherwise.
			for i, c := range w.Causes {
				if c.Planner == nil {
					continue
				}
				target := vv.Parallelism
				if tl := vv.Why.Lines[i].Target; tl > 0 {
					target = tl
				}
				if want := plannerURL("/sk", vv, nil, target, time.Time{}); c.Planner.URL != want {
					t.Errorf("line %d links %s, want %s", i, c.Planner.URL, want)
				}
			}
			// The panel's texts are live: each has its own key, and the
			// update carries them.
			u := vertexUpdate(t, vv)
			keys := map[string]bool{}
			for _, k := range u.Keys() {
				keys[k] = true
			}
			for _, c := range w.Causes {
				for _, cl := range c.Clauses {
					if !keys[cl.Text.Key] {
						t.Errorf("the update lacks the panel's %q", cl.Text.Key)
					}
				}
			}
		})
	}
}

func obs(name string, v float64) live.WhyFact {
	return live.WhyFact{Name: name, Value: v, Kind: live.Observed}
}
func cmpd(name string, v float64) live.WhyFact {
	return live.WhyFact{Name: name, Value: v, Kind: live.Computed}
}

// TestNewWhyPanel: the sentences of every kind of line, with the
// provenance of each.
func TestNewWhyPanel(t *testing.T) {
	src := func(p int, lines ...live.WhyLine) live.VertexView {
		return live.VertexView{JobID: "j1", ID: "v1", Parallelism: p, Kafka: true, Source: true, Topics: []string{"orders"},
			Subtasks: []live.SubtaskRow{{Subtask: 0, Partitions: []live.PartitionCell{{Topic: "orders", Partition: 5, Rate: 2}}}},
			Why:      &live.WhyView{Lines: lines}}
	}
	keyed := func(p int, lines ...live.WhyLine) live.VertexView {
		return live.VertexView{JobID: "j1", ID: "v2", Parallelism: p, MaxParallelism: 128, Keyed: true, Why: &live.WhyView{Lines: lines}}
	}
	for _, tc := range []struct {
		name string
		vv   live.VertexView
		calm bool
		want []string
	}{
		{"hot: one partition, others' rates unknown, busy only", src(4, live.WhyLine{Kind: live.WhyHot, Subtasks: []int{2},
			Partitions: []live.WhyPartition{{Topic: "orders", Partition: 5, Rate: 90}},
			Facts: []live.WhyFact{obs(live.FactShare, 0.55), obs(live.FactPartitionsShare, 0.45), obs(live.FactProduced, 110), obs(live.FactTotal, 200),
				obs(live.FactUnknownRates, 2), cmpd(live.FactOnePartition, 90), obs(live.FactBusy, 0.7)}}), false, []string{
			"Subtask 2 carries 55% of the produced records, most of it from orders-5 (45%). The rates of 2 partitions are not known yet and not counted. [observed] " +
				"A partition is read by one subtask only, so no parallelism brings subtask 2 below the 90/s of orders-5. [computed] " +
				"It is 70% busy. [observed] «open in planner with these rates»"}},
		{"hot: a restore put three on one subtask, and more like it", src(6, live.WhyLine{Kind: live.WhyHot, Subtasks: []int{1}, More: 2, Target: 7,
			Partitions: []live.WhyPartition{{Topic: "orders", Partition: 1, Rate: 30}, {Topic: "orders", Partition: 2, Rate: 20}, {Topic: "orders", Partition: 3, Rate: 10}},
			Placement:  &live.WhyPlacement{Model: live.ModeRestore, Parallelism: 6, History: []int{4, 6}},
			Facts: []live.WhyFact{obs(live.FactShare, 0.6), obs(live.FactProduced, 60), obs(live.FactTotal, 100), obs(live.FactUnknownRates, 0),
				obs(live.FactRead, 60), {Name: live.FactLagGrowth, Kind: live.Estimated}}}), false, []string{
			"Subtask 1 reads orders-1, orders-2 and orders-3, which carry 60% of the produced records. [observed] " +
				"The restore model (p 4 → 6) puts all 3 on subtask 1: a restore deals the saved split lists out to the subtasks in contiguous runs. [computed] " +
				"It reads 60/s of the 60/s produced on its partitions. [observed] So it keeps up. [estimated] " +
				"And 2 more subtasks like this. «open in planner at p = 7, restored from a savepoint, where they land on different subtasks» [computed]"}},
		{"behind", src(4, live.WhyLine{Kind: live.WhyBehind, Subtasks: []int{2},
			Facts: []live.WhyFact{obs(live.FactProduced, 50), obs(live.FactUnknownRates, 0), obs(live.FactBusy, 1), obs(live.FactRead, 30),
				{Name: live.FactLagGrowth, Value: 20, Kind: live.Estimated}}}), false, []string{
			"Subtask 2 is 100% busy and reads 30/s of the 50/s produced on its partitions. [observed] So its lag grows by about 20/s. [estimated] «open in planner with these rates»"}},
		{"idle: fewer partitions than subtasks", src(6, live.WhyLine{Kind: live.WhyIdle, Subtasks: []int{3, 4, 5}, Target: 3,
			Facts: []live.WhyFact{obs(live.FactPartitions, 3)}}), false, []string{
			"Subtasks 3–5 read nothing: the source reads 3 partitions at p = 6. [observed] «open in planner at p = 3, restored from a savepoint, where every subtask reads a partition» [computed]"}},
		{"idle: topics starting at different subtasks", src(8, live.WhyLine{Kind: live.WhyIdle, Subtasks: []int{1, 2, 3},
			Facts: []live.WhyFact{obs(live.FactPartitions, 8)},
			Placement: &live.WhyPlacement{Model: live.ModeFresh, Parallelism: 8, Reached: []int{0, 4, 5, 6, 7},
				Topics: []live.WhyTopic{{Name: "topic-a", Partitions: 4, Start: 5}, {Name: "topic-b", Partitions: 4, Start: 4}}}}), false, []string{
			"Subtasks 1–3 read nothing. [observed] At p = 8 “topic-a” (4 partitions) starts at subtask 5 and “topic-b” (4 partitions) at 4, " +
				"so together they reach subtasks 0 and 4–7 only. [computed] «open in planner with these rates»"}},
		{"keyed: range sizes", keyed(100, live.WhyLine{Kind: live.WhyRanges, Subtasks: []int{0}, Target: 128, KeyGroups: &live.KeyGroupSpan{Start: 0, End: 1, Size: 2},
			Facts: []live.WhyFact{obs(live.FactShare, 2.0/128), obs(live.FactRecordsIn, 2), obs(live.FactTotal, 128),
				cmpd(live.FactKeyGroupShare, 2.0/128), cmpd(live.FactRangeMin, 1), cmpd(live.FactRangeMax, 2)}}), false, []string{
			"Subtask 0 receives 2% of the records (2.0/s of 128/s). [observed] " +
				"It owns 2 key groups (0–1) where the smallest range has 1 (maxParallelism 128 at p = 100): its share is what its range predicts, so the imbalance is in the range sizes. [computed] " +
				"At p = 128, which divides 128, every subtask owns 1. [computed]"}},
		{"keyed: subtasks receiving nothing", keyed(4, live.WhyLine{Kind: live.WhyKeyedIdle, Subtasks: []int{1, 3},
			Facts: []live.WhyFact{cmpd(live.FactRangeMin, 32), cmpd(live.FactRangeMax, 32)}}), false, []string{
			"Subtasks 1 and 3 receive no records. [observed] Each owns 32 key groups, so no record received recently had its key in them. [computed]"}},
		{"backpressure through a backpressured vertex", keyed(2, live.WhyLine{Kind: live.WhyBackpressured, Subtasks: []int{1},
			Peer:  &live.WhyPeer{ID: "w", Name: "Window", Relation: live.RelDownstream, Via: []string{"Map"}, Subtask: 3, Culprit: true},
			Facts: []live.WhyFact{obs(live.FactBackPressured, 0.8), obs(live.FactPeerBusy, 0.99), obs(live.FactPeerBackPressured, 0)}}), false, []string{
			"Subtask 1 is backpressured up to 80% of the time: waiting to send downstream. [observed] " +
				"Downstream in the job plan, past Map (backpressured too), Window has subtask 3 99% busy and no subtask backpressured: that is where the backpressure starts. [observed]"}},
		{"backpressure without the job's edges", keyed(2, live.WhyLine{Kind: live.WhyBackpressured, Subtasks: []int{0, 1},
			Peer:  &live.WhyPeer{ID: "w", Name: "Window", Relation: live.RelLater, Subtask: 3, Culprit: true},
			Facts: []live.WhyFact{obs(live.FactBackPressured, 0.8), obs(live.FactPeerBusy, 0.99), obs(live.FactPeerBackPressured, 0)}}), false, []string{
			"Subtasks 0 and 1 are backpressured up to 80% of the time: waiting to send downstream. [observed] " +
				"Window, later in the job's plan order, has subtask 3 99% busy and is not backpressured (the job's edges are not known, so no link is claimed). [observed]"}},
		{"backpressure with nothing busy downstream", keyed(2, live.WhyLine{Kind: live.WhyBackpressured, Subtasks: []int{0},
			Peer:  &live.WhyPeer{ID: "m", Name: "Map", Relation: live.RelDownstream, Subtask: 0},
			Facts: []live.WhyFact{obs(live.FactBackPressured, 0.8), obs(live.FactPeerBusy, 0.3), obs(live.FactPeerBackPressured, 0.5)}}), false, []string{
			"Subtask 0 is backpressured up to 80% of the time: waiting to send downstream. [observed] " +
				"It sends to Map in the job plan, whose busiest subtask 0 is 30% busy: no vertex downstream is both busy and free of backpressure. [observed]"}},
		{"holding up a vertex before it, no edges", keyed(4, live.WhyLine{Kind: live.WhyBackpressuring, Subtasks: []int{3, 1},
			Peer:  &live.WhyPeer{ID: "s", Name: "Source: Kafka Source", Relation: live.RelEarlier, Subtask: -1},
			Facts: []live.WhyFact{obs(live.FactBusy, 0.99), obs(live.FactPeerBackPressured, 0.8)}}), false, []string{
			"Subtasks 1 and 3 are up to 99% busy and not backpressured. [observed] " +
				"Source: Kafka Source, earlier in the job's plan order, is backpressured up to 80% of the time (the job's edges are not known, so no link is claimed). [observed]"}},
		{"one subtask", src(1, live.WhyLine{Kind: live.WhyBalanced, Subtasks: []int{},
			Facts: []live.WhyFact{obs(live.FactTotal, 10), obs(live.FactMinShare, 1), obs(live.FactMaxShare, 1), obs(live.FactUnknownRates, 0)}}), true, []string{
			"One subtask: there is nothing to balance. [observed]"}},
		{"nothing received", keyed(4, live.WhyLine{Kind: live.WhyBalanced, Subtasks: []int{},
			Facts: []live.WhyFact{obs(live.FactTotal, 0), obs(live.FactBackPressured, 0)}}), true, []string{
			"It received no records recently: there is no load to explain, and none is backpressured. [observed]"}},
		{"not enough figures", keyed(4, live.WhyLine{Kind: live.WhyUnknown, Subtasks: []int{}, Missing: []string{live.MissingRecordsIn, live.MissingKeyGroups}}), true, []string{
			"Not enough figures yet to say what makes it hot: this needs the records in of every subtask (Flink's metrics) and its maxParallelism."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := whyPanel("", tc.vv, nil, time.Time{}, true)
			if diff := cmp.Diff(tc.want, panelText(w)); diff != "" {
				t.Errorf("panel (-want +got):\n%s", diff)
			}
			if w.Calm != tc.calm {
				t.Errorf("calm = %v, want %v", w.Calm, tc.calm)
			}
		})
	}
	// The keys: the line's and the sentence's position.
	w := whyPanel("/sk", src(4, live.WhyLine{Kind: live.WhyBehind, Subtasks: []int{2},
		Facts: []live.WhyFact{obs(live.FactProduced, 50), obs(live.FactUnknownRates, 0), obs(live.FactRead, 30), {Name: live.FactLagGrowth, Value: 20, Kind: live.Estimated}}}), nil, time.Time{}, true)
	want := &views.WhyPanel{Causes: []views.WhyCause{{Kind: live.WhyBehind, Hot: true, Subtasks: []string{"2"},
		Clauses: []views.WhyClause{
			{Kind: string(live.Observed), Text: views.Text{Key: "why/0/0", Text: "Subtask 2 reads 30/s of the 50/s produced on its partitions."}},
			{Kind: string(live.Estimated), Text: views.Text{Key: "why/0/1", Text: "So its lag grows by about 20/s."}}},
		Planner: &views.Anchor{Text: "open in planner with these rates", URL: "/sk/plan?backlog=orders%2C5%2C0%0A&busy=0&mode=restore&observed=0&parallelism=4&rates=orders%2C5%2C2%0A&target=4&topic=orders%3A6"}}}}
	if diff := cmp.Diff(want, w); diff != "" {
		t.Errorf("panel (-want +got):\n%s", diff)
	}
	if whyPanel("", live.VertexView{}, nil, time.Time{}, true) != nil {
		t.Error("a view without why lines has a panel")
	}
}

// TestWhyRescaleSentences: a hot line says where a restore from a
// savepoint parts its partitions, or why none does and what would; a
// fresh start is offered only as a labelled alternative with its cost.
func TestWhyRescaleSentences(t *testing.T) {
	hot := func(rs *live.WhyRescale) live.VertexView {
		p := 4
		if rs.None == live.NoTargetPlanner {
			p = 5000
		}
		return live.VertexView{JobID: "j1", ID: "v1", Parallelism: p, Kafka: true, Source: true, Topics: []string{"orders"},
			Subtasks: []live.SubtaskRow{{Subtask: 0, Busy: 1, RecordsOut: 120, Partitions: []live.PartitionCell{{Topic: "orders", Partition: 0, Rate: 128}}}},
			Why: &live.WhyView{Lines: []live.WhyLine{{Kind: live.WhyHot, Subtasks: []int{3},
				Partitions: []live.WhyPartition{{Topic: "orders", Partition: 0, Rate: 128}, {Topic: "orders", Partition: 4, Rate: 60}},
				Facts:      []live.WhyFact{obs(live.FactShare, 0.5), obs(live.FactUnknownRates, 0)}, Target: rs.Target, Rescale: rs}}}}
	}
	for _, tc := range []struct {
		name  string
		rs    *live.WhyRescale
		want  string
		fresh string
	}{
		{"over capacity", &live.WhyRescale{History: []int{4}, Limit: 15, Capacity: 120, Utilization: 1.07, Busiest: 6, None: live.NoTargetPartition, Apart: 8,
			Partition: &live.WhyPartition{Topic: "orders", Partition: 0, Rate: 128}, Lag: 30000},
			"No parallelism carries the load: orders-0 alone needs 107% of a source subtask's capacity (128/s of 120/s), and a partition is read by one subtask. " +
				"A restore at p = 8 would put them on different subtasks, with that subtask still over its capacity. More partitions for “orders” would spread its records (a fresh start or any parallelism would not).", ""},
		{"only a fresh start parts them", &live.WhyRescale{History: []int{2, 4}, Limit: 15, Capacity: 120, Utilization: -1, Busiest: -1, None: live.NoTargetApart,
			Fresh: 5, FreshUtilization: 0.6, Lag: 30000},
			"No restore from a savepoint up to p = 15 puts them on different subtasks: a restore deals the saved split lists out in contiguous runs, and these stay in one. " +
				"A fresh start at p = 5 would part them, the busiest at about 60% of its capacity, but it drops the source's offsets state (a new source uid, restored with --allowNonRestoredState): " +
				"the source starts again from its configured starting offsets, re-reading every retained record when it starts from the earliest offsets, or skipping the 30,000 records not yet read when it starts from the latest.",
			"open in planner at p = 5 as a fresh start, which drops the source's offsets"},
		{"over the planner's bound", &live.WhyRescale{History: []int{5000}, Limit: 5000, Utilization: -1, Busiest: -1, None: live.NoTargetPlanner, Lag: -1},
			"No rescale target is judged: the planner draws at most 8,192 subtasks, the current 5000 and the target together, so none above p = 5000 fits (/api/v1/assignment computes any layout).", ""},
		{"history unknown", &live.WhyRescale{History: []int{4}, Utilization: -1, Busiest: -1, None: live.NoTargetHistory, Lag: -1},
			"No rescale target is computed: the job was restored before skewscope saw it and its parallelism history is not known, so where a restore puts the partitions is not either (add ?history=P0,P1,… to model it).", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := whyPanel("/sk", hot(tc.rs), nil, time.Time{}, true)
			c := w.Causes[0]
			if got := c.Clauses[len(c.Clauses)-1].Text.Text; got != tc.want {
				t.Errorf("rescale sentence\n got %q\nwant %q", got, tc.want)
			}
			if tc.rs.None == live.NoTargetPlanner {
				if c.Planner != nil {
					t.Errorf("planner link %+v at a parallelism the planner refuses", c.Planner)
				}
				return
			}
			if c.Planner == nil || strings.Contains(c.Planner.Text, "at p =") || !strings.Contains(c.Planner.URL, "mode=restore") {
				t.Errorf("planner link %+v: want the current parallelism, restored", c.Planner)
			}
			// A fresh start is the planner's default mode: its link names none.
			switch {
			case tc.fresh == "" && c.Fresh != nil:
				t.Errorf("a fresh start is offered: %+v", c.Fresh)
			case tc.fresh != "" && (c.Fresh == nil || c.Fresh.Text != tc.fresh || strings.Contains(c.Fresh.URL, "mode=") || !strings.Contains(c.Fresh.URL, "target=5")):
				t.Errorf("fresh-start link %+v, want %q at target 5 in fresh mode", c.Fresh, tc.fresh)
			}
		})
	}
}
