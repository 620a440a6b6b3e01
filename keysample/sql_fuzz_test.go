package keysample

import (
	"errors"
	"testing"
)

// fuzzSQLSpecs are the specs FuzzSQLKey reads its input with, one per
// format and a spread of types.
func fuzzSQLSpecs(t testing.TB) []KeySpec {
	all := []SQLColumn{{"b", "BOOLEAN"}, {"i", "INT"}, {"l", "BIGINT"}, {"f", "FLOAT"}, {"d", "DOUBLE"}, {"s", "STRING"},
		{"y", "BYTES"}, {"dt", "DATE"}, {"tm", "TIME(3)"}, {"ts", "TIMESTAMP(6)"}, {"dc", "DECIMAL(38, 6)"}, {"t8", "TINYINT"}}
	keyAll := []string{"b", "i", "l", "f", "d", "s", "y", "dt", "tm", "ts", "dc", "t8"}
	csvCols := []SQLColumn{{"l", "BIGINT"}, {"s", "STRING"}, {"dt", "DATE"}, {"ts", "TIMESTAMP(3)"}, {"dc", "DECIMAL(10, 2)"}}
	return []KeySpec{
		mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "json", Columns: userRegion, Key: []string{"user_id", "region"}}),
		mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "json", Columns: all, Key: keyAll}),
		mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "json", Columns: all, Key: []string{"s"}, Options: map[string]string{"json.ignore-parse-errors": "true", "json.timestamp-format.standard": "ISO-8601"}}),
		mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "csv", Columns: csvCols, Key: []string{"s", "l", "dt", "ts", "dc"}}),
		mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "csv", Columns: csvCols, Key: []string{"s"}, Options: map[string]string{"csv.ignore-parse-errors": "true", "csv.allow-comments": "true", "csv.escape-character": "\\", "csv.null-literal": "null"}}),
		mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "raw", Columns: []SQLColumn{{"s", "STRING"}}, Key: []string{"s"}}),
		mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "raw", Columns: []SQLColumn{{"d", "DOUBLE"}}, Key: []string{"d"}}),
		mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "avro", Columns: orderColumns, Key: []string{"user_id", "region", "amount", "day", "at", "small"}, AvroSchema: orderSchema}),
		mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "avro-confluent", Columns: orderColumns[:2], Key: []string{"region"}, AvroSchema: orderSchema}),
	}
}

// FuzzSQLKey reads arbitrary bytes with every format: Key never panics,
// fails with a *SQLKeyError, and a (BIGINT, STRING) JSON key's text routes
// as the record does.
func FuzzSQLKey(f *testing.F) {
	for _, s := range []string{
		`{"user_id":1,"region":"eu"}`, `{"s":"\ud800","l":"12","d":1e400,"dc":"1e-7","ts":"2024-02-30 24:00:00"}`,
		`{"i":1.5,"y":"AQID","dt":"+12345-01-01","tm":"23:59:59.999999999","b":"TRUE"}`, `{"s":{"a":[1,2.5,{"b":null}]}}`,
		"1,\"a\"\"b\",2024-1-31,2024-01-01 25:61:61.123,1.005", "# c\n,,,", "\x00\x00\x00\x00\x01\x54\x02\x02x",
		"\x54\x02\x04eu\x02\x02a\x00\x02\x02x\x02\x00\x04\x04\xd2\xfc\x9a\x01\x80\x80\x80\x80\x80\x80\x01\x98\x04",
	} {
		for i := range 9 {
			f.Add(uint8(i), []byte(s))
		}
	}
	specs := fuzzSQLSpecs(f)
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		sp := specs[int(which)%len(specs)]
		k, err := sp.Key(data, data)
		if err != nil {
			var se *SQLKeyError
			if !errors.As(err, &se) {
				t.Fatalf("%s: error %T %v is not a *SQLKeyError", sp, err, err)
			}
			return
		}
		if int(which)%len(specs) == 0 {
			h, err := hashOfText(t, sp, k.Text)
			if err != nil || h != k.Hash {
				t.Fatalf("%s: Key(%q) = %+v, but its text hashes to %d, %v", sp, data, k, h, err)
			}
		}
	})
}
