package assign

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// jobVertexScalerTestOptions is the configuration JobVertexScalerTest.setup
// builds (apache/flink-kubernetes-operator, flink-autoscaler/src/test/java/
// org/apache/flink/autoscaler/JobVertexScalerTest.java): no scale-down or
// scale-up cap, catch-up duration 0 (so no lag or restart term), the other
// options at their defaults.
func jobVertexScalerTestOptions(utilization float64) AutoscalerOptions {
	o := DefaultAutoscalerOptions()
	o.ScaleDownMaxFactor = 1
	o.ScaleUpMaxFactor = math.MaxInt32
	o.CatchUpDuration = 0
	o.TargetUtilization = utilization
	return o
}

// TestScaleTargetParallelismOperatorCases replays the operator's own
// JobVertexScalerTest cases through ScaleTargetParallelism. The test's
// evaluated(parallelism, targetDataRate, trueProcessingRate) helper gives a
// vertex with max parallelism 720, no partitions, catch-up rate 0 and the
// band from ScalingMetricEvaluator.computeProcessingRateThresholds; the
// parameterised tests feed it HASH inputs, so it is aligned to 720 key
// groups. The Java expectation ParallelismChange.build(p, outside) is
// Aligned.Parallelism = p and OutsideBand = outside; noChange() is p =
// current. Parallelism is what the job-wide band rule then applies when the
// vertex is the only one that changed.
//
// Sources: testParallelismScaling and testSendingScalingLimitedEvents at
// 78fd0da07eae (their alignment is EVENLY_SPREAD of operator 1.14, which
// agrees with main's BALANCED on every testParallelismScaling row);
// testMinParallelismLimitIsUsed and testMaxParallelismLimitIsUsed at
// 109d2d9b4666; ScalingExecutorTest.testUtilizationBoundaries for the band.
func TestScaleTargetParallelismOperatorCases(t *testing.T) {
	type want struct {
		computed, aligned, parallelism int
		outside                        bool
	}
	tests := []struct {
		name                 string
		opts                 func() AutoscalerOptions
		current              int
		partitions           int
		rate, tpr            float64
		want                 want
		alsoEvenlySpread1_14 bool // the Java test's own alignment gives the same
	}{
		{"testParallelismScaling util 1 (10, 50, 100)", func() AutoscalerOptions { return jobVertexScalerTestOptions(1) },
			10, 0, 50, 100, want{5, 5, 5, true}, true},
		{"testParallelismScaling util 0.8 (10, 50, 100)", func() AutoscalerOptions { return jobVertexScalerTestOptions(.8) },
			10, 0, 50, 100, want{7, 8, 10, false}, true},
		{"testParallelismScaling util 0.8 (10, 80, 100) noChange", func() AutoscalerOptions { return jobVertexScalerTestOptions(.8) },
			10, 0, 80, 100, want{10, 10, 10, false}, true},
		{"testParallelismScaling util 0.8 (10, 60, 100)", func() AutoscalerOptions { return jobVertexScalerTestOptions(.8) },
			10, 0, 60, 100, want{8, 8, 10, false}, true},
		{"testParallelismScaling util 0.8 (10, 59, 100)", func() AutoscalerOptions { return jobVertexScalerTestOptions(.8) },
			10, 0, 59, 100, want{8, 8, 10, false}, true},
		{"testParallelismScaling util 0.5 (2, 100, 40)", func() AutoscalerOptions { return jobVertexScalerTestOptions(.5) },
			2, 0, 100, 40, want{10, 10, 10, true}, true},
		{"testParallelismScaling util 0.6 (2, 100, 100)", func() AutoscalerOptions { return jobVertexScalerTestOptions(.6) },
			2, 0, 100, 100, want{4, 4, 4, true}, true},
		{"testParallelismScaling scale-down.max-factor 0.5 (10, 10, 100)", func() AutoscalerOptions {
			o := jobVertexScalerTestOptions(1)
			o.ScaleDownMaxFactor = .5
			return o
		}, 10, 0, 10, 100, want{5, 5, 5, true}, true},
		{"testParallelismScaling scale-down.max-factor 0.6 (10, 10, 100)", func() AutoscalerOptions {
			o := jobVertexScalerTestOptions(1)
			o.ScaleDownMaxFactor = .6
			return o
		}, 10, 0, 10, 100, want{4, 4, 4, true}, true},
		{"testParallelismScaling scale-up.max-factor 0.5 (10, 200, 10)", func() AutoscalerOptions {
			o := jobVertexScalerTestOptions(1)
			o.ScaleDownMaxFactor, o.ScaleUpMaxFactor = .6, .5
			return o
		}, 10, 0, 200, 10, want{15, 15, 15, true}, true},
		{"testParallelismScaling scale-up.max-factor 0.6 (10, 200, 10)", func() AutoscalerOptions {
			o := jobVertexScalerTestOptions(1)
			o.ScaleDownMaxFactor, o.ScaleUpMaxFactor = .6, .6
			return o
		}, 10, 0, 200, 10, want{16, 16, 16, true}, true},
		{"testMinParallelismLimitIsUsed (10, 100, 500)", func() AutoscalerOptions {
			o := jobVertexScalerTestOptions(.7)
			o.VertexMinParallelism = 5
			return o
		}, 10, 0, 100, 500, want{5, 5, 5, true}, true},
		{"testMinParallelismLimitIsUsed current 4 below the minimum", func() AutoscalerOptions {
			o := jobVertexScalerTestOptions(.7)
			o.VertexMinParallelism = 5
			return o
		}, 4, 0, 100, 500, want{4, 4, 4, true}, true},
		{"testMaxParallelismLimitIsUsed (10, 500, 100)", func() AutoscalerOptions {
			o := jobVertexScalerTestOptions(1)
			o.VertexMaxParallelism = 10
			return o
		}, 10, 0, 500, 100, want{10, 10, 10, true}, true},
		{"testMaxParallelismLimitIsUsed current 12 above the maximum", func() AutoscalerOptions {
			o := jobVertexScalerTestOptions(1)
			o.VertexMaxParallelism = 10
			return o
		}, 12, 0, 500, 100, want{12, 12, 12, true}, true},
		// The 1.14 test expects 15 with a ScalingLimited event; main's BALANCED
		// finds nothing in 20..15 and keeps 20 (TestScaleTargetParallelismGenerations).
		{"testSendingScalingLimitedEvents 15 partitions, main BALANCED", func() AutoscalerOptions { return jobVertexScalerTestOptions(1) },
			10, 15, 200, 100, want{20, 20, 20, true}, false},
		{"ScalingExecutorTest.testUtilizationBoundaries boundary 0 (1, 70, 100)", func() AutoscalerOptions {
			o := jobVertexScalerTestOptions(.6)
			o.TargetUtilizationBoundary, o.RestartTime = 0, 0
			return o
		}, 1, 0, 70, 100, want{2, 2, 2, true}, true},
		{"ScalingExecutorTest.testUtilizationBoundaries boundary 0.2 (1, 70, 100) within", func() AutoscalerOptions {
			o := jobVertexScalerTestOptions(.6)
			o.TargetUtilizationBoundary, o.RestartTime = .2, 0
			return o
		}, 1, 0, 70, 100, want{2, 2, 1, false}, true},
		{"ScalingExecutorTest.testUtilizationBoundaries boundary 0.2 (1, 85, 100)", func() AutoscalerOptions {
			o := jobVertexScalerTestOptions(.6)
			o.TargetUtilizationBoundary, o.RestartTime = .2, 0
			return o
		}, 1, 0, 85, 100, want{2, 2, 2, true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			modes := []AlignmentMode{Balanced}
			if tt.alsoEvenlySpread1_14 {
				modes = append(modes, EvenlySpread114)
			}
			for _, mode := range modes {
				in := AutoscalerInput{Current: tt.current, MaxParallelism: 720, NumPartitions: tt.partitions,
					InputRate: tt.rate, TrueProcessingRate: tt.tpr, Options: tt.opts()}
				in.Options.Alignment = mode
				r, err := ScaleTargetParallelism(in)
				if err != nil {
					t.Fatalf("ScaleTargetParallelism(%+v) error %v", in, err)
				}
				got := want{r.Computed, r.Aligned.Parallelism, r.Parallelism, r.OutsideBand}
				if got != tt.want {
					t.Errorf("ScaleTargetParallelism(%s: current %d, rate %g, tpr %g) = %+v, want %+v\n%s",
						mode, tt.current, tt.rate, tt.tpr, got, tt.want, strings.Join(r.Steps, "\n"))
				}
			}
		})
	}
}

// TestScaleTargetParallelismGenerations runs JobVertexScalerTest
// .testSendingScalingLimitedEvents (78fd0da07eae) under each generation: a
// source with 15 partitions, current 10, target rate 200, TPR 100, target
// utilization 1, so the computed parallelism is 20. Operator 1.14
// (EVENLY_SPREAD, the test's own configuration) limits it to 15 and emits
// ScalingLimited (the test's message has expected 20, actual 15); 1.15 does
// the same (15 keeps the scale-up direction); main's BALANCED and
// EVENLY_SPREAD search 20..15, find nothing and keep 20.
func TestScaleTargetParallelismGenerations(t *testing.T) {
	tests := []struct {
		mode    AlignmentMode
		want    int
		limited bool
	}{
		{EvenlySpread114, 15, true},
		{EvenlySpread115, 15, true},
		{Balanced, 20, false},
		{EvenlySpread, 20, false},
		{AlignmentOff, 20, false},
	}
	for _, tt := range tests {
		o := jobVertexScalerTestOptions(1)
		o.Alignment = tt.mode
		in := AutoscalerInput{Current: 10, MaxParallelism: 720, NumPartitions: 15, InputRate: 200, TrueProcessingRate: 100, Options: o}
		r, err := ScaleTargetParallelism(in)
		if err != nil {
			t.Fatalf("ScaleTargetParallelism(%s) error %v", tt.mode, err)
		}
		if r.Computed != 20 || r.Aligned.Parallelism != tt.want || r.Aligned.Limited != tt.limited {
			t.Errorf("ScaleTargetParallelism(%s) = computed %d, aligned %d (limited %t), want 20, %d (limited %t)",
				tt.mode, r.Computed, r.Aligned.Parallelism, r.Aligned.Limited, tt.want, tt.limited)
		}
	}
}

// TestClampParallelism replays the operator tests that call
// JobVertexScaler.scale directly with a scale factor and limits, on vertices
// that are not aligned: testParallelismComputation (78fd0da07eae, lower limit
// 1, upper limit Integer.MAX_VALUE, NOT_ADJUST_INPUTS) and the unaligned rows
// of testParallelismComputationWithLimit (109d2d9b4666).
func TestClampParallelism(t *testing.T) {
	tests := []struct {
		name               string
		current, maxP      int
		scaleFactor        float64
		lower, upper, want int
	}{
		{"testParallelismComputation 1×0.0001", 1, 720, 0.0001, 1, math.MaxInt32, 1},
		{"testParallelismComputation 2×0.1", 2, 720, 0.1, 1, math.MaxInt32, 1},
		{"testParallelismComputation 6×0.8", 6, 720, 0.8, 1, math.MaxInt32, 5},
		{"testParallelismComputation 16×1.5", 16, 128, 1.5, 1, math.MaxInt32, 24},
		{"testParallelismComputation 200×2", 200, 720, 2, 1, math.MaxInt32, 400},
		{"testParallelismComputation 200×MAX_VALUE", 200, 720, math.MaxInt32, 1, math.MaxInt32, 720},
		{"testParallelismComputationWithLimit 6×0.8 upper 700", 6, 720, 0.8, 1, 700, 5},
		{"testParallelismComputationWithLimit 8×0.8 lower 8", 8, 720, 0.8, 8, 700, 8},
		{"testParallelismComputationWithLimit 200×2 upper 300", 200, 720, 2, 1, 300, 300},
		{"testParallelismComputationWithLimit 200×MAX_VALUE upper 600", 200, 720, math.MaxInt32, 1, 600, 600},
		{"NaN scale factor casts to 0, then the lower limit", 4, 720, math.NaN(), 1, 200, 1},
	}
	for _, tt := range tests {
		if got := clampParallelism(tt.current, tt.maxP, tt.scaleFactor, tt.lower, tt.upper); got != tt.want {
			t.Errorf("%s: clampParallelism(%d, %d, %g, %d, %d) = %d, want %d",
				tt.name, tt.current, tt.maxP, tt.scaleFactor, tt.lower, tt.upper, got, tt.want)
		}
	}
}

// TestScaleWithAlignment replays JobVertexScalerTest
// .testParallelismComputationWithAdjustment (78fd0da07eae): JobVertexScaler
// .scale with a scale factor, lower limit 1 and upper limit
// Integer.MAX_VALUE, then alignment. The test's figures are for operator
// 1.14 (EVENLY_SPREAD by default, MAXIMIZE_UTILISATION where set); the
// BALANCED column is main's answer for the same clamped value, from
// ParallelismAligner.firstAlignedInRegion. The last row's max parallelism
// is Integer.MAX_VALUE in Java, which Flink never runs with; 32768 gives the
// same region since N = 199.
func TestScaleWithAlignment(t *testing.T) {
	tests := []struct {
		name             string
		current, n, maxP int
		scaleFactor      float64
		legacyMode       AlignmentMode
		legacy, balanced int
	}{
		{"keyed 36, 6×0.8 (scale-down stops at a divisor)", 6, 0, 36, 0.8, EvenlySpread114, 6, 6},
		{"keyed 128, 16×1.5", 16, 0, 128, 1.5, EvenlySpread114, 32, 26},
		{"keyed 720, 200×1.3", 200, 0, 720, 1.3, EvenlySpread114, 360, 360},
		{"keyed 720, 200×MAX_VALUE", 200, 0, 720, math.MaxInt32, EvenlySpread114, 720, 720},
		{"keyed 128, 10×2.5 expectedEvenly", 10, 0, 128, 2.5, EvenlySpread114, 32, 26},
		{"keyed 128, 10×2.5 expectedMaximumUtilization", 10, 0, 128, 2.5, MaximizeUtilisation, 26, 26},
		{"35 partitions max 30, 20×0.9", 20, 35, 30, 0.9, EvenlySpread114, 18, 18},
		{"200 partitions max 128, 80×1.4 (fallback to 100)", 80, 200, 128, 1.4, EvenlySpread114, 100, 112},
		{"199 partitions, 24×4 expectedEvenly", 24, 199, 32768, 4, EvenlySpread114, 199, 100},
		{"199 partitions, 24×4 expectedMaximumUtilization", 24, 199, 32768, 4, MaximizeUtilisation, 100, 100},
	}
	for _, tt := range tests {
		computed := clampParallelism(tt.current, tt.maxP, tt.scaleFactor, 1, math.MaxInt32)
		for _, c := range []struct {
			mode AlignmentMode
			want int
		}{{tt.legacyMode, tt.legacy}, {Balanced, tt.balanced}} {
			got := Align(c.mode, tt.n, tt.maxP, tt.current, computed, math.MaxInt32)
			if got.Parallelism != c.want {
				t.Errorf("%s: Align(%s, %d, %d, %d, %d, MaxInt32) = %d (%s), want %d",
					tt.name, c.mode, tt.n, tt.maxP, tt.current, computed, got.Parallelism, got.Note, c.want)
			}
		}
	}
}

// TestProcessingRateThresholds replays ScalingMetricEvaluatorTest
// .testUtilizationBoundaryComputation (66f7b42fb435): utilization target 0.8,
// max 0.9, min 0.7, restart time 1 s; getThresholds(targetRate, catchUpRate)
// = (SCALE_UP_RATE_THRESHOLD, SCALE_DOWN_RATE_THRESHOLD). The catch-up rate
// is given here as lag over the catch-up duration (700 over 2 s = 350).
func TestProcessingRateThresholds(t *testing.T) {
	tests := []struct {
		name           string
		catchUp        time.Duration
		lag            float64
		backlog        bool
		wantUp, wantDn float64
	}{
		{"catch-up 0, restart time does not factor in", 0, 0, false, 778, 1000},
		{"catch-up 2s, catch-up rate 350", 2 * time.Second, 700, false, 1128, 1700},
		{"catch-up 2s, catch-up rate 0", 2 * time.Second, 0, false, 778, 1350},
		{"catch-up 2s, catch-up rate 350, processing backlog", 2 * time.Second, 700, true, 1050, math.Inf(1)},
		{"catch-up 2s, catch-up rate 0, processing backlog", 2 * time.Second, 0, true, 700, math.Inf(1)},
	}
	for _, tt := range tests {
		o := DefaultAutoscalerOptions()
		o.TargetUtilization, o.UtilizationMax, o.UtilizationMin = 0.8, 0.9, 0.7
		o.RestartTime, o.CatchUpDuration = time.Second, tt.catchUp
		in := AutoscalerInput{Current: 1, MaxParallelism: 128, InputRate: 700, TrueProcessingRate: 1000,
			Lag: tt.lag, OtherSourceInBacklog: tt.backlog, Options: o}
		r, err := ScaleTargetParallelism(in)
		if err != nil {
			t.Fatalf("%s: ScaleTargetParallelism error %v", tt.name, err)
		}
		if r.ScaleUpThreshold != tt.wantUp || r.ScaleDownThreshold != tt.wantDn || r.ProcessingBacklog != tt.backlog {
			t.Errorf("%s: ScaleTargetParallelism thresholds = (%g, %g) backlog %t, want (%g, %g) backlog %t",
				tt.name, r.ScaleUpThreshold, r.ScaleDownThreshold, r.ProcessingBacklog, tt.wantUp, tt.wantDn, tt.backlog)
		}
	}
}

// TestTrueProcessingRate replays ScalingMetricEvaluatorTest (66f7b42fb435)
// cases of computeTrueProcessingRate(busyTimeAvg, inputRateAvg, ...) that
// take the busy-time branch (no observed TPR in the history):
// testObservedTprEvaluation / testMissingObservedTpr and
// testZeroValuesForRatesOrBusyness. Java's argument order is (busy, rate).
func TestTrueProcessingRate(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		name       string
		rate, busy float64
		want       float64
	}{
		{"testMissingObservedTpr busy 100 rate 35", 35, 100, 350},
		{"testMissingObservedTpr busy 0 rate 100", 100, 0, inf},
		{"testMissingObservedTpr busy 0 rate 0", 0, 0, inf},
		{"testMissingObservedTpr busy NaN rate NaN", math.NaN(), math.NaN(), math.NaN()},
		{"testZeroValuesForRatesOrBusyness busy 0 rate 1", 1, 0, inf},
		{"testZeroValuesForRatesOrBusyness busy 1 rate 0", 0, 1, inf},
		{"testZeroValuesForRatesOrBusyness busy NaN rate 0", 0, math.NaN(), inf},
		{"fully busy: TPR is the input rate", 750, 1000, 750},
	}
	for _, tt := range tests {
		got := TrueProcessingRate(tt.rate, tt.busy)
		if !(got == tt.want || math.IsNaN(got) && math.IsNaN(tt.want)) {
			t.Errorf("%s: TrueProcessingRate(%g, %g) = %g, want %g", tt.name, tt.rate, tt.busy, got, tt.want)
		}
	}
}

// TestAggregateBusyTime checks the aggregators and getBusyTimeMsPerSecond's
// guards, and shows why MAX is the default: under skew it lowers the true
// processing rate to what the busiest subtask allows.
func TestAggregateBusyTime(t *testing.T) {
	skewed := []float64{500, 500, 500, 900}
	tests := []struct {
		agg  BusyTimeAggregator
		in   []float64
		want float64
	}{
		{BusyTimeMax, skewed, 900},
		{BusyTimeAvg, skewed, 600},
		{BusyTimeMin, skewed, 500},
		{DefaultBusyTimeAggregator, []float64{-3, -1}, 0},
		{BusyTimeMax, []float64{100, math.NaN()}, math.NaN()},
		{BusyTimeAvg, []float64{100, math.Inf(1)}, math.NaN()},
		{BusyTimeMax, nil, math.NaN()},
		{"P99", skewed, math.NaN()},
	}
	for _, tt := range tests {
		got := AggregateBusyTime(tt.agg, tt.in)
		if !(got == tt.want || math.IsNaN(got) && math.IsNaN(tt.want)) {
			t.Errorf("AggregateBusyTime(%s, %v) = %g, want %g", tt.agg, tt.in, got, tt.want)
		}
	}
	// 1800 rec/s over the skewed vertex: MAX says 2000 rec/s, AVG 3000.
	if got := TrueProcessingRate(1800, AggregateBusyTime(BusyTimeMax, skewed)); got != 2000 {
		t.Errorf("TrueProcessingRate(1800, MAX busy) = %g, want 2000", got)
	}
	if got := TrueProcessingRate(1800, AggregateBusyTime(BusyTimeAvg, skewed)); got != 3000 {
		t.Errorf("TrueProcessingRate(1800, AVG busy) = %g, want 3000", got)
	}
}

// TestScaleTargetParallelismUniformLoad is a Kafka source with 12 partitions
// read by 4 subtasks, each busy 500 ms/s at 2000 rec/s in total, with 7.2 M
// records of lag, under the operator's defaults. Every aggregator agrees on
// busy time 500, so TPR = 2000 / 0.5 = 4000. Catch-up rate = 7.2e6 / 1800 s =
// 4000; target = round(4000 + 2000·300/1800 + 2000/0.7) = round(7190.48) =
// 7190; scale factor 7190/4000 = 1.7975 (inside [0.4, 100001]); ceil(7.19) =
// 8; BALANCED finds 12 (the first divisor of 12 from 8, no q in 8..11 lowers
// 12/q below 1). Lag/rate = 3600 s > 300 s, so the source is processing
// backlog: band [round(4000 + 2000/1), +∞] = [6000, +∞], and 4000 < 6000.
func TestScaleTargetParallelismUniformLoad(t *testing.T) {
	busy := []float64{500, 500, 500, 500}
	for _, agg := range []BusyTimeAggregator{BusyTimeMax, BusyTimeAvg, BusyTimeMin} {
		if got := AggregateBusyTime(agg, busy); got != 500 {
			t.Errorf("AggregateBusyTime(%s, %v) = %g, want 500", agg, busy, got)
		}
	}
	in := AutoscalerInput{Current: 4, MaxParallelism: 128, NumPartitions: 12, InputRate: 2000,
		TrueProcessingRate: TrueProcessingRate(2000, AggregateBusyTime(DefaultBusyTimeAggregator, busy)),
		Lag:                7.2e6, Options: DefaultAutoscalerOptions()}
	r, err := ScaleTargetParallelism(in)
	if err != nil {
		t.Fatalf("ScaleTargetParallelism error %v", err)
	}
	type summary struct {
		CatchUp, Target, Factor float64
		Computed, Aligned, P    int
		Backlog, Outside        bool
		Up, Down                float64
	}
	got := summary{r.CatchUpRate, r.TargetCapacity, r.ScaleFactor, r.Computed, r.Aligned.Parallelism, r.Parallelism,
		r.ProcessingBacklog, r.OutsideBand, r.ScaleUpThreshold, r.ScaleDownThreshold}
	want := summary{4000, 7190, 1.7975, 8, 12, 12, true, true, 6000, math.Inf(1)}
	if got != want {
		t.Errorf("ScaleTargetParallelism(uniform) = %+v, want %+v", got, want)
	}
	wantSteps := []string{
		"true processing rate 4000 rec/s at parallelism 4",
		"target capacity = catch-up 4000 + restart 333 + input 2000 / utilization 0.7 = 7190 rec/s",
		"scale factor 7190 / 4000 = 1.798",
		"ceil(1.798 × 4) within [1, 128] = 8",
		"alignment BALANCED: 12 (divides 12 partitions)",
		"band [6000, +∞] rec/s (processing backlog: scale-down off) excludes the true processing rate 4000: parallelism 4 → 12",
	}
	if strings.Join(r.Steps, "\n") != strings.Join(wantSteps, "\n") {
		t.Errorf("ScaleTargetParallelism(uniform).Steps =\n%s\nwant\n%s", strings.Join(r.Steps, "\n"), strings.Join(wantSteps, "\n"))
	}

	// Without the lag the same vertex sits inside its band at 2000 rec/s:
	// [round(2000/1.0), round(333.3 + 2000/0.4)] = [2000, 5333] holds 4000.
	in.Lag = 0
	r, err = ScaleTargetParallelism(in)
	if err != nil {
		t.Fatalf("ScaleTargetParallelism error %v", err)
	}
	if r.OutsideBand || r.Parallelism != 4 || r.ScaleUpThreshold != 2000 || r.ScaleDownThreshold != 5333 {
		t.Errorf("ScaleTargetParallelism(uniform, no lag) = outside %t, parallelism %d, band [%g, %g], want false, 4, [2000, 5333]",
			r.OutsideBand, r.Parallelism, r.ScaleUpThreshold, r.ScaleDownThreshold)
	}
}

// TestScaleTargetParallelismNoChange covers the two early returns of
// computeScaleTargetParallelism and a vertex the operator does not align.
func TestScaleTargetParallelismNoChange(t *testing.T) {
	base := AutoscalerInput{Current: 6, MaxParallelism: 128, InputRate: 100, TrueProcessingRate: 50, Options: DefaultAutoscalerOptions()}

	in := base
	in.TrueProcessingRate = math.NaN()
	if r, err := ScaleTargetParallelism(in); err != nil || r.Parallelism != 6 || r.Computed != 6 {
		t.Errorf("ScaleTargetParallelism(TPR NaN) = %d/%d, %v, want 6/6, nil", r.Computed, r.Parallelism, err)
	}
	in = base
	in.InputRate = math.NaN()
	if r, err := ScaleTargetParallelism(in); err != nil || r.Parallelism != 6 || !math.IsNaN(r.TargetCapacity) {
		t.Errorf("ScaleTargetParallelism(rate NaN) = %d, target %g, %v, want 6, NaN, nil", r.Parallelism, r.TargetCapacity, err)
	}
	// Idle input: TPR +Inf, scale factor 0 capped at 0.4, ceil(2.4) = 3,
	// not aligned, band [0, 0] excludes +Inf.
	in = base
	in.InputRate, in.TrueProcessingRate, in.NotAligned = 0, math.Inf(1), true
	r, err := ScaleTargetParallelism(in)
	if err != nil || r.ScaleFactor != 0.4 || r.Computed != 3 || r.Aligned.Parallelism != 3 || r.Parallelism != 3 {
		t.Errorf("ScaleTargetParallelism(idle) = factor %g, computed %d, aligned %d, parallelism %d, %v, want 0.4, 3, 3, 3, nil",
			r.ScaleFactor, r.Computed, r.Aligned.Parallelism, r.Parallelism, err)
	}
}

// TestScaleTargetParallelismInvalid checks that bad input is an error naming
// the field, never a panic.
func TestScaleTargetParallelismInvalid(t *testing.T) {
	ok := AutoscalerInput{Current: 2, MaxParallelism: 128, InputRate: 1, TrueProcessingRate: 1, Options: DefaultAutoscalerOptions()}
	tests := []struct {
		name   string
		modify func(*AutoscalerInput)
		want   string
	}{
		{"max parallelism", func(in *AutoscalerInput) { in.MaxParallelism = 0 }, "max parallelism"},
		{"current", func(in *AutoscalerInput) { in.Current = 0 }, "current parallelism 0"},
		{"partitions", func(in *AutoscalerInput) { in.NumPartitions = -1 }, "partition count -1"},
		{"lag", func(in *AutoscalerInput) { in.Lag = -1 }, "lag -1"},
		{"min parallelism", func(in *AutoscalerInput) { in.Options.VertexMinParallelism = 0 }, "vertex min parallelism 0"},
		{"mode", func(in *AutoscalerInput) { in.Options.Alignment = "NEAREST" }, `unknown alignment mode "NEAREST"`},
	}
	for _, tt := range tests {
		in := ok
		tt.modify(&in)
		if _, err := ScaleTargetParallelism(in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: ScaleTargetParallelism error = %v, want one containing %q", tt.name, err, tt.want)
		}
	}
	if _, err := ScaleTargetParallelism(ok); err != nil {
		t.Errorf("ScaleTargetParallelism(valid) error = %v, want nil", err)
	}
}

// TestScaleTargetParallelismInvariants checks, on random vertices, the
// bounds JobVertexScaler.scale guarantees and the band rule.
func TestScaleTargetParallelismInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	modes := AlignmentModes()
	for i := range 5000 {
		o := DefaultAutoscalerOptions()
		o.Alignment = modes[rng.IntN(len(modes))]
		o.VertexMinParallelism = 1 + rng.IntN(4)
		o.VertexMaxParallelism = o.VertexMinParallelism + rng.IntN(300)
		in := AutoscalerInput{
			Current:            1 + rng.IntN(400),
			MaxParallelism:     1 + rng.IntN(1024),
			InputRate:          rng.Float64() * 1e5,
			TrueProcessingRate: rng.Float64() * 1e5,
			Lag:                rng.Float64() * 1e8 * float64(rng.IntN(2)),
			NotAligned:         rng.IntN(4) == 0,
			Options:            o,
		}
		if rng.IntN(2) == 0 {
			in.NumPartitions = 1 + rng.IntN(256)
		}
		r, err := ScaleTargetParallelism(in)
		if err != nil {
			t.Fatalf("#%d ScaleTargetParallelism(%+v) error %v", i, in, err)
		}
		// A lower limit above the max parallelism yields to it, as in Java.
		upper := min(in.MaxParallelism, max(in.Current, o.VertexMaxParallelism))
		lower := min(in.Current, o.VertexMinParallelism, upper)
		if r.Computed < lower || r.Computed > upper {
			t.Fatalf("#%d ScaleTargetParallelism(%+v).Computed = %d, want in [%d, %d]", i, in, r.Computed, lower, upper)
		}
		if r.ScaleFactor < 1-o.ScaleDownMaxFactor || r.ScaleFactor > 1+o.ScaleUpMaxFactor {
			t.Fatalf("#%d ScaleTargetParallelism(%+v).ScaleFactor = %g, want within the caps", i, in, r.ScaleFactor)
		}
		if !r.OutsideBand && r.Parallelism != in.Current {
			t.Fatalf("#%d ScaleTargetParallelism(%+v).Parallelism = %d inside the band, want current %d", i, in, r.Parallelism, in.Current)
		}
		if r.Parallelism < 1 || len(r.Steps) == 0 {
			t.Fatalf("#%d ScaleTargetParallelism(%+v) = parallelism %d, %d steps", i, in, r.Parallelism, len(r.Steps))
		}
	}
}

// TestJavaConversions checks the two Java conversions the computation
// depends on: Math.round(double) (ties up, NaN 0, saturating) and the (int)
// cast of a double (NaN 0, saturating, truncating).
func TestJavaConversions(t *testing.T) {
	rounds := []struct{ in, want float64 }{
		{2.5, 3}, {-2.5, -2}, {62.5, 63}, {0.49999999999999994, 0}, {-0.5, 0}, {7190.476, 7190},
		{math.NaN(), 0}, {math.Inf(1), math.MaxInt64}, {math.Inf(-1), math.MinInt64},
	}
	for _, tt := range rounds {
		if got := javaRound(tt.in); got != tt.want {
			t.Errorf("javaRound(%g) = %g, want %g", tt.in, got, tt.want)
		}
	}
	casts := []struct {
		in   float64
		want int
	}{
		{7.9, 7}, {-7.9, -7}, {math.NaN(), 0}, {1e12, math.MaxInt32}, {-1e12, math.MinInt32},
	}
	for _, tt := range casts {
		if got := javaDoubleToInt(tt.in); got != tt.want {
			t.Errorf("javaDoubleToInt(%g) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// FuzzScaleTargetParallelism checks that any input gives either an error or
// a result within the clamp, and never panics.
func FuzzScaleTargetParallelism(f *testing.F) {
	f.Add(10, 720, 0, 50.0, 100.0, 0.0, uint8(0))
	f.Add(4, 128, 12, 2000.0, 4000.0, 7.2e6, uint8(1))
	f.Fuzz(func(t *testing.T, current, maxP, partitions int, rate, tpr, lag float64, mode uint8) {
		o := DefaultAutoscalerOptions()
		modes := AlignmentModes()
		o.Alignment = modes[int(mode)%len(modes)]
		in := AutoscalerInput{Current: current, MaxParallelism: maxP, NumPartitions: partitions,
			InputRate: rate, TrueProcessingRate: tpr, Lag: lag, Options: o}
		r, err := ScaleTargetParallelism(in)
		if err != nil {
			return
		}
		upper := min(maxP, max(current, o.VertexMaxParallelism))
		if r.Computed < 1 || r.Computed > max(current, upper) || r.Parallelism < 1 {
			t.Fatalf("ScaleTargetParallelism(%+v) = computed %d, parallelism %d, want in [1, %d]",
				in, r.Computed, r.Parallelism, max(current, upper))
		}
	})
}
