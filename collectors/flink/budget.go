package flink

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// A JobManager's REST endpoint is shared with its Web UI, the autoscaler
// and the operator, so the collector keeps to a budget there: at most
// Config.MaxInFlight requests at a time, at most Config.MaxRequestsPerSecond
// (paced, with a burst of MaxInFlight), and a longer pause between polls
// while the endpoint fails or is slow (backoff). Each snapshot says what
// its poll cost (requests, response bytes) and whether the collector is
// backing off, so the overview can show it.

// Budget defaults.
const (
	DefaultMaxInFlight = 4
	// paceQuantum is the granularity of the pacer's waits.
	paceQuantum                 = 50 * time.Millisecond
	DefaultMaxRequestsPerSecond = 200
	// MaxBackoff bounds the pause between polls while backing off, to
	// at most maxBackoffPolls poll intervals (and at least one).
	MaxBackoff      = 5 * time.Minute
	maxBackoffPolls = 8
)

// clientStats counts a client's requests and the bytes of their answers.
type clientStats struct {
	requests, failed, bytes, nanos atomic.Int64
}

// PollCost is what one poll asked of the endpoint.
type PollCost struct {
	Requests int64 // HTTP requests sent
	Failed   int64 // of them, the ones without a 2xx answer read in full
	Bytes    int64 // response body bytes read
	// Waiting is the time spent waiting for answers, summed over the
	// requests (they overlap, up to MaxInFlight at a time).
	Waiting time.Duration
}

func (s *clientStats) cost() PollCost {
	return PollCost{Requests: s.requests.Load(), Failed: s.failed.Load(), Bytes: s.bytes.Load(), Waiting: time.Duration(s.nanos.Load())}
}

func (p PollCost) sub(q PollCost) PollCost {
	return PollCost{Requests: p.Requests - q.Requests, Failed: p.Failed - q.Failed, Bytes: p.Bytes - q.Bytes, Waiting: p.Waiting - q.Waiting}
}

// Backoff is the state of a collector that polls less often than
// configured because its endpoint failed or was slow.
type Backoff struct {
	// Polls is the number of bad polls in a row, 0 when not backing off.
	Polls int
	// Reason says what was wrong with the last poll: "failing" or "slow".
	Reason string
	// Pause is the pause before the next poll (PollInterval when Polls
	// is 0).
	Pause time.Duration
}

// pacer spaces requests at a rate, letting a burst through after a quiet
// spell. Each request gets a slot at the rate (GCRA) and goes at the start
// of the paceQuantum that holds its slot, so that the requests of one
// quantum go together and the collector wakes a few times a second rather
// than for every request: waking for each request cost more CPU than the
// requests themselves (measured with cmd/jmload). The rate holds over
// every quantum; MaxInFlight bounds how many go at once.
type pacer struct {
	mu    sync.Mutex
	every time.Duration
	burst int
	next  time.Time
}

func newPacer(perSecond float64, burst int) *pacer {
	if perSecond <= 0 {
		return nil
	}
	return &pacer{every: time.Duration(float64(time.Second) / perSecond), burst: max(burst, 1)}
}

// wait returns when the next request may go, or ctx's error.
func (p *pacer) wait(ctx context.Context) error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	now := time.Now()
	// Unused slots of a quiet spell allow at most burst requests at once.
	t := p.next
	if earliest := now.Add(-time.Duration(p.burst-1) * p.every); t.Before(earliest) {
		t = earliest
	}
	p.next = t.Add(p.every)
	p.mu.Unlock()
	// A request goes at the start of the quantum that holds its slot.
	d := t.Add(-time.Duration(t.UnixNano() % int64(paceQuantum))).Sub(now)
	if d <= 0 {
		return nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// nextBackoff is the backoff after a poll: b is the state before it, bad
// says what was wrong with it ("" for nothing).
func nextBackoff(b Backoff, bad string, interval time.Duration) Backoff {
	if bad == "" {
		return Backoff{Pause: interval}
	}
	n := b.Polls + 1
	limit := max(min(MaxBackoff, maxBackoffPolls*interval), interval)
	pause := interval
	for range min(n, 16) {
		if pause >= limit {
			break
		}
		pause *= 2
	}
	pause = min(pause, limit)
	return Backoff{Polls: n, Reason: bad, Pause: pause}
}

// slowAnswer is the mean answer time above which an endpoint is slow:
// Flink's REST handlers answer from memory in milliseconds; a second each
// means the JobManager is struggling.
const slowAnswer = time.Second

// pollHealth says what was wrong with a finished poll: "failing" when the
// job list failed or at least half of its requests did, "slow" when it ran
// out of RequestTimeout or its answers took slowAnswer or more on average,
// "" otherwise. A poll that is long only because it keeps to the request
// rate is not slow.
func pollHealth(s *Snapshot, timedOut bool) string {
	switch {
	case s.Err != nil, s.Cost.Requests > 0 && 2*s.Cost.Failed >= s.Cost.Requests:
		return "failing"
	case timedOut, s.Cost.Requests > 0 && s.Cost.Waiting >= time.Duration(s.Cost.Requests)*slowAnswer:
		return "slow"
	}
	return ""
}
