package live

import (
	"math"
	"strconv"
	"testing"
)

func TestDigitsOf(t *testing.T) {
	for _, p := range []int32{0, 7, 9, 10, 99, 100, 12345, math.MaxInt32, -1, -10, math.MinInt32} {
		if got, want := digitsOf(p), len(strconv.Itoa(int(p))); got != want {
			t.Errorf("digitsOf(%d) = %d, want %d", p, got, want)
		}
	}
}
