package fakejm_test

import (
	"strings"
	"testing"

	"github.com/skewscope/skewscope/collectors/flink"
	"github.com/skewscope/skewscope/internal/fakejm"
)

// TestMetricIDsAsFlinkWritesThem pins the ids the fake writes to the ones
// Flink writes (the first from the 2.3.0 recordings; the others by the
// rules of MetricQueryService and MetricUtils.truncateOperatorName).
func TestMetricIDsAsFlinkWritesThem(t *testing.T) {
	long := strings.Repeat("x", 90)
	for _, tc := range []struct {
		got, want string
	}{
		{fakejm.SubtaskID(0, fakejm.KafkaOffsetID("Source: Kafka Source", "orders", 0, fakejm.CurrentOffset)),
			"0.Source__Kafka_Source.KafkaSourceReader.topic.orders.partition.0.currentOffset"},
		{fakejm.KafkaOffsetID("Source: orders, v2.east", "payments.v1", 3, fakejm.CommittedOffset),
			"Source__orders__v2_east.KafkaSourceReader.topic.payments_v1.partition.3.committedOffset"},
		{fakejm.SplitWatermarkID("Source: Kafka Source", "payments.v1", 12, "currentWatermark"),
			"Source__Kafka_Source.split.payments_v1-12.watermark.currentWatermark"},
		{fakejm.OperatorScope(long), strings.Repeat("x", 80)},
		{fakejm.OperatorScope(long + ": Writer"), strings.Repeat("x", 72) + "__Writer"},
		{fakejm.OperatorScope(long + ": Committer"), strings.Repeat("x", 69) + "__Committer"},
		{fakejm.OperatorScope("Route Sink: Writer"), "Route_Sink__Writer"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestMetricIDsParseBack is the independent check of the fake's names:
// the collector's own parser reads the topic, partition, subtask and gauge
// back from them, operator names with every character Flink replaces
// included, and maps the topic back to the real one.
func TestMetricIDsParseBack(t *testing.T) {
	topics := []string{"orders", "payments.v1", "a-b_c"}
	for _, op := range []string{"Source: Kafka Source", "Source: orders, v2.east (eu:1)", strings.Repeat("Kafka Source ", 8)} {
		for _, topic := range topics {
			for _, gauge := range []string{fakejm.CurrentOffset, fakejm.CommittedOffset} {
				id := fakejm.SubtaskID(7, fakejm.KafkaOffsetID(op, topic, 41, gauge))
				p, ok := flink.ParseKafkaOffsetID(id)
				if !ok {
					t.Errorf("ParseKafkaOffsetID(%q) not ok", id)
					continue
				}
				if p.Subtask != 7 || p.Partition != 41 || p.Kind != gauge || p.Cluster != "" || p.Operator != fakejm.OperatorScope(op) {
					t.Errorf("ParseKafkaOffsetID(%q) = %+v", id, p)
				}
				if got := flink.ResolveTopic(p.Topic, topics); len(got) != 1 || got[0] != topic {
					t.Errorf("%q: topic %q resolves to %q, want %q", id, p.Topic, got, topic)
				}
			}
		}
	}
}
