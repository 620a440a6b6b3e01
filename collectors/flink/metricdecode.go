package flink

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A decoder made for Flink's metric values answers, the body of
// /jobs/:id/vertices/:vid/metrics?get=…, …/subtasks/:i/metrics?get=… and
// /jobs/:id/metrics?get=… (MetricCollectionResponseBody, a bare array on
// the wire): [{"id":"0.busyTimeMsPerSecond","value":"250.0"}, …].
//
// A poll decodes a few thousand of them, so the decoder reads the body in
// one pass without reflection: the ids and values are substrings of one
// copy of the body (one allocation for all of them) unless they hold
// escapes. It accepts exactly what encoding/json accepts when it decodes
// the body into []struct{ID *string `json:"id"`; Value json.RawMessage
// `json:"value"`} and converts each element as Metric.UnmarshalJSON did:
// any JSON syntax error, an element that is not an object or has no id, an
// id that is not a string, a value that is not a string, number or null
// is an error naming the byte offset and the metric; field names match
// case-insensitively, the last of a repeated field wins, other fields are
// skipped (validated), invalid UTF-8 in strings becomes U+FFFD. The fuzz
// test FuzzDecodeMetrics and the recorded answers in
// ../testdata/flink hold it to encoding/json.

// maxNesting is encoding/json's limit on nested arrays and objects
// (scanner.go maxNestingDepth); deeper input is an error there too.
const maxNesting = 10000

// metricScanner reads one body; text is the body as a string, of which
// plain ids and values are substrings.
type metricScanner struct {
	b    []byte
	text string
	i    int
}

// decodeMetrics decodes a metric values answer.
func decodeMetrics(body []byte) ([]Metric, error) {
	s := metricScanner{b: body}
	s.space()
	if s.literal("null") {
		// encoding/json leaves a slice nil for null.
		if err := s.end(); err != nil {
			return nil, err
		}
		return nil, nil
	}
	if !s.eat('[') {
		return nil, s.errorf("want an array of metrics, got %s", s.near())
	}
	s.text = string(body)
	// One metric per object, unless values hold objects (then fewer).
	out := make([]Metric, 0, bytes.Count(body, []byte{'{'}))
	s.space()
	if !s.eat(']') {
		for n := 0; ; n++ {
			m, err := s.metric()
			if err != nil {
				return nil, fmt.Errorf("metric %d: %w", n, err)
			}
			out = append(out, m)
			s.space()
			if s.eat(',') {
				s.space()
				continue
			}
			if s.eat(']') {
				break
			}
			return nil, s.errorf("after metric %d: want ',' or ']', got %s", n, s.near())
		}
	}
	if err := s.end(); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeMetric decodes one {id, value} object (Metric.UnmarshalJSON).
func decodeMetric(b []byte) (Metric, error) {
	s := metricScanner{b: b, text: string(b)}
	s.space()
	m, err := s.metric()
	if err != nil {
		return Metric{}, err
	}
	return m, s.end()
}

func (s *metricScanner) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", s.i, fmt.Sprintf(format, args...))
}

// near describes the input at the current offset for an error.
func (s *metricScanner) near() string {
	if s.i >= len(s.b) {
		return "the end of the body"
	}
	return strconv.Quote(truncate(s.b[s.i:], 24))
}

func (s *metricScanner) end() error {
	s.space()
	if s.i != len(s.b) {
		return s.errorf("data after the JSON value: %s", s.near())
	}
	return nil
}

// space skips JSON white space.
func (s *metricScanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *metricScanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *metricScanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *metricScanner) literal(lit string) bool {
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// metric reads one element of the array.
func (s *metricScanner) metric() (Metric, error) {
	start := s.i
	if s.literal("null") {
		return Metric{}, errors.New("metric without id: null")
	}
	if !s.eat('{') {
		return Metric{}, s.errorf("want an object, got %s", s.near())
	}
	var (
		id    string
		hasID bool
		// va:vb is the value's JSON text, va < 0 when absent; vplain
		// when it is a string token whose content is its value.
		va, vb = -1, -1
		vplain bool
	)
	s.space()
	if !s.eat('}') {
		for {
			if s.peek() != '"' {
				return Metric{}, s.errorf("want a field name, got %s", s.near())
			}
			a, b, plain, err := s.str()
			if err != nil {
				return Metric{}, err
			}
			s.space()
			if !s.eat(':') {
				return Metric{}, s.errorf("want ':' after a field name, got %s", s.near())
			}
			s.space()
			switch fieldOf(s.b[a:b], plain) {
			case fieldID:
				switch s.peek() {
				case '"':
					a, b, plain, err := s.str()
					if err != nil {
						return Metric{}, err
					}
					id, hasID = s.content(a, b, plain), true
				case 'n':
					if !s.literal("null") {
						return Metric{}, s.errorf("invalid literal %s", s.near())
					}
					// null sets encoding/json's *string back to nil.
					id, hasID = "", false
				default:
					at := s.i
					if err := s.skip(2); err != nil {
						return Metric{}, err
					}
					return Metric{}, fmt.Errorf("at byte %d: id must be a string, got %s", at, truncate(s.b[at:s.i], 40))
				}
			case fieldValue:
				at := s.i
				if s.peek() == '"' {
					_, _, plain, err := s.str()
					if err != nil {
						return Metric{}, err
					}
					va, vb, vplain = at, s.i, plain
				} else {
					if err := s.skip(2); err != nil {
						return Metric{}, err
					}
					va, vb, vplain = at, s.i, false
				}
			default:
				if err := s.skip(2); err != nil {
					return Metric{}, err
				}
			}
			s.space()
			if s.eat(',') {
				s.space()
				continue
			}
			if s.eat('}') {
				break
			}
			return Metric{}, s.errorf("want ',' or '}' in a metric, got %s", s.near())
		}
	}
	if !hasID {
		return Metric{}, fmt.Errorf("metric without id: %s", truncate(s.b[start:s.i], 120))
	}
	m := Metric{ID: id, Value: math.NaN()}
	if va < 0 || string(s.b[va:vb]) == "null" {
		return m, nil
	}
	switch s.b[va] {
	case '"':
		// A whole string token, already checked.
		if vplain {
			m.Raw = s.text[va+1 : vb-1]
		} else {
			m.Raw = unquoteJSON(s.b[va+1 : vb-1])
		}
		if v, ok := metricFloat(m.Raw); ok {
			m.Value = v
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		m.Raw = s.text[va:vb]
		v, err := strconv.ParseFloat(m.Raw, 64)
		if err != nil {
			return Metric{}, fmt.Errorf("metric %q: value: %w", m.ID, err)
		}
		m.Value = v
	default:
		return Metric{}, fmt.Errorf("metric %q: value must be a string or number, got %s", m.ID, truncate(s.b[va:vb], 40))
	}
	return m, nil
}

// The fields of a metric object.
const (
	fieldOther = iota
	fieldID
	fieldValue
)

// fieldOf says which field a name (a string token's content, plain when it
// is its value as it stands) is, as encoding/json matches names: exactly,
// else case-insensitively (its foldName folds runes as strings.EqualFold
// does).
func fieldOf(raw []byte, plain bool) int {
	if plain {
		switch string(raw) {
		case "id":
			return fieldID
		case "value":
			return fieldValue
		}
	}
	name := string(raw)
	if !plain {
		name = unquoteJSON(raw)
	}
	switch {
	case strings.EqualFold(name, "id"):
		return fieldID
	case strings.EqualFold(name, "value"):
		return fieldValue
	}
	return fieldOther
}

// content returns the string whose JSON text (without quotes) is
// s.b[a:b]: a substring of the body when it needs no unescaping.
func (s *metricScanner) content(a, b int, plain bool) string {
	if plain {
		return s.text[a:b]
	}
	return unquoteJSON(s.b[a:b])
}

// strPlain marks the bytes a string token's content runs over without a
// closer look: not '"', '\\', a control character or non-ASCII.
var strPlain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads a string token at s.i and returns the bounds of its content
// and whether the content is its value as it stands (no escapes, valid
// UTF-8). It checks the token as encoding/json's scanner does: no control
// characters, only JSON's escapes.
func (s *metricScanner) str() (a, b int, plain bool, err error) {
	s.i++ // the opening quote
	a = s.i
	plain = true
	ascii := true
	for s.i < len(s.b) {
		c := s.b[s.i]
		if strPlain[c] {
			s.i++
			continue
		}
		switch {
		case c == '"':
			b = s.i
			s.i++
			if !ascii && plain && !utf8.Valid(s.b[a:b]) {
				plain = false
			}
			return a, b, plain, nil
		case c == '\\':
			plain = false
			if s.i+1 >= len(s.b) {
				s.i = len(s.b)
				return 0, 0, false, s.errorf("unterminated string")
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if len(s.b)-s.i < 6 || !isHex4(s.b[s.i+2:s.i+6]) {
					return 0, 0, false, s.errorf("invalid \\u escape in a string")
				}
				s.i += 6
			default:
				return 0, 0, false, s.errorf("invalid escape %q in a string", s.b[s.i:s.i+2])
			}
		case c < 0x20:
			return 0, 0, false, s.errorf("control character %#x in a string", c)
		default:
			if c >= utf8.RuneSelf {
				ascii = false
			}
			s.i++
		}
	}
	return 0, 0, false, s.errorf("unterminated string")
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// skip reads one JSON value of any kind at nesting depth, checking it.
func (s *metricScanner) skip(depth int) error {
	switch c := s.peek(); c {
	case '"':
		_, _, _, err := s.str()
		return err
	case '{', '[':
		if depth > maxNesting {
			return s.errorf("exceeded max depth")
		}
		s.i++
		s.space()
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		if s.eat(closer) {
			return nil
		}
		for {
			if c == '{' {
				if s.peek() != '"' {
					return s.errorf("want a field name, got %s", s.near())
				}
				if _, _, _, err := s.str(); err != nil {
					return err
				}
				s.space()
				if !s.eat(':') {
					return s.errorf("want ':' after a field name, got %s", s.near())
				}
				s.space()
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
			s.space()
			if s.eat(',') {
				s.space()
				continue
			}
			if s.eat(closer) {
				return nil
			}
			return s.errorf("want ',' or %q, got %s", closer, s.near())
		}
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return s.number()
	}
	return s.errorf("want a JSON value, got %s", s.near())
}

func (s *metricScanner) lit(l string) error {
	if !s.literal(l) {
		return s.errorf("invalid literal %s", s.near())
	}
	return nil
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *metricScanner) number() error {
	s.eat('-')
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case '1' <= c && c <= '9':
		s.digits()
	default:
		return s.errorf("invalid number %s", s.near())
	}
	if s.eat('.') {
		if !s.digits() {
			return s.errorf("want a digit after the decimal point, got %s", s.near())
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if !s.digits() {
			return s.errorf("want a digit in the exponent, got %s", s.near())
		}
	}
	return nil
}

func (s *metricScanner) digits() bool {
	start := s.i
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

// unquoteJSON is the value of a checked string token's content (str), as
// encoding/json's unquoteBytes gives it: escapes decoded, a \u surrogate
// without its pair and each byte of invalid UTF-8 as U+FFFD.
func unquoteJSON(in []byte) string {
	var sb strings.Builder
	sb.Grow(len(in))
	for i := 0; i < len(in); {
		c := in[i]
		switch {
		case c == '\\':
			switch e := in[i+1]; e {
			case 'u':
				r := hex4(in[i+2 : i+6])
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(in) && in[i] == '\\' && in[i+1] == 'u' && isHex4(in[i+2:i+6]) {
						if d := utf16.DecodeRune(r, hex4(in[i+2:i+6])); d != utf8.RuneError {
							sb.WriteRune(d)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				sb.WriteRune(r)
			default:
				sb.WriteByte(unescapeByte(e))
				i += 2
			}
		case c < utf8.RuneSelf:
			sb.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRune(in[i:])
			sb.WriteRune(r) // RuneError for an invalid byte
			i += n
		}
	}
	return sb.String()
}

// unescapeByte is the byte a one-letter escape (\n, \", …) stands for.
func unescapeByte(e byte) byte {
	switch e {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return e // '"', '\\', '/'
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// metricFloat is parseMetricFloat without building an error.
func metricFloat(s string) (float64, bool) {
	t := strings.TrimSpace(s)
	switch t {
	case "NaN":
		return math.NaN(), true
	case "Infinity", "+Infinity":
		return math.Inf(1), true
	case "-Infinity":
		return math.Inf(-1), true
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return math.NaN(), false
	}
	return v, true
}
