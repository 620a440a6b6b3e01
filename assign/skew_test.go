package assign

import (
	"math"
	"math/rand/v2"
	"testing"
)

// skewClose reports whether got and want agree to within tol.
func skewClose(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol
}

// TestMeasureSkewWorkedExamples checks the skew of multi-topic KafkaSource
// layouts (TestMeasureSkewFreshAssignmentRows recomputes their counts), a
// global round-robin and two consumer-group assignors. Figures are rounded:
// skew % to 0.1, ratios to 0.01.
func TestMeasureSkewWorkedExamples(t *testing.T) {
	tests := []struct {
		name        string
		load        []float64
		flink       float64
		maxOverMean float64
		cv          float64
		idle        int
		busiest     int
	}{
		{"orders,payments 4 each n=8", []float64{0, 0, 0, 2, 2, 2, 2, 0}, 100, 2.0, 1.00, 4, 3},
		{"orders,payments,clicks,user-events 3 each n=8", []float64{0, 0, 0, 2, 2, 4, 2, 2}, 75, 2.67, 0.88, 3, 5},
		{"topic-a,topic-b 4 each n=8", []float64{1, 0, 0, 0, 1, 2, 2, 2}, 75, 2.0, 0.87, 3, 5},
		{"global round-robin 8 partitions n=8", []float64{1, 1, 1, 1, 1, 1, 1, 1}, 0, 1.0, 0, 0, 0},
		{"consumer range 2 topics x 3 partitions 2 members", []float64{4, 2}, 33.3, 1.33, 0.33, 0, 0},
		{"consumer roundrobin 2 topics x 3 partitions 2 members", []float64{3, 3}, 0, 1.0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := MeasureSkew(tt.load)
			if !skewClose(s.FlinkPercent, tt.flink, 0.05) {
				t.Errorf("MeasureSkew(%v).FlinkPercent = %v, want %v", tt.load, s.FlinkPercent, tt.flink)
			}
			if !skewClose(s.MaxOverMean, tt.maxOverMean, 0.005) {
				t.Errorf("MeasureSkew(%v).MaxOverMean = %v, want %v", tt.load, s.MaxOverMean, tt.maxOverMean)
			}
			if !skewClose(s.CV, tt.cv, 0.005) {
				t.Errorf("MeasureSkew(%v).CV = %v, want %v", tt.load, s.CV, tt.cv)
			}
			if s.Idle != tt.idle {
				t.Errorf("MeasureSkew(%v).Idle = %d, want %d", tt.load, s.Idle, tt.idle)
			}
			if s.Busiest != tt.busiest {
				t.Errorf("MeasureSkew(%v).Busiest = %d, want %d", tt.load, s.Busiest, tt.busiest)
			}
			if s.Subtasks != len(tt.load) {
				t.Errorf("MeasureSkew(%v).Subtasks = %d, want %d", tt.load, s.Subtasks, len(tt.load))
			}
		})
	}
}

// TestMeasureSkewFreshAssignmentRows recomputes the KafkaSource partition
// counts of TestMeasureSkewWorkedExamples with FreshAssignment, so its load
// vectors are not merely typed in.
func TestMeasureSkewFreshAssignmentRows(t *testing.T) {
	tests := []struct {
		name   string
		topics []Topic
		want   []float64
	}{
		{"orders,payments 4 each n=8", []Topic{{"orders", 4}, {"payments", 4}}, []float64{0, 0, 0, 2, 2, 2, 2, 0}},
		{"orders,payments,clicks,user-events 3 each n=8",
			[]Topic{{"orders", 3}, {"payments", 3}, {"clicks", 3}, {"user-events", 3}},
			[]float64{0, 0, 0, 2, 2, 4, 2, 2}},
		{"topic-a,topic-b 4 each n=8", []Topic{{"topic-a", 4}, {"topic-b", 4}}, []float64{1, 0, 0, 0, 1, 2, 2, 2}},
	}
	for _, tt := range tests {
		a, err := FreshAssignment(tt.topics, 8)
		if err != nil {
			t.Fatal(err)
		}
		got := a.Counts()
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("FreshAssignment(%v, 8).Counts() = %v, want %v", tt.topics, got, tt.want)
				break
			}
		}
	}
}

// TestKeyGroupSkewWorkedExamples checks the structural key-group skew for
// M = 128 (max/mean for p = 48, 65, 80, 96, 100, and skew 31.5 %, CV 0.35 at
// p = 100; at p = 100, 28 subtasks own 2 key groups and 72 own 1; at p = 3,
// 43/43/42).
func TestKeyGroupSkewWorkedExamples(t *testing.T) {
	tests := []struct {
		p           int
		maxOverMean float64
		flink       float64 // -1: not checked
		cv          float64 // -1: not checked
	}{
		{48, 1.125, -1, -1},
		{65, 1.016, -1, -1},
		{80, 1.25, -1, -1},
		{96, 1.5, -1, -1},
		{100, 1.56, 31.5, 0.35},
		{128, 1, 0, 0},
		{64, 1, 0, 0},
	}
	for _, tt := range tests {
		c, err := KeyGroupCounts(128, tt.p)
		if err != nil {
			t.Fatalf("KeyGroupCounts(128, %d) error %v", tt.p, err)
		}
		s := MeasureSkew(c)
		if !skewClose(s.MaxOverMean, tt.maxOverMean, 0.005) {
			t.Errorf("MeasureSkew(KeyGroupCounts(128, %d)).MaxOverMean = %v, want %v", tt.p, s.MaxOverMean, tt.maxOverMean)
		}
		if tt.flink >= 0 && !skewClose(s.FlinkPercent, tt.flink, 0.05) {
			t.Errorf("MeasureSkew(KeyGroupCounts(128, %d)).FlinkPercent = %v, want %v", tt.p, s.FlinkPercent, tt.flink)
		}
		if tt.cv >= 0 && !skewClose(s.CV, tt.cv, 0.005) {
			t.Errorf("MeasureSkew(KeyGroupCounts(128, %d)).CV = %v, want %v", tt.p, s.CV, tt.cv)
		}
	}

	c, _ := KeyGroupCounts(128, 100)
	twos, ones := 0, 0
	for _, v := range c {
		switch v {
		case 2:
			twos++
		case 1:
			ones++
		}
	}
	if twos != 28 || ones != 72 || c[0] != 2 || c[1] != 1 {
		t.Errorf("KeyGroupCounts(128, 100) = %d twos, %d ones, c[0..1] = %v, want 28, 72, [2 1]", twos, ones, c[:2])
	}
	c, _ = KeyGroupCounts(128, 3)
	if c[0] != 43 || c[1] != 43 || c[2] != 42 {
		t.Errorf("KeyGroupCounts(128, 3) = %v, want [43 43 42]", c)
	}
}

// TestMeasureSkewEdgeCases covers the branches of DoubleDataSkew.getValue:
// empty input, zero mean, and the clamp at 100.
func TestMeasureSkewEdgeCases(t *testing.T) {
	if got := MeasureSkew(nil); got != (Skew{}) {
		t.Errorf("MeasureSkew(nil) = %+v, want %+v", got, Skew{})
	}
	if got := MeasureSkew([]float64{}); got != (Skew{}) {
		t.Errorf("MeasureSkew([]) = %+v, want %+v", got, Skew{})
	}
	z := MeasureSkew([]float64{0, 0, 0})
	want := Skew{Idle: 3, Subtasks: 3}
	if z != want {
		t.Errorf("MeasureSkew([0 0 0]) = %+v, want %+v", z, want)
	}
	// One busy subtask out of 10: mean 1, MAD 1.8, 180 % clamped to 100.
	one := []float64{10, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	s := MeasureSkew(one)
	if s.FlinkPercent != 100 {
		t.Errorf("MeasureSkew(%v).FlinkPercent = %v, want 100", one, s.FlinkPercent)
	}
	if s.MaxOverMean != 10 || s.CV != 3 || s.Idle != 9 || s.Busiest != 0 {
		t.Errorf("MeasureSkew(%v) = %+v, want MaxOverMean 10, CV 3, Idle 9, Busiest 0", one, s)
	}
	// Busiest is the first of equal maxima.
	if b := MeasureSkew([]float64{1, 5, 2, 5}).Busiest; b != 1 {
		t.Errorf("MeasureSkew([1 5 2 5]).Busiest = %d, want 1", b)
	}
	// A single subtask is never skewed.
	if s := MeasureSkew([]float64{7}); s.FlinkPercent != 0 || s.MaxOverMean != 1 || s.CV != 0 {
		t.Errorf("MeasureSkew([7]) = %+v, want FlinkPercent 0, MaxOverMean 1, CV 0", s)
	}
	// NaN propagates as in Java's Math.min.
	if s := MeasureSkew([]float64{1, math.NaN()}); !math.IsNaN(s.FlinkPercent) {
		t.Errorf("MeasureSkew([1 NaN]).FlinkPercent = %v, want NaN", s.FlinkPercent)
	}
}

// dataSkewReference is DoubleDataSkew.getValue transcribed with Java's
// stream reduce (the first element seeds each sum), kept separate from
// MeasureSkew so the test compares two independent transcriptions.
func dataSkewReference(values []float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sum := values[0]
	for _, v := range values[1:] {
		sum += v
	}
	avg := sum / float64(len(values))
	if avg == 0.0 {
		return 0
	}
	total := math.Abs(avg - values[0])
	for _, v := range values[1:] {
		total += math.Abs(avg - v)
	}
	avgDev := total / float64(len(values))
	return math.Min((avgDev/avg)*100.0, 100.0)
}

// TestMeasureSkewInvariants: FlinkPercent is bit-identical to the Java
// transcription and within [0, 100]; MaxOverMean >= 1 and CV >= 0 when the
// mean is positive; scaling every load leaves the ratios unchanged.
func TestMeasureSkewInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		n := 1 + r.IntN(64)
		load := make([]float64, n)
		for i := range load {
			switch r.IntN(4) {
			case 0:
				load[i] = 0
			case 1:
				load[i] = float64(r.IntN(5))
			default:
				load[i] = r.Float64() * 1e6
			}
		}
		s := MeasureSkew(load)
		if ref := dataSkewReference(load); s.FlinkPercent != ref {
			t.Fatalf("MeasureSkew(%v).FlinkPercent = %v, want %v", load, s.FlinkPercent, ref)
		}
		if s.FlinkPercent < 0 || s.FlinkPercent > 100 {
			t.Fatalf("MeasureSkew(%v).FlinkPercent = %v, want within [0, 100]", load, s.FlinkPercent)
		}
		if s.Mean > 0 && (s.MaxOverMean < 1-1e-12 || s.CV < 0) {
			t.Fatalf("MeasureSkew(%v) = %+v, want MaxOverMean >= 1 and CV >= 0", load, s)
		}
		if load[s.Busiest] != s.Max {
			t.Fatalf("MeasureSkew(%v): load[Busiest=%d] = %v, want Max %v", load, s.Busiest, load[s.Busiest], s.Max)
		}
		scaled := make([]float64, n)
		for i, v := range load {
			scaled[i] = v * 4 // a power of two: exact
		}
		s4 := MeasureSkew(scaled)
		if s4.FlinkPercent != s.FlinkPercent || s4.MaxOverMean != s.MaxOverMean || s4.CV != s.CV {
			t.Fatalf("MeasureSkew(4 x %v) = %+v, want the ratios of %+v", load, s4, s)
		}
	}
}

func TestKeyGroupCountsInvariants(t *testing.T) {
	for _, maxP := range []int{1, 2, 7, 10, 120, 128, 1000, 32768} {
		for _, p := range []int{1, 2, 3, 7, 48, 100, 127, 128, 4096, 32768} {
			if p > maxP {
				if _, err := KeyGroupCounts(maxP, p); err == nil {
					t.Errorf("KeyGroupCounts(%d, %d) error = nil, want an error", maxP, p)
				}
				continue
			}
			c, err := KeyGroupCounts(maxP, p)
			if err != nil {
				t.Fatalf("KeyGroupCounts(%d, %d) error %v", maxP, p, err)
			}
			sum, lo, hi := 0.0, float64(maxP/p), float64((maxP+p-1)/p)
			ceils := 0
			for _, v := range c {
				sum += v
				if v != lo && v != hi {
					t.Fatalf("KeyGroupCounts(%d, %d) has %v, want %v or %v", maxP, p, v, lo, hi)
				}
				if v == hi && hi != lo {
					ceils++
				}
			}
			if sum != float64(maxP) {
				t.Errorf("sum(KeyGroupCounts(%d, %d)) = %v, want %d", maxP, p, sum, maxP)
			}
			if maxP%p != 0 && ceils != maxP%p {
				t.Errorf("KeyGroupCounts(%d, %d) has %d ceil subtasks, want %d", maxP, p, ceils, maxP%p)
			}
		}
	}
	for _, bad := range [][2]int{{0, 1}, {32769, 1}, {128, 0}, {128, -1}, {10, 11}} {
		if _, err := KeyGroupCounts(bad[0], bad[1]); err == nil {
			t.Errorf("KeyGroupCounts(%d, %d) error = nil, want an error", bad[0], bad[1])
		}
	}
}

func BenchmarkMeasureSkew32768(b *testing.B) {
	c, _ := KeyGroupCounts(32768, 32768/3)
	b.ReportAllocs()
	for b.Loop() {
		MeasureSkew(c)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(c)), "ns/subtask")
}
