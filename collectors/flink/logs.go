package flink

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// pollLog coalesces the warnings of one poll: a JobManager listing 60,000
// jobs whose details all fail would otherwise log 60,000 lines per poll.
// Records at Warn and above are kept by message (the kind of failure);
// flush logs each kind once, the first record with a count attribute.
// Records below Warn pass straight through.
type pollLog struct {
	next slog.Handler
	mu   sync.Mutex
	kind map[string]*logKind
	// order is the order the kinds were first seen in.
	order []string
}

type logKind struct {
	n     int
	first slog.Record
	h     slog.Handler // next, with the first record's attributes
}

func newPollLog(next slog.Handler) *pollLog {
	return &pollLog{next: next, kind: map[string]*logKind{}}
}

// logger returns a logger whose warnings wait for flush.
func (p *pollLog) logger() *slog.Logger { return slog.New(&pollLogHandler{p: p, h: p.next}) }

// flush logs each kind of warning seen since the last flush once.
func (p *pollLog) flush(ctx context.Context) {
	p.mu.Lock()
	kinds, order := p.kind, p.order
	p.kind, p.order = map[string]*logKind{}, nil
	p.mu.Unlock()
	for _, msg := range order {
		k := kinds[msg]
		r := k.first
		if k.n > 1 {
			r = slog.NewRecord(r.Time, r.Level, fmt.Sprintf("%s (%d times in this poll; the first shown)", msg, k.n), r.PC)
			r.AddAttrs(slog.Int("count", k.n))
			k.first.Attrs(func(a slog.Attr) bool { r.AddAttrs(a); return true })
		}
		if k.h.Enabled(ctx, r.Level) {
			_ = k.h.Handle(ctx, r)
		}
	}
}

type pollLogHandler struct {
	p *pollLog
	h slog.Handler
}

func (h *pollLogHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h *pollLogHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return h.h.Handle(ctx, r)
	}
	h.p.mu.Lock()
	defer h.p.mu.Unlock()
	k := h.p.kind[r.Message]
	if k == nil {
		k = &logKind{first: r.Clone(), h: h.h}
		h.p.kind[r.Message] = k
		h.p.order = append(h.p.order, r.Message)
	}
	k.n++
	return nil
}

func (h *pollLogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &pollLogHandler{p: h.p, h: h.h.WithAttrs(as)}
}

func (h *pollLogHandler) WithGroup(name string) slog.Handler {
	return &pollLogHandler{p: h.p, h: h.h.WithGroup(name)}
}
