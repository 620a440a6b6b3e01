package sample

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/collectors/kafka"
)

// DefaultConcurrent is the number of samples a [Manager] runs at a time
// when NewManager is given 0.
const DefaultConcurrent = 2

// KeepFinished is how many finished samples a [Manager] remembers; older
// ones are forgotten, oldest first.
const KeepFinished = 16

// ErrTooMany is the error of [Manager.Start] when the manager already runs
// as many samples as it may.
var ErrTooMany = errors.New("too many samples running")

// Manager runs samples in the background, at most a fixed number at a
// time, each under an id: start one, follow its progress, cancel it, and
// read its final progress later. Its methods are safe for concurrent use.
type Manager struct {
	max  int
	opts []kgo.Opt // extra client options, for tests

	mu       sync.Mutex
	running  int
	samples  map[string]*managed
	finished []string // ids of finished samples, oldest first
	closed   bool
	wg       sync.WaitGroup
}

// managed is one sample of a Manager; its fields are guarded by the
// Manager's mu.
type managed struct {
	cancel context.CancelFunc
	last   Progress
	subs   map[chan Progress]struct{}
}

// NewManager returns a Manager running at most max samples at a time
// ([DefaultConcurrent] when max is 0 or less).
func NewManager(max int) *Manager {
	if max <= 0 {
		max = DefaultConcurrent
	}
	return &Manager{max: max, samples: map[string]*managed{}}
}

// Start checks req and starts sampling it in the background, each record
// going to sink (from one goroutine, see [Sample]), and returns the
// sample's id. An invalid request is an error at once ([collectors.FieldErrors]
// behind it); so is a full manager ([ErrTooMany]).
//
// ctx bounds the sample's life: pass the server's, not an HTTP request's
// context that ends with the handler.
func (m *Manager) Start(ctx context.Context, cfg kafka.Config, req Request, sink func(Record)) (string, error) {
	if err := req.WithDefaults().Validate(); err != nil {
		return "", fmt.Errorf("sample request: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", errors.New("sample manager closed")
	}
	if m.running >= m.max {
		return "", fmt.Errorf("%w: %d of %d; wait for one to finish or cancel one", ErrTooMany, m.running, m.max)
	}
	id := rand.Text()
	ctx, cancel := context.WithCancel(ctx)
	s := &managed{cancel: cancel, subs: map[chan Progress]struct{}{}}
	m.samples[id] = s
	m.running++
	m.wg.Go(func() {
		defer cancel()
		final := m.run(ctx, cfg, req, sink, func(p Progress) { m.update(s, p) })
		m.finish(id, s, final)
	})
	return id, nil
}

// run is Sample with a panic in sink turned into a failed sample.
func (m *Manager) run(ctx context.Context, cfg kafka.Config, req Request, sink func(Record), progress func(Progress)) (final Progress) {
	var last Progress
	defer func() {
		if r := recover(); r != nil {
			final = last
			final.Done, final.StoppedBy = true, StoppedError
			final.Err = fmt.Sprintf("internal error: panic: %v\n%s", r, debug.Stack())
		}
	}()
	final, _ = Sample(ctx, cfg, req, sink, func(p Progress) {
		last = p
		if !p.Done {
			progress(p)
		}
	}, m.opts...)
	return final
}

// update records p as s's progress and sends it to s's subscribers.
func (m *Manager) update(s *managed, p Progress) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s.last = p
	for ch := range s.subs {
		sendLatest(ch, p)
	}
}

// finish records the final progress, closes the subscriptions and forgets
// the oldest finished samples beyond KeepFinished.
func (m *Manager) finish(id string, s *managed, final Progress) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s.last = final
	for ch := range s.subs {
		sendLatest(ch, final)
		close(ch)
	}
	s.subs = nil
	m.running--
	m.finished = append(m.finished, id)
	for len(m.finished) > KeepFinished {
		delete(m.samples, m.finished[0])
		m.finished = m.finished[1:]
	}
}

// sendLatest puts p in ch, a channel of capacity 1 that only the Manager
// sends on, replacing a value not yet received.
func sendLatest(ch chan Progress, p Progress) {
	select {
	case <-ch:
	default:
	}
	ch <- p
}

// Progress returns the sample's latest progress; false when the id is
// unknown or forgotten.
func (m *Manager) Progress(id string) (Progress, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.samples[id]
	if !ok {
		return Progress{}, false
	}
	return s.last, true
}

// Cancel stops a running sample; false when it is not running. Its final
// progress says "cancelled".
func (m *Manager) Cancel(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.samples[id]
	if !ok || s.last.Done || s.subs == nil {
		return false
	}
	s.cancel()
	return true
}

// Subscribe returns a channel of the sample's progress and a function to
// stop it. The channel holds the latest progress only: a slow reader skips
// intermediate ones, never the final one, after which the channel is
// closed. The current progress is there at once. For a finished sample
// the channel holds the final progress and is closed; for an unknown id it
// is closed and empty.
func (m *Manager) Subscribe(id string) (<-chan Progress, func()) {
	ch := make(chan Progress, 1)
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.samples[id]
	if !ok {
		close(ch)
		return ch, func() {}
	}
	ch <- s.last
	if s.subs == nil { // finished
		close(ch)
		return ch, func() {}
	}
	s.subs[ch] = struct{}{}
	return ch, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if _, ok := s.subs[ch]; ok {
			delete(s.subs, ch)
			close(ch)
		}
	}
}

// Close cancels the running samples, waits for them to end and refuses new
// ones.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	for _, s := range m.samples {
		if s.subs != nil {
			s.cancel()
		}
	}
	m.mu.Unlock()
	m.wg.Wait()
}
