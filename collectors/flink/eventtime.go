package flink

import (
	"fmt"
	"math"
	"strconv"
)

// Event time: the watermark gauges Flink registers on every task and
// operator, the FLIP-33 source-reader gauges and, on Flink 2.1+, the
// per-split watermark gauges of FLIP-513. They are read in the batched
// vertex metric request readMetrics already makes, so event time costs no
// request of its own (the /watermarks endpoint answers the same task-level
// currentInputWatermark gauges, and nothing for a source vertex).
const (
	metricInputWatermark  = "currentInputWatermark"  // TaskIOMetricGroup / OperatorIOMetricGroup
	metricOutputWatermark = "currentOutputWatermark" // the source operator's (SourceOperator)
	metricSourceIdle      = "sourceIdleTime"         // SourceReaderMetricGroup, ms since the last record
	metricEmitLag         = "currentEmitEventTimeLag"
	metricFetchLag        = "currentFetchEventTimeLag"
	metricWatermarkLag    = "watermarkLag"
	metricAlignmentDrift  = "watermarkAlignmentDrift" // SourceOperator, with alignment only
)

// Per-split gauges (FLIP-513, Flink ≥ 2.1): "<operator>.split.<splitId>.
// watermark.<name>", a Kafka split id being "<topic>-<partition>".
const (
	splitWatermark = "currentWatermark"
	splitPaused    = "pausedTimeMsPerSecond"
)

// Watermark values with a meaning of their own. Flink's gauges report
// Long.MIN_VALUE until the first watermark (WatermarkNone) and
// Long.MAX_VALUE at the end of a bounded input (WatermarkEnd); any other
// value is an event time in milliseconds since the epoch.
// WatermarkUnread is skewscope's: the gauge was not reported (not
// registered, not listed, not fetched yet).
const (
	WatermarkNone   int64 = math.MinInt64
	WatermarkUnread int64 = math.MinInt64 + 1
	WatermarkEnd    int64 = math.MaxInt64
)

// IsEventTime reports whether w is an event time, not one of the
// Watermark* values.
func IsEventTime(w int64) bool {
	return w != WatermarkNone && w != WatermarkUnread && w != WatermarkEnd
}

// SubtaskEventTime is one subtask's event-time gauges, validated. The
// lags and the idle time are in milliseconds, NaN when not reported.
type SubtaskEventTime struct {
	// Read is set once the gauges were read: the zero value says nothing
	// (a watermark of 0 is an event time).
	Read bool
	// InputWatermark is the task's currentInputWatermark: the minimum over
	// its non-idle input channels (non-source vertices).
	InputWatermark int64
	// OutputWatermark is the source operator's currentOutputWatermark (a
	// source vertex): the minimum over the reader's non-idle splits.
	OutputWatermark int64
	// SourceIdleMs is the reader's sourceIdleTime: how long it has emitted
	// no record (an idle partition's reader, a reader without splits and
	// a reader paused by alignment alike).
	SourceIdleMs float64
	// EmitLagMs, FetchLagMs and WatermarkLagMs are FLIP-33's
	// currentEmitEventTimeLag, currentFetchEventTimeLag and watermarkLag,
	// where the reader reports them.
	EmitLagMs, FetchLagMs, WatermarkLagMs float64
	// AlignmentDriftMs is the source operator's watermarkAlignmentDrift
	// (jobs with watermark alignment): its watermark minus the group's
	// minimum plus the maximum drift; positive means the reader is paused.
	AlignmentDriftMs float64
}

// NoEventTime is a SubtaskEventTime before any gauge is read: every
// watermark unread, every figure NaN.
func NoEventTime() SubtaskEventTime {
	nan := math.NaN()
	return SubtaskEventTime{
		InputWatermark: WatermarkUnread, OutputWatermark: WatermarkUnread,
		SourceIdleMs: nan, EmitLagMs: nan, FetchLagMs: nan, WatermarkLagMs: nan, AlignmentDriftMs: nan,
	}
}

// SplitWatermark is a Kafka split's watermark gauges on the subtask that
// holds it (Flink ≥ 2.1), validated: Watermark is WatermarkUnread when not
// reported; PausedPerS (ms per second paused by watermark alignment,
// 0–1000) NaN when not read.
type SplitWatermark struct {
	Watermark  int64
	PausedPerS float64
	// ids are the gauges' metric ids, in the order of splitGauges.
	ids [2]string
}

var splitGauges = [2]string{splitWatermark, splitPaused}

// splitID is the id of a split gauge of st: "<subtask>.<operator>.split.
// <topic>-<partition>.watermark.<name>" (a DynamicKafkaSource's cluster
// is not part of its splits' ids as REST shows them, so none is built).
func splitID(st *KafkaPartitionState, name string) string {
	return strconv.Itoa(st.Subtask) + "." + st.Operator + ".split." + st.Topic + "-" +
		strconv.Itoa(int(st.Partition)) + ".watermark." + name
}

// watermarkOf reads a watermark gauge: WatermarkUnread when absent, an
// error when the value is not a whole number of milliseconds.
func watermarkOf(m map[string]Metric, id string) (int64, error) {
	v, ok := m[id]
	if !ok {
		return WatermarkUnread, nil
	}
	w, ok := v.Int64()
	if !ok {
		return WatermarkUnread, fmt.Errorf("flink answered %s %q, want a watermark in milliseconds", id, v.Raw)
	}
	if w == WatermarkUnread {
		// Not a value Flink's gauges produce; read as "none yet".
		w = WatermarkNone
	}
	return w, nil
}

// msOf reads a gauge in milliseconds: NaN when absent or "NaN"; an error
// when it is not finite or, with nonNegative, below 0.
func msOf(m map[string]Metric, id string, nonNegative bool) (float64, error) {
	v, ok := m[id]
	if !ok || math.IsNaN(v.Value) {
		return math.NaN(), nil
	}
	if math.IsInf(v.Value, 0) || (nonNegative && v.Value < 0) {
		want := "a finite number of milliseconds"
		if nonNegative {
			want = "a number of milliseconds ≥ 0"
		}
		return math.NaN(), fmt.Errorf("flink answered %s %q, want %s", id, v.Raw, want)
	}
	return v.Value, nil
}

// perSecondOf reads a time-per-second gauge: 0–1000 ms (a rounding over
// 1000 is taken as 1000), NaN when absent.
func perSecondOf(m map[string]Metric, id string) (float64, error) {
	v, err := msOf(m, id, true)
	if err != nil || math.IsNaN(v) {
		return v, err
	}
	if v > 1001 {
		return math.NaN(), fmt.Errorf("flink answered %s %q, want 0..1000 ms per second", id, m[id].Raw)
	}
	return min(v, 1000), nil
}

// eventTimeIDs are the event-time ids readMetrics asks for on subtask i
// of vs, from its listed ids (sources) or by their fixed names (the
// task-level input watermark of every other vertex). With split gauges
// (splits: Flink 2.1+), a reader's event-time lag gauges (emit, fetch,
// watermark lag) are left: the splits' watermarks say the same per
// partition, and each gauge costs a request line's share at every poll.
func eventTimeIDs(vs *VertexSnapshot, i int, operator string, listed map[string]bool, splits bool) []string {
	p := strconv.Itoa(i) + "."
	if !vs.Source {
		return []string{p + metricInputWatermark}
	}
	if operator == "" {
		return nil
	}
	var out []string
	for _, m := range []string{metricOutputWatermark, metricSourceIdle, metricEmitLag, metricFetchLag, metricWatermarkLag, metricAlignmentDrift} {
		if splits && (m == metricEmitLag || m == metricFetchLag || m == metricWatermarkLag) {
			continue
		}
		if id := p + operator + "." + m; listed[id] {
			out = append(out, id)
		}
	}
	return out
}

// splitIDs fills the split gauges' ids of every Kafka entry of o that
// lists them and returns those ids. Each gauge costs as many bytes of
// request line as an offset, so only those that tell something are read:
// the split's watermark always, its paused time only where the reader
// lists watermarkAlignmentDrift (alignment is configured: nothing else
// pauses a split). The active and idle times are left: a silent split
// without an idle timeout reads active 1000 (Flink has no notion of it
// being silent), and an idle timeout shows in the watermarks downstream.
func splitIDs(o *KafkaSourceObservation, listed map[string]bool) []string {
	var out []string
	for i := range o.States {
		st := &o.States[i]
		var sw SplitWatermark
		any := false
		aligned := listed[strconv.Itoa(st.Subtask)+"."+st.Operator+"."+metricAlignmentDrift]
		for k, g := range splitGauges {
			if g == splitPaused && !aligned {
				continue
			}
			if id := splitID(st, g); listed[id] {
				sw.ids[k] = id
				out = append(out, id)
				any = true
			}
		}
		if any {
			sw.Watermark = WatermarkUnread
			sw.PausedPerS = math.NaN()
			st.Split = &sw
		}
	}
	return out
}

// applyEventTime reads the event-time gauges of subtask i from m into st,
// returning the first invalid value's error (that gauge is left unread).
func applyEventTime(st *SubtaskSnapshot, vs *VertexSnapshot, operator string, m map[string]Metric) error {
	p := strconv.Itoa(st.Index) + "."
	et := NoEventTime()
	var errs []error
	keep := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	var err error
	if !vs.Source {
		et.InputWatermark, err = watermarkOf(m, p+metricInputWatermark)
		keep(err)
	} else if operator != "" {
		op := p + operator + "."
		et.OutputWatermark, err = watermarkOf(m, op+metricOutputWatermark)
		keep(err)
		et.SourceIdleMs, err = msOf(m, op+metricSourceIdle, true)
		keep(err)
		et.EmitLagMs, err = msOf(m, op+metricEmitLag, false)
		keep(err)
		et.FetchLagMs, err = msOf(m, op+metricFetchLag, false)
		keep(err)
		et.WatermarkLagMs, err = msOf(m, op+metricWatermarkLag, false)
		keep(err)
		et.AlignmentDriftMs, err = msOf(m, op+metricAlignmentDrift, false)
		keep(err)
	}
	et.Read = true
	st.EventTime = et
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// applySplits reads the split gauges of o's entries from m.
func applySplits(o *KafkaSourceObservation, m map[string]Metric) error {
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	for i := range o.States {
		sw := o.States[i].Split
		if sw == nil {
			continue
		}
		var err error
		if sw.ids[0] != "" {
			sw.Watermark, err = watermarkOf(m, sw.ids[0])
			keep(err)
		}
		if sw.ids[1] != "" {
			sw.PausedPerS, err = perSecondOf(m, sw.ids[1])
			keep(err)
		}
	}
	return first
}
