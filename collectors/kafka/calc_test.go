package kafka

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

func TestRate(t *testing.T) {
	for _, tt := range []struct {
		name          string
		prevEnd, end  int64
		prevAt, nowAt time.Time
		want          float64
		wantOK        bool
	}{
		{"steady", 100, 150, at(0), at(5), 10, true},
		{"idle", 100, 100, at(0), at(5), 0, true},
		{"no previous sample", 0, 150, time.Time{}, at(5), 0, false},
		{"time not advancing", 100, 150, at(5), at(5), 0, false},
		{"end went backwards (re-created)", 100, 3, at(0), at(5), 0, false},
	} {
		got, ok := Rate(tt.prevEnd, tt.prevAt, tt.end, tt.nowAt)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: Rate(%d, %v, %d, %v) = %v, %v, want %v, %v", tt.name, tt.prevEnd, tt.prevAt, tt.end, tt.nowAt, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestLag(t *testing.T) {
	for _, tt := range []struct{ end, committed, want int64 }{
		{100, 40, 60},
		{100, 100, 0},
		{100, 120, 0}, // commit read after the end offset: clamped
		{0, 0, 0},
	} {
		if got := Lag(tt.end, tt.committed); got != tt.want {
			t.Errorf("Lag(%d, %d) = %d, want %d", tt.end, tt.committed, got, tt.want)
		}
	}
}

func TestTimeTableAdd(t *testing.T) {
	for _, tt := range []struct {
		name string
		size int
		add  []Sample
		want []Sample
	}{
		{"append", 5, []Sample{{at(0), 10}, {at(5), 20}}, []Sample{{at(0), 10}, {at(5), 20}}},
		{"out of order dropped", 5, []Sample{{at(5), 10}, {at(5), 20}, {at(1), 30}}, []Sample{{at(5), 10}}},
		{"flat line keeps first and latest", 5,
			[]Sample{{at(0), 10}, {at(5), 20}, {at(10), 20}, {at(15), 20}, {at(20), 20}},
			[]Sample{{at(0), 10}, {at(5), 20}, {at(20), 20}}},
		{"evicts oldest", 3,
			[]Sample{{at(0), 10}, {at(5), 20}, {at(10), 30}, {at(15), 40}},
			[]Sample{{at(5), 20}, {at(10), 30}, {at(15), 40}}},
		{"offset going back resets", 5,
			[]Sample{{at(0), 10}, {at(5), 20}, {at(10), 3}},
			[]Sample{{at(10), 3}}},
	} {
		tab := NewTimeTable(tt.size)
		for _, s := range tt.add {
			tab.Add(s.At, s.Offset)
		}
		got := tab.Samples()
		if len(got) != len(tt.want) {
			t.Errorf("%s: samples = %v, want %v", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if !got[i].At.Equal(tt.want[i].At) || got[i].Offset != tt.want[i].Offset {
				t.Errorf("%s: samples = %v, want %v", tt.name, got, tt.want)
				break
			}
		}
	}
}

func TestTimeTableLagSeconds(t *testing.T) {
	// 10 records/s from offset 0 at t=0 to 100 at t=10, then idle until t=20,
	// then 100 → 200 between t=20 and t=30.
	samples := []Sample{{at(0), 0}, {at(10), 100}, {at(20), 100}, {at(30), 200}}
	now := at(30)
	for _, tt := range []struct {
		name      string
		samples   []Sample
		committed int64
		want      float64
		wantKind  TimeLagKind
	}{
		{"empty table", nil, 5, 0, TimeLagUnknown},
		{"caught up", samples, 200, 0, TimeLagCaughtUp},
		{"commit ahead of end", samples, 250, 0, TimeLagCaughtUp},
		{"newest segment", samples, 150, 5, TimeLagInterpolated},
		{"on flat segment: latest time it was current", samples, 100, 10, TimeLagInterpolated},
		{"oldest segment", samples, 50, 25, TimeLagInterpolated},
		{"exactly oldest", samples, 0, 30, TimeLagInterpolated},
		{"older than table: lower bound", samples[1:], 50, 20, TimeLagAtLeast},
		{"one sample, behind", []Sample{{at(10), 100}}, 50, 20, TimeLagAtLeast},
		{"only a flat line, behind", []Sample{{at(10), 100}, {at(20), 100}}, 50, 20, TimeLagAtLeast},
	} {
		tab := NewTimeTable(len(tt.samples) + 1)
		for _, p := range tt.samples {
			tab.samples = append(tab.samples, point{p.At.UnixNano(), p.Offset})
		}
		got, kind := tab.LagSeconds(tt.committed, now)
		if got != tt.want || kind != tt.wantKind {
			t.Errorf("%s: LagSeconds(%v, %d) = %v, %v, want %v, %v", tt.name, tt.samples, tt.committed, got, kind, tt.want, tt.wantKind)
		}
	}
}

// TestTimeLagSearchPicksLatestSegment checks the binary search against the
// definition it implements — the latest pair of samples l ≤ c ≤ r, found by
// walking back from the newest — over tables with runs of equal offsets
// (idle stretches), at every position between their ends.
func TestTimeLagSearchPicksLatestSegment(t *testing.T) {
	walk := func(s []point, c, now int64) (float64, TimeLagKind) {
		for i := len(s) - 1; i > 0; i-- {
			l, r := s[i-1], s[i]
			if l.offset > c || c > r.offset {
				continue
			}
			tc := r.at
			if r.offset != l.offset {
				tc = r.at - int64(time.Duration(float64(r.offset-c)*float64(r.at-l.at)/float64(r.offset-l.offset)))
			}
			return max(0, time.Duration(now-tc).Seconds()), TimeLagInterpolated
		}
		return 0, TimeLagUnknown
	}
	steps := []int64{0, 7, 0, 0, 3, 1, 0, 12, 0, 5, 0, 0, 0, 2}
	for n := 2; n <= len(steps); n++ {
		var s []point
		off := int64(100)
		for i := range n {
			off += steps[i]
			s = append(s, point{at: at(float64(2 * i)).UnixNano(), offset: off})
		}
		now := at(float64(2*n + 1)).UnixNano()
		for c := s[0].offset; c < s[n-1].offset; c++ {
			want, wantKind := walk(s, c, now)
			passed, kind := passedAt(s, c)
			if got := LagAt(passed, kind, time.Unix(0, now)); got != want || kind != wantKind {
				t.Fatalf("%d samples %v, position %d: the lag = %v %v, the walk back gives %v %v", n, s, c, got, kind, want, wantKind)
			}
		}
	}
}
