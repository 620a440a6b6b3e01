package assign

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// randomKeyType is a column type of any root, nullable or not, with the
// precisions either side of the compact forms.
func randomKeyType(r *rand.Rand) SQLType {
	t := SQLType{Root: SQLBoolean + SQLTypeRoot(r.IntN(int(SQLDecimal-SQLBoolean)+1)), NotNull: r.IntN(4) == 0}
	switch t.Root {
	case SQLChar, SQLVarChar, SQLBinary, SQLVarBinary:
		t.Length = SQLMaxLength
	case SQLTime, SQLTimestamp, SQLTimestampLTZ:
		t.Precision = r.IntN(SQLMaxTimePrecision + 1)
	case SQLDecimal:
		t.Precision = 1 + r.IntN(SQLMaxDecimalPrecision)
		t.Scale = r.IntN(t.Precision + 1)
	}
	return t
}

// randomKeyValue is a value for t, now and then one that does not fit it
// (out of range, a null in a NOT NULL column), and strings of every length
// around the inline limit and the word boundaries.
func randomKeyValue(r *rand.Rand, t SQLType) KeyValue {
	if r.IntN(6) == 0 {
		return KeyValue{Null: true}
	}
	edge := []int64{0, 1, -1, math.MinInt8, math.MaxInt8, math.MinInt16, math.MaxInt16,
		math.MinInt32, math.MaxInt32, math.MinInt64, math.MaxInt64, 86_399_999, 86_400_000, 1 << 40}
	v := KeyValue{Int: int64(r.Uint64())}
	if r.IntN(2) == 0 {
		v.Int = edge[r.IntN(len(edge))]
	}
	switch t.Root {
	case SQLTime:
		if r.IntN(3) > 0 {
			v.Int = r.Int64N(86_400_000)
		}
	case SQLDate:
		if r.IntN(3) > 0 {
			v.Int = int64(int32(v.Int))
		}
	case SQLTimestamp, SQLTimestampLTZ:
		v.Nano = int32(r.IntN(1_000_000))
		if r.IntN(8) == 0 {
			v.Nano = -1
		}
	case SQLChar, SQLVarChar, SQLBinary, SQLVarBinary:
		var b strings.Builder
		for range r.IntN(30) {
			b.WriteByte(byte(r.IntN(256)))
		}
		v.Text = b.String()
		if r.IntN(8) == 0 && (t.Root == SQLChar || t.Root == SQLVarChar) {
			v.Java = JavaString{'k', 0xD800, 'x'}
		}
	case SQLDecimal:
		if r.IntN(2) == 0 {
			d := new(big.Int).SetUint64(r.Uint64())
			d.Lsh(d, 64).Or(d, new(big.Int).SetUint64(r.Uint64()))
			v.Decimal = d.Mod(d, bigPow10[t.Precision])
			if r.IntN(10) == 0 {
				v.Decimal.Set(bigPow10[t.Precision]) // one digit too many
			}
			if r.IntN(2) == 0 {
				v.Decimal.Neg(v.Decimal)
			}
		} else {
			v.Int = r.Int64N(1000)
		}
	}
	return v
}

// TestHashValuesEqualsAppends holds HashValues, and its path that does not
// write the row, equal to Reset and one Append per value on random keys of
// every type, including values that do not fit (the same error).
func TestHashValuesEqualsAppends(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fast := 0
	for range 20_000 {
		types := make([]SQLType, 1+r.IntN(10))
		for i := range types {
			types[i] = randomKeyType(r)
		}
		e, err := NewKeyRowEncoder(types...)
		if err != nil {
			t.Fatal(err)
		}
		ref, _ := NewKeyRowEncoder(types...)
		vals := make([]KeyValue, len(types))
		for i, typ := range types {
			vals[i] = randomKeyValue(r, typ)
		}
		var want int32
		var wantErr error
		ref.Reset()
		for i := range vals {
			if wantErr = ref.appendValue(&vals[i]); wantErr != nil {
				break
			}
		}
		if wantErr == nil {
			want, wantErr = ref.HashCode()
		}
		got, err := e.HashValues(vals)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() || got != want {
			t.Fatalf("types %v values %+v: HashValues = %d, %v; Appends give %d, %v", types, vals, got, err, want, wantErr)
		}
		if h, ok := e.hashWords(vals); ok {
			fast++
			if wantErr != nil || h != want {
				t.Fatalf("types %v values %+v: hashWords = %d; Appends give %d, %v", types, vals, h, want, wantErr)
			}
		}
	}
	t.Logf("%d of 20000 random keys hashed without writing the row", fast)
	// Most keys without DECIMAL or Java code units take the path that does
	// not write the row: the test covers it.
	if fast < 2_000 {
		t.Errorf("%d of 20000 keys hashed without writing the row, want at least 2000", fast)
	}
}

// TestHashValuesRefuses names what is wrong with a key given whole.
func TestHashValuesRefuses(t *testing.T) {
	e := mustEncoder(t, "BIGINT, STRING NOT NULL, INT")
	for _, c := range []struct {
		vals []KeyValue
		want string
	}{
		{[]KeyValue{{Int: 1}}, "key row has 3 columns, not 1"},
		{[]KeyValue{{Int: 1}, {Null: true}, {Int: 2}}, "key column 1 (VARCHAR(2147483647) NOT NULL): null in a NOT NULL column"},
		{[]KeyValue{{Int: 1}, {Text: "a"}, {Int: 1 << 40}}, "key column 2 (INT): 1099511627776 out of range -2147483648..2147483647"},
	} {
		_, err := e.HashValues(c.vals)
		if err == nil || err.Error() != c.want {
			t.Errorf("HashValues(%+v) = %v, want %q", c.vals, err, c.want)
		}
		if _, _, err := e.RouteValues(c.vals, 128, 4); err == nil || err.Error() != c.want {
			t.Errorf("RouteValues(%+v) = %v, want %q", c.vals, err, c.want)
		}
	}
	if _, _, err := e.RouteValues([]KeyValue{{}, {}, {}}, 128, 200); err == nil {
		t.Error("RouteValues at parallelism 200 > maxParallelism 128: no error")
	}
}

// TestHashValuesAllocationFree: a key hashed without writing its row
// allocates nothing.
func TestHashValuesAllocationFree(t *testing.T) {
	e := mustEncoder(t, "BIGINT, STRING, TIMESTAMP(6), BOOLEAN")
	vals := []KeyValue{{Int: 42}, {Text: "customer-000123"}, {Int: 1_700_000_000_000, Nano: 123_000}, {Null: true}}
	if n := testing.AllocsPerRun(100, func() {
		if _, _, err := e.RouteValues(vals, 32768, 100); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("RouteValues: %v allocations per key, want 0", n)
	}
}

// A key of more columns than one header word holds null bits for (a
// header of two words) goes through the Append methods, with the same
// hash.
func TestHashValuesWideKey(t *testing.T) {
	types := make([]SQLType, 60)
	vals := make([]KeyValue, len(types))
	for i := range types {
		types[i] = SQLType{Root: SQLBigInt}
		vals[i] = KeyValue{Int: int64(i) * 7919, Null: i%9 == 4}
	}
	e, err := NewKeyRowEncoder(types...)
	if err != nil {
		t.Fatal(err)
	}
	e.Reset()
	for i := range vals {
		if err := e.appendValue(&vals[i]); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := e.HashCode()
	if got, err := e.HashValues(vals); err != nil || got != want {
		t.Errorf("HashValues of 60 columns = %d, %v; Appends give %d", got, err, want)
	}
}
