package benchstat

import (
	"slices"
	"testing"
)

func TestMinMedian(t *testing.T) {
	for _, c := range []struct {
		xs         []float64
		lo, median float64
	}{
		{nil, 0, 0},
		{[]float64{3}, 3, 3},
		{[]float64{5, 1, 3}, 1, 3},
		{[]float64{4, 1, 3, 2}, 1, 2.5},
	} {
		in := slices.Clone(c.xs)
		lo, m := MinMedian(c.xs)
		if lo != c.lo || m != c.median {
			t.Errorf("MinMedian(%v) = %v, %v; want %v, %v", c.xs, lo, m, c.lo, c.median)
		}
		if !slices.Equal(in, c.xs) {
			t.Errorf("MinMedian sorted its input: %v", c.xs)
		}
	}
}

func TestSelfCPUGrows(t *testing.T) {
	a, err := SelfCPU()
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the kernel has charged this process more CPU: a count,
	// not a clock, decides when to look again.
	x := 0
	for b := a; b <= a; {
		for i := range 1_000_000 {
			x ^= i
		}
		if b, err = SelfCPU(); err != nil {
			t.Fatal(err)
		}
	}
	_ = x
}
