package keysample

import (
	"encoding/binary"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/skewscope/skewscope/assign"
)

func TestParseKeySpec(t *testing.T) {
	for _, tc := range []struct {
		from, format, path, typ string
		want                    string // String()
	}{
		{"key", "string", "", "", "key:string"},
		{" Key ", "STRING", "", "", "key:string"},
		{"value", "string", "", "long", "value:string:long"},
		{"key", "int", "", "", "key:int"},
		{"key", "int", "", "Integer", "key:int"},
		{"value", "long", "", "long", "value:long"},
		{"value", "json", "customer.id", "long", "value:json:customer.id:long"},
		{"value", "json", "items.0.sku", "", "value:json:items.0.sku:string"},
		{"value", "json", "customer.id, region", "Tuple2<Long, String>", "value:json:customer.id,region:tuple<long,string>"},
		{"value", "csv", "3", "string", "value:csv:3:string"},
		{"value", "csv", "0,3", "tuple<string,int>", "value:csv:0,3:tuple<string,int>"},
	} {
		s, err := ParseKeySpec(tc.from, tc.format, tc.path, tc.typ)
		if err != nil {
			t.Errorf("ParseKeySpec(%q, %q, %q, %q) = %v", tc.from, tc.format, tc.path, tc.typ, err)
			continue
		}
		if got := s.String(); got != tc.want {
			t.Errorf("ParseKeySpec(%q, %q, %q, %q).String() = %q, want %q", tc.from, tc.format, tc.path, tc.typ, got, tc.want)
		}
	}
}

func TestParseKeySpecErrors(t *testing.T) {
	for _, tc := range []struct {
		from, format, path, typ string
		want                    string
	}{
		{"header", "string", "", "", `key from "header": want key (the record key) or value`},
		{"key", "avro", "", "", `key format "avro": want string, int, long, json or csv`},
		{"key", "int", "x", "", `key path "x": the int format takes no path (only json and csv do)`},
		{"value", "json", "", "long", `key path: the json format needs a field path such as customer.id`},
		{"value", "csv", " ", "", `key path: the csv format needs a column number such as 0`},
		{"key", "int", "", "long", `key type "long": the int format is a 4-byte big-endian Integer, typed int`},
		{"key", "long", "", "string", `key type "string": the long format is a 8-byte big-endian Long, typed long`},
		{"key", "string", "", "tuple<string,int>", `key type "tuple<string,int>": a tuple key is read from json fields or csv columns, not from one string`},
		{"key", "string", "", "uuid", `unknown key type "uuid": want string, int, long, boolean, short, byte, char, float, double or tuple<...> of those`},
		{"value", "json", "a..b", "", `key path "a..b": field name 2 of "a..b" is empty`},
		{"value", "json", "a,b", "string", `key path "a,b": type string takes one field path, got 2 (a key of several needs a tuple type)`},
		{"value", "json", "a", "tuple<string,int>", `key path "a": type tuple<string,int> needs 2 field paths separated by commas, got 1`},
		{"value", "csv", "-1", "", `key path "-1": column "-1" is not a column number (0 is the first column)`},
		{"value", "csv", "one", "", `key path "one": column "one" is not a column number (0 is the first column)`},
	} {
		_, err := ParseKeySpec(tc.from, tc.format, tc.path, tc.typ)
		if err == nil || err.Error() != tc.want {
			t.Errorf("ParseKeySpec(%q, %q, %q, %q) = %v, want %s", tc.from, tc.format, tc.path, tc.typ, err, tc.want)
		}
	}
}

func mustSpec(t testing.TB, from, format, path, typ string) KeySpec {
	t.Helper()
	s, err := ParseKeySpec(from, format, path, typ)
	if err != nil {
		t.Fatalf("ParseKeySpec(%q, %q, %q, %q) = %v", from, format, path, typ, err)
	}
	return s
}

func be32(v int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(v)) }
func be64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

func TestKey(t *testing.T) {
	str := func(s string) int32 { return assign.StringHashCode(s) }
	for _, tc := range []struct {
		spec       [4]string
		key, value []byte
		want       Key
	}{
		{[4]string{"key", "string", "", ""}, []byte("customer-42"), nil, Key{"customer-42", str("customer-42")}},
		{[4]string{"key", "string", "", ""}, []byte{}, nil, Key{"", 0}},
		{[4]string{"key", "string", "", ""}, []byte("caf\xc3"), nil, Key{"caf\uFFFD", str("caf\xc3")}},
		{[4]string{"key", "string", "", ""}, []byte("\xed\xa0\x80x"), nil, Key{"\uFFFDx", str("\xed\xa0\x80x")}},
		{[4]string{"value", "string", "", "long"}, nil, []byte("42"), Key{"42", assign.LongHashCode(42)}},
		{[4]string{"key", "int", "", ""}, be32(-7), nil, Key{"-7", -7}},
		{[4]string{"value", "long", "", ""}, nil, be64(1 << 40), Key{"1099511627776", assign.LongHashCode(1 << 40)}},
		{[4]string{"value", "json", "customer.id", "long"}, nil, []byte(`{"customer":{"id":4294967297}}`), Key{"4294967297", assign.LongHashCode(4294967297)}},
		{[4]string{"value", "json", "customer.id", "long"}, nil, []byte(`{"customer":{"id":"17"}}`), Key{"17", assign.LongHashCode(17)}},
		{[4]string{"value", "json", "customer.id", "int"}, nil, []byte(`{"customer":{"id":-3}}`), Key{"-3", -3}},
		{[4]string{"value", "json", "customer.id", "string"}, nil, []byte(`{"customer":{"id":-0}}`), Key{"0", str("0")}},
		{[4]string{"value", "json", "customer.id", "string"}, nil, []byte(`{"customer":{"id":123456789012345678901234567890}}`), Key{"123456789012345678901234567890", str("123456789012345678901234567890")}},
		{[4]string{"value", "json", "items.1.sku", ""}, nil, []byte(`{"items":[{"sku":"a"},{"sku":"b\u00e9"}]}`), Key{"bé", str("bé")}},
		{[4]string{"value", "json", "u", ""}, nil, []byte(`{"u":"\ud800"}`), Key{"\uFFFD", 0xD800}},
		{[4]string{"value", "json", "u", ""}, nil, []byte(`{"u":"\ud83d\ude00"}`), Key{"😀", str("😀")}},
		{[4]string{"value", "json", "flag", "boolean"}, nil, []byte(`{"flag":true}`), Key{"true", 1231}},
		{[4]string{"value", "json", "a,b", "tuple<string,long>"}, nil, []byte(`{"a":"x\ud800","b":5}`), Key{`["x\ud800",5]`, assign.TupleHashCode(31*'x'+0xD800, assign.LongHashCode(5))}},
		{[4]string{"value", "csv", "1", ""}, nil, []byte("a,customer-42,c\r\n"), Key{"customer-42", str("customer-42")}},
		{[4]string{"value", "csv", "1", "long"}, nil, []byte(`a,"12",c`), Key{"12", assign.LongHashCode(12)}},
		{[4]string{"value", "csv", "0", ""}, nil, []byte(`"say ""hi"", ok",x`), Key{`say "hi", ok`, str(`say "hi", ok`)}},
		{[4]string{"value", "csv", "2", ""}, nil, []byte(`a,b,`), Key{"", 0}},
		{[4]string{"value", "csv", "0,2", "tuple<string,int>"}, nil, []byte(`x,y,7`), Key{`["x","7"]`, assign.TupleHashCode(str("x"), 7)}},
	} {
		s := mustSpec(t, tc.spec[0], tc.spec[1], tc.spec[2], tc.spec[3])
		got, err := s.Key(tc.key, tc.value)
		if err != nil || got != tc.want {
			t.Errorf("%s.Key(%q, %q) = %+v, %v, want %+v", s, tc.key, tc.value, got, err, tc.want)
			continue
		}
		// Text typed as the spec's type hashes to Hash, but for a lone surrogate shown as U+FFFD.
		if h, err := assign.HashKey(s.Type, got.Text); (err != nil || h != got.Hash) && got.Text != "\uFFFD" {
			t.Errorf("assign.HashKey(%s, %q) = %d, %v, want %d", s.Type, got.Text, h, err, got.Hash)
		}
	}
}

// TestKeyErrors: each bad input per format, with its exact message.
func TestKeyErrors(t *testing.T) {
	for _, tc := range []struct {
		spec       [4]string
		key, value []byte
		want       string
	}{
		{[4]string{"key", "string", "", ""}, nil, []byte("v"), "null key: the record key is null (Flink: Assigned key must not be null!)"},
		{[4]string{"value", "string", "", ""}, []byte("k"), nil, "null key: the value is null (Flink: Assigned key must not be null!)"},
		{[4]string{"value", "string", "", "long"}, nil, []byte("4x"), `value: long key "4x": not an integer`},
		{[4]string{"key", "int", "", ""}, []byte{1, 2, 3}, nil, "record key is 3 bytes, an int key needs 4"},
		{[4]string{"value", "int", "", ""}, nil, []byte{1, 2, 3, 4, 5}, "value is 5 bytes, an int key needs 4"},
		{[4]string{"key", "long", "", ""}, []byte{1, 2, 3, 4}, nil, "record key is 4 bytes, a long key needs 8"},
		{[4]string{"value", "json", "customer.id", "long"}, nil, []byte(`{"customer":`), "value is not JSON: unexpected end of JSON input"},
		{[4]string{"value", "json", "customer.id", "long"}, nil, []byte(`hello`), "value is not JSON: invalid character 'h' looking for beginning of value"},
		{[4]string{"value", "json", "customer.id", "long"}, nil, []byte(`{"order":1}`), "field customer.id not found"},
		{[4]string{"value", "json", "customer.id", "long"}, nil, []byte(`{"customer":{"name":"x"}}`), `field customer.id not found: customer has no field "id"`},
		{[4]string{"value", "json", "customer.id", "long"}, nil, []byte(`{"customer":"x"}`), "field customer.id not found: customer is a string, not an object"},
		{[4]string{"value", "json", "customer.id", "long"}, nil, []byte(`[1,2]`), `field customer.id not found: the value is an array and "customer" is not an index`},
		{[4]string{"value", "json", "id", "long"}, nil, []byte(`7`), "field id not found: the value is a number, not an object"},
		{[4]string{"value", "json", "items.2.sku", ""}, nil, []byte(`{"items":[{},{}]}`), "field items.2.sku not found: items has 2 elements"},
		{[4]string{"value", "json", "customer.id", "long"}, nil, []byte(`{"customer":{"id":null}}`), "null key: field customer.id is null (Flink: Assigned key must not be null!)"},
		{[4]string{"value", "json", "customer", "long"}, nil, []byte(`{"customer":{"id":1}}`), "field customer is an object, not a key"},
		{[4]string{"value", "json", "customer.id", "long"}, nil, []byte(`{"customer":{"id":1.5}}`), `field customer.id: long key "1.5": not an integer`},
		{[4]string{"value", "json", "customer.id", "int"}, nil, []byte(`{"customer":{"id":4294967296}}`), `field customer.id: int key "4294967296": out of range -2147483648..2147483647`},
		{[4]string{"value", "json", "customer.id", "string"}, nil, []byte(`{"customer":{"id":1.5}}`), `field customer.id is the number "1.5": only an integer number is keyed as string; key it as double or long`},
		{[4]string{"value", "json", "a,b", "tuple<string,int>"}, nil, []byte(`{"a":"x","b":"y"}`), `fields a,b: tuple field 1: int key "y": not an integer`},
		{[4]string{"value", "json", "a,b", "tuple<string,int>"}, nil, []byte(`{"a":"x","b":[1]}`), `field b is an array, not a key`},
		{[4]string{"value", "csv", "5", ""}, nil, []byte("a,b,c"), "CSV line has 3 columns, column 5 asked"},
		{[4]string{"value", "csv", "1", "int"}, nil, []byte("a,b,c"), `column 1: int key "b": not an integer`},
		{[4]string{"value", "csv", "0", ""}, nil, []byte(`"open,b`), "CSV line: column 0 opens a quote that is not closed"},
		{[4]string{"value", "csv", "0", ""}, nil, []byte(`a,"b"c`), "CSV line: column 1 has text after its closing quote"},
		{[4]string{"value", "csv", "0,1", "tuple<string,long>"}, nil, []byte(`a,b`), `columns 0,1: tuple field 1: long key "b": not an integer`},
	} {
		s := mustSpec(t, tc.spec[0], tc.spec[1], tc.spec[2], tc.spec[3])
		got, err := s.Key(tc.key, tc.value)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s.Key(%q, %q) = %+v, %v, want error %s", s, tc.key, tc.value, got, err, tc.want)
		}
	}
	s := mustSpec(t, "key", "string", "", "")
	if _, err := s.Key(nil, nil); !errors.Is(err, assign.ErrNullKey) {
		t.Errorf("Key(nil, nil) = %v, want an error wrapping assign.ErrNullKey", err)
	}
}

// TestKeySpecLiteral: a KeySpec written as a literal, not by ParseKeySpec, works too.
func TestKeySpecLiteral(t *testing.T) {
	s := KeySpec{From: "value", Format: "json", Path: "id", Type: assign.KeyType{Kind: assign.KindLong}}
	got, err := s.Key(nil, []byte(`{"id":9}`))
	if want := (Key{"9", assign.LongHashCode(9)}); err != nil || got != want {
		t.Errorf("%s.Key = %+v, %v, want %+v", s, got, err, want)
	}
}

// FuzzKey: on any bytes, every format returns a key or an error without
// panicking; a string key's Text is valid UTF-8 that hashes (as Java text)
// to its Hash, like the raw bytes do.
func FuzzKey(f *testing.F) {
	for _, seed := range []string{"customer-42", "caf\xc3", `{"customer":{"id":7}}`, `{"a":["x",{"b":null}]}`, `a,"b""c",d`, "\xed\xa0\x80", "1234", "12345678"} {
		f.Add([]byte(seed))
	}
	specs := []KeySpec{
		mustSpec(f, "value", "string", "", ""), mustSpec(f, "value", "int", "", ""), mustSpec(f, "value", "long", "", ""),
		mustSpec(f, "value", "json", "customer.id", "long"), mustSpec(f, "value", "json", "a.1.b", "string"),
		mustSpec(f, "value", "json", "a.0,customer.id", "tuple<string,int>"),
		mustSpec(f, "value", "csv", "1", "string"), mustSpec(f, "value", "csv", "0,2", "tuple<string,long>"),
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, s := range specs {
			k, err := s.Key(nil, b)
			if err != nil {
				continue
			}
			if s.Format == "string" && (!utf8.ValidString(k.Text) || k.Hash != assign.StringHashCode(string(b)) || assign.StringHashCode(k.Text) != k.Hash) {
				t.Errorf("%s.Key(% x) = %+v, want valid text hashing to %d", s, b, k, assign.StringHashCode(string(b)))
			}
		}
	})
}
