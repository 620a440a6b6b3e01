package keysample

import (
	"encoding/base64"
	"strconv"

	"github.com/skewscope/skewscope/assign"
)

// Flink's csv format: CsvRowDataDeserializationSchema reads the record's
// first CSV line with Jackson's CsvMapper, by a CsvSchema of the table's
// columns in order (CsvRowSchemaConverter), into text values, which
// CsvToRowDataConverters converts by each column's type.

// csvField is one field of the line: its text in the arena and whether it
// is the null literal.
type csvField struct {
	start, end int
	null       bool
	quoted     bool
}

// splitCSVRecord splits the first record of src as Jackson's CsvDecoder
// does with the spec's separator, quote and escape characters: a field that
// starts with the quote runs to the closing quote (a doubled quote is one
// quote, and line breaks belong to the field), and only spaces may follow
// it before the separator; an unquoted field runs to the separator or the
// end of the line; the escape character takes the next character as it is.
// Lines starting with '#' are skipped when comments are allowed.
func (sp *sqlSpec) splitCSVRecord(st *sqlState, src []byte) ([]csvField, string) {
	fields := st.csvFields[:0]
	arena := st.text[:0]
	i := 0
	if sp.comments {
		for i < len(src) && src[i] == '#' {
			for i < len(src) && src[i] != '\n' {
				i++
			}
			if i < len(src) {
				i++
			}
		}
	}
	if i >= len(src) {
		return nil, "it holds no CSV line"
	}
	for {
		f := csvField{start: len(arena)}
		if sp.quote != 0 && i < len(src) && src[i] == sp.quote {
			f.quoted = true
			i++
			closed := false
			for i < len(src) {
				c := src[i]
				switch {
				case sp.escape != 0 && c == sp.escape && i+1 < len(src):
					arena = append(arena, src[i+1])
					i += 2
					continue
				case c == sp.quote:
					if i+1 < len(src) && src[i+1] == sp.quote {
						arena = append(arena, c)
						i += 2
						continue
					}
					i++
					closed = true
				default:
					arena = append(arena, c)
					i++
					continue
				}
				break
			}
			if !closed {
				return nil, "a quote is not closed"
			}
			for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
				i++
			}
			if i < len(src) && src[i] != sp.delim && src[i] != '\n' && src[i] != '\r' {
				return nil, "text follows a closing quote"
			}
		} else {
			for i < len(src) && src[i] != sp.delim && src[i] != '\n' && src[i] != '\r' {
				if sp.escape != 0 && src[i] == sp.escape && i+1 < len(src) {
					i++
				}
				arena = append(arena, src[i])
				i++
			}
		}
		f.end = len(arena)
		f.null = sp.hasNullLiteral && string(arena[f.start:f.end]) == sp.nullLiteral
		fields = append(fields, f)
		if i < len(src) && src[i] == sp.delim {
			i++
			continue
		}
		break
	}
	st.csvFields, st.text = fields, arena
	for _, f := range fields {
		if _, ok := jacksonText(st.js[:0], arena[f.start:f.end]); !ok {
			return nil, "it is not UTF-8"
		}
	}
	return fields, ""
}

// decodeCSV reads the key columns of one CSV record.
//
// Mirrors CsvRowDataDeserializationSchema.deserialize and
// CsvToRowDataConverters.createRowConverter (arity checked unless
// csv.ignore-parse-errors, which makes missing columns null).
func (sp *sqlSpec) decodeCSV(st *sqlState, src []byte) error {
	if src == nil {
		return sp.skipped("the " + sp.partName() + " is null")
	}
	fields, bad := sp.splitCSVRecord(st, src)
	if fields == nil && bad == "it holds no CSV line" {
		// No row: the JsonNode Jackson reads has no field.
		return sp.skipped("the " + sp.partName() + " holds no CSV line")
	}
	if bad != "" {
		return sp.recordErr("the "+sp.partName()+" is not CSV Flink reads: "+bad, src, 0)
	}
	arity := len(sp.cols)
	// CsvParser.Feature.ALLOW_TRAILING_COMMA: one blank extra column at the
	// end is not a column.
	if n := len(fields); n == arity+1 && !fields[n-1].quoted && len(javaTrim(st.text[fields[n-1].start:fields[n-1].end])) == 0 {
		fields = fields[:n-1]
	}
	switch {
	case len(fields) > arity:
		return sp.recordErr("the "+sp.partName()+" has more columns than the table", src, 0)
	case len(fields) < arity && !sp.ignoreErrors:
		return &SQLKeyError{Reason: "the " + sp.partName() + " has fewer columns than the table (Flink's job fails on it: row length mismatch)", Value: strconv.Itoa(len(fields)) + " of " + strconv.Itoa(arity)}
	}
	for k, c := range sp.key {
		v := &st.vals[k]
		if c >= len(fields) || fields[c].null {
			v.null = true
			continue
		}
		text := st.text[fields[c].start:fields[c].end]
		if err := sp.csvValue(st, v, k, text); err != nil {
			if !sp.ignoreErrors {
				return err
			}
			v.reset()
			v.null = true
		}
	}
	return nil
}

// csvValue converts one field's text by the key column's type.
//
// Mirrors CsvToRowDataConverters.createConverter: numbers parsed from the
// trimmed text, BOOLEAN by Boolean.parseBoolean, DATE by Date.valueOf,
// TIME by LocalTime.parse (cut to the column's precision), TIMESTAMP by
// LocalDateTime.parse of the trimmed text by TimeFormats.SQL_TIMESTAMP_FORMAT
// (and SQL_TIMESTAMP_WITH_LOCAL_TIMEZONE_FORMAT, its 'Z' read as UTC),
// DECIMAL by new BigDecimal, BYTES from base64 (Flink 1.20 and later).
func (sp *sqlSpec) csvValue(st *sqlState, v *sqlVal, k int, text []byte) error {
	t := &sp.types[k]
	c := sp.key[k]
	bad := func(what string) error { return sp.colErr(c, "CSV field "+what, text) }
	notA := func() error { return bad("is not a " + t.Text()) }
	switch t.Root {
	case assign.SQLBoolean:
		if b := javaTrim(text); len(b) == 4 && (b[0]|0x20) == 't' && (b[1]|0x20) == 'r' && (b[2]|0x20) == 'u' && (b[3]|0x20) == 'e' {
			v.i = 1
		}
	case assign.SQLTinyInt, assign.SQLSmallInt, assign.SQLInt, assign.SQLBigInt:
		lo, hi := intRange(t.Root)
		x, ok, in := javaParseLong(javaTrim(text), lo, hi)
		if !ok {
			return notA()
		}
		if !in {
			return bad("is out of range of " + t.Text())
		}
		v.i = x
	case assign.SQLFloat, assign.SQLDouble:
		bits := 64
		if t.Root == assign.SQLFloat {
			bits = 32
		}
		f, ok := javaParseFloat(text, bits)
		if !ok {
			return notA()
		}
		v.i = floatBits(f, bits)
	case assign.SQLChar, assign.SQLVarChar:
		if plainUTF8(text) {
			v.buf = append(v.buf[:0], text...)
			v.b = v.buf
			return nil
		}
		js, _ := jacksonText(st.js[:0], text)
		st.js = js
		if js.HasLoneSurrogate() {
			v.js = append(v.js[:0], js...)
			return nil
		}
		v.buf = javaUTF8(v.buf[:0], js)
		v.b = v.buf
	case assign.SQLBinary, assign.SQLVarBinary:
		v.buf = append(v.buf[:0], make([]byte, base64.StdEncoding.DecodedLen(len(text)))...)
		n, err := base64.StdEncoding.Decode(v.buf, text)
		if err != nil {
			return bad("is not base64")
		}
		v.b = v.buf[:n]
	case assign.SQLDate:
		d, ok := parseSQLDateValueOf(text)
		if !ok {
			return bad("is not a DATE yyyy-[m]m-[d]d")
		}
		v.i = int64(d)
	case assign.SQLTime:
		ms, ok := parseISOTime(text)
		if !ok {
			return bad("is not a TIME HH:mm[:ss[.fraction]]")
		}
		switch t.Precision {
		case 0:
			ms = ms / 1000 * 1000
		case 1:
			ms = ms / 100 * 100
		case 2:
			ms = ms / 10 * 10
		}
		v.i = int64(ms)
	case assign.SQLTimestamp, assign.SQLTimestampLTZ:
		ltz := t.Root == assign.SQLTimestampLTZ
		ts, ok := parseJSONTimestamp(javaTrim(text), false, ltz)
		if !ok {
			form := "yyyy-MM-dd HH:mm:ss[.fraction]"
			if ltz {
				form += "Z"
			}
			return bad("is not a " + t.Text() + " " + form)
		}
		v.i, v.nano = ts.millisNanos()
	case assign.SQLDecimal:
		if !st.dec.parse(text) {
			return notA()
		}
		if !st.dec.toSQL(t.Precision, t.Scale, &v.dec) {
			v.null = true
		}
	default:
		return notA()
	}
	return nil
}
