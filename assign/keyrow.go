package assign

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"math/bits"
)

// Flink SQL keys: a GROUP BY, a join, an OVER window, a deduplication or a
// Top-N keys its records by a BinaryRowData that holds the key columns, so
// the key group of a SQL key is
//
//	murmurHash(BinaryRowData.hashCode()) % maxParallelism
//
// where BinaryRowData.hashCode is MurmurHash3_x86_32 (seed 42) over the key
// row's bytes. A KeyRowEncoder writes those bytes exactly as the planner's
// key projection does (KeySelectorUtil.getRowDataSelector, whose generated
// projection writes each column with a BinaryRowWriter), and hashes and
// routes them.
//
// The layout of a row of n fields (BinaryRowData, BinaryRowWriter,
// AbstractBinaryWriter in flink-table-common and flink-table-runtime):
//
//   - a header and null bitset of ((n + 63 + 8) / 64) * 8 bytes: byte 0 is
//     the RowKind, which the key projection leaves 0 (its writer's reset
//     zeroes it), and field i is null when bit i + 8 is set (LSB first);
//   - one 8-byte little-endian slot per field: BOOLEAN and TINYINT 1 byte,
//     SMALLINT 2, INT, DATE and TIME 4, BIGINT 8, FLOAT and DOUBLE their raw
//     IEEE bits, the rest of the slot zero; a null leaves the slot zero;
//   - the variable part, each entry padded with zeros to 8 bytes.
//
// Strings (UTF-8) and bytes of at most 7 bytes sit in the slot itself: the
// bytes in slot bytes 0..6 and 0x80 | length in byte 7. Longer ones go to the
// variable part, and the slot holds offset<<32 | length, the offset counted
// from the start of the row. DECIMAL(p <= 18) is its unscaled value as a
// long; DECIMAL(p > 18) is a zeroed 16-byte block in the variable part that
// starts with the unscaled value's BigInteger.toByteArray() (big-endian,
// minimal two's complement), with offset<<32 | byte length in the slot.
// TIMESTAMP(p <= 3) and TIMESTAMP_LTZ(p <= 3) are epoch milliseconds as a
// long; with p > 3 the milliseconds take 8 bytes of the variable part and the
// slot holds offset<<32 | nanoOfMillisecond. A null DECIMAL(p > 18) or
// TIMESTAMP(p > 3) still takes its 16 or 8 zero bytes of the variable part,
// its slot offset<<32.
//
// The hash reads the row as 4-byte words in the JVM's native byte order, so
// this is the row and hash of a little-endian host (x86-64, AArch64): the
// hosts Flink runs on.

// KeyRowEncoder writes Flink SQL key rows for one list of column types into
// a buffer it reuses: Reset, one Append per column in order, then Bytes,
// HashCode or Route. Once the buffer has grown to the largest row written,
// writing, hashing and routing a row allocate nothing (AppendText of a
// DECIMAL aside, which parses through math/big).
//
// The row is kept as its 8-byte little-endian words (a row is a whole
// number of them, and the hash reads them two 4-byte halves at a time):
// each slot is one store, a variable-part entry one store per word, and
// the hash one load per word. Bytes writes the byte image from them.
//
// An Append that fails (a value of the wrong kind, out of range, a null in a
// NOT NULL column) returns an error naming the column and leaves the row as
// it was, so the caller may append another value to the same column or
// Reset. A KeyRowEncoder is not safe for concurrent use.
//
// Mirrors org.apache.flink.table.data.writer.BinaryRowWriter as the
// planner's generated key projection drives it (ProjectionCodeGenerator,
// CodeGenUtils.binaryWriterWriteField and binaryWriterWriteNull).
type KeyRowEncoder struct {
	types     []SQLType
	roots     []SQLTypeRoot // types[i].Root
	nullWords int           // header and null bitset, in words
	fixed     int           // nullWords + one word per field
	row       []uint64      // the row's words: header, slots, variable part
	next      int           // the field the next Append writes
	// The last (maxP, p) that Route validated.
	routeMaxP, routeP int
	bytes             []byte // Bytes' image of row
	utf8              []byte // AppendJavaString's encoding
	// How HashValues works out each column's slot (see hashWords).
	kinds  []wordKind
	nullOK []bool
}

// KeyRowError is the error for a value that does not fit its key column.
type KeyRowError struct {
	Column int     // 0-based position in the key
	Type   SQLType // the column's type
	Reason string
}

func (e *KeyRowError) Error() string {
	return fmt.Sprintf("key column %d (%s): %s", e.Column, e.Type, e.Reason)
}

// NewKeyRowEncoder returns an encoder for key rows of the given column
// types, in key order, ready for the first column. A key has at least one
// column. A type that ParseSQLType would not return is refused.
func NewKeyRowEncoder(types ...SQLType) (*KeyRowEncoder, error) {
	if len(types) == 0 {
		return nil, fmt.Errorf("a key row needs at least one column")
	}
	for i, t := range types {
		if err := checkSQLType(t); err != nil {
			return nil, fmt.Errorf("key column %d: %w", i, err)
		}
	}
	n := len(types)
	nw := keyRowBitSetWidth(n) / 8
	e := &KeyRowEncoder{
		types:     append([]SQLType(nil), types...),
		roots:     make([]SQLTypeRoot, n),
		nullWords: nw,
		fixed:     nw + n,
	}
	for i, t := range types {
		e.roots[i] = t.Root
	}
	e.kinds, e.nullOK = wordKinds(types)
	e.row = make([]uint64, e.fixed, e.fixed+8)
	e.Reset()
	return e, nil
}

// keyRowBitSetWidth is BinaryRowData.calculateBitSetWidthInBytes: the
// header byte and one null bit per field, rounded up to 8-byte words.
func keyRowBitSetWidth(arity int) int {
	return ((arity + 63 + 8) / 64) * 8
}

func checkSQLType(t SQLType) error {
	switch t.Root {
	case SQLBoolean, SQLTinyInt, SQLSmallInt, SQLInt, SQLBigInt, SQLFloat, SQLDouble, SQLDate:
		return nil
	case SQLChar, SQLVarChar, SQLBinary, SQLVarBinary:
		if t.Length < 1 || t.Length > SQLMaxLength {
			return fmt.Errorf("%s: length out of range 1..%d", t, SQLMaxLength)
		}
		return nil
	case SQLTime, SQLTimestamp, SQLTimestampLTZ:
		if t.Precision < 0 || t.Precision > SQLMaxTimePrecision {
			return fmt.Errorf("%s: precision out of range 0..%d", t, SQLMaxTimePrecision)
		}
		return nil
	case SQLDecimal:
		if t.Precision < 1 || t.Precision > SQLMaxDecimalPrecision || t.Scale < 0 || t.Scale > t.Precision {
			return fmt.Errorf("%s: want 1 <= precision <= %d and 0 <= scale <= precision", t, SQLMaxDecimalPrecision)
		}
		return nil
	}
	return fmt.Errorf("unknown SQL type root %d", t.Root)
}

// Reset starts a new row: header and null bits zero, no variable part, the
// next Append writing column 0. The slots are not cleared: each Append
// writes all 8 bytes of its slot, and Bytes refuses a row with a column
// not written.
//
// Mirrors BinaryRowWriter.reset, which zeroes the header and null bitset
// and leaves the slots to be overwritten field by field.
func (e *KeyRowEncoder) Reset() {
	w := e.row[:e.fixed]
	for i := range e.nullWords {
		w[i] = 0
	}
	e.row = w
	e.next = 0
}

// rootSet is a set of type roots, one bit per SQLTypeRoot.
type rootSet uint32

func roots(rs ...SQLTypeRoot) rootSet {
	var m rootSet
	for _, r := range rs {
		m |= 1 << r
	}
	return m
}

var (
	booleanRoots   = roots(SQLBoolean)
	integerRoots   = roots(SQLTinyInt, SQLSmallInt, SQLInt, SQLBigInt)
	floatRoots     = roots(SQLFloat)
	doubleRoots    = roots(SQLDouble)
	stringRoots    = roots(SQLChar, SQLVarChar)
	binaryRoots    = roots(SQLBinary, SQLVarBinary)
	dateRoots      = roots(SQLDate)
	timeRoots      = roots(SQLTime)
	timestampRoots = roots(SQLTimestamp, SQLTimestampLTZ)
	decimalRoots   = roots(SQLDecimal)
)

// column returns the slot (the index of its word) of the next column and
// whether there is one whose root is in want; wrongColumn then names the
// error.
func (e *KeyRowEncoder) column(want rootSet) (int, bool) {
	i := e.next
	if i < len(e.roots) && want&(1<<(e.roots[i]&31)) != 0 {
		return e.nullWords + i, true
	}
	return 0, false
}

// wrongColumn is the error for an Append past the last column or of the
// wrong kind.
func (e *KeyRowEncoder) wrongColumn(what string) error {
	if e.next >= len(e.types) {
		return fmt.Errorf("key row has %d columns, all written: Reset before the next row", len(e.types))
	}
	return &KeyRowError{Column: e.next, Type: e.types[e.next], Reason: "not " + what}
}

// putSlot writes the slot's word and moves to the next column.
func (e *KeyRowEncoder) putSlot(slot int, v uint64) {
	e.row[slot] = v
	e.next++
}

func (e *KeyRowEncoder) fail(t *SQLType, reason string) error {
	return &KeyRowError{Column: e.next, Type: *t, Reason: reason}
}

// AppendNull writes a null into the next column: its null bit set and its
// slot zero; a DECIMAL(p > 18) or TIMESTAMP(p > 3) column also takes its 16
// or 8 zero bytes of the variable part, the slot pointing at them.
//
// Mirrors CodeGenUtils.binaryWriterWriteNull: BinaryRowWriter.setNullAt, or
// AbstractBinaryWriter.writeDecimal / writeTimestamp with a null value.
func (e *KeyRowEncoder) AppendNull() error {
	if e.next >= len(e.types) {
		return e.wrongColumn("")
	}
	t := &e.types[e.next]
	if t.NotNull {
		return e.fail(t, "null in a NOT NULL column")
	}
	bit := e.next + 8
	e.row[bit>>6] |= 1 << (bit & 63)
	slot := e.nullWords + e.next
	switch {
	case t.Root == SQLDecimal && !t.compact():
		off := e.appendVar(0, 0)
		e.putSlot(slot, uint64(off)<<32)
	case (t.Root == SQLTimestamp || t.Root == SQLTimestampLTZ) && !t.compact():
		off := e.appendVar(0)
		e.putSlot(slot, uint64(off)<<32)
	default:
		e.putSlot(slot, 0)
	}
	return nil
}

// appendVar appends words to the variable part and returns the byte offset
// of the first, counted from the start of the row.
func (e *KeyRowEncoder) appendVar(words ...uint64) int {
	off := 8 * len(e.row)
	e.row = append(e.row, words...)
	return off
}

// AppendBoolean writes a BOOLEAN: one byte, 1 or 0.
//
// Mirrors BinaryRowWriter.writeBoolean (MemorySegment.putBoolean).
func (e *KeyRowEncoder) AppendBoolean(v bool) error {
	slot, ok := e.column(booleanRoots)
	if !ok {
		return e.wrongColumn("BOOLEAN")
	}
	var b uint64
	if v {
		b = 1
	}
	e.putSlot(slot, b)
	return nil
}

// AppendInt writes an integer into a TINYINT (1 byte), SMALLINT (2), INT
// (4) or BIGINT (8) column, little-endian two's complement; a value out of
// the column's range is refused.
//
// Mirrors BinaryRowWriter.writeByte, writeShort, writeInt and writeLong.
func (e *KeyRowEncoder) AppendInt(v int64) error {
	// BIGINT inline, the rest out of line.
	if i := e.next; i < len(e.roots) && e.roots[i] == SQLBigInt {
		e.putSlot(e.nullWords+i, uint64(v))
		return nil
	}
	return e.appendSmallInt(v)
}

// appendSmallInt is AppendInt for TINYINT, SMALLINT and INT, and its errors.
func (e *KeyRowEncoder) appendSmallInt(v int64) error {
	slot, ok := e.column(integerRoots)
	if !ok {
		return e.wrongColumn("an integer column")
	}
	t := &e.types[e.next]
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	switch t.Root {
	case SQLTinyInt:
		lo, hi = math.MinInt8, math.MaxInt8
	case SQLSmallInt:
		lo, hi = math.MinInt16, math.MaxInt16
	}
	if v < lo || v > hi {
		return e.fail(t, fmt.Sprintf("%d out of range %d..%d", v, lo, hi))
	}
	// Two's complement of the column's width, the rest of the slot zero.
	e.putSlot(slot, uint64(v)&(uint64(hi)<<1|1))
	return nil
}

// Java's canonical NaNs: Float.NaN and Double.NaN, the NaN of
// Float.parseFloat("NaN"), Double.parseDouble("NaN") and SQL's CAST.
const (
	javaFloatNaN  = 0x7fc00000
	javaDoubleNaN = 0x7ff8000000000000
)

// AppendFloat writes a FLOAT: its IEEE bits, 4 bytes. A NaN is written as
// Java's Float.NaN (0x7fc00000), the NaN a JVM parses; −0.0 stays distinct
// from 0.0. Use AppendFloatBits for another NaN.
func (e *KeyRowEncoder) AppendFloat(v float32) error {
	b := math.Float32bits(v)
	if v != v {
		b = javaFloatNaN
	}
	return e.AppendFloatBits(b)
}

// AppendFloatBits writes a FLOAT given as its raw IEEE bits, as Flink does:
// it does not canonicalise NaN, so a NaN's payload reaches the hash.
//
// Mirrors BinaryRowWriter.writeFloat (MemorySegment.putFloat, which writes
// Float.floatToRawIntBits).
func (e *KeyRowEncoder) AppendFloatBits(bits uint32) error {
	slot, ok := e.column(floatRoots)
	if !ok {
		return e.wrongColumn("FLOAT")
	}
	e.putSlot(slot, uint64(bits))
	return nil
}

// AppendDouble writes a DOUBLE: its IEEE bits, 8 bytes. A NaN is written as
// Java's Double.NaN (0x7ff8000000000000), the NaN a JVM parses (Go's
// math.NaN() has other bits); −0.0 stays distinct from 0.0. Use
// AppendDoubleBits for another NaN.
func (e *KeyRowEncoder) AppendDouble(v float64) error {
	b := math.Float64bits(v)
	if v != v {
		b = javaDoubleNaN
	}
	return e.AppendDoubleBits(b)
}

// AppendDoubleBits writes a DOUBLE given as its raw IEEE bits, as Flink does:
// it does not canonicalise NaN, so a NaN's payload reaches the hash.
//
// Mirrors BinaryRowWriter.writeDouble (MemorySegment.putDouble, which writes
// Double.doubleToRawLongBits).
func (e *KeyRowEncoder) AppendDoubleBits(bits uint64) error {
	slot, ok := e.column(doubleRoots)
	if !ok {
		return e.wrongColumn("DOUBLE")
	}
	e.putSlot(slot, bits)
	return nil
}

// AppendString writes a CHAR or VARCHAR (STRING) value given as its UTF-8
// bytes, which are written as they are. For valid UTF-8 these are the bytes
// Flink writes for the Java string s denotes (StringData.fromString); for
// other bytes, those StringData.fromBytes keeps. A value that a JVM holds as
// a String with lone surrogates is written by AppendJavaString. CHAR values
// are written as given: the row writer does not pad them.
//
// Mirrors AbstractBinaryWriter.writeString: at most 7 bytes inline
// (writeBytesToFixLenPart), more in the variable part
// (writeBytesToVarLenPart / writeSegmentsToVarLenPart).
func (e *KeyRowEncoder) AppendString(s string) error {
	slot, ok := e.column(stringRoots)
	if !ok {
		return e.wrongColumn("a CHAR or VARCHAR column")
	}
	n := len(s)
	if n <= maxInlineBytes {
		putInline(e, slot, s)
		return nil
	}
	if n > maxKeyRowVarLen {
		return e.fail(&e.types[e.next], "value longer than a Flink row can hold")
	}
	// putVarWords, written out for strings: the hot path of a (BIGINT,
	// STRING) key.
	start, nw := len(e.row), (n+7)>>3
	if cap(e.row)-start < nw {
		e.growRow(nw)
	}
	w := e.row[start : start+nw]
	e.row = e.row[:start+nw]
	e.row[slot] = uint64(8*start)<<32 | uint64(n)
	e.next++
	last := le64(s[n-8:]) >> (8 * (8*nw - n))
	for i := 0; i+8 < n; i += 8 {
		w[i>>3] = le64(s[i:])
	}
	w[nw-1] = last
	return nil
}

// AppendBytes writes a BINARY or VARBINARY (BYTES) value.
//
// Mirrors AbstractBinaryWriter.writeBinary: at most 7 bytes inline, more in
// the variable part.
func (e *KeyRowEncoder) AppendBytes(b []byte) error {
	return appendBinary(e, b)
}

// appendBinary is AppendBytes of bytes held in a string or a slice.
func appendBinary[T ~string | ~[]byte](e *KeyRowEncoder, b T) error {
	slot, ok := e.column(binaryRoots)
	if !ok {
		return e.wrongColumn("a BINARY or VARBINARY column")
	}
	if len(b) > maxKeyRowVarLen {
		return e.fail(&e.types[e.next], "value longer than a Flink row can hold")
	}
	if len(b) <= maxInlineBytes {
		putInline(e, slot, b)
		return nil
	}
	e.putSlot(slot, uint64(putVarWords(e, b))<<32|uint64(len(b)))
	return nil
}

// AppendJavaString writes a CHAR or VARCHAR value given as the UTF-16 code
// units of a Java String, encoded as String.getBytes(UTF_8) encodes it:
// surrogate pairs as 4 bytes, each lone surrogate as '?' (0x3F).
//
// Mirrors AbstractBinaryWriter.writeString of a StringData.fromString value
// (String.getBytes(StandardCharsets.UTF_8); StringUtf8Utils.encodeUTF8,
// used when a string is materialised, falls back to the same JDK encoder
// for lone surrogates).
func (e *KeyRowEncoder) AppendJavaString(s JavaString) error {
	slot, ok := e.column(stringRoots)
	if !ok {
		return e.wrongColumn("a CHAR or VARCHAR column")
	}
	if len(s) > maxKeyRowVarLen/3 {
		return e.fail(&e.types[e.next], "value longer than a Flink row can hold")
	}
	e.utf8 = appendJavaUTF8(e.utf8[:0], s)
	b := e.utf8
	if len(b) <= maxInlineBytes {
		putInline(e, slot, b)
		return nil
	}
	e.putSlot(slot, uint64(putVarWords(e, b))<<32|uint64(len(b)))
	return nil
}

// appendJavaUTF8 appends String.getBytes(UTF_8) of the code units s: the
// JDK's encoder replaces each unpaired surrogate by '?'.
func appendJavaUTF8(dst []byte, s JavaString) []byte {
	for i := 0; i < len(s); i++ {
		c := rune(s[i])
		switch {
		case c < 0x80:
			dst = append(dst, byte(c))
		case c < 0x800:
			dst = append(dst, byte(0xC0|c>>6), byte(0x80|c&0x3F))
		case c >= 0xD800 && c <= 0xDBFF && i+1 < len(s) && s[i+1] >= 0xDC00 && s[i+1] <= 0xDFFF:
			r := 0x10000 + (c-0xD800)<<10 + (rune(s[i+1]) - 0xDC00)
			dst = append(dst, byte(0xF0|r>>18), byte(0x80|(r>>12)&0x3F), byte(0x80|(r>>6)&0x3F), byte(0x80|r&0x3F))
			i++
		case c >= 0xD800 && c <= 0xDFFF:
			dst = append(dst, '?')
		default:
			dst = append(dst, byte(0xE0|c>>12), byte(0x80|(c>>6)&0x3F), byte(0x80|c&0x3F))
		}
	}
	return dst
}

const (
	// maxInlineBytes is BinaryFormat.MAX_FIX_PART_DATA_SIZE.
	maxInlineBytes = 7
	// maxKeyRowVarLen bounds one value so that offsets and lengths stay
	// within the Java int of a row's size.
	maxKeyRowVarLen = 1<<30 - 1
)

// putInline writes up to 7 bytes into the slot, with 0x80 | length in its
// last byte, and moves to the next column.
//
// Mirrors AbstractBinaryWriter.writeBytesToFixLenPart on a little-endian
// host: the long (0x80 | len) << 56 | b[0] | b[1] << 8 | ...
func putInline[T ~string | ~[]byte](e *KeyRowEncoder, slot int, b T) {
	w := uint64(0x80|len(b)) << 56
	for i := len(b) - 1; i >= 0; i-- {
		w |= uint64(b[i]) << (8 * i)
	}
	e.putSlot(slot, w)
}

// le64 returns the first 8 bytes of b as a little-endian word.
func le64[T ~string | ~[]byte](b T) uint64 {
	b = b[:8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// putVarWords appends b (more than 7 bytes) to the variable part as whole
// little-endian words, the last one padded with zeros, and returns its
// byte offset in the row, for the slot's offset<<32 | length.
//
// Mirrors AbstractBinaryWriter.writeBytesToVarLenPart: ensureCapacity,
// zeroOutPaddingBytes, the bytes, then setOffsetAndSize.
func putVarWords[T ~string | ~[]byte](e *KeyRowEncoder, b T) int {
	n := len(b)
	start, nw := len(e.row), (n+7)>>3
	if cap(e.row)-start < nw {
		e.growRow(nw)
	}
	w := e.row[start : start+nw]
	e.row = e.row[:start+nw]
	// The last word: the last 8 bytes, shifted down past the bytes the
	// word before holds, which leaves its padding zero.
	last := le64(b[n-8:]) >> (8 * (8*nw - n))
	for i := range w[:nw-1] {
		w[i] = le64(b[8*i:])
	}
	w[nw-1] = last
	return 8 * start
}

// growRow grows the row's capacity by at least n words, keeping its
// words.
//
//go:noinline
func (e *KeyRowEncoder) growRow(n int) {
	e.row = append(e.row[:cap(e.row)], make([]uint64, n)...)[:len(e.row)]
}

// AppendDate writes a DATE: days since 1970-01-01, as an int.
//
// Mirrors BinaryRowWriter.writeInt (a DATE's internal value is an int).
func (e *KeyRowEncoder) AppendDate(epochDays int32) error {
	slot, ok := e.column(dateRoots)
	if !ok {
		return e.wrongColumn("DATE")
	}
	e.putSlot(slot, uint64(uint32(epochDays)))
	return nil
}

// AppendTime writes a TIME(p): milliseconds of the day, as an int (Flink
// keeps TIME at millisecond precision whatever p). A value outside
// 0..86399999 is refused.
//
// Mirrors BinaryRowWriter.writeInt (a TIME's internal value is an int).
func (e *KeyRowEncoder) AppendTime(millisOfDay int32) error {
	slot, ok := e.column(timeRoots)
	if !ok {
		return e.wrongColumn("TIME")
	}
	t := &e.types[e.next]
	if millisOfDay < 0 || millisOfDay >= 86_400_000 {
		return e.fail(t, fmt.Sprintf("%d ms is not a time of day (0..86399999)", millisOfDay))
	}
	e.putSlot(slot, uint64(uint32(millisOfDay)))
	return nil
}

// AppendTimestamp writes a TIMESTAMP(p) or TIMESTAMP_LTZ(p) given as Flink's
// TimestampData holds it: milliseconds since the epoch (floor) and the
// nanoseconds within that millisecond (0..999999). With p <= 3 only the
// milliseconds are written, as a long in the slot; with p > 3 they take 8
// bytes of the variable part and the slot holds offset<<32 |
// nanoOfMillisecond.
//
// Mirrors AbstractBinaryWriter.writeTimestamp.
func (e *KeyRowEncoder) AppendTimestamp(epochMillis int64, nanoOfMillisecond int32) error {
	slot, ok := e.column(timestampRoots)
	if !ok {
		return e.wrongColumn("TIMESTAMP or TIMESTAMP_LTZ")
	}
	t := &e.types[e.next]
	if nanoOfMillisecond < 0 || nanoOfMillisecond > 999_999 {
		return e.fail(t, fmt.Sprintf("nanoOfMillisecond %d out of range 0..999999", nanoOfMillisecond))
	}
	if t.compact() {
		e.putSlot(slot, uint64(epochMillis))
		return nil
	}
	off := e.appendVar(uint64(epochMillis))
	e.putSlot(slot, uint64(off)<<32|uint64(nanoOfMillisecond))
	return nil
}

// pow10 holds 10^0..10^18 (DecimalData.POW10).
var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = 10 * p[i-1]
	}
	return p
}()

// bigPow10 holds 10^0..10^38 as big.Int, for precision checks of wide
// decimals.
var bigPow10 = func() (p [SQLMaxDecimalPrecision + 1]*big.Int) {
	ten := big.NewInt(10)
	p[0] = big.NewInt(1)
	for i := 1; i < len(p); i++ {
		p[i] = new(big.Int).Mul(p[i-1], ten)
	}
	return p
}()

// AppendDecimal writes a DECIMAL(p, s) given as its unscaled value at the
// column's scale s (12345 is 123.45 in a DECIMAL(10, 2)). A value with more
// than p digits is refused (Flink's DecimalData.fromBigDecimal would make it
// null). With p <= 18 the unscaled value is a long in the slot; with p > 18
// it is the 16-byte variable-part block of AppendBigDecimal.
//
// Mirrors AbstractBinaryWriter.writeDecimal (DecimalData.toUnscaledLong).
func (e *KeyRowEncoder) AppendDecimal(unscaled int64) error {
	slot, ok := e.column(decimalRoots)
	if !ok {
		return e.wrongColumn("DECIMAL")
	}
	t := &e.types[e.next]
	if t.Precision < len(pow10) && (unscaled >= pow10[t.Precision] || unscaled <= -pow10[t.Precision]) {
		return e.fail(t, fmt.Sprintf("unscaled value %d has more than %d digits", unscaled, t.Precision))
	}
	if t.compact() {
		e.putSlot(slot, uint64(unscaled))
		return nil
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[8:], uint64(unscaled))
	if unscaled < 0 {
		binary.BigEndian.PutUint64(b[:8], math.MaxUint64)
	}
	e.putWideDecimal(slot, b)
	return nil
}

// AppendBigDecimal writes a DECIMAL(p, s) given as its unscaled value at the
// column's scale, of any size up to p digits: a long in the slot for p <= 18;
// otherwise a zeroed 16-byte block of the variable part that starts with the
// value's BigInteger.toByteArray() (big-endian, minimal two's complement),
// the slot holding offset<<32 | byte length.
//
// Mirrors AbstractBinaryWriter.writeDecimal (DecimalData.toUnscaledBytes).
func (e *KeyRowEncoder) AppendBigDecimal(unscaled *big.Int) error {
	slot, ok := e.column(decimalRoots)
	if !ok {
		return e.wrongColumn("DECIMAL")
	}
	t := &e.types[e.next]
	if unscaled == nil {
		return e.fail(t, "nil unscaled value (append a null with AppendNull)")
	}
	if unscaled.CmpAbs(bigPow10[t.Precision]) >= 0 {
		return e.fail(t, fmt.Sprintf("unscaled value %s has more than %d digits", unscaled, t.Precision))
	}
	if t.compact() {
		e.putSlot(slot, uint64(unscaled.Int64()))
		return nil
	}
	// |unscaled| < 10^38 < 2^127: 16 bytes of two's complement hold it.
	var b [16]byte
	unscaled.FillBytes(b[:]) // the magnitude
	if unscaled.Sign() < 0 {
		negate128(&b)
	}
	e.putWideDecimal(slot, b)
	return nil
}

// negate128 replaces the big-endian 128-bit value in b by its two's
// complement negation.
func negate128(b *[16]byte) {
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	lo, borrow := bits.Sub64(0, lo, 0)
	hi, _ = bits.Sub64(0, hi, borrow)
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], lo)
}

// putWideDecimal writes the 128-bit two's complement value b as
// BigInteger.toByteArray does (the fewest bytes that keep the sign, at least
// one) at the start of a zeroed 16-byte block of the variable part.
func (e *KeyRowEncoder) putWideDecimal(slot int, b [16]byte) {
	i := 0
	for i < 15 && (b[i] == 0x00 && b[i+1]&0x80 == 0 || b[i] == 0xFF && b[i+1]&0x80 != 0) {
		i++
	}
	var blk [16]byte
	n := copy(blk[:], b[i:])
	off := e.appendVar(binary.LittleEndian.Uint64(blk[:8]), binary.LittleEndian.Uint64(blk[8:]))
	e.putSlot(slot, uint64(off)<<32|uint64(n))
}

// Complete reports whether every column of the row has been written.
func (e *KeyRowEncoder) Complete() bool { return e.next == len(e.types) }

func (e *KeyRowEncoder) incomplete() error {
	return fmt.Errorf("key row has %d of its %d columns", e.next, len(e.types))
}

// Bytes returns the row's bytes, as BinaryRowData.getSegments holds them
// from its offset for getSizeInBytes bytes, once every column is written.
// The slice is the encoder's buffer: valid until the next call of Bytes.
func (e *KeyRowEncoder) Bytes() ([]byte, error) {
	if !e.Complete() {
		return nil, e.incomplete()
	}
	b := e.bytes[:0]
	for _, w := range e.row {
		b = binary.LittleEndian.AppendUint64(b, w)
	}
	e.bytes = b
	return b, nil
}

// HashCode returns the row's BinaryRowData.hashCode, once every column is
// written (see HashKeyRow).
func (e *KeyRowEncoder) HashCode() (int32, error) {
	if !e.Complete() {
		return 0, e.incomplete()
	}
	return e.rowHash(), nil
}

// rowHash is hashKeyRowWords of the row's bytes, read from its words.
func (e *KeyRowEncoder) rowHash() int32 {
	w := e.row
	h := uint32(murmurSeed)
	// A row without nulls starts with a zero word (RowKind 0, no null
	// bit): start from the state after it, computed once.
	if w[0] == 0 {
		h, w = murmurAfterZeroWord, w[1:]
	}
	for _, x := range w {
		h = murmurMix(murmurMix(h, uint32(x)), uint32(x>>32))
	}
	h ^= uint32(8 * len(e.row))
	return int32(bitMix(h))
}

// Route returns the key group and the subtask of the row, once every column
// is written: KeyGroupForHash(HashCode(), maxP), then OperatorIndex at
// parallelism p. (maxP, p) must be a pair Flink accepts
// (CheckMaxParallelism).
//
// Mirrors KeyGroupRangeAssignment.assignKeyToParallelOperator of a
// BinaryRowData key, the route of KeyGroupStreamPartitioner in a SQL hash
// exchange.
func (e *KeyRowEncoder) Route(maxP, p int) (keyGroup, subtask int, err error) {
	if !e.Complete() {
		return 0, 0, e.incomplete()
	}
	if maxP != e.routeMaxP || p != e.routeP {
		if err := CheckMaxParallelism(maxP, p); err != nil {
			return 0, 0, err
		}
		e.routeMaxP, e.routeP = maxP, p
	}
	kg := KeyGroupForHash(e.rowHash(), maxP)
	return kg, OperatorIndex(maxP, p, kg), nil
}

// HashKeyRow returns BinaryRowData.hashCode of a row image: MurmurHash3_x86_32
// with seed 42 over its 4-byte little-endian words, finished with
// h ^= length and fmix32. A row's size is a multiple of 8 bytes, at least 8;
// other lengths are refused.
//
// Mirrors BinaryRowData.hashCode → BinarySegmentUtils.hashByWords →
// MurmurHashUtils.hashBytesByWords (flink-table-common; unchanged in Flink
// 1.20, 2.2 and 2.3).
func HashKeyRow(row []byte) (int32, error) {
	if len(row) < 8 || len(row)%8 != 0 {
		return 0, fmt.Errorf("a key row is a positive multiple of 8 bytes long, not %d", len(row))
	}
	return hashKeyRowWords(row), nil
}

// hashKeyRowWords is MurmurHashUtils.hashBytesByWords with DEFAULT_SEED 42;
// len(b) is a multiple of 8.
func hashKeyRowWords(b []byte) int32 {
	n := uint32(len(b))
	h := uint32(murmurSeed)
	// A row without nulls starts with a zero word (RowKind 0, no null
	// bit): start from the state after it, computed once.
	if len(b) >= 8 && binary.LittleEndian.Uint64(b) == 0 {
		h, b = murmurAfterZeroWord, b[8:]
	}
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		b = b[8:]
		h = murmurMix(h, uint32(w))
		h = murmurMix(h, uint32(w>>32))
	}
	h ^= n
	return int32(bitMix(h))
}

// murmurSeed is MurmurHashUtils.DEFAULT_SEED.
const murmurSeed = 42

// murmurAfterZeroWord is the state of hashBytesByWords after 8 zero bytes.
var murmurAfterZeroWord = murmurMix(murmurMix(murmurSeed, 0), 0)

// murmurMix mixes one 4-byte word k into h: MurmurHashUtils.mixK1, then
// mixH1.
func murmurMix(h, k uint32) uint32 {
	const c1, c2 = 0xcc9e2d51, 0x1b873593
	k *= c1
	k = bits.RotateLeft32(k, 15) * c2
	h ^= k
	return bits.RotateLeft32(h, 13)*5 + 0xe6546b64
}
