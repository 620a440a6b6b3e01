package main

import (
	"fmt"
	"io"

	"github.com/skewscope/skewscope/internal/benchstat"
)

// stats is the minimum and median of a series of ns/key figures.
type stats struct {
	min, median float64
	n           int
}

// summarize returns the minimum and median of xs (the mean of the middle
// two when len(xs) is even); xs is not modified.
func summarize(xs []float64) stats {
	lo, m := benchstat.MinMedian(xs)
	return stats{min: lo, median: m, n: len(xs)}
}

func (s stats) String() string { return fmt.Sprintf("%.1f / %.1f ns/key", s.min, s.median) }

type jvmResult struct {
	jvm jvm
	s   stats
}

// report is what keybench measured.
type report struct {
	keys, maxP, rounds, passes, procs int
	load                              [2]string
	single, before, bulk              stats
	jvms                              []jvmResult
	sum                               int64
}

// anchor is the JVM the goals are judged against: the newest (the last).
func (r report) anchor() jvmResult { return r.jvms[len(r.jvms)-1] }

func (r report) write(w io.Writer) {
	fmt.Fprintf(w, "String key → key group: %d keys (assign's BenchmarkKeyGroups1MStringKeys), max parallelism %d, %d rounds × %d timed passes per side, min / median\n",
		r.keys, r.maxP, r.rounds, r.passes)
	fmt.Fprintf(w, "  load average before %s, after %s; GOMAXPROCS %d; every side's key groups sum to %d\n", r.load[0], r.load[1], r.procs, r.sum)
	for i, j := range r.jvms {
		role := "JVM"
		if i == len(r.jvms)-1 {
			role = "JVM anchor, the newest found"
		}
		fmt.Fprintf(w, "  %s: Flink 2.2.1 KeyGroupRangeAssignment.assignToKeyGroup, one thread, on Java %s (%s, %s): %s\n",
			role, j.jvm.version, j.jvm.runtime, j.jvm.path, j.s)
	}
	if a := r.anchor(); a.jvm.feature < 21 {
		fmt.Fprintf(w, "  note: the newest JDK here is Java %d; Java 21 and later vectorise String.hashCode, so a newer JVM would be a harder anchor\n", a.jvm.feature)
	}
	a := r.anchor()
	line := func(name string, goal float64, goalText string, now stats) {
		ratio, ratioMin := now.median/a.s.median, now.min/a.s.min
		verdict := "met"
		if ratio > goal {
			verdict = "NOT met"
		}
		fmt.Fprintf(w, "  %-26s goal ≤ %.1f× %s   anchor %s   now %s   ratio %.2f× (min %.2f×): %s\n",
			name, goal, goalText, a.s, now, ratio, ratioMin, verdict)
		for _, j := range r.jvms[:len(r.jvms)-1] {
			fmt.Fprintf(w, "  %-26s against Java %s: %.2f× (min %.2f×)\n", "", j.jvm.version, now.median/j.s.median, now.min/j.s.min)
		}
	}
	line("one goroutine", goalSingle, "the JVM thread", r.single)
	fmt.Fprintf(w, "  %-26s before (one multiply-add per byte, commit 0d90a98): %s, ratio %.2f× (min %.2f×); now/before %.2f×\n",
		"", r.before, r.before.median/a.s.median, r.before.min/a.s.min, r.single.median/r.before.median)
	line(fmt.Sprintf("bulk, %d cores", r.procs), goalBulk, "one JVM thread", r.bulk)
}
