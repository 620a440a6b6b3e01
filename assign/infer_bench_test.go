// Benchmarks for InferHistory at a real-cluster size: a source of 10,000
// partitions (5 topics × 2,000) now at parallelism 48, searched with earlier
// parallelisms 1..128 (the default max parallelism of 48). The layout fed in
// is Restore's for the true history, every partition observed. "two-step"
// has a true history of two restores, so no one-step history fits and the
// search goes through all 16,000 (p0, p1) pairs; "one-step" has a true
// history of one restore and stops after the 127 one-step candidates. Each
// prints ns/op (one whole InferHistory call, i.e. one dashboard poll) and
// the candidates tried and run through Restore.
package assign

import (
	"fmt"
	"testing"
)

func inferBenchInput(b *testing.B, history []int) InferInput {
	b.Helper()
	var topics []Topic
	for i := range 5 {
		topics = append(topics, Topic{Name: fmt.Sprintf("payments.events-%d", i), Partitions: 2000})
	}
	lay, err := Restore(RestoreInput{Topics: topics, History: history})
	if err != nil {
		b.Fatal(err)
	}
	obs := make(map[TopicPartition]int, 10000)
	for tp, o := range lay.Assignment.All() {
		obs[tp] = o
	}
	return InferInput{Topics: topics, Parallelism: 48, Observed: obs, MaxParallelism: 128}
}

func BenchmarkInferHistory10k(b *testing.B) {
	for _, bc := range []struct {
		name    string
		history []int
	}{
		{"two-step", []int{96, 64, 48}},
		{"one-step", []int{32, 48}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			in := inferBenchInput(b, bc.history)
			var res InferResult
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if res, err = InferHistory(in); err != nil {
					b.Fatal(err)
				}
			}
			if f, ok := res.Only(); !ok || fmt.Sprint(f.History) != fmt.Sprint(bc.history) {
				b.Fatalf("InferHistory(layout of %v) fits %v, want only the true history", bc.history, inferHistories(res.Fits))
			}
			b.ReportMetric(float64(res.Tried), "tried")
			b.ReportMetric(float64(res.Modelled), "modelled")
		})
	}
}
