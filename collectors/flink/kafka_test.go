package flink

import (
	"maps"
	"slices"
	"testing"
)

func TestParseKafkaOffsetID(t *testing.T) {
	cases := []struct {
		id   string
		want KafkaOffsetID
		ok   bool
	}{
		{"2.Source__Kafka_Source.KafkaSourceReader.topic.orders.partition.3.currentOffset",
			KafkaOffsetID{Subtask: 2, Operator: "Source__Kafka_Source", Topic: "orders", Partition: 3, Kind: KafkaCurrentOffset}, true},
		{"0.Source__Kafka_Source.KafkaSourceReader.topic.payments_v1.partition.0.committedOffset",
			KafkaOffsetID{Subtask: 0, Operator: "Source__Kafka_Source", Topic: "payments_v1", Partition: 0, Kind: KafkaCommittedOffset}, true},
		// DynamicKafkaSource.
		{"11.Source__Dyn.kafkaCluster.cluster-a.KafkaSourceReader.topic.orders.partition.17.currentOffset",
			KafkaOffsetID{Subtask: 11, Operator: "Source__Dyn", Cluster: "cluster-a", Topic: "orders", Partition: 17, Kind: KafkaCurrentOffset}, true},
		// An unsanitised topic with dots, even ones that look like the suffixes.
		{"1.Src.KafkaSourceReader.topic.a.partition.b.v1.partition.4.currentOffset",
			KafkaOffsetID{Subtask: 1, Operator: "Src", Topic: "a.partition.b.v1", Partition: 4, Kind: KafkaCurrentOffset}, true},
		// Subtask endpoint form (no subtask prefix).
		{"Source__Kafka_Source.KafkaSourceReader.topic.orders.partition.0.currentOffset",
			KafkaOffsetID{Subtask: -1, Operator: "Source__Kafka_Source", Topic: "orders", Partition: 0, Kind: KafkaCurrentOffset}, true},
		{"0.Source__Kafka_Source.KafkaSourceReader.KafkaConsumer.records-lag-max", KafkaOffsetID{}, false},
		{"0.Source__Kafka_Source.KafkaSourceReader.topic.orders.partition.x.currentOffset", KafkaOffsetID{}, false},
		{"0.Source__Kafka_Source.KafkaSourceReader.topic.orders.partition.-1.currentOffset", KafkaOffsetID{}, false},
		{"0.Source__Kafka_Source.KafkaSourceReader.topic..partition.1.currentOffset", KafkaOffsetID{}, false},
		{"0.Source__Custom_Source.KafkaConsumer.topic.orders.partition.3.currentOffsets", KafkaOffsetID{}, false},
		{"0.currentOffset", KafkaOffsetID{}, false},
	}
	for _, tc := range cases {
		got, ok := ParseKafkaOffsetID(tc.id)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("ParseKafkaOffsetID(%q) = %+v, %v; want %+v, %v", tc.id, got, ok, tc.want, tc.ok)
		}
	}
}

// TestAssignmentWithoutHistory: an observation built from one id list, as
// the e2e harness and the sandbox do, has no evidence to tell a frozen
// entry from a live one, so a partition listed twice has no owner, however
// its offsets compare; single listings are owned.
func TestAssignmentWithoutHistory(t *testing.T) {
	ids := []string{
		"0.S.KafkaSourceReader.topic.t.partition.0.currentOffset",
		"0.S.KafkaSourceReader.topic.t.partition.0.committedOffset",
		"1.S.KafkaSourceReader.topic.t.partition.0.currentOffset", // stale group after a rescale, or the live one
		"1.S.KafkaSourceReader.topic.t.partition.1.currentOffset",
		"2.S.kafkaCluster.c2.KafkaSourceReader.topic.t.partition.0.currentOffset",
		"1.numRecordsOutPerSecond",
	}
	o := ParseKafkaSourceMetricIDs(ids)
	if len(o.States) != 4 {
		t.Fatalf("states %+v", o.States)
	}
	o.ApplyValues([]Metric{
		{ID: ids[0], Raw: "-1"}, {ID: ids[1], Raw: "-1"},
		{ID: ids[2], Raw: "500"}, {ID: ids[3], Raw: "7"}, {ID: ids[4], Raw: "3"},
	})
	for _, s := range o.States {
		if s.Evidence != EvidenceUnknown {
			t.Errorf("state %+v: evidence %v, want unknown", s.KafkaPartition, s.Evidence)
		}
	}
	owner, amb := o.Assignment()
	want := map[KafkaPartition]int{{Topic: "t", Partition: 1}: 1, {Cluster: "c2", Topic: "t", Partition: 0}: 2}
	if !maps.Equal(owner, want) {
		t.Errorf("Assignment() owner = %v, want %v", owner, want)
	}
	if !slices.Equal(amb, []KafkaPartition{{Topic: "t", Partition: 0}}) {
		t.Errorf("Assignment() ambiguous = %v, want [t-0]", amb)
	}
	if got := o.BySubtask(); len(got[1]) != 1 || len(got[2]) != 1 || len(got[0]) != 0 {
		t.Errorf("BySubtask() = %v", got)
	}
}

func TestResolveTopic(t *testing.T) {
	known := []string{"orders", "payments.v1", "payments_v1", "x"}
	if got := ResolveTopic("payments_v1", known); !slices.Equal(got, []string{"payments.v1", "payments_v1"}) {
		t.Errorf("ambiguous: %v", got)
	}
	if got := ResolveTopic("orders", known); !slices.Equal(got, []string{"orders"}) {
		t.Errorf("orders: %v", got)
	}
	if got := ResolveTopic("nope", known); got != nil {
		t.Errorf("nope: %v", got)
	}
}

func TestKeyedVerticesNilAndBroadcast(t *testing.T) {
	if KeyedVertices(nil) != nil {
		t.Error("nil plan")
	}
	p := &Plan{Nodes: []PlanNode{
		{ID: "src"},
		{ID: "map", Inputs: []PlanInput{{ID: "src", ShipStrategy: "FORWARD"}}},
		{ID: "join", Inputs: []PlanInput{{ID: "map", ShipStrategy: "BROADCAST"}, {ID: "src", ShipStrategy: "HASH"}}},
	}}
	if got := KeyedVertices(p); !slices.Equal(got, []string{"join"}) {
		t.Errorf("KeyedVertices = %v", got)
	}
	in := PlanInputs(p)
	if len(in) != 2 || in["src"] != nil || !slices.Equal(in["map"], []string{"src"}) || !slices.Equal(in["join"], []string{"map", "src"}) {
		t.Errorf("PlanInputs = %v, want map ← src, join ← map, src", in)
	}
	if PlanInputs(nil) != nil {
		t.Error("PlanInputs(nil plan)")
	}
}
