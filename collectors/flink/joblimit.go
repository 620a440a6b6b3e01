package flink

import (
	"cmp"
	"slices"
)

// DefaultMaxJobs is Config.MaxJobs when it is 0.
const DefaultMaxJobs = 500

// MaxMaxJobs is the largest Config.MaxJobs Validate accepts.
const MaxMaxJobs = 100_000

// limitJobs keeps at most limit of jobs: every job that is not globally
// terminal (running, restarting, …), whatever their number, and as many of
// the finished ones as fit, the most recently ended first (by end time,
// then start time, then id). The kept jobs are in the order of jobs;
// dropped counts the finished ones left out.
func limitJobs(jobs []JobOverview, limit int) (kept []JobOverview, dropped int) {
	var finished []int
	for i, j := range jobs {
		if j.State.GloballyTerminal() {
			finished = append(finished, i)
		}
	}
	room := max(0, limit-(len(jobs)-len(finished)))
	if len(finished) <= room {
		return jobs, 0
	}
	slices.SortFunc(finished, func(a, b int) int {
		ja, jb := &jobs[a], &jobs[b]
		return cmp.Or(cmp.Compare(jb.EndTime, ja.EndTime), cmp.Compare(jb.StartTime, ja.StartTime), cmp.Compare(ja.ID, jb.ID))
	})
	drop := make(map[int]bool, len(finished)-room)
	for _, i := range finished[room:] {
		drop[i] = true
	}
	kept = make([]JobOverview, 0, len(jobs)-len(drop))
	for i, j := range jobs {
		if !drop[i] {
			kept = append(kept, j)
		}
	}
	return kept, len(drop)
}
