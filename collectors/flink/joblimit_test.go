package flink

import (
	"slices"
	"testing"
)

// TestLimitJobs: unfinished jobs are always kept, in any number; finished
// ones fill the rest of the limit, the most recently ended first (ties by
// start time, then id), and the kept jobs keep their order.
func TestLimitJobs(t *testing.T) {
	jobs := []JobOverview{
		{ID: "f1", State: "FINISHED", StartTime: 1, EndTime: 10},
		{ID: "r1", State: "RUNNING", StartTime: 5, EndTime: -1},
		{ID: "c1", State: "CANCELED", StartTime: 2, EndTime: 30},
		{ID: "x1", State: "FAILED", StartTime: 3, EndTime: 20},
		{ID: "s1", State: "SUSPENDED", StartTime: 4, EndTime: 5}, // not globally terminal
		{ID: "x2", State: "FAILED", StartTime: 4, EndTime: 20},
	}
	for _, c := range []struct {
		limit   int
		want    []string
		dropped int
	}{
		{10, []string{"f1", "r1", "c1", "x1", "s1", "x2"}, 0},
		{6, []string{"f1", "r1", "c1", "x1", "s1", "x2"}, 0},
		{4, []string{"r1", "c1", "s1", "x2"}, 2},
		{3, []string{"r1", "c1", "s1"}, 3},
		{1, []string{"r1", "s1"}, 4},
	} {
		kept, dropped := limitJobs(jobs, c.limit)
		var ids []string
		for _, j := range kept {
			ids = append(ids, j.ID)
		}
		if !slices.Equal(ids, c.want) || dropped != c.dropped {
			t.Errorf("limitJobs(%d) = %v, %d dropped; want %v, %d", c.limit, ids, dropped, c.want, c.dropped)
		}
	}
}
