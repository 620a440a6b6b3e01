package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/flink"
)

// etJob is a job of the model alone (no sandbox): source subtasks with the
// given splits (partitions of "t"), as many keyed subtasks, strategy ws.
func etJob(ws watermarkStrategy, started time.Time, splits ...[]int32) *job {
	j := &job{spec: jobSpec{name: "et", maxP: 128, srcCap: 100, keyedCap: 100, keyedName: "K", outPerIn: 1, watermarks: ws},
		state: "RUNNING", splits: map[assign.TopicPartition]*split{}}
	for i, parts := range splits {
		st := &srcTask{idx: i, et: newSourceEventTime(started)}
		for _, p := range parts {
			sp := &split{tp: assign.TopicPartition{Topic: "t", Partition: p}, owner: i, current: -1, committed: -1, next: -1, hw: -1, et: newSplitEventTime(started)}
			st.splits = append(st.splits, sp)
			j.splits[sp.tp] = sp
		}
		j.src = append(j.src, st)
		j.keyed = append(j.keyed, &keyedTask{watermark: watermarkNone})
	}
	return j
}

// read has subtask sub read a record of partition p with timestamp ts at
// now.
func (j *job) readAt(p int32, ts int64, now time.Time) {
	sp := j.splits[assign.TopicPartition{Topic: "t", Partition: p}]
	recordRead(j.src[sp.owner], sp, ts, now)
}

func (j *job) outputs() []int64 {
	var out []int64
	for _, st := range j.src {
		out = append(out, st.et.output)
	}
	return out
}

func (j *job) inputs() []int64 {
	var out []int64
	for _, kt := range j.keyed {
		out = append(out, kt.watermark)
	}
	return out
}

// The model follows Flink's rules at given instants (no clock): the
// bounded-out-of-orderness watermark per split, the minimum over a
// reader's non-idle splits, never going back, and downstream the minimum
// over non-idle readers.
func TestWatermarkRules(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	ms := func(s float64) int64 { return at(s).UnixMilli() }
	bound := time.Second

	t.Run("no idle timeout: a silent split holds its reader and the job", func(t *testing.T) {
		j := etJob(watermarkStrategy{bound: bound}, t0, []int32{0, 1}, []int32{2})
		j.emitWatermarks(at(0), 0)
		if got := j.inputs(); got[0] != watermarkNone || j.src[0].et.output != watermarkNone {
			t.Fatalf("before any record: outputs %v, inputs %v, want Long.MIN_VALUE", j.outputs(), got)
		}
		j.readAt(0, ms(1), at(1))
		j.readAt(1, ms(2), at(2))
		j.readAt(2, ms(3), at(3))
		j.emitWatermarks(at(3), 0)
		if got, want := j.outputs(), []int64{ms(1) - 1001, ms(3) - 1001}; !slices.Equal(got, want) {
			t.Errorf("outputs = %v, want %v (the lower split, maxTs − bound − 1)", got, want)
		}
		// Partition 0 goes silent; the others go on for a minute.
		for s := 4.0; s < 64; s++ {
			j.readAt(1, ms(s), at(s))
			j.readAt(2, ms(s), at(s))
			j.emitWatermarks(at(s), time.Second)
		}
		if got, want := j.inputs(), []int64{ms(1) - 1001, ms(1) - 1001}; !slices.Equal(got, want) {
			t.Errorf("keyed inputs after a minute of silence = %v, want %v (partition 0's)", got, want)
		}
	})

	t.Run("idle timeout: a silent split goes idle, and comes back without lowering", func(t *testing.T) {
		j := etJob(watermarkStrategy{bound: bound, idleTimeout: 5 * time.Second}, t0, []int32{0, 1})
		j.readAt(0, ms(1), at(1))
		j.readAt(1, ms(1), at(1))
		for s := 2.0; s <= 10; s++ {
			j.readAt(1, ms(s), at(s))
			j.emitWatermarks(at(s), time.Second)
		}
		if got, want := j.src[0].et.output, ms(10)-1001; got != want {
			t.Errorf("output with partition 0 idle = %d, want %d (partition 1's)", got, want)
		}
		if sp := j.splits[assign.TopicPartition{Topic: "t", Partition: 0}]; !sp.et.idle {
			t.Errorf("partition 0, silent for 9 s with a 5 s timeout, is not idle")
		}
		// A late record on partition 0: active again, but the output
		// never goes back.
		j.readAt(0, ms(3), at(11))
		j.emitWatermarks(at(11), time.Second)
		if got, want := j.src[0].et.output, ms(10)-1001; got != want {
			t.Errorf("output after partition 0 resumed below it = %d, want %d kept", got, want)
		}
	})

	t.Run("a reader without a partition", func(t *testing.T) {
		for _, tc := range []struct {
			idle time.Duration
			want int64
		}{
			{0, watermarkNone},               // it holds the job back
			{5 * time.Second, ms(20) - 1001}, // it goes idle and is skipped
		} {
			j := etJob(watermarkStrategy{bound: bound, idleTimeout: tc.idle}, t0, []int32{0}, nil)
			for s := 1.0; s <= 20; s++ {
				j.readAt(0, ms(s), at(s))
				j.emitWatermarks(at(s), time.Second)
			}
			if got := j.inputs(); got[0] != tc.want || got[1] != tc.want {
				t.Errorf("idle timeout %v: keyed inputs = %v, want %d", tc.idle, got, tc.want)
			}
			if got := j.src[1].et.output; got != watermarkNone {
				t.Errorf("idle timeout %v: the reader without a partition has output %d, want Long.MIN_VALUE", tc.idle, got)
			}
		}
	})

	t.Run("a new split does not lower its reader", func(t *testing.T) {
		j := etJob(watermarkStrategy{bound: bound}, t0, []int32{0})
		j.readAt(0, ms(5), at(5))
		j.emitWatermarks(at(5), 0)
		sp := &split{tp: assign.TopicPartition{Topic: "t", Partition: 9}, owner: 0, et: newSplitEventTime(at(6))}
		j.src[0].splits = append(j.src[0].splits, sp)
		j.splits[sp.tp] = sp
		j.emitWatermarks(at(6), 0)
		if got, want := j.src[0].et.output, ms(5)-1001; got != want {
			t.Errorf("output after a split without records joined = %d, want %d kept", got, want)
		}
	})
}

// The source reader's FLIP-33 gauges: the lag of the last record emitted,
// the watermark lag from that emission (listed only after the first
// watermark), the time since the last record.
func TestSourceReaderGauges(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	// With a 6 s idle timeout, at 7 s the reader without a partition is
	// idle and partition 0, read at 2 s, is not.
	j := etJob(watermarkStrategy{bound: time.Second, idleTimeout: 6 * time.Second}, t0, []int32{0}, nil)
	j.readAt(0, t0.UnixMilli()-300, t0.Add(2*time.Second))
	st := j.metrics(t0.Add(7*time.Second), storeMaxAge)
	op := "Source__Kafka_Source."
	for _, tc := range []struct {
		sub      int
		id, want string
	}{
		{0, "currentEmitEventTimeLag", "2300"},
		{0, "watermarkLag", "3301"},
		{0, "sourceIdleTime", "5000"},
		{0, "currentOutputWatermark", fmt.Sprint(t0.UnixMilli() - 1301)},
		{0, "split.t-0.watermark.currentWatermark", fmt.Sprint(t0.UnixMilli() - 1301)},
		{1, "currentEmitEventTimeLag", "-1"},
		{1, "currentOutputWatermark", "-9223372036854775808"},
		{1, "sourceIdleTime", "7000"},
	} {
		if got, ok := st.subtasks[0][tc.sub].vals[op+tc.id]; !ok || got != tc.want {
			t.Errorf("subtask %d %s = %q (listed %v), want %q", tc.sub, tc.id, got, ok, tc.want)
		}
	}
	for _, id := range []string{"watermarkLag", "pendingRecords"} {
		if v, ok := st.subtasks[0][1].vals[op+id]; ok {
			t.Errorf("the reader without a partition lists %s (%q); Flink's does not", id, v)
		}
	}
	if got := st.subtasks[1][0].vals["currentInputWatermark"]; got != fmt.Sprint(t0.UnixMilli()-1301) {
		t.Errorf("keyed currentInputWatermark = %q, want subtask 0's output (subtask 1 idle)", got)
	}
}

// The metric store is refreshed on the job's details after storeRefresh,
// on anything else only after storeMaxAge: every read between two
// refreshes sees one instant.
func TestMetricStoreRefresh(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	j := etJob(watermarkStrategy{bound: time.Second}, t0, []int32{0})
	first := j.metrics(t0, storeRefresh)
	j.readAt(0, t0.UnixMilli(), t0.Add(100*time.Millisecond))
	for _, tc := range []struct {
		after  time.Duration
		maxAge time.Duration
		fresh  bool
	}{
		{500 * time.Millisecond, storeRefresh, false},
		{storeMaxAge - time.Millisecond, storeMaxAge, false},
		{storeRefresh, storeRefresh, true},
	} {
		got := j.metrics(t0.Add(tc.after), tc.maxAge)
		if (got != first) != tc.fresh {
			t.Errorf("store after %v with max age %v: refreshed %v, want %v", tc.after, tc.maxAge, got != first, tc.fresh)
		}
	}
	if got := j.store.subtasks[0][0].vals["Source__Kafka_Source.currentOutputWatermark"]; got != fmt.Sprint(t0.UnixMilli()-1001) {
		t.Errorf("refreshed store's output watermark = %q, want the record's", got)
	}
}

// readRecording reads a recorded metric answer of eventtime/2.2.1.
func readRecording(t *testing.T, scenario, name string) []flink.Metric {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("../collectors/testdata/flink/eventtime/2.2.1", scenario, name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var ms []flink.Metric
	if err := json.Unmarshal(raw, &ms); err != nil {
		t.Fatal(err)
	}
	return ms
}

// etForm is an event-time metric id in an abstract form ("N." subtask,
// "split.T-P."), "" for any other id.
func etForm(id string) string {
	id = regexp.MustCompile(`^\d+\.`).ReplaceAllString(id, "N.")
	id = regexp.MustCompile(`split\.[^.]+-\d+\.`).ReplaceAllString(id, "split.T-P.")
	if regexp.MustCompile(`Watermark$|EventTimeLag$|watermarkLag$|sourceIdleTime$|pendingRecords$|\.watermark\.`).MatchString(id) {
		return id
	}
	return ""
}

// etForms are the event-time forms the metric ids of one subtask list.
func etForms(ids []string, sub int) []string {
	var out []string
	for _, id := range ids {
		if strings.HasPrefix(id, fmt.Sprint(sub)+".") && strings.Contains(id, "Source__Kafka_Source.") {
			if f := etForm(id); f != "" && !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	slices.Sort(out)
	return out
}

// collect polls the sandbox's JobManager with the collector once and
// returns the running jobs by name.
func collect(t *testing.T, c *flink.Collector) map[string]*flink.JobSnapshot {
	t.Helper()
	s := c.PollOnce(t.Context())
	out := map[string]*flink.JobSnapshot{}
	for i := range s.Jobs {
		if j := &s.Jobs[i]; j.State == "RUNNING" {
			out[j.Name] = j
		}
	}
	return out
}

// holder follows a job's keyed watermark to the source subtask and split it
// comes from, as the dashboard does: the keyed vertex's input watermark,
// a source subtask whose output watermark is that, and a split of it with
// that watermark. It returns the watermark and the split, or an error
// saying which step found nothing.
func holder(j *flink.JobSnapshot) (int64, *flink.KafkaPartitionState, error) {
	if len(j.Vertices) != 2 {
		return 0, nil, fmt.Errorf("%s: %d vertices", j.Name, len(j.Vertices))
	}
	src, keyed := &j.Vertices[0], &j.Vertices[1]
	if !src.Source || src.Kafka == nil || !keyed.Keyed {
		return 0, nil, fmt.Errorf("%s: vertices %q, %q are not the source and the keyed one", j.Name, src.Name, keyed.Name)
	}
	w := keyed.Subtasks[0].EventTime.InputWatermark
	for _, st := range keyed.Subtasks {
		if st.EventTime.InputWatermark != w {
			return 0, nil, fmt.Errorf("%s: keyed subtasks read different input watermarks (%d, %d) from the same inputs", j.Name, w, st.EventTime.InputWatermark)
		}
	}
	if !flink.IsEventTime(w) {
		return w, nil, nil
	}
	for _, st := range src.Subtasks {
		if st.EventTime.OutputWatermark != w {
			continue
		}
		for i := range src.Kafka.States {
			ks := &src.Kafka.States[i]
			if ks.Subtask == st.Index && ks.Split != nil && ks.Split.Watermark == w {
				return w, ks, nil
			}
		}
		return w, nil, fmt.Errorf("%s: source subtask %d has output watermark %d and no split has it", j.Name, st.Index, w)
	}
	var outs []int64
	for _, st := range src.Subtasks {
		outs = append(outs, st.EventTime.OutputWatermark)
	}
	return w, nil, fmt.Errorf("%s: keyed input watermark %d, no source subtask outputs it (%v)", j.Name, w, outs)
}

// TestSandboxEventTime reads the sandbox's event time through the
// collector: the watermark ids have the recorded forms, the keyed input
// watermark of every poll comes from a source subtask and split of the
// same poll; clickstream-sessions, whose idle timeout lets it skip the two
// readers without a partition, advances; orders-enrichment, without one,
// stops at orders-7 once it goes silent. The waits count polls.
func TestSandboxEventTime(t *testing.T) {
	const silentAfter = 2 * time.Second
	sb := startSandbox(t, Options{SilentAfter: silentAfter})
	c, err := flink.NewCollector(flink.Config{Name: "sandbox", URL: sb.FlinkURL()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	fc := newFlinkClient(t, sb)
	orders, clicks := jobNamed(t, sb, "orders-enrichment"), jobNamed(t, sb, "clickstream-sessions")
	silentOwner, err := assign.KafkaSplitOwner(assign.TopicPartition{Topic: topicOrders, Partition: SilentPartition}, orders.Parallelism)
	if err != nil {
		t.Fatal(err)
	}

	// The forms of the event-time ids, against the recordings of a reader
	// with a split (idle: every reader has one) and without (starved).
	ids, err := fc.VertexMetricIDs(t.Context(), clicks.ID, clicks.SourceVertexID)
	if err != nil {
		t.Fatal(err)
	}
	recWith := etForms(metricIDs(readRecording(t, "idle", "vertex-source-metrics-list")), 0)
	recWithout := etForms(metricIDs(readRecording(t, "starved", "vertex-source-metrics-list")), 1)
	for sub := range clicks.Parallelism {
		got := etForms(ids, sub)
		want := recWithout
		if slices.ContainsFunc(got, func(f string) bool { return strings.Contains(f, "split.") }) {
			want = recWith
		}
		// watermarkLag comes with the first watermark.
		got = slices.DeleteFunc(got, func(f string) bool { return strings.HasSuffix(f, "watermarkLag") })
		want = slices.DeleteFunc(slices.Clone(want), func(f string) bool { return strings.HasSuffix(f, "watermarkLag") })
		if !slices.Equal(got, want) {
			t.Errorf("clickstream source subtask %d event-time id forms:\n got %v\nwant %v (recorded)", sub, got, want)
		}
	}

	var ordersW, clicksFirst, clicksLast int64 = 0, watermarkNone, watermarkNone
	stalled, advanced := 0, 0
	for poll := 1; stalled < 10 || advanced < 10; poll++ {
		if poll > 600 {
			t.Fatalf("after %d polls: orders-enrichment stalled at orders-7 for %d polls, clickstream-sessions advanced on %d", poll, stalled, advanced)
		}
		jobs := collect(t, c)
		cw, cs, err := holder(jobs["clickstream-sessions"])
		if err != nil {
			t.Errorf("poll %d: %v", poll, err)
		}
		if flink.IsEventTime(cw) {
			if cs == nil {
				t.Errorf("poll %d: clickstream-sessions watermark %d has no holder", poll, cw)
			}
			if clicksLast != watermarkNone && cw < clicksLast {
				t.Errorf("poll %d: clickstream-sessions watermark went back from %d to %d", poll, clicksLast, cw)
			}
			if clicksFirst == watermarkNone {
				clicksFirst = cw
			} else if cw > clicksLast {
				advanced++
			}
			clicksLast = cw
		}
		ow, held, err := holder(jobs["orders-enrichment"])
		switch {
		case err != nil || held == nil:
			// Before the hot subtask has read past the silence, it holds
			// the watermark; a new split there may leave its output above
			// every split's for a moment, as in Flink.
			stalled = 0
		case held.Partition == SilentPartition && held.Topic == topicOrders && held.Subtask == silentOwner:
			if stalled > 0 && ow != ordersW {
				t.Errorf("poll %d: orders-enrichment held by orders-7 moved from %d to %d", poll, ordersW, ow)
			}
			ordersW = ow
			stalled++
		default:
			stalled = 0
		}
		time.Sleep(200 * time.Millisecond) // paces the polls; nothing waits on it
	}
	t.Logf("clickstream-sessions advanced from %v to %v; orders-enrichment held by orders-7 at %v", time.UnixMilli(clicksFirst).UTC(), time.UnixMilli(clicksLast).UTC(), time.UnixMilli(ordersW).UTC())
	if clicksLast <= clicksFirst {
		t.Errorf("clickstream-sessions watermark did not advance: %d to %d", clicksFirst, clicksLast)
	}
	// Held by orders-7: its last record's timestamp, which is before the
	// silence, minus the bound.
	if lag := time.Since(time.UnixMilli(ordersW)); lag < eventTimeBound {
		t.Errorf("orders-enrichment held at %v, only %v ago", time.UnixMilli(ordersW), lag)
	}

	// The /watermarks endpoint: the keyed vertex's task input watermarks,
	// nothing for a source (recorded shapes).
	for _, v := range []struct {
		id   string
		want int
	}{{orders.KeyedVertexID, orders.KeyedParallelism}, {orders.SourceVertexID, 0}} {
		st, body := fetch(t, sb.FlinkURL()+"jobs/"+orders.ID+"/vertices/"+v.id+"/watermarks")
		var ms []flink.Metric
		if err := json.Unmarshal(body, &ms); st != 200 || err != nil || len(ms) != v.want {
			t.Errorf("GET …/vertices/%s/watermarks = %d %s, want %d currentInputWatermark entries", v.id, st, body, v.want)
			continue
		}
		for i, m := range ms {
			if w, ok := m.Int64(); m.ID != fmt.Sprintf("%d.currentInputWatermark", i) || !ok || w < ordersW {
				t.Errorf("GET …/vertices/%s/watermarks entry %d = %+v, want %d.currentInputWatermark ≥ %d", v.id, i, m, i, ordersW)
			}
		}
	}
}

func metricIDs(ms []flink.Metric) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}
