package kafka

import (
	"fmt"
	"sync"
	"time"
)

// Rate returns the records per second between two end-offset samples. ok is
// false when there is no usable interval (no earlier sample, time not
// advancing) or when the end offset went backwards (topic re-created or
// truncated), in which case no rate can be told.
func Rate(prevEnd int64, prevAt time.Time, end int64, at time.Time) (rate float64, ok bool) {
	dt := at.Sub(prevAt).Seconds()
	if prevAt.IsZero() || dt <= 0 || end < prevEnd {
		return 0, false
	}
	return float64(end-prevEnd) / dt, true
}

// Lag returns the offset lag of a committed offset against an end offset,
// clamped at zero: the two are read at different instants, so a commit can
// appear ahead of the end offset.
func Lag(end, committed int64) int64 {
	if committed >= end {
		return 0
	}
	return end - committed
}

// TimeLagKind says how a lag in seconds was obtained.
type TimeLagKind uint8

const (
	// TimeLagUnknown: no sample yet, nothing can be said.
	TimeLagUnknown TimeLagKind = iota
	// TimeLagCaughtUp: the commit is at (or past) the newest end offset; 0 s.
	TimeLagCaughtUp
	// TimeLagInterpolated: the commit lies between two samples.
	TimeLagInterpolated
	// TimeLagAtLeast: the commit is older than the oldest sample; the value
	// is a lower bound (now minus the oldest sample's time).
	TimeLagAtLeast
)

// Known reports whether a lag in seconds was obtained: caught up,
// interpolated or a lower bound.
func (k TimeLagKind) Known() bool { return k != TimeLagUnknown }

// MarshalText writes the kind as the JSON API spells it (String).
func (k TimeLagKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind as MarshalText writes it; any other text is
// an error naming it.
func (k *TimeLagKind) UnmarshalText(b []byte) error {
	for _, c := range []TimeLagKind{TimeLagUnknown, TimeLagCaughtUp, TimeLagInterpolated, TimeLagAtLeast} {
		if string(b) == c.String() {
			*k = c
			return nil
		}
	}
	return fmt.Errorf("lag kind %q is none of unknown, caught-up, interpolated, at-least", b)
}

func (k TimeLagKind) String() string {
	switch k {
	case TimeLagCaughtUp:
		return "caught-up"
	case TimeLagInterpolated:
		return "interpolated"
	case TimeLagAtLeast:
		return "at-least"
	}
	return "unknown"
}

// Sample is one (time, end offset) observation of a partition.
type Sample struct {
	At     time.Time
	Offset int64
}

// TimeTable is a bounded per-partition table of (time, end offset) samples
// used to estimate lag in seconds, after kafka-lag-exporter's LookupTable.
//
// Method: every poll adds the partition's end offset with the poll time.
// A sample whose time is not after the newest one is ignored; an end offset
// lower than the newest resets the table (the topic was re-created or
// truncated). While the end offset does not move, only the first and the
// latest sample of the flat stretch are kept, so an idle partition does not
// push history out. The oldest sample is evicted at the size limit.
//
// For a committed offset c, [TimeTable.LagSeconds] finds, newest to oldest,
// the first pair of adjacent samples l, r with l.Offset ≤ c ≤ r.Offset and
// interpolates the time t_c at which the end offset passed c linearly:
// t_c = t_r − (o_r − c)·(t_r − t_l)/(o_r − o_l); the lag is now − t_c.
//
// Limits: the resolution is the poll interval (a partition receiving one
// record per minute shows lag jumping between 0 and the gap); traffic is
// assumed uniform between two samples, so bursts skew the estimate; the
// table spans at most size × poll interval of traffic (less on busy, more on
// idle partitions) and a commit older than the oldest sample gets only a
// lower bound (kind TimeLagAtLeast) rather than kafka-lag-exporter's
// extrapolation, which produces "astronomical" values on replays; and for
// Flink the committed offset trails the real position by up to one
// checkpoint interval, which this estimate includes.
//
// A TimeTable is safe for concurrent use: the live store adds samples
// under its own lock while pages read lags from a State of the store.
//
// Times are kept as wall-clock nanoseconds beside the offsets, a table's
// samples in one pointer-free array: a view of ten thousand partitions
// reads ten thousand tables, and the collector keeps them for as long as it
// runs, without the garbage collector scanning them.
type TimeTable struct {
	size    int
	mu      sync.RWMutex
	samples []point // oldest first
}

// point is a Sample as a TimeTable keeps it: its time in Unix nanoseconds.
type point struct{ at, offset int64 }

// NewTimeTable returns a table holding at most size samples (at least 2).
func NewTimeTable(size int) *TimeTable {
	size = max(size, 2)
	return &TimeTable{size: size, samples: make([]point, 0, size)}
}

// Samples returns a copy of the samples, oldest first.
func (t *TimeTable) Samples() []Sample {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := make([]Sample, len(t.samples))
	for i, p := range t.samples {
		out[i] = Sample{At: time.Unix(0, p.at), Offset: p.offset}
	}
	return out
}

// Add records the end offset seen at time at.
func (t *TimeTable) Add(at time.Time, end int64) {
	ns := at.UnixNano()
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(t.samples)
	if n > 0 {
		newest := t.samples[n-1]
		if ns <= newest.at {
			return
		}
		if end < newest.offset {
			t.samples = t.samples[:0]
			n = 0
		}
	}
	if n >= 2 && t.samples[n-1].offset == end && t.samples[n-2].offset == end {
		t.samples[n-1].at = ns
		return
	}
	if n == t.size {
		copy(t.samples, t.samples[1:])
		t.samples = t.samples[:n-1]
	}
	t.samples = append(t.samples, point{at: ns, offset: end})
}

// QuietSince is when the table first saw its newest end offset: the
// partition has received no record since (observed, at the resolution of
// the polls: the record may be up to one poll interval older). ok is false
// for an empty table.
func (t *TimeTable) QuietSince() (at time.Time, ok bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	n := len(t.samples)
	if n == 0 {
		return time.Time{}, false
	}
	i := n - 1
	// A flat stretch keeps its first and latest samples (Add).
	if n >= 2 && t.samples[n-2].offset == t.samples[n-1].offset {
		i = n - 2
	}
	return time.Unix(0, t.samples[i].at), true
}

// LagSeconds estimates how long ago, seen from now, the end offset passed
// committed. See [TimeTable] for the method and its limits.
func (t *TimeTable) LagSeconds(committed int64, now time.Time) (float64, TimeLagKind) {
	passed, kind := t.Passed(committed)
	return LagAt(passed, kind, now), kind
}

// Passed estimates when the end offset passed committed, in Unix
// nanoseconds: interpolated between the samples around it, or, for a
// commit older than the table, the oldest sample's time (a lower bound of
// the lag, TimeLagAtLeast). It is 0 when the kind is TimeLagCaughtUp or
// TimeLagUnknown. What it returns depends on the table and committed
// alone, so a reader can keep it until either changes and take the lag
// at any later moment with [LagAt].
func (t *TimeTable) Passed(committed int64) (int64, TimeLagKind) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return passedAt(t.samples, committed)
}

// LagAt is the lag in seconds, seen from now, of a position the end offset
// passed at passed (Unix nanoseconds, as [TimeTable.Passed] gives it): 0
// when caught up or not known, never negative.
func LagAt(passed int64, kind TimeLagKind, now time.Time) float64 {
	if kind != TimeLagInterpolated && kind != TimeLagAtLeast {
		return 0
	}
	return max(0, time.Duration(now.UnixNano()-passed).Seconds())
}

func passedAt(s []point, c int64) (int64, TimeLagKind) {
	n := len(s)
	if n == 0 {
		return 0, TimeLagUnknown
	}
	if c >= s[n-1].offset {
		return 0, TimeLagCaughtUp
	}
	if c < s[0].offset {
		return s[0].at, TimeLagAtLeast
	}
	// The latest pair l ≤ c < r: the first sample past c, by binary search
	// (offsets are non-decreasing; s[0] ≤ c < s[n-1] here, so 1 ≤ i < n).
	lo, hi := 1, n-1
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if s[m].offset > c {
			hi = m
		} else {
			lo = m + 1
		}
	}
	l, r := s[lo-1], s[lo]
	tc := r.at
	if r.offset != l.offset {
		span := float64(r.at - l.at)
		tc = r.at - int64(time.Duration(float64(r.offset-c)*span/float64(r.offset-l.offset)))
	}
	return tc, TimeLagInterpolated
}
