package assign

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// keyRowShape is one (maxParallelism, parallelism) pair of key_row.csv.
type keyRowShape struct{ maxP, p int }

// keyRowShapes reads the shapes from key_row.csv's header: after the six
// fixed columns, key_group_<maxP> and subtask_<maxP>_<p> in pairs.
func keyRowShapes(t *testing.T, header []string) []keyRowShape {
	t.Helper()
	fixed := []string{"key", "types", "values", "text", "row_hex", "hash_code"}
	for i, h := range fixed {
		if header[i] != h {
			t.Fatalf("key_row.csv: column %d is %q, want %q", i, header[i], h)
		}
	}
	kgCol := regexp.MustCompile(`^key_group_(\d+)$`)
	opCol := regexp.MustCompile(`^subtask_(\d+)_(\d+)$`)
	var shapes []keyRowShape
	for i := len(fixed); i+1 < len(header); i += 2 {
		k, o := kgCol.FindStringSubmatch(header[i]), opCol.FindStringSubmatch(header[i+1])
		if k == nil || o == nil || k[1] != o[1] {
			t.Fatalf("key_row.csv: columns %q, %q are not key_group_M, subtask_M_P", header[i], header[i+1])
		}
		shapes = append(shapes, keyRowShape{atoi(t, o[1]), atoi(t, o[2])})
	}
	if len(shapes) == 0 || len(fixed)+2*len(shapes) != len(header) {
		t.Fatalf("key_row.csv: header %q has no shapes", header)
	}
	return shapes
}

// keyRowCase is one key of key_row.csv, decoded.
type keyRowCase struct {
	label  string
	types  []SQLType
	values []json.RawMessage
	texts  []*string
	row    []byte
	hash   int32
	routes [][2]int // key group, subtask per shape
}

// TestGoldenKeyRows checks every key of key_row.csv, written by Flink's own
// planner key selector (KeySelectorUtil.getRowDataSelector), byte for byte:
// the row, BinaryRowData.hashCode, and the key group and subtask at each
// shape. Each key is written three ways where it can be: by the value's
// exact form (AppendFloatBits, AppendJavaString, AppendBigDecimal, ...), by
// the plain Go form (AppendDouble, AppendString, AppendDecimal), and from
// the text Flink prints (AppendText). One encoder per list of types is
// reused for all its keys, as Flink reuses its writer.
func TestGoldenKeyRows(t *testing.T) {
	dir := filepath.Join("testdata", "golden")
	header := readGoldenHeader(t, dir, "key_row.csv")
	shapes := keyRowShapes(t, header)
	rows := readGolden(t, dir, "key_row.csv", header...)
	encoders := map[string]*KeyRowEncoder{}
	perType := map[string]int{}
	valueOf, nullOf := map[SQLTypeRoot]bool{}, map[SQLTypeRoot]bool{}
	nulls, textChecked := 0, 0
	for _, r := range rows {
		c := decodeKeyRowCase(t, r, shapes)
		sig := r[1]
		e := encoders[sig]
		if e == nil {
			var err error
			if e, err = NewKeyRowEncoder(c.types...); err != nil {
				t.Fatalf("%s: NewKeyRowEncoder(%v): %v", c.label, c.types, err)
			}
			encoders[sig] = e
		}
		for i, typ := range c.types {
			name := typ.String()
			if len(c.types) > 1 {
				name = "composite"
			}
			if i == 0 {
				perType[name]++
			}
			if string(c.values[i]) == "null" {
				nulls++
				nullOf[typ.Root] = true
			} else {
				valueOf[typ.Root] = true
			}
		}
		for _, way := range []string{"exact", "plain", "text"} {
			if way == "text" && !c.hasText() {
				continue
			}
			e.Reset()
			for i := range c.types {
				if err := appendGoldenValue(e, way, c.types[i], c.values[i], c.texts[i]); err != nil {
					t.Fatalf("%s: column %d (%s) by %s form %s: %v", c.label, i, c.types[i], way, c.values[i], err)
				}
			}
			if way == "text" {
				textChecked++
			}
			checkKeyRowCase(t, e, c, way, shapes)
		}
		checkKeyRowValues(t, e, c, shapes)
	}
	for r := SQLBoolean; r <= SQLDecimal; r++ {
		if !valueOf[r] || !nullOf[r] {
			t.Errorf("key_row.csv: type root %d (%s) has a value: %v, a null: %v; want both", r, SQLType{Root: r, Length: 1, Precision: 1}, valueOf[r], nullOf[r])
		}
	}
	if len(rows) < 250 {
		t.Errorf("key_row.csv has %d keys, want the full set (at least 250)", len(rows))
	}
	t.Logf("%d keys (%d null columns), %d also from text; first column's type: %v", len(rows), nulls, textChecked, perType)
}

// readGoldenHeader returns the header line of a golden CSV (whose names
// need no quoting).
func readGoldenHeader(t *testing.T, dir, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return strings.Split(line, ",")
}

func decodeKeyRowCase(t *testing.T, r []string, shapes []keyRowShape) keyRowCase {
	t.Helper()
	c := keyRowCase{label: r[0]}
	var typeNames []string
	if err := json.Unmarshal([]byte(r[1]), &typeNames); err != nil {
		t.Fatalf("%s: types %s: %v", c.label, r[1], err)
	}
	for _, n := range typeNames {
		typ, err := ParseSQLType(n)
		if err != nil {
			t.Fatalf("%s: ParseSQLType(%q): %v", c.label, n, err)
		}
		if typ.String() != n {
			t.Errorf("ParseSQLType(%q).String() = %q, want Flink's spelling back", n, typ.String())
		}
		c.types = append(c.types, typ)
	}
	if err := json.Unmarshal([]byte(r[2]), &c.values); err != nil {
		t.Fatalf("%s: values %s: %v", c.label, r[2], err)
	}
	if err := json.Unmarshal([]byte(r[3]), &c.texts); err != nil {
		t.Fatalf("%s: text %s: %v", c.label, r[3], err)
	}
	if len(c.values) != len(c.types) || len(c.texts) != len(c.types) {
		t.Fatalf("%s: %d types, %d values, %d texts", c.label, len(c.types), len(c.values), len(c.texts))
	}
	var err error
	if c.row, err = hex.DecodeString(r[4]); err != nil {
		t.Fatalf("%s: row_hex: %v", c.label, err)
	}
	c.hash = int32(atoi(t, r[5]))
	for i := range shapes {
		c.routes = append(c.routes, [2]int{atoi(t, r[6+2*i]), atoi(t, r[7+2*i])})
	}
	return c
}

// hasText reports whether every non-null value has a text form.
func (c keyRowCase) hasText() bool {
	for i, v := range c.values {
		if string(v) != "null" && c.texts[i] == nil {
			return false
		}
	}
	return true
}

// appendGoldenValue appends one value of key_row.csv: "exact" by the form
// that carries every bit, "plain" by the Go form a caller would have, "text"
// by AppendText.
func appendGoldenValue(e *KeyRowEncoder, way string, typ SQLType, raw json.RawMessage, text *string) error {
	if string(raw) == "null" {
		return e.AppendNull()
	}
	if way == "text" {
		return e.AppendText(*text)
	}
	switch typ.Root {
	case SQLBoolean:
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return err
		}
		return e.AppendBoolean(b)
	case SQLTinyInt, SQLSmallInt, SQLInt, SQLBigInt, SQLDate, SQLTime:
		v, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return err
		}
		switch typ.Root {
		case SQLDate:
			return e.AppendDate(int32(v))
		case SQLTime:
			return e.AppendTime(int32(v))
		}
		return e.AppendInt(v)
	case SQLFloat, SQLDouble:
		var h string
		if err := json.Unmarshal(raw, &h); err != nil {
			return err
		}
		b, err := strconv.ParseUint(h, 16, 64)
		if err != nil {
			return err
		}
		if typ.Root == SQLFloat {
			f := math.Float32frombits(uint32(b))
			if way == "plain" && (f == f || b == javaFloatNaN) {
				return e.AppendFloat(f)
			}
			return e.AppendFloatBits(uint32(b))
		}
		d := math.Float64frombits(b)
		if way == "plain" && (d == d || b == javaDoubleNaN) {
			return e.AppendDouble(d)
		}
		return e.AppendDoubleBits(b)
	case SQLChar, SQLVarChar:
		js, err := UnquoteJSONString(string(raw))
		if err != nil {
			return err
		}
		if way == "plain" && !js.HasLoneSurrogate() {
			return e.AppendString(js.String())
		}
		return e.AppendJavaString(js)
	case SQLBinary, SQLVarBinary:
		var h string
		if err := json.Unmarshal(raw, &h); err != nil {
			return err
		}
		b, err := hex.DecodeString(h)
		if err != nil {
			return err
		}
		return e.AppendBytes(b)
	case SQLTimestamp, SQLTimestampLTZ:
		var ts [2]int64
		if err := json.Unmarshal(raw, &ts); err != nil {
			return err
		}
		return e.AppendTimestamp(ts[0], int32(ts[1]))
	case SQLDecimal:
		var plain string
		if err := json.Unmarshal(raw, &plain); err != nil {
			return err
		}
		u, err := parseSQLDecimal(plain, typ.Precision, typ.Scale)
		if err != nil {
			return err
		}
		if way == "plain" && u.IsInt64() {
			return e.AppendDecimal(u.Int64())
		}
		return e.AppendBigDecimal(u)
	}
	return fmt.Errorf("no golden decoding for %s", typ)
}

func checkKeyRowCase(t *testing.T, e *KeyRowEncoder, c keyRowCase, way string, shapes []keyRowShape) {
	t.Helper()
	got, err := e.Bytes()
	if err != nil {
		t.Fatalf("%s (%s): Bytes: %v", c.label, way, err)
	}
	if !bytes.Equal(got, c.row) {
		t.Errorf("%s (%s): row = %x, want %x", c.label, way, got, c.row)
		return
	}
	if h, err := e.HashCode(); err != nil || h != c.hash {
		t.Errorf("%s (%s): HashCode() = %d, %v, want %d", c.label, way, h, err, c.hash)
	}
	if h, err := HashKeyRow(c.row); err != nil || h != c.hash {
		t.Errorf("HashKeyRow(%x) = %d, %v, want %d", c.row, h, err, c.hash)
	}
	for i, s := range shapes {
		kg, op, err := e.Route(s.maxP, s.p)
		if err != nil || kg != c.routes[i][0] || op != c.routes[i][1] {
			t.Errorf("%s (%s): Route(%d, %d) = %d, %d, %v, want %d, %d", c.label, way, s.maxP, s.p, kg, op, err, c.routes[i][0], c.routes[i][1])
		}
	}
}

// checkKeyRowValues checks HashValues and RouteValues of the key given
// whole, by the exact form of each value, against the row's hash and
// routes.
func checkKeyRowValues(t *testing.T, e *KeyRowEncoder, c keyRowCase, shapes []keyRowShape) {
	t.Helper()
	vals := make([]KeyValue, len(c.types))
	for i, typ := range c.types {
		v, err := goldenKeyValue(typ, c.values[i])
		if err != nil {
			t.Fatalf("%s: column %d (%s) value %s: %v", c.label, i, typ, c.values[i], err)
		}
		vals[i] = v
	}
	if h, err := e.HashValues(vals); err != nil || h != c.hash {
		t.Errorf("%s: HashValues = %d, %v, want %d", c.label, h, err, c.hash)
	}
	for i, s := range shapes {
		kg, op, err := e.RouteValues(vals, s.maxP, s.p)
		if err != nil || kg != c.routes[i][0] || op != c.routes[i][1] {
			t.Errorf("%s: RouteValues(%d, %d) = %d, %d, %v, want %d, %d", c.label, s.maxP, s.p, kg, op, err, c.routes[i][0], c.routes[i][1])
		}
	}
}

// goldenKeyValue is one value of key_row.csv as a KeyValue, by the form
// that carries every bit (appendGoldenValue's "exact").
func goldenKeyValue(typ SQLType, raw json.RawMessage) (KeyValue, error) {
	if string(raw) == "null" {
		return KeyValue{Null: true}, nil
	}
	switch typ.Root {
	case SQLBoolean:
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return KeyValue{}, err
		}
		if b {
			return KeyValue{Int: 1}, nil
		}
		return KeyValue{}, nil
	case SQLTinyInt, SQLSmallInt, SQLInt, SQLBigInt, SQLDate, SQLTime:
		v, err := strconv.ParseInt(string(raw), 10, 64)
		return KeyValue{Int: v}, err
	case SQLFloat, SQLDouble:
		var h string
		if err := json.Unmarshal(raw, &h); err != nil {
			return KeyValue{}, err
		}
		b, err := strconv.ParseUint(h, 16, 64)
		return KeyValue{Int: int64(b)}, err
	case SQLChar, SQLVarChar:
		js, err := UnquoteJSONString(string(raw))
		if err != nil {
			return KeyValue{}, err
		}
		if js.HasLoneSurrogate() {
			return KeyValue{Java: js}, nil
		}
		return KeyValue{Text: js.String()}, nil
	case SQLBinary, SQLVarBinary:
		var h string
		if err := json.Unmarshal(raw, &h); err != nil {
			return KeyValue{}, err
		}
		b, err := hex.DecodeString(h)
		return KeyValue{Text: string(b)}, err
	case SQLTimestamp, SQLTimestampLTZ:
		var ts [2]int64
		if err := json.Unmarshal(raw, &ts); err != nil {
			return KeyValue{}, err
		}
		return KeyValue{Int: ts[0], Nano: int32(ts[1])}, nil
	case SQLDecimal:
		var plain string
		if err := json.Unmarshal(raw, &plain); err != nil {
			return KeyValue{}, err
		}
		u, err := parseSQLDecimal(plain, typ.Precision, typ.Scale)
		return KeyValue{Decimal: u}, err
	}
	return KeyValue{}, fmt.Errorf("no golden decoding for %s", typ)
}
