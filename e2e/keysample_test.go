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
// output record names the subtask that processed it), as checkPrediction
// does.
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
	run := func(fraction int) *keysample.Summary {
		sum := keysample.NewSummary(4096, m)
		e.sampleLast(t, in, records, fraction, func(r sample.Record) { addKey(sum, spec, r) })
		return sum
	}
	e.checkPrediction(t, "key sample of all of "+in.Name, "at the data path", run(1), run(10), p, observed)
}

// sampleLast reads the last 1/fraction of the records of each partition of
// topic in, which holds records in all (all of them for fraction 1), with
// the dashboard's read-only sampler, handing each to each.
func (e *lineEnv) sampleLast(t *testing.T, in assign.Topic, records, fraction int, each func(sample.Record)) {
	t.Helper()
	lastN := int64(records)
	if fraction > 1 {
		lastN = int64(records / in.Partitions / fraction)
	}
	cfg := kafka.Config{Name: "e2e", Brokers: []string{e.kafka.Bootstrap}}
	pr, err := sample.Sample(t.Context(), cfg, sample.Request{Topic: in.Name, Mode: sample.ModeLast, LastN: lastN}, each, nil)
	if err != nil || pr.StoppedBy != sample.StoppedComplete {
		t.Fatalf("sample of %s (last %d): %v, stopped by %q", in.Name, lastN, err, pr.StoppedBy)
	}
}

// addKey counts the key spec gives record r in sum, or its error; ok is
// false for an error.
func addKey(sum *keysample.Summary, spec keysample.KeySpec, r sample.Record) (k keysample.Key, ok bool) {
	k, err := spec.Key(r.Key, r.Value)
	if err != nil {
		sum.AddError(err)
		return k, false
	}
	sum.Add(k)
	return k, true
}

// checkPrediction compares the records per keyed subtask at p that two
// samples predict with observed, the records each subtask of the real job
// received (as oracle names it): full, a sample of the whole input, must
// predict them exactly; part, of the last 10 % of each partition, every
// subtask's share within three standard errors of the sampled share (the
// bound the sample page states). what names full in the log. It returns
// full's prediction.
func (e *lineEnv) checkPrediction(t *testing.T, what, oracle string, full, part *keysample.Summary, p int, observed []int) []int64 {
	t.Helper()
	l, err := full.AtParallelism(p)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range observed {
		total += n
	}
	exact := full.Records() == int64(total) && samePerSubtask(l.PerSubtask, observed)
	t.Logf("Flink %s, %s (%d records): predicted records per keyed subtask %v, observed %s %v", e.flink.Version, what, full.Records(), l.PerSubtask, oracle, observed)
	if !exact {
		t.Errorf("MISMATCH: the whole-input sample does not predict the keyed subtasks' records exactly")
	}
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
	return l.PerSubtask
}

// samePerSubtask reports whether a prediction of the records per subtask
// is observed.
func samePerSubtask(predicted []int64, observed []int) bool {
	if len(predicted) != len(observed) {
		return false
	}
	for i, n := range observed {
		if predicted[i] != int64(n) {
			return false
		}
	}
	return true
}
