package keysample

import (
	"encoding/base64"
	"errors"
	"math"
	"strconv"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/quote"
)

// Flink's json format as it decodes by default since 1.19
// (json.decode.json-parser.enabled = true): JsonParserRowDataDeserializationSchema
// walks the top-level object's fields with Jackson's streaming parser and
// converts each column's value by its type (JsonParserToRowDataConverters).
// This reads the record the same way: fields by name at the top level (a
// later duplicate replaces an earlier one; once as many fields as the table
// has columns have matched, the rest are skipped), a missing field or JSON
// null is null, and only the key columns are converted (a bad value in
// another column fails or nulls only that column in Flink, and does not
// change where the record is routed). The whole record must be JSON that
// Jackson reads up to the object's end (ALLOW_UNESCAPED_CONTROL_CHARS on,
// as Flink sets it; whatever follows the object is ignored, as Flink does).

// jsonTok is one JSON value of the record.
type jsonTok struct {
	kind       byte // '"' string, 'i' integer, 'f' float, 't', 'f'alse as 'F', 'n', '{', '['
	start, end int  // the value's bytes (a string's without its quotes)
	escaped    bool // a string with a backslash escape
}

// jsonErr is a syntax error: a fixed reason and where.
type jsonErr struct {
	reason string
	at     int
}

func (e *jsonErr) Error() string { return e.reason }

type jsonScan struct {
	b []byte
	i int
}

func (s *jsonScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *jsonScan) fail(reason string) error { return &jsonErr{reason, s.i} }

// maxJSONDepth is Jackson's StreamReadConstraints default nesting depth.
const maxJSONDepth = 1000

// value scans one value, validating it, and returns its token; a container
// is scanned to its end.
func (s *jsonScan) value(depth int) (jsonTok, error) {
	s.ws()
	if s.i >= len(s.b) {
		return jsonTok{}, s.fail("it ends early")
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.str()
	case c == '{' || c == '[':
		if depth >= maxJSONDepth {
			return jsonTok{}, s.fail("it nests deeper than 1000")
		}
		start := s.i
		s.i++
		s.ws()
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		if s.i < len(s.b) && s.b[s.i] == closer {
			s.i++
			return jsonTok{kind: c, start: start, end: s.i}, nil
		}
		for {
			if c == '{' {
				s.ws()
				if s.i >= len(s.b) || s.b[s.i] != '"' {
					return jsonTok{}, s.fail("a field name is not a string")
				}
				if _, err := s.str(); err != nil {
					return jsonTok{}, err
				}
				s.ws()
				if s.i >= len(s.b) || s.b[s.i] != ':' {
					return jsonTok{}, s.fail("a colon is missing")
				}
				s.i++
			}
			if _, err := s.value(depth + 1); err != nil {
				return jsonTok{}, err
			}
			s.ws()
			if s.i >= len(s.b) {
				return jsonTok{}, s.fail("it ends early")
			}
			if s.b[s.i] == closer {
				s.i++
				return jsonTok{kind: c, start: start, end: s.i}, nil
			}
			if s.b[s.i] != ',' {
				return jsonTok{}, s.fail("an unexpected character")
			}
			s.i++
		}
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == 't':
		return s.literal("true", 't')
	case c == 'f':
		return s.literal("false", 'F')
	case c == 'n':
		return s.literal("null", 'n')
	}
	return jsonTok{}, s.fail("an unexpected character")
}

func (s *jsonScan) literal(lit string, kind byte) (jsonTok, error) {
	start := s.i
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return jsonTok{}, s.fail("an unrecognized token")
	}
	s.i += len(lit)
	if s.i < len(s.b) && isJSONIdent(s.b[s.i]) {
		return jsonTok{}, s.fail("an unrecognized token")
	}
	return jsonTok{kind: kind, start: start, end: s.i}, nil
}

func isJSONIdent(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}

// number scans a JSON number as Jackson reads it: no leading zeros, no
// leading '+', digits after a point and an exponent; at most 1000 chars
// (StreamReadConstraints).
func (s *jsonScan) number() (jsonTok, error) {
	start := s.i
	kind := byte('i')
	if s.b[s.i] == '-' {
		s.i++
	}
	d := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	if s.i == d {
		return jsonTok{}, s.fail("a number has no digits")
	}
	if s.b[d] == '0' && s.i-d > 1 {
		return jsonTok{}, s.fail("a number has leading zeros")
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		kind = 'f'
		s.i++
		f := s.i
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
		if s.i == f {
			return jsonTok{}, s.fail("a number has no digits after its point")
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		kind = 'f'
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		e := s.i
		for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
			s.i++
		}
		if s.i == e {
			return jsonTok{}, s.fail("a number has no digits in its exponent")
		}
	}
	if s.i < len(s.b) && isJSONIdent(s.b[s.i]) {
		return jsonTok{}, s.fail("an unexpected character")
	}
	if s.i-start > 1000 {
		return jsonTok{}, s.fail("a number is longer than 1000 characters")
	}
	return jsonTok{kind: kind, start: start, end: s.i}, nil
}

// str scans a string literal: escapes checked, UTF-8 checked as Jackson
// checks it, unescaped control characters allowed.
func (s *jsonScan) str() (jsonTok, error) {
	s.i++ // the quote
	start := s.i
	esc := false
	for s.i < len(s.b) {
		for s.i < len(s.b) && !jsonStrSpecial[s.b[s.i]] {
			s.i++
		}
		if s.i >= len(s.b) {
			break
		}
		c := s.b[s.i]
		switch {
		case c == '"':
			t := jsonTok{kind: '"', start: start, end: s.i, escaped: esc}
			s.i++
			return t, nil
		case c == '\\':
			esc = true
			if s.i+1 >= len(s.b) {
				return jsonTok{}, s.fail("it ends early")
			}
			switch s.b[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.b) {
					return jsonTok{}, s.fail("it ends early")
				}
				for _, h := range s.b[s.i+2 : s.i+6] {
					if !isHex(h) {
						return jsonTok{}, s.fail("a \\u escape is not four hex digits")
					}
				}
				s.i += 6
			default:
				return jsonTok{}, s.fail("an unknown escape")
			}
		case c < 0x80:
			s.i++
		default:
			n := jacksonSeqLen(c)
			if n == 0 || s.i+n > len(s.b) {
				return jsonTok{}, s.fail("it is not UTF-8")
			}
			for j := 1; j < n; j++ {
				if s.b[s.i+j]&0xC0 != 0x80 {
					return jsonTok{}, s.fail("it is not UTF-8")
				}
			}
			s.i += n
		}
	}
	return jsonTok{}, s.fail("it ends early")
}

// jsonStrSpecial marks the bytes a string scan must look at: the quote,
// the backslash and the bytes of multi-byte UTF-8.
var jsonStrSpecial = func() (t [256]bool) {
	t['"'], t['\\'] = true, true
	for c := 0x80; c < 256; c++ {
		t[c] = true
	}
	return t
}()

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func jacksonSeqLen(c byte) int {
	switch {
	case c >= 0xC0 && c <= 0xDF:
		return 2
	case c >= 0xE0 && c <= 0xEF:
		return 3
	case c >= 0xF0 && c <= 0xF7:
		return 4
	}
	return 0
}

// javaString decodes a string that str has scanned (its escapes and its
// UTF-8 checked) into its Java code units, appending them to dst.
func javaString(dst assign.JavaString, raw []byte) assign.JavaString {
	dst, _ = assign.AppendJSONString(dst, raw, jacksonChecked)
	return dst
}

// jacksonChecked is jacksonText for bytes already checked.
func jacksonChecked(dst assign.JavaString, b []byte) assign.JavaString {
	dst, _ = jacksonText(dst, b)
	return dst
}

// decodeJSON reads the key columns of one JSON record.
//
// Mirrors JsonParserRowDataDeserializationSchema.deserialize and
// JsonParserToRowDataConverters.createRowConverter.
func (sp *sqlSpec) decodeJSON(st *sqlState, src []byte) error {
	if len(src) == 0 {
		return sp.skipped("the " + sp.partName() + " is null or empty")
	}
	s := jsonScan{b: src}
	s.ws()
	if s.i >= len(src) || src[s.i] != '{' {
		return sp.recordErr("the "+sp.partName()+" is not a JSON object", src, 0)
	}
	for i := range st.seen {
		st.seen[i] = false
	}
	s.i++
	s.ws()
	cnt, arity := 0, len(sp.cols)
	if s.i < len(src) && src[s.i] == '}' {
		s.i++
	} else {
		for {
			s.ws()
			if s.i >= len(src) || src[s.i] != '"' {
				return sp.recordErr("the "+sp.partName()+" is not valid JSON: a field name is not a string", src, s.i)
			}
			name, err := s.str()
			if err != nil {
				return sp.syntaxErr(err, src)
			}
			s.ws()
			if s.i >= len(src) || src[s.i] != ':' {
				return sp.recordErr("the "+sp.partName()+" is not valid JSON: a colon is missing", src, s.i)
			}
			s.i++
			tok, err := s.value(1)
			if err != nil {
				return sp.syntaxErr(err, src)
			}
			if cnt < arity {
				idx, ok := sp.column(st, src, name)
				if ok {
					cnt++
					st.seen[idx] = true
					if k := sp.cols[idx].keyPos; k >= 0 {
						v := &st.vals[k]
						v.reset()
						if err := sp.jsonValue(st, v, k, src, tok); err != nil {
							if !sp.ignoreErrors {
								return err
							}
							v.reset()
							v.null = true
						}
					}
				}
			}
			s.ws()
			if s.i >= len(src) {
				return sp.recordErr("the "+sp.partName()+" is not valid JSON: it ends early", src, s.i)
			}
			if src[s.i] == '}' {
				break
			}
			if src[s.i] != ',' {
				return sp.recordErr("the "+sp.partName()+" is not valid JSON: an unexpected character", src, s.i)
			}
			s.i++
		}
	}
	if cnt < arity && sp.failOnMissing {
		for i, seen := range st.seen {
			if !seen {
				return &SQLKeyError{Column: sp.cols[i].name, Type: sp.colType(i), Reason: "missing from the record (json.fail-on-missing-field)"}
			}
		}
	}
	for k, c := range sp.key {
		if !st.seen[c] {
			st.vals[k].null = true
		}
	}
	return nil
}

func (sp *sqlSpec) partName() string {
	if sp.from == "key" {
		return "record key"
	}
	return "value"
}

func (sp *sqlSpec) colType(i int) string {
	if k := sp.cols[i].keyPos; k >= 0 {
		return sp.types[k].Text()
	}
	return sp.cols[i].typ
}

// recordErr is the error for a record the format cannot read at all: with
// ignore-parse-errors Flink drops it, otherwise the job fails on it.
func (sp *sqlSpec) recordErr(reason string, src []byte, at int) error {
	if sp.ignoreErrors {
		return sp.skipped(reason + " (" + sp.format + ".ignore-parse-errors)")
	}
	lo := max(at-20, 0)
	return &SQLKeyError{Reason: reason + " (Flink's job fails on it)", Value: quote.Clip(string(src[lo:min(len(src), at+40)]))}
}

func (sp *sqlSpec) syntaxErr(err error, src []byte) error {
	var je *jsonErr
	if errors.As(err, &je) {
		return sp.recordErr("the "+sp.partName()+" is not valid JSON: "+je.reason, src, je.at)
	}
	return err
}

// column finds the column a field name names.
func (sp *sqlSpec) column(st *sqlState, src []byte, name jsonTok) (int, bool) {
	raw := src[name.start:name.end]
	if !name.escaped {
		if len(sp.cols) <= 8 {
			// A few names: comparing them beats hashing.
			for i := range sp.cols {
				if sp.cols[i].name == string(raw) {
					return i, true
				}
			}
			return 0, false
		}
		i, ok := sp.byName[string(raw)]
		return i, ok
	}
	st.js = javaString(st.js[:0], raw)
	st.text = javaUTF8(st.text[:0], st.js)
	i, ok := sp.byName[string(st.text)]
	return i, ok
}

// jsonText is the token's text as Jackson's getText gives it, as UTF-8.
func (sp *sqlSpec) jsonText(st *sqlState, src []byte, tok jsonTok) []byte {
	raw := src[tok.start:tok.end]
	if tok.kind != '"' || !tok.escaped && plainUTF8(raw) {
		if tok.kind == '{' || tok.kind == '[' {
			return raw[:1]
		}
		return raw
	}
	st.js = javaString(st.js[:0], raw)
	st.text = javaUTF8(st.text[:0], st.js)
	return st.text
}

var jsonKinds = map[byte]string{'"': "string", 'i': "number", 'f': "number", 't': "boolean", 'F': "boolean", '{': "object", '[': "array"}

// jsonValue converts the token into the key value k, as the column's
// converter does.
//
// Mirrors JsonParserToRowDataConverters.createNotNullConverter and its
// convertTo* methods, with Jackson's getIntValue/getLongValue range checks.
func (sp *sqlSpec) jsonValue(st *sqlState, v *sqlVal, k int, src []byte, tok jsonTok) error {
	if tok.kind == 'n' {
		v.null = true
		return nil
	}
	t := &sp.types[k]
	c := sp.key[k]
	raw := src[tok.start:tok.end]
	bad := func(what string) error {
		return sp.colErr(c, "JSON "+jsonKinds[tok.kind]+" "+what, sp.jsonText(st, src, tok))
	}
	notA := func() error { return bad("is not a " + t.Text()) }
	container := tok.kind == '{' || tok.kind == '['
	switch t.Root {
	case assign.SQLBoolean:
		switch tok.kind {
		case 't':
			v.i = 1
		case 'F':
		case '{', '[':
			// Flink reads the container's first token only and the rest
			// of the record out of step.
			return bad("in a BOOLEAN column: Flink reads the rest of the record out of step")
		default:
			if b := javaTrim(sp.jsonText(st, src, tok)); len(b) == 4 && (b[0]|0x20) == 't' && (b[1]|0x20) == 'r' && (b[2]|0x20) == 'u' && (b[3]|0x20) == 'e' {
				v.i = 1 // Boolean.parseBoolean: anything else is false
			}
		}
		return nil
	case assign.SQLTinyInt, assign.SQLSmallInt, assign.SQLInt, assign.SQLBigInt:
		lo, hi := intRange(t.Root)
		if tok.kind == 'i' {
			// getIntValue / getShortValue / getLongValue: an int for the
			// smaller types, then their range.
			wide := int64(math.MaxInt32)
			if t.Root == assign.SQLBigInt {
				wide = math.MaxInt64
			}
			x, _, in := javaParseLong(raw, -wide-1, wide)
			if !in || x < lo || x > hi {
				return bad("is out of range of " + t.Text())
			}
			v.i = x
			return nil
		}
		if tok.kind == 'f' && (t.Root == assign.SQLInt || t.Root == assign.SQLBigInt) {
			// getIntValue / getLongValue of a float: its value truncated,
			// refused beyond the type's range.
			d, err := strconv.ParseFloat(string(raw), 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return notA()
			}
			if d < float64(lo) || d > float64(hi) {
				return bad("is out of range of " + t.Text())
			}
			switch {
			case d >= 9223372036854775807:
				v.i = math.MaxInt64 // (long) 2^63 saturates
			default:
				v.i = int64(d)
			}
			return nil
		}
		if container {
			return notA()
		}
		x, ok, in := javaParseLong(javaTrim(sp.jsonText(st, src, tok)), lo, hi)
		if !ok {
			return notA()
		}
		if !in {
			return bad("is out of range of " + t.Text())
		}
		v.i = x
		return nil
	case assign.SQLFloat, assign.SQLDouble:
		bits := 64
		if t.Root == assign.SQLFloat {
			bits = 32
		}
		var f float64
		if tok.kind == 'f' {
			f, _ = strconv.ParseFloat(string(raw), bits) // getFloatValue / getDoubleValue; ±Inf beyond range
		} else {
			if container {
				return notA()
			}
			var ok bool
			if f, ok = javaParseFloat(sp.jsonText(st, src, tok), bits); !ok {
				return notA()
			}
		}
		v.i = floatBits(f, bits)
		return nil
	case assign.SQLChar, assign.SQLVarChar:
		switch tok.kind {
		case '"':
			sp.stringVal(st, v, raw, tok.escaped)
		case '{', '[':
			v.buf = appendJacksonTree(v.buf[:0], src[tok.start:tok.end], sp.bigDecimalFloats)
			v.b = v.buf
		default:
			v.b = raw // getText of a number or a boolean: as written
		}
		return nil
	case assign.SQLBinary, assign.SQLVarBinary:
		if tok.kind != '"' {
			return bad("is not a base64 string")
		}
		text := sp.jsonText(st, src, tok)
		n := base64.StdEncoding.DecodedLen(len(text))
		v.buf = append(v.buf[:0], make([]byte, n)...)
		m, err := base64.StdEncoding.Decode(v.buf, text)
		if err != nil {
			return bad("is not base64")
		}
		v.b = v.buf[:m]
		return nil
	case assign.SQLDate:
		d, ok := parseISODate(sp.jsonText(st, src, tok))
		if !ok {
			return bad("is not a DATE yyyy-MM-dd")
		}
		v.i = int64(d)
		return nil
	case assign.SQLTime:
		ms, ok := parseSQLTimeOfDay(sp.jsonText(st, src, tok))
		if !ok {
			return bad("is not a TIME HH:mm:ss[.fraction]")
		}
		v.i = int64(ms)
		return nil
	case assign.SQLTimestamp, assign.SQLTimestampLTZ:
		ltz := t.Root == assign.SQLTimestampLTZ
		ts, ok := parseJSONTimestamp(sp.jsonText(st, src, tok), sp.isoTimestamps, ltz)
		if !ok {
			form := map[[2]bool]string{
				{false, false}: "yyyy-MM-dd HH:mm:ss[.fraction]", {true, false}: "yyyy-MM-ddTHH:mm[:ss[.fraction]]",
				{false, true}: "yyyy-MM-dd HH:mm:ss[.fraction]Z", {true, true}: "yyyy-MM-ddTHH:mm[:ss[.fraction]]Z",
			}[[2]bool{sp.isoTimestamps, ltz}]
			return bad("is not a " + t.Text() + " " + form)
		}
		v.i, v.nano = ts.millisNanos()
		return nil
	case assign.SQLDecimal:
		var text []byte
		switch tok.kind {
		case '"':
			text = javaTrim(sp.jsonText(st, src, tok))
		case 'i', 'f':
			text = raw
		default:
			return notA()
		}
		if !st.dec.parse(text) {
			return notA()
		}
		if !st.dec.toSQL(t.Precision, t.Scale, &v.dec) {
			v.null = true // DecimalData.fromBigDecimal: too many digits is null
		}
		return nil
	}
	return notA()
}

// stringVal sets a CHAR/VARCHAR value from a JSON string's raw bytes.
func (sp *sqlSpec) stringVal(st *sqlState, v *sqlVal, raw []byte, escaped bool) {
	if !escaped && plainUTF8(raw) {
		v.b = raw
		return
	}
	st.js = javaString(st.js[:0], raw)
	if st.js.HasLoneSurrogate() {
		v.js = append(v.js[:0], st.js...)
		v.b = nil
		return
	}
	v.buf = javaUTF8(v.buf[:0], st.js)
	v.b = v.buf
}

func intRange(r assign.SQLTypeRoot) (int64, int64) {
	switch r {
	case assign.SQLTinyInt:
		return math.MinInt8, math.MaxInt8
	case assign.SQLSmallInt:
		return math.MinInt16, math.MaxInt16
	case assign.SQLInt:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// floatBits is the value's IEEE bits as a JVM holds the parsed number: a
// NaN is Java's canonical NaN.
func floatBits(f float64, bits int) int64 {
	if bits == 32 {
		if f != f {
			return 0x7fc00000
		}
		return int64(math.Float32bits(float32(f)))
	}
	if f != f {
		return 0x7ff8000000000000
	}
	return int64(math.Float64bits(f))
}

// appendJacksonTree writes a JSON object or array as Jackson's
// JsonNode.toString writes the tree that readValueAsTree builds of it (the
// STRING of a container, JsonParserToRowDataConverters.convertToString):
// compact, strings re-escaped as Jackson's generator escapes them (",
// \, and control characters; a lone surrogate becomes '?' in the UTF-8),
// integers in decimal, floats as Double.toString (JDK 19 and later) or,
// when the row has a DECIMAL column (USE_BIG_DECIMAL_FOR_FLOATS), as
// BigDecimal.toString. A field named twice is written twice (Jackson keeps
// the last value at the first's place).
func appendJacksonTree(dst []byte, raw []byte, bigDecimal bool) []byte {
	s := jsonScan{b: raw}
	return s.writeTree(dst, bigDecimal)
}

func (s *jsonScan) writeTree(dst []byte, bigDecimal bool) []byte {
	s.ws()
	if s.i >= len(s.b) {
		return dst
	}
	switch c := s.b[s.i]; c {
	case '{', '[':
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		dst = append(dst, c)
		s.i++
		first := true
		for {
			s.ws()
			if s.i >= len(s.b) || s.b[s.i] == closer {
				s.i++
				return append(dst, closer)
			}
			if s.b[s.i] == ',' {
				s.i++
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			if c == '{' {
				dst = s.writeTree(dst, bigDecimal) // the name
				s.ws()
				s.i++ // ':'
				dst = append(dst, ':')
			}
			dst = s.writeTree(dst, bigDecimal)
		}
	case '"':
		tok, _ := s.str()
		js := javaString(nil, s.b[tok.start:tok.end])
		dst = append(dst, '"')
		for i := 0; i < len(js); i++ {
			u := js[i]
			switch {
			case u == '"' || u == '\\':
				dst = append(dst, '\\', byte(u))
			case u < 0x20:
				switch u {
				case '\b':
					dst = append(dst, `\b`...)
				case '\t':
					dst = append(dst, `\t`...)
				case '\n':
					dst = append(dst, `\n`...)
				case '\f':
					dst = append(dst, `\f`...)
				case '\r':
					dst = append(dst, `\r`...)
				default:
					dst = append(dst, `\u00`...)
					dst = append(dst, "0123456789ABCDEF"[u>>4], "0123456789ABCDEF"[u&15])
				}
			default:
				j := i
				for j < len(js) && js[j] >= 0x20 && js[j] != '"' && js[j] != '\\' {
					j++
				}
				dst = javaUTF8(dst, js[i:j])
				i = j - 1
			}
		}
		return append(dst, '"')
	case 't', 'f', 'n':
		tok, _ := s.value(0)
		return append(dst, s.b[tok.start:tok.end]...)
	default:
		tok, err := s.number()
		if err != nil {
			return dst
		}
		text := s.b[tok.start:tok.end]
		if tok.kind == 'i' {
			if string(text) == "-0" {
				return append(dst, '0')
			}
			return append(dst, text...)
		}
		if bigDecimal {
			var d javaDecimal
			if d.parse(text) {
				return appendBigDecimalString(dst, &d)
			}
		}
		f, _ := strconv.ParseFloat(string(text), 64)
		return appendJavaDouble(dst, f)
	}
}

// appendJavaDouble writes Double.toString(f) as JDK 19 and later write it
// (the shortest decimal that reads back to f): plain between 10^-3 and
// 10^7, else d.dddE±n.
func appendJavaDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(dst, `"-Infinity"`...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64) // d.ddde±XX
	mant, exp := e, 0
	for i, c := range e {
		if c == 'e' {
			mant = e[:i]
			exp, _ = strconv.Atoi(string(e[i+1:]))
			break
		}
	}
	digits := make([]byte, 0, len(mant))
	for _, c := range mant {
		if c != '.' {
			digits = append(digits, c)
		}
	}
	if f >= 1e-3 && f < 1e7 {
		if exp >= 0 {
			for len(digits) < exp+2 {
				digits = append(digits, '0')
			}
			dst = append(dst, digits[:exp+1]...)
			dst = append(dst, '.')
			return append(dst, digits[exp+1:]...)
		}
		dst = append(dst, "0."...)
		for i := 0; i < -exp-1; i++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	dst = append(dst, digits[0], '.')
	if len(digits) > 1 {
		dst = append(dst, digits[1:]...)
	} else {
		dst = append(dst, '0')
	}
	dst = append(dst, 'E')
	return strconv.AppendInt(dst, int64(exp), 10)
}

// appendBigDecimalString writes BigDecimal.toString: plain when the scale
// is not negative and the adjusted exponent is at least -6, else
// scientific with an explicit exponent sign.
func appendBigDecimalString(dst []byte, d *javaDecimal) []byte {
	s := d.unscaled.String()
	if s[0] == '-' {
		dst = append(dst, '-')
		s = s[1:]
	}
	adjusted := -d.scale + len(s) - 1
	if d.scale >= 0 && adjusted >= -6 {
		switch {
		case d.scale == 0:
			return append(dst, s...)
		case len(s) > d.scale:
			dst = append(dst, s[:len(s)-d.scale]...)
			dst = append(dst, '.')
			return append(dst, s[len(s)-d.scale:]...)
		}
		dst = append(dst, "0."...)
		for i := len(s); i < d.scale; i++ {
			dst = append(dst, '0')
		}
		return append(dst, s...)
	}
	dst = append(dst, s[0])
	if len(s) > 1 {
		dst = append(dst, '.')
		dst = append(dst, s[1:]...)
	}
	dst = append(dst, 'E')
	if adjusted > 0 {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, int64(adjusted), 10)
}
