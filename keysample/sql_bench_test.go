package keysample

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/skewscope/skewscope/assign"
)

// BenchmarkSQLKeyJSON reads the (BIGINT, STRING) key of JSON records as
// Flink's json format does and hashes its key row; one op is one record.
// Run it over a million records:
//
//	go test ./keysample/ -run '^$' -bench SQLKeyJSON -benchtime 1000000x
func BenchmarkSQLKeyJSON(b *testing.B) {
	benchSQLKeyJSON(b, `{"user_id":%d,"region":"region-%d","amount":%d.25,"ts":"2026-01-02 03:04:05"}`)
}

// BenchmarkSQLKeyJSONEscaped is BenchmarkSQLKeyJSON with escapes in a
// field name and in the key's string, which are decoded into Java code
// units (a surrogate pair among them).
func BenchmarkSQLKeyJSONEscaped(b *testing.B) {
	benchSQLKeyJSON(b, `{"user\u005fid":%d,"region":"r\u00e9gion\t\ud83d\ude00-%d","amount":%d.25,"ts":"2026-01-02 03:04:05"}`)
}

// benchSQLKeyJSON times Key over records made by format from a user id, a
// region number and an amount.
func benchSQLKeyJSON(b *testing.B, format string) {
	sp := mustSQLSpec(b, SQLKeyOptions{From: "value", Format: "json", Columns: userRegion, Key: []string{"user_id", "region"}})
	recs := make([][]byte, 1<<14)
	for i := range recs {
		recs[i] = fmt.Appendf(nil, format, 1_000_000+i*7919, i%97, i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var sink int32
	for i := 0; i < b.N; i++ {
		k, err := sp.Key(nil, recs[i&(len(recs)-1)])
		if err != nil {
			b.Fatal(err)
		}
		sink ^= k.Hash
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/record")
	_ = sink
}

// BenchmarkSQLKeyRowOnly is the key row's share of BenchmarkSQLKeyJSON:
// the same (BIGINT, STRING) rows written and hashed without decoding.
func BenchmarkSQLKeyRowOnly(b *testing.B) {
	bi, _ := assign.ParseSQLType("BIGINT")
	st, _ := assign.ParseSQLType("STRING")
	e, _ := assign.NewKeyRowEncoder(bi, st)
	regions := make([]string, 97)
	for i := range regions {
		regions[i] = fmt.Sprintf("region-%d", i)
	}
	b.ReportAllocs()
	var sink int32
	for i := 0; i < b.N; i++ {
		e.Reset()
		_ = e.AppendInt(int64(1_000_000 + i*7919))
		_ = e.AppendString(regions[i%97])
		h, _ := e.HashCode()
		sink ^= h
	}
	_ = sink
}

// BenchmarkSQLKeyJSONStdlib is a yardstick for BenchmarkSQLKeyJSON on a
// loaded machine: encoding/json decoding the same records' two key fields
// into a struct, no key row.
func BenchmarkSQLKeyJSONStdlib(b *testing.B) {
	recs := make([][]byte, 1<<14)
	for i := range recs {
		recs[i] = fmt.Appendf(nil, `{"user_id":%d,"region":"region-%d","amount":%d.25,"ts":"2026-01-02 03:04:05"}`, 1_000_000+i*7919, i%97, i)
	}
	var v struct {
		UserID int64  `json:"user_id"`
		Region string `json:"region"`
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := json.Unmarshal(recs[i&(len(recs)-1)], &v); err != nil {
			b.Fatal(err)
		}
	}
}
