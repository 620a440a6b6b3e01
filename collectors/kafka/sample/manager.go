package sample

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/skewscope/skewscope/collectors/kafka"
)

// DefaultConcurrent is the number of samples a [Manager] runs at a time
// when ManagerOptions.Concurrent is 0.
const DefaultConcurrent = 2

// Kept is how many samples a [Manager] remembers, running ones included.
// Starting one more forgets the oldest finished one; a running sample is
// never forgotten.
const Kept = 16

// ErrTooMany is the error of [Manager.Start] when the manager already runs
// as many samples as it may.
var ErrTooMany = errors.New("too many samples running")

// ErrClosed is the error of [Manager.Start] once the manager is closed.
var ErrClosed = errors.New("sample manager closed")

// ManagerOptions configure a [Manager].
type ManagerOptions[T any] struct {
	// Concurrent bounds the samples running at once; 0 or less means
	// DefaultConcurrent.
	Concurrent int
	// Now is the clock of [Info.Started] and [Info.Finished]; nil means
	// time.Now.
	Now func() time.Time
	// OnProgress, when set, is told of every progress a sample makes, its
	// last one (Done set) included, after the Manager has recorded it: a
	// page can be pushed each step without a goroutine of its own. It is
	// called from the sample's goroutine, one call at a time per sample,
	// never with the Manager's lock held; a slow OnProgress slows its
	// sample. [Manager.Close] returns after the last call.
	OnProgress func(Info[T])
}

// Info is one sample as its [Manager] keeps it.
type Info[T any] struct {
	// ID names the sample: 16 lowercase hex digits, drawn at random.
	ID      string
	Request Request
	// Value is what the caller gave [Manager.Start] to keep with the
	// sample (its own view of it: what the records add up to).
	Value    T
	Started  time.Time
	Finished time.Time // Finished is zero while the sample runs.
	// Progress is the latest progress; Done once the sample ended, and
	// then final: every record was handed to the sink before it.
	Progress Progress
}

// Manager runs samples in the background, at most a fixed number at a
// time, each under an id: start one, follow its progress, cancel it, and
// read its final progress later. It is the one record of the samples: it
// keeps the last [Kept] of them, each with a value of type T that the
// caller keeps with it. Its methods are safe for concurrent use.
type Manager[T any] struct {
	max        int
	now        func() time.Time
	onProgress func(Info[T])
	opts       []kgo.Opt // extra client options, for tests

	mu      sync.Mutex
	running int
	samples map[string]*managed[T]
	order   []string // ids of the kept samples, oldest started first
	closed  bool
	wg      sync.WaitGroup
}

// managed is one sample of a Manager; its fields are guarded by the
// Manager's mu.
type managed[T any] struct {
	info   Info[T]
	cancel context.CancelFunc
	subs   map[chan Progress]struct{} // nil once the sample finished
}

// NewManager returns a Manager with the options o.
func NewManager[T any](o ManagerOptions[T]) *Manager[T] {
	if o.Concurrent <= 0 {
		o.Concurrent = DefaultConcurrent
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Manager[T]{max: o.Concurrent, now: o.Now, onProgress: o.OnProgress, samples: map[string]*managed[T]{}}
}

// Concurrent is how many samples the manager runs at once at most.
func (m *Manager[T]) Concurrent() int { return m.max }

// Start checks req and starts sampling it in the background, each record
// going to sink (from one goroutine, see [Sample]), and returns the
// sample's id; v is kept with the sample ([Info.Value]). An invalid
// request is an error at once ([collectors.FieldErrors] behind it); so is
// a full manager ([ErrTooMany]) and a closed one ([ErrClosed]).
//
// ctx bounds the sample's life: pass the server's, not an HTTP request's
// context that ends with the handler.
func (m *Manager[T]) Start(ctx context.Context, cfg kafka.Config, req Request, v T, sink func(Record)) (string, error) {
	if err := req.WithDefaults().Validate(); err != nil {
		return "", fmt.Errorf("sample request: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", ErrClosed
	}
	if m.running >= m.max {
		return "", fmt.Errorf("%w: %d of %d; wait for one to finish or cancel one", ErrTooMany, m.running, m.max)
	}
	id := m.newID()
	ctx, cancel := context.WithCancel(ctx)
	s := &managed[T]{info: Info[T]{ID: id, Request: req, Value: v, Started: m.now()}, cancel: cancel, subs: map[chan Progress]struct{}{}}
	m.samples[id] = s
	m.order = append(m.order, id)
	m.running++
	m.forget()
	m.wg.Go(func() {
		defer cancel()
		final := m.run(ctx, cfg, req, sink, func(p Progress) { m.update(s, p) })
		m.finish(s, final)
	})
	return id, nil
}

// newID draws an id no kept sample has. Called with mu held.
func (m *Manager[T]) newID() string {
	b := make([]byte, 8)
	for {
		rand.Read(b)
		if id := hex.EncodeToString(b); m.samples[id] == nil {
			return id
		}
	}
}

// forget drops the oldest finished samples beyond Kept. Called with mu
// held.
func (m *Manager[T]) forget() {
	for i := 0; len(m.order) > Kept && i < len(m.order); {
		id := m.order[i]
		if m.samples[id].subs != nil { // running
			i++
			continue
		}
		delete(m.samples, id)
		m.order = append(m.order[:i], m.order[i+1:]...)
	}
}

// run is Sample with a panic in sink turned into a failed sample.
func (m *Manager[T]) run(ctx context.Context, cfg kafka.Config, req Request, sink func(Record), progress func(Progress)) (final Progress) {
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

// update records p as s's progress, sends it to s's subscribers and then
// tells OnProgress.
func (m *Manager[T]) update(s *managed[T], p Progress) {
	m.mu.Lock()
	s.info.Progress = p
	for ch := range s.subs {
		sendLatest(ch, p)
	}
	info := s.info
	m.mu.Unlock()
	if m.onProgress != nil {
		m.onProgress(info)
	}
}

// finish records the final progress, closes the subscriptions and then
// tells OnProgress.
func (m *Manager[T]) finish(s *managed[T], final Progress) {
	m.mu.Lock()
	s.info.Progress = final
	s.info.Finished = m.now()
	for ch := range s.subs {
		sendLatest(ch, final)
		close(ch)
	}
	s.subs = nil
	m.running--
	info := s.info
	m.mu.Unlock()
	if m.onProgress != nil {
		m.onProgress(info)
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

// Get returns the sample id names; false when the id is unknown or
// forgotten.
func (m *Manager[T]) Get(id string) (Info[T], bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.samples[id]
	if !ok {
		return Info[T]{}, false
	}
	return s.info, true
}

// List returns the kept samples, newest first.
func (m *Manager[T]) List() []Info[T] {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Info[T], 0, len(m.order))
	for i := len(m.order) - 1; i >= 0; i-- {
		out = append(out, m.samples[m.order[i]].info)
	}
	return out
}

// Running is how many samples run now.
func (m *Manager[T]) Running() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.running
}

// Progress returns the sample's latest progress; false when the id is
// unknown or forgotten.
func (m *Manager[T]) Progress(id string) (Progress, bool) {
	i, ok := m.Get(id)
	return i.Progress, ok
}

// Cancel stops a running sample; false when it is not running. Its final
// progress says "cancelled".
func (m *Manager[T]) Cancel(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.samples[id]
	if !ok || s.subs == nil {
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
func (m *Manager[T]) Subscribe(id string) (<-chan Progress, func()) {
	ch := make(chan Progress, 1)
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.samples[id]
	if !ok {
		close(ch)
		return ch, func() {}
	}
	ch <- s.info.Progress
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

// Close cancels the running samples, waits for them to end (and for
// their last OnProgress) and refuses new ones. The finished samples stay
// readable.
func (m *Manager[T]) Close() {
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
