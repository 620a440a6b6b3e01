// Package bidi knows the Unicode characters that change the direction of
// the text around them: the bidi controls, which skewscope never passes on
// from a backend, and the right-to-left letters, which it shows isolated.
package bidi

import "strings"

// IsControl reports the bidi formatting characters (Unicode's
// Bidi_Control property): the marks LRM, RLM (U+200E, U+200F) and ALM
// (U+061C), the embeddings and overrides LRE, RLE, PDF, LRO, RLO
// (U+202A–U+202E) and the isolates LRI, RLI, FSI, PDI (U+2066–U+2069).
func IsControl(r rune) bool {
	return r == 0x061C || r == 0x200E || r == 0x200F || r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}

// IsRightToLeft reports the right-to-left letters: Hebrew, Arabic, Syriac,
// Thaana, NKo, Samaritan, Mandaic, their presentation forms, and the
// right-to-left ranges of the supplementary planes.
func IsRightToLeft(r rune) bool {
	return r >= 0x0590 && r <= 0x08FF || r >= 0xFB1D && r <= 0xFEFF ||
		r >= 0x10800 && r <= 0x10FFF || r >= 0x1E800 && r <= 0x1EFFF
}

// HasControl reports whether s holds a bidi control.
func HasControl(s string) bool {
	return strings.IndexFunc(s, IsControl) >= 0
}

// Escape returns s with every bidi control written out visibly as
// "[U+202E]", so that the text cannot reorder what surrounds it on a page
// and a reader still sees that the backend sent one. s itself is returned
// when it holds none.
func Escape(s string) string {
	if !HasControl(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		if IsControl(r) {
			b.WriteString("[U+")
			const hex = "0123456789ABCDEF"
			b.WriteByte(hex[r>>12&0xF])
			b.WriteByte(hex[r>>8&0xF])
			b.WriteByte(hex[r>>4&0xF])
			b.WriteByte(hex[r&0xF])
			b.WriteByte(']')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// EscapeError returns err with its message escaped (Escape), still
// wrapping err for errors.Is and errors.As; err itself when its message
// holds no bidi control, nil for nil.
func EscapeError(err error) error {
	if err == nil || !HasControl(err.Error()) {
		return err
	}
	return &escaped{msg: Escape(err.Error()), err: err}
}

type escaped struct {
	msg string
	err error
}

func (e *escaped) Error() string { return e.msg }
func (e *escaped) Unwrap() error { return e.err }
