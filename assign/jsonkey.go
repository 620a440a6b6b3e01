package assign

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/skewscope/skewscope/internal/quote"
)

// JavaString is a string as a JVM holds it: UTF-16 code units, which may
// include lone surrogates. A key that reached a Flink job as JSON (parsed by
// Jackson) keeps an escaped lone surrogate such as "\ud800" as one char,
// where Go's encoding/json would replace it with U+FFFD.
type JavaString []uint16

// String returns s as Go text, a lone surrogate becoming U+FFFD (for
// messages and for the numeric kinds, whose text is ASCII).
func (s JavaString) String() string { return string(utf16.Decode(s)) }

// HasLoneSurrogate reports whether s holds a surrogate that is not half of
// a pair, which Go text cannot carry.
func (s JavaString) HasLoneSurrogate() bool {
	for i := 0; i < len(s); i++ {
		switch u := s[i]; {
		case u >= 0xD800 && u <= 0xDBFF && i+1 < len(s) && s[i+1] >= 0xDC00 && s[i+1] <= 0xDFFF:
			i++
		case u >= 0xD800 && u <= 0xDFFF:
			return true
		}
	}
	return false
}

// StringHashCodeUTF16 is Java's String.hashCode over UTF-16 code units.
//
// Mirrors java.lang.String.hashCode (JDK 17, StringUTF16.hashCode).
func StringHashCodeUTF16(s JavaString) int32 {
	var h int32
	for _, u := range s {
		h = 31*h + int32(u)
	}
	return h
}

// UnquoteJSONString decodes one JSON string literal, quotes included, into
// the UTF-16 code units Jackson gives a Java String: each \uXXXX escape is
// the code unit written, paired or not; unescaped text is UTF-8, a byte that
// is not valid UTF-8 becoming U+FFFD. An unescaped quote or control
// character is an error.
func UnquoteJSONString(lit string) (JavaString, error) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return nil, fmt.Errorf("%s is not a JSON string", quote.Clip(lit))
	}
	s := lit[1 : len(lit)-1]
	// The escapes before the first unescaped quote or control character
	// are read first, so that the first problem in s is the one named.
	stop := unescapedStop(s)
	out, err := AppendJSONString(make(JavaString, 0, len(s)), s[:stop], appendUTF8)
	if err != nil {
		return nil, fmt.Errorf("JSON string %s: %w", quote.Clip(lit), err)
	}
	if stop < len(s) {
		return nil, fmt.Errorf("JSON string %s: unescaped %q", quote.Clip(lit), s[stop])
	}
	return out, nil
}

// unescapedStop is the index of the first quote or control character in s
// (a JSON string's text between its quotes) that is not part of an
// escape, or len(s).
func unescapedStop(s string) int {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			if i+1 < len(s) && s[i+1] == 'u' {
				i += 5 // \u and its four digits
			} else {
				i++
			}
		case c == '"' || c < 0x20:
			return i
		}
	}
	return len(s)
}

// appendUTF8 appends the UTF-16 code units of the UTF-8 text s, each byte
// that is not valid UTF-8 becoming U+FFFD.
func appendUTF8(dst JavaString, s string) JavaString {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			dst = append(dst, uint16(c))
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		dst = utf16.AppendRune(dst, r) // RuneError for an invalid byte
		i += n
	}
	return dst
}

// AppendJSONString appends to dst the UTF-16 code units of raw, the text
// between a JSON string's quotes, and returns the extended slice; given a
// buffer's [:0] it allocates only when the buffer grows. Each escape is
// the char it stands for, a \uXXXX escape the code unit written, paired
// or not (a lone surrogate stays one char, as in Jackson); each run of
// unescaped bytes between escapes is decoded by text, which says how UTF-8
// is read (Go's reading, Jackson's). Unescaped bytes are not checked
// otherwise: a quote or a control character is text (Jackson with
// ALLOW_UNESCAPED_CONTROL_CHARS, as Flink sets it). A bad escape is an
// error naming it. raw is bytes or a string, so that neither is copied.
//
// Mirrors Jackson's UTF8StreamJsonParser._decodeEscaped.
func AppendJSONString[T string | []byte](dst JavaString, raw T, text func(JavaString, T) JavaString) (JavaString, error) {
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			j := i + 1
			for j < len(raw) && raw[j] != '\\' {
				j++
			}
			dst = text(dst, raw[i:j])
			i = j
			continue
		}
		if i+1 >= len(raw) {
			return dst, errors.New("ends inside an escape")
		}
		e := raw[i+1]
		i += 2
		switch e {
		case '"', '\\', '/':
			dst = append(dst, uint16(e))
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			if i+4 > len(raw) {
				return dst, errors.New(`\u needs four hex digits`)
			}
			u, ok := hex4(raw[i : i+4])
			if !ok {
				return dst, fmt.Errorf(`\u%s is not four hex digits`, raw[i:i+4])
			}
			dst = append(dst, u)
			i += 4
		default:
			return dst, fmt.Errorf(`unknown escape \%c`, e)
		}
	}
	return dst, nil
}

// hex4 reads four hex digits, either case.
func hex4[T string | []byte](b T) (uint16, bool) {
	var u uint16
	for i := range 4 {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		u = u<<4 | uint16(c)
	}
	return u, true
}

// HashKeyJava is HashKey for a key given as Java text (a JSON string
// decoded by UnquoteJSONString): a string hashes its code units, a char is
// exactly one code unit (a lone surrogate included), and the other scalar
// kinds read the text as HashKey does. A tuple is given as a JSON array to
// HashKey instead.
func HashKeyJava(t KeyType, s JavaString) (int32, error) {
	switch t.Kind {
	case KindTuple:
		return 0, fmt.Errorf("a %s key is a JSON array", t)
	case KindString:
		return StringHashCodeUTF16(s), nil
	case KindChar:
		if len(s) != 1 {
			return 0, fmt.Errorf("char key %s: want exactly one UTF-16 code unit (one character of the Basic Multilingual Plane)", quote.Clip(s.String()))
		}
		return int32(s[0]), nil
	}
	return hashScalar(t.Kind, s.String())
}

// decodeTupleJSON reads a tuple key's JSON array: strings as JavaString (so
// an escaped lone surrogate keeps its code unit), numbers as json.Number,
// booleans and null as themselves.
func decodeTupleJSON(text string) ([]any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	var raws []json.RawMessage
	if err := dec.Decode(&raws); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errTrailing
	}
	if raws == nil {
		return nil, errors.New("not an array")
	}
	fields := make([]any, len(raws))
	for i, raw := range raws {
		raw = bytes.TrimSpace(raw)
		if len(raw) > 0 && raw[0] == '"' {
			s, err := UnquoteJSONString(string(raw))
			if err != nil {
				return nil, err
			}
			fields[i] = s
			continue
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(&fields[i]); err != nil {
			return nil, err
		}
	}
	return fields, nil
}

var errTrailing = errors.New("trailing data after the JSON array")
