package assign

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBusiestAllMatchesPerPartitionLoop: the bounded sweep (sweepAll)
// returns, for every p, bit for bit the busiest load of a plain loop that
// adds every partition's rate to its getSplitOwner subtask, topics in input
// order and partitions ascending, and the difference array's idle count. The rates mix magnitudes (so that another order of
// additions would round differently), zeros, repeated values and rare
// spikes; the topic sizes put p below and above the partitions per topic.
func TestBusiestAllMatchesPerPartitionLoop(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	rate := func(kind int) float64 {
		switch kind {
		case 0: // exponential with spikes
			v := r.ExpFloat64() * 1000
			if r.IntN(97) == 0 {
				v *= 20
			}
			return v
		case 1: // uniform
			return 500 + r.Float64()
		case 2: // many magnitudes
			return r.Float64() * math.Pow(10, float64(r.IntN(30)-10))
		default: // few distinct values and zeros
			return float64(r.IntN(4)) * 0.1
		}
	}
	for iter := range 64 {
		kind := iter % 4
		topics := recRandomTopics(r, 10, []int{40, 300, 800}[iter%3])
		rates := map[TopicPartition]float64{}
		for _, tp := range Partitions(topics) {
			if r.IntN(8) > 0 {
				rates[tp] = rate(kind)
			}
		}
		total := len(Partitions(topics))
		upper := min(total+r.IntN(64), 32768)
		in := RecommendInput{Topics: topics, Rates: rates, MaxParallelism: 32768, Current: 1, UpperLimit: upper}
		ri, err := prepareRecommend(in)
		if err != nil {
			t.Fatal(err)
		}
		got, idle := ri.sweepAll(upper)
		type part struct {
			h31  int32 // KafkaSplitOwner is (h31 % p + q) % p
			q    int32
			rate float64
		}
		var parts []part
		for _, tp := range Partitions(topics) {
			parts = append(parts, part{(StringHashCode(tp.Topic) * 31) & 0x7FFFFFFF, tp.Partition, rates[tp]})
		}
		loads := make([]float64, upper)
		for p := 1; p <= upper; p++ {
			l := loads[:p]
			clear(l)
			for _, pt := range parts {
				l[(pt.h31%int32(p)+pt.q)%int32(p)] += pt.rate
			}
			want := l[0]
			for _, v := range l {
				if v > want {
					want = v
				}
			}
			if math.Float64bits(got[p]) != math.Float64bits(want) {
				t.Fatalf("sweepAll(%d topics, %d partitions, rates kind %d)[%d] = %v, want %v", len(topics), total, kind, p, got[p], want)
			}
			if _, wantIdle := ri.countStatsDiff(p); idle[p] != wantIdle {
				t.Fatalf("sweepAll(%d topics, %d partitions) idle[%d] = %d, want %d", len(topics), total, p, idle[p], wantIdle)
			}
		}
	}
}

// TestSweepAllBenchInputMatchesLoop: on the benchmark's input (20 topics of
// 500 partitions, exponential rates with spikes, p 1..10,000) every busiest
// load and idle count of sweepAll, shared among goroutines, equals the plain
// per-partition loop's and the difference array's.
func TestSweepAllBenchInputMatchesLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("sums 10^8 rates")
	}
	topics, rates := recBenchTopics()
	const upper = 10000
	ri, err := prepareRecommend(RecommendInput{Topics: topics, Rates: rates, MaxParallelism: 32768, Current: 100, UpperLimit: upper})
	if err != nil {
		t.Fatal(err)
	}
	got, idle := ri.sweepAll(upper)
	type part struct {
		h31  int32
		q    int32
		rate float64
	}
	var parts []part
	for _, tp := range Partitions(topics) {
		parts = append(parts, part{(StringHashCode(tp.Topic) * 31) & 0x7FFFFFFF, tp.Partition, rates[tp]})
	}
	loads := make([]float64, upper)
	for p := 1; p <= upper; p++ {
		l := loads[:p]
		clear(l)
		for _, pt := range parts {
			l[(pt.h31%int32(p)+pt.q)%int32(p)] += pt.rate
		}
		if want := maxLoad(l); math.Float64bits(got[p]) != math.Float64bits(want) {
			t.Fatalf("sweepAll(benchmark input)[%d] = %v, want %v", p, got[p], want)
		}
		if _, want := ri.countStatsDiff(p); idle[p] != want {
			t.Fatalf("sweepAll(benchmark input) idle[%d] = %d, want %d", p, idle[p], want)
		}
	}
}

// sweepAll is sweepList of every p in 1..n.
func (r *recInput) sweepAll(n int) (busiest []float64, idle []int) {
	ps := make([]int, n)
	for i := range ps {
		ps[i] = i + 1
	}
	return r.sweepList(ps)
}
