package skewscope.golden;

import java.io.IOException;
import java.io.Writer;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeSet;

import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.util.MathUtils;
import org.apache.kafka.common.TopicPartition;

/**
 * Writes skewscope's golden vectors: every value is what Flink's own classes
 * (and the Flink Kafka connector's, and the JDK's hashCode) return for a
 * fixed set of inputs defined here. The inputs are deterministic (ranges,
 * boundaries, and java.util.Random with fixed seeds), so two runs on the
 * same Flink line write the same bytes.
 *
 * <p>Usage: {@code GoldenVectors <output directory>}. The format of every
 * file is described in assign/testdata/golden/README.md.
 */
public final class GoldenVectors {

    private static final int[] KEY_MAX_PARALLELISMS = {1, 2, 7, 128, 256, 1000, 4096, 32768};

    private final Path out;

    private GoldenVectors(Path out) {
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: GoldenVectors <output directory>");
            System.exit(2);
        }
        Path out = Paths.get(args[0]);
        Files.createDirectories(out);
        GoldenVectors g = new GoldenVectors(out);
        g.defaultMaxParallelism();
        g.murmur();
        g.keyGroupString();
        g.keyGroupInt();
        g.keyGroupLong();
        g.operatorIndex();
        g.keyGroupRange();
        g.kafkaSplitOwner();
        g.keyToOperator();
        g.keyGroupTuple2();
        g.javaHashCode();
        g.invalidInputs();
        g.keyRows();
    }

    // ---- files ----

    private void defaultMaxParallelism() throws IOException {
        TreeSet<Integer> ps = new TreeSet<>();
        for (int p = 1; p <= 256; p++) {
            ps.add(p);
        }
        for (int p = 1; p <= 32768; p <<= 1) {
            ps.add(p);
        }
        // Both sides of every step of the default.
        int prev = KeyGroupRangeAssignment.computeDefaultMaxParallelism(1);
        for (int p = 2; p <= 32768; p++) {
            int cur = KeyGroupRangeAssignment.computeDefaultMaxParallelism(p);
            if (cur != prev) {
                ps.add(p - 1);
                ps.add(p);
            }
            prev = cur;
        }
        for (int p : new int[] {300, 500, 1000, 2000, 5000, 10000, 20000, 32767, 32768}) {
            ps.add(p);
        }
        Csv c = new Csv("parallelism", "max_parallelism");
        for (int p : ps) {
            c.row(p, KeyGroupRangeAssignment.computeDefaultMaxParallelism(p));
        }
        c.write("default_max_parallelism.csv");
    }

    private void murmur() throws IOException {
        List<Integer> in = new ArrayList<>();
        for (int i = -1000; i <= 1000; i++) {
            in.add(i);
        }
        for (int d = 0; d <= 2; d++) {
            in.add(Integer.MIN_VALUE + d);
            in.add(Integer.MAX_VALUE - d);
        }
        for (int k = 0; k < 31; k++) {
            in.add(1 << k);
            in.add(-(1 << k));
            in.add((1 << k) + 1);
            in.add((1 << k) - 1);
        }
        // An input whose murmur hash is 0 (the mixed value is 0 or
        // Integer.MIN_VALUE); checked below.
        in.add(-1035494534);
        Random r = new Random(20250012L);
        for (int i = 0; i < 500; i++) {
            in.add(r.nextInt());
        }
        Csv c = new Csv("int_input", "murmur");
        boolean zero = false;
        for (int v : in) {
            int m = MathUtils.murmurHash(v);
            zero |= m == 0;
            c.row(v, m);
        }
        if (!zero) {
            throw new IllegalStateException("no murmur input hashes to 0");
        }
        c.write("murmur.csv");
    }

    private void keyGroupString() throws IOException {
        Csv c = new Csv("key", "java_hash", "max_parallelism", "key_group");
        for (String k : stringKeys()) {
            for (int maxP : KEY_MAX_PARALLELISMS) {
                c.row(k, k.hashCode(), maxP, KeyGroupRangeAssignment.assignToKeyGroup(k, maxP));
            }
        }
        c.write("key_group_string.csv");
    }

    private void keyGroupInt() throws IOException {
        List<Integer> keys = new ArrayList<>();
        for (int i = -150; i <= 150; i++) {
            keys.add(i);
        }
        keys.add(Integer.MIN_VALUE);
        keys.add(Integer.MIN_VALUE + 1);
        keys.add(Integer.MAX_VALUE);
        keys.add(Integer.MAX_VALUE - 1);
        for (int k = 8; k < 31; k += 2) {
            keys.add(1 << k);
            keys.add(-(1 << k));
        }
        Random r = new Random(20250013L);
        while (keys.size() < 420) {
            keys.add(r.nextInt());
        }
        Csv c = new Csv("key", "java_hash", "max_parallelism", "key_group");
        for (Integer k : keys) {
            for (int maxP : KEY_MAX_PARALLELISMS) {
                c.row(k, k.hashCode(), maxP, KeyGroupRangeAssignment.assignToKeyGroup(k, maxP));
            }
        }
        c.write("key_group_int.csv");
    }

    private void keyGroupLong() throws IOException {
        List<Long> keys = new ArrayList<>();
        for (long i = -100; i <= 100; i++) {
            keys.add(i);
        }
        keys.add(Long.MIN_VALUE);
        keys.add(Long.MIN_VALUE + 1);
        keys.add(Long.MAX_VALUE);
        keys.add(Long.MAX_VALUE - 1);
        keys.add((long) Integer.MIN_VALUE);
        keys.add((long) Integer.MAX_VALUE);
        keys.add(0xFFFFFFFFL);
        keys.add(0x100000000L);
        keys.add(-0x100000000L);
        for (int k = 31; k < 63; k += 3) {
            keys.add(1L << k);
            keys.add(-(1L << k));
        }
        keys.add(1700000000000L); // an epoch-millisecond timestamp
        Random r = new Random(20250014L);
        while (keys.size() < 360) {
            keys.add(r.nextLong());
        }
        Csv c = new Csv("key", "java_hash", "max_parallelism", "key_group");
        for (Long k : keys) {
            for (int maxP : KEY_MAX_PARALLELISMS) {
                c.row(k, k.hashCode(), maxP, KeyGroupRangeAssignment.assignToKeyGroup(k, maxP));
            }
        }
        c.write("key_group_long.csv");
    }

    private void operatorIndex() throws IOException {
        int[] maxPs = {1, 2, 3, 7, 10, 128, 129, 256, 1000, 4096, 32768};
        int[] ps = {1, 2, 3, 4, 5, 7, 8, 10, 16, 31, 64, 100, 127, 128, 129, 255, 256, 999, 1000, 4096, 32768};
        Random r = new Random(20250015L);
        Csv c = new Csv("max_parallelism", "parallelism", "key_group", "operator_index");
        for (int maxP : maxPs) {
            for (int p : ps) {
                if (p > maxP) {
                    continue;
                }
                TreeSet<Integer> kgs = new TreeSet<>();
                int[] fixed = {0, 1, 2, maxP / 2, maxP - 2, maxP - 1};
                for (int kg : fixed) {
                    if (kg >= 0 && kg < maxP) {
                        kgs.add(kg);
                    }
                }
                for (int i = 0; i < 6; i++) {
                    kgs.add(r.nextInt(maxP));
                }
                for (int kg : kgs) {
                    c.row(maxP, p, kg, KeyGroupRangeAssignment.computeOperatorIndexForKeyGroup(maxP, p, kg));
                }
            }
        }
        c.write("operator_index.csv");
    }

    private void keyGroupRange() throws IOException {
        int[][] pairs = {
            {1, 1}, {2, 1}, {2, 2}, {3, 2}, {7, 3}, {10, 3}, {10, 10},
            {128, 1}, {128, 3}, {128, 7}, {128, 10}, {128, 64}, {128, 100}, {128, 128},
            {129, 128}, {256, 140}, {256, 200}, {1000, 7}, {1000, 999},
            {4096, 13}, {4096, 1000}, {32768, 17}, {32768, 4096}, {32768, 32768},
        };
        Csv c = new Csv("max_parallelism", "parallelism", "operator_index", "start", "end");
        for (int[] mp : pairs) {
            int maxP = mp[0];
            int p = mp[1];
            TreeSet<Integer> idx = new TreeSet<>();
            if (p <= 140) {
                for (int i = 0; i < p; i++) {
                    idx.add(i);
                }
            } else {
                int[] fixed = {0, 1, 2, p / 2, p - 2, p - 1};
                for (int i : fixed) {
                    idx.add(i);
                }
                Random r = new Random(20250016L + maxP * 31L + p);
                for (int i = 0; i < 10; i++) {
                    idx.add(r.nextInt(p));
                }
            }
            for (int i : idx) {
                KeyGroupRange kgr = KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex(maxP, p, i);
                c.row(maxP, p, i, kgr.getStartKeyGroup(), kgr.getEndKeyGroup());
            }
        }
        c.write("key_group_range.csv");
    }

    private void kafkaSplitOwner() throws Exception {
        Method owner = Class.forName("org.apache.flink.connector.kafka.source.enumerator.KafkaSourceEnumerator")
                .getDeclaredMethod("getSplitOwner", TopicPartition.class, int.class);
        owner.setAccessible(true);
        // The legacy FlinkKafkaConsumer's rule, where the connector still has it.
        Method legacy = null;
        try {
            legacy = Class.forName("org.apache.flink.streaming.connectors.kafka.internals.KafkaTopicPartitionAssigner")
                    .getMethod("assign", String.class, int.class, int.class);
        } catch (ClassNotFoundException e) {
            // Connector 4.0 and later: FLIP-27 KafkaSource only.
        }
        String[] topics = {"orders", "payments", "clicks", "a", "events.v2", "user_profile-updates", "T", "x".repeat(249)};
        int[] readers = {1, 2, 3, 4, 5, 7, 8, 12, 16, 64};
        Csv c = new Csv("topic", "partition", "num_readers", "owner");
        for (String topic : topics) {
            for (int n : readers) {
                int parts = topic.length() > 100 ? 4 : 24;
                for (int part = 0; part < parts; part++) {
                    int o = (Integer) owner.invoke(null, new TopicPartition(topic, part), n);
                    if (legacy != null) {
                        int l = (Integer) legacy.invoke(null, topic, part, n);
                        if (l != o) {
                            throw new IllegalStateException("KafkaSource and FlinkKafkaConsumer disagree on " + topic + "-" + part + " with " + n + " readers: " + o + " vs " + l);
                        }
                    }
                    c.row(topic, part, n, o);
                }
            }
        }
        c.write("kafka_split_owner.csv");
    }

    private void keyToOperator() throws IOException {
        List<String> all = stringKeys();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < all.size(); i += 5) {
            keys.add(all.get(i));
        }
        int[][] shapes = {{128, 1}, {128, 4}, {128, 10}, {128, 128}, {256, 6}, {4096, 100}, {32768, 7}};
        Csv c = new Csv("key", "max_parallelism", "parallelism", "key_group", "operator_index");
        for (String k : keys) {
            for (int[] s : shapes) {
                c.row(k, s[0], s[1], KeyGroupRangeAssignment.assignToKeyGroup(k, s[0]),
                        KeyGroupRangeAssignment.assignKeyToParallelOperator(k, s[0], s[1]));
            }
        }
        c.write("key_to_operator.csv");
    }

    private void keyGroupTuple2() throws IOException {
        String[] f0s = {"", "a", "user-1", "user-42", "orders", " x", "x ", "a,b", "say \"hi\"", "ü", "中文", "😀", "key\twith\ttabs"};
        int[] f1s = {0, 1, -1, 7, 42, 1000, Integer.MIN_VALUE, Integer.MAX_VALUE};
        int[] maxPs = {128, 4096, 32768};
        Csv c = new Csv("f0", "f1", "java_hash", "max_parallelism", "key_group");
        for (String f0 : f0s) {
            for (int f1 : f1s) {
                Tuple2<String, Integer> t = new Tuple2<>(f0, f1);
                for (int maxP : maxPs) {
                    c.row(f0, f1, t.hashCode(), maxP, KeyGroupRangeAssignment.assignToKeyGroup(t, maxP));
                }
            }
        }
        c.write("key_group_tuple2.csv");
    }

    private void javaHashCode() throws IOException {
        Csv c = new Csv("type", "value", "bits_hex", "java_hash");
        for (boolean b : new boolean[] {true, false}) {
            c.row("Boolean", b, "", Boolean.valueOf(b).hashCode());
        }
        for (byte b : new byte[] {0, 1, -1, Byte.MIN_VALUE, Byte.MAX_VALUE}) {
            c.row("Byte", b, "", Byte.valueOf(b).hashCode());
        }
        for (short s : new short[] {0, 1, -1, Short.MIN_VALUE, Short.MAX_VALUE}) {
            c.row("Short", s, "", Short.valueOf(s).hashCode());
        }
        for (char ch : new char[] {'a', 'Z', '0', ' ', 'é', '中', '\uFFFD'}) {
            c.row("Character", (int) ch, String.format("%04x", (int) ch), Character.valueOf(ch).hashCode());
        }
        float[] floats = {0.0f, -0.0f, 1.0f, -1.5f, Float.NaN, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY,
            Float.MIN_VALUE, Float.MAX_VALUE, 3.14159f, 0.1f, 1.0e10f};
        for (float f : floats) {
            c.row("Float", Float.toString(f), String.format("%08x", Float.floatToRawIntBits(f)), Float.valueOf(f).hashCode());
        }
        double[] doubles = {0.0, -0.0, 1.0, -1.0, 0.1, 2.5, 1.0e10, -1.0e-10, Double.NaN, Double.POSITIVE_INFINITY,
            Double.NEGATIVE_INFINITY, Double.MIN_VALUE, Double.MAX_VALUE, Math.PI, Math.E, 123456789.125};
        for (double d : doubles) {
            c.row("Double", Double.toString(d), String.format("%016x", Double.doubleToRawLongBits(d)), Double.valueOf(d).hashCode());
        }
        c.write("java_hashcode.csv");
    }

    private void invalidInputs() throws Exception {
        Csv c = new Csv("function", "arg1", "arg2", "arg3", "exception", "message");
        for (int p : new int[] {0, -1, 32769, Integer.MAX_VALUE}) {
            c.failure("computeDefaultMaxParallelism", p, "", "", () -> KeyGroupRangeAssignment.computeDefaultMaxParallelism(p));
        }
        int[][] ranges = {{128, 256, 0}, {0, 1, 0}, {128, 0, 0}, {65536, 2, 0}};
        for (int[] a : ranges) {
            c.failure("computeKeyGroupRangeForOperatorIndex", a[0], a[1], a[2],
                    () -> KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex(a[0], a[1], a[2]));
        }
        for (int p : new int[] {0, 32769}) {
            c.failure("checkParallelismPreconditions", p, "", "", () -> {
                KeyGroupRangeAssignment.checkParallelismPreconditions(p);
                return null;
            });
        }
        c.failure("assignToKeyGroup(null)", 128, "", "", () -> KeyGroupRangeAssignment.assignToKeyGroup(null, 128));
        Method owner = Class.forName("org.apache.flink.connector.kafka.source.enumerator.KafkaSourceEnumerator")
                .getDeclaredMethod("getSplitOwner", TopicPartition.class, int.class);
        owner.setAccessible(true);
        c.failure("kafka.getSplitOwner", "orders", 0, 0, () -> owner.invoke(null, new TopicPartition("orders", 0), 0));
        c.write("invalid_inputs.csv");
    }

    private void keyRows() throws Exception {
        Csv c = new Csv(SqlKeyRows.header());
        for (Object[] row : new SqlKeyRows().rows()) {
            c.row(row);
        }
        c.write("key_row.csv");
    }

    // ---- inputs ----

    /** The String keys, in a fixed order. */
    static List<String> stringKeys() {
        List<String> k = new ArrayList<>();
        k.add("");
        for (char ch = 'a'; ch <= 'z'; ch++) {
            k.add(String.valueOf(ch));
        }
        for (char ch = 'A'; ch <= 'F'; ch++) {
            k.add(String.valueOf(ch));
        }
        for (int i = 0; i <= 9; i++) {
            k.add(String.valueOf(i));
        }
        for (int i = 0; i < 60; i++) {
            k.add("user-" + i);
        }
        for (int i = 0; i < 20; i++) {
            k.add("order:" + (1000 + i * 37));
        }
        String[] fixed = {
            "hello", "Hello", "HELLO", "hello world", "skewscope", "flink", "kafka", "key", "null", "true",
            "-1", "2147483648", "0x7f", "3.14",
            // Whitespace is part of the key.
            " ", "  ", "\t", " a", "a ", " a ", "\ta\t", "a b", "a\tb",
            // Characters that need CSV quoting.
            ",", "a,b", ",a", "a,", "\"", "\"\"", "say \"hi\"", "\"quoted\"", "a\"b,c",
            // Unicode: Latin-1, combining marks, CJK, RTL, emoji (two UTF-16 code units each).
            "é", "e\u0301", "ü", "Ünïcödé", "straße", "ß", "ø", "Ωμέγα", "привет", "中文", "日本語のキー", "한국어",
            "مرحبا", "שלום", "😀", "🙂🙃", "👍🏽", "👨‍👩‍👧", "🇩🇪", "key-😀-end", "𝄞", "\uFFFD", "\u00A0", "\u200B",
            "∑∫√", "€100", "™",
        };
        for (String s : fixed) {
            k.add(s);
        }
        // A 300-character key, and a long repeated one.
        StringBuilder b = new StringBuilder();
        for (int i = 0; b.length() < 300; i++) {
            b.append((char) ('a' + i % 26));
        }
        k.add(b.substring(0, 300));
        k.add("ab".repeat(500));
        // Random printable ASCII keys (may contain spaces, commas, quotes).
        Random r = new Random(20250011L);
        for (int i = 0; i < 60; i++) {
            int n = 1 + r.nextInt(24);
            StringBuilder s = new StringBuilder();
            for (int j = 0; j < n; j++) {
                s.append((char) (0x20 + r.nextInt(0x7f - 0x20)));
            }
            k.add(s.toString());
        }
        // Random keys from a mixed alphabet with characters outside the BMP.
        String[] alphabet = {"a", "Z", "7", "-", "é", "中", "ж", "😀", "🚀", "𝄞", " "};
        for (int i = 0; i < 20; i++) {
            int n = 1 + r.nextInt(12);
            StringBuilder s = new StringBuilder();
            for (int j = 0; j < n; j++) {
                s.append(alphabet[r.nextInt(alphabet.length)]);
            }
            k.add(s.toString());
        }
        List<String> unique = new ArrayList<>();
        TreeSet<String> seen = new TreeSet<>();
        for (String s : k) {
            if (seen.add(s)) {
                unique.add(s);
            }
        }
        return unique;
    }

    // ---- CSV ----

    private interface Call {
        Object call() throws Exception;
    }

    /** Rows of one CSV file: RFC 4180 quoting, LF line ends, UTF-8. */
    private final class Csv {
        private final StringBuilder sb = new StringBuilder();
        private final int columns;
        private int rows;

        Csv(String... header) {
            columns = header.length;
            row((Object[]) header);
            rows = 0;
        }

        void row(Object... fields) {
            if (fields.length != columns) {
                throw new IllegalArgumentException("row of " + fields.length + " fields, want " + columns);
            }
            for (int i = 0; i < fields.length; i++) {
                if (i > 0) {
                    sb.append(',');
                }
                sb.append(field(String.valueOf(fields[i])));
            }
            sb.append('\n');
            rows++;
        }

        /** A row for an input Flink rejects: the exception class and message. */
        void failure(String function, Object a1, Object a2, Object a3, Call call) {
            Object v;
            try {
                v = call.call();
            } catch (Exception e) {
                Throwable t = e instanceof InvocationTargetException ? e.getCause() : e;
                row(function, a1, a2, a3, t.getClass().getName(), t.getMessage());
                return;
            }
            throw new IllegalStateException(function + "(" + a1 + ", " + a2 + ", " + a3 + ") returned " + v + ", want an exception");
        }

        void write(String name) throws IOException {
            try (Writer w = Files.newBufferedWriter(out.resolve(name), StandardCharsets.UTF_8)) {
                w.write(sb.toString());
            }
            System.out.println(name + " " + rows);
        }
    }

    private static String field(String s) {
        if (s.indexOf('\r') >= 0 || s.indexOf('\n') >= 0) {
            throw new IllegalArgumentException("field with a line break: " + s);
        }
        if (s.indexOf(',') < 0 && s.indexOf('"') < 0) {
            return s;
        }
        return '"' + s.replace("\"", "\"\"") + '"';
    }
}
