package keysample

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/sr"

	"github.com/skewscope/skewscope/assign"
)

const orderSchema = `{"type":"record","name":"Order","namespace":"shop","fields":[
	{"name":"user_id","type":"long"},
	{"name":"region","type":["null","string"]},
	{"name":"tags","type":{"type":"array","items":"string"}},
	{"name":"attrs","type":{"type":"map","values":"int"}},
	{"name":"amount","type":{"type":"bytes","logicalType":"decimal","precision":10,"scale":2}},
	{"name":"day","type":{"type":"int","logicalType":"date"}},
	{"name":"at","type":{"type":"long","logicalType":"timestamp-millis"}},
	{"name":"small","type":"int"}
]}`

var orderColumns = []SQLColumn{{"user_id", "BIGINT"}, {"region", "STRING"}, {"tags", "ARRAY<STRING>"}, {"attrs", "MAP<STRING, INT>"},
	{"amount", "DECIMAL(10, 2)"}, {"day", "DATE"}, {"at", "TIMESTAMP(3)"}, {"small", "TINYINT"}}

func marshalOrder(t testing.TB, schema avro.Schema, region any, amount *big.Rat) []byte {
	t.Helper()
	b, err := avro.Marshal(schema, map[string]any{
		"user_id": int64(42), "region": region, "tags": []string{"a", "b"}, "attrs": map[string]int{"x": 1},
		"amount": amount, "day": 19723, "at": int64(1_700_000_000_123), "small": 300,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSQLKeyAvro(t *testing.T) {
	schema := avro.MustParse(orderSchema)
	for _, tc := range []struct {
		key    []string
		region any
		amount *big.Rat
		types  []string
		fill   func(e *assign.KeyRowEncoder) error
		text   string
	}{
		{[]string{"user_id", "region"}, "eu-1", big.NewRat(1234, 100), []string{"BIGINT", "STRING"}, longString(42, "eu-1"), `[42,"eu-1"]`},
		{[]string{"user_id", "region"}, nil, big.NewRat(1, 1), []string{"BIGINT", "STRING"}, func(e *assign.KeyRowEncoder) error {
			if err := e.AppendInt(42); err != nil {
				return err
			}
			return e.AppendNull()
		}, `[42,null]`},
		{[]string{"amount", "day", "at"}, "x", big.NewRat(-1234, 100), []string{"DECIMAL(10, 2)", "DATE", "TIMESTAMP(3)"}, func(e *assign.KeyRowEncoder) error {
			for _, s := range []string{"-12.34", "2024-01-01", "2023-11-14 22:13:20.123"} {
				if err := e.AppendText(s); err != nil {
					return err
				}
			}
			return nil
		}, `[-12.34,"2024-01-01","2023-11-14 22:13:20.123"]`},
		// TINYINT is the int cut to a byte (Integer.byteValue): 300 is 44.
		{[]string{"small"}, "x", big.NewRat(1, 1), []string{"TINYINT"}, func(e *assign.KeyRowEncoder) error { return e.AppendInt(44) }, `44`},
	} {
		sp := mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "avro", Columns: orderColumns, Key: tc.key, AvroSchema: orderSchema})
		rec := marshalOrder(t, schema, tc.region, tc.amount)
		k, err := sp.Key(nil, rec)
		if err != nil {
			t.Errorf("%v: Key: %v", tc.key, err)
			continue
		}
		if want := rowOf(t, tc.types, tc.fill); k.Hash != want || k.Text != tc.text {
			t.Errorf("%v: Key = %+v, want hash %d text %q", tc.key, k, want, tc.text)
		}
		if h, err := hashOfText(t, sp, k.Text); err != nil || h != k.Hash {
			t.Errorf("%v: SetKeyText(%q) = %d, %v; want %d", tc.key, k.Text, h, err, k.Hash)
		}
	}

	sp := mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "avro", Columns: orderColumns, Key: []string{"user_id", "region"}, AvroSchema: orderSchema})
	rec := marshalOrder(t, schema, "eu-1", big.NewRat(1, 1))
	for _, cut := range []int{0, 1, 5, len(rec) - 1} {
		_, err := sp.Key(nil, rec[:cut])
		if err == nil || !strings.Contains(err.Error(), "the Avro body does not match the schema at field") {
			t.Errorf("a body cut to %d bytes: %v, want a mismatch error naming the field", cut, err)
		}
	}
}

// TestSQLKeyAvroDerived reads records written with the schema Flink derives
// from the table (nullable columns as unions with null first).
func TestSQLKeyAvroDerived(t *testing.T) {
	cols := []SQLColumn{{"id", "BIGINT NOT NULL"}, {"name", "STRING"}, {"score", "DOUBLE"}}
	sp := mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "avro", Columns: cols, Key: []string{"name"}})
	schema := avro.MustParse(`{"type":"record","name":"record","fields":[{"name":"id","type":"long"},{"name":"name","type":["null","string"]},{"name":"score","type":["null","double"]}]}`)
	rec, err := avro.Marshal(schema, map[string]any{"id": int64(1), "name": "Zoë", "score": 2.5})
	if err != nil {
		t.Fatal(err)
	}
	k, err := sp.Key(nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	if want := rowOf(t, []string{"STRING"}, func(e *assign.KeyRowEncoder) error { return e.AppendString("Zoë") }); k.Hash != want || k.Text != "Zoë" {
		t.Errorf("Key = %+v, want %d %q", k, want, "Zoë")
	}
	if _, err := ParseSQLKeySpec(SQLKeyOptions{From: "value", Format: "avro", Columns: []SQLColumn{{"id", "BIGINT"}, {"tags", "ARRAY<STRING>"}}, Key: []string{"id"}}); err == nil ||
		!strings.Contains(err.Error(), "column tags: SQL type ARRAY<STRING> is not supported") {
		t.Errorf("derived schema with an ARRAY column: %v", err)
	}
}

// fakeRegistry serves GET /schemas/ids/{id} as a Confluent registry does.
func fakeRegistry(t *testing.T, schemas map[int]string, hits *atomic.Int64) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		var id int
		if _, err := fmt.Sscanf(r.URL.Path, "/schemas/ids/%d", &id); err != nil {
			http.NotFound(w, r)
			return
		}
		s, ok := schemas[id]
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error_code":40403,"message":"Schema not found"}`))
			return
		}
		w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		_ = json.NewEncoder(w).Encode(map[string]string{"schema": s})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func confluent(id uint32, body []byte) []byte {
	b := []byte{0, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], id)
	return append(b, body...)
}

func TestSQLKeyAvroConfluent(t *testing.T) {
	// Version 2 of the schema moved the key columns and widened user_id
	// from int: the table reads both by name.
	v2 := `{"type":"record","name":"Order","fields":[{"name":"note","type":"string"},{"name":"region","type":"string"},{"name":"user_id","type":"int"}]}`
	var hits atomic.Int64
	srv := fakeRegistry(t, map[int]string{1: orderSchema, 2: v2}, &hits)
	cl, err := sr.NewClient(sr.URLs(srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	sp := mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "avro-confluent", Columns: []SQLColumn{{"user_id", "BIGINT"}, {"region", "STRING"}},
		Key: []string{"user_id", "region"}, Registry: cl, Options: map[string]string{"avro-confluent.url": srv.URL}})
	want := rowOf(t, []string{"BIGINT", "STRING"}, longString(42, "eu-1"))

	r1 := confluent(1, marshalOrder(t, avro.MustParse(orderSchema), "eu-1", big.NewRat(1, 1)))
	b2, err := avro.Marshal(avro.MustParse(v2), map[string]any{"note": "n", "region": "eu-1", "user_id": 42})
	if err != nil {
		t.Fatal(err)
	}
	r2 := confluent(2, b2)
	for i := 0; i < 3; i++ {
		for _, rec := range [][]byte{r1, r2} {
			k, err := sp.Key(nil, rec)
			if err != nil || k.Hash != want || k.Text != `[42,"eu-1"]` {
				t.Fatalf("schema id %d: Key = %+v, %v; want hash %d", rec[4], k, err, want)
			}
		}
	}
	if n := hits.Load(); n != 2 {
		t.Errorf("the registry was asked %d times, want once per schema id (2)", n)
	}

	s := NewSummary(10, 128)
	for _, rec := range [][]byte{confluent(9, b2), confluent(9, b2), {1, 2, 3}, r1} {
		if k, err := sp.Key(nil, rec); err != nil {
			s.AddError(err)
		} else {
			s.Add(k)
		}
	}
	errs := s.Errors()
	if len(errs) != 2 || errs[0].Count != 2 || !strings.HasPrefix(errs[0].Message, "schema id 9: the registry has no schema for it") ||
		errs[1].Message != "the value is not in the Confluent wire format: no magic byte 0 and schema id (Flink's job fails on it)" {
		t.Errorf("Errors() = %+v", errs)
	}
	if n := hits.Load(); n != 3 {
		t.Errorf("the registry was asked %d times, want 3: a missing id is asked once", n)
	}

	// A schema whose key column has a type Flink does not read as it.
	srv2 := fakeRegistry(t, map[int]string{5: `{"type":"record","name":"R","fields":[{"name":"user_id","type":"string"},{"name":"region","type":"string"}]}`}, &hits)
	cl2, _ := sr.NewClient(sr.URLs(srv2.URL))
	sp2 := mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "avro-confluent", Columns: []SQLColumn{{"user_id", "BIGINT"}, {"region", "STRING"}},
		Key: []string{"user_id", "region"}, Registry: cl2})
	if _, err := sp2.Key(nil, confluent(5, []byte{2, 'a', 2, 'b'})); err == nil || err.Error() != "column user_id BIGINT: schema id 5 has it as string, which Flink does not read as BIGINT" {
		t.Errorf("mismatched schema: %v", err)
	}

	// The schema given instead of a registry.
	sp3 := mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "avro-confluent", Columns: []SQLColumn{{"user_id", "BIGINT"}, {"region", "STRING"}},
		Key: []string{"user_id", "region"}, AvroSchema: v2})
	if k, err := sp3.Key(nil, r2); err != nil || k.Hash != want {
		t.Errorf("avro-confluent with a given schema: %+v, %v", k, err)
	}
}

func TestSQLKeyAvroFixedAndMicros(t *testing.T) {
	schema := `{"type":"record","name":"R","fields":[
		{"name":"f","type":{"type":"fixed","name":"F","size":8,"logicalType":"decimal","precision":18,"scale":2}},
		{"name":"ts","type":{"type":"long","logicalType":"timestamp-micros"}}]}`
	sp := mustSQLSpec(t, SQLKeyOptions{From: "value", Format: "avro", Columns: []SQLColumn{{"f", "DECIMAL(18, 2)"}, {"ts", "TIMESTAMP(6)"}}, Key: []string{"f", "ts"}, AvroSchema: schema})
	rec, err := avro.Marshal(avro.MustParse(schema), map[string]any{"f": big.NewRat(-505, 100), "ts": time.Date(1969, 12, 31, 23, 59, 59, 999_999_000, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	k, err := sp.Key(nil, rec)
	if err != nil {
		t.Fatal(err)
	}
	want := rowOf(t, []string{"DECIMAL(18, 2)", "TIMESTAMP(6)"}, func(e *assign.KeyRowEncoder) error {
		if err := e.AppendDecimal(-505); err != nil {
			return err
		}
		return e.AppendTimestamp(-1, 999_000)
	})
	if k.Hash != want || k.Text != `[-5.05,"1969-12-31 23:59:59.999999"]` {
		t.Errorf("Key = %+v, want hash %d", k, want)
	}
	if h, err := hashOfText(t, sp, k.Text); err != nil || h != k.Hash {
		t.Errorf("SetKeyText(%q) = %d, %v; want %d", k.Text, h, err, k.Hash)
	}
}
