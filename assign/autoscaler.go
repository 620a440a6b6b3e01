package assign

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// This file reproduces the step of the Flink Kubernetes Operator autoscaler
// that comes before Align: from one vertex's evaluated metrics to the
// parallelism JobVertexScaler computes for it.
//
// Sources mirrored (apache/flink-kubernetes-operator, flink-autoscaler/src/
// main/java/org/apache/flink/autoscaler/), main-branch generation:
//
//   - JobVertexScaler.computeScaleTargetParallelism and JobVertexScaler.scale
//     at commit 921ac1e193dadd166ae45108d8bd160a5a517845 (after FLIP-586: scale
//     clamps, then delegates to alignment/ParallelismAligner.align).
//   - utils/AutoScalerUtils.getTargetProcessingCapacity at ee9a953e869f.
//   - ScalingMetricEvaluator.computeTprFromBusyTime, .computeTrueProcessingRate,
//     .computeBusyTimeAvg, .computeProcessingRateThresholds, .isProcessingBacklog
//     and .computeTargetDataRate (CATCH_UP_DATA_RATE) at 8e7d156af9a4. That
//     copy bounds the band by utilization.target ± target.utilization.boundary
//     only; the utilization.max/min overrides are taken from AutoScalerOptions
//     (3adc6b30311c) and ScalingMetricEvaluatorTest
//     .testUtilizationBoundaryComputation (66f7b42fb435), whose figures the
//     tests reproduce.
//   - metrics/ScalingMetrics.computeObservedTprWithBackpressure, .getObservedTpr
//     and .getBusyTimeMsPerSecond at e28149d889e0; metrics/MetricAggregator at
//     c49e65882bb7.
//   - ScalingExecutor.allChangedVerticesWithinUtilizationTarget (the job-wide
//     "no scaling while every changed vertex is inside its band" rule).
//   - config/AutoScalerOptions for the defaults.
//
// The stored copies of these files are not all at one commit; the figures in
// autoscaler_test.go come from the operator's JobVertexScalerTest (78fd0da07eae
// and 109d2d9b4666), ScalingMetricEvaluatorTest (66f7b42fb435) and
// ScalingExecutorTest.

// BusyTimeAggregator is job.autoscaler.metrics.busy-time.aggregator
// (AutoScalerOptions.BUSY_TIME_AGGREGATOR, enum metrics/MetricAggregator): how
// the per-subtask busyTimeMsPerSecond of a vertex is folded into one figure.
type BusyTimeAggregator string

// The busy-time aggregators. MAX has been the default since FLINK-30652
// (apache/flink-kubernetes-operator#505): the busiest subtask gates a keyed
// or skewed vertex, so AVG overestimates its true processing rate.
const (
	BusyTimeMax BusyTimeAggregator = "MAX"
	BusyTimeAvg BusyTimeAggregator = "AVG"
	BusyTimeMin BusyTimeAggregator = "MIN"
)

// DefaultBusyTimeAggregator is the operator's default, MAX.
const DefaultBusyTimeAggregator = BusyTimeMax

// AggregateBusyTime folds one sample of per-subtask busyTimeMsPerSecond
// values into the vertex figure the autoscaler divides by: the max, min or
// mean over subtasks (MetricAggregator.get on Flink's REST AggregatedMetric),
// then ScalingMetrics.getBusyTimeMsPerSecond's guards: a missing or
// non-finite value is NaN (the operator then excludes the vertex from
// scaling), and a negative one is raised to 0.
//
// With AVG the operator does not average gauges: it takes the rate of the
// vertex's accumulated busy time over the metric window divided by the
// parallelism (ScalingMetricEvaluator.computeBusyTimeAvg). For a single
// sample of steady subtasks that equals the mean computed here. With MAX and
// MIN the operator averages the per-sample aggregate (LOAD = busy/1000) over
// the window; callers with several samples average the results.
func AggregateBusyTime(agg BusyTimeAggregator, subtaskBusyMsPerSecond []float64) float64 {
	if len(subtaskBusyMsPerSecond) == 0 {
		return math.NaN()
	}
	var v float64
	switch agg {
	case BusyTimeMax:
		v = math.Inf(-1)
		for _, x := range subtaskBusyMsPerSecond {
			v = math.Max(v, x)
		}
	case BusyTimeMin:
		v = math.Inf(1)
		for _, x := range subtaskBusyMsPerSecond {
			v = math.Min(v, x)
		}
	case BusyTimeAvg:
		for _, x := range subtaskBusyMsPerSecond {
			v += x
		}
		v /= float64(len(subtaskBusyMsPerSecond))
	default:
		return math.NaN()
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return math.NaN()
	}
	return math.Max(0, v)
}

// TrueProcessingRate is the busy-time estimate of how many records per
// second a vertex could process at its current parallelism if it were busy
// all the time: inputRate / (busyTimeMsPerSecond / 1000), with inputRate the
// vertex's total records in per second (summed over subtasks) and
// busyTimeMsPerSecond the aggregate from AggregateBusyTime.
//
// It mirrors ScalingMetricEvaluator.computeTprFromBusyTime (main): an input
// rate of exactly 0 gives +Inf ("nothing is coming in, we assume infinite
// processing power"), checked first, so it holds whatever the busy time is.
// The division is IEEE, as in Java: busy time 0 with input gives +Inf, busy
// time NaN gives NaN, and a fully busy vertex (1000 ms/s) gives TPR = input
// rate. There is no cap at 1000 ms/s; the 1000 guard belongs to the
// backpressure estimate (ObservedTrueProcessingRate). Older operators replaced
// a NaN busy time by utilization.target × 1000 (ScalingMetrics
// .computeTprFromBusyTime at 0c5468b7); main does not.
func TrueProcessingRate(inputRate, busyTimeMsPerSecond float64) float64 {
	if inputRate == 0 {
		return math.Inf(1)
	}
	return inputRate / (busyTimeMsPerSecond / 1000)
}

// AutoscalerOptions are the job.autoscaler.* options ScaleTargetParallelism
// reads. Start from DefaultAutoscalerOptions: the zero value is not the
// operator's configuration.
type AutoscalerOptions struct {
	// TargetUtilization is utilization.target (0.7), clamped to [0, 1].
	TargetUtilization float64 `json:"targetUtilization"`
	// TargetUtilizationBoundary is the deprecated target.utilization.boundary
	// (0.3): the band is target ± boundary unless UtilizationMax/Min are set.
	TargetUtilizationBoundary float64 `json:"targetUtilizationBoundary"`
	// UtilizationMax and UtilizationMin are utilization.max and
	// utilization.min (no default); 0 means unset. The operator's validator
	// requires max in [target, 1] and min in [0, target]; a minimum of 0 is
	// written as a boundary equal to the target.
	UtilizationMax float64 `json:"utilizationMax,omitempty"`
	UtilizationMin float64 `json:"utilizationMin,omitempty"`
	// CatchUpDuration is catch-up.duration (30 min); 0 disables lag-based
	// scaling and the restart term. Like Java's Duration.toSeconds it is
	// used in whole seconds.
	CatchUpDuration time.Duration `json:"catchUpDuration"`
	// RestartTime is restart.time (5 min), in whole seconds, or the tracked
	// restart time when restart.time-tracking.enabled.
	RestartTime time.Duration `json:"restartTime"`
	// BacklogLagThreshold is backlog-processing.lag-threshold (5 min).
	BacklogLagThreshold time.Duration `json:"backlogLagThreshold"`
	// ScaleUpMaxFactor is scale-up.max-factor (100000): the scale factor is
	// at most 1 + this.
	ScaleUpMaxFactor float64 `json:"scaleUpMaxFactor"`
	// ScaleDownMaxFactor is scale-down.max-factor (0.6): the scale factor is
	// at least 1 − this.
	ScaleDownMaxFactor float64 `json:"scaleDownMaxFactor"`
	// VertexMinParallelism and VertexMaxParallelism are
	// vertex.min-parallelism (1) and vertex.max-parallelism (200).
	VertexMinParallelism int `json:"vertexMinParallelism"`
	VertexMaxParallelism int `json:"vertexMaxParallelism"`
	// Alignment is the alignment mode (main: BALANCED).
	Alignment AlignmentMode `json:"alignment"`
}

// DefaultAutoscalerOptions returns the operator's defaults
// (config/AutoScalerOptions on main).
func DefaultAutoscalerOptions() AutoscalerOptions {
	return AutoscalerOptions{
		TargetUtilization:         0.7,
		TargetUtilizationBoundary: 0.3,
		CatchUpDuration:           30 * time.Minute,
		RestartTime:               5 * time.Minute,
		BacklogLagThreshold:       5 * time.Minute,
		ScaleUpMaxFactor:          100000,
		ScaleDownMaxFactor:        0.6,
		VertexMinParallelism:      1,
		VertexMaxParallelism:      DefaultVertexMaxParallelism,
		Alignment:                 Balanced,
	}
}

// AutoscalerInput is one vertex as the autoscaler's evaluator sees it.
type AutoscalerInput struct {
	// Current is the running parallelism; MaxParallelism its max
	// parallelism (number of key groups).
	Current        int `json:"current"`
	MaxParallelism int `json:"maxParallelism"`
	// NumPartitions is the source's partition count (the total over all
	// topics), or 0 for a vertex aligned to its key groups.
	NumPartitions int `json:"numPartitions"`
	// NotAligned marks a vertex that is neither a source with known
	// partitions nor fed by a HASH (keyBy) input: the operator does not
	// align it (FLINK-34504) and uses the clamped value as it is.
	NotAligned bool `json:"notAligned,omitempty"`
	// InputRate is TARGET_DATA_RATE in records/s: for a source the observed
	// input rate plus the lag growth rate (never below 0), for any other
	// vertex the sum over its inputs of their target rate times the edge's
	// output ratio (ScalingMetricEvaluator.computeTargetDataRate).
	InputRate float64 `json:"inputRate"`
	// TrueProcessingRate is TRUE_PROCESSING_RATE in records/s at the current
	// parallelism, averaged over the metric window (TrueProcessingRate, or
	// the observed estimate when the operator would switch to it).
	TrueProcessingRate float64 `json:"trueProcessingRate"`
	// Lag is the pending records of the source (sum of pendingRecords); for
	// a downstream vertex, the upstream lag times the output ratios.
	Lag float64 `json:"lag"`
	// OtherSourceInBacklog reports that another source of the job is
	// processing backlog: the operator's backlog test is job-wide.
	OtherSourceInBacklog bool `json:"otherSourceInBacklog,omitempty"`

	Options AutoscalerOptions `json:"options"`
}

// AutoscalerResult is what ScaleTargetParallelism computed, step by step.
type AutoscalerResult struct {
	// CatchUpRate is CATCH_UP_DATA_RATE: Lag / catch-up seconds, 0 when the
	// catch-up duration is 0.
	CatchUpRate float64 `json:"catchUpRate"`
	// TargetCapacity is AutoScalerUtils.getTargetProcessingCapacity at the
	// target utilization with the restart term, rounded like Java's
	// Math.round.
	TargetCapacity float64 `json:"targetCapacity"`
	// RawScaleFactor is TargetCapacity / TrueProcessingRate; ScaleFactor is
	// the same after the clamp to [1 − scale-down.max-factor,
	// 1 + scale-up.max-factor].
	RawScaleFactor float64 `json:"rawScaleFactor"`
	ScaleFactor    float64 `json:"scaleFactor"`
	// Computed is ceil(ScaleFactor × Current) clamped to
	// [min(Current, vertex.min), min(MaxParallelism, max(Current,
	// vertex.max))]: JobVertexScaler.scale before alignment.
	Computed int `json:"computed"`
	// Aligned is Align's answer for Computed, or Computed unchanged (with a
	// Note) when the operator skips alignment: no change, or NotAligned.
	Aligned Alignment `json:"aligned"`
	// ProcessingBacklog, ScaleUpThreshold and ScaleDownThreshold are the
	// utilization band (ScalingMetricEvaluator
	// .computeProcessingRateThresholds): a vertex is inside it when
	// ScaleUpThreshold <= TrueProcessingRate <= ScaleDownThreshold.
	ProcessingBacklog  bool    `json:"processingBacklog"`
	ScaleUpThreshold   float64 `json:"scaleUpThreshold"`
	ScaleDownThreshold float64 `json:"scaleDownThreshold"`
	OutsideBand        bool    `json:"outsideBand"`
	// Parallelism is what the autoscaler would apply if this were the only
	// vertex whose parallelism changed: Aligned.Parallelism, or Current when
	// the metrics are missing or the vertex is inside its band (the job-wide
	// rule of ScalingExecutor.allChangedVerticesWithinUtilizationTarget).
	// Scale-up blocking after an ineffective scale-up and the delayed
	// scale-down window are not modelled.
	Parallelism int `json:"parallelism"`
	// Steps is each step in words with its figures, for display.
	Steps []string `json:"steps"`
}

// ScaleTargetParallelism reproduces the operator's
// JobVertexScaler.computeScaleTargetParallelism for one vertex (main,
// 921ac1e1; see the top of this file for every source):
//
//  1. TRUE_PROCESSING_RATE NaN: no change.
//  2. target = round(Lag/catchUp + InputRate·restart/catchUp +
//     InputRate/utilization.target) (getTargetProcessingCapacity; the middle
//     term is 0 and the catch-up rate is 0 when catch-up.duration is 0; a
//     utilization of 0 gives +Inf). NaN: no change.
//  3. scaleFactor = target / TPR, clamped to [1 − scale-down.max-factor,
//     1 + scale-up.max-factor]. The optional observed-scalability coefficient
//     (observed-scalability.enabled, off by default) is not modelled.
//  4. Computed = min(max(lower, (int) min(ceil(scaleFactor·Current),
//     Integer.MAX_VALUE)), min(MaxParallelism, upper)) with lower =
//     min(Current, vertex.min-parallelism) and upper = max(Current,
//     vertex.max-parallelism); Java's double-to-int cast is reproduced (NaN
//     becomes 0).
//  5. If Computed == Current, no change and no alignment. Otherwise Align
//     with the options' mode, upper limit = upper, unless NotAligned.
//  6. The band: upper utilization = 1 and lower = 0 while processing backlog
//     (Lag / InputRate > backlog-processing.lag-threshold in whole seconds,
//     or OtherSourceInBacklog; the operator divides by the observed input
//     rate, which equals InputRate when the lag is steady), else
//     utilization.max/min or target ± boundary;
//     ScaleUpThreshold = round(catchUp + InputRate/upperUtil) and
//     ScaleDownThreshold = round(catchUp + restart term + InputRate/lowerUtil).
//     Inside the band the vertex alone triggers no scaling.
//
// Generations: the steps up to the clamp read the same in the operator's
// pre-FLIP-586 JobVertexScaler (stored 00191b4d, with FLINK-39299's direction
// guard, and d9e8cce8); what differs is alignment (Align's modes name each
// generation) and the recorded EXPECTED_PROCESSING_RATE (main: TPR / Current
// × the new parallelism; before: TPR × the capped scale factor). Operators before
// utilization.max/min existed used target ± target.utilization.boundary only,
// which is what leaving UtilizationMax/Min at 0 gives.
//
// Known gap: the legacy (1.14, 1.15) modes' downward fallback runs inside
// Align with a lower limit of 1, not min(Current, vertex.min-parallelism), so
// with vertex.min-parallelism above 1 their answer can differ from the
// operator's (JobVertexScalerTest.testParallelismComputationWithAdjustment's
// row with lower limit 20 expects 20 where Align's fallback gives 18).
func ScaleTargetParallelism(in AutoscalerInput) (AutoscalerResult, error) {
	if err := in.check(); err != nil {
		return AutoscalerResult{}, err
	}
	o := in.Options
	var r AutoscalerResult
	step := func(format string, args ...any) { r.Steps = append(r.Steps, fmt.Sprintf(format, args...)) }
	noChange := func(why string) (AutoscalerResult, error) {
		r.Computed, r.Parallelism = in.Current, in.Current
		r.Aligned = Alignment{Mode: o.Alignment, Parallelism: in.Current, Target: in.Current, Note: why}
		step("%s: parallelism stays %d", why, in.Current)
		return r, nil
	}

	catchUpSec := wholeSeconds(o.CatchUpDuration)
	restartSec := wholeSeconds(o.RestartTime)
	if catchUpSec != 0 {
		r.CatchUpRate = in.Lag / float64(catchUpSec)
	}

	// The band first: it does not depend on the scale factor, and the
	// operator computes it in the evaluator, before JobVertexScaler runs.
	r.ProcessingBacklog = in.OtherSourceInBacklog || in.Lag/in.InputRate > float64(wholeSeconds(o.BacklogLagThreshold))
	upperUtil, lowerUtil := 1.0, 0.0
	if !r.ProcessingBacklog {
		upperUtil = o.TargetUtilization + o.TargetUtilizationBoundary
		lowerUtil = o.TargetUtilization - o.TargetUtilizationBoundary
		if o.UtilizationMax != 0 {
			upperUtil = o.UtilizationMax
		}
		if o.UtilizationMin != 0 {
			lowerUtil = o.UtilizationMin
		}
	}
	r.ScaleUpThreshold = targetCapacity(in.InputRate, r.CatchUpRate, upperUtil, false, catchUpSec, restartSec)
	r.ScaleDownThreshold = targetCapacity(in.InputRate, r.CatchUpRate, lowerUtil, true, catchUpSec, restartSec)
	tpr := in.TrueProcessingRate
	r.OutsideBand = tpr < r.ScaleUpThreshold || tpr > r.ScaleDownThreshold

	if math.IsNaN(tpr) {
		return noChange("true processing rate not available")
	}
	step("true processing rate %s rec/s at parallelism %d", fmtRateInf(tpr), in.Current)

	r.TargetCapacity = targetCapacity(in.InputRate, r.CatchUpRate, o.TargetUtilization, true, catchUpSec, restartSec)
	if math.IsNaN(r.TargetCapacity) {
		return noChange("target data rate not available")
	}
	step("target capacity = catch-up %s + restart %s + input %s / utilization %g = %s rec/s",
		fmtRateInf(r.CatchUpRate), fmtRateInf(restartTerm(in.InputRate, true, catchUpSec, restartSec)),
		fmtRateInf(in.InputRate), clamp01(o.TargetUtilization), fmtRateInf(r.TargetCapacity))

	sf := r.TargetCapacity / tpr
	r.RawScaleFactor = sf
	minF, maxF := 1-o.ScaleDownMaxFactor, 1+o.ScaleUpMaxFactor
	switch {
	case sf < minF:
		sf = minF
		step("scale factor %s / %s = %.4g, capped by scale-down.max-factor to %.4g",
			fmtRateInf(r.TargetCapacity), fmtRateInf(tpr), r.RawScaleFactor, sf)
	case sf > maxF:
		sf = maxF
		step("scale factor %s / %s = %.4g, capped by scale-up.max-factor to %.4g",
			fmtRateInf(r.TargetCapacity), fmtRateInf(tpr), r.RawScaleFactor, sf)
	default:
		step("scale factor %s / %s = %.4g", fmtRateInf(r.TargetCapacity), fmtRateInf(tpr), sf)
	}
	r.ScaleFactor = sf

	lower := min(in.Current, o.VertexMinParallelism)
	upper := max(in.Current, o.VertexMaxParallelism)
	r.Computed = clampParallelism(in.Current, in.MaxParallelism, sf, lower, upper)
	step("ceil(%.4g × %d) within [%d, %d] = %d", sf, in.Current, lower, min(in.MaxParallelism, upper), r.Computed)

	switch {
	case r.Computed == in.Current:
		r.Aligned = Alignment{Mode: o.Alignment, Parallelism: in.Current, Target: in.Current,
			Note: "computed equals current: not aligned"}
	case in.NotAligned:
		r.Aligned = Alignment{Mode: o.Alignment, Parallelism: r.Computed, Target: r.Computed,
			Note: "neither a source with partitions nor a keyBy input: not aligned"}
	default:
		r.Aligned = Align(o.Alignment, in.NumPartitions, in.MaxParallelism, in.Current, r.Computed, upper)
	}
	step("alignment %s: %d (%s)", o.Alignment, r.Aligned.Parallelism, r.Aligned.Note)

	band := fmt.Sprintf("band [%s, %s] rec/s", fmtRateInf(r.ScaleUpThreshold), fmtRateInf(r.ScaleDownThreshold))
	if r.ProcessingBacklog {
		band += " (processing backlog: scale-down off)"
	}
	r.Parallelism = r.Aligned.Parallelism
	switch {
	case r.Parallelism == in.Current:
		step("%s; parallelism stays %d", band, in.Current)
	case !r.OutsideBand:
		r.Parallelism = in.Current
		step("%s holds the true processing rate %s: on its own this vertex triggers no scaling, parallelism stays %d",
			band, fmtRateInf(tpr), in.Current)
	default:
		step("%s excludes the true processing rate %s: parallelism %d → %d", band, fmtRateInf(tpr), in.Current, r.Parallelism)
	}
	return r, nil
}

func (in AutoscalerInput) check() error {
	o := in.Options
	var errs []error
	if err := CheckParallelism(in.MaxParallelism); err != nil {
		errs = append(errs, fmt.Errorf("max parallelism: %w", err))
	}
	if in.Current < 1 {
		errs = append(errs, fmt.Errorf("current parallelism %d: want at least 1", in.Current))
	}
	if in.NumPartitions < 0 {
		errs = append(errs, fmt.Errorf("partition count %d: want 0 (keyed) or more", in.NumPartitions))
	}
	if in.Lag < 0 || in.InputRate < 0 {
		errs = append(errs, fmt.Errorf("lag %g and input rate %g: want 0 or more", in.Lag, in.InputRate))
	}
	if o.CatchUpDuration < 0 || o.RestartTime < 0 || o.BacklogLagThreshold < 0 {
		errs = append(errs, errors.New("durations: want 0 or more"))
	}
	if o.VertexMinParallelism < 1 {
		errs = append(errs, fmt.Errorf("vertex min parallelism %d: want at least 1", o.VertexMinParallelism))
	}
	if !in.NotAligned && !slices.Contains(AlignmentModes(), o.Alignment) {
		errs = append(errs, fmt.Errorf("unknown alignment mode %q", string(o.Alignment)))
	}
	return errors.Join(errs...)
}

// targetCapacity is AutoScalerUtils.getTargetProcessingCapacity with the
// evaluated CATCH_UP_DATA_RATE and TARGET_DATA_RATE passed in.
func targetCapacity(inputRate, catchUpRate, utilization float64, withRestart bool, catchUpSec, restartSec int64) float64 {
	if math.IsNaN(catchUpRate) || math.IsNaN(inputRate) {
		return math.NaN()
	}
	u := clamp01(utilization)
	if u == 0 {
		return math.Inf(1)
	}
	restart := restartTerm(inputRate, withRestart, catchUpSec, restartSec)
	atUtilization := inputRate / u
	sum := float64(catchUpRate + restart) // no fused multiply-add across terms
	return javaRound(sum + atUtilization)
}

// restartTerm is INPUT_RATE·restart/catchUp, 0 without restart or catch-up.
func restartTerm(inputRate float64, withRestart bool, catchUpSec, restartSec int64) float64 {
	if !withRestart || catchUpSec == 0 {
		return 0
	}
	return inputRate * float64(restartSec) / float64(catchUpSec)
}

// clampParallelism is the part of JobVertexScaler.scale before alignment.
func clampParallelism(current, maxP int, scaleFactor float64, lower, upper int) int {
	raw := javaDoubleToInt(math.Min(math.Ceil(scaleFactor*float64(current)), math.MaxInt32))
	return min(max(lower, raw), min(maxP, upper))
}

func clamp01(u float64) float64 { return math.Min(1, math.Max(0, u)) }

// wholeSeconds is Java's Duration.toSeconds for a non-negative duration.
func wholeSeconds(d time.Duration) int64 { return int64(d / time.Second) }

// javaRound is Java's Math.round(double) returned as a double: ties round
// up, NaN gives 0, and the result saturates at the long range.
func javaRound(x float64) float64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x >= math.MaxInt64:
		return math.MaxInt64
	case x <= math.MinInt64:
		return math.MinInt64
	}
	r := math.Round(x) // half away from zero
	if x < 0 && r-x == -0.5 {
		r++ // a negative tie rounds up in Java
	}
	return r
}

// javaDoubleToInt is Java's (int) cast of a double: NaN gives 0, values
// saturate at the int range, the rest truncate toward zero.
func javaDoubleToInt(x float64) int {
	switch {
	case math.IsNaN(x):
		return 0
	case x >= math.MaxInt32:
		return math.MaxInt32
	case x <= math.MinInt32:
		return math.MinInt32
	}
	return int(x)
}

// fmtRateInf is fmtRate that also prints infinities and NaN.
func fmtRateInf(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+∞"
	case math.IsInf(v, -1):
		return "−∞"
	case math.IsNaN(v):
		return "NaN"
	case v < 0:
		return "-" + fmtRate(-v)
	case v == 0:
		return "0"
	}
	return fmtRate(v)
}
