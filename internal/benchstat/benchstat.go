// Package benchstat holds what the measuring commands (cmd/jmload,
// cmd/keybench, cmd/samplebench, cmd/speedbench) share: a series'
// minimum and median, and the measuring process's own CPU time.
package benchstat

import (
	"fmt"
	"slices"
	"syscall"
	"time"
)

// MinMedian returns the minimum and the median of xs (the mean of the
// middle two when len(xs) is even), 0 and 0 for none; xs is not modified.
func MinMedian(xs []float64) (lo, median float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	median = s[len(s)/2]
	if len(s)%2 == 0 {
		median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[0], median
}

// SelfCPU is this process's CPU time so far, user plus system, from
// getrusage(RUSAGE_SELF): every thread, the garbage collector's included;
// child processes (a fake server run beside the measured side) are not.
func SelfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
