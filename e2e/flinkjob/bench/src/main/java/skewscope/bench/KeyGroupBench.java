package skewscope.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

/**
 * Times Flink's own {@code KeyGroupRangeAssignment.assignToKeyGroup} over
 * String keys, the JVM figure skewscope's key routing is measured against.
 *
 * <p>Usage: {@code KeyGroupBench <keys file> <max parallelism> <warm-up
 * passes> <timed passes>}. The file holds one key per line, UTF-8, each
 * line ended by '\n' (cmd/keybench writes it). Every pass first builds a
 * fresh {@code String} per key with {@code new String(bytes, UTF_8)}, as
 * Kafka's StringDeserializer does, untimed, so that no key's hashCode is
 * cached yet; then it times {@code assignToKeyGroup} over all of them.
 *
 * <p>Prints {@code jvm <vendor> <version>}, then one {@code pass <ns per
 * key>} line per timed pass, then {@code checksum <sum of the key
 * groups>}, which must be the same in every pass (it is checked) and equal
 * to skewscope's.
 */
public final class KeyGroupBench {

    private KeyGroupBench() {}

    public static void main(String[] args) throws IOException {
        if (args.length != 4) {
            System.err.println("usage: KeyGroupBench <keys file> <max parallelism> <warm-up passes> <timed passes>");
            System.exit(2);
        }
        byte[][] keys = readLines(Files.readAllBytes(Paths.get(args[0])));
        int maxP = Integer.parseInt(args[1]);
        int warmup = Integer.parseInt(args[2]);
        int passes = Integer.parseInt(args[3]);
        System.out.println("jvm " + System.getProperty("java.vm.vendor").replace(' ', '_') + " " + System.getProperty("java.runtime.version"));

        String[] fresh = new String[keys.length];
        long checksum = -1;
        for (int pass = 0; pass < warmup + passes; pass++) {
            for (int i = 0; i < keys.length; i++) {
                fresh[i] = new String(keys[i], StandardCharsets.UTF_8);
            }
            long start = System.nanoTime();
            long sum = 0;
            for (String k : fresh) {
                sum += KeyGroupRangeAssignment.assignToKeyGroup(k, maxP);
            }
            long elapsed = System.nanoTime() - start;
            if (checksum >= 0 && sum != checksum) {
                throw new IllegalStateException("pass " + pass + ": checksum " + sum + ", earlier " + checksum);
            }
            checksum = sum;
            if (pass >= warmup) {
                System.out.printf(Locale.ROOT, "pass %.3f%n", (double) elapsed / keys.length);
            }
        }
        System.out.println("checksum " + checksum);
    }

    /** Splits b at each '\n'; every line, the last included, ends with one. */
    private static byte[][] readLines(byte[] b) {
        List<byte[]> lines = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < b.length; i++) {
            if (b[i] == '\n') {
                byte[] line = new byte[i - start];
                System.arraycopy(b, start, line, 0, line.length);
                lines.add(line);
                start = i + 1;
            }
        }
        if (start != b.length) {
            throw new IllegalArgumentException("the keys file does not end with a newline");
        }
        return lines.toArray(new byte[0][]);
    }
}
