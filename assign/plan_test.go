package assign

import (
	"fmt"
	"testing"
)

func planTopics10k() []Topic {
	topics := make([]Topic, 20)
	for i := range topics {
		topics[i] = Topic{Name: fmt.Sprintf("events-%02d", i), Partitions: 500}
	}
	return topics
}

// BenchmarkPlan10k is the planner's core at its scale target: 10,000
// partitions over 20 topics, p = 1024 → 1280, maxParallelism 32768.
func BenchmarkPlan10k(b *testing.B) {
	in := PlanInput{Topics: planTopics10k(), Current: 1024, Target: 1280, MaxParallelism: 32768}
	for b.Loop() {
		if _, err := MakePlan(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/plan")
}

// BenchmarkFreshAssignment10k is one fresh-start layout at that scale.
func BenchmarkFreshAssignment10k(b *testing.B) {
	topics := planTopics10k()
	for b.Loop() {
		if _, err := FreshAssignment(topics, 1024); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/op")
}

// BenchmarkPlan10kRates is BenchmarkPlan10k with a rate for every partition.
func BenchmarkPlan10kRates(b *testing.B) {
	topics := planTopics10k()
	rates := make(map[TopicPartition]float64)
	for i, tp := range Partitions(topics) {
		rates[tp] = float64(100 + (i*37)%900)
	}
	in := PlanInput{Topics: topics, Rates: rates, Current: 1024, Target: 1280, MaxParallelism: 32768}
	for b.Loop() {
		if _, err := MakePlan(in); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/plan")
}
