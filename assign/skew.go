package assign

import "math"

// Skew summarises how unevenly a per-subtask load vector is spread: partitions
// per source subtask, key groups per keyed subtask, or measured records/s per
// subtask. The zero Skew describes an empty vector.
//
// FlinkPercent is the number Flink's own Web UI and REST API show, so users can
// compare it with what they already know; MaxOverMean is what gates a keyed
// stage (the slowest subtask sets the pace, which is what the autoscaler's MAX
// busy-time aggregation and Cruise Control's balance thresholds look at); CV
// is unbounded and good for ranking.
type Skew struct {
	// FlinkPercent is Flink's data skew in percent, 0..100 for non-negative
	// loads (see MeasureSkew).
	FlinkPercent float64 `json:"flinkPercent"`
	// MaxOverMean is max/mean (peak-to-average); 0 when the mean is 0.
	MaxOverMean float64 `json:"maxOverMean"`
	// CV is the coefficient of variation, population standard deviation over
	// mean; 0 when the mean is 0.
	CV float64 `json:"cv"`
	// Max, Mean and Total are the largest load, the mean and the sum.
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
	Total float64 `json:"total"`
	// Idle counts subtasks with a load of exactly 0.
	Idle int `json:"idle"`
	// Busiest is the index of the first subtask carrying Max.
	Busiest int `json:"busiest"`
	// Subtasks is the length of the load vector.
	Subtasks int `json:"subtasks"`
}

// MeasureSkew computes the skew figures of a per-subtask load vector. Loads
// are expected to be non-negative (counts or rates); an empty vector gives
// the zero Skew.
//
// FlinkPercent mirrors DoubleAccumulator.DoubleDataSkew.getValue
// (apache/flink, flink-runtime/src/main/java/org/apache/flink/runtime/rest/
// handler/job/metrics/DoubleAccumulator.java @036663cd; FLIP-418, FLINK-34025,
// apache/flink PR #24598, first released in Flink 1.20), which backs
// subtasks/metrics?agg=skew and the Web UI's Data Skew tab, step for step:
//
//	if values is empty: 0
//	avg = (sum of values, left to right) / n       // population, not sample
//	if avg == 0: 0
//	avgDev = (sum of |avg - v|, left to right) / n // mean absolute deviation
//	min((avgDev / avg) * 100, 100)
//
// The same operations in the same order give bit-identical results in
// float64. Like Java's Math.min, Go's min returns NaN if a load is NaN; a
// negative mean (impossible for real loads) yields a negative percentage, as
// in Flink.
func MeasureSkew(load []float64) Skew {
	n := len(load)
	if n == 0 {
		return Skew{}
	}
	s := Skew{Subtasks: n, Max: load[0]}
	var sum float64
	for i, v := range load {
		sum += v
		if v > s.Max {
			s.Max, s.Busiest = v, i
		}
		if v == 0 {
			s.Idle++
		}
	}
	avg := sum / float64(n)
	s.Total, s.Mean = sum, avg
	if avg == 0 {
		return s
	}
	var absDev, sqDev float64
	for _, v := range load {
		absDev += math.Abs(avg - v)
		d := v - avg
		sqDev += d * d
	}
	avgDev := absDev / float64(n)
	s.FlinkPercent = min((avgDev/avg)*100.0, 100.0)
	s.MaxOverMean = s.Max / avg
	s.CV = math.Sqrt(sqDev/float64(n)) / avg
	return s
}

// KeyGroupCounts returns the number of key groups each of the p subtasks of
// an operator with max parallelism maxP owns, in subtask order: the sizes of
// KeyGroupRanges(maxP, p). maxP%p subtasks own ceil(maxP/p) key groups and the
// others floor(maxP/p). Invalid (maxP, p) are rejected with Flink's messages
// (CheckMaxParallelism).
//
// Pass the result to MeasureSkew for the structural key-group skew, e.g.
// M = 128, p = 100: 28 subtasks own 2 key groups and 72 own 1, max/mean 1.56.
func KeyGroupCounts(maxP, p int) ([]float64, error) {
	if err := checkRange(maxP, p); err != nil {
		return nil, err
	}
	c := make([]float64, p)
	for i := range c {
		c[i] = float64(keyGroupRange(int32(maxP), int32(p), int32(i)).Size())
	}
	return c, nil
}
