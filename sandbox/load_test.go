package sandbox

import (
	"math"
	"testing"

	"github.com/skewscope/skewscope/assign"
)

// TestOrdersHotSubtaskAlwaysFallsBehind checks the sandbox's story at its
// start for every phase of the rate drift: the subtask owning the two
// hottest orders partitions reads more than its capacity even at the
// drift's lowest, and every other source subtask less than its capacity
// even at the drift's highest. The drift's phases come from the seed, so
// a story that held only for some phases would make the hot subtask keep
// up for minutes on some starts.
func TestOrdersHotSubtaskAlwaysFallsBehind(t *testing.T) {
	spec := jobSpecs[0]
	if spec.name != "orders-enrichment" {
		t.Fatalf("jobSpecs[0] = %q, want orders-enrichment", spec.name)
	}
	// lo[i] and hi[i] bound subtask i's read rate over all phases.
	lo := make([]float64, spec.p)
	hi := make([]float64, spec.p)
	for _, ts := range sandboxTopics {
		if ts.name != topicOrders && ts.name != topicInventory {
			continue
		}
		// Sample the phase finely: each partition's rate is a sine of
		// its own phase, so its bounds are the extremes over one turn.
		tr := &topicTraffic{spec: ts, phase: make([]float64, inventoryMaxPartitions+12)}
		for p := range ts.initialPartitions {
			least, most := math.Inf(1), math.Inf(-1)
			for k := range 3600 {
				for i := range tr.phase {
					tr.phase[i] = 2 * math.Pi * float64(k) / 3600
				}
				r := ts.rate(tr, p, 0)
				least, most = math.Min(least, r), math.Max(most, r)
			}
			owner, err := assign.KafkaSplitOwner(assign.TopicPartition{Topic: ts.name, Partition: int32(p)}, spec.p)
			if err != nil {
				t.Fatal(err)
			}
			lo[owner] += least
			hi[owner] += most
		}
	}
	hot, err := assign.KafkaSplitOwner(assign.TopicPartition{Topic: topicOrders, Partition: 0}, spec.p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range spec.p {
		t.Logf("subtask %d reads %.1f to %.1f records/s; capacity %.0f", i, lo[i], hi[i], spec.srcCap)
		switch {
		case i == hot && lo[i] <= spec.srcCap:
			t.Errorf("hot subtask %d reads as little as %.1f records/s, not above its capacity %.0f: it keeps up on some seeds", i, lo[i], spec.srcCap)
		case i != hot && hi[i] >= spec.srcCap:
			t.Errorf("subtask %d reads as much as %.1f records/s, not below its capacity %.0f: it falls behind too on some seeds", i, hi[i], spec.srcCap)
		}
	}
}
