package keysample

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/quote"
)

// SQLColumn is a physical column of a Flink SQL table: its name and its
// type as SQL text (read by assign.ParseSQLType for a key column; the
// other columns' types are only read where the format needs them, for the
// schema avro derives).
type SQLColumn struct{ Name, Type string }

// SQLKeyOptions says how a Flink SQL table reads the records of its topic
// and which of its columns the job keys by.
type SQLKeyOptions struct {
	// From is "key" or "value": which part of the record the format reads
	// (the Kafka connector's key.format or value.format).
	From string
	// Format is the format's name: json, csv, raw, avro or avro-confluent.
	Format string
	// Columns are the table's physical columns that this part holds, in
	// order (csv reads them by position, avro by the schema Flink derives
	// from them; json reads them by name, and reads a record alike when
	// given the key columns alone, unless the record names a field twice
	// or json.fail-on-missing-field is set).
	Columns []SQLColumn
	// Key names the key columns, in key order.
	Key []string
	// Options are the format's own WITH options, with or without the
	// format's prefix ("json.ignore-parse-errors", "ignore-parse-errors",
	// or as the Kafka connector spells them, "value.json.ignore-parse-errors");
	// those that change decoding are read, those
	// that only change writing are ignored, and unknown ones are refused.
	Options map[string]string
	// AvroSchema is, for avro, the writer schema as JSON (empty: the schema
	// Flink derives from Columns); for avro-confluent the schema of every
	// record when no Registry is given.
	AvroSchema string
	// Registry, for avro-confluent, fetches a writer schema by its id.
	Registry SchemaSource
}

// SchemaSource fetches a schema by its id, as a Confluent-compatible
// registry serves GET /schemas/ids/{id}. *sr.Client (franz-go's schema
// registry client) is one.
type SchemaSource interface {
	SchemaByID(ctx context.Context, id int) (sr.Schema, error)
}

// SQLKeyError is a record whose key could not be read as its table's
// format reads it. Its message holds no value of the record, so that the
// records failing for one reason are counted together (Summary.AddError);
// Example holds the value.
type SQLKeyError struct {
	Column string // the column, empty for an error of the whole record
	Type   string // the column's SQL type
	Reason string
	Value  string // the record's value at fault, clipped, or empty
}

func (e *SQLKeyError) Error() string {
	if e.Column == "" {
		return e.Reason
	}
	return "column " + e.Column + " " + e.Type + ": " + e.Reason
}

// Example returns the record's value at fault, quoted and clipped.
func (e *SQLKeyError) Example() string { return e.Value }

// sqlSpec is a parsed SQLKeyOptions. It is shared by the copies of its
// KeySpec; its per-record state comes from a pool, so Key is safe for
// concurrent use.
type sqlSpec struct {
	from, format string
	cols         []sqlColumn
	byName       map[string]int // column index by name
	key          []int          // column index per key column
	types        []assign.SQLType
	desc         string

	// json
	failOnMissing, ignoreErrors, isoTimestamps, bigDecimalFloats bool
	// csv
	delim, quote, escape byte // quote and escape 0 when disabled
	comments             bool
	nullLiteral          string
	hasNullLiteral       bool
	// raw
	charset   string // "UTF-8", "ISO-8859-1" or "US-ASCII"
	bigEndian bool
	// avro
	avro *avroFormat

	pool sync.Pool // *sqlState
}

type sqlColumn struct {
	name   string
	typ    string
	keyPos int // position in the key, -1 when not a key column
}

// sqlState is the per-record scratch of a spec: the decoded key values, the
// encoder and the text buffer, reused from record to record.
type sqlState struct {
	enc       *assign.KeyRowEncoder
	vals      []sqlVal
	kv        []assign.KeyValue // vals as the encoder takes them
	seen      []bool            // per column: present in the record (json)
	text      []byte
	js        assign.JavaString
	csvFields []csvField
	dec       javaDecimal
	avroR     avroReader
}

// sqlVal is one decoded key value, in the form its column's Append takes.
type sqlVal struct {
	null bool
	i    int64 // BOOLEAN (0/1), integers, DATE, TIME, TIMESTAMP millis, FLOAT and DOUBLE bits
	nano int32 // TIMESTAMP nanoOfMillisecond
	// CHAR/VARCHAR: the UTF-8 bytes written (b), or, for a value with a
	// lone surrogate, its code units (js, b nil); BINARY/VARBINARY: b.
	b    []byte
	js   assign.JavaString
	lone bool // b came from js (a lone surrogate written as '?')
	// raw bytes that are not UTF-8, kept as they are (raw format)
	notUTF8 bool
	dec     big.Int
	buf     []byte // owns b when b is not a slice of the record
}

func (v *sqlVal) reset() {
	v.null, v.i, v.nano, v.b, v.js, v.lone, v.notUTF8 = false, 0, 0, nil, nil, false, false
}

// The formats of a SQL key spec.
var sqlFormats = []string{"json", "csv", "raw", "avro", "avro-confluent"}

// ParseSQLKeySpec checks a Flink SQL table's format, columns and key
// columns and returns the spec whose Key reads a record as the table does:
// the part decoded by the format (JsonParserRowDataDeserializationSchema,
// CsvRowDataDeserializationSchema, RawFormatDeserializationSchema,
// AvroRowDataDeserializationSchema or RegistryAvroDeserializationSchema),
// the key columns projected into a BinaryRowData by assign.KeyRowEncoder,
// and its hashCode the Key's Hash. The error names the option, column or
// type that is wrong.
func ParseSQLKeySpec(o SQLKeyOptions) (KeySpec, error) {
	sp := &sqlSpec{}
	switch f := strings.ToLower(strings.TrimSpace(o.From)); f {
	case "key", "value":
		sp.from = f
	default:
		return KeySpec{}, fmt.Errorf("key from %s: want key (the record key) or value", quote.Clip(o.From))
	}
	sp.format = strings.ToLower(strings.TrimSpace(o.Format))
	if !slices.Contains(sqlFormats, sp.format) {
		return KeySpec{}, fmt.Errorf("format %s: want json, csv, raw, avro or avro-confluent", quote.Clip(o.Format))
	}
	if len(o.Key) == 0 {
		return KeySpec{}, fmt.Errorf("key columns: name at least one")
	}
	if len(o.Columns) == 0 {
		return KeySpec{}, fmt.Errorf("columns: give the table's columns of the record %s, in order", sp.from)
	}
	sp.byName = map[string]int{}
	for i, c := range o.Columns {
		name := strings.TrimSpace(c.Name)
		if name == "" {
			return KeySpec{}, fmt.Errorf("column %d: no name", i+1)
		}
		if _, dup := sp.byName[name]; dup {
			return KeySpec{}, fmt.Errorf("column %s: named twice", name)
		}
		sp.byName[name] = i
		sp.cols = append(sp.cols, sqlColumn{name: name, typ: strings.TrimSpace(c.Type), keyPos: -1})
	}
	for k, name := range o.Key {
		name = strings.TrimSpace(name)
		i, ok := sp.byName[name]
		if !ok {
			return KeySpec{}, fmt.Errorf("key column %s: not a column of the table", quote.Clip(name))
		}
		if sp.cols[i].keyPos >= 0 {
			return KeySpec{}, fmt.Errorf("key column %s: named twice in the key", name)
		}
		t, err := assign.ParseSQLType(sp.cols[i].typ)
		if err != nil {
			return KeySpec{}, fmt.Errorf("key column %s: %w", name, err)
		}
		sp.cols[i].keyPos = k
		sp.key = append(sp.key, i)
		sp.types = append(sp.types, t)
	}
	if sp.format == "raw" && len(sp.cols) != 1 {
		return KeySpec{}, fmt.Errorf("format raw: a raw table has exactly one physical column in the record %s, not %d", sp.from, len(sp.cols))
	}
	if err := sp.parseOptions(o.Options); err != nil {
		return KeySpec{}, err
	}
	for k, t := range sp.types {
		if err := sp.checkType(t); err != nil {
			return KeySpec{}, fmt.Errorf("key column %s %s: %v", sp.cols[sp.key[k]].name, t, err)
		}
	}
	if sp.format == "avro" || sp.format == "avro-confluent" {
		a, err := newAvroFormat(sp, o)
		if err != nil {
			return KeySpec{}, err
		}
		sp.avro = a
	}
	if _, err := assign.NewKeyRowEncoder(sp.types...); err != nil {
		return KeySpec{}, err
	}
	var d strings.Builder
	fmt.Fprintf(&d, "%s as %s, key (", sp.from, sp.format)
	for k, i := range sp.key {
		if k > 0 {
			d.WriteString(", ")
		}
		d.WriteString(sp.cols[i].name + " " + sp.types[k].Text())
	}
	d.WriteString(")")
	sp.desc = d.String()
	sp.pool.New = func() any {
		enc, _ := assign.NewKeyRowEncoder(sp.types...) // checked above
		return &sqlState{enc: enc, vals: make([]sqlVal, len(sp.key)), kv: make([]assign.KeyValue, len(sp.key)), seen: make([]bool, len(sp.cols))}
	}
	return KeySpec{From: sp.from, Format: sp.format, parsed: true, sql: sp}, nil
}

// checkType refuses the key types that the format cannot produce, as the
// format's factory does when the table is created.
func (sp *sqlSpec) checkType(t assign.SQLType) error {
	switch sp.format {
	case "raw":
		switch t.Root {
		case assign.SQLDate, assign.SQLTime, assign.SQLTimestamp, assign.SQLTimestampLTZ, assign.SQLDecimal:
			return fmt.Errorf("a type that Flink's raw format does not read (RawFormatDeserializationSchema)")
		}
	case "csv":
		if t.Root == assign.SQLTime && t.Precision > 3 {
			return fmt.Errorf("a precision beyond 3, which Flink's csv format does not read for TIME")
		}
	case "avro", "avro-confluent":
		if (t.Root == assign.SQLTimestamp || t.Root == assign.SQLTimestampLTZ) && t.Precision > 6 {
			return fmt.Errorf("a precision beyond 6, which Flink's avro format does not hold for timestamps (AvroSchemaConverter)")
		}
		if t.Root == assign.SQLTime && t.Precision > 3 {
			return fmt.Errorf("a precision beyond 3, which Flink's avro format does not hold for TIME (AvroSchemaConverter)")
		}
	}
	return nil
}

// parseOptions reads the format's WITH options that change decoding.
func (sp *sqlSpec) parseOptions(opts map[string]string) error {
	sp.delim, sp.quote, sp.charset, sp.bigEndian = ',', '"', "UTF-8", true
	prefix := strings.TrimSuffix(sp.format, "-confluent") + "."
	if sp.format == "avro-confluent" {
		prefix = "avro-confluent."
	}
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	boolOpt := func(name, v string) (bool, error) {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return false, fmt.Errorf("option %s%s: %s is not true or false", prefix, name, quote.Clip(v))
	}
	charOpt := func(name, v string) (byte, error) {
		u := v
		switch v {
		case `\t`:
			u = "\t"
		case `\n`:
			u = "\n"
		case `\\`:
			u = `\`
		}
		if len(u) != 1 {
			return 0, fmt.Errorf("option %s%s: %s is not one ASCII character", prefix, name, quote.Clip(v))
		}
		return u[0], nil
	}
	for _, k := range keys {
		v := opts[k]
		// The Kafka connector's key.json.… and value.json.… spellings too.
		name := strings.TrimSpace(k)
		other := map[string]string{"key": "value.", "value": "key."}[sp.from]
		if strings.HasPrefix(name, other) {
			continue // the other part's format
		}
		name = strings.TrimPrefix(strings.TrimPrefix(name, sp.from+"."), prefix)
		var err error
		switch sp.format + ":" + name {
		case "json:fail-on-missing-field":
			sp.failOnMissing, err = boolOpt(name, v)
		case "json:ignore-parse-errors", "csv:ignore-parse-errors":
			sp.ignoreErrors, err = boolOpt(name, v)
		case "json:timestamp-format.standard":
			switch strings.ToUpper(strings.TrimSpace(v)) {
			case "SQL":
			case "ISO-8601":
				sp.isoTimestamps = true
			default:
				err = fmt.Errorf("option %s%s: %s: want SQL or ISO-8601", prefix, name, quote.Clip(v))
			}
		case "json:decode.json-parser.enabled":
			var on bool
			if on, err = boolOpt(name, v); err == nil && !on {
				err = fmt.Errorf("option %s%s: only Flink's default JSON parser decoding (true) is reproduced", prefix, name)
			}
		case "json:zero-timestamp.behavior":
			if !strings.EqualFold(strings.TrimSpace(v), "FAIL") {
				err = fmt.Errorf("option %s%s: only FAIL (the default) is reproduced", prefix, name)
			}
		case "json:map-null-key.mode", "json:map-null-key.literal", "json:encode.decimal-as-plain-number",
			"json:encode.ignore-null-fields", "csv:write-bigdecimal-in-scientific-notation", "csv:array-element-delimiter",
			"avro:encoding", "avro:codec", "avro-confluent:url", "avro-confluent:subject", "avro-confluent:schema",
			"avro-confluent:properties", "avro-confluent:basic-auth.credentials-source", "avro-confluent:basic-auth.user-info",
			"avro-confluent:bearer-auth.credentials-source", "avro-confluent:bearer-auth.token",
			"avro-confluent:ssl.keystore.location", "avro-confluent:ssl.keystore.password",
			"avro-confluent:ssl.truststore.location", "avro-confluent:ssl.truststore.password":
			// writing only, or reached through SQLKeyOptions.Registry
			if sp.format+":"+name == "avro:encoding" && !strings.EqualFold(strings.TrimSpace(v), "binary") {
				err = fmt.Errorf("option %s%s: only binary encoding is read", prefix, name)
			}
		case "csv:field-delimiter":
			sp.delim, err = charOpt(name, v)
		case "csv:quote-character":
			sp.quote, err = charOpt(name, v)
		case "csv:disable-quote-character":
			var off bool
			if off, err = boolOpt(name, v); off {
				sp.quote = 0
			}
		case "csv:allow-comments":
			sp.comments, err = boolOpt(name, v)
		case "csv:escape-character":
			sp.escape, err = charOpt(name, v)
		case "csv:null-literal":
			sp.nullLiteral, sp.hasNullLiteral = v, true
		case "raw:charset":
			switch c := strings.ToUpper(strings.TrimSpace(v)); c {
			case "UTF-8", "UTF8":
				sp.charset = "UTF-8"
			case "ISO-8859-1", "LATIN1", "ISO8859_1":
				sp.charset = "ISO-8859-1"
			case "US-ASCII", "ASCII":
				sp.charset = "US-ASCII"
			default:
				err = fmt.Errorf("option %s%s: %s: UTF-8, ISO-8859-1 and US-ASCII are read", prefix, name, quote.Clip(v))
			}
		case "raw:endianness":
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "big-endian":
				sp.bigEndian = true
			case "little-endian":
				sp.bigEndian = false
			default:
				err = fmt.Errorf("option %s%s: %s: want big-endian or little-endian", prefix, name, quote.Clip(v))
			}
		case "raw:line-delimiter":
			err = fmt.Errorf("option %s%s: a record split into several rows is not sampled", prefix, name)
		default:
			err = fmt.Errorf("option %s: not an option of Flink's %s format that skewscope reads", quote.Clip(k), sp.format)
		}
		if err != nil {
			return err
		}
	}
	if sp.failOnMissing && sp.ignoreErrors {
		return fmt.Errorf("options json.fail-on-missing-field and json.ignore-parse-errors: Flink refuses both set (AbstractJsonDeserializationSchema)")
	}
	if sp.format == "csv" && sp.quote != 0 && sp.quote == sp.delim {
		return fmt.Errorf("option csv.quote-character: the same character as the field delimiter")
	}
	for _, t := range sp.types {
		if t.Root == assign.SQLDecimal {
			// AbstractJsonDeserializationSchema.open: USE_BIG_DECIMAL_FOR_FLOATS
			// when the row has a DECIMAL, which changes how a nested float
			// is written into a STRING column.
			sp.bigDecimalFloats = true
		}
	}
	return nil
}

// Key reads the key of one record of a SQL table: see ParseSQLKeySpec.
func (sp *sqlSpec) keyOf(recordKey, value []byte) (Key, error) {
	src := value
	if sp.from == "key" {
		src = recordKey
	}
	st := sp.pool.Get().(*sqlState)
	defer sp.pool.Put(st)
	for i := range st.vals {
		st.vals[i].reset()
	}
	var err error
	switch sp.format {
	case "json":
		err = sp.decodeJSON(st, src)
	case "csv":
		err = sp.decodeCSV(st, src)
	case "raw":
		err = sp.decodeRaw(st, src)
	default:
		err = sp.decodeAvro(st, src)
	}
	if err != nil {
		return Key{}, err
	}
	return sp.encode(st)
}

// skipped is the error for a record the format drops (returns no row for).
func (sp *sqlSpec) skipped(why string) error {
	return &SQLKeyError{Reason: fmt.Sprintf("Flink's %s format drops this record: %s", sp.format, why)}
}

// colErr is the error for a value of column i.
func (sp *sqlSpec) colErr(i int, reason string, value []byte) error {
	c := sp.cols[i]
	typ := c.typ
	if c.keyPos >= 0 {
		typ = sp.types[c.keyPos].Text()
	}
	e := &SQLKeyError{Column: c.name, Type: typ, Reason: reason}
	if value != nil {
		e.Value = quote.Clip(string(value))
	}
	return e
}

// encode hashes the decoded key values as their key row and writes the
// key's text.
func (sp *sqlSpec) encode(st *sqlState) (Key, error) {
	for k := range sp.types {
		st.kv[k] = keyValue(&sp.types[k], &st.vals[k])
	}
	h, err := st.enc.HashValues(st.kv)
	if err != nil {
		var kre *assign.KeyRowError
		if errors.As(err, &kre) && kre.Column >= 0 && kre.Column < len(sp.key) {
			return Key{}, sp.colErr(sp.key[kre.Column], kre.Reason, nil)
		}
		return Key{}, err
	}
	st.text = sp.appendText(st.text[:0], st)
	return Key{Text: string(st.text), Hash: h}, nil
}

// keyValue is v in the form of assign.KeyValue for a column of type t.
// Its Text views the decoded bytes without copying them: the encoder
// reads them within HashValues and keeps nothing.
func keyValue(t *assign.SQLType, v *sqlVal) assign.KeyValue {
	if v.null {
		return assign.KeyValue{Null: true}
	}
	kv := assign.KeyValue{Int: v.i, Nano: v.nano}
	switch t.Root {
	case assign.SQLChar, assign.SQLVarChar:
		if v.b == nil && v.js != nil {
			kv.Java = v.js
		} else {
			kv.Text = bytesString(v.b)
		}
	case assign.SQLBinary, assign.SQLVarBinary:
		kv.Text = bytesString(v.b)
	case assign.SQLDecimal:
		kv.Decimal = &v.dec
	}
	return kv
}

// bytesString views b as a string without copying it, for the encoder,
// which copies what it writes.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// appendText writes the key's text: for one column its value as
// assign.KeyRowEncoder.SetKeyText reads it, for several (or a value that
// text alone cannot carry: a null, a string that starts like an array or
// holds a lone surrogate) a JSON array of the values.
func (sp *sqlSpec) appendText(dst []byte, st *sqlState) []byte {
	if len(sp.types) == 1 {
		v, t := &st.vals[0], &sp.types[0]
		if !v.null && !needsArray(t, v) {
			return appendValText(dst, t, v, false)
		}
	}
	dst = append(dst, '[')
	for k := range sp.types {
		if k > 0 {
			dst = append(dst, ',')
		}
		dst = appendValText(dst, &sp.types[k], &st.vals[k], true)
	}
	return append(dst, ']')
}

func needsArray(t *assign.SQLType, v *sqlVal) bool {
	if t.Root != assign.SQLChar && t.Root != assign.SQLVarChar {
		return false
	}
	if v.b == nil && v.js != nil {
		return true
	}
	s := v.b
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	return len(s) > 0 && s[0] == '['
}

// appendValText writes one value as SetKeyText reads it: in an array,
// strings quoted with JSON escapes (a lone surrogate as \uXXXX) and null
// as null.
func appendValText(dst []byte, t *assign.SQLType, v *sqlVal, inArray bool) []byte {
	if v.null {
		return append(dst, "null"...)
	}
	str := func(dst []byte, s []byte) []byte {
		if !inArray {
			return append(dst, s...)
		}
		return appendJSONString(dst, s)
	}
	switch t.Root {
	case assign.SQLBoolean:
		return strconv.AppendBool(dst, v.i != 0)
	case assign.SQLTinyInt, assign.SQLSmallInt, assign.SQLInt, assign.SQLBigInt:
		return strconv.AppendInt(dst, v.i, 10)
	case assign.SQLFloat, assign.SQLDouble:
		f, bits := math.Float64frombits(uint64(v.i)), 64
		if t.Root == assign.SQLFloat {
			f, bits = float64(math.Float32frombits(uint32(v.i))), 32
		}
		var s string
		switch {
		case math.IsNaN(f):
			s = "NaN"
		case math.IsInf(f, 1):
			s = "Infinity"
		case math.IsInf(f, -1):
			s = "-Infinity"
		default:
			return strconv.AppendFloat(dst, f, 'g', -1, bits)
		}
		return str(dst, []byte(s))
	case assign.SQLChar, assign.SQLVarChar:
		if v.b == nil && v.js != nil {
			if inArray {
				return appendJavaJSONBytes(dst, v.js)
			}
			return append(dst, v.js.String()...)
		}
		if v.notUTF8 {
			return str(dst, []byte(assign.JavaText(string(v.b))))
		}
		return str(dst, v.b)
	case assign.SQLBinary, assign.SQLVarBinary:
		if inArray {
			dst = append(dst, '"')
		}
		for _, c := range v.b {
			dst = append(dst, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		}
		if inArray {
			dst = append(dst, '"')
		}
		return dst
	case assign.SQLDate:
		if inArray {
			dst = append(dst, '"')
		}
		dst = appendDate(dst, int64(v.i))
		if inArray {
			dst = append(dst, '"')
		}
		return dst
	case assign.SQLTime:
		if inArray {
			dst = append(dst, '"')
		}
		dst = appendClock(dst, v.i*1_000_000)
		if inArray {
			dst = append(dst, '"')
		}
		return dst
	case assign.SQLTimestamp, assign.SQLTimestampLTZ:
		if inArray {
			dst = append(dst, '"')
		}
		days := floorDiv(v.i, 86_400_000)
		dst = appendDate(dst, days)
		dst = append(dst, ' ')
		nano := int64(v.nano)
		if t.Precision <= 3 {
			nano = 0 // a compact TIMESTAMP writes its milliseconds only
		}
		dst = appendClock(dst, (v.i-days*86_400_000)*1_000_000+nano)
		if t.Root == assign.SQLTimestampLTZ {
			dst = append(dst, 'Z')
		}
		if inArray {
			dst = append(dst, '"')
		}
		return dst
	case assign.SQLDecimal:
		return appendDecimal(dst, &v.dec, t.Scale)
	}
	return dst
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func appendDate(dst []byte, days int64) []byte {
	y, m, d := civilFromDays(days)
	if y < 0 {
		dst = append(dst, '-')
		y = -y
	}
	dst = appendPadded(dst, y, 4)
	dst = append(dst, '-')
	dst = appendPadded(dst, int64(m), 2)
	dst = append(dst, '-')
	return appendPadded(dst, int64(d), 2)
}

// appendClock writes hh:mm:ss and, when not zero, the fraction without its
// trailing zeros.
func appendClock(dst []byte, nanoOfDay int64) []byte {
	s := nanoOfDay / 1_000_000_000
	dst = appendPadded(dst, s/3600, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, s/60%60, 2)
	dst = append(dst, ':')
	dst = appendPadded(dst, s%60, 2)
	if f := nanoOfDay % 1_000_000_000; f != 0 {
		dst = append(dst, '.')
		n := len(dst)
		dst = appendPadded(dst, f, 9)
		end := len(dst)
		for end > n+1 && dst[end-1] == '0' {
			end--
		}
		dst = dst[:end]
	}
	return dst
}

func appendPadded(dst []byte, v int64, width int) []byte {
	var tmp [20]byte
	s := strconv.AppendInt(tmp[:0], v, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// appendDecimal writes the unscaled value u at scale as a plain decimal.
func appendDecimal(dst []byte, u *big.Int, scale int) []byte {
	var tmp [48]byte
	s := u.Append(tmp[:0], 10)
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		dst = append(dst, '-')
		s = s[1:]
	}
	if scale == 0 {
		return append(dst, s...)
	}
	for len(s) <= scale {
		s = append([]byte{'0'}, s...)
	}
	dst = append(dst, s[:len(s)-scale]...)
	dst = append(dst, '.')
	return append(dst, s[len(s)-scale:]...)
}

// appendJSONString writes s (UTF-8) as a JSON string literal.
func appendJSONString(dst []byte, s []byte) []byte {
	dst = append(dst, '"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c < 0x20:
			dst = append(dst, `\u00`...)
			dst = append(dst, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return append(dst, '"')
}

// appendJavaJSONBytes is appendJavaJSON for a byte slice: surrogate pairs as
// UTF-8, a lone surrogate as a \u escape.
func appendJavaJSONBytes(dst []byte, s assign.JavaString) []byte {
	var b strings.Builder
	appendJavaJSON(&b, s)
	return append(dst, b.String()...)
}

// decodeRaw reads the part as Flink's raw format does: one column, the
// whole part (a null part is a null value).
//
// Mirrors RawFormatDeserializationSchema.deserialize and createConverter.
func (sp *sqlSpec) decodeRaw(st *sqlState, src []byte) error {
	v := &st.vals[0]
	if src == nil {
		v.null = true
		return nil
	}
	t := sp.types[0]
	size := map[assign.SQLTypeRoot]int{assign.SQLBoolean: 1, assign.SQLTinyInt: 1, assign.SQLSmallInt: 2, assign.SQLInt: 4,
		assign.SQLBigInt: 8, assign.SQLFloat: 4, assign.SQLDouble: 8}[t.Root]
	if size > 0 && len(src) != size {
		return sp.colErr(0, fmt.Sprintf("the raw format reads %d bytes for this type (DataLengthValidator)", size), nil)
	}
	u := func() uint64 {
		var x uint64
		for i := range src {
			j := i
			if !sp.bigEndian {
				j = len(src) - 1 - i
			}
			x = x<<8 | uint64(src[j])
		}
		return x
	}
	switch t.Root {
	case assign.SQLBoolean:
		if src[0] != 0 {
			v.i = 1
		}
	case assign.SQLTinyInt:
		v.i = int64(int8(src[0]))
	case assign.SQLSmallInt:
		v.i = int64(int16(u()))
	case assign.SQLInt:
		v.i = int64(int32(u()))
	case assign.SQLBigInt, assign.SQLDouble:
		v.i = int64(u())
	case assign.SQLFloat:
		v.i = int64(uint32(u()))
	case assign.SQLBinary, assign.SQLVarBinary:
		v.b = src
	case assign.SQLChar, assign.SQLVarChar:
		switch sp.charset {
		case "UTF-8":
			// StringData.fromBytes: the bytes as they are.
			v.b, v.notUTF8 = src, !utf8.Valid(src)
		case "ISO-8859-1":
			v.buf = v.buf[:0]
			for _, c := range src {
				v.buf = utf8.AppendRune(v.buf, rune(c))
			}
			v.b = v.buf
		default: // US-ASCII: new String replaces each byte >= 0x80 by U+FFFD
			v.buf = v.buf[:0]
			for _, c := range src {
				if c < 0x80 {
					v.buf = append(v.buf, c)
				} else {
					v.buf = utf8.AppendRune(v.buf, utf8.RuneError)
				}
			}
			v.b = v.buf
		}
	}
	return nil
}
