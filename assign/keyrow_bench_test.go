// The speed goal of SQL key rows: routing 1,000,000 composite (BIGINT,
// STRING) keys, written as Flink's key projection writes them and hashed as
// BinaryRowData.hashCode, within 1.5× of routing 1,000,000 plain String keys
// by String.hashCode, with no allocation per key. Both route at
// maxParallelism 32768 and parallelism 100 the same strings
// ("customer-<pad><letter><n>", 10 to 22 bytes, so most rows have a
// variable part); each prints ns/key and ms per 1M keys, and -benchmem's
// allocs/op is per 1M keys (so 0 means none per key). The rows are routed
// two ways: written by one Append per column (the key lookup's path), and
// given whole to RouteValues (the key sample's path).
package assign

import (
	"strings"
	"testing"
)

// The shape both paths route at, in variables so that neither divides by
// a constant the compiler could fold.
var benchMaxP, benchP = 32768, 100

func keyRouteBenchKeys() []string {
	keys := make([]string, 1_000_000)
	for i := range keys {
		keys[i] = "customer-" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + itoa(i)
	}
	return keys
}

func BenchmarkKeyRoute1M(b *testing.B) {
	keys := keyRouteBenchKeys()
	maxP, p := benchMaxP, benchP
	report := func(b *testing.B) {
		ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(ns/float64(len(keys)), "ns/key")
		b.ReportMetric(ns/1e6, "ms/1M-keys")
	}
	b.Run("string", func(b *testing.B) {
		b.ReportAllocs()
		var sink int
		for b.Loop() {
			for _, k := range keys {
				sink += OperatorIndex(maxP, p, KeyGroupForHash(StringHashCode(k), maxP))
			}
		}
		report(b)
		_ = sink
	})
	b.Run("bigint-string-row", func(b *testing.B) {
		e, err := NewKeyRowEncoder(SQLType{Root: SQLBigInt}, SQLType{Root: SQLVarChar, Length: SQLMaxLength})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		var sink int
		for b.Loop() {
			for i, k := range keys {
				e.Reset()
				if err := e.AppendInt(int64(i)); err != nil {
					b.Fatal(err)
				}
				if err := e.AppendString(k); err != nil {
					b.Fatal(err)
				}
				_, op, err := e.Route(maxP, p)
				if err != nil {
					b.Fatal(err)
				}
				sink += op
			}
		}
		report(b)
		_ = sink
	})
	// The same rows given whole, as a key sample routes each record's key
	// (RouteValues: the row's words worked out, not written).
	b.Run("bigint-string-values", func(b *testing.B) {
		e, err := NewKeyRowEncoder(SQLType{Root: SQLBigInt}, SQLType{Root: SQLVarChar, Length: SQLMaxLength})
		if err != nil {
			b.Fatal(err)
		}
		vals := make([]KeyValue, 2)
		b.ReportAllocs()
		var sink int
		for b.Loop() {
			for i, k := range keys {
				vals[0].Int, vals[1].Text = int64(i), k
				_, op, err := e.RouteValues(vals, maxP, p)
				if err != nil {
					b.Fatal(err)
				}
				sink += op
			}
		}
		report(b)
		_ = sink
	})
}
