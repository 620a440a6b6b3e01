package assign

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
)

// KeyValue is one column of a key row given whole, for HashValues and
// RouteValues, the path of a caller that has every column of a key at once
// (a key sample decoding records). Which fields count depends on the
// column's type, as the Append method of that type takes them:
//
//   - Null: a null (AppendNull); the other fields are ignored.
//   - BOOLEAN: Int, 0 false and anything else true (AppendBoolean).
//   - TINYINT, SMALLINT, INT, BIGINT: Int (AppendInt).
//   - FLOAT: the low 32 bits of Int, the raw IEEE bits (AppendFloatBits);
//     DOUBLE: Int's 64 bits (AppendDoubleBits).
//   - DATE: Int, days since 1970-01-01; TIME: Int, milliseconds of the day.
//   - TIMESTAMP, TIMESTAMP_LTZ: Int, epoch milliseconds, and Nano, the
//     nanoseconds within the millisecond (AppendTimestamp).
//   - CHAR, VARCHAR: Text, UTF-8 (AppendString); or, when Java is not nil,
//     Java's code units instead (AppendJavaString).
//   - BINARY, VARBINARY: Text holds the bytes (AppendBytes).
//   - DECIMAL: Decimal, the unscaled value (AppendBigDecimal), or, when
//     Decimal is nil, Int (AppendDecimal).
type KeyValue struct {
	Null    bool
	Int     int64
	Nano    int32
	Text    string
	Java    JavaString
	Decimal *big.Int
}

// HashValues returns BinaryRowData.hashCode of the key row of vals, one
// value per column in key order: the hash of the row that Reset and one
// Append per value would write, and the same error for a value that does
// not fit its column (the first such). The row itself is not kept: after
// HashValues the encoder holds a row in an unspecified state, so Reset
// before the next Append.
//
// A key of at most 8 columns of the types people key by, without DECIMAL,
// Java code units or a null DECIMAL(p > 18) or TIMESTAMP(p > 3), is hashed
// as the row's words are worked out, without writing them; any other key,
// and any value that does not fit, goes through the Append methods. Both
// give the row of BinaryRowWriter as the planner's key projection drives it
// (see KeyRowEncoder), and tests hold them equal.
func (e *KeyRowEncoder) HashValues(vals []KeyValue) (int32, error) {
	if len(vals) != len(e.types) {
		return 0, fmt.Errorf("key row has %d columns, not %d", len(e.types), len(vals))
	}
	if h, ok := e.hashWords(vals); ok {
		return h, nil
	}
	e.Reset()
	for i := range vals {
		if err := e.appendValue(&vals[i]); err != nil {
			return 0, err
		}
	}
	return e.rowHash(), nil
}

// RouteValues returns the key group and the subtask of the key row of vals
// (see HashValues and Route).
//
// Mirrors KeyGroupRangeAssignment.assignKeyToParallelOperator of a
// BinaryRowData key, the route of KeyGroupStreamPartitioner in a SQL hash
// exchange.
func (e *KeyRowEncoder) RouteValues(vals []KeyValue, maxP, p int) (keyGroup, subtask int, err error) {
	if maxP != e.routeMaxP || p != e.routeP {
		if err := CheckMaxParallelism(maxP, p); err != nil {
			return 0, 0, err
		}
		e.routeMaxP, e.routeP = maxP, p
	}
	h, ok := e.hashWords(vals)
	if !ok {
		var err error
		if h, err = e.HashValues(vals); err != nil {
			return 0, 0, err
		}
	}
	kg := KeyGroupForHash(h, maxP)
	return kg, OperatorIndex(maxP, p, kg), nil
}

// appendValue appends v into the next column by the Append method of the
// column's type.
func (e *KeyRowEncoder) appendValue(v *KeyValue) error {
	if e.next >= len(e.types) {
		return e.wrongColumn("")
	}
	if v.Null {
		return e.AppendNull()
	}
	t := &e.types[e.next]
	switch t.Root {
	case SQLBoolean:
		return e.AppendBoolean(v.Int != 0)
	case SQLTinyInt, SQLSmallInt, SQLInt, SQLBigInt:
		return e.AppendInt(v.Int)
	case SQLFloat:
		return e.AppendFloatBits(uint32(v.Int))
	case SQLDouble:
		return e.AppendDoubleBits(uint64(v.Int))
	case SQLDate, SQLTime:
		if v.Int < math.MinInt32 || v.Int > math.MaxInt32 {
			return e.fail(t, fmt.Sprintf("%d out of range of an int", v.Int))
		}
		if t.Root == SQLDate {
			return e.AppendDate(int32(v.Int))
		}
		return e.AppendTime(int32(v.Int))
	case SQLTimestamp, SQLTimestampLTZ:
		return e.AppendTimestamp(v.Int, v.Nano)
	case SQLChar, SQLVarChar:
		if v.Java != nil {
			return e.AppendJavaString(v.Java)
		}
		return e.AppendString(v.Text)
	case SQLBinary, SQLVarBinary:
		return appendBinary(e, v.Text)
	case SQLDecimal:
		if v.Decimal == nil {
			return e.AppendDecimal(v.Int)
		}
		return e.AppendBigDecimal(v.Decimal)
	}
	return fmt.Errorf("key column %d: unknown SQL type root %d", e.next, t.Root)
}

// maxWordKey is the most columns hashWords takes: those whose null bits
// fit the header's first word with the RowKind byte.
const maxWordKey = 56

// wordKind is how hashWords works out a column's slot from its value.
type wordKind uint8

const (
	wordSlow      wordKind = iota // DECIMAL: through AppendBigDecimal's checks
	wordLong                      // BIGINT, DOUBLE: Int's 64 bits
	wordInt                       // INT, DATE: an int
	wordShort                     // SMALLINT
	wordByte                      // TINYINT
	wordBool                      // BOOLEAN
	wordFloat                     // FLOAT: Int's low 32 bits
	wordTime                      // TIME: an int of 0..86399999
	wordTimestamp                 // TIMESTAMP(p <= 3): epoch ms
	wordWideTime                  // TIMESTAMP(p > 3): ms in the variable part
	wordChars                     // CHAR, VARCHAR
	wordBinary                    // BINARY, VARBINARY
)

// wordKinds returns the wordKind of each column, and whether a null fits
// it without a variable-part entry (a nullable column other than
// DECIMAL(p > 18) and TIMESTAMP(p > 3)); nil for a key of more than
// maxWordKey columns, which hashWords leaves to the Append methods.
func wordKinds(types []SQLType) ([]wordKind, []bool) {
	if len(types) > maxWordKey {
		return nil, nil
	}
	kinds, nullOK := make([]wordKind, len(types)), make([]bool, len(types))
	for i, t := range types {
		k := wordSlow
		switch t.Root {
		case SQLBigInt, SQLDouble:
			k = wordLong
		case SQLInt, SQLDate:
			k = wordInt
		case SQLSmallInt:
			k = wordShort
		case SQLTinyInt:
			k = wordByte
		case SQLBoolean:
			k = wordBool
		case SQLFloat:
			k = wordFloat
		case SQLTime:
			k = wordTime
		case SQLTimestamp, SQLTimestampLTZ:
			k = wordTimestamp
			if !t.compact() {
				k = wordWideTime
			}
		case SQLChar, SQLVarChar:
			k = wordChars
		case SQLBinary, SQLVarBinary:
			k = wordBinary
		}
		kinds[i] = k
		nullOK[i] = !t.NotNull && k != wordWideTime && (k != wordSlow || t.compact())
	}
	return kinds, nullOK
}

// hashWords is HashValues for the keys it can hash without writing the
// row, and false for the rest (and for a value that does not fit its
// column, whose error the Append methods give). The row is
// [header][one slot per column][variable part] (see KeyRowEncoder), its
// words mixed in that order: the header from the nulls, each slot from its
// value, then each variable-part entry from its value's bytes. The slot
// words are those the Append methods write (putSlot, putInline,
// putVarWords, AppendNull's zero slot); TestHashValuesEqualsAppends holds
// the two paths equal.
func (e *KeyRowEncoder) hashWords(vals []KeyValue) (int32, bool) {
	n := len(vals)
	if n != len(e.kinds) { // (kinds is nil for more than maxWordKey columns)
		return 0, false
	}
	// Most keys have no null: mix the slots after a zero header, and
	// start again after the real header at the first null.
	var header uint64 // RowKind 0 and the null bits
	h := murmurAfterZeroWord
again:
	var varCols uint64
	off := 8 * e.fixed // the next variable-part entry's offset
	for i, k := range e.kinds[:n] {
		v := &vals[i]
		var w uint64
		switch {
		case v.Null:
			if !e.nullOK[i] {
				return 0, false
			}
			if header == 0 {
				for j := range vals {
					if vals[j].Null {
						header |= 1 << (j + 8)
					}
				}
				h = murmurMix(murmurMix(murmurSeed, uint32(header)), uint32(header>>32))
				goto again
			}
		case k == wordLong:
			w = uint64(v.Int)
		case k == wordChars || k == wordBinary:
			if k == wordChars && v.Java != nil {
				return 0, false
			}
			s := v.Text
			if len(s) <= maxInlineBytes {
				w = uint64(0x80|len(s)) << 56
				for j := len(s) - 1; j >= 0; j-- {
					w |= uint64(s[j]) << (8 * j)
				}
				break
			}
			if len(s) > maxKeyRowVarLen {
				return 0, false
			}
			w = uint64(off)<<32 | uint64(len(s))
			off += (len(s) + 7) &^ 7
			if i == n-1 && varCols == 0 {
				// The last column and the only entry of the variable
				// part: its words follow its slot.
				// (mixVarWords, written out.)
				h = murmurMix(murmurMix(h, uint32(w)), uint32(w>>32))
				last := le64(s[len(s)-8:]) >> (8 * ((8 - len(s)&7) & 7))
				for ; len(s) > 8; s = s[8:] {
					x := le64(s)
					h = murmurMix(murmurMix(h, uint32(x)), uint32(x>>32))
				}
				h = murmurMix(murmurMix(h, uint32(last)), uint32(last>>32))
				continue
			}
			varCols |= 1 << i
		case k == wordInt:
			if v.Int != int64(int32(v.Int)) {
				return 0, false
			}
			w = uint64(uint32(v.Int))
		case k == wordShort:
			if v.Int != int64(int16(v.Int)) {
				return 0, false
			}
			w = uint64(uint16(v.Int))
		case k == wordByte:
			if v.Int != int64(int8(v.Int)) {
				return 0, false
			}
			w = uint64(uint8(v.Int))
		case k == wordBool:
			if v.Int != 0 {
				w = 1
			}
		case k == wordFloat:
			w = uint64(uint32(v.Int))
		case k == wordTime:
			if v.Int < 0 || v.Int >= 86_400_000 {
				return 0, false
			}
			w = uint64(v.Int)
		case k == wordTimestamp || k == wordWideTime:
			if v.Nano < 0 || v.Nano > 999_999 {
				return 0, false
			}
			if k == wordTimestamp {
				w = uint64(v.Int)
				break
			}
			w = uint64(off)<<32 | uint64(v.Nano)
			varCols |= 1 << i
			off += 8
		default:
			return 0, false
		}
		h = murmurMix(murmurMix(h, uint32(w)), uint32(w>>32))
	}
	for varCols != 0 {
		i := bits.TrailingZeros64(varCols)
		varCols &= varCols - 1
		v := &vals[i]
		if e.kinds[i] == wordWideTime {
			h = murmurMix(murmurMix(h, uint32(v.Int)), uint32(uint64(v.Int)>>32))
			continue
		}
		h = mixVarWords(h, v.Text)
	}
	h ^= uint32(off)
	return int32(bitMix(h)), true
}

// mixVarWords mixes a variable-part entry of s (more than 7 bytes) into h:
// its little-endian words, the last one padded with zeros, as putVarWords
// writes them.
func mixVarWords(h uint32, s string) uint32 {
	n := len(s)
	last := le64(s[n-8:]) >> (8 * ((8 - n&7) & 7))
	for ; len(s) > 16; s = s[16:] {
		w, x := le64(s), le64(s[8:])
		h = murmurMix(murmurMix(h, uint32(w)), uint32(w>>32))
		h = murmurMix(murmurMix(h, uint32(x)), uint32(x>>32))
	}
	if len(s) > 8 {
		w := le64(s)
		h = murmurMix(murmurMix(h, uint32(w)), uint32(w>>32))
	}
	return murmurMix(murmurMix(h, uint32(last)), uint32(last>>32))
}
