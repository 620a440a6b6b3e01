// Package polllog coalesces the warnings of one collector poll, so that a
// backend failing the same way for thousands of items (jobs, topics,
// partitions, groups) logs one line per kind of failure per poll, not one
// per item.
//
// Records at Warn and above sent through [Log.Logger] are kept by message
// (the kind of failure); [Log.Flush] logs each kind once: a kind seen once
// as it was, a repeated one as its first record with the count and a few
// examples. Records below Warn pass straight through.
package polllog

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
)

// MaxExamples is how many records of a repeated kind its line names.
const MaxExamples = 3

// Log collects one poll's warnings. Create it with New at the start of a
// poll and Flush it at the end.
type Log struct {
	next slog.Handler
	mu   sync.Mutex
	kind map[string]*kind
	// order is the order the kinds were first seen in.
	order []string
}

type kind struct {
	n        int
	first    slog.Record
	h        slog.Handler // next, with the first record's logger attributes
	examples []string
}

// New returns a Log that hands what it logs to next.
func New(next slog.Handler) *Log {
	return &Log{next: next, kind: map[string]*kind{}}
}

// Logger returns a logger whose warnings wait for Flush.
func (l *Log) Logger() *slog.Logger { return slog.New(&handler{l: l, h: l.next}) }

// Flush logs each kind of warning seen since the last Flush once. A
// repeated kind's line has the message, "(N times in this poll; the first
// shown)", the first record's attributes, count=N and examples: the
// attributes of the first MaxExamples records, each as "key=value …".
func (l *Log) Flush(ctx context.Context) {
	l.mu.Lock()
	kinds, order := l.kind, l.order
	l.kind, l.order = map[string]*kind{}, nil
	l.mu.Unlock()
	for _, msg := range order {
		k := kinds[msg]
		r := k.first
		if k.n > 1 {
			r = slog.NewRecord(r.Time, r.Level, fmt.Sprintf("%s (%d times in this poll; the first shown)", msg, k.n), r.PC)
			r.AddAttrs(slog.Int("count", k.n))
			k.first.Attrs(func(a slog.Attr) bool { r.AddAttrs(a); return true })
			r.AddAttrs(slog.Any("examples", k.examples))
		}
		if k.h.Enabled(ctx, r.Level) {
			_ = k.h.Handle(ctx, r)
		}
	}
}

// handler holds a logger's warnings for its Log. with are the attributes
// added to the logger since Log.Logger, group-qualified, for examples.
type handler struct {
	l      *Log
	h      slog.Handler
	with   []string
	groups string // "a.b." when inside groups a and b
}

func (h *handler) Enabled(ctx context.Context, lv slog.Level) bool { return h.h.Enabled(ctx, lv) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return h.h.Handle(ctx, r)
	}
	h.l.mu.Lock()
	defer h.l.mu.Unlock()
	k := h.l.kind[r.Message]
	if k == nil {
		k = &kind{first: r.Clone(), h: h.h}
		h.l.kind[r.Message] = k
		h.l.order = append(h.l.order, r.Message)
	}
	k.n++
	if len(k.examples) < MaxExamples {
		kv := append([]string(nil), h.with...)
		r.Attrs(func(a slog.Attr) bool {
			kv = appendAttr(kv, h.groups, a)
			return true
		})
		k.examples = append(k.examples, strings.Join(kv, " "))
	}
	return nil
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	with := append([]string(nil), h.with...)
	for _, a := range as {
		with = appendAttr(with, h.groups, a)
	}
	return &handler{l: h.l, h: h.h.WithAttrs(as), with: with, groups: h.groups}
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &handler{l: h.l, h: h.h.WithGroup(name), with: h.with, groups: h.groups + name + "."}
}

// appendAttr appends a as "key=value" (a group's members each on their
// own, with the group's name before the key).
func appendAttr(kv []string, prefix string, a slog.Attr) []string {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		if a.Key != "" {
			prefix += a.Key + "."
		}
		for _, m := range v.Group() {
			kv = appendAttr(kv, prefix, m)
		}
		return kv
	}
	if a.Key == "" {
		return kv
	}
	return append(kv, prefix+a.Key+"="+v.String())
}
