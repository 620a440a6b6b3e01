package keysample

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/skewscope/skewscope/assign"
	"github.com/skewscope/skewscope/internal/quote"
)

// KeySpec says how the job derives its key from a record, as the user chose
// it. Make one with ParseKeySpec.
type KeySpec struct {
	// From is "key" (the Kafka record key) or "value".
	From string
	// Format is how the bytes are read:
	//   - "string": UTF-8 text exactly as Flink's SimpleStringSchema (and
	//     Kafka's StringDeserializer) decode it, new String(bytes, UTF_8),
	//     each malformed sequence becoming one U+FFFD by the JDK's rule;
	//   - "int": 4 bytes, big-endian (Kafka's IntegerDeserializer);
	//   - "long": 8 bytes, big-endian (Kafka's LongDeserializer);
	//   - "json": a field of a JSON object, named by Path;
	//   - "csv": a column of a CSV line, named by Path.
	Format string
	// Path is, for json, a dotted field path ("customer.id", "items.0.sku":
	// a number steps into an array); for csv, a 0-based column number. For a
	// tuple Type, one path or column per tuple field, separated by commas
	// ("customer.id,region" or "0,3"). Empty for the other formats.
	Path string
	// Type is how the key is typed for hashing: for string, json and csv any
	// type assign.ParseKeyType accepts (a tuple only for json and csv); int
	// for the int format and long for the long format. A JSON number keyed
	// as long hashes as Java's Long.hashCode.
	Type assign.KeyType

	parsed   bool
	sql      *sqlSpec   // a Flink SQL table's key (ParseSQLKeySpec), or nil
	jsonPath [][]string // per tuple field (one for a scalar): the path's segments
	csvCols  []int      // per tuple field (one for a scalar): the column
}

// Key is one record's key: Text as it is shown to users and Hash, the Java
// hashCode that Flink's keyBy hashes into a key group. For every key but a
// JSON string holding an escaped lone surrogate (shown as U+FFFD),
// assign.HashKey(spec.Type, Text) == Hash. A tuple key's Text is a JSON array,
// as assign.HashKey takes it.
type Key struct {
	Text string
	Hash int32
}

// The formats of a KeySpec.
var formats = []string{"string", "int", "long", "json", "csv"}

// ParseKeySpec checks and normalises the user's choice of where the key is
// (from: "key" or "value"), how it is read (format: string, int, long, json
// or csv), the json path or csv column (path) and how the extracted text is
// typed (typ, as assign.ParseKeyType; empty means string, or int and long
// for those formats). The error names the part that is wrong.
func ParseKeySpec(from, format, path, typ string) (KeySpec, error) {
	var s KeySpec
	switch f := strings.ToLower(strings.TrimSpace(from)); f {
	case "key", "value":
		s.From = f
	default:
		return KeySpec{}, fmt.Errorf("key from %s: want key (the record key) or value", quote.Clip(from))
	}
	s.Format = strings.ToLower(strings.TrimSpace(format))
	if !slices.Contains(formats, s.Format) {
		return KeySpec{}, fmt.Errorf("key format %s: want string, int, long, json or csv", quote.Clip(format))
	}
	s.Path = strings.TrimSpace(path)
	typ = strings.TrimSpace(typ)
	switch s.Format {
	case "string", "int", "long":
		if s.Path != "" {
			return KeySpec{}, fmt.Errorf("key path %s: the %s format takes no path (only json and csv do)", quote.Clip(path), s.Format)
		}
	default:
		if s.Path == "" {
			return KeySpec{}, fmt.Errorf("key path: the %s format needs a %s", s.Format, map[string]string{"json": "field path such as customer.id", "csv": "column number such as 0"}[s.Format])
		}
	}
	if typ == "" {
		typ = map[string]string{"int": "int", "long": "long"}[s.Format]
		if typ == "" {
			typ = "string"
		}
	}
	t, err := assign.ParseKeyType(typ)
	if err != nil {
		return KeySpec{}, err
	}
	s.Type = t
	switch s.Format {
	case "int", "long":
		if t.Kind != assign.Kind(s.Format) {
			return KeySpec{}, fmt.Errorf("key type %s: the %s format is a %d-byte big-endian %s, typed %s", quote.Clip(typ), s.Format,
				map[string]int{"int": 4, "long": 8}[s.Format], map[string]string{"int": "Integer", "long": "Long"}[s.Format], s.Format)
		}
	case "string":
		if t.Kind == assign.KindTuple {
			return KeySpec{}, fmt.Errorf("key type %s: a tuple key is read from json fields or csv columns, not from one string", quote.Clip(typ))
		}
	}
	if s.Format == "json" || s.Format == "csv" {
		parts := strings.Split(s.Path, ",")
		want := 1
		if t.Kind == assign.KindTuple {
			want = len(t.Fields)
		}
		if len(parts) != want {
			what := map[string]string{"json": "field paths", "csv": "columns"}[s.Format]
			if t.Kind == assign.KindTuple {
				return KeySpec{}, fmt.Errorf("key path %s: type %s needs %d %s separated by commas, got %d", quote.Clip(path), t, want, what, len(parts))
			}
			return KeySpec{}, fmt.Errorf("key path %s: type %s takes one %s, got %d (a key of several needs a tuple type)", quote.Clip(path), t, strings.TrimSuffix(what, "s"), len(parts))
		}
		for i, p := range parts {
			p = strings.TrimSpace(p)
			parts[i] = p
			if s.Format == "json" {
				segs := strings.Split(p, ".")
				for j, seg := range segs {
					if seg == "" {
						return KeySpec{}, fmt.Errorf("key path %s: field name %d of %s is empty", quote.Clip(path), j+1, quote.Clip(p))
					}
				}
				s.jsonPath = append(s.jsonPath, segs)
				continue
			}
			c, err := strconv.Atoi(p)
			if err != nil || c < 0 || strings.HasPrefix(p, "+") {
				return KeySpec{}, fmt.Errorf("key path %s: column %s is not a column number (0 is the first column)", quote.Clip(path), quote.Clip(p))
			}
			s.csvCols = append(s.csvCols, c)
		}
		s.Path = strings.Join(parts, ",")
	}
	s.parsed = true
	return s, nil
}

// String returns the spec as short canonical text for URLs and notes:
// "key:string", "value:long", "value:json:customer.id:long",
// "value:csv:0,3:tuple<string,int>".
//
// A SQL spec (ParseSQLKeySpec) describes its part, format and key columns:
// "value as json, key (user_id STRING, region_id BIGINT)".
func (s KeySpec) String() string {
	if s.sql != nil {
		return s.sql.desc
	}
	t := s.Type.String()
	if t == "" {
		t = "string"
	}
	if s.Path == "" {
		if t == s.Format || s.Format == "string" && t == "string" {
			return s.From + ":" + s.Format
		}
		return s.From + ":" + s.Format + ":" + t
	}
	return s.From + ":" + s.Format + ":" + s.Path + ":" + t
}

// Key extracts the key of one record from its Kafka record key and value.
// A nil slice is a null (absent) key or value, an empty non-nil one is
// empty. The error says what was wrong, such as "value is not JSON: ...",
// "field customer.id not found", "CSV line has 3 columns, column 5 asked" or
// "record key is 3 bytes, an int key needs 4"; a null key (Flink rejects
// one) is an error that wraps assign.ErrNullKey.
//
// For a SQL spec (ParseSQLKeySpec) the key is the table's key row: Hash is
// its BinaryRowData.hashCode, Text the value of the one key column or a JSON
// array of the values (null as null), as assign.KeyRowEncoder.SetKeyText
// reads it; the error is a *SQLKeyError naming the column. Key is safe for
// concurrent use.
func (s KeySpec) Key(recordKey, value []byte) (Key, error) {
	if s.sql != nil {
		return s.sql.keyOf(recordKey, value)
	}
	if !s.parsed {
		p, err := ParseKeySpec(s.From, s.Format, s.Path, s.Type.String())
		if err != nil {
			return Key{}, err
		}
		s = p
	}
	src, name := value, "value"
	if s.From == "key" {
		src, name = recordKey, "record key"
	}
	if src == nil {
		return Key{}, nullKey("the " + name + " is null")
	}
	switch s.Format {
	case "int":
		if len(src) != 4 {
			return Key{}, fmt.Errorf("%s is %d bytes, an int key needs 4", name, len(src))
		}
		v := int32(binary.BigEndian.Uint32(src))
		return Key{Text: strconv.FormatInt(int64(v), 10), Hash: assign.IntHashCode(v)}, nil
	case "long":
		if len(src) != 8 {
			return Key{}, fmt.Errorf("%s is %d bytes, a long key needs 8", name, len(src))
		}
		v := int64(binary.BigEndian.Uint64(src))
		return Key{Text: strconv.FormatInt(v, 10), Hash: assign.LongHashCode(v)}, nil
	case "string":
		text := assign.JavaText(string(src))
		k, err := scalarKey(s.Type.Kind, text)
		if err != nil {
			return Key{}, fmt.Errorf("%s: %v", name, err)
		}
		return k, nil
	case "json":
		return s.jsonKey(src, name)
	case "csv":
		return s.csvKey(assign.JavaText(string(src)))
	}
	return Key{}, fmt.Errorf("key format %s: want string, int, long, json or csv", quote.Clip(s.Format))
}

func nullKey(what string) error {
	return fmt.Errorf("null key: %s (Flink: %w)", what, assign.ErrNullKey)
}

// scalarKey types text as a scalar key of kind k.
func scalarKey(k assign.Kind, text string) (Key, error) {
	if k == assign.KindString {
		return Key{Text: text, Hash: assign.StringHashCode(text)}, nil
	}
	h, err := assign.HashKey(assign.KeyType{Kind: k}, text)
	if err != nil {
		return Key{}, err
	}
	return Key{Text: text, Hash: h}, nil
}

// jsonKey reads the key from the JSON object in src.
func (s KeySpec) jsonKey(src []byte, name string) (Key, error) {
	var root json.RawMessage
	if err := json.Unmarshal(src, &root); err != nil {
		return Key{}, fmt.Errorf("%s is not JSON: %v", name, err)
	}
	if s.Type.Kind != assign.KindTuple {
		leaf, err := jsonField(root, s.jsonPath[0], name)
		if err != nil {
			return Key{}, err
		}
		return jsonScalarKey(s.Type.Kind, leaf, s.Path)
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, segs := range s.jsonPath {
		leaf, err := jsonField(root, segs, name)
		if err != nil {
			return Key{}, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		field := strings.Join(segs, ".")
		switch leaf[0] {
		case '{', '[':
			return Key{}, fmt.Errorf("field %s is %s, not a key", field, jsonKind(leaf))
		case '"':
			js, err := assign.UnquoteJSONString(string(leaf))
			if err != nil {
				return Key{}, fmt.Errorf("field %s: %v", field, err)
			}
			appendJavaJSON(&b, js)
		default: // number, boolean, null (a null field hashes 0, as assign.HashTuple)
			b.Write(leaf)
		}
	}
	b.WriteByte(']')
	text := b.String()
	h, err := assign.HashKey(s.Type, text)
	if err != nil {
		return Key{}, fmt.Errorf("fields %s: %v", s.Path, err)
	}
	return Key{Text: text, Hash: h}, nil
}

// jsonField follows segs from root and returns the value found, trimmed.
func jsonField(root json.RawMessage, segs []string, name string) (json.RawMessage, error) {
	cur := trimJSON(root)
	parent := "the " + name
	for i, seg := range segs {
		field := strings.Join(segs, ".")
		switch cur[0] {
		case '{':
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(cur, &obj); err != nil {
				return nil, fmt.Errorf("field %s: %v", field, err)
			}
			v, ok := obj[seg]
			if !ok {
				if i == 0 {
					return nil, fmt.Errorf("field %s not found", field)
				}
				return nil, fmt.Errorf("field %s not found: %s has no field %s", field, parent, quote.Clip(seg))
			}
			cur = trimJSON(v)
		case '[':
			var arr []json.RawMessage
			if err := json.Unmarshal(cur, &arr); err != nil {
				return nil, fmt.Errorf("field %s: %v", field, err)
			}
			n, err := strconv.Atoi(seg)
			if err != nil || n < 0 || strings.HasPrefix(seg, "+") {
				return nil, fmt.Errorf("field %s not found: %s is an array and %s is not an index", field, parent, quote.Clip(seg))
			}
			if n >= len(arr) {
				return nil, fmt.Errorf("field %s not found: %s has %d elements", field, parent, len(arr))
			}
			cur = trimJSON(arr[n])
		default:
			return nil, fmt.Errorf("field %s not found: %s is %s, not an object", field, parent, jsonKind(cur))
		}
		parent = strings.Join(segs[:i+1], ".")
	}
	return cur, nil
}

func trimJSON(raw json.RawMessage) json.RawMessage {
	return json.RawMessage(strings.TrimSpace(string(raw)))
}

// jsonKind names the kind of a valid, trimmed JSON value, with its article.
func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// jsonScalarKey types one JSON value as a scalar key of kind k: a string as
// Jackson decodes it (an escaped lone surrogate stays one char), a number by
// its text (so a long is Java's Long.hashCode of its value).
func jsonScalarKey(k assign.Kind, leaf json.RawMessage, field string) (Key, error) {
	switch leaf[0] {
	case 'n':
		return Key{}, nullKey("field " + field + " is null")
	case '{', '[':
		return Key{}, fmt.Errorf("field %s is %s, not a key", field, jsonKind(leaf))
	case '"':
		js, err := assign.UnquoteJSONString(string(leaf))
		if err != nil {
			return Key{}, fmt.Errorf("field %s: %v", field, err)
		}
		h, err := assign.HashKeyJava(assign.KeyType{Kind: k}, js)
		if err != nil {
			return Key{}, fmt.Errorf("field %s: %v", field, err)
		}
		return Key{Text: js.String(), Hash: h}, nil
	}
	text := string(leaf)
	if k == assign.KindString && leaf[0] != 't' && leaf[0] != 'f' {
		// Jackson's asText of an integer node is its value in decimal, which
		// is the JSON text but for -0; of a fractional one, Java's
		// Double.toString, which is not reproduced here.
		if strings.ContainsAny(text, ".eE") {
			return Key{}, fmt.Errorf("field %s is the number %s: only an integer number is keyed as string; key it as double or long", field, quote.Clip(text))
		}
		if text == "-0" {
			text = "0"
		}
	}
	key, err := scalarKey(k, text)
	if err != nil {
		return Key{}, fmt.Errorf("field %s: %v", field, err)
	}
	return key, nil
}

// appendJavaJSON writes the Java string s as a JSON string literal that
// assign.UnquoteJSONString reads back to the same code units: surrogate
// pairs and other text as UTF-8, a lone surrogate and control characters
// as \u escapes.
func appendJavaJSON(b *strings.Builder, s assign.JavaString) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		u := s[i]
		switch {
		case u == '"' || u == '\\':
			b.WriteByte('\\')
			b.WriteByte(byte(u))
		case u < 0x20:
			fmt.Fprintf(b, `\u%04x`, u)
		case u < utf8.RuneSelf:
			b.WriteByte(byte(u))
		case utf16.IsSurrogate(rune(u)):
			if i+1 < len(s) {
				if r := utf16.DecodeRune(rune(u), rune(s[i+1])); r != utf8.RuneError {
					b.WriteRune(r)
					i++
					continue
				}
			}
			fmt.Fprintf(b, `\u%04x`, u)
		default:
			b.WriteRune(rune(u))
		}
	}
	b.WriteByte('"')
}

// csvKey reads the key from the CSV line text.
func (s KeySpec) csvKey(line string) (Key, error) {
	line = strings.TrimSuffix(line, "\n")
	line = strings.TrimSuffix(line, "\r")
	fields, err := splitCSV(line)
	if err != nil {
		return Key{}, err
	}
	for _, c := range s.csvCols {
		if c >= len(fields) {
			return Key{}, fmt.Errorf("CSV line has %d columns, column %d asked", len(fields), c)
		}
	}
	if s.Type.Kind != assign.KindTuple {
		k, err := scalarKey(s.Type.Kind, fields[s.csvCols[0]])
		if err != nil {
			return Key{}, fmt.Errorf("column %d: %v", s.csvCols[0], err)
		}
		return k, nil
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, c := range s.csvCols {
		if i > 0 {
			b.WriteByte(',')
		}
		appendJavaJSON(&b, assign.JavaString(utf16.Encode([]rune(fields[c]))))
	}
	b.WriteByte(']')
	text := b.String()
	h, err := assign.HashKey(s.Type, text)
	if err != nil {
		return Key{}, fmt.Errorf("columns %s: %v", s.Path, err)
	}
	return Key{Text: text, Hash: h}, nil
}

// splitCSV splits one CSV line (RFC 4180, comma-separated): a field that
// starts with a double quote runs to the closing quote, "" standing for one
// quote; other fields are taken as they are, quotes and spaces included.
func splitCSV(line string) ([]string, error) {
	var fields []string
	for i := 0; ; {
		if i < len(line) && line[i] == '"' {
			var b strings.Builder
			j := i + 1
			for {
				q := strings.IndexByte(line[j:], '"')
				if q < 0 {
					return nil, fmt.Errorf("CSV line: column %d opens a quote that is not closed", len(fields))
				}
				b.WriteString(line[j : j+q])
				j += q + 1
				if j < len(line) && line[j] == '"' {
					b.WriteByte('"')
					j++
					continue
				}
				break
			}
			fields = append(fields, b.String())
			if j == len(line) {
				return fields, nil
			}
			if line[j] != ',' {
				return nil, fmt.Errorf("CSV line: column %d has text after its closing quote", len(fields)-1)
			}
			i = j + 1
			continue
		}
		c := strings.IndexByte(line[i:], ',')
		if c < 0 {
			return append(fields, line[i:]), nil
		}
		fields = append(fields, line[i:i+c])
		i += c + 1
	}
}
