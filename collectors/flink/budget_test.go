package flink

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// meteredJobManager serves f and records each request's start and answer
// size.
type meteredJobManager struct {
	f      *fakeFlink
	mu     sync.Mutex
	starts []time.Time
	bytes  int64
	active int
	most   int
}

func (h *meteredJobManager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.starts = append(h.starts, time.Now())
	h.active++
	h.most = max(h.most, h.active)
	h.mu.Unlock()
	rec := httptest.NewRecorder()
	h.f.ServeHTTP(rec, r)
	time.Sleep(5 * time.Millisecond) // a quick JobManager
	h.mu.Lock()
	h.active--
	h.bytes += int64(rec.Body.Len())
	h.mu.Unlock()
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
}

// TestPollKeepsToTheRequestBudget: no more than MaxInFlight requests at a
// time, no more than MaxRequestsPerSecond after a burst of MaxInFlight, and
// the snapshot's Cost is what the endpoint served.
func TestPollKeepsToTheRequestBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeFlink(t, "2.3.0")
		h := &meteredJobManager{f: f}
		c := newTestCollector(t, Config{URL: "http://flink.test", MaxInFlight: 2, MaxRequestsPerSecond: 10, RequestTimeout: time.Minute},
			WithHTTPClient(&http.Client{Transport: handlerTransport{h}}))
		s := c.PollOnce(context.Background())
		if s.Err != nil || len(s.Jobs) != 1 || s.Jobs[0].Err != nil {
			t.Fatalf("poll: err %v, jobs %+v", s.Err, s.Jobs)
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		n := len(h.starts)
		if n < 8 {
			t.Fatalf("%d requests, want a whole poll's", n)
		}
		if s.Cost.Requests != int64(n) || s.Cost.Bytes != h.bytes || s.Cost.Failed != 0 {
			t.Errorf("Cost = %+v, want %d requests, %d bytes, none failed", s.Cost, n, h.bytes)
		}
		if h.most > 2 {
			t.Errorf("%d requests in flight at once, want at most MaxInFlight = 2", h.most)
		}
		// In any span between two request starts, at most the burst plus
		// the rate's share of the span and of one pacing quantum.
		for i := range h.starts {
			for j := i + 1; j < n; j++ {
				span := h.starts[j].Sub(h.starts[i])
				if allowed := 2 + int((span+paceQuantum)/(100*time.Millisecond)); j-i+1 > allowed {
					t.Fatalf("requests %d..%d started within %v: %d, want at most %d at 10/s with a burst of 2", i, j, span, j-i+1, allowed)
				}
			}
		}
		if s.MaxInFlight != 2 || s.MaxRequestsPerSecond != 10 {
			t.Errorf("snapshot budget = %d in flight, %v/s; want 2 and 10", s.MaxInFlight, s.MaxRequestsPerSecond)
		}
	})
}

// TestRunBacksOffWhileFailing: while the job list fails the pause doubles
// from PollInterval up to 8 intervals (MaxBackoff at most); the first good
// poll goes back to PollInterval. Every snapshot says so.
func TestRunBacksOffWhileFailing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeFlink(t, "2.3.0")
		var mu sync.Mutex
		var starts []time.Duration
		failing := true
		t0 := time.Now()
		f.setFault("/jobs/overview", func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			starts = append(starts, time.Since(t0))
			bad := failing
			mu.Unlock()
			if bad {
				w.WriteHeader(http.StatusServiceUnavailable)
				w.Write([]byte(`{"errors":["JobManager is busy"]}`))
				return
			}
			f.rs.ServeHTTP(w, r)
		})
		c := newTestCollector(t, Config{URL: "http://flink.test", PollInterval: 10 * time.Second},
			WithHTTPClient(&http.Client{Transport: handlerTransport{f}}))
		var backoffs []Backoff
		c.OnSnapshot(func(s *Snapshot) {
			mu.Lock()
			backoffs = append(backoffs, s.Backoff)
			mu.Unlock()
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { c.Run(ctx); close(done) }()
		// Failing polls at 0, 20, 60, 140, 220, 300 (pauses 20, 40, 80,
		// then 80 = 8 intervals), healthy from 330 on: 380, 390, 400.
		time.Sleep(330 * time.Second)
		synctest.Wait()
		mu.Lock()
		failing = false
		mu.Unlock()
		time.Sleep(75 * time.Second)
		synctest.Wait()
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		var want []time.Duration
		for _, s := range []int{0, 20, 60, 140, 220, 300, 380, 390, 400} {
			want = append(want, time.Duration(s)*time.Second)
		}
		if !slices.Equal(starts, want) {
			t.Errorf("polls started at %v, want %v", starts, want)
		}
		if len(backoffs) != len(want) {
			t.Fatalf("%d snapshots, want %d", len(backoffs), len(want))
		}
		if b := backoffs[0]; b.Polls != 1 || b.Reason != "failing" || b.Pause != 20*time.Second {
			t.Errorf("first snapshot's Backoff = %+v, want 1 failing poll, pause 20 s", b)
		}
		if b := backoffs[5]; b.Polls != 6 || b.Pause != 80*time.Second {
			t.Errorf("sixth snapshot's Backoff = %+v, want 6 polls, pause 80 s", b)
		}
		if b := backoffs[6]; b.Polls != 0 || b.Reason != "" || b.Pause != 10*time.Second {
			t.Errorf("first good snapshot's Backoff = %+v, want none, pause 10 s", b)
		}
	})
}

func TestNextBackoffLimit(t *testing.T) {
	b := Backoff{}
	for range 20 {
		b = nextBackoff(b, "slow", time.Minute)
	}
	if b.Pause != MaxBackoff || b.Polls != 20 {
		t.Errorf("20 slow polls at a 1 min interval: %+v, want pause %v", b, MaxBackoff)
	}
	if b = nextBackoff(b, "", time.Minute); b.Pause != time.Minute || b.Polls != 0 {
		t.Errorf("a good poll: %+v, want pause 1 min", b)
	}
	if b = nextBackoff(Backoff{}, "failing", 10*time.Minute); b.Pause != 10*time.Minute {
		t.Errorf("an interval above MaxBackoff: pause %v, want the interval", b.Pause)
	}
}

func TestPollHealth(t *testing.T) {
	cases := []struct {
		name     string
		s        Snapshot
		timedOut bool
		want     string
	}{
		{"healthy", Snapshot{Cost: PollCost{Requests: 10, Bytes: 100, Waiting: 50 * time.Millisecond}}, false, ""},
		{"job list failed", Snapshot{Err: errors.New("job list: HTTP 503"), Cost: PollCost{Requests: 2, Failed: 1}}, false, "failing"},
		{"half the requests failed", Snapshot{Cost: PollCost{Requests: 10, Failed: 5}}, false, "failing"},
		{"a few failed", Snapshot{Cost: PollCost{Requests: 10, Failed: 4}}, false, ""},
		{"ran out of time", Snapshot{Cost: PollCost{Requests: 10}}, true, "slow"},
		{"slow answers", Snapshot{Cost: PollCost{Requests: 10, Waiting: 10 * time.Second}}, false, "slow"},
	}
	for _, tc := range cases {
		if got := pollHealth(&tc.s, tc.timedOut); got != tc.want {
			t.Errorf("%s: pollHealth = %q, want %q", tc.name, got, tc.want)
		}
	}
}
