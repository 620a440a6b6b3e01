package skewscope.golden;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import org.apache.flink.core.memory.MemorySegmentFactory;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.data.binary.BinaryRowData;
import org.apache.flink.table.data.binary.BinarySegmentUtils;
import org.apache.flink.table.planner.plan.utils.KeySelectorUtil;
import org.apache.flink.table.runtime.keyselector.RowDataKeySelector;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.BinaryType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.CharType;
import org.apache.flink.table.types.logical.DateType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.FloatType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.SmallIntType;
import org.apache.flink.table.types.logical.TimeType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.TinyIntType;
import org.apache.flink.table.types.logical.VarBinaryType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.types.RowKind;

/**
 * The SQL key rows of key_row.csv: for each key (a list of column types and
 * values), the BinaryRowData that the planner's own key selector
 * ({@link KeySelectorUtil#getRowDataSelector}, the generated projection of
 * SQL's hash exchanges, GROUP BY, joins, deduplication, OVER and Top-N)
 * makes of an input row holding those values, its hashCode, and its key
 * group and subtask from {@link KeyGroupRangeAssignment}.
 *
 * <p>Each key is projected out of a wider input row (a column before, the
 * key columns in reverse order, a column after), whose RowKind varies; one
 * selector per list of types is reused for all its keys, as a running job
 * reuses it. The generator checks that a fresh selector, and the input row
 * converted to a BinaryRowData first, give the same bytes.
 */
final class SqlKeyRows {

    /** (maxParallelism, parallelism) pairs each key is routed at. */
    static final int[][] SHAPES = {{128, 4}, {256, 6}, {4096, 100}, {32768, 7}};

    private static final RowKind[] KINDS = {RowKind.INSERT, RowKind.UPDATE_BEFORE, RowKind.UPDATE_AFTER, RowKind.DELETE};

    /** One column value: its type, Flink's internal object, and its JSON and text forms. */
    static final class V {
        final LogicalType type;
        final Object internal;
        final String json;
        final String text; // null: no text form (null value, lone surrogate, non-canonical NaN, year out of 0..9999)

        V(LogicalType type, Object internal, String json, String text) {
            this.type = type;
            this.internal = internal;
            this.json = json;
            this.text = text;
        }

        /** The same value in a NOT NULL column. */
        V notNull() {
            return new V(type.copy(false), internal, json, text);
        }
    }

    /** One key: a label and its column values. */
    static final class Key {
        final String label;
        final V[] values;

        Key(String label, V... values) {
            this.label = label;
            this.values = values;
        }
    }

    private final Map<String, RowDataKeySelector> selectors = new HashMap<>();
    private int serializerDiffers;
    private int serializerDiffersBeyondKind;
    private final List<String> serializerDiffs = new ArrayList<>();

    /** The CSV rows, in the columns of {@link #header()}. */
    List<Object[]> rows() throws Exception {
        List<Object[]> out = new ArrayList<>();
        int n = 0;
        for (Key k : keys()) {
            byte[] bytes = project(k, n++);
            int hash = row(bytes, arity(k)).hashCode();
            StringBuilder types = new StringBuilder("[");
            StringBuilder values = new StringBuilder("[");
            StringBuilder texts = new StringBuilder("[");
            for (int i = 0; i < k.values.length; i++) {
                String sep = i == 0 ? "" : ",";
                types.append(sep).append(jsonString(k.values[i].type.asSerializableString()));
                values.append(sep).append(k.values[i].json);
                texts.append(sep).append(k.values[i].text == null ? "null" : jsonString(k.values[i].text));
            }
            types.append(']');
            values.append(']');
            texts.append(']');
            List<Object> row = new ArrayList<>(Arrays.asList(k.label, types, values, texts, hex(bytes), hash));
            for (int[] s : SHAPES) {
                int kg = KeyGroupRangeAssignment.assignToKeyGroup(row(bytes, arity(k)), s[0]);
                int op = KeyGroupRangeAssignment.assignKeyToParallelOperator(row(bytes, arity(k)), s[0], s[1]);
                if (kg != KeyGroupRangeAssignment.computeKeyGroupForKeyHash(hash, s[0])) {
                    throw new IllegalStateException(k.label + ": key group is not that of hashCode");
                }
                row.add(kg);
                row.add(op);
            }
            out.add(row.toArray());
        }
        System.out.println("key_row.csv: " + n + " keys; a RowDataSerializer's toBinaryRow of the same key values writes other bytes for "
                + serializerDiffers + " of them (it keeps the input's RowKind), " + serializerDiffersBeyondKind + " beyond the RowKind byte"
                + (serializerDiffs.isEmpty() ? "" : ": " + String.join("; ", serializerDiffs)));
        return out;
    }

    /** The header of key_row.csv: a key group and a subtask column per shape. */
    static String[] header() {
        List<String> h = new ArrayList<>(Arrays.asList("key", "types", "values", "text", "row_hex", "hash_code"));
        for (int[] s : SHAPES) {
            h.add("key_group_" + s[0]);
            h.add("subtask_" + s[0] + "_" + s[1]);
        }
        return h.toArray(new String[0]);
    }

    private static int arity(Key k) {
        return k.values.length;
    }

    /** A BinaryRowData over a copy of the bytes, as the key a partitioner hashes. */
    private static BinaryRowData row(byte[] bytes, int arity) {
        BinaryRowData row = new BinaryRowData(arity);
        row.pointTo(MemorySegmentFactory.wrap(bytes.clone()), 0, bytes.length);
        return row;
    }

    /** The key row bytes of k, from the planner's key selector, checked three ways. */
    private byte[] project(Key k, int n) throws Exception {
        int arity = k.values.length;
        // Input row: INT, key columns in reverse order, STRING.
        LogicalType[] inTypes = new LogicalType[arity + 2];
        inTypes[0] = new IntType();
        inTypes[arity + 1] = new VarCharType(VarCharType.MAX_LENGTH);
        int[] keyFields = new int[arity];
        for (int i = 0; i < arity; i++) {
            inTypes[arity - i] = k.values[i].type;
            keyFields[i] = arity - i;
        }
        RowType inType = RowType.of(inTypes);
        GenericRowData in = new GenericRowData(KINDS[n % KINDS.length], arity + 2);
        in.setField(0, n);
        in.setField(arity + 1, StringData.fromString("not part of the key " + n));
        for (int i = 0; i < arity; i++) {
            in.setField(arity - i, k.values[i].internal);
        }

        String sig = inType.asSerializableString();
        RowDataKeySelector reused = selectors.get(sig);
        if (reused == null) {
            reused = selector(keyFields, inType);
            selectors.put(sig, reused);
        }
        byte[] bytes = bytesOf(reused.getKey(in), k);
        byte[] fresh = bytesOf(selector(keyFields, inType).getKey(in), k);
        BinaryRowData binIn = new RowDataSerializer(inType).toBinaryRow(in).copy();
        byte[] fromBinary = bytesOf(reused.getKey(binIn), k);
        if (!Arrays.equals(bytes, fresh) || !Arrays.equals(bytes, fromBinary)) {
            throw new IllegalStateException(k.label + ": the key selector's bytes depend on reuse or on the input row's class: "
                    + hex(bytes) + " / " + hex(fresh) + " / " + hex(fromBinary));
        }
        if (bytes[0] != 0) {
            throw new IllegalStateException(k.label + ": key row header is " + bytes[0] + ", want 0");
        }

        // What a serializer's toBinaryRow makes of the same key values.
        LogicalType[] keyTypes = new LogicalType[arity];
        GenericRowData key = new GenericRowData(in.getRowKind(), arity);
        for (int i = 0; i < arity; i++) {
            keyTypes[i] = k.values[i].type;
            key.setField(i, k.values[i].internal);
        }
        BinaryRowData viaSerializer = new RowDataSerializer(RowType.of(keyTypes)).toBinaryRow(key);
        byte[] ser = BinarySegmentUtils.copyToBytes(viaSerializer.getSegments(), viaSerializer.getOffset(), viaSerializer.getSizeInBytes());
        if (!Arrays.equals(bytes, ser)) {
            serializerDiffers++;
            byte[] noKind = ser.clone();
            noKind[0] = 0;
            if (!Arrays.equals(bytes, noKind) && serializerDiffs.size() < 6) {
                serializerDiffs.add(k.label + ": " + hex(ser) + " vs " + hex(bytes));
            }
            if (!Arrays.equals(bytes, noKind)) {
                serializerDiffersBeyondKind++;
            }
        }
        return bytes;
    }

    private static RowDataKeySelector selector(int[] keyFields, RowType inType) {
        return KeySelectorUtil.getRowDataSelector(SqlKeyRows.class.getClassLoader(), keyFields, InternalTypeInfo.of(inType));
    }

    private static byte[] bytesOf(RowData key, Key k) {
        if (!(key instanceof BinaryRowData)) {
            throw new IllegalStateException(k.label + ": key is a " + key.getClass().getName() + ", want BinaryRowData");
        }
        BinaryRowData b = (BinaryRowData) key;
        return BinarySegmentUtils.copyToBytes(b.getSegments(), b.getOffset(), b.getSizeInBytes());
    }

    // ---- the keys ----

    static List<Key> keys() {
        List<Key> ks = new ArrayList<>();
        // BOOLEAN
        ks.add(new Key("boolean true", bool(true)));
        ks.add(new Key("boolean false", bool(false)));
        ks.add(new Key("boolean null", nul(new BooleanType())));
        // TINYINT, SMALLINT
        for (byte b : new byte[] {0, 1, -1, 42, Byte.MIN_VALUE, Byte.MAX_VALUE}) {
            ks.add(new Key("tinyint " + b, v(new TinyIntType(), b, String.valueOf(b))));
        }
        ks.add(new Key("tinyint null", nul(new TinyIntType())));
        for (short s : new short[] {0, 1, -1, 300, Short.MIN_VALUE, Short.MAX_VALUE}) {
            ks.add(new Key("smallint " + s, v(new SmallIntType(), s, String.valueOf(s))));
        }
        ks.add(new Key("smallint null", nul(new SmallIntType())));
        // INT
        Random r = new Random(20250025L);
        List<Integer> ints = new ArrayList<>(Arrays.asList(0, 1, -1, 42, 1 << 16, Integer.MIN_VALUE, Integer.MAX_VALUE));
        for (int i = 0; i < 8; i++) {
            ints.add(r.nextInt());
        }
        for (int i : ints) {
            ks.add(new Key("int " + i, int_(i)));
        }
        ks.add(new Key("int null", nul(new IntType())));
        // BIGINT
        List<Long> longs = new ArrayList<>(Arrays.asList(0L, 1L, -1L, 42L, 1L << 32, -(1L << 32), 1700000000000L, Long.MIN_VALUE, Long.MAX_VALUE));
        for (int i = 0; i < 8; i++) {
            longs.add(r.nextLong());
        }
        for (long l : longs) {
            ks.add(new Key("bigint " + l, bigint(l)));
        }
        ks.add(new Key("bigint null", nul(new BigIntType())));
        // FLOAT: raw bits, canonical and other NaNs included.
        float[] floats = {0.0f, -0.0f, 1.0f, -1.5f, Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY,
            Float.MIN_VALUE, Float.MIN_NORMAL, Float.MAX_VALUE, 0.1f, 3.14159f, 1.0e10f};
        for (float f : floats) {
            ks.add(new Key("float " + f, flt(Float.floatToRawIntBits(f))));
        }
        for (int bits : new int[] {0x7fc00001, 0xffc00000, 0x7f800001}) {
            ks.add(new Key(String.format("float NaN bits %08x", bits), flt(bits)));
        }
        ks.add(new Key("float null", nul(new FloatType())));
        // DOUBLE
        double[] doubles = {0.0, -0.0, 1.0, -1.0, 0.1, 2.5, 1.0e10, -1.0e-10, Double.NaN, Double.POSITIVE_INFINITY,
            Double.NEGATIVE_INFINITY, Double.MIN_VALUE, Double.MIN_NORMAL, Double.MAX_VALUE, Math.PI, 123456789.125};
        for (double d : doubles) {
            ks.add(new Key("double " + d, dbl(Double.doubleToRawLongBits(d))));
        }
        for (long bits : new long[] {0xfff8000000000000L, 0x7ff8000000000001L, 0x7ff0000000000001L}) {
            ks.add(new Key(String.format("double NaN bits %016x", bits), dbl(bits)));
        }
        ks.add(new Key("double null", nul(new DoubleType())));
        // STRING: inline up to 7 UTF-8 bytes, then the variable part.
        String[] strings = {
            "", "a", "abcdef", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghijklmno", "abcdefghijklmnop",
            "abcdefghijklmnopq", "user-42", "customer-12345", " padded ", "a,b\"c", "null", "\u0000",
            "é", "ü中", "中文a", "中文ab", "😀", "😀😀", "a😀b", "Ünïcödé", "日本語のキー", "\uFFFD", "\u00A0", "𝄞",
            "x\uDBFF\uDFFFy",
            // Lone surrogates: String.getBytes(UTF_8) writes '?'.
            "\uD800", "\uDC00", "a\uD800b", "ab\uD83D", "\uDE00\uD83D", "\uD83D\uDE00", "\uD800\uD800\uDC00",
        };
        for (String s : strings) {
            ks.add(new Key("string " + label(s), str(s, new VarCharType(VarCharType.MAX_LENGTH))));
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; b.length() < 100; i++) {
            b.append((char) ('a' + i % 26));
        }
        ks.add(new Key("string of 100 characters", str(b.toString(), new VarCharType(VarCharType.MAX_LENGTH))));
        ks.add(new Key("string of 1000 bytes", str("ab".repeat(250) + "中".repeat(166) + "xx", new VarCharType(VarCharType.MAX_LENGTH))));
        ks.add(new Key("string null", nul(new VarCharType(VarCharType.MAX_LENGTH))));
        ks.add(new Key("char(5) abc", str("abc", new CharType(5))));
        ks.add(new Key("char(5) abcde", str("abcde", new CharType(5))));
        ks.add(new Key("char(5) null", nul(new CharType(5))));
        ks.add(new Key("varchar(10) hello", str("hello", new VarCharType(10))));
        ks.add(new Key("varchar(10) helloworld", str("helloworld", new VarCharType(10))));
        // BYTES
        byte[][] byteses = {
            {}, {0}, {1, 2, 3, 4, 5, 6, 7}, {1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 3, 4, 5, 6, 7, 8, 9},
            {0, 0, 0, 0, 0, 0, 0, 0}, {(byte) 0xff, (byte) 0xfe, (byte) 0x80}, new byte[16], filled(17, (byte) 0xff),
        };
        for (byte[] bs : byteses) {
            ks.add(new Key("bytes " + hex(bs), bin(bs, new VarBinaryType(VarBinaryType.MAX_LENGTH))));
        }
        ks.add(new Key("bytes null", nul(new VarBinaryType(VarBinaryType.MAX_LENGTH))));
        ks.add(new Key("binary(3) 010203", bin(new byte[] {1, 2, 3}, new BinaryType(3))));
        ks.add(new Key("binary(3) null", nul(new BinaryType(3))));
        ks.add(new Key("varbinary(16) 16 bytes", bin(filled(16, (byte) 0x5a), new VarBinaryType(16))));
        // DATE
        for (int d : new int[] {0, 1, -1, 19675, -719528, 2932896, Integer.MIN_VALUE, Integer.MAX_VALUE}) {
            ks.add(new Key("date " + d, date(d)));
        }
        ks.add(new Key("date null", nul(new DateType())));
        // TIME
        for (int ms : new int[] {0, 45296000, 86399000}) {
            ks.add(new Key("time(0) " + ms, time(ms, 0)));
        }
        for (int ms : new int[] {1, 45296789, 86399999}) {
            ks.add(new Key("time(3) " + ms, time(ms, 3)));
        }
        ks.add(new Key("time(0) null", nul(new TimeType(0))));
        // TIMESTAMP and TIMESTAMP_LTZ: compact up to precision 3.
        long[][] instants = {{0, 0}, {1700000000123L, 456789}, {-1, 999999}, {-62135596800000L, 1}, {253402300799999L, 999999}};
        for (boolean ltz : new boolean[] {false, true}) {
            for (int p : ltz ? new int[] {3, 6, 9} : new int[] {0, 3, 6, 9}) {
                for (long[] t : instants) {
                    ks.add(new Key((ltz ? "timestamp_ltz(" : "timestamp(") + p + ") " + t[0] + "+" + t[1], ts(t[0], (int) t[1], p, ltz)));
                }
                ks.add(new Key((ltz ? "timestamp_ltz(" : "timestamp(") + p + ") " + Long.MIN_VALUE, ts(Long.MIN_VALUE, 0, p, ltz)));
                ks.add(new Key((ltz ? "timestamp_ltz(" : "timestamp(") + p + ") null", nul(ltz ? new LocalZonedTimestampType(p) : new TimestampType(p))));
            }
        }
        // DECIMAL: compact up to precision 18, then bytes.
        Object[][] decimals = {
            {1, 0, new String[] {"0", "9", "-9"}},
            {10, 2, new String[] {"0", "123.45", "-123.45", "99999999.99", "-0.01", "1.5"}},
            {18, 0, new String[] {"999999999999999999", "-999999999999999999", "1"}},
            {18, 4, new String[] {"12345678901234.5678", "-0.0001"}},
            {19, 0, new String[] {"0", "1", "-1", "127", "128", "-128", "-129", "255", "9223372036854775807", "-9223372036854775808",
                "9999999999999999999", "-9999999999999999999"}},
            {20, 2, new String[] {"0.01", "-123456789012345678.90"}},
            {38, 0, new String[] {"99999999999999999999999999999999999999", "-99999999999999999999999999999999999999",
                "9223372036854775808", "18446744073709551616", "-18446744073709551616"}},
            {38, 10, new String[] {"3.1415926535", "-2718281828459045235360287.4713527"}},
            {38, 38, new String[] {"0.5", "-0.00000000000000000000000000000000000001"}},
        };
        for (Object[] d : decimals) {
            int p = (Integer) d[0];
            int s = (Integer) d[1];
            for (String val : (String[]) d[2]) {
                BigDecimal bd = new BigDecimal(val);
                if (bd.precision() - bd.scale() > p - s) {
                    continue; // does not fit: not a value of the type
                }
                ks.add(new Key("decimal(" + p + "," + s + ") " + val, dec(bd, p, s)));
            }
            ks.add(new Key("decimal(" + p + "," + s + ") null", nul(new DecimalType(p, s))));
        }
        // Composite keys.
        VarCharType string = new VarCharType(VarCharType.MAX_LENGTH);
        ks.add(new Key("(bigint, string) 1 a", bigint(1), str("a", string)));
        ks.add(new Key("(bigint, string) 42 customer-42", bigint(42), str("customer-42", string)));
        ks.add(new Key("(bigint, string) null x", nul(new BigIntType()), str("x", string)));
        ks.add(new Key("(bigint, string) 7 null", bigint(7), nul(string)));
        ks.add(new Key("(bigint, string) null null", nul(new BigIntType()), nul(string)));
        ks.add(new Key("(bigint, string) min abcdefghi", bigint(Long.MIN_VALUE), str("abcdefghi", string)));
        ks.add(new Key("(bigint, string) -1 lone surrogate", bigint(-1), str("k\uDC00", string)));
        Random rr = new Random(20250026L);
        for (int i = 0; i < 20; i++) {
            long id = rr.nextInt(1000000);
            ks.add(new Key("(bigint, string) random " + i, bigint(id), str("user-" + rr.nextInt(100000), string)));
        }
        ks.add(new Key("(int, string, double) 1 a 1.5", int_(1), str("a", string), dbl(Double.doubleToRawLongBits(1.5))));
        ks.add(new Key("(int, string, double) 0 empty -0.0", int_(0), str("", string), dbl(Double.doubleToRawLongBits(-0.0))));
        ks.add(new Key("(int, string, double) null 中文 NaN", nul(new IntType()), str("中文", string), dbl(Double.doubleToRawLongBits(Double.NaN))));
        ks.add(new Key("(int, string, double) max hello world null", int_(Integer.MAX_VALUE), str("hello world", string), nul(new DoubleType())));
        ks.add(new Key("(string, string) a b", str("a", string), str("b", string)));
        ks.add(new Key("(string, string) long long", str("first-long-value", string), str("second-long-value-longer", string)));
        ks.add(new Key("(string, string) null long", nul(string), str("second-long-value", string)));
        ks.add(new Key("wide decimals, timestamps and bytes with nulls",
                dec(new BigDecimal("12345678901234567890.12"), 38, 2), ts(1700000000123L, 456789, 9, false), str("middle-string", string),
                nul(new DecimalType(38, 2)), nul(new TimestampType(6)), bin(new byte[] {9, 8, 7, 6, 5, 4, 3, 2, 1}, new VarBinaryType(VarBinaryType.MAX_LENGTH)),
                nul(new LocalZonedTimestampType(9)), dec(new BigDecimal("-1"), 20, 0)));
        ks.add(new Key("(boolean, tinyint, smallint, date, time(3), float)",
                bool(true), v(new TinyIntType(), (byte) -7, "-7"), v(new SmallIntType(), (short) 1234, "1234"), date(19675), time(45296789, 3),
                flt(Float.floatToRawIntBits(-0.0f))));
        ks.add(new Key("(bigint not null, string not null)",
                bigint(99).notNull(), str("not-null-key", string).notNull()));
        for (int arity : new int[] {55, 56, 57, 64, 120, 121}) {
            V[] vs = new V[arity];
            for (int i = 0; i < arity; i++) {
                vs[i] = i % 5 == 3 || i == arity - 1 ? nul(new IntType()) : int_(i * 7919 - 1000);
            }
            ks.add(new Key("arity " + arity + " ints, the last null", vs));
        }
        return ks;
    }

    // ---- values ----

    private static V v(LogicalType t, Object internal, String json) {
        return new V(t, internal, json, json);
    }

    private static V nul(LogicalType t) {
        return new V(t, null, "null", null);
    }

    private static V bool(boolean b) {
        return v(new BooleanType(), b, String.valueOf(b));
    }

    private static V int_(int i) {
        return v(new IntType(), i, String.valueOf(i));
    }

    private static V bigint(long l) {
        return v(new BigIntType(), l, String.valueOf(l));
    }

    /** A FLOAT by its raw bits: JSON holds the bits; text only where Java's parser gives these bits back. */
    private static V flt(int bits) {
        float f = Float.intBitsToFloat(bits);
        String text = Float.floatToRawIntBits(Float.parseFloat(Float.toString(f))) == bits ? Float.toString(f) : null;
        return new V(new FloatType(), f, jsonString(String.format("%08x", bits)), text);
    }

    private static V dbl(long bits) {
        double d = Double.longBitsToDouble(bits);
        String text = Double.doubleToRawLongBits(Double.parseDouble(Double.toString(d))) == bits ? Double.toString(d) : null;
        return new V(new DoubleType(), d, jsonString(String.format("%016x", bits)), text);
    }

    private static V str(String s, LogicalType t) {
        return new V(t, StringData.fromString(s), jsonString(s), hasLoneSurrogate(s) ? null : s);
    }

    private static V bin(byte[] b, LogicalType t) {
        return new V(t, b, jsonString(hex(b)), hex(b));
    }

    private static V date(int days) {
        LocalDate d = LocalDate.ofEpochDay(days);
        String text = d.getYear() >= 0 && d.getYear() <= 9999 ? d.toString() : null;
        return new V(new DateType(), days, String.valueOf(days), text);
    }

    private static V time(int millis, int precision) {
        return new V(new TimeType(precision), millis, String.valueOf(millis), LocalTime.ofNanoOfDay(millis * 1_000_000L).toString());
    }

    /** A timestamp; its nanos are cut to the precision, as a value of the type holds them. */
    private static V ts(long millis, int nanos, int precision, boolean ltz) {
        if (precision <= 3) {
            nanos = 0;
            long unit = (long) Math.pow(10, 3 - precision);
            millis = Math.floorDiv(millis, unit) * unit;
        } else {
            int unit = (int) Math.pow(10, 9 - precision);
            nanos = nanos / unit * unit;
        }
        TimestampData t = TimestampData.fromEpochMillis(millis, nanos);
        String text = null;
        if (millis != Long.MIN_VALUE) {
            LocalDateTime ldt = t.toLocalDateTime();
            if (ldt.getYear() >= 0 && ldt.getYear() <= 9999) {
                Instant in = t.toInstant();
                text = ltz ? in.toString() : ldt.toString();
            }
        }
        LogicalType type = ltz ? new LocalZonedTimestampType(precision) : new TimestampType(precision);
        return new V(type, t, "[" + millis + "," + nanos + "]", text);
    }

    private static V dec(BigDecimal bd, int precision, int scale) {
        DecimalData d = DecimalData.fromBigDecimal(bd, precision, scale);
        if (d == null) {
            throw new IllegalArgumentException(bd + " does not fit DECIMAL(" + precision + ", " + scale + ")");
        }
        String plain = d.toBigDecimal().toPlainString();
        return new V(new DecimalType(precision, scale), d, jsonString(plain), plain);
    }

    // ---- helpers ----

    private static byte[] filled(int n, byte b) {
        byte[] out = new byte[n];
        Arrays.fill(out, b);
        return out;
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder(b.length * 2);
        for (byte x : b) {
            sb.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
        }
        return sb.toString();
    }

    private static boolean hasLoneSurrogate(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return true;
            }
        }
        return false;
    }

    /** A JSON string literal: printable ASCII as itself, every other char as a \\u escape of its UTF-16 code unit. */
    static String jsonString(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c >= 0x20 && c < 0x7f) {
                sb.append(c);
            } else {
                sb.append(String.format("\\u%04x", (int) c));
            }
        }
        return sb.append('"').toString();
    }

    /** A label: the string with non-printable-ASCII chars as U+XXXX, cut to 24 chars. */
    private static String label(String s) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 0x20 && c < 0x7f && c != '"' && c != ',') {
                sb.append(c);
            } else {
                sb.append(String.format("U+%04X", (int) c));
            }
        }
        String l = sb.length() > 24 ? sb.substring(0, 24) + "..." : sb.toString();
        return l.isEmpty() ? "(empty)" : l;
    }
}
