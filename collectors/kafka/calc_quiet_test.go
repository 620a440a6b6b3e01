package kafka

import (
	"testing"
	"time"
)

func TestTimeTableQuietSince(t *testing.T) {
	tt := NewTimeTable(4)
	if _, ok := tt.QuietSince(); ok {
		t.Fatal("an empty table knows when its partition went quiet")
	}
	t0 := time.Unix(1_700_000_000, 0)
	step := func(i int) time.Time { return t0.Add(time.Duration(i) * 5 * time.Second) }
	tt.Add(step(0), 10)
	tt.Add(step(1), 20)
	if at, _ := tt.QuietSince(); !at.Equal(step(1)) {
		t.Errorf("moving: quiet since %v, want the newest sample %v", at, step(1))
	}
	for i := 2; i < 20; i++ {
		tt.Add(step(i), 20) // flat: no record since step 1
	}
	if at, _ := tt.QuietSince(); !at.Equal(step(1)) {
		t.Errorf("flat for 18 polls: quiet since %v, want %v", at, step(1))
	}
	tt.Add(step(20), 21)
	if at, _ := tt.QuietSince(); !at.Equal(step(20)) {
		t.Errorf("after a record: quiet since %v, want %v", at, step(20))
	}
}
