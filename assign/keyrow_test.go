package assign

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
)

func mustTypes(t testing.TB, s string) []SQLType {
	t.Helper()
	ts, err := ParseSQLTypes(s)
	if err != nil {
		t.Fatalf("ParseSQLTypes(%q): %v", s, err)
	}
	return ts
}

func mustEncoder(t testing.TB, s string) *KeyRowEncoder {
	t.Helper()
	e, err := NewKeyRowEncoder(mustTypes(t, s)...)
	if err != nil {
		t.Fatalf("NewKeyRowEncoder(%s): %v", s, err)
	}
	return e
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The layout examples of BinaryRowWriter, one 8-byte word per group: the
// header and null bitset, the slots, the variable part.
func TestKeyRowLayout(t *testing.T) {
	for _, tc := range []struct {
		name, types string
		append      func(e *KeyRowEncoder) error
		want        string
	}{
		{"bigint 42", "BIGINT", func(e *KeyRowEncoder) error { return e.AppendInt(42) },
			"0000000000000000 2a00000000000000"},
		{"int -1 fills 4 bytes of its slot", "INT", func(e *KeyRowEncoder) error { return e.AppendInt(-1) },
			"0000000000000000 ffffffff00000000"},
		{"null sets bit 8 and leaves the slot zero", "BIGINT", func(e *KeyRowEncoder) error { return e.AppendNull() },
			"0001000000000000 0000000000000000"},
		{"string of 3 bytes inline", "STRING", func(e *KeyRowEncoder) error { return e.AppendString("abc") },
			"0000000000000000 6162630000000083"},
		{"empty string inline", "STRING", func(e *KeyRowEncoder) error { return e.AppendString("") },
			"0000000000000000 0000000000000080"},
		{"string of 7 bytes inline", "STRING", func(e *KeyRowEncoder) error { return e.AppendString("abcdefg") },
			"0000000000000000 6162636465666787"},
		{"string of 8 bytes in the variable part at offset 16", "STRING", func(e *KeyRowEncoder) error { return e.AppendString("abcdefgh") },
			"0000000000000000 0800000010000000 6162636465666768"},
		{"string of 9 bytes padded to 16", "STRING", func(e *KeyRowEncoder) error { return e.AppendString("abcdefghi") },
			"0000000000000000 0900000010000000 6162636465666768 6900000000000000"},
		{"lone surrogate written as ?", "STRING", func(e *KeyRowEncoder) error { return e.AppendJavaString(JavaString{'a', 0xD800}) },
			"0000000000000000 613f000000000082"},
		{"double -0.0", "DOUBLE", func(e *KeyRowEncoder) error { return e.AppendDouble(math.Copysign(0, -1)) },
			"0000000000000000 0000000000000080"},
		{"Go's NaN written as Java's", "DOUBLE", func(e *KeyRowEncoder) error { return e.AppendDouble(math.NaN()) },
			"0000000000000000 000000000000f87f"},
		{"float NaN bits kept", "FLOAT", func(e *KeyRowEncoder) error { return e.AppendFloatBits(0xffc00000) },
			"0000000000000000 0000c0ff00000000"},
		{"decimal(10, 2) compact", "DECIMAL(10, 2)", func(e *KeyRowEncoder) error { return e.AppendDecimal(-12345) },
			"0000000000000000 c7cfffffffffffff"},
		{"decimal(20, 0) 128 as 00 80 in a 16-byte block", "DECIMAL(20, 0)", func(e *KeyRowEncoder) error { return e.AppendDecimal(128) },
			"0000000000000000 0200000010000000 0080000000000000 0000000000000000"},
		{"decimal(20, 0) -1 as ff", "DECIMAL(20, 0)", func(e *KeyRowEncoder) error { return e.AppendBigDecimal(big.NewInt(-1)) },
			"0000000000000000 0100000010000000 ff00000000000000 0000000000000000"},
		{"null decimal(20, 0) keeps its block", "DECIMAL(20, 0)", func(e *KeyRowEncoder) error { return e.AppendNull() },
			"0001000000000000 0000000010000000 0000000000000000 0000000000000000"},
		{"timestamp(3) compact millis", "TIMESTAMP(3)", func(e *KeyRowEncoder) error { return e.AppendTimestamp(1000, 0) },
			"0000000000000000 e803000000000000"},
		{"timestamp(6) millis in the variable part, nanos in the slot", "TIMESTAMP(6)", func(e *KeyRowEncoder) error { return e.AppendTimestamp(1000, 7000) },
			"0000000000000000 581b000010000000 e803000000000000"},
		{"null timestamp(9) keeps its word", "TIMESTAMP(9)", func(e *KeyRowEncoder) error { return e.AppendNull() },
			"0001000000000000 0000000010000000 0000000000000000"},
		{"(bigint, string) with the string inline", "BIGINT, STRING", func(e *KeyRowEncoder) error {
			return errors.Join(e.AppendInt(7), e.AppendString("x"))
		}, "0000000000000000 0700000000000000 7800000000000081"},
		{"second column null: bit 9", "BIGINT, STRING", func(e *KeyRowEncoder) error {
			return errors.Join(e.AppendInt(7), e.AppendNull())
		}, "0002000000000000 0700000000000000 0000000000000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := mustEncoder(t, tc.types)
			if err := tc.append(e); err != nil {
				t.Fatal(err)
			}
			got, err := e.Bytes()
			want := unhex(t, tc.want)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("row = %x, %v, want %x", got, err, want)
			}
		})
	}
}

// The null bitset grows a word at 57 and at 121 fields
// (BinaryRowData.calculateBitSetWidthInBytes).
func TestKeyRowBitSetWidth(t *testing.T) {
	for _, tc := range []struct{ arity, want int }{{1, 8}, {56, 8}, {57, 16}, {120, 16}, {121, 24}} {
		if got := keyRowBitSetWidth(tc.arity); got != tc.want {
			t.Errorf("keyRowBitSetWidth(%d) = %d, want %d", tc.arity, got, tc.want)
		}
	}
	types := make([]SQLType, 57)
	for i := range types {
		types[i] = SQLType{Root: SQLInt}
	}
	e, err := NewKeyRowEncoder(types...)
	if err != nil {
		t.Fatal(err)
	}
	for range 56 {
		if err := e.AppendInt(1); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.AppendNull(); err != nil {
		t.Fatal(err)
	}
	row, _ := e.Bytes()
	if len(row) != 16+57*8 || row[8] != 1 || row[7] != 0 {
		t.Errorf("57 columns, the last null: %d bytes, bitset %x; want %d bytes, bit 64 (byte 8) set", len(row), row[:16], 16+57*8)
	}
}

func TestParseSQLType(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want SQLType
	}{
		{"BIGINT", SQLType{Root: SQLBigInt}},
		{"integer", SQLType{Root: SQLInt}},
		{"INT NOT NULL", SQLType{Root: SQLInt, NotNull: true}},
		{"bigint null", SQLType{Root: SQLBigInt}},
		{"DOUBLE PRECISION", SQLType{Root: SQLDouble}},
		{"STRING", SQLType{Root: SQLVarChar, Length: SQLMaxLength}},
		{"VARCHAR", SQLType{Root: SQLVarChar, Length: 1}},
		{"varchar(20)", SQLType{Root: SQLVarChar, Length: 20}},
		{"CHARACTER VARYING(5)", SQLType{Root: SQLVarChar, Length: 5}},
		{"CHAR(3)", SQLType{Root: SQLChar, Length: 3}},
		{"BYTES", SQLType{Root: SQLVarBinary, Length: SQLMaxLength}},
		{"BINARY(16)", SQLType{Root: SQLBinary, Length: 16}},
		{"DATE", SQLType{Root: SQLDate}},
		{"TIME", SQLType{Root: SQLTime}},
		{"TIME(3) WITHOUT TIME ZONE", SQLType{Root: SQLTime, Precision: 3}},
		{"TIMESTAMP", SQLType{Root: SQLTimestamp, Precision: 6}},
		{"timestamp(3)", SQLType{Root: SQLTimestamp, Precision: 3}},
		{"TIMESTAMP(9) WITHOUT TIME ZONE", SQLType{Root: SQLTimestamp, Precision: 9}},
		{"TIMESTAMP_LTZ(3)", SQLType{Root: SQLTimestampLTZ, Precision: 3}},
		{"TIMESTAMP_LTZ", SQLType{Root: SQLTimestampLTZ, Precision: 6}},
		{"TIMESTAMP(3) WITH LOCAL TIME ZONE NOT NULL", SQLType{Root: SQLTimestampLTZ, Precision: 3, NotNull: true}},
		{"DECIMAL", SQLType{Root: SQLDecimal, Precision: 10}},
		{"DECIMAL(5)", SQLType{Root: SQLDecimal, Precision: 5}},
		{"NUMERIC(38, 10)", SQLType{Root: SQLDecimal, Precision: 38, Scale: 10}},
		{"dec(18,18)", SQLType{Root: SQLDecimal, Precision: 18, Scale: 18}},
	} {
		got, err := ParseSQLType(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseSQLType(%q) = %+v, %v, want %+v", tc.in, got, err, tc.want)
			continue
		}
		if back, err := ParseSQLType(got.String()); err != nil || back != got {
			t.Errorf("ParseSQLType(%q) = %+v, %v: String() does not read back", got.String(), back, err)
		}
	}
}

func TestParseSQLTypeRefuses(t *testing.T) {
	unsupported := []string{
		"ARRAY<INT>", "MAP<STRING, INT>", "MULTISET<STRING>", "ROW<a INT, b STRING>", "ROW(a INT)",
		"RAW('java.lang.Object', 'AAA')", "VARIANT", "INTERVAL DAY TO SECOND", "INTERVAL YEAR",
		"TIMESTAMP WITH TIME ZONE", "TIMESTAMP(3) WITH TIME ZONE", "BITMAP", "NULL", "ARRAY<INT> NOT NULL",
	}
	for _, s := range unsupported {
		_, err := ParseSQLType(s)
		var ue *UnsupportedSQLTypeError
		if !errors.As(err, &ue) || ue.Name != s || !strings.Contains(err.Error(), s) {
			t.Errorf("ParseSQLType(%q) error = %v, want an UnsupportedSQLTypeError naming it", s, err)
		}
	}
	invalid := map[string]string{
		"":                          "empty",
		"UUID":                      "unknown SQL type",
		"DECIMAL(39, 0)":            "precision 39",
		"DECIMAL(5, 6)":             "scale 6",
		"DECIMAL(0)":                "precision 0",
		"TIMESTAMP(10)":             "precision 10",
		"VARCHAR(0)":                "length 0",
		"INT(3)":                    "takes no arguments",
		"BIGINT UNSIGNED":           "unexpected",
		"TIME WITH LOCAL TIME ZONE": "WITH LOCAL TIME ZONE",
		"DECIMAL(a)":                "not an integer",
	}
	for s, want := range invalid {
		_, err := ParseSQLType(s)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSQLType(%q) error = %v, want one mentioning %q", s, err, want)
		}
	}
	if _, err := ParseSQLTypes("BIGINT, MAP<STRING, INT>"); err == nil || !strings.Contains(err.Error(), "key column 1") {
		t.Errorf("ParseSQLTypes with a MAP column: error = %v, want one naming key column 1", err)
	}
	ts := mustTypes(t, "BIGINT, STRING, DECIMAL(10, 2), TIMESTAMP(3) WITH LOCAL TIME ZONE")
	if len(ts) != 4 || ts[2] != (SQLType{Root: SQLDecimal, Precision: 10, Scale: 2}) {
		t.Errorf("ParseSQLTypes(four columns) = %v", ts)
	}
}

func TestKeyRowEncoderRefuses(t *testing.T) {
	if _, err := NewKeyRowEncoder(); err == nil {
		t.Error("NewKeyRowEncoder() with no columns: nil error")
	}
	if _, err := NewKeyRowEncoder(SQLType{Root: SQLDecimal, Precision: 40}); err == nil {
		t.Error("NewKeyRowEncoder(DECIMAL(40)): nil error")
	}
	if _, err := NewKeyRowEncoder(SQLType{}); err == nil {
		t.Error("NewKeyRowEncoder(zero SQLType): nil error")
	}
	e := mustEncoder(t, "TINYINT, INT NOT NULL, STRING, DECIMAL(3, 1), TIME(3), TIMESTAMP(6)")
	var kre *KeyRowError
	for _, tc := range []struct {
		name   string
		err    error
		column int
		want   string
	}{
		{"string into TINYINT", e.AppendString("x"), 0, "not a CHAR or VARCHAR column"},
		{"TINYINT out of range", e.AppendInt(128), 0, "128 out of range -128..127"},
		{"bad TINYINT text", e.AppendText("1.5"), 0, "not an integer"},
	} {
		if !errors.As(tc.err, &kre) || kre.Column != tc.column || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error = %v, want a KeyRowError for column %d mentioning %q", tc.name, tc.err, tc.column, tc.want)
		}
	}
	if err := e.AppendInt(-128); err != nil {
		t.Fatalf("AppendInt(-128) after refused values: %v", err)
	}
	if err := e.AppendNull(); err == nil || !strings.Contains(err.Error(), "NOT NULL") {
		t.Errorf("AppendNull into INT NOT NULL: error = %v", err)
	}
	if _, err := e.Bytes(); err == nil || !strings.Contains(err.Error(), "1 of its 6 columns") {
		t.Errorf("Bytes of an incomplete row: error = %v", err)
	}
	if _, err := e.HashCode(); err == nil {
		t.Error("HashCode of an incomplete row: nil error")
	}
	if _, _, err := e.Route(128, 4); err == nil {
		t.Error("Route of an incomplete row: nil error")
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(e.AppendInt(5))
	must(e.AppendString("s"))
	if err := e.AppendDecimal(1000); err == nil || !strings.Contains(err.Error(), "more than 3 digits") {
		t.Errorf("AppendDecimal(1000) into DECIMAL(3, 1): error = %v", err)
	}
	if err := e.AppendText("1.25"); err == nil || !strings.Contains(err.Error(), "fractional digits") {
		t.Errorf("AppendText(1.25) into DECIMAL(3, 1): error = %v", err)
	}
	must(e.AppendText("-99.9"))
	if err := e.AppendTime(86_400_000); err == nil {
		t.Error("AppendTime(86400000): nil error")
	}
	must(e.AppendTime(0))
	if err := e.AppendTimestamp(0, 1_000_000); err == nil {
		t.Error("AppendTimestamp(0, 1000000): nil error")
	}
	must(e.AppendTimestamp(0, 999_999))
	if err := e.AppendInt(1); err == nil || !strings.Contains(err.Error(), "Reset") {
		t.Errorf("Append past the last column: error = %v", err)
	}
	if _, _, err := e.Route(64, 128); err == nil || err.Error() != "Maximum parallelism must not be smaller than parallelism." {
		t.Errorf("Route(64, 128) error = %v, want Flink's message", err)
	}
	if _, _, err := e.Route(128, 0); err == nil {
		t.Error("Route(128, 0): nil error")
	}
	if _, err := HashKeyRow(make([]byte, 12)); err == nil {
		t.Error("HashKeyRow of 12 bytes: nil error")
	}
	if _, err := HashKeyRow(nil); err == nil {
		t.Error("HashKeyRow of no bytes: nil error")
	}
}

func TestKeyRowText(t *testing.T) {
	same := []struct{ types, a, b string }{
		// A wall-clock timestamp, with 'T' or a space.
		{"TIMESTAMP(3)", "2023-11-14T22:13:20.123", "2023-11-14 22:13:20.123"},
		// Trailing zeros past the precision are the same value.
		{"TIMESTAMP(3)", "2023-11-14 22:13:20.1", "2023-11-14 22:13:20.100000"},
		{"TIMESTAMP(0)", "1970-01-01 00:00", "1970-01-01 00:00:00"},
		// An instant: an offset or Z.
		{"TIMESTAMP_LTZ(6)", "2023-11-15T00:13:20.123456+02:00", "2023-11-14T22:13:20.123456Z"},
		{"TIMESTAMP_LTZ(3)", "1969-12-31T19:00-05:00", "1970-01-01T00:00:00Z"},
		{"DECIMAL(10, 2)", "1.5", "1.50"},
		{"DECIMAL(10, 2)", "+0", "-0.00"},
		{"DECIMAL(20, 2)", ".5", "0.50"},
		{"BYTES", "X'0a0B'", "0a0b"},
		{"DOUBLE", "1e3", "1000.0"},
		{"FLOAT", "-Infinity", "-1e999"},
		{"BOOLEAN", "TRUE", " true "},
		{"INT", " 42", "42"},
		{"TIME(3)", "12:34", "12:34:00.000"},
	}
	for _, tc := range same {
		ra, ea := textRow(t, tc.types, tc.a)
		rb, eb := textRow(t, tc.types, tc.b)
		if ea != nil || eb != nil || !bytes.Equal(ra, rb) {
			t.Errorf("%s: %q = %x, %v and %q = %x, %v: want the same row", tc.types, tc.a, ra, ea, tc.b, rb, eb)
		}
	}
	for _, tc := range []struct{ types, text, want string }{
		{"DATE", "1970-01-01", "0000000000000000 0000000000000000"},
		{"DATE", "0000-01-01", "0000000000000000 5805f5ff00000000"},  // -719528
		{"DATE", "2023-11-14", "0000000000000000 db4c000000000000"},  // 19675
		{"TIME(0)", "23:59:59", "0000000000000000 1858260500000000"}, // 86399000
		{"TIMESTAMP(6)", "1969-12-31 23:59:59.999999", "0000000000000000 583e0f0010000000 ffffffffffffffff"},
		{"DOUBLE", "NaN", "0000000000000000 000000000000f87f"},
		{"STRING", " sp ", "0000000000000000 2073702000000084"},
	} {
		got, err := textRow(t, tc.types, tc.text)
		if want := unhex(t, tc.want); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s %q = %x, %v, want %x", tc.types, tc.text, got, err, want)
		}
	}
	for _, tc := range []struct{ types, text, want string }{
		{"BOOLEAN", "yes", "true or false"},
		{"DATE", "2023-02-29", "no such date"},
		{"DATE", "2023-2-1", "yyyy-mm-dd"},
		{"TIME(0)", "24:00:00", "no such time"},
		{"TIME(3)", "12:00:00.0001", "more than 3 fractional digits"},
		{"TIME(9)", "12:00:00.0001", "more than 3 fractional digits"},
		{"TIMESTAMP(3)", "2023-11-14 22:13:20.1234", "more than 3 fractional digits"},
		{"TIMESTAMP(3)", "2023-11-14", "hh:mm"},
		{"TIMESTAMP_LTZ(3)", "2023-11-14 22:13:20", "Z or an offset"},
		{"DECIMAL(5, 2)", "1234.5", "more than 5 digits"},
		{"DECIMAL(5, 2)", "1e3", "plain decimal"},
		{"BYTES", "abc", "hexadecimal"},
		{"DOUBLE", "Inf", "not a number"},
		{"DOUBLE", "0x1p3", "not a number"},
		{"SMALLINT", "40000", "40000 out of range -32768..32767"},
	} {
		_, err := textRow(t, tc.types, tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "key column 0") {
			t.Errorf("%s %q: error = %v, want one naming key column 0 and mentioning %q", tc.types, tc.text, err, tc.want)
		}
	}
}

func textRow(t *testing.T, types, text string) ([]byte, error) {
	t.Helper()
	e := mustEncoder(t, types)
	if err := e.AppendText(text); err != nil {
		return nil, err
	}
	b, err := e.Bytes()
	return append([]byte(nil), b...), err
}

// A reused encoder writes the same bytes as a fresh one, whatever row it
// wrote before (Flink's reused writer does too: the generator checks it).
func TestKeyRowReuse(t *testing.T) {
	const types = "STRING, DECIMAL(38, 2), TIMESTAMP(9), BIGINT"
	rows := [][]string{
		{"a-long-string-value", "12345678901234567890.12", "2023-11-14 22:13:20.123456789", "-1"},
		{"x", "", "", "7"},
		{"", "0.01", "1970-01-01 00:00", "0"},
	}
	encode := func(e *KeyRowEncoder, vs []string) []byte {
		e.Reset()
		for _, v := range vs {
			var err error
			if v == "" && e.next != 0 {
				err = e.AppendNull()
			} else {
				err = e.AppendText(v)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		b, err := e.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		return append([]byte(nil), b...)
	}
	reused := mustEncoder(t, types)
	for i := range 2 * len(rows) {
		vs := rows[i%len(rows)]
		if got, want := encode(reused, vs), encode(mustEncoder(t, types), vs); !bytes.Equal(got, want) {
			t.Errorf("row %v after %d others = %x, fresh encoder %x", vs, i, got, want)
		}
	}
}

// Routing a row agrees with the key-group ranges: its subtask owns its key
// group, at every shape.
func TestKeyRowRouteOwnsKeyGroup(t *testing.T) {
	e := mustEncoder(t, "BIGINT, STRING")
	for i := range 2000 {
		e.Reset()
		if err := errors.Join(e.AppendInt(int64(i)*7919), e.AppendString("user-"+itoa(i))); err != nil {
			t.Fatal(err)
		}
		for _, s := range [][2]int{{128, 1}, {128, 3}, {128, 128}, {1000, 7}, {32768, 100}} {
			kg, op, err := e.Route(s[0], s[1])
			if err != nil {
				t.Fatal(err)
			}
			r, err := KeyGroupRangeFor(s[0], s[1], op)
			if err != nil || kg < r.Start || kg > r.End {
				t.Fatalf("Route(%d, %d) = %d, %d, but subtask %d owns %v (%v)", s[0], s[1], kg, op, op, r, err)
			}
		}
	}
}

// Writing, hashing and routing a (BIGINT, STRING) row allocates nothing once
// the buffer has grown.
func TestKeyRowAllocationFree(t *testing.T) {
	e := mustEncoder(t, "BIGINT, STRING, DECIMAL(38, 2), TIMESTAMP(6), BYTES, DOUBLE")
	long := strings.Repeat("k", 40)
	bs := []byte("some-bytes-beyond-seven")
	wide := big.NewInt(-123456789)
	js := JavaString{'k', 0xD800, 'e', 'y', '-', 'l', 'o', 'n', 'g'}
	run := func() {
		e.Reset()
		err := errors.Join(e.AppendInt(42), e.AppendString(long), e.AppendBigDecimal(wide),
			e.AppendTimestamp(1700000000123, 456000), e.AppendBytes(bs), e.AppendDouble(math.NaN()))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.Route(32768, 100); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Errorf("a row of six columns: %v allocations per row, want 0", n)
	}
	e2 := mustEncoder(t, "STRING")
	runJava := func() {
		e2.Reset()
		if err := e2.AppendJavaString(js); err != nil {
			t.Fatal(err)
		}
		if _, err := e2.HashCode(); err != nil {
			t.Fatal(err)
		}
	}
	runJava()
	if n := testing.AllocsPerRun(100, runJava); n != 0 {
		t.Errorf("a Java string: %v allocations per row, want 0", n)
	}
}

// FuzzKeyRowText: any types and texts either are refused with an error or
// give a row Flink could hold: a positive multiple of 8 bytes, RowKind 0, no
// null bit past the last column, the same bytes from a fresh encoder, and a
// route inside the ranges.
func FuzzKeyRowText(f *testing.F) {
	f.Add("BIGINT, STRING", "42\x1fcustomer-42")
	f.Add("INT, STRING, DOUBLE", "1\x1f\x1fNaN")
	f.Add("DECIMAL(38, 10), TIMESTAMP(9), BYTES", "-3.1415926535\x1f2023-11-14 22:13:20.123456789\x1f0a0b0c0d0e0f1011")
	f.Add("TIMESTAMP_LTZ(3), DATE, TIME(3)", "2023-11-14T22:13:20.123Z\x1f2023-11-14\x1f12:34:56.789")
	f.Add("BOOLEAN, TINYINT, SMALLINT, FLOAT, CHAR(3)", "true\x1f-7\x1f1234\x1f1.5\x1fabc")
	f.Fuzz(func(t *testing.T, types, texts string) {
		ts, err := ParseSQLTypes(types)
		if err != nil || len(ts) == 0 || len(ts) > 200 {
			return
		}
		e, err := NewKeyRowEncoder(ts...)
		if err != nil {
			return
		}
		vals := strings.Split(texts, "\x1f")
		if len(vals) != len(ts) {
			return
		}
		for i, v := range vals {
			if v == "" && ts[i].Root != SQLChar && ts[i].Root != SQLVarChar {
				err = e.AppendNull()
			} else {
				err = e.AppendText(v)
			}
			if err != nil {
				var kre *KeyRowError
				if !errors.As(err, &kre) || kre.Column != i {
					t.Fatalf("column %d: error %v is not a KeyRowError for it", i, err)
				}
				return
			}
		}
		row, err := e.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		nb := keyRowBitSetWidth(len(ts))
		if len(row) < nb+8*len(ts) || len(row)%8 != 0 || row[0] != 0 {
			t.Fatalf("row %x: %d bytes, header %d", row, len(row), row[0])
		}
		for bit := 8 + len(ts); bit < nb*8; bit++ {
			if row[bit/8]&(1<<(bit%8)) != 0 {
				t.Fatalf("row %x: null bit %d set past %d columns", row, bit, len(ts))
			}
		}
		h, err := HashKeyRow(row)
		if hc, _ := e.HashCode(); err != nil || h != hc {
			t.Fatalf("HashKeyRow = %d, %v; HashCode = %d", h, err, hc)
		}
		kg, op, err := e.Route(4096, 100)
		if err != nil || kg < 0 || kg >= 4096 || op < 0 || op >= 100 {
			t.Fatalf("Route(4096, 100) = %d, %d, %v", kg, op, err)
		}
	})
}
