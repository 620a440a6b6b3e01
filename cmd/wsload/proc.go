package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/skewscope/skewscope/internal/quote"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat;
// it is 100 on every Linux architecture Go supports.
const clockTicks = 100

// cpuTime reads utime+stime of pid from /proc/<pid>/stat.
func cpuTime(pid int) (user, system time.Duration, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	return parseStat(b)
}

// parseStat extracts utime and stime (fields 14 and 15) from a
// /proc/<pid>/stat line. The command name (field 2) may contain spaces
// and parentheses, so fields are counted from the last ')'.
func parseStat(b []byte) (user, system time.Duration, err error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("proc stat %s: no command name", quote.Clip(string(b)))
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, 0, fmt.Errorf("proc stat %s: %d fields", quote.Clip(string(b)), len(f)+2)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("proc stat %s: bad utime/stime", quote.Clip(string(b)))
	}
	tick := time.Second / clockTicks
	return time.Duration(u) * tick, time.Duration(s) * tick, nil
}

// memory reads VmHWM (peak RSS) and VmRSS of pid in bytes.
func memory(pid int) (peak, current int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	return parseStatus(b)
}

func parseStatus(b []byte) (peak, current int64, err error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	found := 0
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmHWM" && k != "VmRSS") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("proc status %s: %q", k, v)
		}
		if k == "VmHWM" {
			peak = kb << 10
		} else {
			current = kb << 10
		}
		found++
	}
	if found != 2 {
		return 0, 0, fmt.Errorf("proc status: VmHWM or VmRSS missing")
	}
	return peak, current, nil
}

// machineBusy reads the time all CPUs spent not idle (the first line of
// /proc/stat: every field but idle and iowait).
func machineBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, fmt.Errorf("proc stat: first line %s", quote.Clip(line))
	}
	var busy int64
	for i, v := range f[1:] {
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest time is already in user
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("proc stat: field %d %q", i+1, v)
		}
		busy += n
	}
	return time.Duration(busy) * (time.Second / clockTicks), nil
}
