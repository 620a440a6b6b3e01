package assign

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestClearSeconds(t *testing.T) {
	for _, tc := range []struct {
		backlog, capacity, in, want float64
	}{
		{30000, 150, 100, 600}, // 30k records at 50 records/s spare
		{0, 150, 100, 0},
		{30000, 100, 100, -1}, // capacity = input: never
		{30000, 80, 100, -1},
		{math.NaN(), 150, 100, -1},
	} {
		if got := ClearSeconds(tc.backlog, tc.capacity, tc.in); got != tc.want {
			t.Errorf("ClearSeconds(%v, %v, %v) = %v, want %v", tc.backlog, tc.capacity, tc.in, got, tc.want)
		}
	}
}

// Each candidate says when each subtask's backlog clears at the source's
// capacity, and whether its lag time falls under the retention.
func TestSizeBacklogClears(t *testing.T) {
	topics := []Topic{{"orders", 4}}
	rates := map[TopicPartition]float64{}
	for q := range int32(4) {
		rates[TopicPartition{"orders", q}] = 100
	}
	backlog := map[TopicPartition]float64{{"orders", 3}: 30000}
	sz, err := Size(SizingInput{
		RecommendInput: RecommendInput{Topics: topics, Rates: rates, MaxParallelism: 128, Current: 4, Target: 2},
		SourceCapacity: 150, Backlog: backlog, Retention: map[string]time.Duration{"orders": 2 * time.Minute},
	})
	if err != nil {
		t.Fatal(err)
	}
	fresh4, _ := FreshAssignment(topics, 4)
	hot, _ := fresh4.OwnerOf(TopicPartition{"orders", 3})
	for _, c := range sz.Candidates {
		switch c.Parallelism {
		case 4:
			b := c.Backlog[hot]
			// 30,000 records at 150 − 100 records/s spare: 600 s.
			if b.Records != 30000 || b.InputRate != 100 || b.ClearSeconds != 600 || !b.LossStops || b.RetentionSeconds != 120 {
				t.Errorf("Size[p=4].Backlog[%d] = %+v, want 30000 records clearing in 600 s, loss stops under 120 s", hot, b)
			}
			if c.ClearSeconds != 600 || !c.LossStops || !strings.Contains(c.Verdict, "backlog clears in about 10 min") {
				t.Errorf("Size[p=4] = clear %v, loss stops %v, verdict %q; want 600, true, about 10 min", c.ClearSeconds, c.LossStops, c.Verdict)
			}
		case 2:
			// Two partitions per subtask: 200 records/s in, 150 out: never.
			if c.ClearSeconds != -1 || c.LossStops || !strings.Contains(c.Verdict, "never clears") {
				t.Errorf("Size[p=2] = clear %v, loss stops %v, verdict %q; want never, false", c.ClearSeconds, c.LossStops, c.Verdict)
			}
		}
	}
	if len(sz.Candidates) == 0 || sz.Candidates[0].Backlog == nil {
		t.Errorf("Size with a backlog: candidates %+v carry no backlog", sz.Candidates)
	}
	// p = 6 leaves subtasks idle: they lose nothing, and the candidate's
	// loss stops when every reading subtask keeps up.
	sz, _ = Size(SizingInput{RecommendInput: RecommendInput{Topics: topics, Rates: rates, MaxParallelism: 128, Current: 4, Target: 6, UpperLimit: 6},
		SourceCapacity: 150, Backlog: backlog, Retention: map[string]time.Duration{"orders": 2 * time.Minute}})
	for _, c := range sz.Candidates {
		if c.Parallelism == 6 && (!c.LossStops || c.ClearSeconds != 600) {
			t.Errorf("Size[p=6] = loss stops %v, clear %v; want true, 600 (two idle subtasks lose nothing)", c.LossStops, c.ClearSeconds)
		}
	}
	// Without a retention the clearance is still given, loss not judged.
	sz, _ = Size(SizingInput{RecommendInput: RecommendInput{Topics: topics, Rates: rates, MaxParallelism: 128, Current: 4}, SourceCapacity: 150, Backlog: backlog})
	for _, c := range sz.Candidates {
		if c.Parallelism == 4 && (c.ClearSeconds != 600 || c.LossStops) {
			t.Errorf("Size[p=4] without retention = clear %v, loss stops %v; want 600, false", c.ClearSeconds, c.LossStops)
		}
	}
	if _, err := Size(SizingInput{RecommendInput: RecommendInput{Topics: topics, Rates: rates, MaxParallelism: 128, Current: 4}, SourceCapacity: 150,
		Backlog: map[TopicPartition]float64{{"orders", 1}: -3}}); err == nil || !strings.Contains(err.Error(), "orders-1") {
		t.Errorf("Size with a negative backlog: err %v, want one naming orders-1", err)
	}
}
