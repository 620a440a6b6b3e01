package keysample

import (
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/skewscope/skewscope/assign"
)

// rowOf builds the expected key row of the given types with fill and
// returns its BinaryRowData.hashCode: the oracle the decoded records are
// checked against, written with the encoder's own Append calls.
func rowOf(t *testing.T, types []string, fill func(e *assign.KeyRowEncoder) error) int32 {
	t.Helper()
	var ts []assign.SQLType
	for _, s := range types {
		typ, err := assign.ParseSQLType(s)
		if err != nil {
			t.Fatal(err)
		}
		ts = append(ts, typ)
	}
	e, err := assign.NewKeyRowEncoder(ts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := fill(e); err != nil {
		t.Fatalf("expected row: %v", err)
	}
	h, err := e.HashCode()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// hashOfText is the hash of the row SetKeyText builds of a Key's Text.
func hashOfText(t *testing.T, sp KeySpec, text string) (int32, error) {
	t.Helper()
	e, err := assign.NewKeyRowEncoder(sp.sql.types...)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.SetKeyText(text); err != nil {
		return 0, err
	}
	return e.HashCode()
}

type sqlCase struct {
	name   string
	rec    string
	types  []string // the key's types, for the expected row
	fill   func(e *assign.KeyRowEncoder) error
	text   string
	err    string // the error message, when the record fails
	noText bool   // the text form does not carry the value exactly
}

func runSQLCases(t *testing.T, sp KeySpec, cases []sqlCase, part string) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var rec []byte
			if tc.rec != "\x00nil" {
				rec = []byte(tc.rec)
			}
			var k Key
			var err error
			if part == "key" {
				k, err = sp.Key(rec, []byte("ignored"))
			} else {
				k, err = sp.Key(nil, rec)
			}
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("Key(%q) = %+v, %v; want error %q", tc.rec, k, err, tc.err)
				}
				var se *SQLKeyError
				if !errors.As(err, &se) {
					t.Errorf("error %T is not a *SQLKeyError", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Key(%q): %v", tc.rec, err)
			}
			if want := rowOf(t, tc.types, tc.fill); k.Hash != want {
				t.Errorf("Key(%q).Hash = %d, want %d (the expected row's hashCode)", tc.rec, k.Hash, want)
			}
			if k.Text != tc.text {
				t.Errorf("Key(%q).Text = %q, want %q", tc.rec, k.Text, tc.text)
			}
			h, err := hashOfText(t, sp, k.Text)
			if tc.noText {
				if err == nil && h == k.Hash {
					t.Errorf("Text %q round-trips, though the case says it does not", k.Text)
				}
				return
			}
			if err != nil || h != k.Hash {
				t.Errorf("SetKeyText(%q) = %d, %v; want the record's hash %d", k.Text, h, err, k.Hash)
			}
		})
	}
}

func mustSQLSpec(t testing.TB, o SQLKeyOptions) KeySpec {
	t.Helper()
	sp, err := ParseSQLKeySpec(o)
	if err != nil {
		t.Fatalf("ParseSQLKeySpec: %v", err)
	}
	return sp
}

var userRegion = []SQLColumn{{"user_id", "BIGINT"}, {"region", "STRING"}, {"amount", "DECIMAL(10, 2)"}, {"ts", "TIMESTAMP(3)"}}

func longString(v int64, s string) func(e *assign.KeyRowEncoder) error {
	return func(e *assign.KeyRowEncoder) error {
		if err := e.AppendInt(v); err != nil {
			return err
		}
		return e.AppendString(s)
	}
}

func TestSQLKeyJSONComposite(t *testing.T) {
	sp := mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "json", Columns: userRegion, Key: []string{"user_id", "region"}})
	if got, want := sp.String(), "value as json, key (user_id BIGINT, region STRING)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	ty := []string{"BIGINT", "STRING"}
	nullRegion := func(v int64) func(e *assign.KeyRowEncoder) error {
		return func(e *assign.KeyRowEncoder) error {
			if err := e.AppendInt(v); err != nil {
				return err
			}
			return e.AppendNull()
		}
	}
	runSQLCases(t, sp, []sqlCase{
		{name: "plain", rec: `{"user_id": 42, "region": "eu-1", "amount": 1.5}`, types: ty, fill: longString(42, "eu-1"), text: `[42,"eu-1"]`},
		{name: "order of fields", rec: `{"region":"eu-1","ts":"x","user_id":42}`, types: ty, fill: longString(42, "eu-1"), text: `[42,"eu-1"]`},
		{name: "long string in the variable part", rec: `{"user_id":-7,"region":"a region name of 27 bytes"}`, types: ty, fill: longString(-7, "a region name of 27 bytes"), text: `[-7,"a region name of 27 bytes"]`},
		{name: "a string of digits is a BIGINT", rec: `{"user_id":" 42 ","region":"x"}`, types: ty, fill: longString(42, "x"), text: `[42,"x"]`},
		{name: "a float is cut to a BIGINT", rec: `{"user_id":42.9,"region":"x"}`, types: ty, fill: longString(42, "x"), text: `[42,"x"]`},
		{name: "exponent", rec: `{"user_id":4.2e1,"region":"x"}`, types: ty, fill: longString(42, "x"), text: `[42,"x"]`},
		{name: "missing field is null", rec: `{"user_id":42}`, types: ty, fill: nullRegion(42), text: `[42,null]`},
		{name: "JSON null", rec: `{"user_id":42,"region":null}`, types: ty, fill: nullRegion(42), text: `[42,null]`},
		{name: "non-ASCII", rec: `{"user_id":1,"region":"Zürich 東京"}`, types: ty, fill: longString(1, "Zürich 東京"), text: `[1,"Zürich 東京"]`},
		{name: "escapes", rec: `{"user_id":1,"region":"a\"b\\c\u00e9\n"}`, types: ty, fill: longString(1, "a\"b\\cé\n"), text: `[1,"a\"b\\cé\u000a"]`},
		{name: "surrogate pair escaped", rec: `{"user_id":1,"region":"\ud83d\ude00"}`, types: ty, fill: longString(1, "😀"), text: `[1,"😀"]`},
		{name: "encoded surrogate bytes", rec: "{\"user_id\":1,\"region\":\"\xed\xb0\x80b\"}", types: ty, fill: longString(1, "?b"), text: `[1,"\udc00b"]`},
		{name: "lone surrogate is ? in the row", rec: `{"user_id":1,"region":"a\ud800"}`, types: ty, fill: longString(1, "a?"), text: `[1,"a\ud800"]`},
		{name: "number as STRING keeps its text", rec: `{"user_id":1,"region":1.50}`, types: ty, fill: longString(1, "1.50"), text: `[1,"1.50"]`},
		{name: "boolean as STRING", rec: `{"user_id":1,"region":true}`, types: ty, fill: longString(1, "true"), text: `[1,"true"]`},
		{name: "object as STRING is Jackson's text", rec: `{"user_id":1,"region":{ "a" : [1, 2.50, "x", -0, 1e3, null] }}`, types: ty, fill: longString(1, `{"a":[1,2.5,"x",0,1000.0,null]}`), text: `[1,"{\"a\":[1,2.5,\"x\",0,1000.0,null]}"]`},
		{name: "duplicate field: the last wins", rec: `{"user_id":1,"user_id":2,"region":"x"}`, types: ty, fill: longString(2, "x"), text: `[2,"x"]`},
		{name: "fields past the arity are skipped", rec: `{"user_id":1,"user_id":1,"amount":1,"ts":"x","region":"late"}`, types: ty, fill: nullRegion(1), text: `[1,null]`},
		{name: "unescaped control character", rec: "{\"user_id\":1,\"region\":\"a\tb\"}", types: ty, fill: longString(1, "a\tb"), text: `[1,"a\u0009b"]`},
		{name: "trailing text after the object", rec: `{"user_id":1,"region":"x"} garbage`, types: ty, fill: longString(1, "x"), text: `[1,"x"]`},
		{name: "string not a BIGINT", rec: `{"user_id":"eu-1","region":"x"}`, err: `column user_id BIGINT: JSON string is not a BIGINT`},
		{name: "out of range", rec: `{"user_id":9223372036854775808,"region":"x"}`, err: `column user_id BIGINT: JSON number is out of range of BIGINT`},
		{name: "float out of range", rec: `{"user_id":1e19,"region":"x"}`, err: `column user_id BIGINT: JSON number is out of range of BIGINT`},
		{name: "boolean not a BIGINT", rec: `{"user_id":true,"region":"x"}`, err: `column user_id BIGINT: JSON boolean is not a BIGINT`},
		{name: "not an object", rec: `[1,2]`, err: `the value is not a JSON object (Flink's job fails on it)`},
		{name: "truncated", rec: `{"user_id":1,"region":"x`, err: `the value is not valid JSON: it ends early (Flink's job fails on it)`},
		{name: "leading zeros", rec: `{"user_id":01}`, err: `the value is not valid JSON: a number has leading zeros (Flink's job fails on it)`},
		{name: "bad UTF-8", rec: "{\"user_id\":1,\"region\":\"\xff\"}", err: `the value is not valid JSON: it is not UTF-8 (Flink's job fails on it)`},
		{name: "empty", rec: ``, err: `Flink's json format drops this record: the value is null or empty`},
		{name: "null value", rec: "\x00nil", err: `Flink's json format drops this record: the value is null or empty`},
	}, "value")
}

func TestSQLKeyJSONTypes(t *testing.T) {
	one := func(typ string, opts map[string]string) KeySpec {
		return mustSQLSpec(t, SQLKeyOptions{From: "key", Format: "json", Columns: []SQLColumn{{"k", typ}, {"other", "ARRAY<INT>"}}, Key: []string{"k"}, Options: opts})
	}
	app := func(f func(e *assign.KeyRowEncoder) error) func(e *assign.KeyRowEncoder) error { return f }
	cases := []struct {
		typ  string
		opts map[string]string
		c    []sqlCase
	}{
		{"INT", nil, []sqlCase{
			{name: "int", rec: `{"k":-5}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendInt(-5) }), text: "-5"},
			{name: "float cut", rec: `{"k":-1.9}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendInt(-1) }), text: "-1"},
			{name: "too big", rec: `{"k":2147483648}`, err: `column k INT: JSON number is out of range of INT`},
			{name: "string float", rec: `{"k":"1.5"}`, err: `column k INT: JSON string is not a INT`},
			{name: "plus sign string", rec: `{"k":"+7"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendInt(7) }), text: "7"},
		}},
		{"TINYINT", nil, []sqlCase{
			{name: "fits", rec: `{"k":127}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendInt(127) }), text: "127"},
			{name: "too big", rec: `{"k":128}`, err: `column k TINYINT: JSON number is out of range of TINYINT`},
			{name: "float is parsed as text", rec: `{"k":1.0}`, err: `column k TINYINT: JSON number is not a TINYINT`},
		}},
		{"SMALLINT", nil, []sqlCase{
			{name: "fits", rec: `{"k":"-32768"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendInt(-32768) }), text: "-32768"},
			{name: "too big", rec: `{"k":40000}`, err: `column k SMALLINT: JSON number is out of range of SMALLINT`},
		}},
		{"BOOLEAN", nil, []sqlCase{
			{name: "true", rec: `{"k":true}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendBoolean(true) }), text: "true"},
			{name: "TRUE string", rec: `{"k":" TRUE "}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendBoolean(true) }), text: "true"},
			{name: "anything else is false", rec: `{"k":"yes"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendBoolean(false) }), text: "false"},
			{name: "1 is false", rec: `{"k":1}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendBoolean(false) }), text: "false"},
		}},
		{"DOUBLE", nil, []sqlCase{
			{name: "int", rec: `{"k":1}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendDouble(1) }), text: "1"},
			{name: "NaN string", rec: `{"k":"NaN"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendDouble(math.NaN()) }), text: "NaN"},
			{name: "overflow is Infinity", rec: `{"k":1e400}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendDouble(math.Inf(1)) }), text: "Infinity"},
			{name: "minus zero", rec: `{"k":-0.0}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendDouble(math.Copysign(0, -1)) }), text: "-0"},
			{name: "suffix d", rec: `{"k":"2.5d"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendDouble(2.5) }), text: "2.5"},
			{name: "not a number", rec: `{"k":"x"}`, err: `column k DOUBLE: JSON string is not a DOUBLE`},
		}},
		{"FLOAT", nil, []sqlCase{
			{name: "float", rec: `{"k":0.1}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendFloat(0.1) }), text: "0.1"},
		}},
		{"DATE", nil, []sqlCase{
			{name: "leap day", rec: `{"k":"2024-02-29"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendText("2024-02-29") }), text: "2024-02-29"},
			{name: "no such day", rec: `{"k":"2023-02-29"}`, err: `column k DATE: JSON string is not a DATE yyyy-MM-dd`},
			{name: "before 1970", rec: `{"k":"1969-12-31"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendDate(-1) }), text: "1969-12-31"},
			{name: "number", rec: `{"k":20240229}`, err: `column k DATE: JSON number is not a DATE yyyy-MM-dd`},
		}},
		{"TIME(3)", nil, []sqlCase{
			{name: "millis", rec: `{"k":"12:30:05.250"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendTime(45005250) }), text: "12:30:05.25"},
			{name: "needs seconds", rec: `{"k":"12:30"}`, err: `column k TIME(3): JSON string is not a TIME HH:mm:ss[.fraction]`},
		}},
		{"TIMESTAMP(3)", nil, []sqlCase{
			{name: "finer than the column", rec: `{"k":"2024-01-02 03:04:05.678999"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendTimestamp(1704164645678, 999000) }), text: "2024-01-02 03:04:05.678"},
			{name: "sql", rec: `{"k":"2024-01-02 03:04:05.678"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendText("2024-01-02 03:04:05.678") }), text: "2024-01-02 03:04:05.678"},
			{name: "SMART clamps the day", rec: `{"k":"2023-02-31 00:00:00"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendText("2023-02-28 00:00:00") }), text: "2023-02-28 00:00:00"},
			{name: "iso refused", rec: `{"k":"2024-01-02T03:04:05"}`, err: `column k TIMESTAMP(3): JSON string is not a TIMESTAMP(3) yyyy-MM-dd HH:mm:ss[.fraction]`},
		}},
		{"TIMESTAMP(3)", map[string]string{"json.timestamp-format.standard": "ISO-8601"}, []sqlCase{
			{name: "iso", rec: `{"k":"2024-01-02T03:04"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendText("2024-01-02 03:04:00") }), text: "2024-01-02 03:04:00"},
		}},
		{"TIMESTAMP(6)", nil, []sqlCase{
			{name: "micros", rec: `{"k":"2024-01-02 03:04:05.123456"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendText("2024-01-02 03:04:05.123456") }), text: "2024-01-02 03:04:05.123456"},
		}},
		{"TIMESTAMP_LTZ(3)", nil, []sqlCase{
			{name: "Z", rec: `{"k":"2024-01-02 03:04:05Z"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendText("2024-01-02 03:04:05Z") }), text: "2024-01-02 03:04:05Z"},
			{name: "no Z", rec: `{"k":"2024-01-02 03:04:05"}`, err: `column k TIMESTAMP(3) WITH LOCAL TIME ZONE: JSON string is not a TIMESTAMP(3) WITH LOCAL TIME ZONE yyyy-MM-dd HH:mm:ss[.fraction]Z`},
		}},
		{"DECIMAL(10, 2)", nil, []sqlCase{
			{name: "half up", rec: `{"k":12.345}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendDecimal(1235) }), text: "12.35"},
			{name: "negative half up", rec: `{"k":"-12.345"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendDecimal(-1235) }), text: "-12.35"},
			{name: "exponent", rec: `{"k":"1e2"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendDecimal(10000) }), text: "100.00"},
			{name: "too many digits is null", rec: `{"k":123456789012}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendNull() }), text: "[null]"},
			{name: "not a number", rec: `{"k":"1,5"}`, err: `column k DECIMAL(10, 2): JSON string is not a DECIMAL(10, 2)`},
			{name: "zero with a huge exponent", rec: `{"k":0e-2147483647}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendDecimal(0) }), text: "0.00"},
			{name: "tiny rounds to zero", rec: `{"k":"1e-2147483647"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendDecimal(0) }), text: "0.00"},
			{name: "huge is null", rec: `{"k":"1e2147483647"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendNull() }), text: "[null]"},
		}},
		{"DECIMAL(38, 4)", nil, []sqlCase{
			{name: "wide", rec: `{"k":-1234567890123456789012345.6789}`, fill: app(func(e *assign.KeyRowEncoder) error {
				u, _ := new(big.Int).SetString("-12345678901234567890123456789", 10)
				return e.AppendBigDecimal(u)
			}), text: "-1234567890123456789012345.6789"},
		}},
		{"BYTES", nil, []sqlCase{
			{name: "base64", rec: `{"k":"AQIDBAUGBwgJ"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendBytes([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}) }), text: "010203040506070809"},
			{name: "not base64", rec: `{"k":"!!"}`, err: `column k BYTES: JSON string is not base64`},
		}},
		{"STRING", nil, []sqlCase{
			{name: "looks like an array", rec: `{"k":"[1]"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendString("[1]") }), text: `["[1]"]`},
			{name: "null", rec: `{"k":null}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendNull() }), text: `[null]`},
			{name: "empty", rec: `{"k":""}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendString("") }), text: ``},
			{name: "lone surrogate", rec: `{"k":"\udc00"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendString("?") }), text: `["\udc00"]`},
		}},
		{"STRING NOT NULL", nil, []sqlCase{
			{name: "null in a NOT NULL column", rec: `{"k":null}`, err: `column k STRING NOT NULL: null in a NOT NULL column`},
		}},
		{"BIGINT", map[string]string{"value.json.ignore-parse-errors": "true", "key.json.ignore-parse-errors": "true"}, []sqlCase{
			{name: "bad value is null", rec: `{"k":"x"}`, fill: app(func(e *assign.KeyRowEncoder) error { return e.AppendNull() }), text: `[null]`},
			{name: "bad record is dropped", rec: `{"k":`, err: `Flink's json format drops this record: the record key is not valid JSON: it ends early (json.ignore-parse-errors)`},
		}},
		{"BIGINT", map[string]string{"fail-on-missing-field": "true"}, []sqlCase{
			{name: "missing key column", rec: `{"other":[1]}`, err: `column k BIGINT: missing from the record (json.fail-on-missing-field)`},
			{name: "missing other column", rec: `{"k":1}`, err: `column other ARRAY<INT>: missing from the record (json.fail-on-missing-field)`},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.typ, func(t *testing.T) {
			sp := one(tc.typ, tc.opts)
			for i := range tc.c {
				tc.c[i].types = []string{tc.typ}
			}
			runSQLCases(t, sp, tc.c, "key")
		})
	}
}

func TestSQLKeyCSV(t *testing.T) {
	cols := []SQLColumn{{"id", "BIGINT"}, {"name", "STRING"}, {"ts", "TIMESTAMP(3)"}}
	sp := mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "csv", Columns: cols, Key: []string{"name", "id"}})
	ty := []string{"STRING", "BIGINT"}
	sl := func(s string, v int64) func(e *assign.KeyRowEncoder) error {
		return func(e *assign.KeyRowEncoder) error {
			if err := e.AppendString(s); err != nil {
				return err
			}
			return e.AppendInt(v)
		}
	}
	runSQLCases(t, sp, []sqlCase{
		{name: "plain", rec: "1,alice,2024-01-01 00:00:00", types: ty, fill: sl("alice", 1), text: `["alice",1]`},
		{name: "line end", rec: "1,alice,x\r\n2,bob,y\n", types: ty, fill: sl("alice", 1), text: `["alice",1]`},
		{name: "quoted", rec: `"1","a,""b""",x`, types: ty, fill: sl(`a,"b"`, 1), text: `["a,\"b\"",1]`},
		{name: "quoted line break", rec: "1,\"a\nb\",x", types: ty, fill: sl("a\nb", 1), text: `["a\u000ab",1]`},
		{name: "empty STRING is empty", rec: "1,,x", types: ty, fill: sl("", 1), text: `["",1]`},
		{name: "number trimmed", rec: " 2 , bob ,x", types: ty, fill: sl(" bob ", 2), text: `[" bob ",2]`},
		{name: "trailing comma", rec: "1,bob,x,", types: ty, fill: sl("bob", 1), text: `["bob",1]`},
		{name: "non-ASCII", rec: "3,Zoë,x", types: ty, fill: sl("Zoë", 3), text: `["Zoë",3]`},
		{name: "an encoded surrogate is a lone surrogate", rec: "3,a\xed\xa0\x80,x", types: ty, fill: sl("a?", 3), text: `["a\ud800",3]`},
		{name: "not a BIGINT", rec: "abc,bob,x", err: `column id BIGINT: CSV field is not a BIGINT`},
		{name: "empty BIGINT", rec: ",bob,x", err: `column id BIGINT: CSV field is not a BIGINT`},
		{name: "out of range", rec: "9223372036854775808,bob,x", err: `column id BIGINT: CSV field is out of range of BIGINT`},
		{name: "fewer columns", rec: "1,bob", err: `the value has fewer columns than the table (Flink's job fails on it: row length mismatch)`},
		{name: "more columns", rec: "1,bob,x,y", err: `the value has more columns than the table (Flink's job fails on it)`},
		{name: "open quote", rec: `1,"bob,x`, err: `the value is not CSV Flink reads: a quote is not closed (Flink's job fails on it)`},
		{name: "null value", rec: "\x00nil", err: `Flink's csv format drops this record: the value is null`},
	}, "value")

	opt := mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "csv", Columns: cols, Key: []string{"id", "name"},
		Options: map[string]string{"csv.field-delimiter": ";", "csv.null-literal": "NULL", "csv.allow-comments": "true", "csv.ignore-parse-errors": "true"}})
	ty2 := []string{"BIGINT", "STRING"}
	runSQLCases(t, opt, []sqlCase{
		{name: "delimiter", rec: "1;a,b;x", types: ty2, fill: longString(1, "a,b"), text: `[1,"a,b"]`},
		{name: "null literal", rec: "NULL;bob;x", types: ty2, fill: func(e *assign.KeyRowEncoder) error {
			if err := e.AppendNull(); err != nil {
				return err
			}
			return e.AppendString("bob")
		}, text: `[null,"bob"]`},
		{name: "comment line", rec: "# header\n5;x;y", types: ty2, fill: longString(5, "x"), text: `[5,"x"]`},
		{name: "a comment alone is no row", rec: "#5;x;y", err: `Flink's csv format drops this record: the value holds no CSV line`},
		{name: "missing columns are null", rec: "7", types: ty2, fill: func(e *assign.KeyRowEncoder) error {
			if err := e.AppendInt(7); err != nil {
				return err
			}
			return e.AppendNull()
		}, text: `[7,null]`},
		{name: "bad value is null", rec: "x;bob;z", types: ty2, fill: func(e *assign.KeyRowEncoder) error {
			if err := e.AppendNull(); err != nil {
				return err
			}
			return e.AppendString("bob")
		}, text: `[null,"bob"]`},
		{name: "too many columns drops the record", rec: "1;b;c;d", err: `Flink's csv format drops this record: the value has more columns than the table (csv.ignore-parse-errors)`},
	}, "value")

	types := mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "csv", Columns: []SQLColumn{{"d", "DATE"}, {"t", "TIME(0)"}, {"ts", "TIMESTAMP(3)"}, {"b", "BOOLEAN"}},
		Key: []string{"d", "t", "ts", "b"}})
	runSQLCases(t, types, []sqlCase{
		{name: "date rolls over, time cut to precision", rec: "2023-2-30,12:30:05.9, 2024-01-02 03:04:05.5 ,yes", types: []string{"DATE", "TIME(0)", "TIMESTAMP(3)", "BOOLEAN"},
			fill: func(e *assign.KeyRowEncoder) error {
				for _, s := range []string{"2023-03-02", "12:30:05", "2024-01-02 03:04:05.5", "false"} {
					if err := e.AppendText(s); err != nil {
						return err
					}
				}
				return nil
			}, text: `["2023-03-02","12:30:05","2024-01-02 03:04:05.5",false]`},
	}, "value")
}

func TestSQLKeyRaw(t *testing.T) {
	str := mustSQLSpec(t, SQLKeyOptions{From: "key", Format: "raw", Columns: []SQLColumn{{"k", "STRING"}}, Key: []string{"k"}})
	runSQLCases(t, str, []sqlCase{
		{name: "text", rec: "user-1", types: []string{"STRING"}, fill: func(e *assign.KeyRowEncoder) error { return e.AppendString("user-1") }, text: "user-1"},
		{name: "null key is a null column", rec: "\x00nil", types: []string{"STRING"}, fill: func(e *assign.KeyRowEncoder) error { return e.AppendNull() }, text: "[null]"},
		{name: "bytes that are not UTF-8 are kept", rec: "a\xffb", types: []string{"STRING"}, fill: func(e *assign.KeyRowEncoder) error { return e.AppendString("a\xffb") }, text: "a\ufffdb", noText: true},
	}, "key")
	be := make([]byte, 8)
	binary.BigEndian.PutUint64(be, 1234567)
	le := make([]byte, 8)
	binary.LittleEndian.PutUint64(le, 1234567)
	long := func(v int64) func(e *assign.KeyRowEncoder) error {
		return func(e *assign.KeyRowEncoder) error { return e.AppendInt(v) }
	}
	big := mustSQLSpec(t, SQLKeyOptions{From: "key", Format: "raw", Columns: []SQLColumn{{"k", "BIGINT"}}, Key: []string{"k"}})
	runSQLCases(t, big, []sqlCase{
		{name: "big-endian", rec: string(be), types: []string{"BIGINT"}, fill: long(1234567), text: "1234567"},
		{name: "wrong size", rec: "abc", err: `column k BIGINT: the raw format reads 8 bytes for this type (DataLengthValidator)`},
	}, "key")
	little := mustSQLSpec(t, SQLKeyOptions{From: "key", Format: "raw", Columns: []SQLColumn{{"k", "BIGINT"}}, Key: []string{"k"}, Options: map[string]string{"raw.endianness": "little-endian"}})
	runSQLCases(t, little, []sqlCase{
		{name: "little-endian", rec: string(le), types: []string{"BIGINT"}, fill: long(1234567), text: "1234567"},
	}, "key")
	latin := mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "raw", Columns: []SQLColumn{{"k", "STRING"}}, Key: []string{"k"}, Options: map[string]string{"raw.charset": "ISO-8859-1"}})
	runSQLCases(t, latin, []sqlCase{
		{name: "latin-1", rec: "Zo\xeb", types: []string{"STRING"}, fill: func(e *assign.KeyRowEncoder) error { return e.AppendString("Zoë") }, text: "Zoë"},
	}, "value")
}

func TestParseSQLKeySpecOptions(t *testing.T) {
	// The Kafka connector's spellings: the other part's options are not this
	// part's, and writing options change nothing.
	sp := mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "json", Columns: userRegion, Key: []string{"user_id"},
		Options: map[string]string{"key.json.fail-on-missing-field": "x", "value.json.timestamp-format.standard": "ISO-8601", "json.encode.ignore-null-fields": "true"}})
	if !sp.sql.isoTimestamps || sp.sql.failOnMissing {
		t.Errorf("options read as iso %v, fail-on-missing %v; want true, false", sp.sql.isoTimestamps, sp.sql.failOnMissing)
	}
}

func TestParseSQLKeySpecErrors(t *testing.T) {
	cols := []SQLColumn{{"id", "BIGINT"}, {"name", "STRING"}}
	for _, tc := range []struct {
		o    SQLKeyOptions
		want string
	}{
		{SQLKeyOptions{From: "header", Format: "json", Columns: cols, Key: []string{"id"}}, `key from "header": want key (the record key) or value`},
		{SQLKeyOptions{From: "value", Format: "protobuf", Columns: cols, Key: []string{"id"}}, `format "protobuf": want json, csv, raw, avro or avro-confluent`},
		{SQLKeyOptions{From: "value", Format: "json", Columns: cols}, `key columns: name at least one`},
		{SQLKeyOptions{From: "value", Format: "json", Columns: cols, Key: []string{"user"}}, `key column "user": not a column of the table`},
		{SQLKeyOptions{From: "value", Format: "json", Columns: []SQLColumn{{"id", "MAP<STRING, INT>"}}, Key: []string{"id"}}, `key column id: SQL type MAP<STRING, INT> is not supported in a key: skewscope writes key rows of BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, CHAR, VARCHAR/STRING, BINARY, VARBINARY/BYTES, DATE, TIME, TIMESTAMP(p), TIMESTAMP_LTZ(p) and DECIMAL(p, s)`},
		{SQLKeyOptions{From: "value", Format: "json", Columns: cols, Key: []string{"id"}, Options: map[string]string{"json.fail-on-missing-field": "true", "json.ignore-parse-errors": "true"}}, `options json.fail-on-missing-field and json.ignore-parse-errors: Flink refuses both set (AbstractJsonDeserializationSchema)`},
		{SQLKeyOptions{From: "value", Format: "json", Columns: cols, Key: []string{"id"}, Options: map[string]string{"json.fail-on-missing": "true"}}, `option "json.fail-on-missing": not an option of Flink's json format that skewscope reads`},
		{SQLKeyOptions{From: "value", Format: "raw", Columns: cols, Key: []string{"id"}}, `format raw: a raw table has exactly one physical column in the record value, not 2`},
		{SQLKeyOptions{From: "value", Format: "raw", Columns: []SQLColumn{{"d", "DATE"}}, Key: []string{"d"}}, `key column d DATE: a type that Flink's raw format does not read (RawFormatDeserializationSchema)`},
		{SQLKeyOptions{From: "value", Format: "csv", Columns: []SQLColumn{{"t", "TIME(6)"}}, Key: []string{"t"}}, `key column t TIME(6): a precision beyond 3, which Flink's csv format does not read for TIME`},
		{SQLKeyOptions{From: "value", Format: "avro-confluent", Columns: cols, Key: []string{"id"}}, `format avro-confluent: give the writer schema or a schema registry`},
		{SQLKeyOptions{From: "value", Format: "avro", Columns: cols, Key: []string{"id"}, AvroSchema: `{"type":"record","name":"r","fields":[{"name":"id","type":"string"},{"name":"name","type":"string"}]}`}, `column id BIGINT: the avro schema has it as string, which Flink does not read as BIGINT`},
		{SQLKeyOptions{From: "value", Format: "avro", Columns: cols, Key: []string{"id"}, AvroSchema: `{"type":"record","name":"r","fields":[{"name":"name","type":"string"},{"name":"id","type":"long"}]}`}, `avro schema: field 1 is "name", column 1 is id; Flink's avro format reads the fields as the table's columns in order`},
		{SQLKeyOptions{From: "value", Format: "avro", Columns: cols, Key: []string{"id"}, AvroSchema: `{"type":"record"`}, `avro schema: avro: unknown type: {"type":"record"`},
	} {
		_, err := ParseSQLKeySpec(tc.o)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseSQLKeySpec(%+v) = %v, want %q", tc.o, err, tc.want)
		}
	}
}

// TestSQLKeyErrorsGroup checks that records failing for one reason with
// different values count as one message, with the first value kept.
func TestSQLKeyErrorsGroup(t *testing.T) {
	sp := mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "json", Columns: userRegion, Key: []string{"user_id", "region"}})
	s := NewSummary(10, 128)
	for _, rec := range []string{`{"user_id":"eu-1"}`, `{"user_id":"eu-2"}`, `{"user_id":"x","region":"y"}`, `{"user_id":1,"region":"a"}`, `{"user_id":1}`} {
		k, err := sp.Key(nil, []byte(rec))
		if err != nil {
			s.AddError(err)
			continue
		}
		s.Add(k)
	}
	errs := s.Errors()
	if len(errs) != 1 || errs[0].Count != 3 || errs[0].Message != "column user_id BIGINT: JSON string is not a BIGINT" || errs[0].Example != `"eu-1"` {
		t.Errorf("Errors() = %+v, want one message counted 3 times with the example \"eu-1\"", errs)
	}
	if s.Records() != 2 {
		t.Errorf("Records() = %d, want 2", s.Records())
	}
}

func TestSQLKeyAllocs(t *testing.T) {
	sp := mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "json", Columns: userRegion, Key: []string{"user_id", "region"}})
	rec := []byte(`{"user_id":123456,"region":"eu-west-1","amount":12.5,"ts":"2024-01-01 00:00:00"}`)
	if _, err := sp.Key(nil, rec); err != nil {
		t.Fatal(err)
	}
	if raceEnabled {
		// make unit runs this test once more without -race.
		t.Skip("sync.Pool drops items under the race detector")
	}
	// One allocation: the key's text.
	if a := testing.AllocsPerRun(1000, func() { _, _ = sp.Key(nil, rec) }); a > 1 {
		t.Errorf("Key allocates %.1f times per record, want at most 1 (its Text)", a)
	}
}

func TestSQLKeyConcurrent(t *testing.T) {
	sp := mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "json", Columns: userRegion, Key: []string{"user_id", "region"}})
	want, err := sp.Key(nil, []byte(`{"user_id":7,"region":"ap"}`))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 4)
	for g := range 4 {
		go func() {
			for i := range 2000 {
				rec := `{"user_id":7,"region":"ap"}`
				if i%2 == 1 {
					rec = `{"user_id":8,"region":"` + strings.Repeat("x", g+i%20) + `"}`
				}
				k, err := sp.Key(nil, []byte(rec))
				if err != nil || i%2 == 0 && k != want {
					done <- "concurrent Key gave " + k.Text
					return
				}
			}
			done <- ""
		}()
	}
	for range 4 {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
}
