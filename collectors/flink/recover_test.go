package flink

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// panicTransport serves h in memory and panics on the first n requests to
// path, as a bug in answer handling would.
type panicTransport struct {
	h     http.Handler
	path  string
	left  atomic.Int32
	fired atomic.Int32
}

func (p *panicTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == p.path && p.left.Add(-1) >= 0 {
		p.fired.Add(1)
		panic("bad answer for " + r.URL.Path)
	}
	return handlerTransport{p.h}.RoundTrip(r)
}

// TestRunRecoversFromPanics: a panic while reading one vertex marks that
// vertex broken; a panic in the function receiving snapshots (the store
// update) is recovered too; Run keeps polling either way.
func TestRunRecoversFromPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeFlink(t, "2.2.1")
		pt := &panicTransport{h: f, path: f.jobPath("vertices", f.sourceID)}
		pt.left.Store(1)
		c := newTestCollector(t, Config{URL: "http://flink.test", PollInterval: 10 * time.Second},
			WithHTTPClient(&http.Client{Transport: pt}))
		var mu sync.Mutex
		var snaps []*Snapshot
		c.OnSnapshot(func(s *Snapshot) {
			mu.Lock()
			snaps = append(snaps, s)
			n := len(snaps)
			mu.Unlock()
			if n == 2 {
				panic("store update failed")
			}
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { c.Run(ctx); close(done) }()
		time.Sleep(25 * time.Second) // polls at 0, 10 s and 20 s
		synctest.Wait()
		cancel()
		<-done

		mu.Lock()
		defer mu.Unlock()
		if len(snaps) != 3 || pt.fired.Load() != 1 {
			t.Fatalf("Run published %d snapshots, %d panics; want 3 polls after 1 panic", len(snaps), pt.fired.Load())
		}
		v := findVertex(t, snaps[0].Jobs[0], f.sourceID)
		if v.Err == nil || !strings.Contains(v.Err.Error(), "panic") || !v.Stale {
			t.Errorf("first poll: source vertex err %v, stale %v; want a recovered panic, stale", v.Err, v.Stale)
		}
		if k := findVertex(t, snaps[0].Jobs[0], f.keyedID); k.Err != nil {
			t.Errorf("first poll: keyed vertex err %v, want none", k.Err)
		}
		for i, s := range snaps[1:] {
			if s.Err != nil || s.Jobs[0].Err != nil {
				t.Errorf("poll %d: err %v, job err %v", i+2, s.Err, s.Jobs[0].Err)
			}
		}
	})
}
