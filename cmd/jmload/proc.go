package main

import (
	"fmt"
	"syscall"
	"time"
)

// selfCPU is this process's CPU time so far, user plus system, from
// getrusage(RUSAGE_SELF): every thread, the garbage collector's included;
// child processes are not.
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
