package flink

import (
	"math"
	"strings"
	"testing"
)

// The ids are as a Flink 2.3.0 MiniCluster lists them for a Kafka source
// with watermark alignment (collectors/testdata/flink/2.3.0 and
// ../shared/reference/event-time.md).
func TestEventTimeGaugesAreValidated(t *testing.T) {
	const op = "Source__Kafka_Source"
	ids := []string{
		"0.Source__Kafka_Source.KafkaSourceReader.topic.orders.partition.3.currentOffset",
		"0." + op + ".currentOutputWatermark",
		"0." + op + ".sourceIdleTime",
		"0." + op + ".currentEmitEventTimeLag",
		"0." + op + ".watermarkAlignmentDrift",
		"0." + op + ".split.orders-3.watermark.currentWatermark",
		"0." + op + ".split.orders-3.watermark.pausedTimeMsPerSecond",
		"0." + op + ".split.orders-3.watermark.activeTimeMsPerSecond",
		"0.busyTimeMsPerSecond",
	}
	vs := &VertexSnapshot{ID: "src", Parallelism: 1, Source: true, Subtasks: []SubtaskSnapshot{{Index: 0}}}
	mp := planMetrics(vs, ids)
	got := strings.Join(mp.want, " ")
	for _, id := range append(ids[1:3], ids[4:7]...) {
		if !strings.Contains(got, id) {
			t.Errorf("planMetrics leaves out %s", id)
		}
	}
	// The reader's emit lag says per reader what the split watermarks say
	// per partition: with them it is not read; without them (before Flink
	// 2.1) it is.
	if strings.Contains(got, "currentEmitEventTimeLag") {
		t.Errorf("planMetrics reads a reader's emit lag beside its split watermarks: %s", got)
	}
	noSplits := []string{ids[0], ids[1], ids[2], ids[3], ids[8]}
	if plain := strings.Join(planMetrics(vs, noSplits).want, " "); !strings.Contains(plain, ids[3]) {
		t.Errorf("without split gauges planMetrics leaves out %s: %s", ids[3], plain)
	}
	if strings.Contains(got, "activeTimeMsPerSecond") {
		t.Errorf("planMetrics reads a split's active time, which says nothing a silent split does not: %s", got)
	}
	// keptIDs must give the same plan (idcache.go).
	if again := planMetrics(vs, keptIDs(vs, ids)); strings.Join(again.want, " ") != got {
		t.Errorf("the kept ids plan\n%s\nwant\n%s", strings.Join(again.want, " "), got)
	}

	for _, tc := range []struct {
		name, wm, idle, drift, splitWM, paused string
		wantWM, wantSplit                      int64
		wantIdle, wantPaused                   float64
		wantErr                                string
	}{
		{name: "values", wm: "1764669600000", idle: "41000", drift: "-1500", splitWM: "1764669599000", paused: "1000.0",
			wantWM: 1764669600000, wantSplit: 1764669599000, wantIdle: 41000, wantPaused: 1000},
		{name: "none yet", wm: "-9223372036854775808", idle: "0", drift: "0", splitWM: "-9223372036854775808", paused: "0.0",
			wantWM: WatermarkNone, wantSplit: WatermarkNone, wantIdle: 0, wantPaused: 0},
		{name: "not a whole number", wm: "1.5e3x", idle: "0", drift: "0", splitWM: "12", paused: "0.0",
			wantWM: WatermarkUnread, wantSplit: 12, wantIdle: 0, wantPaused: 0,
			wantErr: `0.Source__Kafka_Source.currentOutputWatermark "1.5e3x", want a watermark in milliseconds`},
		{name: "negative idle time", wm: "5", idle: "-3", drift: "0", splitWM: "5", paused: "0.0",
			wantWM: 5, wantSplit: 5, wantIdle: math.NaN(), wantPaused: 0,
			wantErr: `sourceIdleTime "-3", want a number of milliseconds ≥ 0`},
		{name: "paused over a second", wm: "5", idle: "1", drift: "0", splitWM: "5", paused: "2500.0",
			wantWM: 5, wantSplit: 5, wantIdle: 1, wantPaused: math.NaN(),
			wantErr: `pausedTimeMsPerSecond "2500.0", want 0..1000 ms per second`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := &VertexSnapshot{ID: "src", Parallelism: 1, Source: true, Subtasks: []SubtaskSnapshot{{Index: 0}}}
			mp := planMetrics(vs, ids)
			m := MetricMap(mustDecode(t, `[`+
				`{"id":"0.Source__Kafka_Source.currentOutputWatermark","value":"`+tc.wm+`"},`+
				`{"id":"0.Source__Kafka_Source.sourceIdleTime","value":"`+tc.idle+`"},`+
				`{"id":"0.Source__Kafka_Source.watermarkAlignmentDrift","value":"`+tc.drift+`"},`+
				`{"id":"0.Source__Kafka_Source.split.orders-3.watermark.currentWatermark","value":"`+tc.splitWM+`"},`+
				`{"id":"0.Source__Kafka_Source.split.orders-3.watermark.pausedTimeMsPerSecond","value":"`+tc.paused+`"}]`))
			err := applyEventTime(&vs.Subtasks[0], vs, mp.operator[0], m)
			if e := applySplits(mp.kafka, m); err == nil {
				err = e
			}
			et := vs.Subtasks[0].EventTime
			if et.OutputWatermark != tc.wantWM {
				t.Errorf("output watermark %d, want %d", et.OutputWatermark, tc.wantWM)
			}
			if !sameFloat(et.SourceIdleMs, tc.wantIdle) {
				t.Errorf("source idle %v ms, want %v", et.SourceIdleMs, tc.wantIdle)
			}
			if !math.IsNaN(et.EmitLagMs) || et.InputWatermark != WatermarkUnread {
				t.Errorf("unreported gauges: emit lag %v, input watermark %d, want NaN and unread", et.EmitLagMs, et.InputWatermark)
			}
			sw := mp.kafka.States[0].Split
			if sw == nil {
				t.Fatal("no split gauges")
			}
			if sw.Watermark != tc.wantSplit || !sameFloat(sw.PausedPerS, tc.wantPaused) {
				t.Errorf("split watermark %d paused %v, want %d and %v", sw.Watermark, sw.PausedPerS, tc.wantSplit, tc.wantPaused)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one naming %s", err, tc.wantErr)
			}
		})
	}
}

// A keyed vertex's input watermark has a fixed name: it is read without
// listing the vertex's ids.
func TestEventTimeInputWatermarkOfAnOperator(t *testing.T) {
	vs := &VertexSnapshot{ID: "k", Parallelism: 2, Keyed: true, Subtasks: []SubtaskSnapshot{{Index: 0}, {Index: 1}}}
	mp := planMetrics(vs, nil)
	if got := strings.Join(mp.want, " "); !strings.Contains(got, "0.currentInputWatermark") || !strings.Contains(got, "1.currentInputWatermark") {
		t.Fatalf("want %s", got)
	}
	m := MetricMap(mustDecode(t, `[{"id":"0.currentInputWatermark","value":"-9223372036854775808"},{"id":"1.currentInputWatermark","value":"1764669600000"}]`))
	for i := range vs.Subtasks {
		if err := applyEventTime(&vs.Subtasks[i], vs, mp.operator[i], m); err != nil {
			t.Fatal(err)
		}
	}
	if w := vs.Subtasks[0].EventTime.InputWatermark; w != WatermarkNone {
		t.Errorf("subtask 0 input watermark %d, want none yet", w)
	}
	if w := vs.Subtasks[1].EventTime.InputWatermark; w != 1764669600000 {
		t.Errorf("subtask 1 input watermark %d", w)
	}
	if IsEventTime(WatermarkNone) || IsEventTime(WatermarkEnd) || IsEventTime(WatermarkUnread) || !IsEventTime(0) {
		t.Error("IsEventTime")
	}
}

func mustDecode(t *testing.T, body string) []Metric {
	t.Helper()
	ms, err := decodeMetrics([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func sameFloat(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }
