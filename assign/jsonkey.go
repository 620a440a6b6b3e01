package assign

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
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
// is not valid UTF-8 becoming U+FFFD.
func UnquoteJSONString(lit string) (JavaString, error) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return nil, fmt.Errorf("%s is not a JSON string", quote.Clip(lit))
	}
	s := lit[1 : len(lit)-1]
	out := make(JavaString, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c < 0x20:
			return nil, fmt.Errorf("JSON string %s: unescaped %q", quote.Clip(lit), c)
		case c == '\\':
			if i+1 >= len(s) {
				return nil, fmt.Errorf("JSON string %s: ends inside an escape", quote.Clip(lit))
			}
			e := s[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				out = append(out, uint16(e))
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				if i+4 > len(s) {
					return nil, fmt.Errorf("JSON string %s: \\u needs four hex digits", quote.Clip(lit))
				}
				u, err := strconv.ParseUint(s[i:i+4], 16, 16)
				if err != nil || strings.ContainsAny(s[i:i+4], "+-_") {
					return nil, fmt.Errorf("JSON string %s: \\u%s is not four hex digits", quote.Clip(lit), s[i:i+4])
				}
				out = append(out, uint16(u))
				i += 4
			default:
				return nil, fmt.Errorf("JSON string %s: unknown escape \\%c", quote.Clip(lit), e)
			}
		case c < utf8.RuneSelf:
			out = append(out, uint16(c))
			i++
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			out = utf16.AppendRune(out, r) // RuneError for an invalid byte
			i += n
		}
	}
	return out, nil
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
