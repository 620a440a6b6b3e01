//go:build e2e

package e2e

import (
	"math"
	"testing"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/collectors/kafka"
	"github.com/skewscope/skewscope/collectors/kafka/sample"
	"github.com/skewscope/skewscope/keysample"
)

// checkKeySample samples the keys of topic in as the dashboard does (the
// read-only sampler, the record key as a String, Flink's routing) and
// compares the records per keyed subtask at p with observed, the records
// each subtask of the real job received (the data path's ground truth: each
// output record names the subtask that processed it). A sample of the whole
// topic must predict them exactly; a sample of 10 % of each partition must
// predict every subtask's share within the bound the sample page states
// (three standard errors of the sampled share).
func (e *lineEnv) checkKeySample(t *testing.T, in assign.Topic, records int, observed []int, p, maxP int) {
	t.Helper()
	m := maxP
	if m == 0 {
		m, _ = assign.DefaultMaxParallelism(p)
	}
	spec, err := keysample.ParseKeySpec("key", "string", "", "string")
	if err != nil {
		t.Fatal(err)
	}
	cfg := kafka.Config{Name: "e2e", Brokers: []string{e.kafka.Bootstrap}}
	run := func(lastN int64) *keysample.Summary {
		sum := keysample.NewSummary(4096, m)
		pr, err := sample.Sample(t.Context(), cfg, sample.Request{Topic: in.Name, Mode: sample.ModeLast, LastN: lastN},
			func(r sample.Record) {
				k, err := spec.Key(r.Key, r.Value)
				if err != nil {
					sum.AddError(err)
					return
				}
				sum.Add(k)
			}, nil)
		if err != nil || pr.StoppedBy != sample.StoppedComplete {
			t.Fatalf("sample of %s (last %d): %v, stopped by %q", in.Name, lastN, err, pr.StoppedBy)
		}
		return sum
	}
	full := run(int64(records))
	l, err := full.AtParallelism(p)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range observed {
		total += n
	}
	exact := full.Records() == int64(total)
	for i, n := range observed {
		exact = exact && l.PerSubtask[i] == int64(n)
	}
	t.Logf("Flink %s, key sample of all of %s (%d records): predicted records per keyed subtask %v, observed at the data path %v", e.flink.Version, in.Name, full.Records(), l.PerSubtask, observed)
	if !exact {
		t.Errorf("MISMATCH: the whole-topic key sample does not predict the keyed subtasks' records exactly")
	}
	part := run(int64(records / in.Partitions / 10))
	lp, err := part.AtParallelism(p)
	if err != nil {
		t.Fatal(err)
	}
	n := float64(part.Records())
	for i, o := range observed {
		share := float64(lp.PerSubtask[i]) / n
		bound := 3 * math.Sqrt(share*(1-share)/n)
		want := float64(o) / float64(total)
		t.Logf("  10%% sample (%d records): subtask %d share %.4f ± %.4f, observed %.4f", part.Records(), i, share, bound, want)
		if math.Abs(share-want) > bound {
			t.Errorf("subtask %d: the 10%% sample predicts %.4f ± %.4f of the records, the job gave it %.4f", i, share, bound, want)
		}
	}
}
