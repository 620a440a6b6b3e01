package web

import (
	"bufio"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A family is one metric of /metrics: its name, help, type and label
// names, in the order its series give their values.
type family struct {
	name, help, kind string
	labels           []string
	// order lists the label indexes sorted by label name: series are
	// written with their labels in that order, as Prometheus's client
	// library writes them.
	order []int
}

func newFamily(name, help string, labels ...string) *family {
	f := &family{name: name, help: help, kind: "gauge", labels: labels}
	f.order = make([]int, len(labels))
	for i := range f.order {
		f.order[i] = i
	}
	slices.SortStableFunc(f.order, func(a, b int) int { return strings.Compare(labels[a], labels[b]) })
	return f
}

func newCounter(name, help string, labels ...string) *family {
	f := newFamily(name, help, labels...)
	f.kind = "counter"
	return f
}

// An exposition writes one scrape's text as it goes: each series after its
// family's HELP and TYPE lines, which come before the family's first
// series. The caller writes a family's series together, as the format
// requires; their order within a family is the order the figures come
// in, which Prometheus does not need sorted.
type exposition struct {
	w   *bufio.Writer
	cur *family
	buf []byte
}

func newExposition(w io.Writer) *exposition {
	return &exposition{w: bufio.NewWriterSize(w, 64<<10), buf: make([]byte, 0, 512)}
}

// add writes one series of f with the label values in f's label order; a
// family given the wrong count of values is a programming error.
func (x *exposition) add(f *family, v float64, values ...string) {
	if len(values) != len(f.labels) {
		panic("metrics: " + f.name + " takes " + strconv.Itoa(len(f.labels)) + " label values, got " + strconv.Itoa(len(values)))
	}
	b := x.buf[:0]
	if x.cur != f {
		x.cur = f
		b = append(b, "# HELP "...)
		b = append(b, f.name...)
		b = append(b, ' ')
		b = appendHelp(b, f.help)
		b = append(b, "\n# TYPE "...)
		b = append(b, f.name...)
		b = append(b, ' ')
		b = append(b, f.kind...)
		b = append(b, '\n')
	}
	b = append(b, f.name...)
	if len(values) > 0 {
		b = append(b, '{')
		for k, i := range f.order {
			if k > 0 {
				b = append(b, ',')
			}
			b = append(b, f.labels[i]...)
			b = append(b, '=', '"')
			b = appendLabelValue(b, values[i])
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	b = append(b, ' ')
	b = appendValue(b, v)
	b = append(b, '\n')
	x.w.Write(b)
	x.buf = b
}

// flush writes what add buffered.
func (x *exposition) flush() error { return x.w.Flush() }

// appendLabelValue escapes a label value as the text format asks
// (backslash, double quote and line feed), with bytes that are not UTF-8
// replaced: Prometheus refuses a scrape with an invalid label value.
func appendLabelValue(b []byte, s string) []byte {
	// Most values are plain ASCII and go as they are: one pass tells.
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf || c == '\\' || c == '"' || c == '\n' {
			plain = false
			break
		}
	}
	if plain {
		return append(b, s...)
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, '\\', '\\')
		case '"':
			b = append(b, '\\', '"')
		case '\n':
			b = append(b, '\\', 'n')
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendValue writes a sample value as Prometheus's client library does.
func appendValue(b []byte, v float64) []byte {
	switch {
	case v == 0:
		return append(b, '0')
	case v == 1:
		return append(b, '1')
	case v == -1:
		return append(b, '-', '1')
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// appendHelp escapes a help text as the text format asks (backslash and
// line feed).
func appendHelp(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
			b = append(b, '\\', 'n')
		default:
			b = append(b, c)
		}
	}
	return b
}
