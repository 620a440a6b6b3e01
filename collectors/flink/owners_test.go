package flink

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// TestOwnersRules: Owners over hand-set evidence, one partition per case.
func TestOwnersRules(t *testing.T) {
	type listing struct {
		subtask int
		ev      Evidence
	}
	const (
		cur = EvidenceCurrent
		unc = EvidenceUnconfirmed
		unk = EvidenceUnknown
		stl = EvidenceStale
	)
	cases := []struct {
		name                  string
		listed                []listing
		awaiting, registering []int
		owner                 int
		cands                 []int
		reason                OwnerReason
	}{
		{"single, no history", []listing{{2, unk}}, nil, nil, 2, []int{2}, ReasonOnlyListing},
		{"single, unconfirmed after a refreshed restart", []listing{{2, unc}}, nil, nil, 2, []int{2}, ReasonOnlyListing},
		{"single, restarted and not refreshed", []listing{{2, unc}}, []int{2}, nil, -1, []int{2}, ReasonAwaitingRefresh},
		{"single, another subtask awaiting after a failover", []listing{{2, unc}}, []int{1}, nil, 2, []int{2}, ReasonOnlyListing},
		{"single in range beside a stale one", []listing{{1, unc}, {5, stl}}, nil, nil, 1, []int{1}, ReasonOnlyListing},
		{"only stale", []listing{{4, stl}, {5, stl}}, nil, nil, -1, nil, ReasonOutOfRange},
		{"frozen and new owner", []listing{{3, unc}, {5, cur}}, nil, nil, 5, []int{3, 5}, ReasonOnlyCurrent},
		{"new owner beside a subtask awaiting refresh", []listing{{3, unc}, {5, cur}}, []int{3}, nil, 5, []int{3, 5}, ReasonOnlyCurrent},
		{"two unknown", []listing{{0, unk}, {4, unk}}, nil, nil, -1, []int{0, 4}, ReasonNoCurrent},
		{"two unconfirmed", []listing{{0, unc}, {4, unc}}, nil, nil, -1, []int{0, 4}, ReasonNoCurrent},
		{"two current", []listing{{0, cur}, {4, cur}}, nil, nil, -1, []int{0, 4}, ReasonSeveralCurrent},
		{"current beside unknown", []listing{{0, unk}, {4, cur}}, nil, nil, 4, []int{0, 4}, ReasonOnlyCurrent},
		// A rescale still registering: a frozen-looking single listing may
		// have moved; a current or unknown one has not.
		{"single unconfirmed while a rescale registers", []listing{{2, unc}}, nil, []int{0, 1, 2}, -1, []int{2}, ReasonRegistering},
		{"single unconfirmed while another awaits after a rescale", []listing{{2, unc}}, []int{3}, []int{3}, -1, []int{2}, ReasonRegistering},
		{"single current while a rescale registers", []listing{{2, cur}}, nil, []int{0, 1, 2}, 2, []int{2}, ReasonOnlyListing},
		{"single unknown while a rescale registers", []listing{{2, unk}}, nil, []int{1}, 2, []int{2}, ReasonOnlyListing},
		{"current beside unconfirmed while a rescale registers", []listing{{1, unc}, {2, cur}}, nil, []int{1, 2}, 2, []int{1, 2}, ReasonOnlyCurrent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := KafkaPartition{Topic: "orders", Partition: 7}
			o := &KafkaSourceObservation{Parallelism: 4, AwaitingRefresh: tc.awaiting, Registering: tc.registering}
			// Unsorted on purpose: Owners sorts the candidates.
			for _, l := range slices.Backward(tc.listed) {
				o.States = append(o.States, KafkaPartitionState{KafkaPartition: p, Subtask: l.subtask, Evidence: l.ev, CurrentOffset: -1, CommittedOffset: -1})
			}
			got := o.Owners()
			want := PartitionOwner{KafkaPartition: p, Owner: tc.owner, Candidates: tc.cands, Reason: tc.reason}
			if len(got) != 1 || fmt.Sprint(got[0]) != fmt.Sprint(want) {
				t.Fatalf("Owners() = %+v, want [%+v]", got, want)
			}
			owner, amb := o.Assignment()
			if o, ok := owner[p]; ok != (tc.owner >= 0) || (ok && o != tc.owner) || (len(amb) == 1) == (tc.owner >= 0) {
				t.Errorf("Assignment() = %v, %v; want owner %d", owner, amb, tc.owner)
			}
		})
	}
}

// TestOwnersOrderAndBySubtask: partitions come out sorted by cluster,
// topic, partition; BySubtask holds the certain owners only.
func TestOwnersOrderAndBySubtask(t *testing.T) {
	o := &KafkaSourceObservation{States: []KafkaPartitionState{
		{KafkaPartition: KafkaPartition{Topic: "b", Partition: 1}, Subtask: 0},
		{KafkaPartition: KafkaPartition{Topic: "a", Partition: 10}, Subtask: 0},
		{KafkaPartition: KafkaPartition{Topic: "a", Partition: 2}, Subtask: 1},
		{KafkaPartition: KafkaPartition{Cluster: "c", Topic: "a", Partition: 0}, Subtask: 1},
		{KafkaPartition: KafkaPartition{Topic: "a", Partition: 2}, Subtask: 0},
	}}
	var got []string
	for _, p := range o.Owners() {
		got = append(got, fmt.Sprintf("%s/%s-%d:%d", p.Cluster, p.Topic, p.Partition, p.Owner))
	}
	want := []string{"/a-2:-1", "/a-10:0", "/b-1:0", "c/a-0:1"}
	if !slices.Equal(got, want) {
		t.Errorf("Owners() = %v, want %v", got, want)
	}
	by := o.BySubtask()
	if fmt.Sprint(by) != "map[0:[{ a 10} { b 1}] 1:[{c a 0}]]" {
		t.Errorf("BySubtask() = %v", by)
	}
}

func TestEvidenceText(t *testing.T) {
	b, err := json.Marshal(map[string]Evidence{"a": EvidenceCurrent, "b": EvidenceUnconfirmed, "c": EvidenceUnknown, "d": EvidenceStale})
	if err != nil || string(b) != `{"a":"current","b":"unconfirmed","c":"unknown","d":"stale"}` {
		t.Errorf("json.Marshal(evidence) = %s, %v", b, err)
	}
	if s := Evidence(9).String(); s != "evidence(9)" {
		t.Errorf("Evidence(9).String() = %q", s)
	}
}
