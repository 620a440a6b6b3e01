// Package strategy is the one registry of partition-assignment strategies
// that the what-if planner and the JSON API offer, each under a stable name.
//
// "flink" is what Flink's KafkaSource does on a fresh start, and the default.
// Every other strategy is a comparison: a layout Flink does not use for a
// plain KafkaSource ("naive-modulo", which is simply wrong since Flink 1.3.2;
// "dynamic-global", which only DynamicKafkaSource's global mode uses) or a
// Kafka consumer-group assignor computed offline with franz-go's own
// balancers, where a group member plays the role of a source subtask.
package strategy

import (
	"fmt"
	"strings"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/quote"
)

// Strategy is one way of assigning Kafka partitions to p subtasks.
type Strategy struct {
	// Name is the stable identifier used in URLs, the JSON API and
	// configuration, e.g. "flink" or "kafka-range".
	Name string `json:"name"`
	// Label is a short human label that states whether the result is what
	// Flink does, e.g. "Flink KafkaSource (exact)".
	Label string `json:"label"`
	// Description says what the strategy computes and its limits.
	Description string `json:"description"`
	// Source names the code the strategy mirrors or calls.
	Source string `json:"source"`
	// Exact is true when the result is bit-for-bit what the named system
	// computes for the modelled situation.
	Exact bool `json:"exact"`
	// Comparison is true for every strategy that is not what a Flink
	// KafkaSource does; the UI must show such results as comparisons.
	Comparison bool `json:"comparison"`
	// Assign computes the assignment of topics to p subtasks. Subtasks list
	// their partitions with topics in input order, partitions ascending.
	Assign func(topics []assign.Topic, p int) (assign.Assignment, error) `json:"-"`
}

// Default is the name of the strategy used when none is given.
const Default = "flink"

// registry is the display order: "flink" first, then the Flink-side
// comparisons, then the consumer-group assignors.
var registry = []Strategy{
	{
		Name:  "flink",
		Label: "Flink KafkaSource (exact)",
		Description: "What Flink's KafkaSource (and the legacy FlinkKafkaConsumer) assigns on a " +
			"fresh start or to newly discovered partitions: each topic starts at subtask " +
			"((hash(topic)*31) & 0x7FFFFFFF) % p and its partition k goes to (start + k) % p. " +
			"Topics are laid out independently, so several topics can pile onto the same " +
			"subtasks. After a restore at a new parallelism the layout is different (contiguous chunks).",
		Source: "KafkaSourceEnumerator.getSplitOwner, apache/flink-connector-kafka v3.0.0-v5.0.0",
		Exact:  true,
		Assign: assign.FreshAssignment,
	},
	{
		Name:  "naive-modulo",
		Label: "Naive i % p (comparison; wrong since Flink 1.3.2)",
		Description: "The claim still found in blog posts: partition i of the combined list " +
			"(topics in input order, partitions ascending) goes to subtask i % p. No Flink " +
			"release since 1.3.2 does this; it is shown only to compare with what Flink does.",
		Source: "FlinkKafkaConsumerBase.assignPartitions, apache/flink release-1.3.0 (removed by FLINK-7143)",
		// Not exact: it models no running system. Even Flink ≤ 1.3.1 did
		// not keep its partition list in a stable order.
		Exact:      false,
		Comparison: true,
		Assign:     assign.NaiveModuloAssignment,
	},
	{
		Name:  "dynamic-global",
		Label: "DynamicKafkaSource global mode (comparison)",
		Description: "DynamicKafkaSource with stream-enumerator-mode=global (connector v5.0.0) " +
			"on a fresh start with one cluster: partitions sorted by (topic, partition) are " +
			"dealt round-robin, the i-th to subtask i % p. Not modelled: several clusters, " +
			"later discovery, metadata refreshes, restores. A plain KafkaSource does not do this.",
		Source:     "GlobalSplitOwnerAssigner.assignSplitOwner, apache/flink-connector-kafka v5.0.0 (FLINK-39012)",
		Exact:      true,
		Comparison: true,
		Assign:     assign.DynamicGlobalAssignment,
	},
	{
		Name:  "kafka-range",
		Label: "Kafka consumer group: range (comparison)",
		Description: "A Kafka consumer group of p members with the range assignor (the classic " +
			"Java default), member i standing for subtask i: per topic, each member gets " +
			"P/p contiguous partitions and the first P%p members one more, so the extra " +
			"partitions of every topic land on the same low members. Computed offline by " +
			"franz-go's RangeBalancer, which matches Java's RangeAssignor; rack-unaware.",
		Source:     "franz-go kgo.RangeBalancer (equivalent to Kafka RangeAssignor)",
		Exact:      true,
		Comparison: true,
		Assign:     rangeAssign,
	},
	{
		Name:  "kafka-roundrobin",
		Label: "Kafka consumer group: roundrobin (comparison)",
		Description: "A Kafka consumer group of p members with the roundrobin assignor, member i " +
			"standing for subtask i: all partitions sorted by (topic, partition) are dealt to " +
			"the members in turn, so counts differ by at most one. Computed offline by " +
			"franz-go's RoundRobinBalancer, which matches Java's RoundRobinAssignor.",
		Source:     "franz-go kgo.RoundRobinBalancer (equivalent to Kafka RoundRobinAssignor)",
		Exact:      true,
		Comparison: true,
		Assign:     roundRobinAssign,
	},
	{
		Name:  "kafka-cooperative-sticky",
		Label: "Kafka consumer group: cooperative-sticky (approximate comparison)",
		Description: "A Kafka consumer group of p members with the cooperative-sticky assignor " +
			"on a first join (no previous owners), member i standing for subtask i. Computed " +
			"offline by franz-go's CooperativeStickyBalancer: valid and balanced (counts differ " +
			"by at most one) but not the same partition-to-member layout the Java client's " +
			"sticky assignor would produce, and the layout may differ from one call to the " +
			"next; only the per-subtask counts are meaningful.",
		Source:     "franz-go kgo.CooperativeStickyBalancer (approximates Kafka CooperativeStickyAssignor)",
		Exact:      false,
		Comparison: true,
		Assign:     cooperativeStickyAssign,
	},
}

// All returns every strategy in display order, "flink" first. The slice is
// a copy; changing it does not change the registry.
func All() []Strategy {
	out := make([]Strategy, len(registry))
	copy(out, registry)
	return out
}

// Names returns the strategy names in display order.
func Names() []string {
	names := make([]string, len(registry))
	for i, s := range registry {
		names[i] = s.Name
	}
	return names
}

// Lookup returns the strategy called name. An empty name is not the default:
// callers that want one pass Default. The error for an unknown name lists
// the valid names.
func Lookup(name string) (Strategy, error) {
	for _, s := range registry {
		if s.Name == name {
			return s, nil
		}
	}
	return Strategy{}, fmt.Errorf("unknown assignment strategy %s: want one of %s", quote.Clip(name), strings.Join(Names(), ", "))
}
