package kafka

import (
	"context"
	"testing"
	"time"
)

// TestRunRecoversFromPanics: a panic in the function receiving snapshots
// (the store update) does not end Run: the next poll still runs.
func TestRunRecoversFromPanics(t *testing.T) {
	c, _, _ := newCluster(t)
	col, _ := newTestCollector(t, c, Config{PollInterval: time.Millisecond})
	polls := make(chan *Snapshot, 16)
	n := 0
	col.OnSnapshot(func(s *Snapshot) {
		n++ // the polling goroutine only
		if n == 1 {
			panic("store update failed")
		}
		select {
		case polls <- s:
		default:
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { col.Run(ctx); close(done) }()
	s := <-polls // blocks forever (test timeout) if Run ended with the panic
	cancel()
	<-done
	if s == nil {
		t.Fatal("Run published nothing after the panic")
	}
}
